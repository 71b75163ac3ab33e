package stdio_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/mcp/stdio"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// progressServer has one tool, "progress", that reports steps progress
// notifications and returns.
func progressServer(steps int) *server.MCPServer {
	s := server.NewMCPServer("order", "1.0.0", server.WithToolCapabilities(false), server.WithElicitation())
	s.AddTool(mcp.NewTool("progress"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		srv := server.ServerFromContext(ctx)
		for i := 1; i <= steps; i++ {
			if err := srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
				"progressToken": req.Params.Meta.ProgressToken, "progress": i, "total": steps}); err != nil {
				return nil, err
			}
		}
		return mcp.NewToolResultText("done"), nil
	})
	return s
}

// wire is a raw JSON-RPC client on Serve's stdin and stdout.
type wire struct {
	t     *testing.T
	in    *io.PipeWriter
	lines *bufio.Scanner
	done  chan error
}

type message struct {
	ID     *int   `json:"id"`
	Method string `json:"method"`
	Params struct {
		ProgressToken string  `json:"progressToken"`
		Progress      float64 `json:"progress"`
	} `json:"params"`
}

// serve starts Serve on srv and initializes the session.
func serve(t *testing.T, srv *server.MCPServer) *wire {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	w := &wire{t: t, in: inW, lines: bufio.NewScanner(outR), done: make(chan error, 1)}
	go func() {
		w.done <- stdio.Serve(context.Background(), srv, inR, outW)
		outW.Close()
	}()
	w.send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"t","version":"1"}}}`)
	if m := w.read(); m.ID == nil || *m.ID != 0 {
		t.Fatalf("initialize: got %+v", m)
	}
	w.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return w
}

func (w *wire) send(msg string) {
	w.t.Helper()
	if _, err := io.WriteString(w.in, msg+"\n"); err != nil {
		w.t.Fatal(err)
	}
}

func (w *wire) read() message {
	w.t.Helper()
	if !w.lines.Scan() {
		w.t.Fatalf("output ended: %v", w.lines.Err())
	}
	var m message
	if err := json.Unmarshal(w.lines.Bytes(), &m); err != nil {
		w.t.Fatalf("bad line %q: %v", w.lines.Text(), err)
	}
	return m
}

// readProgress reads steps progress notifications of call i, in order.
func (w *wire) readProgress(i, steps int) {
	w.t.Helper()
	for step := 1; step <= steps; step++ {
		m := w.read()
		if m.Method != "notifications/progress" || m.Params.ProgressToken != fmt.Sprintf("t%d", i) || m.Params.Progress != float64(step) {
			w.t.Fatalf("call %d: want progress %d of %d, got %+v", i, step, steps, m)
		}
	}
}

func (w *wire) close() {
	w.t.Helper()
	w.in.Close()
	if err := <-w.done; err != nil {
		w.t.Fatalf("Serve: %v", err)
	}
}

// TestResponseAfterProgress reads the wire: for every call, the progress
// the tool sent comes before the call's response, in order, none missing.
func TestResponseAfterProgress(t *testing.T) {
	const steps, calls = 5, 200
	w := serve(t, progressServer(steps))
	for i := 1; i <= calls; i++ {
		w.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":"t%d"}}}`, i, i))
		w.readProgress(i, steps)
		if m := w.read(); m.ID == nil || *m.ID != i || m.Method != "" {
			t.Fatalf("call %d: want its response, got %+v", i, m)
		}
	}
	w.close()
}

// TestElicitationAfterProgress: a request the server sends the client comes
// after the progress sent before it.
func TestElicitationAfterProgress(t *testing.T) {
	const steps, calls = 3, 50
	srv := progressServer(steps)
	srv.AddTool(mcp.NewTool("ask"), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		srv := server.ServerFromContext(ctx)
		for i := 1; i <= steps; i++ {
			_ = srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
				"progressToken": req.Params.Meta.ProgressToken, "progress": i, "total": steps})
		}
		res, err := srv.RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
			Message: "ok?", RequestedSchema: map[string]any{"type": "object"}}})
		if err != nil {
			return nil, err
		}
		return mcp.NewToolResultText(string(res.Action)), nil
	})
	w := serve(t, srv)
	for i := 1; i <= calls; i++ {
		w.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"ask","_meta":{"progressToken":"t%d"}}}`, i, i))
		w.readProgress(i, steps)
		m := w.read()
		if m.Method != "elicitation/create" || m.ID == nil {
			t.Fatalf("call %d: want the elicitation request, got %+v", i, m)
		}
		w.send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"result":{"action":"accept","content":{}}}`, *m.ID))
		if m := w.read(); m.ID == nil || *m.ID != i || m.Method != "" {
			t.Fatalf("call %d: want its response, got %+v", i, m)
		}
	}
	w.close()
}

// Serve an mcp-go server on the process's standard input and output, as an
// MCP server command does.
func ExampleServe() {
	srv := server.NewMCPServer("demo", "1.0.0", server.WithToolCapabilities(false))
	// srv.AddTool(...)
	if err := stdio.Serve(context.Background(), srv, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
}
