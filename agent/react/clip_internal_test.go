package react

import (
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
)

// TestClipResultInvalidUTF8: a result's text of bytes that are not UTF-8
// (a run of continuation bytes) is cut at the limit, not backed up over
// the whole run to almost nothing.
func TestClipResultInvalidUTF8(t *testing.T) {
	text := "a" + strings.Repeat("\x80", 70)
	res := &model.ToolResult{Content: []model.Part{model.TextPart(text)}}
	clipResult(res, 64, 1<<20)
	if len(res.Content) == 0 || res.Content[0].Text != text[:64] {
		t.Fatalf("clipResult kept %q, want the first 64 bytes", res.Content[0].Text)
	}
}
