package chatbot_test

import (
	"fmt"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
)

// TestWebSearchProgressInOrder reads turns that call the bundled web_search
// server over HTTP: every tool.progress of web_search comes between its
// tool.start and tool.complete, in the order sent, and none is missing (the
// server reports 0, 1/2 and 1). Several turns, as a race would not show in
// every one.
func TestWebSearchProgressInOrder(t *testing.T) {
	turns := 20
	if testing.Short() {
		turns = 3
	}
	_, srv := newServer(t, chatbot.Config{})
	for i := range turns {
		tr := chat(t, srv, fmt.Sprintf("progress-%d", i), "Search the web for agent frameworks")
		start, complete := -1, -1
		var progress []float64
		for j, ev := range tr.events {
			switch p := ev.Payload.(type) {
			case chatevent.ToolStart:
				if p.Tool == "web_search" && start < 0 {
					start = j
				}
			case chatevent.ToolComplete:
				if p.Tool == "web_search" && complete < 0 {
					complete = j
				}
			case chatevent.ToolProgress:
				if p.Tool != "web_search" {
					continue
				}
				if start < 0 || complete >= 0 {
					t.Fatalf("turn %d: tool.progress %+v at event %d is outside web_search's tool.start (%d) .. tool.complete (%d); events %v",
						i, p, j, start, complete, tr.types())
				}
				if ev.Coalesced > 0 {
					t.Fatalf("turn %d: %d progress events coalesced; the test reads fast enough for none", i, ev.Coalesced)
				}
				progress = append(progress, p.Progress)
			}
		}
		if start < 0 || complete < 0 {
			t.Fatalf("turn %d: no web_search tool.start/tool.complete in %v", i, tr.types())
		}
		if want := []float64{0, 0.5, 1}; fmt.Sprint(progress) != fmt.Sprint(want) {
			t.Fatalf("turn %d: web_search progress %v, want %v (in order, none missing)", i, progress, want)
		}
	}
}
