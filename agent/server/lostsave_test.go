package server_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// loseSaves is a Saver that reports the Puts numbered in lose (from 1,
// in the order of the calls) saved but saves nothing: the saves a
// PostgreSQL server loses when it crashes before flushing commits that
// did not wait for the flush (Config.AsyncCommit of
// graph/checkpoint/postgres), restarting before the run's lease expires.
type loseSaves struct {
	checkpoint.Saver
	mu   sync.Mutex
	puts int
	lose map[int]bool
}

func (l *loseSaves) Put(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	l.mu.Lock()
	l.puts++
	lost := l.lose[l.puts]
	l.mu.Unlock()
	if !lost {
		return l.Saver.Put(ctx, expect, cp, blobs, writes)
	}
	if cp.ID == "" {
		cp.ID = checkpoint.NewID()
	}
	if cp.CreatedAt.IsZero() {
		cp.CreatedAt = time.Now()
	}
	return nil
}

// plainStore is a Store that is none of the optional interfaces, an
// AttemptRenewer in particular.
type plainStore struct{ server.Store }

// flakyRenew is a MemoryStore whose first RenewAttempt fails with an
// error that is not a lost lease (a store briefly unreachable).
type flakyRenew struct {
	*server.MemoryStore
	mu     sync.Mutex
	failed bool
}

func (f *flakyRenew) RenewAttempt(ctx context.Context, runID, worker string, attempt int, lease time.Duration) error {
	f.mu.Lock()
	first := !f.failed
	f.failed = true
	f.mu.Unlock()
	if first {
		return errors.New("store briefly unreachable")
	}
	return f.MemoryStore.RenewAttempt(ctx, runID, worker, attempt, lease)
}

// TestRunResumesAfterLostSave: a run whose checkpoint saves were lost
// while its instance held its lease, the saver reporting them saved,
// finds the thread behind at its next save (a checkpoint conflict on its
// own thread). The run does not fail: it resumes from the latest
// checkpoint that survived and ends "success" with its input run once:
// the steps whose saves were lost run again, the others do not, and its
// stream has a metadata event first and one more where each resumed
// execution's events start, no event id twice, and ends with "end"
// (issue #21). With more lost saves in one attempt than the server
// resumes, the run fails with an error that says so. A conflict that no lost save explains (a
// node writing the run's own thread) fails the run at once, as does a
// lost save with a store that is not an AttemptRenewer.
func TestRunResumesAfterLostSave(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lose  []int // the Puts lost: 1 is the input's checkpoint, 2 is s0's...
		plain bool  // the store is no AttemptRenewer
		flaky bool  // the store's first RenewAttempt fails
		write bool  // s1 updates the run's own thread before it returns
		want  string
		msg   string // in the error event's message
		ran   string // the nodes run, in order
		metas int    // metadata events: one, and one per resume
	}{
		// s0's checkpoint lost: s1's save conflicts; s0 runs again.
		{name: "one save lost", lose: []int{2}, want: "success", ran: "s0 s1 s0 s1 s2", metas: 2},
		// The input's checkpoint lost too: the run starts again from its
		// input (the thread had no checkpoint).
		{name: "the run's first saves lost", lose: []int{1, 2}, want: "success", ran: "s0 s1 s0 s1 s2", metas: 2},
		// The renewal before the resume fails once: it is retried.
		{name: "a renewal fails once", lose: []int{2}, flaky: true, want: "success", ran: "s0 s1 s0 s1 s2", metas: 2},
		// Lost again and again: the fourth conflict fails the run.
		{name: "saves lost every time", lose: []int{2, 4, 6, 8}, want: "error", msg: "not resumed again", ran: "s0 s1 s0 s1 s0 s1 s0 s1", metas: 4},
		// The thread moved past the run's last save: not a lost save.
		{name: "a node writes the run's thread", write: true, want: "error", msg: "moved on by another writer", ran: "s0 s1", metas: 1},
		// Without RenewAttempt the lease check cannot tell this execution
		// from an older one: the run fails as on any conflict.
		{name: "store without RenewAttempt", lose: []int{2}, plain: true, want: "error", msg: "moved on by another writer", ran: "s0 s1", metas: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saver := &loseSaves{Saver: checkpoint.NewMemory(), lose: map[int]bool{}}
			for _, n := range tc.lose {
				saver.lose[n] = true
			}
			cfg := server.Config{Checkpointer: saver}
			if tc.plain {
				cfg.Store = plainStore{server.NewMemoryStore()}
			}
			if tc.flaky {
				// A lease long enough that the renewal before the resume
				// is, in practice, the first; retried a sixth of it later.
				cfg.Store, cfg.Lease = &flakyRenew{MemoryStore: server.NewMemoryStore()}, 3*time.Second
			}
			srv, err := server.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var ran []string
			var steps *graph.Compiled[chat]
			g := graph.New[chat]()
			for _, name := range []string{"s0", "s1", "s2"} {
				g.AddNode(name, func(ctx context.Context, s chat) (graph.Update[chat], error) {
					mu.Lock()
					ran = append(ran, name)
					mu.Unlock()
					if tc.write && name == "s1" {
						tid := graph.ConfigFrom(ctx).ThreadID
						if _, err := steps.Thread(tid).Update(ctx, chatMessages.Set([]msg{{Type: "ai", Content: "edit"}})); err != nil {
							return graph.Update[chat]{}, err
						}
					}
					return chatMessages.Set([]msg{{Type: "ai", Content: name}}), nil
				})
			}
			g.AddEdge(graph.START, "s0").AddEdge("s0", "s1").AddEdge("s1", "s2").AddEdge("s2", graph.END)
			steps, err = g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
			if err != nil {
				t.Fatal(err)
			}
			if err := server.Register(srv, "steps", steps); err != nil {
				t.Fatal(err)
			}
			url := newHTTPServer(t, srv)
			tid := newThread(t, url)
			resp, err := http.Post(url+"/threads/"+tid+"/runs/stream", "application/json",
				strings.NewReader(`{"assistant_id":"steps","input":{"messages":[{"type":"human","content":"in"}]},"stream_mode":["values"]}`))
			if err != nil {
				t.Fatal(err)
			}
			evs := readSSE(t, resp.Body)
			resp.Body.Close()
			var names []string
			ids := map[string]bool{}
			for _, ev := range evs {
				names = append(names, ev.Name)
				if ev.ID == "" || ids[ev.ID] {
					t.Errorf("event %s with id %q: want an id, each once", ev.Name, ev.ID)
				}
				ids[ev.ID] = true
			}
			if len(evs) < 2 || evs[0].Name != "metadata" || strings.Count(strings.Join(names, " "), "metadata") != tc.metas {
				t.Fatalf("events %v; want %d metadata events, the first first", names, tc.metas)
			}
			for _, ev := range evs {
				if ev.Name == "metadata" && string(ev.Data) != string(evs[0].Data) {
					t.Errorf("metadata event %s; want %s, the same attempt's", ev.Data, evs[0].Data)
				}
			}
			end := map[string]string{"success": "end", "error": "error"}[tc.want]
			if evs[len(evs)-1].Name != end {
				t.Fatalf("events %v; want the last to be %q", names, end)
			}
			mu.Lock()
			got := strings.Join(ran, " ")
			mu.Unlock()
			if got != tc.ran {
				t.Errorf("nodes run: %s; want %s", got, tc.ran)
			}
			// The end event may reach the stream before the run's end is
			// recorded: join waits for the record.
			var meta struct {
				RunID string `json:"run_id"`
			}
			if err := json.Unmarshal(evs[0].Data, &meta); err != nil {
				t.Fatal(err)
			}
			do(t, "GET", url+"/threads/"+tid+"/runs/"+meta.RunID+"/join", nil, nil, nil)
			var runs []struct {
				Status string `json:"status"`
			}
			do(t, "GET", url+"/threads/"+tid+"/runs", nil, nil, &runs)
			if len(runs) != 1 || runs[0].Status != tc.want {
				t.Fatalf("runs %+v; want one, %s (events %v)", runs, tc.want, names)
			}
			if tc.want != "success" {
				if body := string(evs[len(evs)-1].Data); !strings.Contains(body, tc.msg) {
					t.Errorf("error event %s; want it to say %q", body, tc.msg)
				}
				return
			}
			var state struct {
				Values chat `json:"values"`
			}
			do(t, "GET", url+"/threads/"+tid+"/state", nil, nil, &state)
			var contents []string
			for _, m := range state.Values.Messages {
				contents = append(contents, m.Content)
			}
			if got := strings.Join(contents, " "); got != "in s0 s1 s2" {
				t.Errorf("thread's messages: %s; want in s0 s1 s2 (the input once, each step once)", got)
			}
		})
	}
}
