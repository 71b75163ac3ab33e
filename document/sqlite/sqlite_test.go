package sqlite_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/agentgraph/agentgraph/document"
	"github.com/agentgraph/agentgraph/document/documenttest"
	"github.com/agentgraph/agentgraph/document/sqlite"
	"github.com/agentgraph/agentgraph/internal/sqlitedb"
	"github.com/agentgraph/agentgraph/internal/sqlitedb/sqlitedbtest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newStore(t *testing.T, path string) *sqlite.Store {
	t.Helper()
	s, err := sqlite.New(t.Context(), sqlite.Config{Path: path})
	return sqlitedbtest.Closed(t, s, err)
}

// TestConformance runs the conformance checks on a database file, in
// memory, and on a database the test opened (with the DSN the Config's
// doc asks for) and shares with the store.
func TestConformance(t *testing.T) {
	dsn := func(path string) string { return sqlitedb.DSN(path, sqlitedb.Options{ForeignKeys: true}) }
	sqlitedbtest.Conformance(t, dsn, documenttest.Run, func(t *testing.T, d sqlitedbtest.Database) document.Store {
		s, err := sqlite.New(t.Context(), sqlite.Config{Path: d.Path, DB: d.DB})
		return sqlitedbtest.Closed(t, s, err)
	})
}

// TestReopen checks that documents and chunks survive closing the database
// and that migrating an up-to-date database again changes nothing.
func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docs.db")
	s := newStore(t, path)
	text := "First paragraph.\n\nSecond paragraph with more words in it."
	d := document.Document{ID: "d1", ConversationID: "c1", Name: "a.txt", ContentType: "text/plain",
		Size: int64(len(text)), Status: document.StatusPending}
	if err := s.Create(t.Context(), d, []byte(text), document.Quota{}); err != nil {
		t.Fatal(err)
	}
	chunks, err := document.Chunker{Size: 8, Overlap: 2}.Split(text)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Complete(t.Context(), "d1", "Two paragraphs.", chunks); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s2 := newStore(t, path)
	if err := s2.Migrate(t.Context()); err != nil {
		t.Fatalf("second Migrate: %v", err)
	}
	got, err := s2.Get(t.Context(), "d1")
	if err != nil || got.Status != document.StatusReady || got.Summary != "Two paragraphs." || got.Chunks != len(chunks) {
		t.Fatalf("after reopening: %+v, %v; want the ready document", got, err)
	}
	cs, err := s2.Chunks(t.Context(), "d1")
	if err != nil || len(cs) != len(chunks) || cs[len(cs)-1].Text != chunks[len(chunks)-1].Text {
		t.Fatalf("chunks after reopening: %d, %v; want %d", len(cs), err, len(chunks))
	}
}

// TestManyChunks stores more chunks than one INSERT batch holds.
func TestManyChunks(t *testing.T) {
	s := newStore(t, ":memory:")
	text := ""
	for range 400 {
		text += "word "
	}
	chunks, err := document.Chunker{Size: 2, Overlap: -1}.Split(text)
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) < 250 {
		t.Fatalf("%d chunks; want more than two batches", len(chunks))
	}
	d := document.Document{ID: "d", ConversationID: "c", Name: "w.txt", ContentType: "text/plain", Size: int64(len(text)), Status: document.StatusPending}
	if err := s.Create(t.Context(), d, []byte(text), document.Quota{}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Complete(t.Context(), "d", "words", chunks); err != nil {
		t.Fatal(err)
	}
	got, err := s.Chunks(t.Context(), "d")
	if err != nil || len(got) != len(chunks) {
		t.Fatalf("Chunks: %d, %v; want %d", len(got), err, len(chunks))
	}
	for i, c := range got {
		if c != chunks[i] {
			t.Fatalf("chunk %d = %+v; want %+v", i, c, chunks[i])
		}
	}
}

// TestProcessor runs the whole pipeline on an SQLite store: upload,
// background processing, and loading the result after a restart.
func TestProcessor(t *testing.T) {
	path := filepath.Join(t.TempDir(), "docs.db")
	s := newStore(t, path)
	model := llmtest.New().
		On("Part 1 of 2", llmtest.Text("Prices.")).
		On("Part 2 of 2", llmtest.Text("Support.")).
		On("Summaries of its parts", llmtest.Text("Prices and support."))
	p, err := document.NewProcessor(document.Config{Store: s, Summarizer: &document.LLMSummarizer{Model: model},
		Chunker: document.Chunker{Size: 40, Overlap: 8}})
	if err != nil {
		t.Fatal(err)
	}
	text := strings.Repeat("Basic costs 5 euros, Pro 12, Team 30 per seat. ", 2) + "\n\n" +
		strings.Repeat("Support answers weekdays 9 to 17 at help@example.com. ", 2)
	doc, err := p.Upload(t.Context(), document.Upload{ConversationID: "c1", Name: "pricing.md", Content: []byte(text)})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Wait(t.Context(), doc.ID); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s2 := newStore(t, path)
	got, err := s2.Get(t.Context(), doc.ID)
	if err != nil {
		t.Fatal(err)
	}
	doc.Status, doc.Summary, doc.Chunks = document.StatusReady, "Prices and support.", 2
	if diff := cmp.Diff(doc, got, cmpopts.IgnoreFields(document.Document{}, "Updated"), cmpopts.EquateApproxTime(0)); diff != "" {
		t.Errorf("document after restart (-want +got):\n%s", diff)
	}
	l, err := document.Load(t.Context(), s2, doc.ID, document.LoadOptions{})
	if err != nil || l.Text() != text {
		t.Errorf("Load after restart: %q, %v; want the whole text", l.Text(), err)
	}
}
