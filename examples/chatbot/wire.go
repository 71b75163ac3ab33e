package chatbot

import (
	"context"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
)

// wire is the one place where what the SDK packages report during a turn
// (operators, tools, MCP callbacks, workflow steps) becomes the chat
// protocol's events: it is the operator.Emitter they are given, and it
// emits on the turn's emitter, the stream the client reads.
type wire struct {
	em  *event.Emitter
	log *zap.Logger
}

// Emit maps p to its chat event and emits it. A report with no chat form
// is left out of the stream and logged.
func (w wire) Emit(ctx context.Context, p event.Payload) error {
	if q, ok := toWire(p); ok {
		return w.em.Emit(ctx, q)
	}
	w.log.Debug("chatbot: a report with no chat event left out of the stream", zap.String("type", string(p.EventType())))
	return nil
}

// toWire maps an SDK report to the chat event the client sees. MCP
// servers' reports become tool events: users see tools, not the servers
// behind them. Payloads that are already chat events pass as they are.
func toWire(p event.Payload) (event.Payload, bool) {
	switch p := p.(type) {
	case event.ToolStart:
		return chatevent.ToolStart(p), true
	case event.ToolProgress:
		return chatevent.ToolProgress(p), true
	case event.ToolContent:
		return chatevent.ToolContent(p), true
	case event.ToolComplete:
		return chatevent.ToolComplete(p), true
	case event.ToolError:
		return chatevent.ToolError(p), true
	case event.MCPProgress:
		return chatevent.ToolProgress{Tool: p.Tool, Progress: p.Progress, Message: p.Message}, true
	case event.MCPContent:
		return chatevent.ToolContent{Tool: p.Tool, ContentType: p.ContentType, Encoding: p.Encoding, Data: p.Data, Metadata: p.Metadata}, true
	case event.MCPElicitation:
		return chatevent.ElicitationRequest{ElicitationID: p.ElicitationID, Tool: p.Tool, Message: p.Message, Schema: p.Schema}, true
	case event.MCPError:
		return chatevent.ToolError{Tool: p.Tool, Error: p.Error, ErrorType: p.ErrorType}, true
	case event.WorkflowCreated:
		return chatevent.WorkflowCreated(p), true
	case event.WorkflowStepStart:
		return chatevent.WorkflowStepStart(p), true
	case event.WorkflowStepComplete:
		return chatevent.WorkflowStepComplete(p), true
	case event.WorkflowComplete:
		return chatevent.WorkflowComplete(p), true
	case event.DirectResponse:
		return chatevent.DirectResponse(p), true
	case event.DirectResponseStart:
		return chatevent.DirectResponseStart(p), true
	case event.DirectResponseChunk:
		return chatevent.DirectResponseChunk(p), true
	case event.DirectResponseDone:
		return chatevent.DirectResponseDone(p), true
	case event.ElicitationRequest:
		return chatevent.ElicitationRequest(p), true
	case event.ElicitationResponse:
		return chatevent.ElicitationResponse(p), true
	case event.Error:
		return p, true
	}
	return nil, false
}
