package operator_test

import (
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// A program whose tools are all local (testdata/localtools imports only
// operator) does not link the MCP client: MCP tools come through
// mcp/mcptool, which only programs using MCP import.
func TestLocalToolsDoNotLinkMCP(t *testing.T) {
	if testing.Short() {
		t.Skip("runs go list")
	}
	gobin := filepath.Join(runtime.GOROOT(), "bin", "go")
	out, err := exec.Command(gobin, "list", "-deps", "./testdata/localtools").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps: %v\n%s", err, out)
	}
	deps := strings.Fields(string(out))
	if len(deps) < 10 || !contains(deps, "github.com/agentgraph/agentgraph/operator") {
		t.Fatalf("go list printed no plausible dependency list:\n%s", out)
	}
	for _, d := range deps {
		if strings.HasPrefix(d, "github.com/mark3labs/mcp-go") || d == "github.com/agentgraph/agentgraph/mcp" || strings.HasPrefix(d, "github.com/agentgraph/agentgraph/mcp/") {
			t.Errorf("a program with only local tools links %s", d)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}
