package react

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/internal/utf8clip"
)

// Review is the payload of the interrupt that pauses a run for approval:
// the calls of the model's turn that need a person's [Decision]. Read it
// from [graph.InterruptInfo.Decode] (or the payload of a
// [graph.InterruptError]).
type Review struct {
	// Calls are the proposed calls that need a decision, in call order.
	Calls []Proposal `json:"calls"`
	// Stale, when the run paused again on a resume, are the decisions of
	// that resume that no longer apply: made on the calls of an earlier
	// turn, which the model has proposed anew since (see [Decision]).
	// Decide again on Calls.
	Stale []Decision `json:"stale,omitempty"`
}

// Proposal is a call that waits for a [Decision], as the reviewer sees it:
// the call, and the fingerprint of its turn (the model's reply that
// proposed it), id, tool name and arguments. A
// decision made with [Approve], [Edit] or [Reject] carries the
// fingerprint, and applies only to the call that has it: a call proposed
// anew with other arguments or another tool under the same id is not run
// on a decision about the old one (see [Decision]).
type Proposal struct {
	model.ToolCall
	// Fingerprint identifies the call as proposed; copy it into the
	// Decision about the call.
	Fingerprint string `json:"fingerprint"`
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
//
// A decision applies to the call it was made on, the [Proposal] whose
// CallID and Fingerprint it carries, and to no other. On resume:
//
//   - a decision made on a call of an earlier turn (the model proposed
//     its calls anew since the review, as when the conversation was
//     changed under the paused thread) runs nothing: the run pauses again
//     with a [Review] of the calls proposed now, whose Stale field lists
//     the decisions that no longer apply;
//   - a decision that names a call the review does not propose, that has
//     no Fingerprint, a Fingerprint of no call of the review, or the
//     fingerprint of another call, and two decisions about one call, fail
//     the resumed run with an error naming the calls at fault and the
//     proposed ones; the thread stays paused, and a resume with right
//     decisions goes on.
type Decision struct {
	// CallID is the ToolCall.ID the decision is about.
	CallID string `json:"call_id"`
	// Fingerprint is the [Proposal.Fingerprint] of the call as the
	// reviewer saw it. Required.
	Fingerprint string `json:"fingerprint"`
	// Action is the decision.
	Action Action `json:"action"`
	// Arguments are the edited arguments, for ActionEdit.
	Arguments json.RawMessage `json:"arguments,omitempty"`
	// Message tells the model why, for ActionReject.
	Message string `json:"message,omitempty"`
}

// Approve returns the decision to run the proposed call p.
func Approve(p Proposal) Decision {
	return Decision{CallID: p.ID, Fingerprint: p.Fingerprint, Action: ActionApprove}
}

// Edit returns the decision to run the proposed call p with other
// arguments, a JSON object.
func Edit(p Proposal, arguments json.RawMessage) Decision {
	return Decision{CallID: p.ID, Fingerprint: p.Fingerprint, Action: ActionEdit, Arguments: arguments}
}

// Reject returns the decision not to run the proposed call p; the model
// reads message as the call's error result.
func Reject(p Proposal, message string) Decision {
	return Decision{CallID: p.ID, Fingerprint: p.Fingerprint, Action: ActionReject, Message: message}
}

// fingerprint returns the fingerprint of the call c of the turn whose
// reply has the message id turn: the turn's mark (see turnMark), a dot,
// and a hash of the call's id, name and canonical arguments (see
// canonical), so that arguments stored by a JSON checkpoint, which may
// escape or order them otherwise, have the fingerprint of the arguments
// the model wrote.
func fingerprint(turn string, c model.ToolCall) string {
	h := sha256.New()
	fmt.Fprintf(h, "%d:%s%d:%s", len(c.ID), c.ID, len(c.Name), c.Name)
	h.Write(canonical(c.Arguments))
	return turnMark(turn) + "." + hex.EncodeToString(h.Sum(nil)[:16])
}

// turnMark returns the part of a fingerprint that names the turn whose
// reply has the message id turn: a hash of it, in hexadecimal.
func turnMark(turn string) string {
	h := sha256.Sum256([]byte(turn))
	return hex.EncodeToString(h[:4])
}

// canonical returns the JSON value raw in one form whatever its spacing,
// key order and escapes: decoded (numbers kept as written) and encoded
// again with sorted keys and without HTML escapes. Bytes that are not
// JSON are returned as they are.
func canonical(raw json.RawMessage) []byte {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.More() {
		return raw
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return raw
	}
	return buf.Bytes()
}

// maxListed is the number of call ids an error lists.
const maxListed = 10

// idList returns the ids, quoted, at most maxListed of them.
func idList(ids []string) string {
	var b strings.Builder
	for i, id := range ids {
		if i == maxListed {
			fmt.Fprintf(&b, " and %d more", len(ids)-maxListed)
			break
		}
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%q", utf8clip.Clip(id, maxEchoedName))
	}
	return b.String()
}

// checkDecisions checks the decisions of a resume against the proposed
// calls pending of the turn whose reply has the message id turn: it
// returns the stale decisions, made on calls of an earlier turn (their
// fingerprints name another turn), and an error when the decisions do not
// fit the review (see Decision).
func checkDecisions(decisions []Decision, pending []Proposal, turn string) (stale []Decision, err error) {
	byFP := make(map[string]int, len(pending))
	byID := make(map[string]int, len(pending))
	ids := make([]string, len(pending))
	for i, p := range pending {
		byFP[p.Fingerprint] = i
		byID[p.ID] = i
		ids[i] = p.ID
	}
	mark := turnMark(turn) + "."
	var bad []string
	for _, d := range decisions {
		if _, ok := byFP[d.Fingerprint]; ok || d.Fingerprint == "" {
			continue
		}
		if m, _, ok := strings.Cut(d.Fingerprint, "."); ok && len(m)+1 == len(mark) && m+"." != mark {
			stale = append(stale, d)
			continue
		}
		bad = append(bad, d.Fingerprint)
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("react: the decisions carry the Fingerprints %s, of no call of the react.Review; the proposed calls are %s: make the decisions with react.Approve, react.Edit or react.Reject from the react.Review's Calls, or copy each Proposal's Fingerprint unchanged", idList(bad), idList(ids))
	}
	if len(stale) > 0 {
		return stale, nil
	}
	var unknown, unsigned, mismatched, twice []string
	seen := make(map[string]bool, len(decisions))
	for _, d := range decisions {
		i, ok := byID[d.CallID]
		switch {
		case !ok:
			unknown = append(unknown, d.CallID)
			continue
		case seen[d.CallID]:
			twice = append(twice, d.CallID)
		case d.Fingerprint == "":
			unsigned = append(unsigned, d.CallID)
		case d.Fingerprint != pending[i].Fingerprint:
			mismatched = append(mismatched, d.CallID)
		}
		seen[d.CallID] = true
	}
	var errs []error
	if len(unknown) > 0 {
		errs = append(errs, fmt.Errorf("react: the decisions name the calls %s, which the review does not propose; the proposed calls are %s: give one react.Decision per call of the react.Review", idList(unknown), idList(ids)))
	}
	if len(twice) > 0 {
		errs = append(errs, fmt.Errorf("react: the decisions name the calls %s more than once; give one react.Decision per call of the react.Review", idList(twice)))
	}
	if len(unsigned) > 0 {
		errs = append(errs, fmt.Errorf("react: the decisions about the calls %s have no Fingerprint; make them with react.Approve, react.Edit or react.Reject from the react.Review's Calls, or copy the Proposal's Fingerprint into Decision.Fingerprint", idList(unsigned)))
	}
	if len(mismatched) > 0 {
		errs = append(errs, fmt.Errorf("react: the decisions about the calls %s carry the Fingerprint of another proposed call; copy each call's own Proposal.Fingerprint", idList(mismatched)))
	}
	return nil, errors.Join(errs...)
}

// decide pauses for the decisions about the pending calls of the turn
// whose reply has the message id turn, and returns them once they fit the
// proposal. Decisions made on an earlier turn (stale, see Decision) are
// passed over, and the run pauses again with a review of the calls
// proposed now that lists them.
func decide(ctx context.Context, pending []Proposal, turn string) ([]Decision, error) {
	rv := Review{Calls: pending}
	for {
		decisions, err := graph.Interrupt[[]Decision](ctx, rv)
		if err != nil {
			if graph.IsInterrupt(err) || errors.Is(err, graph.ErrNoCheckpointer) {
				return nil, err
			}
			return nil, fmt.Errorf("react: the resume value of an approval is a []react.Decision, one per call of the react.Review: pass graph.Resume([]react.Decision{react.Approve(review.Calls[0])}): %w", err)
		}
		stale, err := checkDecisions(decisions, pending, turn)
		if err != nil {
			return nil, err
		}
		if len(stale) == 0 {
			return decisions, nil
		}
		rv.Stale = stale
	}
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
	var pending []Proposal
	for i, c := range calls {
		if (a.all || a.approve[c.Name]) && !a.refused(i, &c) {
			pending = append(pending, Proposal{ToolCall: c, Fingerprint: fingerprint(msg.ID, c)})
		}
	}
	decisions, err := decide(ctx, pending, msg.ID)
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
