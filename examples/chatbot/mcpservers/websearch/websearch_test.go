package websearch_test

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/clienttest"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/websearch"
)

// cmd is the server command, built and serving HTTP for the stdio and http tests.
var cmd clienttest.Command

func TestMain(m *testing.M) {
	os.Exit(clienttest.Main(m, "github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/cmd/websearch", &cmd))
}

func transports(t *testing.T, f func(t *testing.T, c *clienttest.Client)) {
	t.Run("inprocess", func(t *testing.T) {
		s, err := websearch.New(websearch.Config{})
		if err != nil {
			t.Fatal(err)
		}
		f(t, clienttest.InProcess(t, s, clienttest.Options{}))
	})
	t.Run("stdio", func(t *testing.T) {
		f(t, clienttest.Stdio(t, cmd.Binary, clienttest.Options{Legacy: true}))
	})
	t.Run("http", func(t *testing.T) {
		// 2025-11-25: mcp-go v1.2.1's streamable HTTP server can drop the
		// last progress notification of a 2026-07-28 call.
		f(t, clienttest.HTTP(t, cmd.HTTP.URL, clienttest.Options{Legacy: true}))
	})
	t.Run("stdio-2026-07-28", func(t *testing.T) {
		f(t, clienttest.Stdio(t, cmd.Binary, clienttest.Options{}))
	})
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return c
}

func TestBundledPages(t *testing.T) {
	pages := websearch.Pages()
	if len(pages) < 20 {
		t.Errorf("%d bundled pages, want at least 20", len(pages))
	}
	for _, p := range pages {
		if p.Title == "" || p.Snippet == "" || p.Body == "" {
			t.Errorf("page %s lacks a title, snippet or body", p.URL)
		}
		if !strings.HasPrefix(p.URL, "https://example.") {
			t.Errorf("page URL %s is not under a reserved example domain", p.URL)
		}
	}
}

func TestListTools(t *testing.T) {
	transports(t, func(t *testing.T, c *clienttest.Client) {
		res, err := c.ListTools(ctx(t), mcp.ListToolsRequest{})
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, tool := range res.Tools {
			names = append(names, tool.Name)
		}
		slices.Sort(names)
		if diff := cmp.Diff([]string{"fetch_page", "web_search"}, names); diff != "" {
			t.Errorf("tools (-want +got):\n%s", diff)
		}
	})
}

func TestSearchRanking(t *testing.T) {
	tests := []struct {
		query string
		first []string // URLs of the first results, in any order
	}{
		{"Northwind Metrics pricing", []string{"https://example.com/northwind-metrics/pricing", "https://example.org/news/northwind-metrics-price-increase"}},
		{"competitors pricing Northwind Globex Initech", []string{"https://example.com/blog/bi-pricing-models-2026", "https://example.net/blog/viewer-licenses-hidden-cost"}},
		{"Globex BI capacity price", []string{"https://example.org/globex-bi/pricing"}},
		{"Initech Dashboards plans", []string{"https://example.net/initech/pricing"}},
		{"what is BM25 ranking", []string{"https://example.com/wiki/okapi-bm25"}},
		{"HTTP 429 Retry-After", []string{"https://example.com/blog/http-429-retry-after"}},
	}
	transports(t, func(t *testing.T, c *clienttest.Client) {
		for _, tt := range tests {
			t.Run(tt.query, func(t *testing.T) {
				res, prog, err := c.Call(ctx(t), "web_search", map[string]any{"query": tt.query}, true)
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError {
					t.Fatalf("tool error: %s", clienttest.Text(res))
				}
				var sr websearch.SearchResult
				clienttest.Structured(t, res, &sr)
				if len(sr.Results) == 0 || len(sr.Results) > websearch.DefaultMaxResults {
					t.Fatalf("got %d results, want 1 to %d", len(sr.Results), websearch.DefaultMaxResults)
				}
				var urls []string
				for _, r := range sr.Results {
					urls = append(urls, r.URL)
				}
				if len(urls) < len(tt.first) {
					t.Fatalf("results %v, want at least %d", urls, len(tt.first))
				}
				top := slices.Sorted(slices.Values(urls[:len(tt.first)]))
				if diff := cmp.Diff(tt.first, top); diff != "" {
					t.Errorf("first results (-want +got):\n%s\nall: %v", diff, urls)
				}
				if !strings.Contains(clienttest.Text(res), "1. "+sr.Results[0].Title+"\n   "+urls[0]) {
					t.Errorf("text result does not list the top hit:\n%s", clienttest.Text(res))
				}
				if len(prog) < 2 || prog[len(prog)-1].Progress != 2 || prog[0].Message == "" {
					t.Errorf("progress = %+v, want messages ending at 2 of 2", prog)
				}
			})
		}
	})
}

func TestMaxResultsAndNoMatch(t *testing.T) {
	transports(t, func(t *testing.T, c *clienttest.Client) {
		res, _, err := c.Call(ctx(t), "web_search", map[string]any{"query": "pricing price plans per user", "max_results": 2}, false)
		if err != nil {
			t.Fatal(err)
		}
		var sr websearch.SearchResult
		clienttest.Structured(t, res, &sr)
		if len(sr.Results) != 2 {
			t.Errorf("max_results 2 gave %d results", len(sr.Results))
		}
		res, _, err = c.Call(ctx(t), "web_search", map[string]any{"query": "zeppelin"}, false)
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError || !strings.Contains(clienttest.Text(res), "No web results") {
			t.Errorf("no-match result %q", clienttest.Text(res))
		}
	})
}

func TestFetchPage(t *testing.T) {
	transports(t, func(t *testing.T, c *clienttest.Client) {
		for _, u := range []string{"https://example.com/northwind-metrics/pricing", "HTTPS://Example.com/northwind-metrics/pricing/"} {
			res, _, err := c.Call(ctx(t), "fetch_page", map[string]any{"url": u}, false)
			if err != nil {
				t.Fatal(err)
			}
			text := clienttest.Text(res)
			if res.IsError || !strings.HasPrefix(text, "# Pricing | Northwind Metrics\nhttps://example.com/northwind-metrics/pricing\n") || !strings.Contains(text, "Pro costs $75") {
				t.Errorf("fetch_page(%s) = %q", u, text)
			}
			var p websearch.Page
			clienttest.Structured(t, res, &p)
			if p.URL != "https://example.com/northwind-metrics/pricing" {
				t.Errorf("structured page URL %q", p.URL)
			}
		}
	})
}

func TestBadArguments(t *testing.T) {
	tests := []clienttest.BadCall{
		{Tool: "web_search", Want: "argument query is required"},
		{Tool: "web_search", Args: map[string]any{"query": ""}, Want: "argument query is empty"},
		{Tool: "web_search", Args: map[string]any{"query": []any{"a"}}, Want: "argument query must be a string, got an array"},
		{Tool: "web_search", Args: map[string]any{"query": "x", "max_results": 11}, Want: "argument max_results must be a whole number from 1 to 10, got 11"},
		{Tool: "web_search", Args: map[string]any{"query": "x", "max_results": true}, Want: "argument max_results must be a whole number from 1 to 10, got a boolean"},
		{Tool: "fetch_page", Want: "argument url is required"},
		{Tool: "fetch_page", Args: map[string]any{"url": "https://example.com/nope"}, Want: "argument url: no page at \"https://example.com/nope\""},
	}
	transports(t, func(t *testing.T, c *clienttest.Client) {
		clienttest.CheckBadCalls(t, c, ctx, tests)
	})
}

func TestNewRejectsBadPages(t *testing.T) {
	tests := []struct {
		name  string
		pages []websearch.Page
		want  string
	}{
		{"no title", []websearch.Page{{URL: "https://example.com/a"}}, "Pages[0] (https://example.com/a) has no Title"},
		{"relative URL", []websearch.Page{{Title: "A", URL: "/a"}}, "Pages[0] URL \"/a\" is not an absolute http(s) URL"},
		{"duplicate URL", []websearch.Page{{Title: "A", URL: "https://example.com/a"}, {Title: "B", URL: "https://EXAMPLE.com/a/"}},
			"Pages[0] and Pages[1] have the same URL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := websearch.New(websearch.Config{Pages: tt.pages})
			if !errors.Is(err, websearch.ErrPage) || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("New error = %v, want ErrPage containing %q", err, tt.want)
			}
		})
	}
}

func TestCustomPages(t *testing.T) {
	s, err := websearch.New(websearch.Config{Pages: []websearch.Page{
		{Title: "Gophers", URL: "https://example.com/gophers", Snippet: "All about gophers", Body: "Gophers dig burrows."},
		{Title: "Rabbits", URL: "https://example.com/rabbits", Snippet: "All about rabbits", Body: "Rabbits also dig."},
	}})
	if err != nil {
		t.Fatal(err)
	}
	c := clienttest.InProcess(t, s, clienttest.Options{})
	res, _, err := c.Call(ctx(t), "web_search", map[string]any{"query": "burrows"}, false)
	if err != nil {
		t.Fatal(err)
	}
	var sr websearch.SearchResult
	clienttest.Structured(t, res, &sr)
	if len(sr.Results) != 1 || sr.Results[0].URL != "https://example.com/gophers" {
		t.Errorf("results %+v", sr.Results)
	}
}
