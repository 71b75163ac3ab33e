// Package mcpserver is an in-process MCP server, written with mcp-go's
// server package, serving the tools the built-in operators call
// (rag_search, web_search, run_python, and reindex, which reports progress
// and asks the user), and a client reaching it through the mcp package. The tests of operator, tool and workflow
// use it in place of remote search and sandbox servers.
package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/mcp/mcptool"

	agmcp "github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/toolresult"
	mcp "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// Docs is the internal knowledge base rag_search searches.
var Docs = map[string]string{
	"pricing": "Acme Pro costs $49 per user per month; Enterprise is $99.",
	"support": "Support answers within 4 hours on business days.",
}

// Web is the public web web_search searches.
var Web = map[string]string{
	"pricing": "Globex charges $59 per user per month; Initech charges $45.",
}

// Server is the in-process server and what it saw.
type Server struct {
	MCP *server.MCPServer
	mu  sync.Mutex
	// Calls lists "tool(args JSON)" for every call, in order.
	Calls []string
	// Hook, if set, runs at the start of every call; an error fails it.
	Hook func(ctx context.Context, tool string) error
}

// New returns the server.
func New() *Server {
	s := &Server{MCP: server.NewMCPServer("acme-tools", "1.0.0", server.WithToolCapabilities(true), server.WithElicitation())}
	search := func(index map[string]string) server.ToolHandlerFunc {
		return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			q := strings.ToLower(req.GetString("query", ""))
			var hits []string
			for _, k := range []string{"pricing", "support"} {
				if doc, ok := index[k]; ok && strings.Contains(q, k) {
					hits = append(hits, doc)
				}
			}
			if len(hits) == 0 {
				return mcp.NewToolResultText("no results for " + q), nil
			}
			return mcp.NewToolResultText(strings.Join(hits, "\n")), nil
		}
	}
	s.add(mcp.NewTool("rag_search", mcp.WithDescription("Search internal documents"),
		mcp.WithString("query", mcp.Required()), mcp.WithNumber("top_k")), search(Docs))
	s.add(mcp.NewTool("web_search", mcp.WithDescription("Search the web"),
		mcp.WithString("query", mcp.Required())), search(Web))
	s.add(mcp.NewTool("reindex", mcp.WithDescription("Rebuild the search index after asking the user to confirm"),
		mcp.WithNumber("steps", mcp.DefaultNumber(2))), s.reindex)
	s.add(mcp.NewTool("run_python", mcp.WithDescription("Run Python code in a sandbox"),
		mcp.WithString("code", mcp.Required())), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		code := req.GetString("code", "")
		// The sandbox understands print("...") of a literal, which is all
		// the tests need.
		var out []string
		for _, line := range strings.Split(code, "\n") {
			line = strings.TrimSpace(line)
			if strings.HasPrefix(line, `print("`) && strings.HasSuffix(line, `")`) {
				out = append(out, line[7:len(line)-2])
			}
		}
		if len(out) == 0 {
			return mcp.NewToolResultError("the program printed nothing"), nil
		}
		return mcp.NewToolResultText(strings.Join(out, "\n")), nil
	})
	return s
}

// reindex reports progress, then asks the user to confirm with an
// elicitation request.
func (s *Server) reindex(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	srv := server.ServerFromContext(ctx)
	steps := int(req.GetFloat("steps", 2))
	if req.Params.Meta != nil && req.Params.Meta.ProgressToken != nil {
		for i := 1; i <= steps; i++ {
			_ = srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
				"progressToken": req.Params.Meta.ProgressToken, "progress": i, "total": steps, "message": fmt.Sprintf("scanned %d of %d", i, steps),
			})
		}
	}
	res, err := srv.RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
		Message:         "Replace the index?",
		RequestedSchema: map[string]any{"type": "object", "properties": map[string]any{"confirm": map[string]any{"type": "boolean"}}, "required": []any{"confirm"}},
	}})
	if err != nil {
		return mcp.NewToolResultError("elicitation failed: " + err.Error()), nil
	}
	c, _ := res.Content.(map[string]any)
	if res.Action != mcp.ElicitationResponseActionAccept || c["confirm"] != true {
		return mcp.NewToolResultText("index kept"), nil
	}
	return mcp.NewToolResultText("index rebuilt"), nil
}

func (s *Server) add(t mcp.Tool, h server.ToolHandlerFunc) {
	s.MCP.AddTool(t, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args, _ := json.Marshal(req.GetArguments())
		s.mu.Lock()
		s.Calls = append(s.Calls, fmt.Sprintf("%s(%s)", req.Params.Name, args))
		hook := s.Hook
		s.mu.Unlock()
		if hook != nil {
			if err := hook(ctx, req.Params.Name); err != nil {
				return mcp.NewToolResultError(err.Error()), nil
			}
		}
		return h(ctx, req)
	})
}

// CallLog returns the calls so far.
func (s *Server) CallLog() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.Calls...)
}

// Client reaches a server through the mcp package: a manager holding it
// in-process, the manager's registry, and one session. It implements
// operator.ToolCaller and memory.Tools through mcptool's
// adapters, as an application would.
type Client struct {
	Manager  *agmcp.Manager
	Registry *agmcp.Registry
	Session  *agmcp.Session
	caller   operator.ToolCaller
	catalog  memory.Tools
}

// Connect serves s through a new manager and opens a session with cb.
func Connect(ctx context.Context, s *Server, cb ...agmcp.Callbacks) (*Client, error) {
	m, err := agmcp.NewManager(agmcp.ManagerConfig{})
	if err != nil {
		return nil, err
	}
	if err := m.Add(agmcp.Server{Name: "acme", InProcess: s.MCP}); err != nil {
		_ = m.Shutdown(ctx)
		return nil, err
	}
	r, err := agmcp.NewRegistry(agmcp.RegistryConfig{Manager: m})
	if err != nil {
		_ = m.Shutdown(ctx)
		return nil, err
	}
	var callbacks agmcp.Callbacks
	if len(cb) > 0 {
		callbacks = cb[0]
	}
	sess := r.NewSession(callbacks)
	return &Client{Manager: m, Registry: r, Session: sess, caller: mcptool.Session(sess), catalog: mcptool.Catalog(r)}, nil
}

// Close ends the session and shuts the manager down.
func (c *Client) Close() error {
	err := c.Session.Close()
	return errors.Join(err, c.Manager.Shutdown(context.Background()))
}

// CallTool calls a tool through the session.
func (c *Client) CallTool(ctx context.Context, name string, args map[string]any) (*toolresult.Result, error) {
	return c.caller.CallTool(ctx, name, args)
}

// ToolSummaries lists the server's tools through the registry.
func (c *Client) ToolSummaries(ctx context.Context) ([]model.ToolSummary, error) {
	return c.catalog.ToolSummaries(ctx)
}

// ToolSchema returns a tool's schema through the registry.
func (c *Client) ToolSchema(ctx context.Context, name string) (string, error) {
	return c.catalog.ToolSchema(ctx, name)
}
