package rag_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/examples/cortexr/rag"
)

func demoStore(t testing.TB) *rag.Store {
	t.Helper()
	s, err := rag.NewStore(rag.Config{
		Docs:    os.DirFS("../demo/documents"),
		URLs:    []string{"https://example.com"},
		Fetcher: rag.OfflinePages{FS: os.DirFS("../demo/pages")},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestDocumentQuestions asks questions whose answers are in one bundled
// document and checks that the best passage comes from it and holds the
// answer.
func TestDocumentQuestions(t *testing.T) {
	s := demoStore(t)
	cases := []struct{ q, source, want string }{
		{"How many days a week may employees work remotely?", "remote_work_policy.md", "three days a week"},
		{"How large is the home office stipend for a desk and chair?", "remote_work_policy.md", "1,200 euros"},
		{"Within how many days must expense claims be submitted?", "remote_work_policy.md", "30 days"},
		{"What brew ratio does a classic espresso use?", "espresso_guide.txt", "1:2"},
		{"What water temperature should espresso brew at?", "espresso_guide.txt", "90 and 96 degrees"},
		{"When is the best time to visit Kyoto for cherry blossoms?", "kyoto_travel.html", "late March to early April"},
		{"What is Fushimi Inari shrine famous for?", "kyoto_travel.html", "torii gates"},
		{"What efficiency do monocrystalline solar panels reach?", "solar_panels.md", "20 to 23 percent"},
		{"How many hours of sunlight do tomatoes need?", "garden_notes.md", "six to eight hours"},
		{"What is the example domain for?", "https://example.com", "illustrative examples"},
	}
	for _, c := range cases {
		t.Run(c.q, func(t *testing.T) {
			hits, err := s.Search(context.Background(), c.q, 3)
			if err != nil {
				t.Fatal(err)
			}
			if len(hits) == 0 {
				t.Fatal("no hits")
			}
			top := hits[0]
			if top.Source != c.source || !strings.Contains(top.Text, c.want) {
				t.Fatalf("top hit %s (score %.3f) = %q; want %s containing %q", top.Source, top.Score, top.Text, c.source, c.want)
			}
			if top.Score <= 0 || top.Score > 1.0001 || !strings.HasPrefix(top.ChunkID, c.source+"#") {
				t.Fatalf("hit %+v: want a score in (0,1] and chunk id under its source", top)
			}
			for i := 1; i < len(hits); i++ {
				if hits[i].Score > hits[i-1].Score {
					t.Fatalf("hits not best first: %v", hits)
				}
			}
		})
	}
}

// TestSyncEmbedsOnlyChangedFiles re-indexes a folder of N files where one
// changed: only that file is embedded again; a removed file leaves the
// index.
func TestSyncEmbedsOnlyChangedFiles(t *testing.T) {
	dir := t.TempDir()
	const n = 6
	for i := range n {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("doc%d.md", i)), fmt.Appendf(nil, "Document %d is about topic number %d.", i, i), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	emb := &countingEmbedder{}
	s, err := rag.NewStore(rag.Config{Docs: os.DirFS(dir), Embedder: emb})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rep, err := s.Sync(ctx)
	if err != nil || len(rep.Embedded) != n || s.Embedded() != n || emb.calls != n {
		t.Fatalf("first sync: %+v, %v, embedded %d, embed calls %d; want all %d", rep, err, s.Embedded(), emb.calls, n)
	}
	rep, err = s.Sync(ctx)
	if err != nil || len(rep.Embedded) != 0 || len(rep.Unchanged) != n || emb.calls != n {
		t.Fatalf("unchanged sync: %+v, %v, embed calls %d; want none", rep, err, emb.calls)
	}
	if err := os.WriteFile(filepath.Join(dir, "doc3.md"), []byte("Document 3 now talks about zebras."), 0o644); err != nil {
		t.Fatal(err)
	}
	rep, err = s.Sync(ctx)
	if err != nil || len(rep.Embedded) != 1 || rep.Embedded[0] != "doc3.md" || s.Embedded() != n+1 || emb.calls != n+1 {
		t.Fatalf("one change: %+v, %v, embedded %d, calls %d; want only doc3.md", rep, err, s.Embedded(), emb.calls)
	}
	hits, _ := s.Search(ctx, "zebras", 1)
	if len(hits) != 1 || hits[0].Source != "doc3.md" {
		t.Fatalf("search after change = %v; want doc3.md", hits)
	}
	// The search embedded its query: one call.
	if err := os.Remove(filepath.Join(dir, "doc0.md")); err != nil {
		t.Fatal(err)
	}
	rep, err = s.Sync(ctx)
	if err != nil || len(rep.Removed) != 1 || rep.Removed[0] != "doc0.md" || s.Chunks() != n-1 || emb.calls != n+2 {
		t.Fatalf("removal: %+v, %v, chunks %d; want doc0.md removed", rep, err, s.Chunks())
	}
}

type countingEmbedder struct {
	rag.HashEmbedder
	calls int // Embed calls: one per document embedded, one per query
}

func (c *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	c.calls++
	return c.HashEmbedder.Embed(ctx, texts)
}

func TestHTMLToMarkdown(t *testing.T) {
	s := demoStore(t)
	md, err := s.Page(context.Background(), "https://example.com")
	if err != nil {
		t.Fatal(err)
	}
	want := "# Example Domain\n\nThis domain is for use in illustrative examples in documents. You may use this domain in literature without prior coordination or asking for permission.\n\nMore information... (https://www.iana.org/domains/example)"
	if md != want {
		t.Fatalf("markdown =\n%s\nwant\n%s", md, want)
	}
	b, _ := os.ReadFile("../demo/documents/kyoto_travel.html")
	md, _ = rag.ExtractText("kyoto_travel.html", b)
	for _, bad := range []string{"track()", "Home", "newsletter"} {
		if strings.Contains(md, bad) {
			t.Errorf("markdown keeps clutter %q:\n%s", bad, md)
		}
	}
	if !strings.Contains(md, "## Fushimi Inari") || !strings.Contains(md, "- The subway and bus one-day pass") {
		t.Errorf("markdown lost headings or list items:\n%s", md)
	}
	if _, err := s.Page(context.Background(), "https://nowhere.example.org/x"); err == nil || !strings.Contains(err.Error(), "nowhere.example.org_x.html") {
		t.Errorf("missing page error = %v; want it to name the file looked for", err)
	}
	if _, err := s.Page(context.Background(), "ftp://x"); err == nil || !strings.Contains(err.Error(), "http(s) URL") {
		t.Errorf("bad URL error = %v", err)
	}
}

// PDFs are extracted (document/pdf) and indexed with their file name as
// the source; a scan without text is skipped with the reason; a PDF
// whose bytes did not change is not embedded again.
func TestPDFIndexed(t *testing.T) {
	dir := t.TempDir()
	copyFile(t, "../demo/documents/bicycle_maintenance.pdf", filepath.Join(dir, "bike.pdf"))
	copyFile(t, "../../../document/pdf/testdata/scanned.pdf", filepath.Join(dir, "scan.pdf"))
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("plain text about nothing"), 0o644)
	s, err := rag.NewStore(rag.Config{Docs: os.DirFS(dir)})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	rep, err := s.Sync(ctx)
	if err != nil || strings.Join(rep.Embedded, ",") != "b.txt,bike.pdf" || !strings.Contains(rep.Skipped["scan.pdf"], "OCR") {
		t.Fatalf("sync = %+v, %v; want b.txt and bike.pdf embedded, scan.pdf skipped saying it needs OCR", rep, err)
	}
	hits, err := s.Search(ctx, "how often should the bicycle chain be lubricated", 1)
	if err != nil || len(hits) != 1 || hits[0].Source != "bike.pdf" || !strings.Contains(hits[0].Text, "every 300 kilometres") {
		t.Fatalf("hits = %+v, %v", hits, err)
	}
	os.WriteFile(filepath.Join(dir, "b.txt"), []byte("plain text, changed"), 0o644)
	rep, err = s.Sync(ctx)
	if err != nil || strings.Join(rep.Embedded, ",") != "b.txt" || !slices.Contains(rep.Unchanged, "bike.pdf") || s.Embedded() != 3 {
		t.Fatalf("second sync = %+v, %v, %d embedded; want only b.txt embedded again", rep, err, s.Embedded())
	}
	if _, err := rag.ExtractText("x.pdf", nil); err == nil || !strings.Contains(err.Error(), "Config.PDF") {
		t.Fatalf("ExtractText(pdf) = %v, want an error pointing at Config.PDF", err)
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestHashEmbedderDeterministic(t *testing.T) {
	a, _ := rag.HashEmbedder{}.Embed(context.Background(), []string{"espresso brew ratio"})
	b, _ := rag.HashEmbedder{}.Embed(context.Background(), []string{"espresso brew ratio"})
	if fmt.Sprint(a) != fmt.Sprint(b) || len(a[0]) != 512 {
		t.Fatal("HashEmbedder is not deterministic or not 512-dimensional")
	}
	if !strings.Contains(rag.HashEmbedder{}.Name(), "offline") {
		t.Fatal("HashEmbedder's name must label it offline")
	}
}

// BenchmarkExactIndexSearch measures one top-5 query over n chunks of 512
// dimensions. The demo indexes about 15 chunks.
func BenchmarkExactIndexSearch(b *testing.B) {
	for _, n := range []int{100, 1000, 10000, 100000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			r := rand.New(rand.NewPCG(1, 2))
			x := rag.NewExactIndex()
			vec := func() []float32 {
				v := make([]float32, 512)
				for i := range v {
					v[i] = r.Float32() - 0.5
				}
				return v
			}
			for i := range n / 10 {
				vecs := make([][]float32, 10)
				hits := make([]rag.Hit, 10)
				for j := range vecs {
					vecs[j] = vec()
					hits[j] = rag.Hit{ChunkID: fmt.Sprintf("d%d#%d", i, j)}
				}
				x.Put(fmt.Sprint("d", i), vecs, hits)
			}
			q := vec()
			b.ReportAllocs()
			for b.Loop() {
				if len(x.Search(q, 5)) != 5 {
					b.Fatal("short result")
				}
			}
		})
	}
}
