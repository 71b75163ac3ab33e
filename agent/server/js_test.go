package server_test

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/memory"
)

// nodeModules returns the npm packages of testdata/npm, skipping the test
// when node or the packages are missing.
func nodeModules(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("node"); err != nil {
		t.Skip("node is not installed; install Node.js 20+ to run the official JS client tests")
	}
	dir, err := filepath.Abs("testdata/npm/node_modules")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "@langchain", "langgraph-sdk")); err != nil {
		t.Skip("@langchain/langgraph-sdk is not installed; run: npm ci --prefix agent/server/testdata/npm")
	}
	return dir
}

// TestOfficialJSClient drives the server with the official
// @langchain/langgraph-sdk client: each script under testdata/js prints an
// "ok:" line per check and fails on the first broken one.
func TestOfficialJSClient(t *testing.T) {
	modules := nodeModules(t)
	for _, script := range []string{"smoke.mjs", "runs.mjs", "multitask.mjs", "resume.mjs", "store.mjs", "threads.mjs", "streammodes.mjs", "assistants.mjs"} {
		t.Run(script, func(t *testing.T) {
			ts := newTestServer(t, server.Config{Authenticate: apiKeys(t, map[string]string{"test-key-0123456789": "tester"}), Items: memory.NewInMemoryItems(memory.InMemoryItemsConfig{})})
			runScript(t, modules, script, ts.URL, "test-key-0123456789")
		})
	}
	// The same client flows on the embedded SQLite store and checkpointer.
	for _, script := range []string{"smoke.mjs", "multitask.mjs", "threads.mjs", "assistants.mjs"} {
		t.Run("sqlite/"+script, func(t *testing.T) {
			cfg := sqliteConfig(t)
			cfg.Authenticate = apiKeys(t, map[string]string{"test-key-0123456789": "tester"})
			ts := newTestServer(t, cfg)
			runScript(t, modules, script, ts.URL, "test-key-0123456789")
		})
	}
}

func runScript(t *testing.T, modules, script, url, key string) {
	t.Helper()
	// The scripts import the SDK by name: link the packages next to them.
	dir := t.TempDir()
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"lib.mjs", script} {
		b, err := os.ReadFile(filepath.Join("testdata", "js", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// A guard against a hung script, far above what a script takes.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "API="+url, "API_KEY="+key, "LANGGRAPH_API_KEY=", "LANGSMITH_API_KEY=", "LANGCHAIN_API_KEY=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	t.Logf("%s:\n%s", script, out.Bytes())
	if err != nil {
		t.Fatalf("%s failed: %v", script, err)
	}
}
