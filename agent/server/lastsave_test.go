package server_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// asyncLoseSaves is loseSaves that says it commits asynchronously, as
// the PostgreSQL saver with Config.AsyncCommit does.
type asyncLoseSaves struct{ *loseSaves }

func (asyncLoseSaves) CommitsAsync() bool { return true }

var _ checkpoint.AsyncCommitter = asyncLoseSaves{}

// TestRunResumesAfterLostLastSave: a run whose last save was lost (the
// saver commits asynchronously and its storage crashed after the save,
// before the run's end) is not recorded "success" over a thread whose
// latest checkpoint lists the step it saved as still to run: the run
// reads its last save back, finds it lost, and resumes from the latest
// checkpoint that survived, as after a lost save found by a conflict.
// GET state then shows the run's result and no next step. A saver that
// loses nothing costs one read, and no resume.
func TestRunResumesAfterLostLastSave(t *testing.T) {
	for _, tc := range []struct {
		name  string
		lose  []int // the Puts lost: 1 is the input's checkpoint, 2 is s0's...
		ran   string
		metas int
	}{
		{name: "last save lost", lose: []int{4}, ran: "s0 s1 s2 s2", metas: 2},
		{name: "the last two saves lost", lose: []int{3, 4}, ran: "s0 s1 s2 s1 s2", metas: 2},
		{name: "nothing lost", ran: "s0 s1 s2", metas: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			saver := asyncLoseSaves{&loseSaves{Saver: checkpoint.NewMemory(), lose: map[int]bool{}}}
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
			if len(evs) < 2 || evs[len(evs)-1].Name != "end" || strings.Count(strings.Join(names, " "), "metadata") != tc.metas {
				t.Fatalf("events %v; want %d metadata events and end last", names, tc.metas)
			}
			mu.Lock()
			got := strings.Join(ran, " ")
			mu.Unlock()
			if got != tc.ran {
				t.Errorf("nodes run: %s; want %s", got, tc.ran)
			}
			var st struct {
				Values chat     `json:"values"`
				Next   []string `json:"next"`
			}
			if code := do(t, "GET", url+"/threads/"+tid+"/state", nil, nil, &st); code != 200 {
				t.Fatalf("GET state: %d", code)
			}
			if len(st.Next) != 0 || last(st.Values) != "s2" {
				t.Errorf("state after the run: next %v, last message %q; want none, s2", st.Next, last(st.Values))
			}
			// A second run, whose saves stay, reads its last save back and
			// runs each node once.
			var out map[string]any
			if code := do(t, "POST", url+"/threads/"+tid+"/runs/wait", map[string]any{"assistant_id": "steps"}, nil, &out); code != 200 {
				t.Fatalf("a second run: %d %v", code, out)
			}
			mu.Lock()
			again := strings.Join(ran, " ")
			mu.Unlock()
			if again != tc.ran+" s0 s1 s2" {
				t.Errorf("nodes run by a second run: %q; want s0 s1 s2", strings.TrimPrefix(again, tc.ran))
			}
		})
	}
}
