package oneline_test

import (
	"testing"

	"github.com/agentgraph/agentgraph/internal/oneline"
)

// TestCheck: path separators are refused only when asked; the first
// character that is not seen on one line is named at its byte offset.
func TestCheck(t *testing.T) {
	for _, tc := range []struct {
		s     string
		paths bool
		at    int
		what  string
	}{
		{"a/b", false, 0, ""},
		{"a/b", true, 1, `a path separator '/'`},
		{"ok\nno", false, 2, "the control character U+000A"},
		{"é\u202e", false, 2, "the invisible character U+202E"},
		{"👩\u200d💻", false, 0, ""},
		{"\u200dx", false, 0, "the joiner U+200D"},
		{"\U0001f3f4\U000e0067", false, 8, "the end of an emoji tag sequence"},
	} {
		at, what, _ := oneline.Check(tc.s, tc.paths)
		if what != tc.what || what != "" && at != tc.at {
			t.Errorf("Check(%q, %v) = %d %q; want %d %q", tc.s, tc.paths, at, what, tc.at, tc.what)
		}
	}
}
