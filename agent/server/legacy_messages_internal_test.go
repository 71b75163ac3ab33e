package server

import (
	"testing"
)

// A legacy messages/partial reply merges the pieces of a tool call by the
// index the model gives, whatever the number (not as a position, which
// would allocate a call per number below it), and gives a call whose
// arguments are whole JSON as tool_calls, the rest as invalid_tool_calls.
func TestLegacyPartialMergesToolCallsByIndex(t *testing.T) {
	l := newStreamedMessages(true, false)
	var last map[string]any
	emit := func(name string, data any) error {
		if name == "messages/partial" {
			last = data.([]any)[0].(map[string]any)
		}
		return nil
	}
	piece := func(idx int, id, name, args string) map[string]any {
		return map[string]any{"id": "run-1", "content": "", "tool_call_chunks": []any{map[string]any{"index": idx, "id": nilIfEmpty(id), "name": nilIfEmpty(name), "args": args}}}
	}
	const big = 1 << 40
	for _, c := range []map[string]any{piece(big, "call-1", "search", `{"q":`), piece(7, "call-2", "add", `{"a":1`), piece(big, "", "", `"go"}`)} {
		if err := l.chunk(c, map[string]any{}, emit); err != nil {
			t.Fatal(err)
		}
	}
	calls, _ := last["tool_calls"].([]any)
	invalid, _ := last["invalid_tool_calls"].([]any)
	if len(calls) != 1 || len(invalid) != 1 {
		t.Fatalf("partial %v; want one whole call and one not yet whole", last)
	}
	c := calls[0].(map[string]any)
	if c["id"] != "call-1" || c["name"] != "search" || c["args"].(map[string]any)["q"] != "go" {
		t.Errorf("tool call %v; want call-1 search {q: go}", c)
	}
	if in := invalid[0].(map[string]any); in["id"] != "call-2" || in["args"] != `{"a":1` {
		t.Errorf("invalid tool call %v; want call-2 with its arguments so far", in)
	}
}
