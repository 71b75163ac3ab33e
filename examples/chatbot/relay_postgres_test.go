package chatbot_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
)

// TestInstancesRelayPostgres: on instances that share only PostgreSQL, a
// resumable turn on A asks a question, the client resumes the turn through
// B and answers through B, and A's turn goes on with the answer; a second
// turn on A is stopped through B; an unknown question is still 404.
func TestInstancesRelayPostgres(t *testing.T) {
	cfg := postgresConfig(t)
	_, a := serve(t, cfg, 10*time.Second)
	_, b := serve(t, cfg, 10*time.Second)
	ctx, cancel := context.WithTimeout(t.Context(), 90*time.Second)
	defer cancel()

	// The question: asked on A, read from the stream resumed on B.
	actx, drop := context.WithCancel(ctx)
	respA := postChat(t, actx, a.URL, `{"conversation_id": "relay-1", "request_id": "relay-q", "resumable": true, "message": "I would like to book a demo"}`)
	first := readTurn(t, respA, func(ev event.Event) bool { return ev.Seq == 1 })
	drop()
	respA.Body.Close()
	respB := resumeOn(t, ctx, b, "relay-q", first[len(first)-1].Seq)
	defer respB.Body.Close()
	var question chatevent.ElicitationRequest
	evs := append(first, readTurn(t, respB, func(ev event.Event) bool {
		q, ok := ev.Payload.(chatevent.ElicitationRequest)
		question = q
		return ok
	})...)
	if question.ElicitationID == "" {
		t.Fatalf("no question in the turn resumed on B; events %v", turn{evs}.types())
	}
	answer := postJSON(t, b.URL+"/api/v1/elicitation/respond", map[string]any{
		"elicitation_id": question.ElicitationID, "action": "accept",
		"content": map[string]any{"email": "ada@example.com", "date": nextWeekday()},
	})
	answer.Body.Close()
	if answer.StatusCode != http.StatusOK {
		t.Fatalf("answering A's question through B: %s", answer.Status)
	}
	tr := turn{append(evs, readTurn(t, respB, nil)...)}
	if !strings.Contains(tr.answer(), "DEMO-") || tr.last() != chatevent.TypeResponseDone {
		t.Errorf("A's turn after the answer relayed from B: last %s, answer %q", tr.last(), tr.answer())
	}

	// The stop: a turn on A waiting for its question's answer, stopped
	// through B.
	resp := postChat(t, ctx, a.URL, `{"conversation_id": "relay-2", "request_id": "relay-stop", "resumable": true, "message": "I would like to book a demo"}`)
	defer resp.Body.Close()
	asked := readTurn(t, resp, func(ev event.Event) bool {
		_, ok := ev.Payload.(chatevent.ElicitationRequest)
		return ok
	})
	if _, ok := asked[len(asked)-1].Payload.(chatevent.ElicitationRequest); !ok {
		t.Fatalf("the second turn asked nothing; events %v", turn{asked}.types())
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodDelete, b.URL+"/api/v1/chat/stream/relay-stop", nil)
	if err != nil {
		t.Fatal(err)
	}
	stop, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	stop.Body.Close()
	if stop.StatusCode != http.StatusAccepted {
		t.Fatalf("stopping A's turn through B: %s", stop.Status)
	}
	rest := turn{readTurn(t, resp, nil)} // ends: the turn stopped before TurnTimeout
	if rest.last() == chatevent.TypeResponseDone {
		t.Errorf("the stopped turn ended with response.done; events %v", rest.types())
	}

	// Unknown ids are 404 after the relay found no instance that has them.
	unknown := postJSON(t, b.URL+"/api/v1/elicitation/respond", map[string]any{"elicitation_id": "nope", "action": "decline"})
	unknown.Body.Close()
	if unknown.StatusCode != http.StatusNotFound {
		t.Errorf("unknown question: %s", unknown.Status)
	}
}
