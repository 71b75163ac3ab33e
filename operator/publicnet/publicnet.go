// Package publicnet makes HTTP clients whose connections reach only public
// internet addresses. Use one for a request to a URL that a model, a user
// or a fetched page chose (a web page to read, a webhook to call): such a
// URL must not reach the host's loopback services, a private network or a
// cloud metadata endpoint, whether it names the address, a DNS name that
// resolves to it, or a redirect that leads there.
//
// The check runs when a connection is made, on the address actually
// dialled after name resolution, so DNS rebinding does not pass it. A
// client from NewClient uses no proxy (a proxy would hide the address it
// connects to); Config.Allow opens chosen ranges, such as an intranet.
package publicnet

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// DefaultTimeout is the default of Config.Timeout.
const DefaultTimeout = 30 * time.Second

// DefaultMaxRedirects is the default of Config.MaxRedirects.
const DefaultMaxRedirects = 5

// reserved lists ranges that are not public besides those net/netip names
// (loopback, private, link-local, multicast, unspecified).
var reserved = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"), // carrier-grade NAT
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("192.0.2.0/24"),    // documentation
	netip.MustParsePrefix("198.18.0.0/15"),   // benchmarking
	netip.MustParsePrefix("198.51.100.0/24"), // documentation
	netip.MustParsePrefix("203.0.113.0/24"),  // documentation
	netip.MustParsePrefix("240.0.0.0/4"),     // reserved and broadcast
	netip.MustParsePrefix("64:ff9b::/96"),    // NAT64: may map to any IPv4 address
	netip.MustParsePrefix("64:ff9b:1::/48"),  // local-use NAT64
	netip.MustParsePrefix("2001:db8::/32"),   // documentation
	netip.MustParsePrefix("2002::/16"),       // 6to4: embeds any IPv4 address
	netip.MustParsePrefix("2001::/32"),       // Teredo: embeds any IPv4 address
	netip.MustParsePrefix("::/96"),           // IPv4-compatible: embeds any IPv4 address
	netip.MustParsePrefix("::ffff:0:0:0/96"), // IPv4-translated: embeds any IPv4 address
	netip.MustParsePrefix("fec0::/10"),       // site-local (deprecated)
	netip.MustParsePrefix("100::/64"),        // discard
}

// Public reports whether ip is a public internet address: not loopback,
// private (RFC 1918, unique local), link-local, multicast, unspecified,
// carrier-grade NAT, documentation, benchmarking or reserved, and not an
// IPv6 form that embeds an IPv4 address (IPv4-compatible or -translated,
// NAT64, 6to4, Teredo). An IPv4-mapped IPv6 address is judged as its IPv4
// address, and an address with a zone ("fe80::1%eth0") as the address
// without it.
func Public(ip netip.Addr) bool {
	ip = ip.Unmap().WithZone("")
	if !ip.IsValid() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() || ip.IsLinkLocalMulticast() ||
		ip.IsInterfaceLocalMulticast() || ip.IsMulticast() || ip.IsUnspecified() {
		return false
	}
	for _, p := range reserved {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// AddrError is the error of a connection refused because its address is
// not public and not in Config.Allow. Find it with errors.As.
type AddrError struct {
	// Addr is the address refused.
	Addr netip.Addr
}

// Error names the address and the fix.
func (e *AddrError) Error() string {
	return fmt.Sprintf("publicnet: %s is not a public internet address (loopback, private, link-local or reserved), so it is not connected to; if it is meant to be reached, add its range to publicnet.Config.Allow", e.Addr)
}

// Config configures the clients NewClient makes and the checks of Control.
// The zero value is ready to use.
type Config struct {
	// Allow lists address ranges connected to although they are not
	// public, e.g. an intranet's 10.1.0.0/16, or 127.0.0.0/8 in tests.
	Allow []netip.Prefix
	// Timeout bounds a whole request made with the client, its redirects
	// and reading the body included (http.Client.Timeout). Zero means
	// DefaultTimeout; negative means none (then bound each request with
	// its context).
	Timeout time.Duration
	// MaxRedirects bounds the redirects one request follows; each is
	// checked as the first request is. Zero means DefaultMaxRedirects;
	// negative means none are followed: the redirect response itself is
	// returned.
	MaxRedirects int
}

// Validate reports a configuration NewClient would refuse.
func (c Config) Validate() error {
	for i, p := range c.Allow {
		if !p.IsValid() {
			return fmt.Errorf("publicnet: Config.Allow[%d] is not a valid prefix; give one such as netip.MustParsePrefix(\"10.0.0.0/8\")", i)
		}
	}
	return nil
}

// Allowed reports whether a client of c may connect to ip: it is public or
// in c.Allow.
func (c Config) Allowed(ip netip.Addr) bool {
	if Public(ip) {
		return true
	}
	ip = ip.Unmap().WithZone("")
	for _, p := range c.Allow {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// Control is a net.Dialer Control function refusing, with an *AddrError,
// a connection to an address c does not allow. Dialers of one's own (a
// custom transport, a websocket client) can use it to apply the same rule.
func (c Config) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("publicnet: unexpected address %q to dial on %s: %w", address, network, err)
	}
	if !c.Allowed(ap.Addr()) {
		return &AddrError{Addr: ap.Addr().Unmap().WithZone("")}
	}
	return nil
}

// NewClient returns an HTTP client whose connections reach only addresses
// c allows, following at most c.MaxRedirects redirects (each to an http or
// https URL), with no proxy, and bounded by c.Timeout. It panics if c is
// not valid (see Validate).
func NewClient(c Config) *http.Client {
	if err := c.Validate(); err != nil {
		panic(err)
	}
	timeout := c.Timeout
	switch {
	case timeout == 0:
		timeout = DefaultTimeout
	case timeout < 0:
		timeout = 0
	}
	maxRedirects := c.MaxRedirects
	if maxRedirects == 0 {
		maxRedirects = DefaultMaxRedirects
	}
	d := &net.Dialer{Timeout: 10 * time.Second, Control: c.Control}
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           d.DialContext,
		TLSHandshakeTimeout:   10 * time.Second,
		ResponseHeaderTimeout: timeout,
		MaxIdleConns:          16,
		IdleConnTimeout:       30 * time.Second,
		ForceAttemptHTTP2:     true,
	}
	if timeout > 0 && timeout < d.Timeout {
		d.Timeout, tr.TLSHandshakeTimeout = timeout, timeout
	}
	return &http.Client{Transport: tr, Timeout: timeout, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if maxRedirects < 0 {
			return http.ErrUseLastResponse
		}
		if len(via) > maxRedirects {
			return fmt.Errorf("publicnet: more than %d redirects (Config.MaxRedirects)", maxRedirects)
		}
		if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
			return errors.New("publicnet: a redirect to " + req.URL.Scheme + ": is not followed; only http and https are")
		}
		return nil
	}}
}
