package chatbot_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot"
)

// Stopping a resumable turn that has already ended answers 409 naming
// request_id, not 202 "stopping": its stream ended on its own, with no
// "cancelled" error event to come. A turn never started is still 404.
func TestStopEndedTurn(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{NoBundledServers: true})
	resp := postChat(t, context.Background(), srv.URL, `{"request_id": "req-ended", "resumable": true, "message": "Hello!"}`)
	body, err := io.ReadAll(resp.Body) // to its end: the turn has ended
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "done") {
		t.Fatalf("the turn: %s %v %q", resp.Status, err, body)
	}
	stop := func(id string) *http.Response {
		req, err := http.NewRequest(http.MethodDelete, srv.URL+"/api/v1/chat/stream/"+id, nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	r := stop("req-ended")
	if msg, field := errorBody(t, r); r.StatusCode != http.StatusConflict || field != "request_id" || !strings.Contains(msg, "already ended") {
		t.Fatalf("stopping an ended turn: %s %q (field %q); want 409 saying it already ended", r.Status, msg, field)
	}
	r = stop("req-never")
	if _, field := errorBody(t, r); r.StatusCode != http.StatusNotFound || field != "request_id" {
		t.Fatalf("stopping an unknown turn: %s (field %q); want 404", r.Status, field)
	}
}

// On two instances, stopping through B a turn that ran and ended on A is
// the same 409 as on A: the relay carries "already ended" back.
func TestStopEndedTurnRelayed(t *testing.T) {
	_, a, b := twoInstances(t)
	resp := postChat(t, context.Background(), a.URL, `{"request_id": "req-ended-a", "resumable": true, "message": "Hello!"}`)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil || resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "done") {
		t.Fatalf("the turn on A: %s %v %q", resp.Status, err, body)
	}
	req, err := http.NewRequest(http.MethodDelete, b.URL+"/api/v1/chat/stream/req-ended-a", nil)
	if err != nil {
		t.Fatal(err)
	}
	r, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if msg, field := errorBody(t, r); r.StatusCode != http.StatusConflict || field != "request_id" || !strings.Contains(msg, "already ended") {
		t.Fatalf("stopping through B a turn ended on A: %s %q (field %q); want 409 saying it already ended", r.Status, msg, field)
	}
}
