package workflow

import (
	"encoding/json"
	"time"

	"github.com/agentgraph/agentgraph/operator"
)

// stepJSON is the JSON form of a StepResult: the error as its message.
type stepJSON struct {
	ID       string           `json:"id"`
	Name     string           `json:"name,omitempty"`
	Operator string           `json:"operator"`
	Number   int              `json:"number"`
	Status   Status           `json:"status"`
	Output   any              `json:"output,omitempty"`
	Result   *operator.Result `json:"result,omitempty"`
	Inputs   map[string]any   `json:"inputs,omitempty"`
	Query    string           `json:"query,omitempty"`
	Error    string           `json:"error,omitempty"`
	Duration time.Duration    `json:"duration"`
}

// MarshalJSON encodes the result with its error as a message, so a
// workflow's state can be checkpointed and sent to clients.
func (r StepResult) MarshalJSON() ([]byte, error) {
	j := stepJSON{ID: r.ID, Name: r.Name, Operator: r.Operator, Number: r.Number, Status: r.Status,
		Output: r.Output, Result: r.Result, Inputs: r.Inputs, Query: r.Query, Duration: r.Duration}
	if r.Err != nil {
		j.Error = r.Err.Error()
	}
	return json.Marshal(j)
}

// UnmarshalJSON decodes what MarshalJSON wrote. The error comes back as a
// [*DecodedError] holding its message (and, for a skipped step, matching
// ErrSkipped).
func (r *StepResult) UnmarshalJSON(b []byte) error {
	var j stepJSON
	if err := json.Unmarshal(b, &j); err != nil {
		return err
	}
	*r = StepResult{ID: j.ID, Name: j.Name, Operator: j.Operator, Number: j.Number, Status: j.Status,
		Output: j.Output, Result: j.Result, Inputs: j.Inputs, Query: j.Query, Duration: j.Duration}
	if j.Error != "" {
		r.Err = &DecodedError{Message: j.Error, Skipped: j.Status == Skipped}
	}
	return nil
}

// DecodedError is a step's error restored from JSON: its message survives,
// its Go type does not.
type DecodedError struct {
	Message string
	Skipped bool
}

// Error describes the problem.
func (e *DecodedError) Error() string { return e.Message }

// Is reports whether target is ErrSkipped for a skipped step's error.
func (e *DecodedError) Is(target error) bool { return e.Skipped && target == ErrSkipped }
