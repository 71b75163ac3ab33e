package supervisor

import (
	"context"
	"errors"
	"strings"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/supervisor/internal/wire"
)

// Verdict is the outcome of a critique, and the branch a self-correction
// loop takes after it.
type Verdict string

// The critique verdicts.
const (
	// VerdictApproved: the output is right as it is; use it.
	VerdictApproved Verdict = "APPROVED"
	// VerdictFixed: a minor flaw the reviewer corrected; use
	// Review.FixedOutput instead of the output.
	VerdictFixed Verdict = "FIXED"
	// VerdictRejected: the output is wrong or the step failed; try again
	// with Review.Feedback, or give up at the last attempt.
	VerdictRejected Verdict = "REJECTED"
)

// Review is the structured critique Critique asks the model for: the
// tri-state verdict on one output of a step.
type Review struct {
	// Verdict is the outcome.
	Verdict Verdict `json:"verdict" jsonschema:"enum=APPROVED,enum=FIXED,enum=REJECTED,description=The verdict on the output" validate:"required,oneof=APPROVED FIXED REJECTED"`
	// Critique says why, judging correctness and completeness of the
	// output for the task.
	Critique string `json:"critique" jsonschema:"description=Why: correctness and completeness of the output for the task" validate:"required"`
	// FixedOutput is the corrected output, for FIXED.
	FixedOutput string `json:"fixed_output,omitempty" jsonschema:"description=The corrected output (FIXED only)"`
	// Feedback says what the next attempt must change, for REJECTED.
	Feedback string `json:"feedback,omitempty" jsonschema:"description=What the next attempt must change (REJECTED only)"`
}

// Validate requires fixed_output for FIXED and feedback for REJECTED.
func (r Review) Validate() error {
	switch r.Verdict {
	case VerdictFixed:
		return requiredText("fixed_output", r.FixedOutput, "verdict is FIXED: give the corrected output")
	case VerdictRejected:
		return requiredText("feedback", r.Feedback, "verdict is REJECTED: say what the next attempt must change")
	}
	return nil
}

// CritiqueInput is what Critique shows the model: one attempt at a step.
type CritiqueInput struct {
	// Task is what the step was asked to do. Required.
	Task string
	// Call is what produced the output, such as a tool's name and its
	// JSON arguments. Optional.
	Call string
	// Output is the step's output.
	Output string
	// Error is the step's failure, such as the tool's error; empty when it
	// succeeded.
	Error string
	// Attempt numbers the attempt from 1; zero means 1.
	Attempt int
	// MaxAttempts caps the attempts; zero means Attempt, so the model is
	// told that a rejection ends the step.
	MaxAttempts int
}

// Failed reports whether the attempt failed: it has an Error, or no
// Output.
func (in CritiqueInput) Failed() bool {
	return in.Error != "" || strings.TrimSpace(in.Output) == ""
}

// FallbackReview is the review the step's status alone supports, which
// Critique returns (with Result.Fallback set) when the model gives no valid
// verdict: APPROVED when the attempt succeeded, REJECTED with the error as
// feedback when it failed (see CritiqueInput.Failed).
func FallbackReview(in CritiqueInput) Review {
	if !in.Failed() {
		return Review{Verdict: VerdictApproved, Critique: "No valid critique; the step succeeded."}
	}
	return Review{Verdict: VerdictRejected, Critique: "No valid critique; the step failed.", Feedback: failureFeedback(in)}
}

// failureFeedback says how the attempt failed, for a rejection.
func failureFeedback(in CritiqueInput) string {
	if in.Error != "" {
		return "The step failed: " + in.Error
	}
	return "The step returned nothing."
}

// Critique asks the model to review one output of a step, the
// self-correction step of an agent loop: APPROVED keeps the output, FIXED
// replaces it with Review.FixedOutput, and REJECTED asks for another
// attempt with Review.Feedback.
//
// An invalid reply, such as FIXED without the fixed output, is fed back and
// asked again. A failed attempt (CritiqueInput.Failed) is never approved or
// fixed: any other verdict becomes REJECTED with the error as feedback.
// When no attempt gives a valid verdict, Critique returns
// FallbackReview(in), with Fallback set, and a nil error, so the loop goes
// on.
func Critique(ctx context.Context, m model.Model, in CritiqueInput, opts ...agent.Option) (Result[Review], error) {
	if strings.TrimSpace(in.Task) == "" {
		return Result[Review]{}, errors.New("supervisor: Critique: CritiqueInput.Task is empty; pass what the step was asked to do")
	}
	if in.Attempt <= 0 {
		in.Attempt = 1
	}
	if in.MaxAttempts < in.Attempt {
		in.MaxAttempts = in.Attempt
	}
	prompt, err := render(wire.Prompt{Step: wire.Critique, Task: in.Task, Call: in.Call, Output: in.Output, Error: in.Error,
		Attempt: in.Attempt, MaxAttempts: in.MaxAttempts})
	if err != nil {
		return Result[Review]{}, err
	}
	out, err := call(ctx, m, prompt, withSystem(critiqueSystem, opts), func(*agent.StructuredOutputError) Review { return FallbackReview(in) })
	if err != nil && ctx.Err() != nil {
		return out, ctx.Err()
	}
	if err != nil || out.Fallback {
		return out, err
	}
	if r := out.Value; r.Verdict != VerdictRejected && in.Failed() {
		out.Value = Review{Verdict: VerdictRejected, Critique: "The step failed; " + r.Critique, Feedback: failureFeedback(in)}
	}
	return out, nil
}
