package react

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/graph"
)

// Review is the payload of the interrupt that pauses a run for approval:
// the calls of the model's turn that need a person's [Decision]. Read it
// from [graph.InterruptInfo.Decode] (or the payload of a
// [graph.InterruptError]).
type Review struct {
	// Calls are the proposed calls that need a decision, in call order.
	Calls []model.ToolCall `json:"calls"`
}

// Action is what a reviewer decides about one call.
type Action string

// The actions of a [Decision].
const (
	// ActionApprove runs the call as the model wrote it.
	ActionApprove Action = "approve"
	// ActionEdit runs the call with Decision.Arguments instead; the
	// conversation keeps the edited call. Arguments that are not valid
	// JSON or are over Config.MaxArgumentBytes fail the resumed run with an
	// error, and the run stays paused for other decisions.
	ActionEdit Action = "edit"
	// ActionReject does not run the call; the model reads
	// Decision.Message as its error result.
	ActionReject Action = "reject"
)

// Decision is a reviewer's answer about one proposed call. Resume a paused
// run with graph.Resume([]react.Decision{...}), one per call of the
// [Review]; a call without a decision is rejected.
type Decision struct {
	// CallID is the ToolCall.ID the decision is about.
	CallID string `json:"call_id"`
	// Action is the decision.
	Action Action `json:"action"`
	// Arguments are the edited arguments, for ActionEdit.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Message tells the model why, for ActionReject.
	Message string `json:"message,omitempty"`
}

// Approve returns the decision to run the call with the given id.
func Approve(callID string) Decision { return Decision{CallID: callID, Action: ActionApprove} }

// Edit returns the decision to run the call with the given id with other
// arguments, a JSON object.
func Edit(callID string, arguments json.RawMessage) Decision {
	return Decision{CallID: callID, Action: ActionEdit, Arguments: arguments}
}

// Reject returns the decision not to run the call with the given id; the
// model reads message as the call's error result.
func Reject(callID, message string) Decision {
	return Decision{CallID: callID, Action: ActionReject, Message: message}
}

// review pauses for the decisions on the calls that need approval, then
// sends every call of the turn to the tools node in call order: approved
// and edited calls to run, rejected ones with their message.
func (a *agent) review(ctx context.Context, s State) (graph.Update[State], error) {
	msg, ok := s.Messages.Last()
	if !ok || msg.Role != model.RoleAssistant {
		return graph.Update[State]{}, fmt.Errorf("react: the approve node found no assistant message with tool calls at the end of the conversation")
	}
	calls := msg.ToolCalls()
	var pending []model.ToolCall
	for i, c := range calls {
		if (a.all || a.approve[c.Name]) && !a.refused(i, &c) {
			pending = append(pending, c)
		}
	}
	decisions, err := graph.Interrupt[[]Decision](ctx, Review{Calls: pending})
	if err != nil {
		return graph.Update[State]{}, err
	}
	byID := make(map[string]Decision, len(decisions))
	for _, d := range decisions {
		byID[d.CallID] = d
	}
	var u graph.Update[State]
	edited := false
	sends := make([]graph.Send, len(calls))
	for i, c := range calls {
		task := &call{Call: c}
		switch {
		case a.refused(i, &c):
			task.Rejected = a.refusal(i, len(calls), &c)
		case a.all || a.approve[c.Name]:
			d, ok := byID[c.ID]
			switch {
			case !ok:
				task.Rejected = "not run: the reviewer gave no decision about this call"
			case d.Action == ActionApprove:
			case d.Action == ActionEdit:
				if !json.Valid(d.Arguments) {
					return u, fmt.Errorf("react: the edit of call %q (%s) has arguments that are not valid JSON: %q", c.ID, c.Name, d.Arguments)
				}
				if len(d.Arguments) > a.maxArgs {
					return u, fmt.Errorf("react: the edit of call %q (%s) has arguments of %d bytes, over the limit of %d bytes (react.Config.MaxArgumentBytes); resume with smaller arguments, or reject the call", c.ID, c.Name, len(d.Arguments), a.maxArgs)
				}
				task.Call.Arguments = d.Arguments
				edited = true
			case d.Action == ActionReject:
				task.Rejected = d.Message
				if task.Rejected == "" {
					task.Rejected = "not run: the reviewer rejected this call"
				}
			default:
				return u, fmt.Errorf("react: the decision about call %q (%s) has action %q; use react.Approve, react.Edit or react.Reject", c.ID, c.Name, d.Action)
			}
		}
		sends[i] = a.tasks.Send(task)
	}
	if edited {
		// Keep the calls as run in the conversation: replace the message.
		out := msg
		out.Parts = make([]model.Part, len(msg.Parts))
		copy(out.Parts, msg.Parts)
		k := -1 // the index of the call among the message's calls
		for i, p := range out.Parts {
			if p.Kind != model.PartToolCall || p.ToolCall == nil {
				continue
			}
			k++
			if d, ok := byID[p.ToolCall.ID]; ok && d.Action == ActionEdit && (a.all || a.approve[p.ToolCall.Name]) && !a.refused(k, p.ToolCall) {
				tc := *p.ToolCall
				tc.Arguments = d.Arguments
				out.Parts[i].ToolCall = &tc
			}
		}
		u = MessagesField.Set(model.Messages{out})
	}
	return u.Send(sends...), nil
}
