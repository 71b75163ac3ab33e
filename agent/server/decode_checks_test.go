package server_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/server"
)

// TestDecodeMessagesRefusesEmptyAndMalformed: DecodeMessages refuses,
// naming the path, what became an empty turn or a call no provider
// takes: null messages and blocks, messages with no content, model.Message's
// own form with an unknown role, no parts ("parts": null) or a result
// without its call id, tool calls without id or name or with one id twice,
// and arguments that are not a JSON object.
func TestDecodeMessagesRefusesEmptyAndMalformed(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`[null]`, "messages[0]: must be a message"},
		{`[{"role":"user"}]`, "messages[0].content: required"},
		{`[{"role":"user","content":[null]}]`, "messages[0].content[0]: must be a string or a block"},
		{`[{"role":"wizard","parts":[{"kind":"text","text":"x"}]}]`, `messages[0].role: "wizard"`},
		{`[{"role":"user","parts":null}]`, "messages[0].content: required"},
		{`[{"role":"user","parts":[]}]`, "messages[0].parts: required"},
		{`[{"role":"tool","parts":[{"kind":"tool_result","tool_result":{"name":"x"}}]}]`, "messages[0].parts[0].tool_result.call_id: required"},
		{`[{"type":"ai","content":"","tool_calls":[{"name":"f","args":{}}]}]`, "messages[0].tool_calls[0].id: required"},
		{`[{"type":"ai","content":"","tool_calls":[{"id":"a","name":"f","args":{}},{"id":"a","name":"g","args":{}}]}]`, `messages[0].tool_calls[1].id: "a" is the id of an earlier call`},
		{`[{"type":"ai","content":[{"type":"tool_use","name":"f","input":{}}]}]`, "messages[0].content[0]: a tool_use block needs its id and name"},
		{`[{"type":"ai","content":"","tool_calls":[{"id":"a","name":"f","args":"{oops"}]}]`, "messages[0].tool_calls[0].args: must be a JSON object"},
		{`[{"type":"ai","content":"","tool_calls":[{"id":"a","name":"f","args":5}]}]`, "messages[0].tool_calls[0].args: must be a JSON object"},
		{`[{"type":"ai","content":[{"type":"tool_use","id":"a","name":"f","input":[1]}]}]`, "messages[0].content[0].input: must be a JSON object"},
		{`[` + strings.Repeat(`"x",`, 10000) + `"x"]`, "over the limit of 10000"},
	} {
		_, err := server.DecodeMessages(json.RawMessage(c.in))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			in := c.in
			if len(in) > 80 {
				in = in[:80]
			}
			t.Errorf("DecodeMessages(%s): %v; want an error containing %q", in, err, c.want)
		}
	}
	ms, err := server.DecodeMessages(json.RawMessage(`[{"type":"remove","id":"__remove_all__"},{"type":"ai","content":"","tool_calls":[{"id":"a","name":"f","args":"{\"x\":1}"}]}]`))
	if err != nil || len(ms) != 2 || ms[0].ID != model.RemoveAll || string(ms[1].ToolCalls()[0].Arguments) != `{"x":1}` {
		t.Fatalf("REMOVE_ALL_MESSAGES and string args: %+v %v; want Remove(model.RemoveAll) and the args object", ms, err)
	}
}
