package knowledge

import (
	"slices"
	"testing"
)

// corpusPassages returns the passages of the bundled corpus.
func corpusPassages(t *testing.T) []passage {
	t.Helper()
	docs, err := loadDocuments(Corpus())
	if err != nil {
		t.Fatal(err)
	}
	var ps []passage
	for _, d := range docs {
		ps = append(ps, d.passages...)
	}
	return ps
}

// TestNamesSentenceStarts checks that a capitalised word opening a
// sentence is not counted as a name however the sentence before it ends
// (behind a quote, a bracket, emphasis or an ellipsis), nor one after a
// list's, table's or heading's marker, while a word capitalised within a
// sentence still is.
func TestNamesSentenceStarts(t *testing.T) {
	names := namesOf([]passage{{text: "Say \"it is fast.\" Storage is cheap.\n" +
		"Logs are kept (for a year.) Server logs too.\n" +
		"It is **fast.** Metrics are kept.\n" +
		"Wait… Type a name.\n" +
		"- Basic support by email\n" +
		"| Plus | $10 |\n" +
		"### Pro\n" +
		"The Team plan costs $49. Buy the Team plan.\n"}})
	if !slices.Contains(names, "team") {
		t.Errorf("namesOf = %q, want %q: a word capitalised within a sentence is a name", names, "team")
	}
	for _, w := range []string{"storage", "server", "metrics", "type", "basic", "plus", "pro"} {
		if slices.Contains(names, w) {
			t.Errorf("namesOf = %q, holds %q, which only opens a sentence or a list item", names, w)
		}
	}
	// The bundled corpus: its plans and products are names. (So are
	// its competitors' "Pro" and "Basic" plans, "Northwind Metrics",
	// "SQL Server" and "SOC 2 Type II": written so within sentences.)
	names = namesOf(corpusPassages(t))
	for _, w := range []string{"team", "business", "forecast", "pipelines", "insights"} {
		if !slices.Contains(names, w) {
			t.Errorf("namesOf(corpus) = %q, want %q", names, w)
		}
	}
}
