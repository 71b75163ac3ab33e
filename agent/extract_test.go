package agent_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
)

func TestExtractJSON(t *testing.T) {
	tests := []struct {
		name, in, want string
		ok             bool
	}{
		{"bare object", `{"a": 1}`, `{"a": 1}`, true},
		{"prose around object", `I'll help with that. Here's my decision: {"action": "ANSWER"} Hope it helps!`, `{"action": "ANSWER"}`, true},
		{"json fence", "Sure:\n```json\n{\"a\": [1, 2]}\n```\nDone.", `{"a": [1, 2]}`, true},
		{"plain fence", "```\n{\"a\": true}\n```", `{"a": true}`, true},
		{"fence on one line", "```{\"a\": 1}```", `{"a": 1}`, true},
		{"second fence holds the JSON", "```go\nfmt.Println()\n```\nthen\n```json\n{\"b\": 2}\n```", `{"b": 2}`, true},
		{"code fence with braces is skipped", "```go\nm := map[string]int{}\n```\n```json\n{\"b\": 2}\n```", `{"b": 2}`, true},
		{"array", `The steps are [{"id": 1}, {"id": 2}].`, `[{"id": 1}, {"id": 2}]`, true},
		{"braces in strings", `Answer: {"text": "use } and { freely", "n": "\"}"} end`, `{"text": "use } and { freely", "n": "\"}"}`, true},
		{"nested", `x {"a": {"b": {"c": [1, {"d": "}"}]}}} y`, `{"a": {"b": {"c": [1, {"d": "}"}]}}}`, true},
		{"prose brackets before the JSON", `See [1] and {this}. Result: {"ok": true}`, `{"ok": true}`, true},
		{"escaped quote before brace", `{"a": "\\", "b": "}"}`, `{"a": "\\", "b": "}"}`, true},
		{"unicode", `Résultat : {"mot": "café ☕"}`, `{"mot": "café ☕"}`, true},
		{"scalar", `42`, `42`, true},
		{"truncated object", `Here: {"action": "CALL_TOOL", "reasoning": "x`, `{"action": "CALL_TOOL", "reasoning": "x`, false},
		{"unquoted keys", `decision: {action: CALL_TOOL}`, `{action: CALL_TOOL}`, false},
		{"no JSON", `  I cannot answer that.  `, `I cannot answer that.`, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := agent.ExtractJSON(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("ExtractJSON(%q) = %q, %v; want %q, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// FuzzExtractJSON checks two properties: whatever is returned as found is
// valid JSON taken from the input, and a JSON object embedded in prose
// without brackets or fences is always recovered exactly.
func FuzzExtractJSON(f *testing.F) {
	f.Add("Here you go: ", `{"a": "}{", "b": [1, 2, {"c": null}]}`, " thanks")
	f.Add("```json\n", `{"x": "\"\\"}`, "\n```")
	f.Add("", `[{"id": 1}]`, "")
	f.Add("prose", `{}`, "more prose")
	f.Fuzz(func(t *testing.T, prefix, value, suffix string) {
		in := prefix + value + suffix
		got, ok := agent.ExtractJSON(in)
		if ok {
			if !json.Valid([]byte(got)) {
				t.Fatalf("ExtractJSON(%q) = %q, reported found but not valid JSON", in, got)
			}
			if !strings.Contains(in, got) {
				t.Fatalf("ExtractJSON(%q) = %q, not a part of the input", in, got)
			}
		}
		var obj map[string]any
		if json.Unmarshal([]byte(value), &obj) != nil || strings.TrimSpace(value) != value || !strings.HasPrefix(value, "{") {
			return
		}
		if strings.ContainsAny(prefix+suffix, "{}[]`\"") {
			return
		}
		if !ok || got != value {
			t.Fatalf("ExtractJSON(%q) = %q, %v; want the embedded object %q", in, got, ok, value)
		}
	})
}

// FuzzCallReply feeds arbitrary replies to Call: it must never panic, every
// failure must be a *StructuredOutputError with a known kind, and every
// accepted value must satisfy the schema's enum and the Validate rule.
func FuzzCallReply(f *testing.F) {
	f.Add(`{"action": "ANSWER", "reasoning": "r"}`)
	f.Add("```json\n{\"action\": \"CALL_TOOL\", \"reasoning\": \"r\", \"operator\": \"x\"}\n```")
	f.Add(`I'll help: {action: CALL_TOOL...`)
	f.Add(`[{"action": "CLARIFY", "reasoning": "?"}]`)
	m := llmtest.New()
	c, err := agent.New(agent.Config{Model: m})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, reply string) {
		m.Add(llmtest.Text(reply))
		res, err := agent.Call[SupervisorDecision](context.Background(), c, "q", agent.WithMaxAttempts(1))
		if err != nil {
			var se *agent.StructuredOutputError
			if !errors.As(err, &se) || len(se.Attempts) != 1 ||
				(se.Attempts[0].Kind != agent.FailureJSONParse && se.Attempts[0].Kind != agent.FailureSchemaValidation) {
				t.Fatalf("reply %q: err = %v", reply, err)
			}
			return
		}
		switch res.Value.Action {
		case "ANSWER", "CALL_TOOL", "CREATE_WORKFLOW", "CLARIFY":
		default:
			t.Fatalf("reply %q accepted with action %q", reply, res.Value.Action)
		}
		if res.Value.Reasoning == "" || (res.Value.Action == "CALL_TOOL" && res.Value.Operator == "") {
			t.Fatalf("reply %q accepted as %+v", reply, res.Value)
		}
	})
}
