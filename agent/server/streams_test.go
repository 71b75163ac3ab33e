package server_test

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/graph"
)

// A join stream names the stream modes it wants; a mode the server does
// not know is refused, as at run creation, not streamed as no events.
func TestJoinStreamRefusesUnknownMode(t *testing.T) {
	url := serveChain(t, server.Config{})
	tid := newThread(t, url)
	rid := startRun(t, url, tid, map[string]any{"assistant_id": "chain", "input": humanInput("go")}, "create run")
	for _, q := range []string{"stream_mode=bogus", "stream_mode=values&stream_mode=Values", "stream_mode="} {
		var e map[string]any
		if code := do(t, "GET", url+"/threads/"+tid+"/runs/"+rid+"/stream?"+q, nil, nil, &e); code != 422 || !strings.Contains(e["detail"].(string), "stream_mode") {
			t.Errorf("join stream ?%s: %d %v; want 422 naming stream_mode", q, code, e)
		}
	}
	code, b := raw(t, "GET", url+"/threads/"+tid+"/runs/"+rid+"/stream?stream_mode=values", "", map[string]string{"Last-Event-ID": "-1"}) // the whole log
	if code != 200 || !strings.Contains(b, "event: values") {
		t.Errorf("join stream ?stream_mode=values: %d %q; want the run's values events", code, b)
	}
}

// TestForgedLastEventIDAndDuplicateModes: a Last-Event-ID past a run's
// log (one of a longer run) ends the stream at once with the run's end
// alone (no event of the log, and no id), and a stream mode given twice
// sends each event once.
func TestForgedLastEventIDAndDuplicateModes(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid, rid := interruptedThread(t, ts.URL, nil)
	get := func(query, lastID string) []sseEvent {
		code, body := raw(t, "GET", ts.URL+"/threads/"+tid+"/runs/"+rid+"/stream"+query, "", map[string]string{"Last-Event-ID": lastID})
		if code != 200 {
			t.Fatalf("stream %s from %s: %d", query, lastID, code)
		}
		return readSSE(t, strings.NewReader(body))
	}
	if evs := get("", "1000000"); len(evs) != 1 || evs[0].Name != "end" || evs[0].ID != "" {
		t.Errorf("stream from event 1000000 of a shorter run: %v; want its end alone", evs)
	}
	once := get("?stream_mode=values", "-1")
	twice := get("?stream_mode=values&stream_mode=values", "-1")
	if len(once) == 0 || len(twice) != len(once) {
		t.Errorf("stream_mode values twice: %d events; once: %d; want the same", len(twice), len(once))
	}
	seen := map[string]bool{}
	for _, ev := range twice {
		if seen[ev.ID] {
			t.Errorf("event %s sent twice", ev.ID)
		}
		seen[ev.ID] = true
	}
}

// TestLastEventIDAtTheEndOfTheRange joins an ended run's stream with the
// largest Last-Event-ID there is: it is refused with 422, where it used to
// wrap around (after+1) and replay the whole log with a false report that
// the log had restarted. The id below it names no event yet, so the stream
// ends with the run's end alone (without an id).
func TestLastEventIDAtTheEndOfTheRange(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid := newThread(t, ts.URL)
	rid := startRun(t, ts.URL, tid, map[string]any{"assistant_id": "slow", "input": map[string]any{"messages": []msg{{Content: "x"}}}}, "create run")
	ts.gates.release(tid)
	var out map[string]any
	if code := do(t, "GET", ts.URL+"/threads/"+tid+"/runs/"+rid+"/join", nil, nil, &out); code != 200 {
		t.Fatalf("join: %d", code)
	}
	get := func(id string) (int, string) {
		return raw(t, "GET", ts.URL+"/threads/"+tid+"/runs/"+rid+"/stream", "", map[string]string{"Last-Event-ID": id})
	}
	if code, b := get("9223372036854775807"); code != 422 || !strings.Contains(b, "Last-Event-ID") {
		t.Fatalf("Last-Event-ID 2^63-1: %d %s; want 422 naming Last-Event-ID", code, b)
	}
	if code, b := get("9223372036854775806"); code != 200 || strings.Count(b, "event:") != 1 || !strings.HasPrefix(b, "event: end\n") || strings.Contains(b, "id:") {
		t.Fatalf("Last-Event-ID 2^63-2: %d %s; want the run's end alone", code, b)
	}
}

// serveGreet serves the graph "greet", which answers "hi" and the input's
// name, with codec, on st (nil: the memory store), and returns the
// server's URL.
func serveGreet(t *testing.T, st server.Store, codec server.Codec[greeting]) string {
	t.Helper()
	srv, err := server.New(server.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	g := graph.New[greeting]()
	g.AddNode("greet", func(ctx context.Context, s greeting) (graph.Update[greeting], error) {
		return greetingReply.Set("hi " + s.Name), nil
	})
	g.AddEdge(graph.START, "greet").AddEdge("greet", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		t.Fatal(err)
	}
	if err := server.Register(srv, "greet", app, server.WithCodec(codec)); err != nil {
		t.Fatal(err)
	}
	return newHTTPServer(t, srv)
}

// TestCodecInputDecodedOnce: a run's input is decoded by its graph's
// Codec when the run is made; a run created claimed (a RunClaimer's,
// which runs here at once) starts with that value, decoded once. A run
// that is not (a store that claims none, or a delayed run) keeps no
// decoded value until it starts: it decodes its stored input then, and
// answers with it.
func TestCodecInputDecodedOnce(t *testing.T) {
	for _, tc := range []struct {
		name  string
		store func() server.Store
		after float64
		want  int32
	}{
		{"claimed", func() server.Store { return newClaimingMemory(newCountBarrier(0)) }, 0, 1},
		{"delayed", func() server.Store { return newClaimingMemory(newCountBarrier(0)) }, 0.001, 2},
		{"unclaimed", func() server.Store { return server.NewMemoryStore() }, 0, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var decodes atomic.Int32
			counting := server.Codec[greeting]{Input: func(data json.RawMessage) (greeting, error) {
				decodes.Add(1)
				var s greeting
				err := json.Unmarshal(data, &s)
				return s, err
			}}
			url := serveGreet(t, tc.store(), counting)
			var out greeting
			body := map[string]any{"assistant_id": "greet", "input": map[string]any{"name": "ada"}, "after_seconds": tc.after}
			if code := do(t, "POST", url+"/runs/wait", body, nil, &out); code != 200 || out.Reply != "hi ada" {
				t.Fatalf("wait = %d, %+v; want 200 and the greeting", code, out)
			}
			if n := decodes.Load(); n != tc.want {
				t.Errorf("the Codec decoded the run's input %d times, want %d", n, tc.want)
			}
		})
	}
}

// TestIndentedCodecStreamsValidSSE: JSON a Codec gives indented is sent
// compact, one data line per event, so every event's data parses.
func TestIndentedCodecStreamsValidSSE(t *testing.T) {
	indented := server.Codec[greeting]{Values: func(s greeting) (json.RawMessage, error) { return json.MarshalIndent(s, "", "  ") }}
	url := serveGreet(t, nil, indented)
	resp, err := http.Post(url+"/runs/stream", "application/json", strings.NewReader(`{"assistant_id":"greet","input":{"name":"ada"},"stream_mode":["values","updates"]}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	evs := readSSE(t, resp.Body)
	var last greeting
	for _, ev := range evs {
		if !json.Valid(ev.Data) {
			t.Fatalf("event %s has data %q, not JSON", ev.Name, ev.Data)
		}
		if ev.Name == "values" {
			if err := json.Unmarshal(ev.Data, &last); err != nil {
				t.Fatal(err)
			}
		}
	}
	if last.Reply != "hi ada" || evs[len(evs)-1].Name != "end" {
		t.Fatalf("last values %+v, events %v", last, evs)
	}
}

// A stream mode of LangGraph's servers that this one does not serve is
// refused, naming the modes it serves, at run creation and on a join: a
// run streamed without the mode's events would look like a run that
// raised none.
func TestStreamRefusesUnservedModes(t *testing.T) {
	url := serveChain(t, server.Config{})
	tid := newThread(t, url)
	rid := startRun(t, url, tid, map[string]any{"assistant_id": "chain", "input": humanInput("go")}, "create run")
	for _, mode := range []string{"events", "debug", "tasks", "checkpoints", "tools"} {
		var e map[string]any
		body := map[string]any{"assistant_id": "chain", "input": humanInput("go"), "stream_mode": []string{"values", mode}}
		code := do(t, "POST", url+"/threads/"+tid+"/runs/stream", body, nil, &e)
		detail, _ := e["detail"].(string)
		if code != 422 || !strings.Contains(detail, `"`+mode+`"`) || !strings.Contains(detail, "values, updates, messages-tuple") {
			t.Errorf("stream_mode %s at run creation: %d %v; want 422 naming the mode and the modes served", mode, code, e)
		}
		e = nil
		code = do(t, "GET", url+"/threads/"+tid+"/runs/"+rid+"/stream?stream_mode="+mode, nil, nil, &e)
		detail, _ = e["detail"].(string)
		if code != 422 || !strings.Contains(detail, `"`+mode+`"`) {
			t.Errorf("stream_mode %s on a join: %d %v; want 422 naming the mode", mode, code, e)
		}
	}
}

// The legacy messages mode sends what LangGraph's servers send for it:
// messages/metadata at a reply's first chunk, messages/partial with the
// reply so far at each chunk, and messages/complete with the messages a
// step adds to the state (not the run's input), never the tuples of
// messages-tuple (event "messages").
func TestStreamLegacyMessagesMode(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid := newThread(t, ts.URL)
	body := `{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"hi"}]},"stream_mode":"messages"}`
	resp, err := http.Post(ts.URL+"/threads/"+tid+"/runs/stream", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	evs := readSSE(t, resp.Body)
	resp.Body.Close()
	var names, partial []string
	var metaIDs []string
	var complete []map[string]any
	for _, e := range evs {
		names = append(names, e.Name)
		switch e.Name {
		case "messages/metadata":
			var m map[string]struct {
				Metadata map[string]any `json:"metadata"`
			}
			if err := json.Unmarshal(e.Data, &m); err != nil {
				t.Fatalf("messages/metadata %s: %v", e.Data, err)
			}
			for id, v := range m {
				metaIDs = append(metaIDs, id)
				if v.Metadata["langgraph_node"] != "draft" {
					t.Errorf("messages/metadata %s: want langgraph_node draft", e.Data)
				}
			}
		case "messages/partial":
			var ms []map[string]any
			if err := json.Unmarshal(e.Data, &ms); err != nil || len(ms) != 1 {
				t.Fatalf("messages/partial %s: want one message", e.Data)
			}
			if ms[0]["type"] != "ai" || len(metaIDs) != 1 || ms[0]["id"] != metaIDs[0] {
				t.Errorf("messages/partial %s: want an ai message with the id of messages/metadata %v", e.Data, metaIDs)
			}
			partial = append(partial, ms[0]["content"].(string))
		case "messages/complete":
			var ms []map[string]any
			if err := json.Unmarshal(e.Data, &ms); err != nil {
				t.Fatalf("messages/complete %s: %v", e.Data, err)
			}
			complete = append(complete, ms...)
		}
	}
	if want := []string{"draft ", "draft for: ", "draft for: hi"}; !slices.Equal(partial, want) {
		t.Errorf("messages/partial contents %q; want %q (events %v)", partial, want, names)
	}
	if len(metaIDs) != 1 {
		t.Errorf("messages/metadata ids %v; want one, at the reply's first chunk (events %v)", metaIDs, names)
	}
	if len(complete) != 1 || complete[0]["content"] != "draft for: hi" || complete[0]["type"] != "ai" {
		t.Errorf("messages/complete %v; want the draft's message alone, not the input (events %v)", complete, names)
	}
	if slices.Contains(names, "messages") || slices.Contains(names, "values") {
		t.Errorf("events %v; want no messages-tuple or values events, which were not asked for", names)
	}
}

// In messages-tuple, a message a node writes to the state without
// streaming a model reply arrives as one whole chunk, with the id the
// state gives it and its node, as on LangGraph's servers; a streamed
// reply is not sent again whole, and the run's input is not sent.
func TestStreamTupleSendsMessagesWrittenWithoutModel(t *testing.T) {
	ts := newTestServer(t, server.Config{})
	tid := newThread(t, ts.URL)
	stream := func(body string) []sseEvent {
		resp, err := http.Post(ts.URL+"/threads/"+tid+"/runs/stream", "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		return readSSE(t, resp.Body)
	}
	type tuple struct {
		msg  map[string]any
		meta map[string]any
	}
	tuples := func(evs []sseEvent) []tuple {
		var out []tuple
		for _, e := range evs {
			if e.Name != "messages" {
				continue
			}
			var pair []map[string]any
			if err := json.Unmarshal(e.Data, &pair); err != nil || len(pair) != 2 {
				t.Fatalf("messages event %s: want [message, metadata]", e.Data)
			}
			out = append(out, tuple{pair[0], pair[1]})
		}
		return out
	}
	first := tuples(stream(`{"assistant_id":"agent","input":{"messages":[{"role":"user","content":"hi"}]},"stream_mode":["messages-tuple"]}`))
	var text strings.Builder
	for _, tu := range first {
		if tu.msg["id"] != first[0].msg["id"] {
			t.Errorf("first run's messages %v: want only the streamed reply's chunks (no input, no reply sent again whole)", first)
		}
		text.WriteString(tu.msg["content"].(string))
	}
	if text.String() != "draft for: hi" {
		t.Errorf("first run's chunks give %q; want the reply", text.String())
	}
	second := tuples(stream(`{"assistant_id":"agent","command":{"resume":"yes"},"stream_mode":["messages-tuple"]}`))
	if len(second) != 1 || second[0].msg["content"] != "final: yes" || second[0].msg["type"] != "ai" || second[0].meta["langgraph_node"] != "finish" {
		t.Fatalf("resumed run's messages %v; want finish's message whole, once, naming its node", second)
	}
}
