package main

import (
	"net"
	"strings"
	"testing"
)

// fakeListener is a listener on addr.
type fakeListener struct {
	net.Listener
	addr net.Addr
}

func (f fakeListener) Addr() net.Addr { return f.addr }

// TestOpenBeyondLoopback: the API without a token, listening where a name
// resolved beyond loopback, is refused naming SWARM_TOKEN; on a loopback address,
// or with a token, it is served.
func TestOpenBeyondLoopback(t *testing.T) {
	beyond := fakeListener{addr: &net.TCPAddr{IP: net.ParseIP("192.0.2.7"), Port: 8080}}
	local := fakeListener{addr: &net.TCPAddr{IP: net.ParseIP("127.0.0.1"), Port: 8080}}
	if err := openBeyondLoopback(beyond, "myhost:8080", true); err == nil || !strings.Contains(err.Error(), "SWARM_TOKEN") || !strings.Contains(err.Error(), "192.0.2.7") {
		t.Errorf("open, beyond loopback: %v, want an error naming SWARM_TOKEN and the address", err)
	}
	if err := openBeyondLoopback(local, "localhost:8080", true); err != nil {
		t.Errorf("open, on loopback: %v", err)
	}
	if err := openBeyondLoopback(beyond, "myhost:8080", false); err != nil {
		t.Errorf("with a token, beyond loopback: %v", err)
	}
}
