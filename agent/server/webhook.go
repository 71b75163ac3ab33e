package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/agentgraph/agentgraph/agent/server/guard"
	"github.com/agentgraph/agentgraph/operator/publicnet"
)

// DefaultWebhookTimeout is the default of Config.WebhookTimeout.
const DefaultWebhookTimeout = 10 * time.Second

// webhookAttempts is how many times a webhook is sent before its failure
// is logged: once, and again after a network error or a 5xx answer.
const webhookAttempts = 3

// maxWebhookURL bounds the length of a webhook URL.
const maxWebhookURL = 2048

// checkWebhook validates a run's webhook: a path ("/hooks/done", sent
// in-process to Config.WebhookHandler), or an absolute http or https URL
// and, unless Config.WebhookAllowPrivate, not a loopback or private
// address (names are checked again when the webhook connects, for every
// address they resolve to).
func (s *Server) checkWebhook(raw string) error {
	if raw == "" {
		return nil
	}
	if len(raw) > maxWebhookURL {
		return errorf(422, "webhook: the URL is longer than %d bytes", maxWebhookURL)
	}
	if selfWebhook(raw) {
		u, err := url.Parse(raw)
		if err != nil || u.Scheme != "" || u.Host != "" {
			return errorf(422, "webhook: %q is not a path such as /hooks/done", raw)
		}
		if !s.webhookPathAllowed(u.Path) {
			return errorf(422, "webhook: the path %q is not allowed by this server's Config.WebhookPaths; give an http(s) URL, or add the path to Config.WebhookPaths", raw)
		}
		return nil
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return errorf(422, "webhook: %q is not an absolute http or https URL; give one such as https://example.com/hook", raw)
	}
	if s.cfg.WebhookAllowPrivate {
		return nil
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil && !publicnet.Public(ip) || guard.LoopbackHost(host) {
		return errorf(422, "webhook: %s is a loopback or private address, which this server does not call; set Config.WebhookAllowPrivate to allow it", host)
	}
	return nil
}

// privateAddrError refuses a webhook's connection to a non-public address.
type privateAddrError struct{ addr netip.Addr }

func (e privateAddrError) Error() string {
	return fmt.Sprintf("server: webhook: %s is a loopback or private address; set Config.WebhookAllowPrivate to allow it", e.addr)
}

// newWebhookClient returns the client webhooks are sent with: no proxy
// (which would hide the address it connects to), no redirects, each
// attempt bounded by timeout, and, unless allowPrivate, a dialer that
// refuses loopback and private addresses after name resolution.
func newWebhookClient(timeout time.Duration, allowPrivate bool) *http.Client {
	d := &net.Dialer{Timeout: timeout}
	if !allowPrivate {
		d.Control = func(network, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("server: webhook: unexpected address %q: %w", address, err)
			}
			if !publicnet.Public(ap.Addr()) {
				return privateAddrError{ap.Addr()}
			}
			return nil
		}
	}
	tr := &http.Transport{DialContext: d.DialContext, TLSHandshakeTimeout: timeout, ResponseHeaderTimeout: timeout,
		MaxIdleConns: 16, IdleConnTimeout: 30 * time.Second, ForceAttemptHTTP2: true}
	return &http.Client{Transport: tr, Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
}

// sendWebhook POSTs the ended run to its webhook, on a goroutine Close
// waits for: the run object with its status, run_started_at,
// run_ended_at, webhook_sent_at, values (the thread's values) and error.
// A webhook that fails every attempt is logged. run is the run's record
// as it ended, or nil to read it from the store; values are the thread's
// values as the run's end left them, or nil to read them from the store.
func (s *Server) sendWebhook(runID string, run *Run, values json.RawMessage, kw runCreate) {
	bg := s.bg
	var err error
	if run == nil {
		run, err = s.store.Run(bg, runID)
	}
	if err != nil {
		s.log.Error("sending a run's webhook", zapString("run", runID), zapString("webhook", kw.Webhook), zapError(err))
		return
	}
	body := runJSON(run)
	body["run_started_at"] = nil
	if !kw.started.IsZero() {
		body["run_started_at"] = stamp(kw.started)
	}
	body["run_ended_at"] = stamp(run.UpdatedAt)
	body["values"] = map[string]any{}
	body["error"] = nil
	if run.Status == RunError || run.Status == RunTimeout {
		body["error"] = run.Error
	}
	if values == nil {
		if t, err := s.store.Thread(bg, run.ThreadID); err == nil {
			values = t.Values
		}
	}
	if len(values) > 0 {
		body["values"] = values
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		var err error
		for i := range webhookAttempts {
			if i > 0 {
				// Close stops the retries; the attempt under way is bounded
				// by Config.WebhookTimeout, so that a run ended by Close
				// still sends its webhook once.
				t := time.NewTimer(time.Duration(i) * 500 * time.Millisecond)
				select {
				case <-t.C:
				case <-s.base.Done():
					t.Stop()
					s.log.Error("sending a run's webhook: the server closed before a retry", zapString("run", runID),
						zapString("webhook", kw.Webhook), zapError(err))
					return
				}
			}
			body["webhook_sent_at"] = stamp(now())
			var retry bool
			if retry, err = s.postWebhook(kw.Webhook, run.Owner, body); err == nil || !retry {
				break
			}
		}
		if err != nil {
			s.log.Error("sending a run's webhook", zapString("run", runID), zapString("webhook", kw.Webhook), zapError(err))
		}
	}()
}

// selfWebhook reports whether a webhook is a path of the server itself
// ("/hooks/done"), not a URL; "//host/x" is a URL without its scheme.
func selfWebhook(raw string) bool {
	return strings.HasPrefix(raw, "/") && !strings.HasPrefix(raw, "//")
}

// webhookPathAllowed reports whether Config.WebhookPaths allows a
// webhook to p, a path that must be clean ("/hooks/../admin" is not).
func (s *Server) webhookPathAllowed(p string) bool {
	if p == "" || path.Clean(p) != strings.TrimSuffix(p, "/") && p != "/" {
		return false
	}
	for _, w := range s.cfg.WebhookPaths {
		if p == w || strings.HasSuffix(w, "/") && strings.HasPrefix(p, w) {
			return true
		}
	}
	return false
}

// webhookKey marks the context of a webhook sent in-process; its value is
// the run's principal. Requests from the network cannot carry it.
type webhookKey struct{}

// postWebhook makes one attempt; retry says whether another may succeed.
// owner is the run's principal.
func (s *Server) postWebhook(target, owner string, body map[string]any) (retry bool, err error) {
	b, err := json.Marshal(body)
	if err != nil {
		return false, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.cfg.WebhookTimeout)
	defer cancel()
	if selfWebhook(target) {
		return s.postSelf(ctx, target, owner, b)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(b))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := s.hooks.Do(req)
	if err != nil {
		var pe privateAddrError
		return !errors.As(err, &pe), err // a refused address is refused again
	}
	resp.Body.Close()
	if resp.StatusCode >= 300 {
		return resp.StatusCode >= 500, fmt.Errorf("server: webhook %s answered %s", target, resp.Status)
	}
	return false, nil
}

// postSelf serves a webhook given as a path to Config.WebhookHandler (or
// the server itself) in-process.
func (s *Server) postSelf(ctx context.Context, path, owner string, body []byte) (retry bool, err error) {
	h := s.cfg.WebhookHandler
	if h == nil {
		h = s
	}
	ctx = guard.WithPrincipal(context.WithValue(ctx, webhookKey{}, owner), owner)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://localhost"+path, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	if !s.webhookPathAllowed(req.URL.Path) { // a run created before Config.WebhookPaths changed
		return false, fmt.Errorf("server: webhook %s: the path is not allowed by Config.WebhookPaths", path)
	}
	req.RemoteAddr = "127.0.0.1:0"
	req.RequestURI = path
	req.Header.Set("Content-Type", "application/json")
	w := &selfResponse{header: http.Header{}}
	defer func() {
		if p := recover(); p != nil {
			if p == http.ErrAbortHandler {
				retry, err = true, fmt.Errorf("server: webhook %s: the handler aborted", path)
				return
			}
			retry, err = false, fmt.Errorf("server: webhook %s: the handler panicked: %v", path, p)
		}
	}()
	h.ServeHTTP(w, req)
	if w.status == 0 {
		w.status = http.StatusOK
	}
	if w.status >= 300 {
		return w.status >= 500, fmt.Errorf("server: webhook %s answered %d %s", path, w.status, http.StatusText(w.status))
	}
	return false, nil
}

// selfResponse is the response of a webhook served in-process: its status;
// the body is discarded.
type selfResponse struct {
	header http.Header
	status int
}

func (w *selfResponse) Header() http.Header { return w.header }

func (w *selfResponse) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return len(p), nil
}

func (w *selfResponse) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
	}
}

// Flush lets streaming handlers flush; there is nothing to flush.
func (w *selfResponse) Flush() {}
