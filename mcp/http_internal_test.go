package mcp

import (
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
)

func TestListenRetriesAreBounded(t *testing.T) {
	var gets atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		http.Error(w, "stream broken", http.StatusBadGateway)
	}))
	defer srv.Close()
	m, err := NewManager(ManagerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	c := newConn(m, Server{Name: "s", URL: srv.URL, ListenRetries: 2})
	rt := c.httpClient(nil).Transport
	get := func() int {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	var got []int
	for range 4 {
		got = append(got, get())
	}
	want := []int{http.StatusBadGateway, http.StatusBadGateway, http.StatusMethodNotAllowed, http.StatusMethodNotAllowed}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("GET statuses = %v, want %v (405 tells mcp-go to stop listening)", got, want)
		}
	}
	if gets.Load() != 2 {
		t.Errorf("server saw %d GETs, want 2", gets.Load())
	}
}

// A GET stream whose response the bounds refuse (a bad Mcp-Session-Id)
// fails with an error and no response, and counts towards ListenRetries.
func TestListenRefusedResponseIsAFailure(t *testing.T) {
	var gets atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gets.Add(1)
		w.Header().Set("Mcp-Session-Id", "bad id")
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
	}))
	defer srv.Close()
	m, err := NewManager(ManagerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	c := newConn(m, Server{Name: "s", URL: srv.URL, ListenRetries: 2})
	rt := c.httpClient(nil).Transport
	for i := range 2 {
		req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
		req.Header.Set("Accept", "text/event-stream")
		resp, err := rt.RoundTrip(req)
		if err == nil || resp != nil {
			t.Fatalf("GET %d = %v, %v; want no response and an error", i, resp, err)
		}
	}
	req, _ := http.NewRequest(http.MethodGet, srv.URL, nil)
	req.Header.Set("Accept", "text/event-stream")
	resp, err := rt.RoundTrip(req)
	if err != nil || resp.StatusCode != http.StatusMethodNotAllowed {
		t.Fatalf("third GET = %v, %v; want 405 (stop listening)", resp, err)
	}
	resp.Body.Close()
	if gets.Load() != 2 {
		t.Errorf("server saw %d GETs, want 2", gets.Load())
	}
}
