package workflow

import "encoding/json"

// The reports of a run, given to the [operator.Env]'s Reporter and
// streamed as the graph's custom events (graph.Emit), in this order: a
// [RunStart], then for each step a [StepStart] and a [StepEnd] (a skipped
// step has only its StepEnd; steps of one wave overlap), then a [RunEnd].
// The tools a step's operator calls are reported between its StepStart and
// StepEnd, as the operator package reports them.

// RunStart reports that a run of a plan starts.
type RunStart struct {
	Goal string `json:"goal"`
	// Steps is the number of steps in the plan.
	Steps int `json:"steps"`
}

// StepStart reports that a step starts running its operator. A step that
// runs again (a retry of the run, a resumed question) reports it again.
type StepStart struct {
	// Step is the step's number in the plan, from 1.
	Step     int    `json:"step"`
	ID       string `json:"id"`
	Name     string `json:"name"`
	Operator string `json:"operator"`
}

// StepEnd reports a step's outcome.
type StepEnd struct {
	Step     int    `json:"step"`
	ID       string `json:"id"`
	Operator string `json:"operator"`
	// Status is Succeeded, Failed (Err is the operator's error) or
	// Skipped (Err is a [*SkipError] naming the dependency that did not
	// succeed).
	Status Status `json:"status"`
	// Err is encoded in JSON as "error", its message (see MarshalJSON).
	Err error `json:"-"`
}

// MarshalJSON encodes e with its error as its message, "error", left out
// when Err is nil: an error value has no JSON form of its own.
func (e StepEnd) MarshalJSON() ([]byte, error) {
	type fields StepEnd // without the method
	out := struct {
		fields
		Error string `json:"error,omitempty"`
	}{fields: fields(e)}
	if e.Err != nil {
		out.Error = e.Err.Error()
	}
	return json.Marshal(out)
}

// RunEnd reports that every step finished.
type RunEnd struct {
	// Steps is the number of steps that ran (were not skipped).
	Steps int `json:"steps"`
}
