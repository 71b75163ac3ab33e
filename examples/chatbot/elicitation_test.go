package chatbot_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
)

// nextWeekday returns a weekday at least a week from now, YYYY-MM-DD.
func nextWeekday() string {
	d := time.Now().UTC().AddDate(0, 0, 8)
	for d.Weekday() == time.Saturday || d.Weekday() == time.Sunday {
		d = d.AddDate(0, 0, 1)
	}
	return d.Format(time.DateOnly)
}

// TestElicitationOverHTTP books a demo: the knowledge server's book_demo
// asks for the user's details, the question reaches the client as an
// elicitation.request event, the answer comes back through
// POST /api/v1/elicitation/respond, and the turn goes on to the answer.
func TestElicitationOverHTTP(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api/v1/chat",
		strings.NewReader(`{"message": "I would like to book a demo"}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()

	var tr turn
	date := nextWeekday()
	for ev, err := range chatevent.ReadEvents(resp.Body) {
		if err != nil {
			t.Fatalf("reading events: %v", err)
		}
		tr.events = append(tr.events, ev)
		q, ok := ev.Payload.(chatevent.ElicitationRequest)
		if !ok {
			continue
		}
		var pending struct{ Pending []string }
		getJSON(t, srv.URL+"/api/v1/elicitation/pending", &pending)
		if diff := cmp.Diff([]string{q.ElicitationID}, pending.Pending); diff != "" {
			t.Errorf("pending (-want +got):\n%s", diff)
		}
		// The call waiting for the answer is no load on its server.
		var health struct{ MCP []chatbot.ServerHealth }
		getJSON(t, srv.URL+"/health", &health)
		inFlight, waiting := 0, 0
		for _, h := range health.MCP {
			inFlight += h.InFlight
			waiting += h.Waiting
		}
		if inFlight != 0 || waiting != 1 {
			t.Errorf("health while the question waits: %d calls in flight, %d waiting; want 0 and 1 (%+v)", inFlight, waiting, health.MCP)
		}
		answer := postJSON(t, srv.URL+"/api/v1/elicitation/respond", map[string]any{
			"elicitation_id": q.ElicitationID, "action": "accept",
			"content": map[string]any{"email": "ada@example.com", "date": date},
		})
		answer.Body.Close()
		if answer.StatusCode != http.StatusOK {
			t.Fatalf("respond: %s", answer.Status)
		}
	}
	types := tr.types()
	if !containsType(types, chatevent.TypeElicitationRequest) {
		t.Fatalf("no elicitation.request; events %v", types)
	}
	if diff := cmp.Diff([]string{"book_demo"}, tr.tools()); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
	if !strings.Contains(tr.answer(), "DEMO-") || !strings.Contains(tr.answer(), date) {
		t.Errorf("answer lacks the booking:\n%s", tr.answer())
	}
	if tr.last() != chatevent.TypeResponseDone {
		t.Errorf("last event %s; events %v", tr.last(), types)
	}
}

func containsType(types []event.Type, t event.Type) bool {
	for _, x := range types {
		if x == t {
			return true
		}
	}
	return false
}
