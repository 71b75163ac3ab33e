package event

import "iter"

// ToUserFacing maps an internal mcp.* event to the tool.* or elicitation
// event a user sees, keeping the envelope (request id, sequence number, time,
// coalesced count):
//
//	mcp.progress    → tool.progress
//	mcp.content     → tool.content
//	mcp.elicitation → elicitation.request
//	mcp.error       → tool.error
//
// The server name is dropped: users see tools, not the servers behind them.
// Events of other types are returned unchanged. The result is false for an
// mcp.* event with no user-facing form (an unknown mcp type, or a payload
// that is not the catalogue struct), which must not reach the user.
func ToUserFacing(ev Event) (Event, bool) {
	t := ev.Type
	if t == "" && ev.Payload != nil {
		t = ev.Payload.EventType()
	}
	if !Internal(t) {
		return ev, true
	}
	out := ev
	switch p := ev.Payload.(type) {
	case MCPProgress:
		out.Payload = ToolProgress{Tool: p.Tool, Progress: p.Progress, Message: p.Message}
	case MCPContent:
		out.Payload = ToolContent{Tool: p.Tool, ContentType: p.ContentType, Encoding: p.Encoding, Data: p.Data, Metadata: p.Metadata}
	case MCPElicitation:
		out.Payload = ElicitationRequest{ElicitationID: p.ElicitationID, Tool: p.Tool, Message: p.Message, Schema: p.Schema}
	case MCPError:
		out.Payload = ToolError{Tool: p.Tool, Error: p.Error, ErrorType: p.ErrorType}
	default:
		return Event{}, false
	}
	out.Type = out.Payload.EventType()
	return out, true
}

// UserFacing applies [ToUserFacing] to a stream of events, leaving out the
// internal events that have no user-facing form.
func UserFacing(events iter.Seq2[Event, error]) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		for ev, err := range events {
			if err != nil {
				if !yield(Event{}, err) {
					return
				}
				continue
			}
			if out, ok := ToUserFacing(ev); ok && !yield(out, nil) {
				return
			}
		}
	}
}
