package rag

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/agentgraph/agentgraph/document"
	"github.com/agentgraph/agentgraph/document/pdf"
	"github.com/agentgraph/agentgraph/operator/publicnet"
)

// MaxDocumentBytes bounds one document or fetched page.
const MaxDocumentBytes = 8 << 20

// Fetcher returns the HTML of a web page.
type Fetcher interface {
	Fetch(ctx context.Context, rawURL string) ([]byte, error)
}

// OfflinePages is a Fetcher over a folder of saved pages, for demos and
// tests without network: the page of https://host/a/b is the file
// host_a_b.html (https://example.com is example.com.html). A URL with no
// saved page is an error naming the file looked for.
type OfflinePages struct {
	// FS holds the pages, e.g. os.DirFS("testdata/pages").
	FS fs.FS
}

// Fetch implements Fetcher.
func (d OfflinePages) Fetch(_ context.Context, rawURL string) ([]byte, error) {
	name, err := PageFile(rawURL)
	if err != nil {
		return nil, err
	}
	b, err := readLimited(d.FS, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("rag: %s is not in the offline page set (no saved page %s); configure a real fetcher to read the web", rawURL, name)
	}
	return b, err
}

// PageFile is the file name OfflinePages reads rawURL from.
func PageFile(rawURL string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return "", fmt.Errorf("rag: %q is not an http(s) URL; give a URL like https://example.com", rawURL)
	}
	p := strings.Trim(path.Clean("/"+u.Path), "/")
	name := strings.ToLower(u.Host)
	if p != "" {
		name += "_" + strings.ReplaceAll(p, "/", "_")
	}
	return name + ".html", nil
}

// HTTPFetcher fetches pages from the web, reading at most MaxDocumentBytes.
// A page's URL comes from the documents' configuration or from a model's
// plan, so by default it reaches only public internet addresses
// (operator/publicnet): not the host's loopback services, a private network
// or a cloud metadata endpoint, also not through a DNS name or a redirect.
type HTTPFetcher struct {
	// Client is the HTTP client. Nil means a publicnet client with Net's
	// settings.
	Client *http.Client
	// Net configures the client made when Client is nil: Net.Allow opens
	// ranges that are not public, e.g. an intranet's; Net.Timeout bounds a
	// fetch (30s by default) and Net.MaxRedirects its redirects (5).
	Net publicnet.Config
}

// Fetch implements Fetcher.
func (h HTTPFetcher) Fetch(ctx context.Context, rawURL string) ([]byte, error) {
	if _, err := PageFile(rawURL); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, err
	}
	c := h.Client
	if c == nil {
		if err := h.Net.Validate(); err != nil {
			return nil, err
		}
		c = publicnet.NewClient(h.Net)
		defer c.CloseIdleConnections()
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("rag: fetching %s: %s", rawURL, resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, MaxDocumentBytes+1))
	if err == nil && len(b) > MaxDocumentBytes {
		return nil, fmt.Errorf("rag: the page %s is larger than %d bytes (MaxDocumentBytes)", rawURL, MaxDocumentBytes)
	}
	return b, err
}

// Config configures a Store.
type Config struct {
	// Docs is the folder of documents: .md, .markdown, .txt, .html/.htm
	// and .pdf files, in subfolders too (os.DirFS(dir) for a directory). Nil
	// means none.
	Docs fs.FS
	// URLs are web pages indexed with the folder, fetched by Fetcher.
	URLs []string
	// Fetcher reads web pages. Nil means HTTPFetcher.
	Fetcher Fetcher
	// Embedder embeds chunks and queries. Nil means HashEmbedder, the
	// offline lexical embedding.
	Embedder Embedder
	// Index stores the vectors. Nil means NewExactIndex.
	Index VectorIndex
	// Chunker cuts documents. The zero value uses chunks of 120 estimated
	// tokens overlapping by 20.
	Chunker document.Chunker
	// PDF extracts the text of .pdf files. Nil means Sync prepares an
	// extractor (pdf.New with the default configuration) when it finds a
	// new or changed PDF, and closes it when done; set one to share it or
	// to configure it (limits, compiled-code cache).
	PDF *pdf.Extractor
}

// Store is the document store behind the RAG server: documents from a
// folder and from URLs, converted to text, chunked, embedded and indexed.
// Sync re-embeds only documents whose content hash changed. It is safe for
// concurrent use.
type Store struct {
	cfg      Config
	mu       sync.Mutex // serialises Sync
	hashes   map[string]string
	pdfs     map[string]pdfText // by source: the last text extracted
	synced   bool
	embedded atomic.Int64
}

// NewStore returns a store. Its documents are indexed by the first Sync or
// Search.
func NewStore(cfg Config) (*Store, error) {
	if cfg.Fetcher == nil {
		cfg.Fetcher = HTTPFetcher{}
	}
	if cfg.Embedder == nil {
		cfg.Embedder = HashEmbedder{}
	}
	if cfg.Index == nil {
		cfg.Index = NewExactIndex()
	}
	if cfg.Chunker == (document.Chunker{}) {
		cfg.Chunker = document.Chunker{Size: 120, Overlap: 20}
	}
	if err := cfg.Chunker.Validate(); err != nil {
		return nil, err
	}
	return &Store{cfg: cfg, hashes: map[string]string{}, pdfs: map[string]pdfText{}}, nil
}

// pdfText is a PDF's extracted text and the SHA-256 of its bytes, so that
// a Sync extracts only PDFs whose bytes changed.
type pdfText struct{ sum, text string }

// Embedder returns the store's embedder.
func (s *Store) Embedder() Embedder { return s.cfg.Embedder }

// Embedded counts the documents embedded since the store was made: a Sync
// that finds nothing changed adds nothing.
func (s *Store) Embedded() int64 { return s.embedded.Load() }

// Chunks is the number of chunks indexed.
func (s *Store) Chunks() int { return s.cfg.Index.Len() }

// SyncReport says what a Sync did.
type SyncReport struct {
	// Embedded are the sources (re-)embedded; Unchanged those whose hash
	// had not changed; Removed those gone from the folder.
	Embedded, Unchanged, Removed []string
	// Skipped are sources that could not be read, with why.
	Skipped map[string]string
}

// Sync brings the index up to date with the folder and the URLs: a
// document is chunked and embedded only when its content's SHA-256 differs
// from the last Sync's, and a document gone from the folder is removed. A
// document that cannot be read is reported in Skipped, not fatal; an
// embedding error is.
func (s *Store) Sync(ctx context.Context) (SyncReport, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	var own *pdf.Extractor
	defer func() {
		if own != nil {
			_ = own.Close()
		}
	}()
	extractor := func() (*pdf.Extractor, error) {
		if s.cfg.PDF != nil {
			return s.cfg.PDF, nil
		}
		if own == nil {
			e, err := pdf.New(ctx, pdf.Config{MaxSize: MaxDocumentBytes})
			if err != nil {
				return nil, err
			}
			own = e
		}
		return own, nil
	}
	rep := SyncReport{Skipped: map[string]string{}}
	seen := map[string]bool{}
	docs := map[string]func() (string, error){}
	if s.cfg.Docs != nil {
		err := fs.WalkDir(s.cfg.Docs, ".", func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			rel := p
			switch strings.ToLower(path.Ext(p)) {
			case ".md", ".markdown", ".txt", ".html", ".htm":
				docs[rel] = func() (string, error) {
					b, err := readLimited(s.cfg.Docs, p)
					if err != nil {
						return "", err
					}
					return ExtractText(rel, b)
				}
			case ".pdf":
				docs[rel] = func() (string, error) {
					b, err := readLimited(s.cfg.Docs, p)
					if err != nil {
						return "", err
					}
					sum := sha256.Sum256(b)
					h := hex.EncodeToString(sum[:])
					if t, ok := s.pdfs[rel]; ok && t.sum == h {
						return t.text, nil
					}
					e, err := extractor()
					if err != nil {
						return "", err
					}
					t, err := e.Extract(ctx, b)
					if err != nil {
						return "", err
					}
					s.pdfs[rel] = pdfText{sum: h, text: t.String()}
					return t.String(), nil
				}
			}
			return nil
		})
		if err != nil {
			return rep, fmt.Errorf("rag: reading the documents folder: %w", err)
		}
	}
	for _, u := range s.cfg.URLs {
		docs[u] = func() (string, error) {
			b, err := s.cfg.Fetcher.Fetch(ctx, u)
			if err != nil {
				return "", err
			}
			return ExtractText("page.html", b)
		}
	}
	names := make([]string, 0, len(docs))
	for n := range docs {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, name := range names {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		text, err := docs[name]()
		if err != nil {
			rep.Skipped[name] = err.Error()
			continue
		}
		seen[name] = true
		sum := sha256.Sum256([]byte(text))
		h := hex.EncodeToString(sum[:])
		if s.hashes[name] == h {
			rep.Unchanged = append(rep.Unchanged, name)
			continue
		}
		if err := s.index(ctx, name, text); err != nil {
			return rep, err
		}
		s.hashes[name] = h
		s.embedded.Add(1)
		rep.Embedded = append(rep.Embedded, name)
	}
	for name := range s.hashes {
		if !seen[name] && rep.Skipped[name] == "" {
			s.cfg.Index.Delete(name)
			delete(s.hashes, name)
			delete(s.pdfs, name)
			rep.Removed = append(rep.Removed, name)
		}
	}
	slices.Sort(rep.Removed)
	s.synced = true
	return rep, nil
}

func (s *Store) index(ctx context.Context, source, text string) error {
	chunks, err := s.cfg.Chunker.Split(text)
	if err != nil {
		return err
	}
	texts := make([]string, len(chunks))
	hits := make([]Hit, len(chunks))
	for i, c := range chunks {
		texts[i] = strings.TrimSpace(c.Text)
		hits[i] = Hit{Text: texts[i], Source: source, ChunkID: fmt.Sprintf("%s#%d", source, c.Index)}
	}
	vecs, err := s.cfg.Embedder.Embed(ctx, texts)
	if err != nil {
		return fmt.Errorf("rag: embedding %s with %s: %w", source, s.cfg.Embedder.Name(), err)
	}
	s.cfg.Index.Put(source, vecs, hits)
	return nil
}

// Search returns the k chunks most similar to query, best first. The
// first Search of a store that was never synced syncs it.
func (s *Store) Search(ctx context.Context, query string, k int) ([]Hit, error) {
	if strings.TrimSpace(query) == "" {
		return nil, errors.New("rag: empty query: give the words to search for")
	}
	s.mu.Lock()
	synced := s.synced
	s.mu.Unlock()
	if !synced {
		if _, err := s.Sync(ctx); err != nil {
			return nil, err
		}
	}
	if k <= 0 {
		k = 5
	}
	v, err := s.cfg.Embedder.Embed(ctx, []string{query})
	if err != nil {
		return nil, fmt.Errorf("rag: embedding the query with %s: %w", s.cfg.Embedder.Name(), err)
	}
	return s.cfg.Index.Search(v[0], k), nil
}

// Page fetches a web page and returns it as Markdown.
func (s *Store) Page(ctx context.Context, rawURL string) (string, error) {
	b, err := s.cfg.Fetcher.Fetch(ctx, rawURL)
	if err != nil {
		return "", err
	}
	return HTMLToMarkdown(bytes.NewReader(b))
}

// ExtractText returns a document's text by its name's extension: Markdown
// and text as they are, HTML as Markdown (HTMLToMarkdown). PDFs need an
// extractor: see Config.PDF and package document/pdf.
func ExtractText(name string, b []byte) (string, error) {
	switch strings.ToLower(path.Ext(name)) {
	case ".html", ".htm":
		return HTMLToMarkdown(bytes.NewReader(b))
	case ".pdf":
		return "", fmt.Errorf("rag: %s: a PDF needs a pdf.Extractor (Config.PDF); ExtractText reads text formats only", name)
	case ".md", ".markdown", ".txt", "":
		return string(b), nil
	}
	return "", fmt.Errorf("rag: %s: unsupported document type %q; use .md, .txt or .html", name, path.Ext(name))
}

func readLimited(fsys fs.FS, p string) ([]byte, error) {
	f, err := fsys.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxDocumentBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxDocumentBytes {
		return nil, fmt.Errorf("rag: %s is larger than %d bytes", p, MaxDocumentBytes)
	}
	return b, nil
}
