//go:build unix

package mcp

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// testServer is the test binary serving the test server over stdio
// (TestMain in the external tests), run through sh with script: "$0" is
// the test binary and "$1" arg.
func testServer(name, script, arg string) Server {
	return Server{Name: name, Command: "sh", Args: []string{"-c", script, os.Args[0], arg},
		Env: map[string]string{"AGENTGRAPH_MCP_TEST_SERVER": name}}
}

// connect starts the manager's connection to server with one call.
func connect(t *testing.T, m *Manager, server string) {
	t.Helper()
	s := m.NewSession(Callbacks{})
	defer s.Close()
	if _, err := s.CallTool(context.Background(), ToolCall{Server: server, Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
		t.Fatal(err)
	}
}

// leader is the pid of the process group leader of server's subprocess.
func leader(t *testing.T, m *Manager, server string) int {
	t.Helper()
	m.mu.Lock()
	c := m.conns[server]
	m.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.w == nil || c.w.cmd == nil {
		t.Fatalf("%s has no subprocess", server)
	}
	return c.w.cmd.Process.Pid
}

// TestShutdownWithEndedContextKills: when Shutdown's ctx has ended, it
// kills the subprocesses before it returns, even one that ignores the end
// of its stdin and has a long grace: the program may exit right after, and
// would leave them behind.
func TestShutdownWithEndedContextKills(t *testing.T) {
	m, err := NewManager(ManagerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	m.exitGrace = time.Hour // only a kill ends the server in time
	// sh waits for the server, then sleeps on, ignoring its stdin's end.
	if err := m.Add(testServer("stubborn", `"$0"; exec sleep 600`, "")); err != nil {
		t.Fatal(err)
	}
	connect(t, m, "stubborn")
	pgid := leader(t, m, "stubborn")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := m.Shutdown(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown(ended ctx) = %v, want context.Canceled", err)
	}
	// The kill was sent before Shutdown returned: the reaping left to the
	// background follows at once. Generous: only bounds a hang.
	deadline := time.Now().Add(time.Minute)
	for syscall.Kill(-pgid, 0) == nil {
		if time.Now().After(deadline) {
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			t.Fatal("the server's process group outlived Shutdown(ended ctx) by a minute: it was not killed")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := m.Shutdown(context.Background()); err != nil {
		t.Fatalf("Shutdown after the cleanup = %v", err)
	}
}

// TestShutdownWaitsForGroupChildren: a server that exits at the end of its
// stdin while a child in its process group needs a little longer (npx and
// node) gets the rest of its grace for that child before the group is
// killed.
func TestShutdownWaitsForGroupChildren(t *testing.T) {
	m, err := NewManager(ManagerConfig{})
	if err != nil {
		t.Fatal(err)
	}
	m.exitGrace = time.Hour // the child ends well within it
	marker := filepath.Join(t.TempDir(), "done")
	// The child keeps stderr open, as node does, and ends 1.5 s after the
	// server (its parent's pid, $$, once exec'd): after pipeGrace.
	script := `(while kill -0 $$ 2>/dev/null; do sleep 0.05; done; sleep 1.5; echo done > "$1") </dev/null >/dev/null & exec "$0"`
	if err := m.Add(testServer("wrapper", script, marker)); err != nil {
		t.Fatal(err)
	}
	connect(t, m, "wrapper")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute) // bounds a hang only
	defer cancel()
	if err := m.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(marker); err != nil {
		t.Fatalf("the server's child was killed before it ended: %v", err)
	}
}
