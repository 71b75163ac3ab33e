package knowledge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/examples/chatbot/internal/lexicon"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/args"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/bm25"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/progress"
)

// Name is the server name reported to clients when Config.Name is empty.
const Name = "acme-knowledge"

// Version is the server version reported to clients.
const Version = "1.0.0"

// Limits on search_knowledge's top_k argument.
const (
	DefaultTopK = 5
	MaxTopK     = 20
)

// ErrNoDocuments reports a Config.Documents file system without markdown.
var ErrNoDocuments = errors.New("knowledge: no documents")

// Config configures the server. The zero value serves the bundled corpus.
type Config struct {
	// Name is the server name reported to clients. Empty means Name.
	Name string
	// Documents holds the markdown documents, *.md files at its root; each
	// file's first "# " heading is its title and "## " headings split it into
	// passages. Nil means the bundled Acme Analytics corpus ([Corpus]).
	Documents fs.FS
	// Now returns the current time; book_demo only accepts dates after
	// today. Nil means time.Now.
	Now func() time.Time
	// Logger receives a debug line per search and per booking. Nil means
	// no logging.
	Logger *zap.Logger
}

// Passage is one ranked search result.
type Passage struct {
	// Rank is the 1-based position in the results.
	Rank int `json:"rank"`
	// Document is the document's name, as accepted by get_document.
	Document string `json:"document"`
	// Title is the document's title.
	Title string `json:"title"`
	// Section is the heading the passage sits under; empty for a
	// document's introduction.
	Section string `json:"section,omitempty"`
	// Score is the BM25 score; higher is better.
	Score float64 `json:"score"`
	// Text is the passage, with paragraphs on single lines.
	Text string `json:"text"`
}

// SearchResult is the structured content of a search_knowledge result.
type SearchResult struct {
	// Query is the query as given.
	Query string `json:"query"`
	// Results are the passages, best first; empty when nothing matched.
	Results []Passage `json:"results"`
}

// DocumentInfo describes one document in list_documents' structured content.
type DocumentInfo struct {
	// Name is the file name without ".md", as get_document accepts it.
	Name string `json:"name"`
	// Title is the text of the document's first "# " heading.
	Title string `json:"title"`
	// Sections are its "## " headings, in order.
	Sections []string `json:"sections"`
}

type kb struct {
	docs     []document
	passages []passage
	index    *bm25.Index
	byName   map[string]int
	now      func() time.Time
	log      *zap.Logger

	guards *lexicon.Guards // which words stand for synonyms, with the documents' names

	vocabOnce sync.Once
	vocab     []string // the corpus's distinct words (vocabulary)
}

// New builds the knowledge-base server. It fails only when Config.Documents
// cannot be read or holds no markdown.
func New(cfg Config) (*server.MCPServer, error) {
	fsys := cfg.Documents
	if fsys == nil {
		fsys = Corpus()
	}
	docs, err := loadDocuments(fsys)
	if err != nil {
		return nil, err
	}
	k := &kb{docs: docs, byName: make(map[string]int, len(docs)), now: cfg.Now, log: cfg.Logger}
	if k.now == nil {
		k.now = time.Now
	}
	if k.log == nil {
		k.log = zap.NewNop()
	}
	var indexed []bm25.Document
	for i, d := range docs {
		k.byName[d.name] = i
		for _, p := range d.passages {
			indexed = append(indexed, bm25.Document{
				ID:   fmt.Sprintf("%s#%d", d.name, len(indexed)),
				Text: d.title + "\n" + p.section + "\n" + p.text,
			})
			k.passages = append(k.passages, p)
		}
	}
	if k.index, err = bm25.New(indexed, bm25.Params{}); err != nil {
		return nil, fmt.Errorf("knowledge: indexing: %w", err)
	}
	k.guards = guardsOf(k.passages)

	name := cfg.Name
	if name == "" {
		name = Name
	}
	s := server.NewMCPServer(name, Version,
		server.WithToolCapabilities(false),
		server.WithElicitation(),
		server.WithRecovery(),
		server.WithInstructions("Search the Acme Analytics knowledge base (products, pricing, competitors, "+
			"support, security, onboarding, API limits) with search_knowledge, read a whole document with "+
			"get_document, and book a product demo with book_demo."),
	)
	s.AddTool(mcp.NewTool("search_knowledge",
		mcp.WithDescription("Search the knowledge base and return the best-matching passages, best first, "+
			"each with its document name and section. "+topicsSentence(topicsOf(docs))),
		mcp.WithString("query", mcp.Required(), mcp.Description("Words to search for, e.g. \"pricing tiers\".")),
		mcp.WithInteger("top_k", mcp.Description(fmt.Sprintf("How many passages to return, 1 to %d.", MaxTopK)),
			mcp.DefaultNumber(DefaultTopK), mcp.Min(1), mcp.Max(MaxTopK)),
		mcp.WithOutputSchema[SearchResult](),
		mcp.WithReadOnlyHintAnnotation(true),
	), k.search)
	s.AddTool(mcp.NewTool("get_document",
		mcp.WithDescription("Return the full markdown of one knowledge-base document."),
		mcp.WithString("name", mcp.Required(), mcp.Description("Document name as shown in search results, e.g. \"pricing\".")),
		mcp.WithReadOnlyHintAnnotation(true),
	), k.getDocument)
	s.AddTool(mcp.NewTool("list_documents",
		mcp.WithDescription("List the knowledge-base documents with their titles and sections."),
		mcp.WithReadOnlyHintAnnotation(true),
	), k.listDocuments)
	s.AddTool(bookDemoTool(), k.bookDemo)
	return s, nil
}

func (k *kb) search(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	query, errResult := args.String(req, "query", "the words to search for")
	if errResult != nil {
		return errResult, nil
	}
	topK, errResult := args.Int(req, "top_k", DefaultTopK, 1, MaxTopK)
	if errResult != nil {
		return errResult, nil
	}
	p := progress.Start(ctx, req, 2)
	p.Report(ctx, 0, fmt.Sprintf("Searching %d passages in %d documents", len(k.passages), len(k.docs)))
	own, extra := k.searchTerms(query)
	hits := k.index.SearchTerms(own, extra, topK)
	p.Report(ctx, 1, fmt.Sprintf("Ranked %d matching passages", len(hits)))

	res := SearchResult{Query: query, Results: make([]Passage, 0, len(hits))}
	var text strings.Builder
	if len(hits) == 0 {
		fmt.Fprintf(&text, "No passages match %q. Try other words, or list_documents to see what is there.", query)
	} else {
		fmt.Fprintf(&text, "%d passages for %q, best first:\n", len(hits), query)
	}
	for i, h := range hits {
		ps := k.passages[h.Index]
		d := k.docs[ps.doc]
		r := Passage{Rank: i + 1, Document: d.name, Title: d.title, Section: ps.section, Score: h.Score, Text: joinLines(ps.text)}
		res.Results = append(res.Results, r)
		where := d.name
		if r.Section != "" {
			where += " § " + r.Section
		}
		fmt.Fprintf(&text, "\n[%d] %s (score %.2f)\n%s\n", r.Rank, where, r.Score, r.Text)
	}
	p.Report(ctx, 2, "Done")
	k.log.Debug("search_knowledge", zap.String("query", query), zap.Int("hits", len(hits)))
	return mcp.NewToolResultStructured(res, text.String()), nil
}

func (k *kb) getDocument(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	name, errResult := args.String(req, "name", "a document name such as \"pricing\"")
	if errResult != nil {
		return errResult, nil
	}
	i, ok := k.byName[strings.TrimSuffix(strings.ToLower(strings.TrimSpace(name)), ".md")]
	if !ok {
		return mcp.NewToolResultErrorf("argument name: no document %q; use one of: %s", name, strings.Join(k.names(), ", ")), nil
	}
	return mcp.NewToolResultText(k.docs[i].markdown), nil
}

func (k *kb) listDocuments(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	infos := make([]DocumentInfo, len(k.docs))
	var text strings.Builder
	for i, d := range k.docs {
		infos[i] = DocumentInfo{Name: d.name, Title: d.title, Sections: []string{}}
		for _, p := range d.passages {
			if p.section != "" {
				infos[i].Sections = append(infos[i].Sections, p.section)
			}
		}
		fmt.Fprintf(&text, "- %s: %s\n", d.name, d.title)
	}
	return mcp.NewToolResultStructured(map[string]any{"documents": infos}, text.String()), nil
}

// Topics returns what the markdown documents of fsys (as
// Config.Documents holds them; nil means the bundled corpus) are about:
// their titles, in the documents' order, without the words every title
// opens with up to a separator, ":" or a dash (the company's name: "Acme
// Analytics: pricing and plans" is "pricing and plans", but "Security
// overview" and "Security FAQ" stay whole). The search_knowledge tool's description names
// them too, so that a client can say what the knowledge base covers.
func Topics(fsys fs.FS) ([]string, error) {
	if fsys == nil {
		fsys = Corpus()
	}
	docs, err := loadDocuments(fsys)
	if err != nil {
		return nil, err
	}
	return topicsOf(docs), nil
}

// topicsOf is Topics of loaded documents.
func topicsOf(docs []document) []string {
	titles := make([][]string, len(docs))
	for i, d := range docs {
		titles[i] = strings.Fields(d.title)
	}
	// The words every title opens with, when there are two titles or more
	// and each has words after them.
	common := 0
	if len(titles) > 1 {
		for ; ; common++ {
			same := true
			for _, t := range titles {
				if len(t) <= common+1 || !strings.EqualFold(strings.TrimRight(t[common], ":"), strings.TrimRight(titles[0][common], ":")) {
					same = false
					break
				}
			}
			if !same {
				break
			}
		}
	}
	topics := make([]string, 0, len(docs))
	for _, t := range titles {
		// Only up to a separator: "Acme: pricing" is "pricing", but
		// "Security overview" and "Security FAQ" stay whole.
		n := common
		for n > 0 && !endsPrefix(t, n) {
			n--
		}
		topic := strings.TrimLeft(strings.Join(t[n:], " "), ":-–— ")
		if topic == "" {
			continue
		}
		if !slices.Contains(topics, topic) {
			topics = append(topics, topic)
		}
	}
	return topics
}

// endsPrefix reports whether the first n words of a title's words end
// at a separator: the n-th word ends with ":", or the word after it is a
// dash ("Acme - pricing").
func endsPrefix(title []string, n int) bool {
	return strings.HasSuffix(title[n-1], ":") || len(title) > n && slices.Contains([]string{"-", "–", "—"}, title[n])
}

// topicsSentence is the sentence of search_knowledge's description that
// names the topics, as a JSON list so that a title may hold any
// character: `The documents cover: ["a", "b, c"].`
func topicsSentence(topics []string) string {
	if len(topics) == 0 {
		return ""
	}
	list, err := json.Marshal(topics)
	if err != nil {
		return "" // strings always marshal
	}
	return "The documents cover: " + string(list) + "."
}

func (k *kb) names() []string {
	names := make([]string, len(k.docs))
	for i, d := range k.docs {
		names[i] = d.name
	}
	return names
}
