package server_test

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
)

// eventsCounter is a Store that counts the reads of run event logs.
type eventsCounter struct {
	server.Store
	reads atomic.Int64
}

func (c *eventsCounter) Events(ctx context.Context, runID string, after int64, limit int) ([]server.Event, int64, error) {
	c.reads.Add(1)
	return c.Store.Events(ctx, runID, after, limit)
}

// serveGraph compiles g, a graph of one node name, registers it as
// name, serves srv over HTTP and creates a thread.
func serveGraph(t *testing.T, srv *server.Server, name string, g *graph.Graph[greeting]) (url string, th struct {
	ID string `json:"thread_id"`
}) {
	t.Helper()
	g.AddEdge(graph.START, name).AddEdge(name, graph.END)
	app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, name, app); err != nil {
		t.Fatal(err)
	}
	url = newHTTPServer(t, srv)
	if code := do(t, "POST", url+"/threads", map[string]any{}, nil, &th); code != 200 {
		t.Fatalf("create thread: %d", code)
	}
	return url, th
}

// TestFreshStreamReadsNoStore checks that the stream of a run this
// instance executes (POST .../runs/stream, one instance) follows the run
// from the hub without reading the run's event log from the store, even
// when the run's events come in a burst: a stream woken by an event it
// already has must not read the store to find nothing new.
func TestFreshStreamReadsNoStore(t *testing.T) {
	st := &eventsCounter{Store: server.NewMemoryStore()}
	srv, err := server.New(server.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	const burst = 40 // under the hub's tail of 64: every event stays in it
	g := graph.New[greeting]()
	g.AddNode("burst", func(ctx context.Context, s greeting) (graph.Update[greeting], error) {
		for i := range burst {
			if err := graph.Emit(ctx, map[string]int{"i": i}); err != nil {
				return graph.Update[greeting]{}, err
			}
			// Let the stream wake between events, so that some events
			// come while it is between its wake-up and its read of the
			// hub (its correctness does not depend on this pause).
			time.Sleep(20 * time.Microsecond)
		}
		return greetingReply.Set("done"), nil
	})
	url, th := serveGraph(t, srv, "burst", g)
	for run := range 10 {
		resp, err := http.Post(url+"/threads/"+th.ID+"/runs/stream", "application/json",
			strings.NewReader(`{"assistant_id":"burst","input":{"name":"x"},"stream_mode":["custom"]}`))
		if err != nil {
			t.Fatal(err)
		}
		evs := readSSE(t, resp.Body)
		resp.Body.Close()
		custom := 0
		for _, ev := range evs {
			if ev.Name == "custom" {
				custom++
			}
		}
		if custom != burst || evs[len(evs)-1].Name != "end" {
			t.Fatalf("run %d: %d custom events, last %q; want %d and end", run, custom, evs[len(evs)-1].Name, burst)
		}
	}
	if n := st.reads.Load(); n != 0 {
		t.Fatalf("the streams read the event log from the store %d times; want 0 (every event was in the hub)", n)
	}
}

// TestHeartbeatPollsOnlyOtherInstancesRuns checks that a stream does not
// read the store at its heartbeats while this instance executes the run:
// the run's events and end wake it. (It polls at heartbeats while the run
// is pending or runs on another instance, in case a notification was
// lost.)
func TestHeartbeatPollsOnlyOtherInstancesRuns(t *testing.T) {
	st := &eventsCounter{Store: server.NewMemoryStore()}
	srv, err := server.New(server.Config{Store: st, Heartbeat: 2 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	started, release := make(chan struct{}), make(chan struct{})
	g := graph.New[greeting]()
	g.AddNode("wait", func(ctx context.Context, s greeting) (graph.Update[greeting], error) {
		close(started)
		select {
		case <-release:
		case <-ctx.Done():
			return graph.Update[greeting]{}, ctx.Err()
		}
		return greetingReply.Set("done"), nil
	})
	url, th := serveGraph(t, srv, "wait", g)
	resp, err := http.Post(url+"/threads/"+th.ID+"/runs/stream", "application/json",
		strings.NewReader(`{"assistant_id":"wait","input":{"name":"x"}}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	<-started
	sc := bufio.NewScanner(resp.Body)
	heartbeats := func(n int) {
		t.Helper()
		for n > 0 && sc.Scan() {
			if sc.Text() == ": heartbeat" {
				n--
			}
		}
		if n > 0 {
			t.Fatalf("the stream ended before %d more heartbeats: %v", n, sc.Err())
		}
	}
	// The stream decides to read the store at a heartbeat, then reads:
	// one read decided before the run was claimed may still land after
	// the node started, and is allowed; a poll at each heartbeat is not.
	heartbeats(2)
	before := st.reads.Load()
	heartbeats(20)
	if n := st.reads.Load() - before; n > 1 {
		t.Errorf("the stream read the event log %d times in 20 heartbeats while this instance ran the run; want at most 1 (a read decided before the run started)", n)
	}
	close(release)
	end := false
	for sc.Scan() {
		end = end || sc.Text() == "event: end"
	}
	if !end {
		t.Fatal("the stream ended without its end event")
	}
}

// TestStreamEndKeepsConnection checks that a run's stream ends its
// response with its last event: a client that stops reading at the end
// event and closes the body finds the body complete, so its connection
// goes back to the pool and the next request reuses it.
func TestStreamEndKeepsConnection(t *testing.T) {
	_, url := newGreetServer(t, server.Config{})
	tr := &http.Transport{}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr}
	var th struct {
		ID string `json:"thread_id"`
	}
	resp, err := hc.Post(url+"/threads", "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	if err := decodeJSON(resp, &th); err != nil {
		t.Fatal(err)
	}
	for run := range 10 {
		reused := false
		ctx := httptrace.WithClientTrace(t.Context(), &httptrace.ClientTrace{
			GotConn: func(info httptrace.GotConnInfo) { reused = info.Reused },
		})
		req, err := http.NewRequestWithContext(ctx, "POST", url+"/threads/"+th.ID+"/runs/stream",
			strings.NewReader(`{"assistant_id":"greet","input":{"name":"x"}}`))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if !reused {
			t.Errorf("run %d: the request opened a new connection; want the previous stream's, back in the pool", run)
		}
		sc := bufio.NewScanner(resp.Body)
		end := false
		for !end && sc.Scan() {
			end = sc.Text() == "event: end"
		}
		resp.Body.Close() // without reading on: the client is done
		if !end {
			t.Fatalf("run %d: the stream ended without its end event", run)
		}
	}
}
