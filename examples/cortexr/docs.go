package cortexr

import (
	"embed"
	"io/fs"

	"github.com/agentgraph/agentgraph/examples/cortexr/rag"
)

// DocumentsServer is the name of the document server (package rag) in the
// default server set.
const DocumentsServer = rag.ServerName

//go:embed demo
var demoFS embed.FS

// DemoDocuments returns the bundled offline document set: six documents
// (remote work policy, espresso guide, Kyoto travel notes, solar panels,
// garden notes, a bicycle maintenance guide; Markdown, text, HTML and a
// two-page PDF printed from testdata/bicycle_maintenance.html) and the page https://example.com
// served from a saved copy, embedded with rag.HashEmbedder, the offline
// lexical embedding. Set Fetcher to rag.HTTPFetcher{} to read pages from the
// web and Embedder to a rag.HTTPEmbedder for a real embedding model.
func DemoDocuments() rag.Config {
	docs, _ := fs.Sub(demoFS, "demo/documents")
	pages, _ := fs.Sub(demoFS, "demo/pages")
	return rag.Config{Docs: docs, URLs: []string{"https://example.com"}, Fetcher: rag.OfflinePages{FS: pages}}
}
