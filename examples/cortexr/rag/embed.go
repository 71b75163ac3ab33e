package rag

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"strings"
	"unicode"
)

// Embedder turns texts into vectors of one fixed dimension. Vectors need not
// be normalised; the index normalises them.
type Embedder interface {
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	// Name says which embedding this is, for logs and tool output.
	Name() string
}

// HashEmbedder is a deterministic local embedding for offline use: feature
// hashing of lower-cased words and character trigrams into Dims buckets. It
// measures lexical overlap, not meaning; it is labelled "hashed-ngrams
// (offline, lexical)" wherever its scores are shown. Use HTTPEmbedder with a
// real model for semantic search.
type HashEmbedder struct {
	// Dims is the vector size. Zero means 512.
	Dims int
}

// Name implements Embedder.
func (HashEmbedder) Name() string { return "hashed-ngrams (offline, lexical)" }

// Embed implements Embedder.
func (h HashEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	dims := h.Dims
	if dims == 0 {
		dims = 512
	}
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		v := make([]float32, dims)
		add := func(s string, w float32) {
			f := fnv.New32a()
			f.Write([]byte(s))
			x := f.Sum32()
			sign := float32(1)
			if x&1 == 1 {
				sign = -1
			}
			v[int(x>>1)%dims] += sign * w
		}
		for _, w := range strings.FieldsFunc(strings.ToLower(t), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if stopWords[w] {
				continue
			}
			add("w:"+w, 2)
			r := []rune(" " + w + " ")
			for j := 0; j+3 <= len(r); j++ {
				add("c:"+string(r[j:j+3]), 0.5)
			}
		}
		out[i] = v
	}
	return out, nil
}

var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields("a an the of to in on at for and or is are was were be by with what who which how when where does do did it its this that from as about into than then") {
		stopWords[w] = true
	}
}

// HTTPEmbedder calls a real embedding endpoint: OpenAI's /v1/embeddings
// (API "openai") or Ollama's /api/embed (API "ollama").
type HTTPEmbedder struct {
	// API is "openai" or "ollama".
	API string
	// BaseURL is the server, e.g. https://api.openai.com or
	// http://localhost:11434.
	BaseURL string
	// Model is the embedding model, e.g. text-embedding-3-small or
	// nomic-embed-text.
	Model string
	// APIKey is sent as a bearer token when set.
	APIKey string
	// Client is the HTTP client. Nil means http.DefaultClient.
	Client *http.Client
}

// Name implements Embedder.
func (e HTTPEmbedder) Name() string { return e.API + ":" + e.Model }

// Embed implements Embedder.
func (e HTTPEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	var path string
	switch e.API {
	case "openai":
		path = "/v1/embeddings"
	case "ollama":
		path = "/api/embed"
	default:
		return nil, fmt.Errorf("rag: HTTPEmbedder.API is %q; use \"openai\" or \"ollama\"", e.API)
	}
	if e.Model == "" {
		return nil, errors.New("rag: HTTPEmbedder.Model is empty; name the embedding model")
	}
	body, _ := json.Marshal(map[string]any{"model": e.Model, "input": texts})
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimRight(e.BaseURL, "/")+path, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if e.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+e.APIKey)
	}
	c := e.Client
	if c == nil {
		c = http.DefaultClient
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, fmt.Errorf("rag: embeddings: %w", err)
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, fmt.Errorf("rag: embeddings: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("rag: embeddings: %s: %s", resp.Status, strings.TrimSpace(string(raw[:min(len(raw), 300)])))
	}
	var out struct {
		Data []struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		} `json:"data"`
		Embeddings [][]float32 `json:"embeddings"`
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return nil, fmt.Errorf("rag: embeddings: decoding the response: %w", err)
	}
	vecs := out.Embeddings
	if e.API == "openai" {
		vecs = make([][]float32, len(out.Data))
		for _, d := range out.Data {
			if d.Index < 0 || d.Index >= len(vecs) {
				return nil, fmt.Errorf("rag: embeddings: index %d out of range", d.Index)
			}
			vecs[d.Index] = d.Embedding
		}
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("rag: embeddings: %d vectors for %d texts", len(vecs), len(texts))
	}
	return vecs, nil
}

func normalize(v []float32) []float32 {
	var s float64
	for _, x := range v {
		s += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if s == 0 {
		return out
	}
	n := float32(1 / math.Sqrt(s))
	for i, x := range v {
		out[i] = x * n
	}
	return out
}
