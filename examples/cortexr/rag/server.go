package rag

import (
	"context"
	"fmt"
	"strings"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// ServerName is the name NewServer's MCP server reports.
const ServerName = "documents"

// ServerDescription is the catalogue line an agent's perception reads for
// the server.
const ServerDescription = "Stored documents and web pages: search_stored_documents(query, k) finds passages of the indexed documents with their source and score; convert_webpage_url_into_markdown(url) returns a web page's clean content as Markdown, for summarising a webpage."

type hits struct {
	Result []Hit `json:"result"`
	// Embedding names the embedding that scored the hits.
	Embedding string `json:"embedding"`
}

type markdown struct {
	Result string `json:"result"`
}

// NewServer returns an MCP server over the store with the seed's RAG tools:
// search_stored_documents and convert_webpage_url_into_markdown. Results are
// structured content {"result": ...}; bad arguments and failures are tool
// errors that say what was wrong.
func NewServer(s *Store) *server.MCPServer {
	srv := server.NewMCPServer(ServerName, "1.0.0", server.WithToolCapabilities(false))
	srv.AddTool(mcpgo.NewTool("search_stored_documents",
		mcpgo.WithDescription("Search the stored documents for passages relevant to a query. Returns up to k passages, best first, each with its text, source document, chunk id and cosine score."),
		mcpgo.WithString("query", mcpgo.Required(), mcpgo.Description("What to look for, in words.")),
		mcpgo.WithNumber("k", mcpgo.Description("How many passages to return; default 5, at most 20.")),
		mcpgo.WithOutputSchema[hits](),
		mcpgo.WithReadOnlyHintAnnotation(true),
	), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		q, err := req.RequireString("query")
		if err != nil {
			return mcpgo.NewToolResultError("argument query: " + err.Error()), nil
		}
		k := int(req.GetFloat("k", 5))
		if k < 1 || k > 20 {
			return mcpgo.NewToolResultError(fmt.Sprintf("argument k is %d; use 1 to 20", k)), nil
		}
		found, err := s.Search(ctx, q, k)
		if err != nil {
			return mcpgo.NewToolResultError(err.Error()), nil
		}
		var b strings.Builder
		for _, h := range found {
			fmt.Fprintf(&b, "%s\n[Source: %s, ID: %s, score %.3f]\n\n", h.Text, h.Source, h.ChunkID, h.Score)
		}
		if found == nil {
			found = []Hit{}
		}
		return mcpgo.NewToolResultStructured(hits{Result: found, Embedding: s.Embedder().Name()}, b.String()), nil
	})
	srv.AddTool(mcpgo.NewTool("convert_webpage_url_into_markdown",
		mcpgo.WithDescription("Return a web page's main content as clean Markdown, without navigation, scripts and clutter."),
		mcpgo.WithString("url", mcpgo.Required(), mcpgo.Description("The page's http(s) URL, such as https://example.com.")),
		mcpgo.WithOutputSchema[markdown](),
		mcpgo.WithReadOnlyHintAnnotation(true),
	), func(ctx context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		u, err := req.RequireString("url")
		if err != nil {
			return mcpgo.NewToolResultError("argument url: " + err.Error()), nil
		}
		md, err := s.Page(ctx, u)
		if err != nil {
			return mcpgo.NewToolResultError(err.Error()), nil
		}
		return mcpgo.NewToolResultStructured(markdown{Result: md}, md), nil
	})
	return srv
}
