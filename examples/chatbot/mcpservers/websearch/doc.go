// Package websearch is an MCP server that imitates a web search engine over a
// bundled, offline corpus of web pages, so a chatbot can demonstrate web
// research with no network access.
//
// [New] returns a configured *server.MCPServer from
// github.com/mark3labs/mcp-go, ready to be served over stdio or connected
// in-process. The bundled pages ([Pages]) live under the reserved example
// domains (example.com, example.org, example.net) and cover the competitors of
// the fictional company Acme Analytics and their pricing, industry articles
// and a few general reference pages. Config.Pages swaps in your own pages.
//
// Pages are ranked with BM25 over their title (counted twice), snippet and
// body. Tools:
//
//   - web_search(query, max_results): ranked results with title, URL and
//     snippet, as text and as structured content ([SearchResult]). Sends
//     progress notifications when the call carries a progress token.
//   - fetch_page(url): the full text of a page found by web_search.
//
// Bad arguments are reported as tool errors (isError) whose message names the
// argument and says what is expected.
package websearch
