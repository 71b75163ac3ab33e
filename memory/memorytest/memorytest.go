// Package memorytest checks implementations of [memory.Store] and
// [memory.Items] against the contracts documented on the interfaces. Every
// store in this module passes it; run it against your own:
//
//	func TestStore(t *testing.T) {
//		memorytest.Run(t, func(t *testing.T) memory.Store {
//			return newMyStore(t) // empty, cleaned up with t.Cleanup
//		})
//	}
//
// [RunItems] does the same for [memory.Items], with a clock the checks
// control.
//
// Run starts goroutines (the concurrency checks), all of which have ended
// when it returns.
package memorytest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/internal/conformance"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/google/go-cmp/cmp"
)

// Run runs the conformance checks as subtests of t. newStore is called once
// per subtest and must return an empty store; release it with t.Cleanup.
func Run(t *testing.T, newStore func(t *testing.T) memory.Store) {
	t.Helper()
	conformance.Run(t, newStore, []conformance.Check[memory.Store]{
		{Name: "AppendAssignsSeq", Fn: testAppendAssignsSeq},
		{Name: "AppendKeepsFields", Fn: testAppendKeepsFields},
		{Name: "AppendNothing", Fn: testAppendNothing},
		{Name: "Validation", Fn: testValidation},
		{Name: "UnknownConversation", Fn: testUnknown},
		{Name: "Isolation", Fn: testIsolation},
		{Name: "Load", Fn: testLoad},
		{Name: "SaveSummary", Fn: testSaveSummary},
		{Name: "History", Fn: testHistory},
		{Name: "Delete", Fn: testDelete},
		{Name: "Canceled", Fn: testCanceled},
		{Name: "ConcurrentAppend", Fn: testConcurrentAppend},
		{Name: "ConcurrentSummary", Fn: testConcurrentSummary},
	})
}

func msgs(contents ...string) []memory.Message {
	out := make([]memory.Message, len(contents))
	for i, c := range contents {
		role := memory.RoleUser
		if i%2 == 1 {
			role = memory.RoleAssistant
		}
		out[i] = memory.Message{Role: role, Content: c}
	}
	return out
}

func seqs(ms []memory.Message) []int64 {
	out := make([]int64, len(ms))
	for i, m := range ms {
		out[i] = m.Seq
	}
	return out
}

func contents(ms []memory.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Content
	}
	return out
}

func seqRange(from, to int64) []int64 {
	var out []int64
	for i := from; i <= to; i++ {
		out = append(out, i)
	}
	return out
}

func mustAppend(t *testing.T, s memory.Store, id string, ms ...memory.Message) int64 {
	t.Helper()
	last, err := s.Append(t.Context(), id, ms...)
	if err != nil {
		t.Fatalf("Append(%q, %d messages): %v", id, len(ms), err)
	}
	return last
}

func mustHistory(t *testing.T, s memory.Store, id string, after int64, limit int) []memory.Message {
	t.Helper()
	h, err := s.History(t.Context(), id, after, limit)
	if err != nil {
		t.Fatalf("History(%q, %d, %d): %v", id, after, limit, err)
	}
	return h
}

func mustLoad(t *testing.T, s memory.Store, id string, n int) memory.State {
	t.Helper()
	st, err := s.Load(t.Context(), id, n)
	if err != nil {
		t.Fatalf("Load(%q, %d): %v", id, n, err)
	}
	return st
}

func testAppendAssignsSeq(t *testing.T, s memory.Store) {
	if got := mustAppend(t, s, "c", msgs("a", "b", "c")...); got != 3 {
		t.Errorf("first Append returned last = %d, want 3", got)
	}
	in := msgs("d", "e")
	in[0].Seq, in[1].Seq = 42, 7 // ignored
	if got := mustAppend(t, s, "c", in...); got != 5 {
		t.Errorf("second Append returned last = %d, want 5", got)
	}
	h := mustHistory(t, s, "c", 0, 0)
	if diff := cmp.Diff(seqRange(1, 5), seqs(h)); diff != "" {
		t.Errorf("History seqs (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"a", "b", "c", "d", "e"}, contents(h)); diff != "" {
		t.Errorf("History contents (-want +got):\n%s", diff)
	}
}

func testAppendKeepsFields(t *testing.T, s memory.Store) {
	at := time.Date(2025, 3, 4, 5, 6, 7, 123456000, time.UTC)
	in := []memory.Message{
		{Role: memory.RoleSystem, Content: "You are helpful.", Time: at},
		{Role: memory.RoleUser, Name: "ada", Content: "multi\nline \"quoted\" 'text' ünïcödé 日本語 🙂; DROP TABLE x; --"},
		{Role: memory.RoleTool, Name: "web_search", Content: ""},
		{Role: "critic", Content: "a role of one's own"},
	}
	before := time.Now().Add(-time.Second)
	mustAppend(t, s, "c", in...)
	after := time.Now().Add(time.Second)
	h := mustHistory(t, s, "c", 0, 0)
	if len(h) != len(in) {
		t.Fatalf("History has %d messages, want %d", len(h), len(in))
	}
	for i, m := range h {
		want := in[i]
		want.Seq = int64(i + 1)
		if diff := cmp.Diff(want, m, cmp.Comparer(func(a, b time.Time) bool { return true })); diff != "" {
			t.Errorf("message %d (-want +got):\n%s", i+1, diff)
		}
	}
	if !h[0].Time.Equal(at) {
		t.Errorf("message 1 Time = %v, want the given %v", h[0].Time, at)
	}
	for i, m := range h[1:] {
		if m.Time.Before(before) || m.Time.After(after) {
			t.Errorf("message %d Time = %v, want the time of Append (between %v and %v)", i+2, m.Time, before, after)
		}
	}
}

func testAppendNothing(t *testing.T, s memory.Store) {
	if got := mustAppend(t, s, "c"); got != 0 {
		t.Errorf("Append of nothing to a new conversation returned %d, want 0", got)
	}
	mustAppend(t, s, "c", msgs("a", "b")...)
	if got := mustAppend(t, s, "c"); got != 2 {
		t.Errorf("Append of nothing returned %d, want the last Seq 2", got)
	}
}

func testValidation(t *testing.T, s memory.Store) {
	ctx := t.Context()
	checks := map[string]error{}
	_, checks["Append"] = s.Append(ctx, "", msgs("a")...)
	_, checks["Load"] = s.Load(ctx, "", 5)
	_, checks["History"] = s.History(ctx, "", 0, 0)
	checks["SaveSummary"] = s.SaveSummary(ctx, "", memory.Summary{Text: "x", Through: 1}, 0)
	checks["Delete"] = s.Delete(ctx, "")
	for name, err := range checks {
		if !errors.Is(err, memory.ErrEmptyID) {
			t.Errorf("%s with an empty id: error %v, want memory.ErrEmptyID", name, err)
		}
	}
	for id, fix := range map[string]string{"c\x00x": "remove it", "c\xffx": "use UTF-8 text", strings.Repeat("c", memory.MaxIDBytes+1): "use a shorter id"} {
		checks := map[string]error{}
		_, checks["Append"] = s.Append(ctx, id, msgs("a")...)
		_, checks["Load"] = s.Load(ctx, id, 5)
		_, checks["History"] = s.History(ctx, id, 0, 0)
		checks["SaveSummary"] = s.SaveSummary(ctx, id, memory.Summary{Text: "x", Through: 1}, 0)
		// Delete takes any id, to remove what was stored before the check.
		if err := s.Delete(ctx, id); err != nil {
			t.Errorf("Delete with id %.20q (%d bytes): %v, want nil", id, len(id), err)
		}
		for name, err := range checks {
			var ve *memory.ValidationError
			if !errors.As(err, &ve) || ve.Field != "conversation id" || !strings.Contains(ve.Problem, fix) {
				t.Errorf("%s with id %.20q (%d bytes): error %v, want a memory.ValidationError for the conversation id saying %q", name, id, len(id), err, fix)
			}
		}
	}
	bad := msgs("ok", "no role", "ok")
	bad[1].Role = ""
	if _, err := s.Append(ctx, "c", bad...); err == nil {
		t.Errorf("Append with an empty Role succeeded, want an error")
	}
	if h := mustHistory(t, s, "c", 0, 0); len(h) != 0 {
		t.Errorf("a rejected Append stored %d messages, want none (Append is atomic)", len(h))
	}
}

func testUnknown(t *testing.T, s memory.Store) {
	st := mustLoad(t, s, "nobody", 5)
	if diff := cmp.Diff(memory.State{}, st); diff != "" {
		t.Errorf("Load of an unknown conversation (-want +got):\n%s", diff)
	}
	if h := mustHistory(t, s, "nobody", 0, 0); len(h) != 0 {
		t.Errorf("History of an unknown conversation has %d messages", len(h))
	}
	if err := s.Delete(t.Context(), "nobody"); err != nil {
		t.Errorf("Delete of an unknown conversation: %v", err)
	}
}

func testIsolation(t *testing.T, s memory.Store) {
	mustAppend(t, s, "a", msgs("a1", "a2")...)
	mustAppend(t, s, "b", msgs("b1")...)
	mustAppend(t, s, "a", msgs("a3")...)
	if err := s.SaveSummary(t.Context(), "a", memory.Summary{Text: "sa", Through: 1}, 0); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"a1", "a2", "a3"}, contents(mustHistory(t, s, "a", 0, 0))); diff != "" {
		t.Errorf("conversation a (-want +got):\n%s", diff)
	}
	b := mustLoad(t, s, "b", 5)
	if b.Summary.Text != "" || b.Last != 1 || len(b.Messages) != 1 || b.Messages[0].Content != "b1" || b.Messages[0].Seq != 1 {
		t.Errorf("conversation b = %+v, want only b1 with Seq 1 and no summary", b)
	}
}

func testLoad(t *testing.T, s memory.Store) {
	var in []string
	for i := range 10 {
		in = append(in, fmt.Sprint("m", i+1))
	}
	mustAppend(t, s, "c", msgs(in...)...)
	if err := s.SaveSummary(t.Context(), "c", memory.Summary{Text: "first six", Through: 6}, 0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		n    int
		want []int64
	}{
		{-1, nil},
		{0, nil},
		{1, seqRange(10, 10)},
		{3, seqRange(8, 10)},
		{6, seqRange(5, 10)},
		{10, seqRange(1, 10)},
		{50, seqRange(1, 10)},
	} {
		st := mustLoad(t, s, "c", tc.n)
		got := seqs(st.Messages)
		if len(got) == 0 {
			got = nil
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("Load(n=%d) (-want +got):\n%s", tc.n, diff)
		}
		if st.Summary.Text != "first six" || st.Summary.Through != 6 || st.Last != 10 {
			t.Errorf("Load(n=%d) = summary %q through %d, last %d; want \"first six\" through 6, last 10", tc.n, st.Summary.Text, st.Summary.Through, st.Last)
		}
	}
	if diff := cmp.Diff([]string{"m9", "m10"}, contents(mustLoad(t, s, "c", 2).Messages)); diff != "" {
		t.Errorf("Load(n=2) contents (-want +got):\n%s", diff)
	}
}

func testSaveSummary(t *testing.T, s memory.Store) {
	ctx := t.Context()
	mustAppend(t, s, "c", msgs("a", "b", "c", "d", "e")...)
	before := time.Now().Add(-time.Second)
	if err := s.SaveSummary(ctx, "c", memory.Summary{Text: "ab", Through: 2}, 0); err != nil {
		t.Fatalf("SaveSummary: %v", err)
	}
	st := mustLoad(t, s, "c", 0)
	if st.Summary.Text != "ab" || st.Summary.Through != 2 {
		t.Errorf("after SaveSummary: %+v, want text \"ab\" through 2", st.Summary)
	}
	if st.Summary.Updated.Before(before) || st.Summary.Updated.After(time.Now().Add(time.Second)) {
		t.Errorf("Summary.Updated = %v, want the time of SaveSummary", st.Summary.Updated)
	}
	if err := s.SaveSummary(ctx, "c", memory.Summary{Text: "stale", Through: 3}, 0); !errors.Is(err, memory.ErrSummaryConflict) {
		t.Errorf("SaveSummary with a stale prevThrough: %v, want ErrSummaryConflict", err)
	}
	for _, bad := range []struct {
		through, prev int64
	}{{2, 2}, {1, 2}, {6, 2}} {
		err := s.SaveSummary(ctx, "c", memory.Summary{Text: "bad", Through: bad.through}, bad.prev)
		if err == nil || errors.Is(err, memory.ErrSummaryConflict) {
			t.Errorf("SaveSummary(Through=%d, prev=%d) with last 5: %v, want a range error", bad.through, bad.prev, err)
		}
	}
	if err := s.SaveSummary(ctx, "nobody", memory.Summary{Text: "x", Through: 1}, 0); err == nil {
		t.Errorf("SaveSummary on an unknown conversation succeeded")
	}
	if err := s.SaveSummary(ctx, "c", memory.Summary{Text: "abcde", Through: 5}, 2); err != nil {
		t.Fatalf("SaveSummary through the last message: %v", err)
	}
	st = mustLoad(t, s, "c", 0)
	if st.Summary.Text != "abcde" || len(st.Messages) != 0 {
		t.Errorf("after summarizing everything: summary %q, %d messages; want \"abcde\" and none", st.Summary.Text, len(st.Messages))
	}
}

func testHistory(t *testing.T, s memory.Store) {
	var in []string
	for i := range 12 {
		in = append(in, fmt.Sprint(i+1))
	}
	mustAppend(t, s, "c", msgs(in...)...)
	if err := s.SaveSummary(t.Context(), "c", memory.Summary{Text: "s", Through: 8}, 0); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		after int64
		limit int
		want  []int64
	}{
		{0, 0, seqRange(1, 12)},
		{3, 4, seqRange(4, 7)},
		{10, 5, seqRange(11, 12)},
		{12, 0, nil},
		{99, 1, nil},
		{-5, 2, seqRange(1, 2)},
	} {
		got := seqs(mustHistory(t, s, "c", tc.after, tc.limit))
		if len(got) == 0 {
			got = nil
		}
		if diff := cmp.Diff(tc.want, got); diff != "" {
			t.Errorf("History(after=%d, limit=%d) (-want +got):\n%s", tc.after, tc.limit, diff)
		}
	}
}

func testDelete(t *testing.T, s memory.Store) {
	mustAppend(t, s, "c", msgs("a", "b", "c")...)
	mustAppend(t, s, "keep", msgs("k")...)
	if err := s.SaveSummary(t.Context(), "c", memory.Summary{Text: "a", Through: 1}, 0); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(t.Context(), "c"); err != nil {
		t.Fatalf("Delete: %v", err)
	}
	if diff := cmp.Diff(memory.State{}, mustLoad(t, s, "c", 5)); diff != "" {
		t.Errorf("Load after Delete (-want +got):\n%s", diff)
	}
	if got := mustAppend(t, s, "c", msgs("new")...); got != 1 {
		t.Errorf("Append after Delete returned %d, want 1 (a new conversation)", got)
	}
	if got := contents(mustHistory(t, s, "keep", 0, 0)); len(got) != 1 {
		t.Errorf("Delete touched another conversation: %v", got)
	}
}

func testCanceled(t *testing.T, s memory.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := s.Append(ctx, "c", msgs("a")...); !errors.Is(err, context.Canceled) {
		t.Errorf("Append with a cancelled context: %v, want context.Canceled", err)
	}
	if _, err := s.Load(ctx, "c", 5); !errors.Is(err, context.Canceled) {
		t.Errorf("Load with a cancelled context: %v, want context.Canceled", err)
	}
	if h := mustHistory(t, s, "c", 0, 0); len(h) != 0 {
		t.Errorf("a cancelled Append stored %d messages", len(h))
	}
}

func testConcurrentAppend(t *testing.T, s memory.Store) {
	const writers, appends = 8, 15
	var wg sync.WaitGroup
	errs := make(chan error, writers*appends)
	for w := range writers {
		wg.Go(func() {
			for i := range appends {
				pair := []memory.Message{
					{Role: memory.RoleUser, Content: fmt.Sprintf("q %d %d", w, i)},
					{Role: memory.RoleAssistant, Content: fmt.Sprintf("a %d %d", w, i)},
				}
				if _, err := s.Append(t.Context(), "c", pair...); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("concurrent Append: %v", err)
	}
	h := mustHistory(t, s, "c", 0, 0)
	if diff := cmp.Diff(seqRange(1, writers*appends*2), seqs(h)); diff != "" {
		t.Fatalf("seqs after concurrent appends (-want +got):\n%s", diff)
	}
	seen := map[string]bool{}
	for i := 0; i+1 < len(h); i += 2 {
		var w, n int
		if _, err := fmt.Sscanf(h[i].Content, "q %d %d", &w, &n); err != nil {
			t.Fatalf("message %d = %q, want the first of a pair", h[i].Seq, h[i].Content)
		}
		if want := fmt.Sprintf("a %d %d", w, n); h[i+1].Content != want {
			t.Errorf("message %d = %q, want %q right after its pair (Append is atomic)", h[i+1].Seq, h[i+1].Content, want)
		}
		seen[h[i].Content] = true
	}
	if len(seen) != writers*appends {
		t.Errorf("%d distinct appends stored, want %d", len(seen), writers*appends)
	}
}

func testConcurrentSummary(t *testing.T, s memory.Store) {
	mustAppend(t, s, "c", msgs("a", "b", "c", "d")...)
	const racers = 6
	var wg sync.WaitGroup
	results := make([]error, racers)
	for i := range racers {
		wg.Go(func() {
			results[i] = s.SaveSummary(t.Context(), "c", memory.Summary{Text: fmt.Sprint("s", i), Through: 2}, 0)
		})
	}
	wg.Wait()
	won := 0
	for i, err := range results {
		switch {
		case err == nil:
			won++
		case !errors.Is(err, memory.ErrSummaryConflict):
			t.Errorf("racer %d: %v, want nil or ErrSummaryConflict", i, err)
		}
	}
	if won != 1 {
		t.Errorf("%d of %d concurrent SaveSummary calls with the same prevThrough succeeded, want exactly 1", won, racers)
	}
}
