package provider

import (
	"bytes"
	"io"
	"strings"
	"testing"
)

// toolCallLine returns a "data:" line of an OpenAI stream with one
// tool-call piece of the given index, id and arguments (JSON text, written
// in the JSON string as it is).
func toolCallLine(index, id, args string) string {
	return "data: {\"choices\":[{\"delta\":{\"tool_calls\":[{\"index\":" + index + ",\"id\":\"" + id +
		"\",\"type\":\"function\",\"function\":{\"name\":\"f\",\"arguments\":\"" + args + "\"}}]}}]}\n"
}

// The body marks the tool-call pieces of "data:" lines and passes every
// other line on byte for byte, also tool-call lines too long to mark.
func TestIndexBodyMarksToolCallLines(t *testing.T) {
	text := "data: {\"choices\":[{\"delta\":{\"content\":\"hi\"}}]}\n"
	call := toolCallLine("3", "c", "")
	long := toolCallLine("4", "d", strings.Repeat("x", 2*maxMarkedLine))
	in := text + "\n" + call + long + call + "data: [DONE]\n"
	body := &indexBody{body: io.NopCloser(strings.NewReader(in)), src: nil}
	body.src = newIndexReader(body.body)
	out, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(out), "\n")
	if len(lines) != 7 || lines[0] != text || lines[1] != "\n" || lines[3] != long || lines[5] != "data: [DONE]\n" {
		t.Fatalf("lines changed: %.200q", lines)
	}
	for _, l := range []string{lines[2], lines[4]} {
		if !bytes.Contains([]byte(l), []byte(`"id":"\u0000agentgraph-index:3\u0000c"`)) {
			t.Fatalf("tool-call line not marked: %q", l)
		}
	}
}

// Marking adds only the mark: '<', '>' and '&' stay one byte each. A line
// that marking would make longer than langchaingo reads is passed on as it
// is.
func TestMarkLineKeepsLinesReadable(t *testing.T) {
	html := toolCallLine("0", "a", strings.Repeat("<&>", 5000))
	marked := markLine([]byte(html))
	if !bytes.Contains(marked, []byte(`agentgraph-index:0`)) || !bytes.Contains(marked, []byte(strings.Repeat("<&>", 5000))) {
		t.Fatalf("line not marked, or its arguments escaped: %.300q", marked)
	}
	if grown := len(marked) - len(html); grown > 40 {
		t.Fatalf("marking made the line %d bytes longer", grown)
	}

	pad := maxMarkedLine - len(toolCallLine("1", "b", ""))
	full := toolCallLine("1", "b", strings.Repeat("y", pad))
	if len(full) != maxMarkedLine {
		t.Fatalf("the line is %d bytes, want %d", len(full), maxMarkedLine)
	}
	if got := markLine([]byte(full)); string(got) != full {
		t.Fatalf("a line at the limit was changed to %d bytes", len(got))
	}
}
