// Package progress sends MCP progress notifications for a tool call.
//
// A client that wants progress puts a progress token in the request's _meta;
// a [Reporter] made from that request sends notifications/progress with the
// token, and does nothing when the client sent no token or the call did not
// arrive through an MCP session (a handler called directly in a test).
package progress

import (
	"context"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Reporter reports the progress of one tool call. The zero value and a nil
// *Reporter report nothing.
type Reporter struct {
	srv   *server.MCPServer
	token mcp.ProgressToken
	total float64
}

// Start returns a reporter for req whose progress runs from 0 to total.
func Start(ctx context.Context, req mcp.CallToolRequest, total int) *Reporter {
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return nil
	}
	srv := server.ServerFromContext(ctx)
	if srv == nil {
		return nil
	}
	return &Reporter{srv: srv, token: req.Params.Meta.ProgressToken, total: float64(total)}
}

// Report tells the client that done of total units are finished, with a
// short human-readable message. It never blocks the call on a slow client:
// a notification the session cannot take is dropped by the server, and
// errors are ignored because progress is advisory.
func (r *Reporter) Report(ctx context.Context, done int, message string) {
	if r == nil {
		return
	}
	_ = r.srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress), map[string]any{
		"progressToken": r.token,
		"progress":      float64(done),
		"total":         r.total,
		"message":       message,
	})
}
