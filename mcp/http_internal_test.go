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
