package chatbot_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/mcp"
)

// TestFirstEventBeforeTheTurnStarts sends a second message to a
// conversation whose first turn is stuck in a tool call: the second turn
// waits for the conversation, but its client gets the turn's first event
// (supervisor.thinking) at once, over HTTP, instead of after the wait.
func TestFirstEventBeforeTheTurnStarts(t *testing.T) {
	web, started, release := heldWebSearch()
	_, srv := newServer(t, chatbot.Config{NoBundledServers: true, MCPServers: []mcp.Server{web}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	first := postChat(t, ctx, srv.URL, `{"conversation_id": "conv-busy", "message": "What's the latest news about Northwind Metrics?"}`)
	firstDone := make(chan []event.Type)
	go func() {
		defer first.Body.Close()
		var types []event.Type
		for ev, err := range chatevent.ReadEvents(first.Body) {
			if err != nil {
				break
			}
			types = append(types, ev.Type)
		}
		firstDone <- types
	}()
	select {
	case <-started:
	case <-ctx.Done():
		t.Fatal("the first turn's tool never started")
	}

	next := openTurn(t, ctx, srv.URL, "conv-busy", "Hello!")
	ev, err, ok := next()
	if !ok || err != nil || ev.Type != chatevent.TypeSupervisorThinking {
		t.Fatalf("first event of the waiting turn = %v, %v, %v; want supervisor.thinking", ev.Type, err, ok)
	}
	select {
	case types := <-firstDone:
		t.Fatalf("the first turn ended (%v) before the second turn's first event was checked", types)
	default: // the first turn still holds the conversation
	}
	release()
	if later := rest(next); len(later) == 0 || later[len(later)-1] != chatevent.TypeResponseDone || slices.Contains(later, chatevent.TypeSupervisorThinking) {
		t.Fatalf("the second turn's later events = %v; want one thinking event in all, ending with response.done", later)
	}
	if types := <-firstDone; len(types) == 0 || types[len(types)-1] != chatevent.TypeResponseDone {
		t.Fatalf("the first turn's events = %v", types)
	}
}
