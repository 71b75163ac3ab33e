package react

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/invopop/jsonschema"

	"github.com/agentgraph/agentgraph/agent/model"
)

// AnswerTool returns the definition of a tool whose arguments are a T, for
// [Config.Answer]: the model gives its final answer by calling it. The
// schema is inferred from T's fields and their json and jsonschema tags
// (github.com/invopop/jsonschema); T must be a struct.
func AnswerTool[T any](name, description string) (*model.ToolDef, error) {
	var zero T
	r := &jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true}
	s := r.Reflect(&zero)
	if s.Type != "object" {
		return nil, fmt.Errorf("react: AnswerTool needs a struct type, got %T", zero)
	}
	s.Version = ""
	schema, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("react: the schema of %T: %w", zero, err)
	}
	return &model.ToolDef{Name: name, Description: description, Parameters: schema}, nil
}

// DecodeAnswer decodes the structured answer of a run of an agent with
// [Config.Answer] into a T. The run took the answer only once it fit the
// answer tool's schema; fields that schema allows and T does not have are
// not decoded, as with [json.Unmarshal]. A schema made by [AnswerTool]
// for T allows no others, so that with it every field of the answer is
// T's. A run that ended without an answer ([OutcomeNoAnswer],
// [OutcomeIterationLimit]) is an error saying so.
func DecodeAnswer[T any](s State) (T, error) {
	var v T
	if len(s.Answer) == 0 {
		switch s.Outcome {
		case OutcomeAnswered:
			return v, errors.New("react: no structured answer: the run ended with a reply in text and no answer; an agent gives one only with Config.Answer set")
		case OutcomeNoAnswer:
			return v, errors.New("react: no answer: the model replied in text without calling the answer tool (Config.Answer), up to its limit of model calls (Config.MaxIterations); the run's outcome is \"no_answer\"")
		}
		return v, fmt.Errorf("react: no answer: the run's outcome is %q", s.Outcome)
	}
	if err := json.Unmarshal(s.Answer, &v); err != nil {
		return v, fmt.Errorf("react: decoding the answer into %T: %w", v, err)
	}
	return v, nil
}
