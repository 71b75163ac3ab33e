package mcp_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/operator/elicit"
)

// TestElicitationFreesTheConcurrencySlot: calls whose server waits for a
// person to answer an elicitation do not hold the server's concurrency
// slots. With MaxConcurrent 1, two calls wait for their answers at once
// (one over stdio) and another call to the same server runs to its end
// meanwhile; then the answers come and the calls finish.
func TestElicitationFreesTheConcurrencySlot(t *testing.T) {
	for _, tr := range transports(t, "demo") {
		t.Run(tr.name, func(t *testing.T) {
			srv := tr.server
			srv.MaxConcurrent = 1
			m := newManager(t, mcp.ManagerConfig{}, srv)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			asked := make(chan string, 2)
			release := make(chan struct{})
			s := m.NewSession(mcp.Callbacks{Elicit: func(ctx context.Context, req elicit.Request) (elicit.Response, error) {
				asked <- req.Tool
				select {
				case <-release:
				case <-ctx.Done():
					return elicit.Response{}, ctx.Err()
				}
				return elicit.Response{Action: elicit.Accept, Content: map[string]any{"name": "ada"}}, nil
			}})
			defer s.Close()

			var wg sync.WaitGroup
			results := make([]string, 2)
			errs := make([]error, 2)
			ask := func(i int) {
				wg.Go(func() {
					res, err := s.CallTool(ctx, mcp.ToolCall{Server: "demo", Name: "ask"})
					if err == nil {
						results[i] = res.Text()
					}
					errs[i] = err
				})
			}
			defer func() {
				cancel()
				wg.Wait()
			}()
			// Over stdio a question reaches its call's callback only while
			// that call is the only one in flight with a callback: one
			// question there.
			n := 2
			if tr.ts == nil {
				n = 1
			}
			for i := range n {
				ask(i)
				select {
				case <-asked:
				case <-ctx.Done():
					t.Fatalf("call %d never asked its question: with MaxConcurrent 1, the call waiting for an answer holds the slot", i)
				}
			}
			// Health tells the calls waiting for a person from the load.
			if h, err := m.ServerHealth("demo"); err != nil || h.InFlight != 0 || h.Waiting != n {
				t.Errorf("health while %d questions wait: in flight %d, waiting %d, %v; want 0 in flight, %d waiting", n, h.InFlight, h.Waiting, err, n)
			}
			res, err := s.CallTool(ctx, mcp.ToolCall{Server: "demo", Name: "echo", Arguments: map[string]any{"text": "still served"}})
			if err != nil || res.Text() != "still served" {
				t.Fatalf("a call while the questions wait: %v, %v", res, err)
			}
			close(release)
			wg.Wait()
			for i := range n {
				if errs[i] != nil || results[i] != "hello ada x3 in green" {
					t.Errorf("call %d after the answer: %q, %v", i, results[i], errs[i])
				}
			}
			if h, err := m.ServerHealth("demo"); err != nil || h.InFlight != 0 || h.Waiting != 0 {
				t.Errorf("health after the calls: in flight %d, waiting %d, %v", h.InFlight, h.Waiting, err)
			}
		})
	}
}
