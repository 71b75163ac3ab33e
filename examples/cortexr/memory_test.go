package cortexr_test

import (
	"bytes"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/examples/cortexr"
)

func TestMemoryReopenAndFallback(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	yes, no := true, false
	old, err := cortexr.OpenMemory(dir, "2026/01/01/session-100-aaaaaa")
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Add(
		cortexr.MemoryItem{Type: cortexr.ItemToolOutput, ToolName: "add", Success: &yes},
		cortexr.MemoryItem{Type: cortexr.ItemToolOutput, ToolName: "divide", Success: &no},
	); err != nil {
		t.Fatal(err)
	}
	s1, err := cortexr.OpenMemory(dir, cortexr.NewSessionID(time.Now()))
	if err != nil {
		t.Fatal(err)
	}
	if err := s1.Add(cortexr.MemoryItem{Type: cortexr.ItemToolOutput, ToolName: "factorial", Success: &yes}); err != nil {
		t.Fatal(err)
	}
	// This session's successes only; across sessions, this session's first,
	// then the earlier session's; failures never.
	if diff := cmp.Diff([]string{"factorial"}, s1.RecentSuccesses(0)); diff != "" {
		t.Errorf("RecentSuccesses (-want +got):\n%s", diff)
	}
	across, err := s1.RecentSuccessesAcrossSessions(0)
	if diff := cmp.Diff([]string{"factorial", "add"}, across); diff != "" || err != nil {
		t.Errorf("RecentSuccessesAcrossSessions (-want +got), %v:\n%s", err, diff)
	}
	// Reopening a session continues its memory.
	again, err := cortexr.OpenMemory(dir, s1.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(again.Items()) != 1 || again.Items()[0].ToolName != "factorial" {
		t.Errorf("reopened items %+v", again.Items())
	}
	if _, err := cortexr.OpenMemory(dir, "../escape"); err == nil {
		t.Error("a session id with .. was accepted")
	}
}

// Sessions in one directory do not see each other's items, successes or
// search results; reopening a session sees only its own.
func TestMemoryIsolation(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	yes := true
	a, _ := cortexr.OpenMemory(dir, "2026/01/01/session-1-aaaaaa")
	b, _ := cortexr.OpenMemory(dir, "2026/01/01/session-2-bbbbbb")
	a.Add(cortexr.MemoryItem{Type: cortexr.ItemToolOutput, Text: "Output of fibonacci_numbers: [0 1 1 2 3]", ToolName: "fibonacci_numbers", Success: &yes})
	b.Add(cortexr.MemoryItem{Type: cortexr.ItemToolOutput, Text: "Output of add: 5", ToolName: "add", Success: &yes})
	if got := b.RecentSuccesses(0); !cmp.Equal(got, []string{"add"}) {
		t.Errorf("session b's successes %v", got)
	}
	for _, h := range b.Search("fibonacci numbers", 3) {
		if h.Item.ToolName != "add" {
			t.Errorf("session b found %+v, session a's item", h)
		}
	}
	if hits := a.Search("fibonacci numbers", 1); len(hits) != 1 || hits[0].Item.ToolName != "fibonacci_numbers" {
		t.Errorf("session a search %+v", hits)
	}
	again, _ := cortexr.OpenMemory(dir, a.ID())
	if items := again.Items(); len(items) != 1 || items[0].ToolName != "fibonacci_numbers" {
		t.Errorf("reopened a: %+v", items)
	}
}

// Add appends to the session file: what was written stays byte for byte.
func TestMemoryAppends(t *testing.T) {
	t.Parallel()
	m, _ := cortexr.OpenMemory(t.TempDir(), "2026/01/01/session-1-aaaaaa")
	var prev []byte
	for i := range 50 {
		if err := m.Add(cortexr.MemoryItem{Type: cortexr.ItemToolCall, Text: strings.Repeat("x", i)}); err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(m.Path())
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.HasPrefix(b, prev) || bytes.Count(b, []byte("\n")) != i+1 {
			t.Fatalf("after item %d the file was rewritten or has %d lines", i, bytes.Count(b, []byte("\n")))
		}
		prev = b
	}
}

// Semantic search finds the item about the query among many.
func TestMemorySearch(t *testing.T) {
	t.Parallel()
	m, _ := cortexr.OpenMemory("", "s")
	for _, txt := range []string{"Output of add: 7", "Output of strings_to_chars_to_int: [73 78 68 73 65]", "Output of factorial: 120", "Final answer: the capital of France is Paris"} {
		m.Add(cortexr.MemoryItem{Type: cortexr.ItemToolOutput, Text: txt})
	}
	hits := m.Search("what is the capital of France?", 1)
	if len(hits) != 1 || !strings.Contains(hits[0].Item.Text, "Paris") {
		t.Fatalf("search = %+v", hits)
	}
}

// BenchmarkMemoryAdd appends one item to a session that already holds
// 8,000: the cost does not grow with the session.
func BenchmarkMemoryAdd(b *testing.B) {
	m, _ := cortexr.OpenMemory(b.TempDir(), "2026/01/01/session-1-aaaaaa")
	for range 8000 {
		m.Add(cortexr.MemoryItem{Type: cortexr.ItemToolCall, Text: "Called add with map[a:1 b:2]"})
	}
	b.ReportAllocs()
	for b.Loop() {
		if err := m.Add(cortexr.MemoryItem{Type: cortexr.ItemToolCall, Text: "Called add with map[a:1 b:2]"}); err != nil {
			b.Fatal(err)
		}
	}
}

// Add clips long texts and values at a UTF-8 boundary, saying how long
// they were, so the session reads back; the session's size is bounded.
func TestMemoryClipsLargeItems(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	m, err := cortexr.OpenMemory(dir, "2026/01/01/session-1-aaaaaa")
	if err != nil {
		t.Fatal(err)
	}
	big := strings.Repeat("<é", 1_300_000)
	if err := m.Add(cortexr.MemoryItem{Type: cortexr.ItemToolOutput, Text: "Called f with " + big, ToolName: "f",
		ToolArgs: map[string]any{"string": big}, ToolResult: []any{big}, FinalAnswer: big}); err != nil {
		t.Fatal(err)
	}
	again, err := cortexr.OpenMemory(dir, m.ID())
	if err != nil {
		t.Fatalf("reopening: %v", err)
	}
	it := again.Items()[0]
	if st, _ := os.Stat(m.Path()); st.Size() > 64<<10 {
		t.Errorf("the session file is %d bytes", st.Size())
	}
	for name, s := range map[string]string{"text": it.Text, "final answer": it.FinalAnswer, "args": it.ToolArgs["clipped"].(string), "result": it.ToolResult.(string)} {
		if len(s) > cortexr.MaxMemoryText+64 || !utf8.ValidString(s) || !strings.Contains(s, "… (clipped; ") {
			t.Errorf("%s: %d bytes, valid UTF-8 %v: %.80q", name, len(s), utf8.ValidString(s), s)
		}
	}
	if !strings.HasPrefix(it.Text, "Called f with <é") || !strings.HasSuffix(it.Text, fmt.Sprintf("(clipped; %d bytes in all)", len("Called f with ")+len(big))) {
		t.Errorf("text %.40q…%q", it.Text, it.Text[len(it.Text)-40:])
	}

}

// bigItem is an item whose line comes to about 60 KB once clipped: its
// texts are at MaxMemoryText bytes, each escaped to six.
func bigItem(i int) cortexr.MemoryItem {
	lt := strings.Repeat("<", 2*cortexr.MaxMemoryText)
	return cortexr.MemoryItem{Type: cortexr.ItemToolOutput, Text: fmt.Sprintf("item %d %s", i, lt), FinalAnswer: lt,
		ToolName: "add", ToolArgs: map[string]any{"a": lt}, ToolResult: lt}
}

// A session that reaches MaxSessionBytes goes on: Add keeps succeeding,
// the file stops growing at the bound, memory holds the newest items, and
// the session can be reopened and added to.
func TestMemoryPastMaxSessionBytes(t *testing.T) {
	t.Parallel()
	for _, dir := range []string{t.TempDir(), ""} {
		m, err := cortexr.OpenMemory(dir, "2026/01/01/session-1-aaaaaa")
		if err != nil {
			t.Fatal(err)
		}
		const n = 700 // about 40 MB of lines
		for i := range n {
			if err := m.Add(bigItem(i)); err != nil {
				t.Fatalf("dir %q: Add %d: %v", dir, i, err)
			}
		}
		items := m.Items()
		if len(items) == 0 || len(items) >= n || !strings.HasPrefix(items[len(items)-1].Text, fmt.Sprintf("item %d ", n-1)) {
			t.Fatalf("dir %q: %d items held, last %.20q; want the newest, fewer than %d", dir, len(items), items[len(items)-1].Text, n)
		}
		if hits := m.Search(fmt.Sprintf("item %d", n-1), 1); len(hits) != 1 {
			t.Errorf("dir %q: search found %d items", dir, len(hits))
		}
		if dir == "" {
			continue
		}
		st, err := os.Stat(m.Path())
		if err != nil || st.Size() > cortexr.MaxSessionBytes || st.Size() < cortexr.MaxSessionBytes/2 {
			t.Fatalf("file %v, %v; want at most MaxSessionBytes", st.Size(), err)
		}
		again, err := cortexr.OpenMemory(dir, m.ID())
		if err != nil {
			t.Fatalf("reopening a full session: %v", err)
		}
		if err := again.Add(bigItem(n)); err != nil {
			t.Fatalf("adding to a reopened full session: %v", err)
		}
		if st2, _ := os.Stat(m.Path()); st2.Size() != st.Size() {
			t.Errorf("a full session's file grew from %d to %d bytes", st.Size(), st2.Size())
		}
	}
}

// A session file written by an earlier version, with lines longer than
// Add writes, a line that is not an item and more than MaxSessionBytes in
// all, opens: the bad lines are skipped and the newest items kept.
func TestMemoryOpensOldSessionFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	id := "2026/01/01/session-2-bbbbbb"
	path := dir + "/" + id + ".jsonl"
	if err := os.MkdirAll(dir+"/2026/01/01", 0o755); err != nil {
		t.Fatal(err)
	}
	line := func(text string) string {
		return fmt.Sprintf(`{"timestamp":"2026-01-01T00:00:00Z","type":"tool_output","text":%q}`+"\n", text)
	}
	var b strings.Builder
	b.WriteString(line("first"))
	b.WriteString(line(strings.Repeat("x", 1<<20))) // 1 MiB: longer than Add writes
	b.WriteString("{not json\n")
	filler := line(strings.Repeat("y", 100<<10))
	for b.Len() < cortexr.MaxSessionBytes+(4<<20) {
		b.WriteString(filler)
	}
	b.WriteString(line("last"))
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	m, err := cortexr.OpenMemory(dir, id)
	if err != nil {
		t.Fatalf("OpenMemory: %v", err)
	}
	items := m.Items()
	if len(items) == 0 || items[len(items)-1].Text != "last" || items[0].Text == "first" {
		t.Errorf("%d items; want the newest ending with \"last\", the oldest forgotten", len(items))
	}
	for _, it := range items {
		if len(it.Text) > 200<<10 {
			t.Errorf("an over-long line was kept (%d bytes)", len(it.Text))
		}
	}
	if err := m.Add(cortexr.MemoryItem{Type: cortexr.ItemRunStart, Text: "go on"}); err != nil {
		t.Errorf("Add to an old full session: %v", err)
	}

	// Small with an over-long line: the other items are read.
	small := "2026/01/01/session-3-cccccc"
	if err := os.WriteFile(dir+"/"+small+".jsonl", []byte(line("a")+line(strings.Repeat("x", 1<<20))+line("b")), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := cortexr.OpenMemory(dir, small)
	if err != nil {
		t.Fatalf("OpenMemory: %v", err)
	}
	if got := s.Items(); len(got) != 2 || got[0].Text != "a" || got[1].Text != "b" {
		t.Errorf("items %+v; want a and b", got)
	}
}
