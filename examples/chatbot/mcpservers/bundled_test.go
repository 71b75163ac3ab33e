package mcpservers_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/clienttest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestBundled(t *testing.T) {
	want := map[string][]string{
		"knowledge":  {"book_demo", "get_document", "list_documents", "search_knowledge"},
		"calculator": {"calculate", "chart", "run_code"},
		"websearch":  {"fetch_page", "web_search"},
	}
	got := map[string][]string{}
	seen := map[string]string{}
	for _, b := range mcpservers.Bundled() {
		s, err := b.New()
		if err != nil {
			t.Fatalf("%s: %v", b.Name, err)
		}
		if b.Description == "" {
			t.Errorf("%s has no description", b.Name)
		}
		c := clienttest.InProcess(t, s, clienttest.Options{})
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
		res, err := c.ListTools(ctx, mcp.ListToolsRequest{})
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range res.Tools {
			got[b.Name] = append(got[b.Name], tool.Name)
			if other, dup := seen[tool.Name]; dup {
				t.Errorf("tool %s is offered by both %s and %s", tool.Name, other, b.Name)
			}
			seen[tool.Name] = b.Name
			if tool.Description == "" {
				t.Errorf("%s.%s has no description", b.Name, tool.Name)
			}
		}
		slices.Sort(got[b.Name])
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bundled tools (-want +got):\n%s", diff)
	}
}
