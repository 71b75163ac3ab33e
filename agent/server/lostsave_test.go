package server_test

import (
	"context"
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

// TestRunResumesAfterLostSave: a run whose checkpoint saves were lost
// while its instance held its lease, the saver reporting them saved,
// finds the thread behind at its next save (a checkpoint conflict on its
// own thread). The run does not fail: it resumes from the latest
// checkpoint that survived and ends "success" with its input run once:
// the steps whose saves were lost run again, the others do not, and its
// stream has one metadata event and ends with "end" (issue #21). With
// more lost saves in a row than the server resumes, the run fails with
// an error that says so.
func TestRunResumesAfterLostSave(t *testing.T) {
	for _, tc := range []struct {
		name string
		lose []int // the Puts lost: 1 is the input's checkpoint, 2 is s0's...
		want string
		ran  string // the nodes run, in order
	}{
		// s0's checkpoint lost: s1's save conflicts; s0 runs again.
		{"one save lost", []int{2}, "success", "s0 s1 s0 s1 s2"},
		// The input's checkpoint lost too: the run starts again from its
		// input (the thread had no checkpoint).
		{"the run's first saves lost", []int{1, 2}, "success", "s0 s1 s0 s1 s2"},
		// Lost again and again: the fourth conflict fails the run.
		{"saves lost every time", []int{2, 4, 6, 8}, "error", "s0 s1 s0 s1 s0 s1 s0 s1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saver := &loseSaves{Saver: checkpoint.NewMemory(), lose: map[int]bool{}}
			for _, n := range tc.lose {
				saver.lose[n] = true
			}
			srv, err := server.New(server.Config{Checkpointer: saver})
			if err != nil {
				t.Fatal(err)
			}
			var mu sync.Mutex
			var ran []string
			g := graph.New[chat]()
			for _, name := range []string{"s0", "s1", "s2"} {
				g.AddNode(name, func(ctx context.Context, s chat) (graph.Update[chat], error) {
					mu.Lock()
					ran = append(ran, name)
					mu.Unlock()
					return chatMessages.Set([]msg{{Type: "ai", Content: name}}), nil
				})
			}
			g.AddEdge(graph.START, "s0").AddEdge("s0", "s1").AddEdge("s1", "s2").AddEdge("s2", graph.END)
			steps, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
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
			for _, ev := range evs {
				names = append(names, ev.Name)
			}
			if len(evs) < 2 || evs[0].Name != "metadata" || strings.Count(strings.Join(names, " "), "metadata") != 1 {
				t.Fatalf("events %v; want one metadata event, first", names)
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
			var runs []struct {
				Status string `json:"status"`
			}
			do(t, "GET", url+"/threads/"+tid+"/runs", nil, nil, &runs)
			if len(runs) != 1 || runs[0].Status != tc.want {
				t.Fatalf("runs %+v; want one, %s", runs, tc.want)
			}
			if tc.want != "success" {
				if body := string(evs[len(evs)-1].Data); !strings.Contains(body, "not resumed again") {
					t.Errorf("error event %s; want it to say the run is not resumed again", body)
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
