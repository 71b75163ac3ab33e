package memory_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/memory"
	"github.com/google/go-cmp/cmp"
)

func TestParseRequirement(t *testing.T) {
	for _, tc := range []struct {
		in        string
		want      memory.Requirement
		canonical string
	}{
		{"query", memory.Requirement{Source: "query"}, "query"},
		{"conversation.summary", memory.Requirement{Source: "conversation", Method: "summary"}, "conversation.summary"},
		{"conversation.recent(5)", memory.Requirement{Source: "conversation", Method: "recent", Arg: "5", HasArg: true}, "conversation.recent(5)"},
		{"  conversation.recent( 12 )\t", memory.Requirement{Source: "conversation", Method: "recent", Arg: "12", HasArg: true}, "conversation.recent(12)"},
		{"tools.schema(web_search)", memory.Requirement{Source: "tools", Method: "schema", Arg: "web_search", HasArg: true}, "tools.schema(web_search)"},
		{"tools.schema(github/search-code:v1.2@x)", memory.Requirement{Source: "tools", Method: "schema", Arg: "github/search-code:v1.2@x", HasArg: true}, "tools.schema(github/search-code:v1.2@x)"},
		{"results.step(2)", memory.Requirement{Source: "results", Method: "step", Arg: "2", HasArg: true}, "results.step(2)"},
		{"actions.this_turn", memory.Requirement{Source: "actions", Method: "this_turn"}, "actions.this_turn"},
		{"_x9._Y2", memory.Requirement{Source: "_x9", Method: "_Y2"}, "_x9._Y2"},
		{"query ", memory.Requirement{Source: "query"}, "query"},
		{"a.b ", memory.Requirement{Source: "a", Method: "b"}, "a.b"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			got, err := memory.ParseRequirement(tc.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got.String() != tc.canonical {
				t.Errorf("String() = %q, want %q", got.String(), tc.canonical)
			}
		})
	}
}

func TestParseRequirementErrors(t *testing.T) {
	for _, tc := range []struct {
		in       string
		offset   int
		expected string
	}{
		{"", 0, "a source name"},
		{"   ", 3, "a source name"},
		{"9lives", 0, "a source name"},
		{".summary", 0, "a source name"},
		{"conversation.", 13, "a method name"},
		{"conversation..summary", 13, "a method name"},
		{"conversation.5", 13, "a method name"},
		{"conversation summary", 13, `"." before a method name`},
		{"conversation-summary", 12, `"." before a method name`},
		{"query(1)", 5, `"." before a method name`},
		{"conversation.recent(", 20, "an argument"},
		{"conversation.recent()", 20, "an argument"},
		{"conversation.recent(5", 21, `")" to close the argument`},
		{"conversation.recent(5 6)", 22, `")" to close the argument`},
		{"conversation.recent((5))", 20, "an argument"},
		{"tools.schema(web search)", 17, `")" to close the argument`},
		{"tools.schema(a,b)", 14, `")" to close the argument`},
		{"conversation.recent(5))", 22, `the end of the requirement`},
		{"conversation.recent(5) x", 23, `the end of the requirement`},
		{"conversation.recent 5", 20, `"(" before an argument`},
		{"conversation.rëcent(5)", 14, `"(" before an argument`},
		{"a.b.c", 3, `"(" before an argument`},
		{"tools.schema(名前)", 13, "an argument"},
	} {
		t.Run(tc.in, func(t *testing.T) {
			_, err := memory.ParseRequirement(tc.in)
			var se *memory.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %v, want a *SyntaxError", err)
			}
			if se.Offset != tc.offset || !strings.Contains(se.Expected, tc.expected) || se.Requirement != tc.in {
				t.Errorf("SyntaxError{Offset: %d, Expected: %q, Requirement: %q}, want offset %d expecting %q", se.Offset, se.Expected, se.Requirement, tc.offset, tc.expected)
			}
			msg := err.Error()
			for _, want := range []string{"memory: bad requirement", "at byte", "expected", "source.method(argument)"} {
				if !strings.Contains(msg, want) {
					t.Errorf("message %q lacks %q", msg, want)
				}
			}
		})
	}
}

func TestSyntaxErrorNamesWhatItFound(t *testing.T) {
	for _, tc := range []struct{ in, found string }{
		{"conversation.recent(5", "found end of input"},
		{"conversation-summary", "found '-'"},
		{"tools.schema(名前)", "found '名'"},
		{"tools.schema(\xff)", "found byte 0xff"},
	} {
		_, err := memory.ParseRequirement(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.found) {
			t.Errorf("ParseRequirement(%q): %v, want it to say %q", tc.in, err, tc.found)
		}
	}
}

// FuzzParseRequirement checks that the parser never panics, that errors
// point inside the input, and that accepted requirements round-trip through
// their canonical form. The seed corpus is in testdata/fuzz.
func FuzzParseRequirement(f *testing.F) {
	for _, s := range []string{
		"query", "conversation.recent(5)", "conversation.summary", "tools.summaries",
		"tools.schema(web_search)", "results.step(step_2)", "results.all", "actions.this_turn",
		" a . b ", "a.b( c )", "a.b(", "a.b(c", "a.b(c))", "(", ")", ".", "", "\x00", "é.é(é)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, err := memory.ParseRequirement(s)
		if err != nil {
			var se *memory.SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("ParseRequirement(%q): %T %v, want a *SyntaxError", s, err, err)
			}
			if se.Offset < 0 || se.Offset > len(s) || se.Requirement != s || se.Expected == "" {
				t.Fatalf("ParseRequirement(%q): bad SyntaxError %+v", s, se)
			}
			_ = se.Error()
			return
		}
		if r.Source == "" || (r.HasArg && (r.Method == "" || r.Arg == "")) || (!r.HasArg && r.Arg != "") {
			t.Fatalf("ParseRequirement(%q) = %+v: inconsistent", s, r)
		}
		again, err := memory.ParseRequirement(r.String())
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", r.String(), s, err)
		}
		if again != r {
			t.Fatalf("round trip of %q: %+v, then %+v", s, r, again)
		}
	})
}
