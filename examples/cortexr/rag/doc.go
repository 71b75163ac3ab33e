// Package rag is Cortex-R's document server (the seed's mcp_server_2):
// documents from a folder (Markdown, text, HTML, PDF) and web pages, converted
// to text, cut with the document package's Chunker, embedded and kept in a
// vector index in process, searched top-k with source and score, and served
// over MCP (NewServer).
//
// Store.Sync re-embeds a document only when the SHA-256 of its text changed
// (Store.Embedded counts embeddings). Embeddings come from an Embedder:
// HTTPEmbedder calls OpenAI's or Ollama's embeddings endpoint; HashEmbedder
// is a deterministic offline embedding (feature hashing of words and
// character trigrams) that measures lexical overlap only and says so in its
// Name. The index is ExactIndex, a brute-force cosine search behind the
// VectorIndex interface: at the demo's scale (about 15 chunks) a query is
// far under a millisecond, and BenchmarkExactIndexSearch grows linearly
// (about 3 ms at 10^3 chunks, 40 ms at 10^4 on a loaded 2-core machine); an
// approximate index (HNSW) is worth its recall loss from about 10^4 chunks.
//
// Web pages come from a Fetcher: HTTPFetcher reads the web, OfflinePages a
// folder of saved pages (testdata/pages holds https://example.com).
//
// PDFs are read with package document/pdf (PDFium in WebAssembly): a PDF
// is extracted again only when its bytes change, and one without a text
// layer (a scan) is listed in SyncReport.Skipped with the reason.
package rag
