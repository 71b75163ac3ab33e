// Package knowledge is an MCP server that searches a knowledge base of
// markdown documents with BM25 ranking.
//
// [New] returns a configured *server.MCPServer from
// github.com/mark3labs/mcp-go, ready to be served over stdio
// (server.ServeStdio), streamable HTTP, or connected in-process with
// client.NewInProcessClient. By default it serves a bundled corpus about
// Acme Analytics, a fictional analytics company: products, pricing tiers,
// competitor notes, support, security, onboarding, API limits and more
// ([Corpus] returns it); Config.Documents swaps in any directory of markdown.
//
// Each document is split into passages at its level-two headings ("## "), and
// passages are ranked with BM25 over their document title, heading and text.
// The server offers these tools:
//
//   - search_knowledge(query, top_k): the best passages for a query, as text
//     and as structured content ([SearchResult]). Sends progress
//     notifications when the call carries a progress token.
//   - get_document(name): the full markdown of one document.
//   - list_documents(): the names and titles of all documents.
//   - book_demo(email, date, product): books a product demo. Whatever the
//     caller left out is asked from the user through an MCP elicitation; the
//     user may decline or cancel, and nothing is booked then.
//
// Bad arguments are reported as tool errors (isError) whose message names the
// argument and says what is expected.
package knowledge
