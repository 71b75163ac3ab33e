package chatbot_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/mcp"
)

// resume fetches GET /api/v1/chat/stream/{id}, with a Last-Event-ID
// header when lastID is not empty, and reads its events.
func resume(t *testing.T, url, id, lastID string) (*http.Response, []event.Event) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, url+"/api/v1/chat/stream/"+id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		_, _ = io.Copy(io.Discard, resp.Body)
		return resp, nil
	}
	var evs []event.Event
	for ev, err := range chatevent.ReadEvents(resp.Body) {
		if err != nil {
			t.Fatalf("reading the resumed stream: %v", err)
		}
		evs = append(evs, ev)
	}
	return resp, evs
}

func seqs(evs []event.Event) []uint64 {
	var out []uint64
	for _, ev := range evs {
		out = append(out, ev.Seq)
	}
	return out
}

// errorBody reads an error response's JSON.
func errorBody(t *testing.T, resp *http.Response) (msg, field string) {
	t.Helper()
	defer resp.Body.Close()
	var body struct{ Error, Field string }
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
		t.Fatalf("%s: decoding the error body: %v", resp.Status, err)
	}
	return body.Error, body.Field
}

// TestResumeAfterDisconnect cuts the first connection of a resumable turn
// while its tool runs: the turn and its MCP call go on, and a client
// resuming with Last-Event-ID gets every event after the last one it saw,
// none lost and none repeated.
func TestResumeAfterDisconnect(t *testing.T) {
	started, release, finished := make(chan struct{}), make(chan struct{}), make(chan error, 1)
	web := webServer(func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		close(started)
		select {
		case <-release:
			finished <- nil
			return mcpgo.NewToolResultText("Northwind Metrics launched a new dashboard (news.example/northwind)."), nil
		case <-ctx.Done():
			finished <- ctx.Err()
			return nil, ctx.Err()
		}
	})
	_, srv := newServer(t, chatbot.Config{NoBundledServers: true, MaxResumableTurns: 1, MCPServers: []mcp.Server{web}})

	// The first connection reads up to the tool's start, then breaks.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := postChat(t, ctx, srv.URL, `{"conversation_id": "conv-resume", "request_id": "req-resume", "resumable": true,
		"message": "What's the latest news about Northwind Metrics?"}`)
	if got := resp.Header.Get("X-Request-ID"); got != "req-resume" {
		t.Errorf("X-Request-ID %q, want req-resume", got)
	}
	var before []event.Event
	for ev, err := range chatevent.ReadEvents(resp.Body) {
		if err != nil {
			t.Fatalf("reading events: %v", err)
		}
		before = append(before, ev)
		if ev.Type == chatevent.TypeToolStart {
			break
		}
	}
	select {
	case <-started:
	case <-time.After(10 * time.Second):
		t.Fatalf("the tool never started; events %v", seqs(before))
	}
	cancel()
	resp.Body.Close()

	// While the turn runs, its request id is taken and the registry
	// (MaxResumableTurns 1) is full.
	dup := postJSON(t, srv.URL+"/api/v1/chat", map[string]any{"message": "Hello!", "request_id": "req-resume", "resumable": true})
	if msg, field := errorBody(t, dup); dup.StatusCode != http.StatusBadRequest || field != "request_id" {
		t.Errorf("a second turn with the same request id: %s %q (field %q), want 400 naming request_id", dup.Status, msg, field)
	}
	full := postJSON(t, srv.URL+"/api/v1/chat", map[string]any{"message": "Hello!", "resumable": true})
	if msg, _ := errorBody(t, full); full.StatusCode != http.StatusServiceUnavailable || !strings.Contains(msg, "MaxResumableTurns") {
		t.Errorf("a resumable turn over the limit: %s %q, want 503 naming MaxResumableTurns", full.Status, msg)
	}

	// The disconnect did not cancel the tool: release it, then resume.
	close(release)
	if err := <-finished; err != nil {
		t.Fatalf("the tool's call was cancelled by the disconnect: %v", err)
	}
	last := before[len(before)-1].Seq
	rresp, after := resume(t, srv.URL, "req-resume", strconv.FormatUint(last, 10))
	if rresp.StatusCode != http.StatusOK || len(after) == 0 {
		t.Fatalf("resuming after id %d: %s with %d events", last, rresp.Status, len(after))
	}
	all := append(append([]event.Event(nil), before...), after...)
	var want []uint64
	for i := range all {
		want = append(want, uint64(i+1))
	}
	if diff := cmp.Diff(want, seqs(all)); diff != "" {
		t.Errorf("event ids across the two connections (-want +got):\n%s", diff)
	}
	if got := all[len(all)-1].Type; got != chatevent.TypeResponseDone {
		t.Errorf("last event %s, want response.done", got)
	}
	tr := turn{events: all}
	if !strings.Contains(tr.answer(), "Northwind") {
		t.Errorf("answer lacks the tool's result:\n%s", tr.answer())
	}
	if diff := cmp.Diff([]string{"user", "assistant"}, roles(history(t, srv, "conv-resume"))); diff != "" {
		t.Errorf("history (-want +got):\n%s", diff)
	}

	// The ended stream lingers: a client that has everything gets 204, one
	// without Last-Event-ID gets the whole turn again.
	if r, _ := resume(t, srv.URL, "req-resume", strconv.FormatUint(all[len(all)-1].Seq, 10)); r.StatusCode != http.StatusNoContent {
		t.Errorf("resuming after the last event: %s, want 204 No Content", r.Status)
	}
	if _, again := resume(t, srv.URL, "req-resume", ""); !cmp.Equal(seqs(again), seqs(all)) {
		t.Errorf("replay from the start: ids %v, want %v", seqs(again), seqs(all))
	}

	// A new resumable turn takes the ended one's place in the full registry.
	next := postJSON(t, srv.URL+"/api/v1/chat", map[string]any{"message": "Hello!", "request_id": "req-next", "resumable": true})
	_, _ = io.Copy(io.Discard, next.Body)
	next.Body.Close()
	if next.StatusCode != http.StatusOK {
		t.Errorf("a resumable turn after the first ended: %s, want 200", next.Status)
	}
	if r, _ := resume(t, srv.URL, "req-resume", ""); r.StatusCode != http.StatusNotFound {
		t.Errorf("the evicted turn: %s, want 404", r.Status)
	}
}

// TestResumeNotFound asks for streams the bot does not have: unknown
// request ids, non-resumable turns and resumable ones whose linger has
// passed get 404 naming the id.
func TestResumeNotFound(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{ResumeLinger: time.Millisecond})
	chatTurn := func(id string, resumable bool) {
		resp := postJSON(t, srv.URL+"/api/v1/chat", map[string]any{"message": "Hello!", "request_id": id, "resumable": resumable})
		defer resp.Body.Close()
		_, _ = io.Copy(io.Discard, resp.Body)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("POST /api/v1/chat: %s", resp.Status)
		}
	}
	chatTurn("req-plain", false)
	chatTurn("req-lingered", true)
	// The linger is a millisecond: wait (briefly) for the stream to go.
	for deadline := time.Now().Add(30 * time.Second); ; {
		r, _ := resume(t, srv.URL, "req-lingered", "")
		if r.StatusCode == http.StatusNotFound {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("req-lingered still served (%s) long after its linger", r.Status)
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, id := range []string{"req-unknown", "req-plain", "req-lingered"} {
		t.Run(id, func(t *testing.T) {
			resp, err := http.Get(srv.URL + "/api/v1/chat/stream/" + id)
			if err != nil {
				t.Fatal(err)
			}
			msg, field := errorBody(t, resp)
			if resp.StatusCode != http.StatusNotFound || !strings.Contains(msg, id) || field != "request_id" {
				t.Errorf("got %s %q (field %q), want 404 naming %s and the request_id field", resp.Status, msg, field, id)
			}
		})
	}
	resp, err := http.Get(srv.URL + "/api/v1/chat/stream/bad%20id")
	if err != nil {
		t.Fatal(err)
	}
	if _, field := errorBody(t, resp); resp.StatusCode != http.StatusBadRequest || field != "request_id" {
		t.Errorf("a malformed request id: %s (field %q), want 400 naming request_id", resp.Status, field)
	}
}
