package publicnet_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentgraph/agentgraph/operator/publicnet"
)

func TestPublic(t *testing.T) {
	for _, c := range []struct {
		addr   string
		public bool
	}{
		{"8.8.8.8", true},
		{"1.1.1.1", true},
		{"2606:4700:4700::1111", true},
		{"::ffff:8.8.8.8", true},
		{"127.0.0.1", false},
		{"127.9.9.9", false},
		{"::1", false},
		{"10.1.2.3", false},
		{"172.16.0.1", false},
		{"192.168.1.1", false},
		{"169.254.169.254", false}, // cloud metadata
		{"fe80::1", false},
		{"fc00::1", false},
		{"fd00:ec2::254", false},
		{"0.0.0.0", false},
		{"::", false},
		{"100.64.0.1", false},
		{"224.0.0.1", false},
		{"255.255.255.255", false},
		{"::ffff:127.0.0.1", false},
		{"::ffff:169.254.169.254", false},
		{"64:ff9b::a9fe:a9fe", false}, // NAT64 of 169.254.169.254
		{"2002:a9fe:a9fe::1", false},  // 6to4 of 169.254.169.254
		{"2001:0:4136:e378:8000:63bf:3fff:fdd2", false},
		{"192.0.2.1", false},
		// A zone must not hide a range: netip.Prefix.Contains never
		// matches a zoned address.
		{"64:ff9b::a00:5%1", false},
		{"2002:a9fe:a9fe::1%eth0", false},
		{"fe80::1%eth0", false},
		{"2606:4700:4700::1111%1", true},
		{"::a9fe:a9fe", false},
		{"::ffff:0:a9fe:a9fe", false},
		{"fec0::1", false},
		{"100::1", false},
	} {
		if got := publicnet.Public(netip.MustParseAddr(c.addr)); got != c.public {
			t.Errorf("Public(%s) = %v, want %v", c.addr, got, c.public)
		}
	}
	if publicnet.Public(netip.Addr{}) {
		t.Error("the zero Addr is public")
	}
}

// counted serves ok and counts its requests.
func counted(t *testing.T, h http.HandlerFunc) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		h(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func get(ctx context.Context, c *http.Client, url string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return 0, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return 0, err
	}
	resp.Body.Close()
	return resp.StatusCode, nil
}

func TestClientRefusesLoopback(t *testing.T) {
	srv, hits := counted(t, func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("secret")) })
	c := publicnet.NewClient(publicnet.Config{})
	defer c.CloseIdleConnections()
	// By address, and by a name resolving to loopback.
	for _, u := range []string{srv.URL, strings.Replace(srv.URL, "127.0.0.1", "localhost", 1)} {
		_, err := get(t.Context(), c, u)
		var ae *publicnet.AddrError
		if !errors.As(err, &ae) {
			t.Fatalf("GET %s: err = %v, want a *publicnet.AddrError", u, err)
		}
		if !ae.Addr.IsLoopback() || !strings.Contains(err.Error(), "Config.Allow") {
			t.Errorf("GET %s: error %q should name the loopback address and Config.Allow", u, err)
		}
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback server was reached %d times", n)
	}
}

func TestClientAllow(t *testing.T) {
	srv, hits := counted(t, func(w http.ResponseWriter, _ *http.Request) { w.Write([]byte("ok")) })
	c := publicnet.NewClient(publicnet.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	defer c.CloseIdleConnections()
	code, err := get(t.Context(), c, srv.URL)
	if err != nil || code != http.StatusOK || hits.Load() != 1 {
		t.Fatalf("GET an allowed address: %d, %v, %d hits; want 200, nil, 1", code, err, hits.Load())
	}
}

// TestRedirectChecked: a redirect from an allowed server to an address
// not allowed is refused when it is dialled.
func TestRedirectChecked(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2 (only Linux routes all of 127.0.0.0/8 to loopback): %v", err)
	}
	var inner atomic.Int64
	target := &httptest.Server{Listener: ln, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		inner.Add(1)
		w.Write([]byte("AWS_SECRET_ACCESS_KEY=x"))
	})}}
	target.Start()
	defer target.Close()
	front, _ := counted(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, target.URL+"/latest/meta-data", http.StatusFound)
	})
	c := publicnet.NewClient(publicnet.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	defer c.CloseIdleConnections()
	_, err = get(t.Context(), c, front.URL)
	var ae *publicnet.AddrError
	if !errors.As(err, &ae) || ae.Addr != netip.MustParseAddr("127.0.0.2") {
		t.Fatalf("redirect to 127.0.0.2: err = %v, want an *AddrError for 127.0.0.2", err)
	}
	if inner.Load() != 0 {
		t.Error("the redirect target was reached")
	}
}

func TestRedirectBound(t *testing.T) {
	allow := publicnet.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}}
	loop, hits := counted(t, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/again", http.StatusFound)
	})
	for _, c := range []struct {
		max      int
		wantHits int64
	}{{0, publicnet.DefaultMaxRedirects + 1}, {2, 3}} {
		hits.Store(0)
		cfg := allow
		cfg.MaxRedirects = c.max
		cl := publicnet.NewClient(cfg)
		_, err := get(t.Context(), cl, loop.URL)
		cl.CloseIdleConnections()
		if err == nil || !strings.Contains(err.Error(), "Config.MaxRedirects") {
			t.Errorf("MaxRedirects %d: err = %v, want one naming Config.MaxRedirects", c.max, err)
		}
		if hits.Load() != c.wantHits {
			t.Errorf("MaxRedirects %d: %d requests, want %d", c.max, hits.Load(), c.wantHits)
		}
	}
	// Negative: the redirect itself is the answer.
	cfg := allow
	cfg.MaxRedirects = -1
	cl := publicnet.NewClient(cfg)
	defer cl.CloseIdleConnections()
	hits.Store(0)
	code, err := get(t.Context(), cl, loop.URL)
	if err != nil || code != http.StatusFound || hits.Load() != 1 {
		t.Errorf("MaxRedirects -1: %d, %v, %d requests; want 302, nil, 1", code, err, hits.Load())
	}
}

func TestRedirectScheme(t *testing.T) {
	srv, _ := counted(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "file:///etc/passwd")
		w.WriteHeader(http.StatusFound)
	})
	c := publicnet.NewClient(publicnet.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.1/32")}})
	defer c.CloseIdleConnections()
	if _, err := get(t.Context(), c, srv.URL); err == nil || !strings.Contains(err.Error(), "only http and https") {
		t.Errorf("redirect to file: err = %v, want one refusing the scheme", err)
	}
}

func TestControl(t *testing.T) {
	var cfg publicnet.Config
	if err := cfg.Control("tcp", "169.254.169.254:80", nil); err == nil {
		t.Error("Control allowed the metadata address")
	}
	if err := cfg.Control("tcp", "8.8.8.8:53", nil); err != nil {
		t.Errorf("Control refused a public address: %v", err)
	}
	if err := cfg.Control("tcp", "not-an-address", nil); err == nil {
		t.Error("Control allowed an address it cannot parse")
	}
	cfg.Allow = []netip.Prefix{netip.MustParsePrefix("10.0.0.0/8")}
	if err := cfg.Control("tcp", "[::ffff:10.1.2.3]:80", nil); err != nil {
		t.Errorf("Control refused an allowed range in its IPv4-mapped form: %v", err)
	}
	if err := cfg.Control("tcp", "[64:ff9b::a00:5%1]:80", nil); err == nil {
		t.Error("Control allowed a NAT64 address behind a zone")
	}
}

func TestValidate(t *testing.T) {
	err := publicnet.Config{Allow: []netip.Prefix{{}}}.Validate()
	if err == nil || !strings.Contains(err.Error(), "Config.Allow[0]") {
		t.Errorf("Validate of a zero prefix: %v, want an error naming Config.Allow[0]", err)
	}
}
