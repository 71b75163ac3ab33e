package memory_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/memory"
	"github.com/google/go-cmp/cmp"
)

// foldRecorder is a deterministic Summarizer: the summary is the previous
// one plus the dropped contents, comma-separated. It records every call and
// fails while fail is set.
type foldRecorder struct {
	mu    sync.Mutex
	calls [][]string
	fail  error
}

func (f *foldRecorder) Summarize(ctx context.Context, previous string, dropped []memory.Message) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, contentsOf(dropped))
	if f.fail != nil {
		return "", f.fail
	}
	parts := contentsOf(dropped)
	if previous != "" {
		parts = append([]string{previous}, parts...)
	}
	return strings.Join(parts, ","), nil
}

func (f *foldRecorder) Calls() [][]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([][]string(nil), f.calls...)
}

func contentsOf(ms []memory.Message) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.Content
	}
	return out
}

func user(contents ...string) []memory.Message {
	out := make([]memory.Message, len(contents))
	for i, c := range contents {
		out[i] = memory.Message{Role: memory.RoleUser, Content: c}
	}
	return out
}

func newConversations(t *testing.T, cfg memory.ConversationConfig) *memory.Conversations {
	t.Helper()
	if cfg.Store == nil {
		cfg.Store = memory.NewInMemoryStore()
	}
	c, err := memory.NewConversations(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func mustView(t *testing.T, c *memory.Conversations, id string) memory.View {
	t.Helper()
	v, err := c.View(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestNewConversationsRejectsBadConfig(t *testing.T) {
	store := memory.NewInMemoryStore()
	for _, tc := range []struct {
		name string
		cfg  memory.ConversationConfig
		want string
	}{
		{"no store", memory.ConversationConfig{}, "Store is nil"},
		{"negative window", memory.ConversationConfig{Store: store, Window: -1}, "Window is -1"},
		{"negative min batch", memory.ConversationConfig{Store: store, MinBatch: -2}, "MinBatch is -2"},
		{"negative max batch", memory.ConversationConfig{Store: store, MaxBatch: -3}, "MaxBatch is -3"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := memory.NewConversations(tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want one mentioning %q", err, tc.want)
			}
		})
	}
	c := newConversations(t, memory.ConversationConfig{Store: store})
	if c.Window() != memory.DefaultWindow {
		t.Errorf("default Window = %d, want %d", c.Window(), memory.DefaultWindow)
	}
}

func TestSummarizesOnlyWhatLeftTheWindow(t *testing.T) {
	sum := &foldRecorder{}
	c := newConversations(t, memory.ConversationConfig{Summarizer: sum, Window: 3})
	ctx := t.Context()

	// Filling the window never calls the summarizer.
	for _, m := range user("m1", "m2", "m3") {
		if err := c.Append(ctx, "c", m); err != nil {
			t.Fatal(err)
		}
	}
	if calls := sum.Calls(); len(calls) != 0 {
		t.Fatalf("summarizer called %d times while the window was filling, want 0", len(calls))
	}
	// Two messages leave at once: one call with both.
	if err := c.Append(ctx, "c", user("m4", "m5")...); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]string{{"m1", "m2"}}, sum.Calls()); diff != "" {
		t.Errorf("summarizer calls (-want +got):\n%s", diff)
	}
	v := mustView(t, c, "c")
	if v.Summary.Text != "m1,m2" || v.Summary.Through != 2 || len(v.Pending) != 0 {
		t.Errorf("summary %+v, pending %d; want \"m1,m2\" through 2, none pending", v.Summary, len(v.Pending))
	}
	if diff := cmp.Diff([]string{"m3", "m4", "m5"}, contentsOf(v.Recent)); diff != "" {
		t.Errorf("recent (-want +got):\n%s", diff)
	}
	// The next fold builds on the previous summary.
	if err := c.Append(ctx, "c", user("m6")...); err != nil {
		t.Fatal(err)
	}
	if v := mustView(t, c, "c"); v.Summary.Text != "m1,m2,m3" {
		t.Errorf("summary %q, want \"m1,m2,m3\"", v.Summary.Text)
	}
	// Summarize with nothing outside the window does nothing.
	if err := c.Summarize(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	if n := len(sum.Calls()); n != 2 {
		t.Errorf("summarizer called %d times, want 2", n)
	}
}

func TestMinBatchWaitsAndShowsPending(t *testing.T) {
	sum := &foldRecorder{}
	c := newConversations(t, memory.ConversationConfig{Summarizer: sum, Window: 2, MinBatch: 3})
	ctx := t.Context()
	if err := c.Append(ctx, "c", user("m1", "m2", "m3", "m4")...); err != nil {
		t.Fatal(err)
	}
	if calls := sum.Calls(); len(calls) != 0 {
		t.Fatalf("summarizer called with %v before MinBatch messages left", calls)
	}
	if diff := cmp.Diff([]string{"m1", "m2"}, contentsOf(mustView(t, c, "c").Pending)); diff != "" {
		t.Errorf("pending (-want +got):\n%s", diff)
	}
	if err := c.Append(ctx, "c", user("m5")...); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([][]string{{"m1", "m2", "m3"}}, sum.Calls()); diff != "" {
		t.Errorf("summarizer calls (-want +got):\n%s", diff)
	}
}

func TestMaxBatchFoldsABacklogInSteps(t *testing.T) {
	sum := &foldRecorder{}
	c := newConversations(t, memory.ConversationConfig{Summarizer: sum, Window: 2, MaxBatch: 3})
	var in []string
	for i := range 10 {
		in = append(in, fmt.Sprint("m", i+1))
	}
	if err := c.Append(t.Context(), "c", user(in...)...); err != nil {
		t.Fatal(err)
	}
	want := [][]string{{"m1", "m2", "m3"}, {"m4", "m5", "m6"}, {"m7", "m8"}}
	if diff := cmp.Diff(want, sum.Calls()); diff != "" {
		t.Errorf("summarizer calls (-want +got):\n%s", diff)
	}
	if v := mustView(t, c, "c"); v.Summary.Through != 8 || v.Summary.Text != strings.Join(in[:8], ",") {
		t.Errorf("summary %+v, want m1..m8 through 8", v.Summary)
	}
}

func TestSummarizerFailureLosesNothing(t *testing.T) {
	sum := &foldRecorder{fail: errors.New("model overloaded")}
	c := newConversations(t, memory.ConversationConfig{Summarizer: sum, Window: 2})
	ctx := t.Context()
	err := c.Append(ctx, "c", user("m1", "m2", "m3")...)
	var se *memory.SummarizeError
	if !errors.As(err, &se) {
		t.Fatalf("Append with a failing summarizer: %v, want a *SummarizeError", err)
	}
	if se.Pending != 1 || se.ConversationID != "c" || !strings.Contains(se.Error(), "kept") || !strings.Contains(se.Error(), "model overloaded") {
		t.Errorf("SummarizeError = %+v (%q), want 1 pending message in \"c\", saying they are kept, with the cause", se, se.Error())
	}
	if h, _ := c.History(ctx, "c", 0, 0); len(h) != 3 {
		t.Errorf("history holds %d messages after the failure, want all 3", len(h))
	}
	v := mustView(t, c, "c")
	if diff := cmp.Diff([]string{"m1"}, contentsOf(v.Pending)); diff != "" {
		t.Errorf("pending after the failure (-want +got):\n%s", diff)
	}
	// The assembled summary shows the pending message verbatim.
	asm := memory.NewAssembler(memory.AssemblerConfig{Conversations: c})
	got, err := asm.Assemble(ctx, memory.NewTurn("c", "q"), "conversation.summary")
	if err != nil {
		t.Fatal(err)
	}
	if text := got.Text("conversation.summary"); text != "user: m1" {
		t.Errorf("conversation.summary = %q, want the pending message", text)
	}
	// Still failing: the backlog grows, nothing is dropped.
	if err := c.Append(ctx, "c", user("m4")...); !errors.As(err, &se) || se.Pending != 2 {
		t.Errorf("second failing Append: %v, want a SummarizeError with 2 pending", err)
	}
	// Recovery: one call folds the whole backlog.
	sum.mu.Lock()
	sum.fail = nil
	sum.mu.Unlock()
	if err := c.Append(ctx, "c", user("m5")...); err != nil {
		t.Fatalf("Append after recovery: %v", err)
	}
	calls := sum.Calls()
	if diff := cmp.Diff([]string{"m1", "m2", "m3"}, calls[len(calls)-1]); diff != "" {
		t.Errorf("fold after recovery (-want +got):\n%s", diff)
	}
	v = mustView(t, c, "c")
	if v.Summary.Text != "m1,m2,m3" || len(v.Pending) != 0 {
		t.Errorf("after recovery: summary %q, %d pending; want \"m1,m2,m3\", none", v.Summary.Text, len(v.Pending))
	}
}

func TestSummarizerEmptyReplyIsAFailure(t *testing.T) {
	empty := memory.SummarizerFunc(func(context.Context, string, []memory.Message) (string, error) { return "", nil })
	c := newConversations(t, memory.ConversationConfig{Summarizer: empty, Window: 1})
	var se *memory.SummarizeError
	if err := c.Append(t.Context(), "c", user("a", "b")...); !errors.As(err, &se) {
		t.Errorf("Append with an empty summary: %v, want a *SummarizeError", err)
	}
}

func TestSummarizerCancelledReturnsContextError(t *testing.T) {
	ctx, cancel := context.WithCancel(t.Context())
	sum := memory.SummarizerFunc(func(ctx context.Context, _ string, _ []memory.Message) (string, error) {
		cancel()
		return "", ctx.Err()
	})
	c := newConversations(t, memory.ConversationConfig{Summarizer: sum, Window: 1})
	err := c.Append(ctx, "c", user("a", "b")...)
	var se *memory.SummarizeError
	if !errors.Is(err, context.Canceled) || !errors.As(err, &se) {
		t.Errorf("Append cancelled during summarizing: %v, want a SummarizeError matching context.Canceled", err)
	}
	if h, _ := c.History(t.Context(), "c", 0, 0); len(h) != 2 {
		t.Errorf("history holds %d messages, want both: the append succeeded", len(h))
	}
}

func TestSummarizeWaitRespectsContext(t *testing.T) {
	release := make(chan struct{})
	entered := make(chan struct{}, 1)
	sum := memory.SummarizerFunc(func(ctx context.Context, prev string, dropped []memory.Message) (string, error) {
		entered <- struct{}{}
		<-release
		return "s", nil
	})
	c := newConversations(t, memory.ConversationConfig{Summarizer: sum, Window: 1})
	done := make(chan error)
	go func() { done <- c.Append(t.Context(), "c", user("a", "b")...) }()
	<-entered
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Millisecond)
	defer cancel()
	err := c.Append(ctx, "c", user("c")...)
	var se *memory.SummarizeError
	if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &se) {
		t.Errorf("Append waiting for a fold in progress: %v, want a SummarizeError matching DeadlineExceeded", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Errorf("first Append: %v", err)
	}
	if h, _ := c.History(t.Context(), "c", 0, 0); len(h) != 3 {
		t.Errorf("history holds %d messages, want 3", len(h))
	}
}

func TestWithoutSummarizer(t *testing.T) {
	c := newConversations(t, memory.ConversationConfig{Window: 2})
	if err := c.Append(t.Context(), "c", user("m1", "m2", "m3", "m4")...); err != nil {
		t.Fatal(err)
	}
	v := mustView(t, c, "c")
	if v.Summary.Text != "" || len(v.Pending) != 0 {
		t.Errorf("without a summarizer: summary %q, pending %d; want neither", v.Summary.Text, len(v.Pending))
	}
	if diff := cmp.Diff([]string{"m3", "m4"}, contentsOf(v.Recent)); diff != "" {
		t.Errorf("recent (-want +got):\n%s", diff)
	}
	if h, _ := c.History(t.Context(), "c", 0, 0); len(h) != 4 {
		t.Errorf("history holds %d messages, want 4", len(h))
	}
}

func TestRecentBeyondTheWindow(t *testing.T) {
	c := newConversations(t, memory.ConversationConfig{Summarizer: &foldRecorder{}, Window: 2})
	if err := c.Append(t.Context(), "c", user("m1", "m2", "m3", "m4", "m5")...); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		n    int
		want []string
	}{
		{0, []string{}},
		{1, []string{"m5"}},
		{4, []string{"m2", "m3", "m4", "m5"}},
		{9, []string{"m1", "m2", "m3", "m4", "m5"}},
	} {
		got, err := c.Recent(t.Context(), "c", tc.n)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.want, contentsOf(got)); diff != "" {
			t.Errorf("Recent(%d) (-want +got):\n%s", tc.n, diff)
		}
	}
}

func TestConcurrentAppendsWithSummaries(t *testing.T) {
	sum := &foldRecorder{}
	c := newConversations(t, memory.ConversationConfig{Summarizer: sum, Window: 3})
	const writers, turns = 6, 12
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range turns {
				if err := c.Append(t.Context(), "c", user(fmt.Sprintf("w%d-%d", w, i))...); err != nil {
					t.Errorf("Append: %v", err)
				}
			}
		})
	}
	wg.Wait()
	if err := c.Summarize(t.Context(), "c"); err != nil {
		t.Fatal(err)
	}
	h, err := c.History(t.Context(), "c", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(h) != writers*turns {
		t.Fatalf("history holds %d messages, want %d", len(h), writers*turns)
	}
	v := mustView(t, c, "c")
	if v.Summary.Through != int64(len(h)-3) {
		t.Errorf("summary covers through %d, want %d (all but the window)", v.Summary.Through, len(h)-3)
	}
	// Every message outside the window is in the summary exactly once, in order.
	if diff := cmp.Diff(contentsOf(h[:len(h)-3]), strings.Split(v.Summary.Text, ",")); diff != "" {
		t.Errorf("summary vs history (-want +got):\n%s", diff)
	}
}

func TestConcurrentAppendsDoNotSummarizeTwice(t *testing.T) {
	sum := &foldRecorder{}
	c := newConversations(t, memory.ConversationConfig{Summarizer: sum, Window: 2})
	var wg sync.WaitGroup
	for w := range 8 {
		wg.Go(func() {
			for i := range 10 {
				if err := c.Append(t.Context(), "c", user(fmt.Sprintf("w%d-%d", w, i))...); err != nil {
					t.Errorf("Append: %v", err)
				}
			}
		})
	}
	wg.Wait()
	folded := 0
	for _, call := range sum.Calls() {
		folded += len(call)
	}
	if folded != 78 {
		t.Errorf("the summarizer was given %d messages in all, want each of the 78 outside the window exactly once", folded)
	}
}

// countingStore is a real store that counts the messages it reads and
// its Load calls.
type countingStore struct {
	memory.Store
	mu    sync.Mutex
	read  int
	loads int
}

func (s *countingStore) Load(ctx context.Context, id string, n int) (memory.State, error) {
	st, err := s.Store.Load(ctx, id, n)
	s.mu.Lock()
	s.read += len(st.Messages)
	s.loads++
	s.mu.Unlock()
	return st, err
}

func (s *countingStore) History(ctx context.Context, id string, after int64, limit int) ([]memory.Message, error) {
	h, err := s.Store.History(ctx, id, after, limit)
	s.mu.Lock()
	s.read += len(h)
	s.mu.Unlock()
	return h, err
}

func TestLongConversationsReadOnlyWhatIsNeeded(t *testing.T) {
	for _, tc := range []struct {
		name       string
		summarizer memory.Summarizer
	}{
		{"no summarizer", nil},
		{"summarizer", &foldRecorder{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := &countingStore{Store: memory.NewInMemoryStore()}
			c := newConversations(t, memory.ConversationConfig{Store: store, Summarizer: tc.summarizer, Window: 5, MinBatch: 100})
			var in []string
			for i := range 1000 {
				in = append(in, fmt.Sprint(i))
			}
			if _, err := store.Store.Append(t.Context(), "c", user(in...)...); err != nil {
				t.Fatal(err)
			}
			if tc.summarizer != nil {
				if err := c.Summarize(t.Context(), "c"); err != nil {
					t.Fatal(err)
				}
				if err := c.Append(t.Context(), "c", user("last")...); err != nil {
					t.Fatal(err)
				}
			}
			store.read = 0
			v := mustView(t, c, "c")
			if _, err := c.Recent(t.Context(), "c", 3); err != nil {
				t.Fatal(err)
			}
			want := 5 + 3 + len(v.Pending)
			if store.read != want || len(v.Recent) != 5 {
				t.Errorf("View and Recent(3) read %d messages (%d recent, %d pending), want %d", store.read, len(v.Recent), len(v.Pending), want)
			}
			// 995 left the window: nine folds of 100, then 95 plus "last"
			// wait for MinBatch.
			if tc.summarizer != nil && len(v.Pending) != 96 {
				t.Errorf("%d pending after the backlog was folded, want 96 (below MinBatch)", len(v.Pending))
			}
		})
	}
}

// TestAppendInsideTheWindowLoadsNothing appends to a conversation with a
// summarizer: while every message is inside the window, Append stores them
// and reads nothing back; once some left it, Append loads the conversation
// to fold them.
func TestAppendInsideTheWindowLoadsNothing(t *testing.T) {
	store := &countingStore{Store: memory.NewInMemoryStore()}
	sum := &foldRecorder{}
	c := newConversations(t, memory.ConversationConfig{Store: store, Summarizer: sum, Window: 4, MinBatch: 1})
	for i := range 2 {
		if err := c.Append(t.Context(), "c", user(fmt.Sprint("q", i), fmt.Sprint("a", i))...); err != nil {
			t.Fatal(err)
		}
	}
	if store.loads != 0 {
		t.Errorf("4 messages in a window of 4: Append loaded the conversation %d times, want 0", store.loads)
	}
	if err := c.Append(t.Context(), "c", user("q2", "a2")...); err != nil {
		t.Fatal(err)
	}
	if store.loads == 0 || len(sum.Calls()) != 1 {
		t.Errorf("6 messages in a window of 4: %d loads and %d folds, want the two oldest folded", store.loads, len(sum.Calls()))
	}
}
