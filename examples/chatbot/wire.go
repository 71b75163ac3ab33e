package chatbot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/elicit"
	"github.com/agentgraph/agentgraph/operator/toolresult"
	"github.com/agentgraph/agentgraph/operator/workflow"
)

// wire is the one place where what the SDK packages report during a turn
// (operators, tools, MCP callbacks, workflow steps) becomes the chat
// protocol's events: it is the operator.Reporter they are given, and it
// emits on the turn's emitter, the stream the client reads.
type wire struct {
	em  *event.Emitter
	log *zap.Logger
}

// Report maps r to its chat events and emits them. A report with no chat
// form is left out of the stream and logged.
func (w wire) Report(ctx context.Context, r operator.Report) error {
	ps := toWire(r)
	if len(ps) == 0 {
		w.log.Debug("chatbot: a report with no chat event left out of the stream", zap.String("report", fmt.Sprintf("%T", r)))
	}
	for _, p := range ps {
		if err := w.em.Emit(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// toWire maps an SDK report to the chat events the client sees. MCP
// servers' reports arrive as tool reports: users see tools, not the
// servers behind them.
func toWire(r operator.Report) []event.Payload {
	switch r := r.(type) {
	case operator.ToolStart:
		return one(chatevent.ToolStart{Tool: r.Tool, Message: startMessage(r.Args)})
	case operator.ToolProgress:
		return one(chatevent.ToolProgress{Tool: r.Tool, Progress: r.Progress, Message: r.Message})
	case operator.ToolOutput:
		return one(toolContent(r.Tool, r.Content))
	case operator.ToolComplete:
		return one(chatevent.ToolComplete{Tool: r.Tool, ContentCount: r.ContentCount})
	case operator.ToolFailed:
		return one(toolError(r.Tool, r.Err))
	case operator.DirectResponse:
		return one(chatevent.DirectResponse{Operator: r.Operator, ContentType: r.ContentType, Content: r.Text})
	case operator.DirectResponseStart:
		return one(chatevent.DirectResponseStart{Operator: r.Operator, ContentType: r.ContentType})
	case operator.DirectResponseChunk:
		return one(chatevent.DirectResponseChunk{Content: r.Text})
	case operator.DirectResponseDone:
		return one(chatevent.DirectResponseDone{})
	case elicit.Request:
		return one(chatevent.ElicitationRequest{Request: r})
	case workflow.RunStart:
		return one(chatevent.WorkflowCreated{Steps: r.Steps, Goal: r.Goal})
	case workflow.StepStart:
		return one(chatevent.WorkflowStepStart{Step: r.Step, Name: r.Name})
	case workflow.StepEnd:
		done := chatevent.WorkflowStepComplete{Step: r.Step}
		switch r.Status {
		case workflow.Failed:
			// The step's operator failed: a tool error, then the step.
			done.Status, done.Error = chatevent.StepFailed, r.Err.Error()
			return []event.Payload{chatevent.ToolError{Tool: r.Operator, Error: r.Err.Error(), ErrorType: chatevent.ErrorExecution}, done}
		case workflow.Skipped:
			done.Status, done.Error = chatevent.StepSkipped, r.Err.Error()
		}
		return one(done)
	case workflow.RunEnd:
		return one(chatevent.WorkflowComplete{Steps: r.Steps})
	}
	return nil
}

func one(p event.Payload) []event.Payload { return []event.Payload{p} }

// maxStartMessage caps a tool.start message, in bytes.
const maxStartMessage = 160

// startMessage says what a tool is called with: its text, number and
// true/false arguments as "name: value", sorted by name, cut at
// maxStartMessage bytes; "Starting..." when it has none.
func startMessage(args map[string]any) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(args)) {
		switch v := args[k].(type) {
		case string, float64, int, int64, bool, json.Number:
			if b.Len() > 0 {
				b.WriteString("; ")
			}
			fmt.Fprintf(&b, "%s: %v", k, v)
		}
	}
	if b.Len() == 0 {
		return "Starting..."
	}
	return clip(b.String(), maxStartMessage)
}

// toolContent is the tool.content event of one item: text as a string,
// widgets and JSON as their value, binary data as base64; the alt text of
// an image goes in the metadata, where the seed's clients read it.
func toolContent(tool string, c toolresult.Content) chatevent.ToolContent {
	tc := chatevent.ToolContent{Tool: tool, ContentType: c.MIMEType, Metadata: c.Metadata}
	switch {
	case c.IsText():
		tc.Data = c.Text
	case c.Value != nil:
		tc.Data = c.Value
	case c.Data != "":
		tc.Data, tc.Encoding = c.Data, "base64"
	default:
		tc.Data = c.Text
	}
	if c.AltText != "" {
		tc.Metadata = maps.Clone(tc.Metadata)
		if tc.Metadata == nil {
			tc.Metadata = map[string]any{}
		}
		tc.Metadata["alt_text"] = c.AltText
	}
	return tc
}

// toolError is the tool.error event of a failed call.
func toolError(tool string, err error) chatevent.ToolError {
	kind := chatevent.ErrorExecution
	if errors.Is(err, context.DeadlineExceeded) {
		kind = chatevent.ErrorTimeout
	}
	msg := err.Error()
	var re *operator.ResultError
	if errors.As(err, &re) {
		msg = re.Message // the tool's own words
	}
	return chatevent.ToolError{Tool: tool, Error: msg, ErrorType: kind}
}
