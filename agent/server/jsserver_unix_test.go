//go:build unix

package server_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// startJSServer starts LangChain's open-source JS Agent Server
// (@langchain/langgraph-api, the in-memory dev server of
// @langchain/langgraph-cli) on the graph of testdata/jsserver, offline, as
// the API note's section 8.3 says, and returns its URL; it is stopped when
// tb ends. It skips when node or the packages are missing.
func startJSServer(tb testing.TB) string {
	tb.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		tb.Skip("node is not installed; install Node.js 20+ to compare with the JS server")
	}
	src, err := filepath.Abs(filepath.Join("testdata", "jsserver"))
	if err != nil {
		tb.Fatal(err)
	}
	bin := filepath.Join(src, "node_modules", ".bin", "langgraphjs")
	if _, err := os.Stat(bin); err != nil {
		tb.Skip("the JS server is not installed; run: npm ci --prefix agent/server/testdata/jsserver")
	}
	// The dev server writes its state and a .gitignore into the project
	// folder: run it on a copy.
	dir := tb.TempDir()
	for _, f := range []string{"graph.mjs", "langgraph.json"} {
		b, err := os.ReadFile(filepath.Join(src, f))
		if err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			tb.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(src, "node_modules"), filepath.Join(dir, "node_modules")); err != nil {
		tb.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	cmd := exec.Command(bin, "dev", "--no-browser", "--no-reload", "--host", "127.0.0.1", "--port", fmt.Sprint(port), "--config", "langgraph.json")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "LANGGRAPH_CLI_NO_ANALYTICS=1", "LANGSMITH_TRACING=false", "LANGCHAIN_TRACING_V2=false")
	out := &lockedBuffer{}
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // it starts node children: stop them all
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	tb.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-exited
	})
	url := fmt.Sprintf("http://127.0.0.1:%d", port)
	// It takes 15-20 s to start on a quiet machine; the deadline guards
	// against one that never does.
	deadline := time.Now().Add(5 * time.Minute)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		req, _ := http.NewRequestWithContext(ctx, "GET", url+"/ok", nil)
		resp, err := http.DefaultClient.Do(req)
		cancel()
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == 200 {
				return url
			}
		}
		select {
		case err := <-exited:
			tb.Fatalf("the JS server exited: %v\n%s", err, out.String())
		case <-time.After(200 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			tb.Fatalf("the JS server did not answer /ok within 5 minutes:\n%s", out.String())
		}
	}
}

// lockedBuffer collects a process's output for an error message.
type lockedBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
