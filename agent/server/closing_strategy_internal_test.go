package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph"
)

// closeAtCreate is a Store that, once armed, has the server closed while
// a run is being created (in its CreateRun, after the run's multitask
// strategy cancelled the thread's runs): Close is started and the
// creation goes on once Close has marked the server closed.
type closeAtCreate struct {
	Store
	s     *Server
	armed atomic.Bool
}

func (c *closeAtCreate) CreateRun(ctx context.Context, r *Run) error {
	if err := c.Store.CreateRun(ctx, r); err != nil {
		return err
	}
	if c.armed.CompareAndSwap(true, false) {
		go c.s.Close(context.Background())
		for !c.s.shut.Load() {
			time.Sleep(time.Millisecond) // until Close has begun; it decides nothing
		}
	}
	return nil
}

// TestRefusedRunNamesCancelledRuns: a /runs/wait with multitask_strategy
// rollback or interrupt whose run Close refuses after the strategy
// cancelled the thread's running run is answered 503 naming that run and
// what became of it: the cancellation cannot be undone, and the client,
// told only to retry, would not know its previous run was cancelled
// (issue #21).
func TestRefusedRunNamesCancelledRuns(t *testing.T) {
	for _, strategy := range []string{"rollback", "interrupt"} {
		t.Run(strategy, func(t *testing.T) {
			st := &closeAtCreate{Store: NewMemoryStore()}
			s, err := New(Config{Store: st, SweepInterval: time.Hour})
			if err != nil {
				t.Fatal(err)
			}
			st.s = s
			entered, release := make(chan struct{}, 1), make(chan struct{})
			n := graph.Replace(func(h *held) *int { return &h.N })
			g := graph.New[held]()
			g.AddNode("wait", func(ctx context.Context, h held) (graph.Update[held], error) {
				select {
				case entered <- struct{}{}:
				default:
				}
				// Not ctx: the run's worker stays in the node, and cannot
				// claim the new run before Close refuses it.
				<-release
				return graph.Update[held]{}, ctx.Err()
			})
			g.AddNode("inc", func(ctx context.Context, h held) (graph.Update[held], error) { return n.Set(h.N + 1), nil })
			g.AddEdge(graph.START, "wait").AddEdge("wait", "inc").AddEdge("inc", graph.END)
			app, err := g.Compile(graph.WithCheckpointer(s.Checkpointer()))
			if err != nil {
				t.Fatal(err)
			}
			if err := Register(s, "g", app); err != nil {
				t.Fatal(err)
			}
			hs := httptest.NewServer(s)
			defer hs.Close()
			defer hs.CloseClientConnections()
			defer s.Close(context.Background())
			defer close(release) // before Close, which waits for the node
			call := func(path, body string) (int, string) {
				req, err := http.NewRequestWithContext(t.Context(), "POST", hs.URL+path, strings.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				resp, err := hs.Client().Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			code, body := call("/threads", `{}`)
			var th struct {
				ThreadID string `json:"thread_id"`
			}
			if code != 200 || json.Unmarshal([]byte(body), &th) != nil {
				t.Fatalf("POST /threads: %d %s", code, body)
			}
			code, body = call("/threads/"+th.ThreadID+"/runs", `{"assistant_id":"g","input":{"n":1}}`)
			var prev struct {
				RunID string `json:"run_id"`
			}
			if code != 200 || json.Unmarshal([]byte(body), &prev) != nil {
				t.Fatalf("first run: %d %s", code, body)
			}
			<-entered
			st.armed.Store(true)
			code, body = call("/threads/"+th.ThreadID+"/runs/wait", `{"assistant_id":"g","input":{"n":5},"multitask_strategy":"`+strategy+`"}`)
			var e struct{ Detail string }
			if code != http.StatusServiceUnavailable || json.Unmarshal([]byte(body), &e) != nil {
				t.Fatalf("run refused by Close after its strategy cancelled the previous one: %d %s; want 503", code, body)
			}
			if !strings.Contains(e.Detail, prev.RunID) || !strings.Contains(e.Detail, "multitask_strategy "+strategy) {
				t.Errorf("refusal %q; want it to name the cancelled run %s and the strategy %s", e.Detail, prev.RunID, strategy)
			}
		})
	}
}
