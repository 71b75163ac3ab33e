package cortexr_test

import (
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/examples/cortexr"
)

// The seed's §19 example: the page's own content is the answer.
func TestSummarizeWebpage(t *testing.T) {
	a := newAgent(t, cortexr.Config{})
	evs, ans := run(t, a, "Summarize this webpage: https://example.com")
	if ans.Outcome != cortexr.OutcomeAnswered || ans.Steps != 2 {
		t.Fatalf("answer %+v, want answered after two steps", ans)
	}
	for _, want := range []string{"Example Domain", "illustrative examples in documents"} {
		if !strings.Contains(ans.Text, want) {
			t.Errorf("answer %q does not contain %q", ans.Text, want)
		}
	}
	var called []string
	for _, e := range evs {
		if e.Kind == cortexr.EventToolCall {
			called = append(called, e.Tool.Name)
		}
	}
	if strings.Join(called, ",") != "convert_webpage_url_into_markdown" {
		t.Errorf("tool calls %v, want the page converted once", called)
	}
}

// Questions over the bundled documents, answered offline with their source.
func TestDocumentQuestionsEndToEnd(t *testing.T) {
	a := newAgent(t, cortexr.Config{})
	for _, c := range []struct{ q, source, want string }{
		{"How many days a week may employees work remotely?", "remote_work_policy.md", "three days a week"},
		{"How large is the home office stipend for a desk and chair?", "remote_work_policy.md", "1,200 euros"},
		{"Within how many days must expense claims be submitted?", "remote_work_policy.md", "30 days"},
		{"What brew ratio does a classic espresso use?", "espresso_guide.txt", "1:2"},
		{"What water temperature should espresso brew at?", "espresso_guide.txt", "90 and 96 degrees"},
		{"When is the best time to visit Kyoto for cherry blossoms?", "kyoto_travel.html", "late March to early April"},
		{"What is Fushimi Inari shrine famous for?", "kyoto_travel.html", "torii gates"},
		{"What efficiency do monocrystalline solar panels reach?", "solar_panels.md", "20 to 23 percent"},
		{"How many hours of sunlight do tomatoes need?", "garden_notes.md", "six to eight hours"},
		{"How often should the bicycle chain be cleaned and lubricated?", "bicycle_maintenance.pdf", "every 300 kilometres"},
		{"When are disc brake pads replaced?", "bicycle_maintenance.pdf", "1.5 millimetres"},
	} {
		_, ans := run(t, a, c.q)
		if ans.Outcome != cortexr.OutcomeAnswered || !strings.Contains(ans.Text, c.want) || !strings.Contains(ans.Text, "[Source: "+c.source) {
			t.Errorf("%s\n  answer %+v\n  want %q with [Source: %s", c.q, ans, c.want, c.source)
		}
	}
}

// A question the documents do not answer falls back to web search.
func TestDocumentsFallBackToWebSearch(t *testing.T) {
	a := newAgent(t, cortexr.Config{})
	evs, ans := run(t, a, "What is the capital of France?")
	var called []string
	for _, e := range evs {
		if e.Kind == cortexr.EventToolCall {
			called = append(called, e.Tool.Name)
		}
	}
	if strings.Join(called, ",") != "search_stored_documents,web_search" || ans.Outcome != cortexr.OutcomeAnswered {
		t.Fatalf("calls %v, answer %+v; want the documents searched, then the web", called, ans)
	}
}
