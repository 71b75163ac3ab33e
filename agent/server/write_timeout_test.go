package server_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
)

// searchSignal is a Store whose SearchThreads, once armed, signals each
// call on its channel (without waiting).
type searchSignal struct {
	server.Store
	armed  atomic.Bool
	called chan struct{}
}

func (s *searchSignal) SearchThreads(ctx context.Context, q server.ThreadQuery) ([]*server.Thread, int, error) {
	if s.armed.Load() {
		select {
		case s.called <- struct{}{}:
		default:
		}
	}
	return s.Store.SearchThreads(ctx, q)
}

// TestStalledAnswerGivesBackItsRead: a client that asks for a large list
// answer (a thread search of 1.5 MB) and reads none of it fills the
// connection's buffers; the write that then waits past
// Config.WriteTimeout ends the answer, so that the principal's slot of
// MaxReads comes back (a second search is served instead of answered
// 429), where it was held for as long as the client kept its connection.
func TestStalledAnswerGivesBackItsRead(t *testing.T) {
	store := &searchSignal{Store: server.NewMemoryStore(), called: make(chan struct{}, 1)}
	srv, err := server.New(server.Config{Store: store, MaxReads: 1, WriteTimeout: 100 * time.Millisecond, MaxBodyBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	hs := httptest.NewUnstartedServer(srv)
	hs.Listener = smallSendBuffers{hs.Listener}
	hs.Start()
	t.Cleanup(func() {
		hs.CloseClientConnections()
		hs.Close()
		if err := srv.Close(context.Background()); err != nil {
			t.Error(err)
		}
	})
	pad := strings.Repeat("x", 500<<10)
	for range 3 {
		if code := do(t, "POST", hs.URL+"/threads", map[string]any{"metadata": map[string]any{"pad": pad}}, nil, nil); code != 200 {
			t.Fatalf("create a thread of 500 KiB of metadata: %d", code)
		}
	}
	store.armed.Store(true)
	conn := stalledClient(t, hs, "/threads/search", `{"limit":10}`)
	<-store.called // the stalled search holds its slot of MaxReads

	// (Polling: the answer ends when a write times out; the bound only
	// fails the test when the slot never comes back.)
	waitUntil(t, "the stalled answer to give back its slot (MaxReads 1)", func() bool {
		code, out := raw(t, "POST", hs.URL+"/threads/search", `{"limit":1,"select":["thread_id"]}`, nil)
		if code != 200 && code != http.StatusTooManyRequests {
			t.Fatalf("a second search: %d %.300s", code, out)
		}
		return code == 200
	})
	_, _ = io.Copy(io.Discard, conn) // the server closed it: read what it sent
}
