// Package testserver is an MCP server written with mcp-go's server package,
// used by the mcp package's tests, examples and benchmarks over every
// transport: in-process, stdio (the test binary re-executed), streamable HTTP
// and SSE.
//
// Tools: echo (read-only), progress (reports progress), late (reports
// progress after returning), ask (asks the client
// for input with a legacy elicitation/create), media (text, image, audio,
// embedded resource, widget, resource link and structured content), log
// (sends a logging notification), slow (waits, honouring cancellation), fail (isError), crash (exits the process
// mid-call) and add_tool (adds a tool, so the server sends list_changed).
package testserver

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/mcp/stdio"
)

// PNG is a 1x1 transparent PNG, base64-encoded.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAQAAAC1HAwCAAAAC0lEQVR42mNkYAAAAAYAAjCB0C8AAAAASUVORK5CYII="

// Server is the test server and what it observed.
type Server struct {
	MCP *server.MCPServer
	// Cancelled counts slow calls whose context ended before they finished.
	Cancelled atomic.Int64
	// Active and MaxActive count slow calls running now and at most.
	Active, MaxActive atomic.Int64
	// Calls counts every tool call; Lists counts tools/list requests.
	Calls, Lists atomic.Int64
	// CancelNotices counts notifications/cancelled received over HTTP.
	CancelNotices atomic.Int64
	// FailLists, while positive, makes the HTTP transport answer that many
	// tools/list requests with 503 Service Unavailable (one less each time).
	FailLists atomic.Int64

	quit     chan struct{}
	quitOnce sync.Once
	lateWG   sync.WaitGroup

	mu           sync.Mutex
	traceparents []string // the traceparent header of each tools/call over HTTP
}

// Traceparents returns the traceparent header of each tool call received
// over the streamable HTTP transport, "" for a call without one.
func (s *Server) Traceparents() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.traceparents...)
}

// Release ends every slow call still running, for servers that do not
// cancel handlers when the client gives up (the legacy SSE server).
func (s *Server) Release() { s.quitOnce.Do(func() { close(s.quit) }) }

// New returns a server named name.
func New(name string) *Server {
	s := &Server{quit: make(chan struct{})}
	hooks := &server.Hooks{}
	hooks.AddBeforeListTools(func(context.Context, any, *mcp.ListToolsRequest) { s.Lists.Add(1) })
	s.MCP = server.NewMCPServer(name, "1.0.0", server.WithHooks(hooks),
		server.WithToolCapabilities(true), server.WithLogging(), server.WithElicitation(), server.WithRecovery())
	s.add(mcp.NewTool("echo", mcp.WithDescription("Echo the text back."), mcp.WithString("text", mcp.Required()),
		mcp.WithReadOnlyHintAnnotation(true)), s.echo)
	s.add(mcp.NewTool("progress", mcp.WithDescription("Report progress steps times, then finish."),
		mcp.WithNumber("steps", mcp.DefaultNumber(3)), mcp.WithNumber("delay_ms", mcp.DefaultNumber(0))), s.progress)
	s.add(mcp.NewTool("late", mcp.WithDescription("Return, then report progress after delay_ms (default 20).")), s.late)
	s.add(mcp.NewTool("ask", mcp.WithDescription("Ask the user for a name and a count, then greet.")), s.ask)
	s.add(mcp.NewTool("media", mcp.WithDescription("Return text, an image, audio, a resource, a widget, a link and structured content.")), s.media)
	s.add(mcp.NewTool("slow", mcp.WithDescription("Wait ms milliseconds unless cancelled."), mcp.WithNumber("ms", mcp.DefaultNumber(100))), s.slow)
	s.add(mcp.NewTool("fail", mcp.WithDescription("Fail with a tool error.")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultError("the tool failed on purpose"), nil
	})
	s.add(mcp.NewTool("crash", mcp.WithDescription("Exit the server process in the middle of the call.")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		os.Exit(3)
		return nil, nil
	})
	s.add(mcp.NewTool("log", mcp.WithDescription("Send a logging notification with 'text' at level error, or 'count' of them with 'text' repeated 'repeat' times at any 'level'.")), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		if level := req.GetString("level", ""); level != "" {
			// Raw, so that a level the protocol does not define gets out.
			data := strings.Repeat(req.GetString("text", ""), max(req.GetInt("repeat", 1), 1))
			for range max(req.GetInt("count", 1), 1) {
				for {
					err := server.ServerFromContext(ctx).SendNotificationToClient(ctx, "notifications/message", map[string]any{"level": level, "logger": "testserver", "data": data})
					if err == nil {
						break
					}
					if !errors.Is(err, server.ErrNotificationChannelBlocked) || ctx.Err() != nil {
						return mcp.NewToolResultError(err.Error()), nil
					}
					time.Sleep(time.Millisecond) // the client reads on; mcp-go buffers 100
				}
			}
			return mcp.NewToolResultText("logged"), nil
		}
		note := mcp.NewLoggingMessageNotification(mcp.LoggingLevelError, "testserver", req.GetString("text", ""))
		if err := server.ServerFromContext(ctx).SendLogMessageToClient(ctx, note); err != nil {
			return mcp.NewToolResultError(err.Error()), nil
		}
		return mcp.NewToolResultText("logged"), nil
	})
	s.add(mcp.NewTool("add_tool", mcp.WithDescription("Add a tool named by 'name'."), mcp.WithString("name", mcp.Required())), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		name := req.GetString("name", "extra")
		s.add(mcp.NewTool(name, mcp.WithDescription("A tool added at run time.")), s.echo)
		return mcp.NewToolResultText("added " + name), nil
	})
	return s
}

func (s *Server) add(t mcp.Tool, h server.ToolHandlerFunc) {
	s.MCP.AddTool(t, func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		s.Calls.Add(1)
		return h(ctx, req)
	})
}

func (s *Server) echo(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	return mcp.NewToolResultText(req.GetString("text", "")), nil
}

func (s *Server) progress(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	steps := int(req.GetFloat("steps", 3))
	delay := time.Duration(req.GetFloat("delay_ms", 0)) * time.Millisecond
	var token mcp.ProgressToken
	if req.Params.Meta != nil {
		token = req.Params.Meta.ProgressToken
	}
	srv := server.ServerFromContext(ctx)
	for i := 1; i <= steps; i++ {
		if token != nil {
			_ = srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
				"progressToken": token, "progress": i, "total": steps, "message": fmt.Sprintf("step %d of %d", i, steps),
			})
		}
		if delay > 0 {
			select {
			case <-time.After(delay):
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
	}
	return mcp.NewToolResultText(fmt.Sprintf("done %d steps", steps)), nil
}

// late returns at once and reports progress "after the result" delay_ms
// later, as a server that sends progress on another stream may appear to.
func (s *Server) late(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	delay := time.Duration(req.GetFloat("delay_ms", 20)) * time.Millisecond
	if req.Params.Meta == nil || req.Params.Meta.ProgressToken == nil {
		return mcp.NewToolResultError("send a progress token"), nil
	}
	token := req.Params.Meta.ProgressToken
	srv := server.ServerFromContext(ctx)
	ctx = context.WithoutCancel(ctx)
	s.lateWG.Go(func() {
		time.Sleep(delay)
		_ = srv.SendNotificationToClient(ctx, "notifications/progress", map[string]any{
			"progressToken": token, "progress": 1, "total": 1, "message": "after the result"})
	})
	return mcp.NewToolResultText("returned"), nil
}

// WaitLate waits until every late tool call has sent its progress.
func (s *Server) WaitLate() { s.lateWG.Wait() }

// AskSchema is the schema the ask tool requests.
var AskSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"name":  map[string]any{"type": "string", "minLength": 1},
		"count": map[string]any{"type": "integer", "default": 3, "minimum": 1},
		"color": map[string]any{"type": "string", "enum": []any{"red", "green"}, "default": "green"},
	},
	"required": []any{"name"},
}

func (s *Server) ask(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	res, err := server.ServerFromContext(ctx).RequestElicitation(ctx, mcp.ElicitationRequest{Params: mcp.ElicitationParams{
		Message: "Who are you?", RequestedSchema: AskSchema,
	}})
	if err != nil {
		return mcp.NewToolResultError("elicitation failed: " + err.Error()), nil
	}
	if res.Action != mcp.ElicitationResponseActionAccept {
		return mcp.NewToolResultText("no answer: " + string(res.Action)), nil
	}
	c, _ := res.Content.(map[string]any)
	return mcp.NewToolResultText(fmt.Sprintf("hello %v x%v in %v", c["name"], c["count"], c["color"])), nil
}

// Widget is the JSON of the media tool's widget item.
const Widget = `{"widget_type":"data_table","title":"Sales","data":{"columns":["q","n"],"rows":[[1,2]]}}`

func (s *Server) media(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	audio := base64.StdEncoding.EncodeToString([]byte("RIFF....WAVE"))
	return &mcp.CallToolResult{
		Content: []mcp.Content{
			mcp.NewTextContent("## Report"),
			mcp.NewImageContent(PNG, "image/png"),
			mcp.NewAudioContent(audio, "audio/wav"),
			mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "file:///notes.md", MIMEType: "text/markdown", Text: "notes"}),
			mcp.NewEmbeddedResource(mcp.TextResourceContents{URI: "ui://sales", MIMEType: "application/vnd.mcp.widget+json", Text: Widget}),
			mcp.NewResourceLink("file:///data.csv", "data.csv", "the data", "text/csv"),
			mcp.NewTextContent("second line"),
		},
		StructuredContent: map[string]any{"temperature": 21.5, "unit": "C"},
	}, nil
}

func (s *Server) slow(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	n := s.Active.Add(1)
	defer s.Active.Add(-1)
	for {
		m := s.MaxActive.Load()
		if n <= m || s.MaxActive.CompareAndSwap(m, n) {
			break
		}
	}
	d := time.Duration(req.GetFloat("ms", 100)) * time.Millisecond
	select {
	case <-time.After(d):
		return mcp.NewToolResultText("slept"), nil
	case <-ctx.Done():
		s.Cancelled.Add(1)
		return nil, ctx.Err()
	case <-s.quit:
		return mcp.NewToolResultText("released"), nil
	}
}

// HTTPServer is the test server on a local streamable HTTP listener.
type HTTPServer struct {
	*httptest.Server
	h *server.StreamableHTTPServer

	mu       sync.Mutex
	sessions map[string]bool // every Mcp-Session-Id a request carried

	afterShutdown func() // a test's hook between the sessions' end and the listener's
}

// Close ends the server's MCP sessions (and their goroutines), then the
// listener. A request in flight while the sessions end can open a session's
// listening stream after its clean-up (mcp-go starts a pump goroutine for it
// that only a session's clean-up stops), so once every request has returned,
// Close ends each session it saw again, as a client's DELETE does.
func (h *HTTPServer) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = h.h.Shutdown(ctx)
	if h.afterShutdown != nil {
		h.afterShutdown()
	}
	h.Server.Close()
	h.mu.Lock()
	defer h.mu.Unlock()
	for id := range h.sessions {
		r := httptest.NewRequestWithContext(ctx, http.MethodDelete, "/", nil)
		r.Header.Set(server.HeaderKeySessionID, id)
		h.h.ServeHTTP(httptest.NewRecorder(), r)
	}
}

func (h *HTTPServer) saw(r *http.Request) {
	if id := r.Header.Get(server.HeaderKeySessionID); id != "" {
		h.mu.Lock()
		h.sessions[id] = true
		h.mu.Unlock()
	}
}

// ExpireSessions ends every MCP session, as a server restart or a session
// timeout would: the clients' next requests get 404.
func (h *HTTPServer) ExpireSessions() { h.h.CloseSessions(context.Background()) }

// HTTP serves the server over streamable HTTP (with an event store, so no
// notification is lost) on a local test listener.
func (s *Server) HTTP() *HTTPServer {
	h := &HTTPServer{
		h:        server.NewStreamableHTTPServer(s.MCP, server.WithEventStore(server.NewInMemoryEventStore())),
		sessions: make(map[string]bool),
	}
	h.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h.saw(r)
		if r.Method == http.MethodPost {
			body, _ := io.ReadAll(r.Body)
			if bytes.Contains(body, []byte(`"notifications/cancelled"`)) {
				s.CancelNotices.Add(1)
			}
			if bytes.Contains(body, []byte(`"tools/list"`)) && s.FailLists.Add(-1) >= 0 {
				http.Error(w, "listing refused by the test", http.StatusServiceUnavailable)
				return
			}
			if bytes.Contains(body, []byte(`"tools/call"`)) {
				s.mu.Lock()
				s.traceparents = append(s.traceparents, r.Header.Get("traceparent"))
				s.mu.Unlock()
			}
			r.Body = io.NopCloser(bytes.NewReader(body))
		}
		h.h.ServeHTTP(w, r)
	}))
	return h
}

// SSE serves the server over the legacy HTTP+SSE transport; the client URL
// is the returned server's URL + "/sse".
func (s *Server) SSE() *httptest.Server {
	sse := server.NewSSEServer(s.MCP)
	ts := httptest.NewServer(sse)
	server.WithBaseURL(ts.URL)(sse)
	return ts
}

// ServeStdio serves a new server named name on stdin and stdout until stdin
// closes.
func ServeStdio(name string) error {
	return stdio.Serve(context.Background(), New(name).MCP, os.Stdin, os.Stdout)
}

// Main is a test binary's TestMain. When the environment variable env names
// a server (a test re-executed the binary as a stdio server), it serves that
// server until stdin closes and exits; else it runs the tests, with goleak
// checking that none leaves a goroutine behind.
func Main(m *testing.M, env string) {
	if name := os.Getenv(env); name != "" {
		if err := ServeStdio(name); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		os.Exit(0)
	}
	// Children inherit it: a race-enabled child otherwise sleeps a second
	// when it exits.
	os.Setenv("GORACE", strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	goleak.VerifyTestMain(m)
}
