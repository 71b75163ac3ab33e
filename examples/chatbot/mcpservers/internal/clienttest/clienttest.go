// Package clienttest connects a real mcp-go client to a server under test,
// in-process or over stdio to the server's command built with go build, and
// records the progress notifications it receives.
package clienttest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/goleak"
)

// Options select how the client connects.
type Options struct {
	// Legacy pins protocol 2025-11-25 (initialize handshake, server-initiated
	// elicitation/create) instead of 2026-07-28.
	Legacy bool
	// Elicit, if set, answers elicitation requests and makes the client
	// declare the elicitation capability.
	Elicit func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error)
}

// Progress is one received progress notification.
type Progress struct {
	Progress, Total float64
	Message         string
}

// Client is an initialized MCP client with a progress recorder.
type Client struct {
	*client.Client
	mu       sync.Mutex
	changed  chan struct{}
	progress map[string][]Progress
	next     atomic.Int64
}

type elicitFunc func(context.Context, mcp.ElicitationRequest) (*mcp.ElicitationResult, error)

func (f elicitFunc) Elicit(ctx context.Context, r mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return f(ctx, r)
}

func clientOptions(o Options) []client.ClientOption {
	var opts []client.ClientOption
	if o.Legacy {
		opts = append(opts, client.WithProtocolVersion(mcp.ProtocolVersion20251125))
	}
	if o.Elicit != nil {
		opts = append(opts, client.WithElicitationHandler(elicitFunc(o.Elicit)))
	}
	return opts
}

// InProcess connects to srv in-process. The client is closed when the test
// ends.
func InProcess(t testing.TB, srv *server.MCPServer, o Options) *Client {
	t.Helper()
	c, err := client.NewInProcessClientWithOptions(srv, clientOptions(o)...)
	if err != nil {
		t.Fatal(err)
	}
	return start(t, c)
}

// Stdio runs the binary at path as a stdio server. The process is stopped
// when the test ends.
func Stdio(t testing.TB, path string, o Options) *Client {
	t.Helper()
	tr := transport.NewStdio(path, nil)
	if err := tr.Start(context.Background()); err != nil {
		t.Fatalf("starting %s: %v", path, err)
	}
	return start(t, client.NewClient(tr, clientOptions(o)...))
}

// HTTP connects to a streamable HTTP server at url. The client is closed
// when the test ends.
func HTTP(t testing.TB, url string, o Options) *Client {
	t.Helper()
	tr, err := transport.NewStreamableHTTP(url)
	if err != nil {
		t.Fatal(err)
	}
	return start(t, client.NewClient(tr, clientOptions(o)...))
}

// Process is a server command running with -http.
type Process struct {
	// URL is the server's MCP endpoint.
	URL  string
	cmd  *exec.Cmd
	done chan error
}

// StartHTTP runs the command at path with -http 127.0.0.1:0 and waits for
// it to report its URL on stderr.
func StartHTTP(path string) (*Process, error) {
	cmd := exec.Command(path, "-http", "127.0.0.1:0")
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	p := &Process{cmd: cmd, done: make(chan error, 1)}
	lines := bufio.NewScanner(stderr)
	found := make(chan string, 1)
	go func() {
		for lines.Scan() {
			if u, ok := strings.CutPrefix(lines.Text(), "serving MCP at "); ok {
				found <- u
				break
			}
		}
		_, _ = io.Copy(io.Discard, stderr)
		p.done <- cmd.Wait()
	}()
	select {
	case p.URL = <-found:
		return p, nil
	case err := <-p.done:
		return nil, fmt.Errorf("%s exited before serving: %v", path, err)
	case <-time.After(10 * time.Second):
		_ = cmd.Process.Kill()
		<-p.done
		return nil, fmt.Errorf("%s did not report its URL within 10s", path)
	}
}

// Stop sends SIGTERM and waits for the process; it returns the exit error,
// nil for a clean exit.
func (p *Process) Stop() error {
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		return err
	}
	select {
	case err := <-p.done:
		return err
	case <-time.After(10 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
		return errors.New("process did not stop within 10s of SIGTERM")
	}
}

func start(t testing.TB, c *client.Client) *Client {
	t.Helper()
	tc := &Client{Client: c, changed: make(chan struct{}), progress: make(map[string][]Progress)}
	t.Cleanup(func() { _ = c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.Start(ctx); err != nil {
		t.Fatalf("client start: %v", err)
	}
	c.OnNotification(tc.record)
	req := mcp.InitializeRequest{}
	req.Params.ClientInfo = mcp.Implementation{Name: "clienttest", Version: "1.0.0"}
	req.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	if _, err := c.Initialize(ctx, req); err != nil {
		t.Fatalf("initialize: %v", err)
	}
	return tc
}

func (c *Client) record(n mcp.JSONRPCNotification) {
	if n.Method != string(mcp.MethodNotificationProgress) {
		return
	}
	f := n.Params.AdditionalFields
	tok := fmt.Sprint(f["progressToken"])
	p := Progress{Message: fmt.Sprint(f["message"])}
	p.Progress, _ = f["progress"].(float64)
	p.Total, _ = f["total"].(float64)
	c.mu.Lock()
	c.progress[tok] = append(c.progress[tok], p)
	close(c.changed)
	c.changed = make(chan struct{})
	c.mu.Unlock()
}

// Call calls tool with arguments. With progress true it sends a progress
// token and returns the notifications received for it, waiting briefly for
// the last one (progress == total), which may arrive after the result.
func (c *Client) Call(ctx context.Context, tool string, arguments map[string]any, withProgress bool) (*mcp.CallToolResult, []Progress, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = tool
	req.Params.Arguments = arguments
	tok := ""
	if withProgress {
		tok = fmt.Sprintf("tok-%d", c.next.Add(1))
		req.Params.Meta = &mcp.Meta{ProgressToken: tok}
	}
	res, err := c.CallTool(ctx, req)
	if err != nil || !withProgress {
		return res, nil, err
	}
	deadline := time.After(2 * time.Second)
	for {
		c.mu.Lock()
		got := append([]Progress(nil), c.progress[tok]...)
		changed := c.changed
		c.mu.Unlock()
		if n := len(got); n > 0 && got[n-1].Total > 0 && got[n-1].Progress >= got[n-1].Total {
			return res, got, nil
		}
		select {
		case <-changed:
		case <-deadline:
			return res, got, nil
		case <-ctx.Done():
			return res, got, ctx.Err()
		}
	}
}

// Text joins the text content of a result.
func Text(res *mcp.CallToolResult) string {
	var s string
	for _, c := range res.Content {
		if tc, ok := mcp.AsTextContent(c); ok {
			s += tc.Text
		}
	}
	return s
}

// BadCall is a tool call that must fail: Tool called with Args, whose
// result is a tool error (isError) with Want in its text.
type BadCall struct {
	Tool string
	Args map[string]any
	Want string
}

// CheckBadCalls makes each of calls on c, each in a subtest of t and
// within ctx of the subtest, and fails the subtest unless the result is
// the tool error the call wants.
func CheckBadCalls(t *testing.T, c *Client, ctx func(*testing.T) context.Context, calls []BadCall) {
	t.Helper()
	for _, bc := range calls {
		t.Run(fmt.Sprint(bc.Tool, bc.Args), func(t *testing.T) {
			res, _, err := c.Call(ctx(t), bc.Tool, bc.Args, false)
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || !strings.Contains(Text(res), bc.Want) {
				t.Errorf("result isError=%v %q, want an error containing %q", res.IsError, Text(res), bc.Want)
			}
		})
	}
}

// Structured decodes a result's structured content into v.
func Structured(t testing.TB, res *mcp.CallToolResult, v any) {
	t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structured content %s: %v", b, err)
	}
}

var (
	buildMu sync.Mutex
	built   = map[string]string{}
)

// Build compiles the main package at pkg (an import path) into a temporary
// directory once per test binary and returns the executable's path. dir is
// removed by the caller (usually TestMain).
func Build(dir, pkg string) (string, error) {
	buildMu.Lock()
	defer buildMu.Unlock()
	if p, ok := built[pkg]; ok {
		return p, nil
	}
	out := filepath.Join(dir, filepath.Base(pkg))
	if runtime.GOOS == "windows" {
		out += ".exe"
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(gobin); err != nil {
		gobin = "go"
	}
	cmd := exec.Command(gobin, "build", "-o", out, pkg)
	if b, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("go build %s: %v\n%s", pkg, err, b)
	}
	built[pkg] = out
	return out, nil
}

// Command is a server command built for a package's tests: the executable,
// for stdio tests, and the same command serving streamable HTTP.
type Command struct {
	// Binary is the built executable's path.
	Binary string
	// HTTP is the executable running with -http.
	HTTP *Process
}

// Main is a TestMain body: it builds the main package pkg into cmd, starts
// it serving HTTP, runs the tests, stops the server with SIGTERM (a server
// that does not exit cleanly fails the run), removes the build, checks that
// no goroutine is left, and returns the exit code for os.Exit.
func Main(m *testing.M, pkg string, cmd *Command) int {
	dir, err := os.MkdirTemp("", filepath.Base(pkg)+"-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	if cmd.Binary, err = Build(dir, pkg); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	if cmd.HTTP, err = StartHTTP(cmd.Binary); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	code := m.Run()
	if err := cmd.HTTP.Stop(); err != nil {
		fmt.Fprintln(os.Stderr, "stopping the HTTP server with SIGTERM:", err)
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	return code
}
