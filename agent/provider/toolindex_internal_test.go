package provider

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// The body marks the tool-call pieces of "data:" lines and passes every
// other line on byte for byte, also lines too long to mark.
func TestIndexBodyMarksToolCallLines(t *testing.T) {
	text := "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n"
	call := "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":3,\"id\":\"c\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"\"}}]}}]}\n"
	long := "data: {\"tool_calls\":\"" + strings.Repeat("x", 2*maxMarkedLine) + "\"}\n"
	in := text + "\n" + call + long + call + "data: [DONE]\n"
	body := &indexBody{body: io.NopCloser(strings.NewReader(in)), src: nil}
	body.src = newIndexReader(body.body)
	out, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(out), "\n")
	if len(lines) != 7 || lines[0] != text || lines[1] != "\n" || lines[3] != long || lines[5] != "data: [DONE]\n" {
		t.Fatalf("lines changed: %q", lines)
	}
	for _, l := range []string{lines[2], lines[4]} {
		if !bytes.Contains([]byte(l), []byte(`"id":"\u0000agentgraph-index:3\u0000c"`)) {
			t.Fatalf("tool-call line not marked: %q", l)
		}
	}
}
