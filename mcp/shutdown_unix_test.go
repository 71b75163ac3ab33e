//go:build unix

package mcp_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/mcp"
)

// TestShutdownChildOutsideGroupKeepsStderr: a stdio server starts a child
// that leaves its process group (out of the kill's reach) and keeps the
// server's stderr open. Once the server has exited, reaping it waits for
// its stderr a short while only, so Shutdown returns long before the child
// ends, without error.
func TestShutdownChildOutsideGroupKeepsStderr(t *testing.T) {
	if _, err := exec.LookPath("setsid"); err != nil {
		t.Skip("setsid not installed")
	}
	pidFile := filepath.Join(t.TempDir(), "child.pid")
	// The child writes its pid, then sleeps 600 s holding stderr.
	script := `setsid sh -c 'echo $$ > "$1"; exec sleep 600' child "$1" </dev/null >/dev/null & exec "$0"`
	srv := stdioServer("escape")
	srv.Command, srv.Args = "sh", []string{"-c", script, os.Args[0], pidFile}
	m, err := mcp.NewManager(mcp.ManagerConfig{Resilience: fastRetry()})
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Add(srv); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		b, err := os.ReadFile(pidFile)
		if err != nil {
			t.Errorf("the child's pid: %v", err)
			return
		}
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil {
			_ = killPID(pid)
		}
	})
	s := m.NewSession(mcp.Callbacks{})
	if _, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "escape", Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	// Generous: only bounds a hang; the child sleeps ten times as long.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if err := m.Shutdown(ctx); err != nil {
		t.Fatalf("Shutdown waited for the end of a child that left the process group: %v", err)
	}
}
