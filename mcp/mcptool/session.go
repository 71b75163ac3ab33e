package mcptool

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"slices"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/elicit"
	"github.com/agentgraph/agentgraph/operator/toolresult"
)

// Session adapts a request's MCP session to [operator.ToolCaller]:
// the session of [operator.Env].Tools and of operator contexts. Tool names are
// resolved by the session (open it with mcp.Registry.NewSession to call
// tools by the names the registry lists). A tool that reports failure is a
// result with IsError set and no error; other failures are errors.
func Session(s *mcp.Session) operator.ToolCaller { return mcpSession{s} }

type mcpSession struct{ s *mcp.Session }

func (m mcpSession) CallTool(ctx context.Context, name string, args map[string]any) (*toolresult.Result, error) {
	res, err := m.s.CallTool(ctx, mcp.ToolCall{Name: name, Arguments: args})
	if err != nil {
		return nil, err
	}
	// Operators see the tool by the name they called it, and its
	// structured output in Structured only.
	res.Tool = name
	res.Contents = slices.DeleteFunc(res.Contents, func(c toolresult.Content) bool { return c.Kind == toolresult.KindStructured })
	return res, nil
}

// Catalog adapts the MCP server registry to [memory.Tools], the catalogue
// of [operator.ProviderConfig].MCP: summaries and schemas as the
// registry lists them ([mcp.Registry.Tools] and [mcp.Registry.Tool]).
func Catalog(r *mcp.Registry) memory.Tools { return mcpCatalog{r} }

type mcpCatalog struct{ r *mcp.Registry }

func (c mcpCatalog) ToolSummaries(ctx context.Context) ([]model.ToolSummary, error) {
	return c.r.Tools(ctx)
}

func (c mcpCatalog) ToolSchema(ctx context.Context, name string) (string, error) {
	t, err := c.r.Tool(ctx, name)
	if err != nil {
		return "", fmt.Errorf("%w: %w", memory.ErrNotFound, err)
	}
	return operator.SchemaText(t.Name, t.Description, t.InputSchema), nil
}

// Callbacks returns session callbacks that report a request's MCP
// activity to r: progress as [operator.ToolProgress] and each result item
// as [operator.ToolOutput], both under the name the tool was called with
// (Progress.Call, as the start and end of the call are; the server is left
// out: callers see tools, not the servers behind them), and a server's
// questions as [elicit.Request] asked through el, whole (server, mode, URL,
// options and schema; an id is made up when the server sent none; nil
// leaves them to the manager's default). Starts, ends and failures are reported
// by the caller ([operator.Provider.Execute], the tool caller an operator
// gets from [operator.Registry.Execute]), not here, so they are reported
// once. The session reports a call's progress and content before its
// CallTool returns, so they come between the start and the end (see the
// mcp package's "Order of a call's messages").
//
// The reports are made with the callbacks' context, which ends when the
// call stops waiting for them or the session closes (see mcp.Callbacks): a
// reporter that blocks must return when it ends. A report r refuses is
// not retried; see the reporter for what became of it.
func Callbacks(r operator.Reporter, el elicit.Elicitor) mcp.Callbacks {
	cb := mcp.Callbacks{
		Progress: func(ctx context.Context, p mcp.Progress) {
			f, _ := p.Fraction()
			_ = r.Report(ctx, operator.ToolProgress{Tool: p.Call, Progress: f, Message: p.Message})
		},
		Content: func(ctx context.Context, c mcp.ContentEvent) {
			_ = r.Report(ctx, operator.ToolOutput{Tool: c.Call, Content: c.Item})
		},
	}
	if el != nil {
		cb.Elicit = func(ctx context.Context, req elicit.Request) (elicit.Response, error) {
			if req.ElicitationID == "" {
				var b [8]byte
				_, _ = rand.Read(b[:])
				req.ElicitationID = "mcp-" + hex.EncodeToString(b[:])
			}
			// The whole request goes on: a "url" question is only
			// answerable with its URL, and the user is told which
			// server sends them there.
			return el.Elicit(ctx, req)
		}
	}
	return cb
}
