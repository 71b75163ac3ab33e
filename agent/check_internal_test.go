package agent

import (
	"reflect"
	"testing"

	"github.com/agentgraph/agentgraph/internal/schemacheck"
)

type qDecision struct {
	Action    string           `json:"action" jsonschema:"enum=ANSWER,enum=CALL_TOOL,enum=CLARIFY"`
	Reasoning string           `json:"reasoning" validate:"required"`
	Operator  string           `json:"operator,omitempty"`
	Params    map[string]any   `json:"params,omitempty"`
	Steps     []map[string]any `json:"steps,omitempty"`
	Extra     any              `json:"extra,omitempty"`
}

func (d qDecision) Validate() error {
	if d.Action == "CALL_TOOL" && d.Operator == "" {
		return &FieldError{Field: "operator", Message: "operator is required when action is CALL_TOOL"}
	}
	return nil
}

type qStep struct {
	Tool  string            `json:"tool" jsonschema:"minLength=1,maxLength=12"`
	Input map[string]string `json:"input,omitempty"`
	N     int               `json:"n,omitempty" jsonschema:"minimum=1"`
	U     uint8             `json:"u,omitempty"`
	F32   float32           `json:"f32,omitempty"`
	Flag  *bool             `json:"flag,omitempty"`
	Tags  []string          `json:"tags,omitempty" jsonschema:"maxItems=3"`
}

type qPlan struct {
	Goal  string  `json:"goal" validate:"min=2"`
	Steps []qStep `json:"steps" jsonschema:"minItems=1" validate:"dive"`
	Score float64 `json:"score" jsonschema:"minimum=0,exclusiveMaximum=1"`
	Next  *qStep  `json:"next,omitempty"`
	Pair  [2]int  `json:"pair,omitempty"`
}

type qTask struct {
	ID   int    `json:"id"`
	Goal string `json:"goal"`
}

type qKey string

type qKeyed struct {
	M   map[qKey]int `json:"m"`
	Arr [2]string    `json:"arr,omitempty"`
	Any any          `json:"any,omitempty"`
	P   **int        `json:"p,omitempty"`
	Sub []*qTask     `json:"sub,omitempty"`
}

type qValuer struct{ v string }

func (q qValuer) ValidatorValue() any { return q.v }

type qNested struct {
	Inner struct {
		Name string `json:"name" validate:"required"`
	} `json:"inner"`
}

// TestHasValidateTags checks which types the tag validator is run for.
func TestHasValidateTags(t *testing.T) {
	for _, tt := range []struct {
		typ  reflect.Type
		want bool
	}{
		{reflect.TypeFor[qDecision](), true},
		{reflect.TypeFor[qPlan](), true},
		{reflect.TypeFor[qNested](), true},
		{reflect.TypeFor[*qNested](), true},
		{reflect.TypeFor[struct{ V qValuer }](), true},
		{reflect.TypeFor[qTask](), false},
		{reflect.TypeFor[*qTask](), false},
		{reflect.TypeFor[qKeyed](), false},
		{reflect.TypeFor[struct{ E error }](), true},
	} {
		if got := schemacheck.HasValidateTags(tt.typ); got != tt.want {
			t.Errorf("%v: hasValidateTags = %v, want %v", tt.typ, got, tt.want)
		}
	}
}
