package rag_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentgraph/agentgraph/examples/cortexr/rag"
	"github.com/agentgraph/agentgraph/operator/publicnet"
)

// TestHTTPFetcherRefusesInternal: a page URL (from a plan a model wrote)
// naming the host's own services, or redirecting to them, is not fetched.
func TestHTTPFetcherRefusesInternal(t *testing.T) {
	var internal atomic.Int64
	secret := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		internal.Add(1)
		w.Write([]byte("AWS_SECRET_ACCESS_KEY=from-internal-service"))
	}))
	defer secret.Close()
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, secret.URL+"/latest/meta-data/iam", http.StatusFound)
	}))
	defer page.Close()
	for _, u := range []string{secret.URL + "/latest/meta-data/iam", page.URL + "/page"} {
		b, err := rag.HTTPFetcher{}.Fetch(t.Context(), u)
		var ae *publicnet.AddrError
		if !errors.As(err, &ae) {
			t.Errorf("Fetch(%s) = %q, %v; want a *publicnet.AddrError", u, b, err)
		}
	}
	if internal.Load() != 0 {
		t.Errorf("the internal service was read %d times", internal.Load())
	}
}

func TestHTTPFetcherAllowAndBound(t *testing.T) {
	big := strings.Repeat("x", rag.MaxDocumentBytes+1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/big" {
			w.Write([]byte(big))
			return
		}
		w.Write([]byte("<p>intranet page</p>"))
	}))
	defer srv.Close()
	f := rag.HTTPFetcher{Net: publicnet.Config{Allow: []netip.Prefix{netip.MustParsePrefix("127.0.0.0/8")}}}
	b, err := f.Fetch(t.Context(), srv.URL+"/page")
	if err != nil || string(b) != "<p>intranet page</p>" {
		t.Fatalf("Fetch of an allowed range = %q, %v", b, err)
	}
	if b, err := f.Fetch(t.Context(), srv.URL+"/big"); err == nil || !strings.Contains(err.Error(), "MaxDocumentBytes") {
		t.Errorf("Fetch of a page over MaxDocumentBytes = %d bytes, %v; want an error naming MaxDocumentBytes", len(b), err)
	}
}
