package server_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/agentgraph/agentgraph/agent/server"
)

// meetingStore holds the answer of each thread count (SearchThreads)
// until another count has been made too, or until a pause passes: two
// creations that count concurrently both see the count before either
// creates.
type meetingStore struct {
	server.Store
	mu      sync.Mutex
	inside  int
	met     bool
	arrived chan struct{}
}

func (m *meetingStore) SearchThreads(ctx context.Context, q server.ThreadQuery) ([]*server.Thread, int, error) {
	ts, n, err := m.Store.SearchThreads(ctx, q)
	m.mu.Lock()
	m.inside++
	if m.inside == 2 && !m.met {
		m.met = true
		close(m.arrived)
	}
	ch := m.arrived
	m.mu.Unlock()
	select {
	case <-ch:
	case <-time.After(200 * time.Millisecond):
	}
	m.mu.Lock()
	m.inside--
	m.mu.Unlock()
	return ts, n, err
}

// TestMaxThreadsUnderConcurrentCreates creates threads concurrently for a
// principal with Config.MaxThreads 1, through each way of creating one
// (POST /threads, a stateless run, if_not_exists create): one is created,
// the others are refused with 429, even when their counts run at once.
func TestMaxThreadsUnderConcurrentCreates(t *testing.T) {
	input := map[string]any{"messages": []map[string]string{{"role": "user", "content": "x"}}}
	ways := map[string]func(url string) (string, any){
		"threads": func(url string) (string, any) { return url + "/threads", map[string]any{} },
		"stateless run": func(url string) (string, any) {
			return url + "/runs", map[string]any{"assistant_id": "agent", "input": input, "on_completion": "keep"}
		},
		"if_not_exists": func(url string) (string, any) {
			return url + "/threads/" + uuid.NewString() + "/runs", map[string]any{"assistant_id": "agent", "input": input, "if_not_exists": "create"}
		},
	}
	for name, way := range ways {
		t.Run(name, func(t *testing.T) {
			st := &meetingStore{Store: server.NewMemoryStore(), arrived: make(chan struct{})}
			s := newTestServer(t, server.Config{Store: st, MaxThreads: 1})
			const creates = 4
			codes := make(chan int, creates)
			var wg sync.WaitGroup
			for range creates {
				wg.Add(1)
				go func() {
					defer wg.Done()
					url, body := way(s.URL)
					codes <- do(t, "POST", url, body, nil, nil)
				}()
			}
			wg.Wait()
			close(codes)
			created, refused := 0, 0
			for c := range codes {
				switch c {
				case http.StatusOK:
					created++
				case http.StatusTooManyRequests:
					refused++
				default:
					t.Errorf("a create answered %d", c)
				}
			}
			if created != 1 || refused != creates-1 {
				t.Fatalf("%d creates at once with MaxThreads 1: %d created, %d refused; want 1 and %d", creates, created, refused, creates-1)
			}
		})
	}
}
