package knowledge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/clienttest"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/knowledge"
)

// cmd is the server command, built and serving HTTP for the stdio and http tests.
var cmd clienttest.Command

func TestMain(m *testing.M) {
	os.Exit(clienttest.Main(m, "github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/cmd/knowledge", &cmd))
}

// transports runs f once per way the chatbot connects to a bundled server.
func transports(t *testing.T, o clienttest.Options, f func(t *testing.T, c *clienttest.Client)) {
	t.Run("inprocess", func(t *testing.T) {
		s, err := knowledge.New(knowledge.Config{})
		if err != nil {
			t.Fatal(err)
		}
		f(t, clienttest.InProcess(t, s, o))
	})
	t.Run("stdio", func(t *testing.T) {
		f(t, clienttest.Stdio(t, cmd.Binary, o))
	})
	t.Run("http", func(t *testing.T) {
		// mcp-go v1.2.1's streamable HTTP server can drop the last progress
		// notification of a 2026-07-28 call, so calls that check progress
		// use 2025-11-25 there; the elicitation tests cover both protocols.
		ho := o
		if o.Elicit == nil {
			ho.Legacy = true
		}
		f(t, clienttest.HTTP(t, cmd.HTTP.URL, ho))
	})
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestListTools(t *testing.T) {
	transports(t, clienttest.Options{}, func(t *testing.T, c *clienttest.Client) {
		res, err := c.ListTools(ctx(t), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		if diff := cmp.Diff([]string{"book_demo", "get_document", "list_documents", "search_knowledge"}, names); diff != "" {
			t.Errorf("tools (-want +got):\n%s", diff)
		}
	})
}

func TestSearchRanking(t *testing.T) {
	tests := []struct {
		query   string
		doc     string
		section string
	}{
		{"How much does the Team plan cost per editor?", "pricing", "Team"},
		{"compare our pricing to competitors", "competitor-comparison", ""},
		{"Acme Analytics pricing plans", "pricing", ""},
		{"our pricing tiers", "pricing", ""},
		{"how do I book a demo", "faq", "How do we book a demo?"},
		{"How does Northwind Metrics pricing compare?", "competitor-comparison", "Northwind Metrics"},
		{"Can I get the SOC 2 report?", "security", "Certifications"},
		{"what happens on HTTP 429 rate limit", "api-limits", "When a limit is reached"},
		{"urgent response time", "support-policy", "Response targets"},
		{"uptime service credits", "sla", "Service credits"},
		// A count and a word written as one: the corpus's "multi-factor".
		{"is twofactor authentication enforced", "security", "Access control"},
		{"multifactor login for admins", "security", "Access control"},
		{"singletenant hosting", "faq", "Is there an on-premises version?"},
	}
	transports(t, clienttest.Options{}, func(t *testing.T, c *clienttest.Client) {
		for _, tt := range tests {
			t.Run(tt.query, func(t *testing.T) {
				res, prog, err := c.Call(ctx(t), "search_knowledge", map[string]any{"query": tt.query, "top_k": 3}, true)
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError {
					t.Fatalf("tool error: %s", clienttest.Text(res))
				}
				var sr knowledge.SearchResult
				clienttest.Structured(t, res, &sr)
				if len(sr.Results) == 0 || len(sr.Results) > 3 {
					t.Fatalf("got %d results, want 1 to 3", len(sr.Results))
				}
				top := sr.Results[0]
				if top.Document != tt.doc || (tt.section != "" && top.Section != tt.section) {
					t.Errorf("top result %s § %s, want %s § %s", top.Document, top.Section, tt.doc, tt.section)
				}
				for i, r := range sr.Results {
					if r.Rank != i+1 || r.Text == "" || (i > 0 && r.Score > sr.Results[i-1].Score) {
						t.Errorf("result %d out of order or empty: %+v", i, r)
					}
				}
				if !strings.Contains(clienttest.Text(res), "[1] "+top.Document) {
					t.Errorf("text result does not cite the top document:\n%s", clienttest.Text(res))
				}
				if len(prog) < 2 || prog[len(prog)-1].Progress != 2 || prog[len(prog)-1].Total != 2 {
					t.Errorf("progress = %+v, want notifications ending at 2 of 2", prog)
				}
			})
		}
	})
}

func TestSearchNoMatch(t *testing.T) {
	s, err := knowledge.New(knowledge.Config{})
	if err != nil {
		t.Fatal(err)
	}
	c := clienttest.InProcess(t, s, clienttest.Options{})
	res, _, err := c.Call(ctx(t), "search_knowledge", map[string]any{"query": "zeppelin"}, false)
	if err != nil {
		t.Fatal(err)
	}
	var sr knowledge.SearchResult
	clienttest.Structured(t, res, &sr)
	if res.IsError || len(sr.Results) != 0 || !strings.Contains(clienttest.Text(res), "No passages match") {
		t.Errorf("no-match result = %+v", res)
	}
}

func TestBadArguments(t *testing.T) {
	tests := []clienttest.BadCall{
		{Tool: "search_knowledge", Args: map[string]any{}, Want: "argument query is required"},
		{Tool: "search_knowledge", Args: map[string]any{"query": "  "}, Want: "argument query is empty"},
		{Tool: "search_knowledge", Args: map[string]any{"query": 3}, Want: "argument query must be a string"},
		{Tool: "search_knowledge", Args: map[string]any{"query": "x", "top_k": 0}, Want: "argument top_k must be a whole number from 1 to 20"},
		{Tool: "search_knowledge", Args: map[string]any{"query": "x", "top_k": "five"}, Want: "argument top_k must be a whole number"},
		{Tool: "search_knowledge", Args: map[string]any{"query": "x", "top_k": 2.5}, Want: "argument top_k"},
		{Tool: "get_document", Args: map[string]any{}, Want: "argument name is required"},
		{Tool: "get_document", Args: map[string]any{"name": "nope"}, Want: "argument name: no document \"nope\"; use one of: api-limits"},
		{Tool: "book_demo", Args: map[string]any{"email": "not an address", "date": "2030-01-07"}, Want: "email: \"not an address\" is not an email address"},
		{Tool: "book_demo", Args: map[string]any{"email": "a@b.example", "date": "next week"}, Want: "date: \"next week\" is not a date"},
		{Tool: "book_demo", Args: map[string]any{"email": "a@b.example", "date": "2030-01-05"}, Want: "is a Saturday"},
		{Tool: "book_demo", Args: map[string]any{"email": "a@b.example", "date": "2020-01-07"}, Want: "is not after today"},
		{Tool: "book_demo", Args: map[string]any{"email": "a@b.example", "date": "2030-01-07", "product": "Toaster"}, Want: "product: \"Toaster\" is not a product"},
	}
	transports(t, clienttest.Options{}, func(t *testing.T, c *clienttest.Client) {
		clienttest.CheckBadCalls(t, c, ctx, tests)
	})
}

func TestGetAndListDocuments(t *testing.T) {
	transports(t, clienttest.Options{}, func(t *testing.T, c *clienttest.Client) {
		for _, name := range []string{"pricing", "Pricing.md"} {
			res, _, err := c.Call(ctx(t), "get_document", map[string]any{"name": name}, false)
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || !strings.HasPrefix(clienttest.Text(res), "# Acme Analytics: pricing and plans\n") {
				t.Errorf("get_document(%q) = %q", name, clienttest.Text(res))
			}
		}
		res, _, err := c.Call(ctx(t), "list_documents", nil, false)
		if err != nil {
			t.Fatal(err)
		}
		var list struct {
			Documents []knowledge.DocumentInfo `json:"documents"`
		}
		clienttest.Structured(t, res, &list)
		if len(list.Documents) != 13 {
			t.Errorf("list_documents gave %d documents, want 13", len(list.Documents))
		}
		i := slices.IndexFunc(list.Documents, func(d knowledge.DocumentInfo) bool { return d.Name == "pricing" })
		if i < 0 || list.Documents[i].Title != "Acme Analytics: pricing and plans" || !slices.Contains(list.Documents[i].Sections, "Enterprise") {
			t.Errorf("pricing entry = %+v", list.Documents)
		}
	})
}

func TestCustomDocuments(t *testing.T) {
	fsys := fstest.MapFS{
		"a.md": {Data: []byte("# Alpha\n\nIntro about gophers.\n\n## Habitat\n\nGophers live in burrows.\n")},
		"b.md": {Data: []byte("No title here, just rabbits.\n")},
	}
	s, err := knowledge.New(knowledge.Config{Documents: fsys, Name: "zoo"})
	if err != nil {
		t.Fatal(err)
	}
	c := clienttest.InProcess(t, s, clienttest.Options{})
	res, _, err := c.Call(ctx(t), "search_knowledge", map[string]any{"query": "where do gophers live"}, false)
	if err != nil {
		t.Fatal(err)
	}
	var sr knowledge.SearchResult
	clienttest.Structured(t, res, &sr)
	want := []knowledge.Passage{{Rank: 1, Document: "a", Title: "Alpha", Section: "Habitat", Text: "Gophers live in burrows."},
		{Rank: 2, Document: "a", Title: "Alpha", Text: "Intro about gophers."}}
	if diff := cmp.Diff(want, sr.Results, cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".Score" }, cmp.Ignore())); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}

	if _, err := knowledge.New(knowledge.Config{Documents: fstest.MapFS{"x.txt": {}}}); err == nil || !strings.Contains(err.Error(), "no *.md files") {
		t.Errorf("New with no markdown: err = %v", err)
	}
}

func TestTopics(t *testing.T) {
	got, err := knowledge.Topics(nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"pricing and plans", "security and compliance", "company overview", "API rate limits"} {
		if !slices.Contains(got, want) {
			t.Errorf("Topics(bundled) = %q, lacks %q", got, want)
		}
	}
	// Titles that share no opening words are kept whole; a document
	// without a title is named by its file.
	got, err = knowledge.Topics(fstest.MapFS{
		"a.md": {Data: []byte("# Widgets: sizes\n\ntext\n")},
		"b.md": {Data: []byte("# Gadgets\n\ntext\n")},
		"c.md": {Data: []byte("text only\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"Widgets: sizes", "Gadgets", "c"}; !slices.Equal(got, want) {
		t.Errorf("Topics = %q, want %q", got, want)
	}
	got, err = knowledge.Topics(fstest.MapFS{
		"a.md": {Data: []byte("# Acme: sizes\n")},
		"b.md": {Data: []byte("# Acme: colours and shapes\n")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"sizes", "colours and shapes"}; !slices.Equal(got, want) {
		t.Errorf("Topics = %q, want %q", got, want)
	}
	// Words every title opens with are dropped only up to a separator.
	for _, c := range []struct {
		titles []string
		want   []string
	}{
		{[]string{"Security overview", "Security FAQ"}, []string{"Security overview", "Security FAQ"}},
		{[]string{"Billing and invoices", "Billing and refunds"}, []string{"Billing and invoices", "Billing and refunds"}},
		{[]string{"Acme - pricing", "Acme - refunds, credits"}, []string{"pricing", "refunds, credits"}},
		{[]string{"Acme Cloud: Security overview", "Acme Cloud: Security FAQ"}, []string{"Security overview", "Security FAQ"}},
	} {
		fsys := fstest.MapFS{}
		for i, title := range c.titles {
			fsys[fmt.Sprintf("%d.md", i)] = &fstest.MapFile{Data: []byte("# " + title + "\n\ntext\n")}
		}
		got, err := knowledge.Topics(fsys)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("Topics(%q) = %q, want %q", c.titles, got, c.want)
		}
	}
	if _, err := knowledge.Topics(fstest.MapFS{}); !errors.Is(err, knowledge.ErrNoDocuments) {
		t.Errorf("Topics(empty) error = %v, want ErrNoDocuments", err)
	}
}

// TestDescriptionListsTopics checks that search_knowledge's description
// lists the topics as a JSON list, so that a client reads back titles
// that hold commas and full stops whole.
func TestDescriptionListsTopics(t *testing.T) {
	s, err := knowledge.New(knowledge.Config{Documents: fstest.MapFS{
		"a.md": {Data: []byte("# Shop: returns, refunds and credits\n\ntext\n")},
		"b.md": {Data: []byte("# Shop: shipping. Rates and times\n\ntext\n")},
		"c.md": {Data: []byte("# Shop: gift cards\n\ntext\n")},
	}})
	if err != nil {
		t.Fatal(err)
	}
	c := clienttest.InProcess(t, s, clienttest.Options{})
	res, err := c.ListTools(ctx(t), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(res.Tools, func(tool mcp.Tool) bool { return tool.Name == "search_knowledge" })
	if i < 0 {
		t.Fatal("no search_knowledge tool")
	}
	desc := res.Tools[i].Description
	_, list, ok := strings.Cut(desc, "The documents cover: ")
	if !ok {
		t.Fatalf("description names no topics: %q", desc)
	}
	var got []string
	if err := json.NewDecoder(strings.NewReader(list)).Decode(&got); err != nil {
		t.Fatalf("topics in %q are not a JSON list: %v", desc, err)
	}
	if want := []string{"returns, refunds and credits", "shipping. Rates and times", "gift cards"}; !slices.Equal(got, want) {
		t.Errorf("topics = %q, want %q", got, want)
	}
}
