package bosai

import (
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestArithmetic(t *testing.T) {
	for q, want := range map[string]string{
		"what is 12 * 49?":                 "12 * 49",
		"What is 15% of 240":               "(15 / 100.0 * 240)",
		"7 times 6 plus 1":                 "7 * 6 + 1",
		"compute (2 + 3) * 4 for the team": "(2 + 3) * 4",
		"What does the Team plan cost?":    "",
		"we have 12 editors":               "",
	} {
		if got := arithmetic(q); got != want {
			t.Errorf("arithmetic(%q) = %q, want %q", q, got, want)
		}
	}
}

func TestHeuristic(t *testing.T) {
	for q, want := range map[string][]AgentName{
		"List all tables in the database":             {AgentSQL},
		"List me all the API points available to you": {AgentAPI, AgentSQL},
		"Query database and call API":                 {AgentSQL},
		"What is 1200 - 350?":                         {AgentComputation},
		"What is the square root of 144?":             {AgentComputation},
		"What is the average of 3, 5 and 10?":         {AgentComputation},
		"Any recent incidents? Is the status up?":     {AgentAPI},
		"Hello there": {AgentSQL},
		"How many orders were placed on 2024-03-01?":   {AgentSQL},
		"How many customers per country, and 12 * 49?": {AgentSQL},
	} {
		if diff := cmp.Diff(want, heuristic(q)); diff != "" {
			t.Errorf("heuristic(%q) (-want +got):\n%s", q, diff)
		}
	}
}

func TestRankEndpoints(t *testing.T) {
	docs := DemoAPIDocs()
	for q, want := range map[string]string{
		"List me all the API points available to you": "GET /v1/endpoints",
		"Any critical incidents?":                     "GET /v1/incidents",
		"Which regions have the lowest latency?":      "GET /v1/regions",
		"Open a support ticket about slow dashboards": "POST /v1/tickets",
		"Is the service operational?":                 "GET /v1/status",
	} {
		got := rankEndpoints(docs, q, 3)
		if len(got) == 0 || len(got) > 3 || got[0].Method+" "+got[0].Path != want {
			t.Errorf("rankEndpoints(%q) = %v, want %s first, at most 3", q, got, want)
		}
	}
	if got := rankEndpoints(docs, "zzz", 3); len(got) != len(docs.Endpoints) {
		t.Errorf("no match: %d endpoints, want all", len(got))
	}
}

// TestClipKeepsCharacters: clipping at a byte limit never cuts a
// multi-byte character, so prompts and errors stay valid UTF-8.
func TestClipKeepsCharacters(t *testing.T) {
	for _, n := range []int{1, 2, 3, 4, 5} {
		got := clip("añb€c", n)
		if !utf8.ValidString(got) {
			t.Errorf("clip(%q, %d) = %q: not valid UTF-8", "añb€c", n, got)
		}
	}
	if got := clip("short", 10); got != "short" {
		t.Errorf("clip of a short string = %q", got)
	}
}
