package main

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// elsewhere is a listener on loopback that says it listens on a public
// address, as one would whose name resolved beyond this machine.
type elsewhere struct {
	net.Listener
	closed bool
}

func (l *elsewhere) Addr() net.Addr { return &net.TCPAddr{IP: net.ParseIP("192.0.2.1"), Port: 2024} }

func (l *elsewhere) Close() error { l.closed = true; return l.Listener.Close() }

func env(vars map[string]string) func(string) string { return func(k string) string { return vars[k] } }

// TestRefusals: the command refuses, before it listens or opens a
// database, an API key shorter than guard.MinTokenLen and -origin "*"
// without keys; and, without keys, an address whose listener is beyond
// loopback although its name is loopback's (a name resolves to any
// address: the listener's is checked), closing that listener.
func TestRefusals(t *testing.T) {
	noListen := func(string) (net.Listener, error) {
		t.Fatal("listened")
		return nil, nil
	}
	dir := filepath.Join(t.TempDir(), "data")
	for _, c := range []struct {
		name string
		args []string
		env  map[string]string
		want []string
	}{
		{"a short key", []string{"-dir", dir}, map[string]string{tokensEnv: "alice=short-key"}, []string{`principal "alice"`, "16", tokensEnv}},
		{"a short key in a file", []string{"-dir", dir, "-tokens", writeFile(t, "alice 0123456789\n")}, nil, []string{`principal "alice"`, "16"}},
		{`-origin "*" without keys`, []string{"-dir", dir, "-origin", "https://app.example,*"}, nil, []string{`-origin "*"`, tokensEnv}},
		{"-addr beyond loopback without keys", []string{"-dir", dir, "-addr", ":2024"}, nil, []string{"-addr :2024", tokensEnv}},
		{"the old -api-key", []string{"-dir", dir, "-api-key", "0123456789abcdef0123"}, nil, []string{"api-key"}},
	} {
		err := run(t.Context(), c.args, env(c.env), noListen, io.Discard)
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v; want an error naming %s", c.name, err, w)
			}
		}
	}
	var ln *elsewhere
	listen := func(addr string) (net.Listener, error) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		ln = &elsewhere{Listener: l}
		return ln, err
	}
	// Cancelled: were the listener not refused, run would stop at once.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	err := run(ctx, []string{"-dir", dir, "-addr", "dev.localhost:2024"}, env(nil), listen, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "192.0.2.1:2024") || !strings.Contains(err.Error(), tokensEnv) {
		t.Errorf("a loopback name listening beyond loopback: %v; want an error naming the address and %s", err, tokensEnv)
	}
	if ln == nil || !ln.closed {
		t.Error("the listener beyond loopback was not closed")
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("-dir after the refusals: %v; want none made", err)
	}
}

func writeFile(t *testing.T, text string) string {
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestServesWithKeysFromTheEnvironment: keys of AGENTSERVER_TOKENS
// authenticate requests (x-api-key); a request without one gets 401.
func TestServesWithKeysFromTheEnvironment(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	addr := make(chan string, 1)
	listen := func(string) (net.Listener, error) {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err == nil {
			addr <- l.Addr().String()
		}
		return l, err
	}
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"-dir", t.TempDir()}, env(map[string]string{tokensEnv: "alice=0123456789abcdef-alice"}), listen, io.Discard)
	}()
	var url string
	select {
	case a := <-addr:
		url = "http://" + a
	case err := <-done:
		t.Fatal(err)
	}
	for _, c := range []struct {
		key  string
		want int
	}{{"0123456789abcdef-alice", 200}, {"", 401}, {"0123456789abcdef-other", 401}} {
		req, _ := http.NewRequest("POST", url+"/threads", strings.NewReader(`{}`))
		req.Header.Set("Content-Type", "application/json")
		if c.key != "" {
			req.Header.Set("X-Api-Key", c.key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("POST /threads with key %q: %d; want %d", c.key, resp.StatusCode, c.want)
		}
	}
	http.DefaultClient.CloseIdleConnections()
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// syncBuffer is a bytes.Buffer safe for the server's goroutines.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestWarnsOfAPublicDir: a -dir the command may not make private (one
// holding other files, as "." or a home directory does) keeps its mode
// with a warning on stderr, not silently.
func TestWarnsOfAPublicDir(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no group or other permissions on Windows")
	}
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	listen := func(string) (net.Listener, error) { return net.Listen("tcp", "127.0.0.1:0") }
	// Cancelled: run serves nothing once it has opened -dir.
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	var stderr syncBuffer
	_ = run(ctx, []string{"-dir", dir}, env(nil), listen, &stderr)
	if out := stderr.String(); !strings.Contains(out, "keeps its mode") || !strings.Contains(out, dir) {
		t.Errorf("stderr:\n%s\nwant a warning that -dir %s keeps its mode", out, dir)
	}
	if st, err := os.Stat(dir); err != nil {
		t.Error(err)
	} else if st.Mode().Perm() != 0o755 {
		t.Errorf("-dir: %v; want it left 0755", st.Mode())
	}
}
