package react_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/react"
	"github.com/agentgraph/agentgraph/operator"
)

// Answers that do not fit the answer tool's schema (a required field
// missing, a field of the wrong type, a field it does not have) go back to
// the model with the problems, and the run ends with the answer that fits.
func TestAnswerCheckedAgainstSchema(t *testing.T) {
	def, err := react.AnswerTool[forecast]("final_answer", "Give the forecast.")
	if err != nil {
		t.Fatal(err)
	}
	bad := []string{`{}`, `{"city":5,"temp_c":1}`, `{"city":"Oslo","temp_c":1,"wind":3}`}
	m := &scripted{reply: func(n int, req *model.Request) (*model.Response, error) {
		if n < len(bad) {
			return calls(call("b", "final_answer", bad[n])), nil
		}
		return calls(call("c", "final_answer", `{"city":"Oslo","temp_c":21}`)), nil
	}}
	ag, err := react.New(react.Config{Model: m, Answer: def})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ag.Invoke(context.Background(), react.Input("forecast"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := react.DecodeAnswer[forecast](s)
	if err != nil || f != (forecast{"Oslo", 21}) || s.Outcome != react.OutcomeAnswered || s.Iterations != 4 {
		t.Fatalf("answer %+v (%v), outcome %q, %d iterations", f, err, s.Outcome, s.Iterations)
	}
	reqs := m.requests()
	for i, want := range []string{"temp_c", "city", "wind"} {
		r := toolResults(reqs[i+1])["b"]
		if !r.IsError || !strings.Contains(r.Text(), want) {
			t.Fatalf("result of answer %s: %+v, want an error naming %s", bad[i], r, want)
		}
	}
}

// An answer tool whose hand-built schema allows fields the answer's type
// does not have: the run takes an answer with one, and DecodeAnswer
// decodes the type's fields.
func TestDecodeAnswerSchemaAllowsMore(t *testing.T) {
	def := &model.ToolDef{Name: "final_answer", Parameters: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"temp_c":{"type":"integer"}},"required":["city"]}`)}
	m := &scripted{reply: func(int, *model.Request) (*model.Response, error) {
		return calls(call("c", "final_answer", `{"city":"Oslo","temp_c":21,"wind":3}`)), nil
	}}
	ag, err := react.New(react.Config{Model: m, Answer: def})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ag.Invoke(context.Background(), react.Input("forecast"))
	if err != nil || s.Outcome != react.OutcomeAnswered {
		t.Fatalf("outcome %q, %v", s.Outcome, err)
	}
	f, err := react.DecodeAnswer[forecast](s)
	if err != nil || f != (forecast{"Oslo", 21}) {
		t.Fatalf("DecodeAnswer: %+v, %v; want the answer the schema allowed", f, err)
	}
}

// The other calls of a turn whose answer is refused are not run, and their
// results say the answer was refused, not that it was given.
func TestAnswerRefusedOtherCalls(t *testing.T) {
	def, err := react.AnswerTool[forecast]("final_answer", "Give the forecast.")
	if err != nil {
		t.Fatal(err)
	}
	m := &scripted{reply: func(n int, req *model.Request) (*model.Response, error) {
		if n == 0 {
			return calls(call("s", "send", `{"to":"bob"}`), call("b", "final_answer", `{}`)), nil
		}
		return calls(call("c", "final_answer", `{"city":"Oslo","temp_c":21}`)), nil
	}}
	tool := newRecordTool()
	ag, err := react.New(react.Config{Model: m, Answer: def, Tools: []operator.Tool{tool}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ag.Invoke(context.Background(), react.Input("forecast")); err != nil {
		t.Fatal(err)
	}
	r := toolResults(m.requests()[1])["s"]
	if !r.IsError || !strings.Contains(r.Text(), "was refused") || strings.Contains(r.Text(), "was given") {
		t.Fatalf("result of the other call: %+v, want one saying the answer was refused", r)
	}
	if ran := tool.ran(); len(ran) != 0 {
		t.Fatalf("send ran %q", ran)
	}
}

// With Config.Answer, a reply in text goes back to the model with a
// reminder to call the answer tool; a model that never does ends the run
// at the iteration limit with OutcomeNoAnswer, which DecodeAnswer names.
func TestAnswerAfterTextReply(t *testing.T) {
	def, err := react.AnswerTool[forecast]("final_answer", "Give the forecast.")
	if err != nil {
		t.Fatal(err)
	}
	m := &scripted{reply: func(n int, req *model.Request) (*model.Response, error) {
		if n == 0 {
			return answer("It is 21 in Oslo."), nil
		}
		return calls(call("c", "final_answer", `{"city":"Oslo","temp_c":21}`)), nil
	}}
	ag, err := react.New(react.Config{Model: m, Answer: def})
	if err != nil {
		t.Fatal(err)
	}
	s, err := ag.Invoke(context.Background(), react.Input("forecast"))
	if err != nil {
		t.Fatal(err)
	}
	if f, err := react.DecodeAnswer[forecast](s); err != nil || f.City != "Oslo" || s.Iterations != 2 {
		t.Fatalf("answer %+v (%v), %d iterations", f, err, s.Iterations)
	}
	last := m.requests()[1].Messages
	if r := last[len(last)-1]; r.Role != model.RoleUser || !strings.Contains(r.Text(), "final_answer") {
		t.Fatalf("second request ends with %+v, want the reminder", r)
	}

	text := &scripted{reply: func(int, *model.Request) (*model.Response, error) { return answer("plain"), nil }}
	ag, err = react.New(react.Config{Model: text, Answer: def, MaxIterations: 3})
	if err != nil {
		t.Fatal(err)
	}
	s, err = ag.Invoke(context.Background(), react.Input("forecast"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Outcome != react.OutcomeNoAnswer || s.Iterations != 3 || len(text.requests()) != 3 {
		t.Fatalf("outcome %q, %d iterations, %d model calls", s.Outcome, s.Iterations, len(text.requests()))
	}
	if _, err := react.DecodeAnswer[forecast](s); err == nil || strings.Contains(err.Error(), "has no Config.Answer") || !strings.Contains(err.Error(), "no_answer") {
		t.Fatalf("DecodeAnswer: %v", err)
	}
}
