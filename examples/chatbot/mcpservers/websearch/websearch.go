package websearch

import (
	"context"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/args"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/bm25"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/progress"
)

// Name is the server name reported to clients when Config.Name is empty.
const Name = "offline-websearch"

// Version is the server version reported to clients.
const Version = "1.0.0"

// Limits on web_search's max_results argument.
const (
	DefaultMaxResults = 5
	MaxMaxResults     = 10
)

// Config configures the server. The zero value serves the bundled pages.
type Config struct {
	// Name is the server name reported to clients. Empty means Name.
	Name string
	// Pages is the corpus. Nil means the bundled pages ([Pages]).
	Pages []Page
	// Logger receives a debug line per search. Nil means no logging.
	Logger *zap.Logger
}

// Result is one web_search hit.
type Result struct {
	// Rank is the 1-based position in the results.
	Rank int `json:"rank"`
	// Title, URL and Snippet are the page's.
	Title   string `json:"title"`
	URL     string `json:"url"`
	Snippet string `json:"snippet"`
	// Score is the BM25 score; higher is better.
	Score float64 `json:"score"`
}

// SearchResult is the structured content of a web_search result.
type SearchResult struct {
	// Query is the query as given.
	Query string `json:"query"`
	// Results are the hits, best first; empty when nothing matched.
	Results []Result `json:"results"`
}

type engine struct {
	pages []Page
	byURL map[string]int
	index *bm25.Index
	log   *zap.Logger
}

// New builds the offline web-search server. It fails when a configured page
// has no title, an invalid URL, or a URL used twice.
func New(cfg Config) (*server.MCPServer, error) {
	pages := cfg.Pages
	if pages == nil {
		pages = Pages()
	}
	byURL, err := checkPages(pages)
	if err != nil {
		return nil, err
	}
	docs := make([]bm25.Document, len(pages))
	for i, p := range pages {
		// The title is indexed twice: a page whose title matches is usually
		// the page the searcher wants, as with title boosts in web engines.
		docs[i] = bm25.Document{ID: p.URL, Text: p.Title + "\n" + p.Title + "\n" + p.Snippet + "\n" + p.Body}
	}
	ix, err := bm25.New(docs, bm25.Params{})
	if err != nil {
		return nil, fmt.Errorf("websearch: indexing: %w", err)
	}
	e := &engine{pages: pages, byURL: byURL, index: ix, log: cfg.Logger}
	if e.log == nil {
		e.log = zap.NewNop()
	}
	name := cfg.Name
	if name == "" {
		name = Name
	}
	s := server.NewMCPServer(name, Version,
		server.WithToolCapabilities(false),
		server.WithRecovery(),
		server.WithInstructions("An offline web search: web_search finds pages in a bundled snapshot of the web "+
			"(competitors' pricing, industry articles, reference pages); fetch_page reads one."),
	)
	s.AddTool(mcp.NewTool("web_search",
		mcp.WithDescription("Search the web (an offline snapshot) and return ranked results with title, URL and snippet."),
		mcp.WithString("query", mcp.Required(), mcp.Description("Search terms, e.g. \"Northwind Metrics pricing\".")),
		mcp.WithInteger("max_results", mcp.Description(fmt.Sprintf("How many results to return, 1 to %d.", MaxMaxResults)),
			mcp.DefaultNumber(DefaultMaxResults), mcp.Min(1), mcp.Max(MaxMaxResults)),
		mcp.WithOutputSchema[SearchResult](),
		mcp.WithReadOnlyHintAnnotation(true),
	), e.search)
	s.AddTool(mcp.NewTool("fetch_page",
		mcp.WithDescription("Return the full text of a web page found by web_search."),
		mcp.WithString("url", mcp.Required(), mcp.Description("The page URL, as given in a web_search result.")),
		mcp.WithOutputSchema[Page](),
		mcp.WithReadOnlyHintAnnotation(true),
	), e.fetch)
	return s, nil
}

func (e *engine) search(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	query, errResult := args.String(req, "query", "the words to search for")
	if errResult != nil {
		return errResult, nil
	}
	limit, errResult := args.Int(req, "max_results", DefaultMaxResults, 1, MaxMaxResults)
	if errResult != nil {
		return errResult, nil
	}
	p := progress.Start(ctx, req, 2)
	p.Report(ctx, 0, fmt.Sprintf("Searching %d pages", len(e.pages)))
	hits := e.index.Search(query, limit)
	p.Report(ctx, 1, fmt.Sprintf("Found %d results", len(hits)))

	res := SearchResult{Query: query, Results: make([]Result, 0, len(hits))}
	var text strings.Builder
	if len(hits) == 0 {
		fmt.Fprintf(&text, "No web results for %q.", query)
	} else {
		fmt.Fprintf(&text, "Web results for %q:\n", query)
	}
	for i, h := range hits {
		pg := e.pages[h.Index]
		r := Result{Rank: i + 1, Title: pg.Title, URL: pg.URL, Snippet: pg.Snippet, Score: h.Score}
		res.Results = append(res.Results, r)
		fmt.Fprintf(&text, "\n%d. %s\n   %s\n   %s\n", r.Rank, r.Title, r.URL, r.Snippet)
	}
	p.Report(ctx, 2, "Done")
	e.log.Debug("web_search", zap.String("query", query), zap.Int("results", len(hits)))
	return mcp.NewToolResultStructured(res, text.String()), nil
}

func (e *engine) fetch(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	raw, errResult := args.String(req, "url", "a URL from a web_search result")
	if errResult != nil {
		return errResult, nil
	}
	i, ok := e.byURL[normalise(raw)]
	if !ok {
		return mcp.NewToolResultErrorf("argument url: no page at %q in the offline web snapshot; use a URL from a web_search result", raw), nil
	}
	pg := e.pages[i]
	return mcp.NewToolResultStructured(pg, fmt.Sprintf("# %s\n%s\n\n%s\n", pg.Title, pg.URL, pg.Body)), nil
}
