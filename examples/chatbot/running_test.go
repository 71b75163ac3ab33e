package chatbot_test

import (
	"context"
	"iter"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/mcp"
)

// openTurn posts a chat message and returns its events as a pull
// iterator.
func openTurn(t *testing.T, ctx context.Context, url, conv, msg string) (next func() (event.Event, error, bool)) {
	t.Helper()
	resp := postChat(t, ctx, url, `{"conversation_id": "`+conv+`", "message": "`+msg+`"}`)
	next, stop := iter.Pull2(chatevent.ReadEvents(resp.Body))
	t.Cleanup(func() {
		stop()
		resp.Body.Close()
	})
	return next
}

// rest reads a turn's remaining events.
func rest(next func() (event.Event, error, bool)) []event.Type {
	var out []event.Type
	for {
		ev, err, ok := next()
		if !ok || err != nil {
			return out
		}
		out = append(out, ev.Type)
	}
}

// TestMaxRunningTurns runs one turn at a time: a turn of another
// conversation gets its first event at once, then waits while the running
// turn is stuck in a tool call, and goes on when the call returns.
func TestMaxRunningTurns(t *testing.T) {
	web, started, release := heldWebSearch()
	_, srv := newServer(t, chatbot.Config{MaxRunningTurns: 1, NoBundledServers: true, MCPServers: []mcp.Server{web}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()

	first := openTurn(t, ctx, srv.URL, "conv-a", "What's the latest news about Northwind Metrics?")
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the first turn's tool never started")
	}
	second := openTurn(t, ctx, srv.URL, "conv-b", "Hello!")
	if ev, err, ok := second(); !ok || err != nil || ev.Type != chatevent.TypeSupervisorThinking {
		t.Fatalf("the waiting turn's first event = %v, %v, %v; want supervisor.thinking", ev.Type, err, ok)
	}
	more := make(chan []event.Type, 1)
	go func() { more <- rest(second) }()
	select {
	case types := <-more:
		t.Fatalf("the second turn ran while the first held the only slot: %v", types)
	case <-time.After(200 * time.Millisecond):
	}
	release()
	if types := rest(first); len(types) == 0 || types[len(types)-1] != chatevent.TypeResponseDone {
		t.Fatalf("the first turn's events: %v", types)
	}
	if types := <-more; len(types) == 0 || types[len(types)-1] != chatevent.TypeResponseDone {
		t.Fatalf("the second turn's events: %v", types)
	}
}

// TestQuestionFreesTheRunningSlot: a turn waiting for a person to answer
// does not hold its running slot, so with one slot another conversation's
// turn still runs to its end.
func TestQuestionFreesTheRunningSlot(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{MaxRunningTurns: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	booking := openTurn(t, ctx, srv.URL, "conv-book", "I would like to book a demo")
	var q chatevent.ElicitationRequest
	for {
		ev, err, ok := booking()
		if !ok || err != nil {
			t.Fatalf("the booking turn ended (%v) without asking", err)
		}
		if p, is := ev.Payload.(chatevent.ElicitationRequest); is {
			q = p
			break
		}
	}
	hello := openTurn(t, ctx, srv.URL, "conv-hello", "Hello!")
	if types := rest(hello); len(types) == 0 || types[len(types)-1] != chatevent.TypeResponseDone {
		t.Fatalf("the other turn, while a question waits: %v", types)
	}
	answer := postJSON(t, srv.URL+"/api/v1/elicitation/respond", map[string]any{
		"elicitation_id": q.ElicitationID, "action": "accept",
		"content": map[string]any{"email": "ada@example.com", "date": nextWeekday()},
	})
	answer.Body.Close()
	if types := rest(booking); len(types) == 0 || types[len(types)-1] != chatevent.TypeResponseDone {
		t.Fatalf("the booking turn after the answer: %v", types)
	}
}
