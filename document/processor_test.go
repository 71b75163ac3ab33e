package document_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/document"
	"github.com/google/go-cmp/cmp"
)

// recorder collects the statuses OnChange reports, per document.
type recorder struct {
	mu   sync.Mutex
	seen map[string][]document.Status
	hook func(document.Document)
}

func (r *recorder) onChange(d document.Document) {
	r.mu.Lock()
	if r.seen == nil {
		r.seen = map[string][]document.Status{}
	}
	r.seen[d.ID] = append(r.seen[d.ID], d.Status)
	hook := r.hook
	r.mu.Unlock()
	if hook != nil {
		hook(d)
	}
}

func (r *recorder) statuses(id string) []document.Status {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]document.Status(nil), r.seen[id]...)
}

func newProcessor(t *testing.T, cfg document.Config) *document.Processor {
	t.Helper()
	if cfg.Store == nil {
		cfg.Store = document.NewMemoryStore()
	}
	p, err := document.NewProcessor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		p.Close(ctx)
	})
	return p
}

func upload(conv, name, text string) document.Upload {
	return document.Upload{ConversationID: conv, Name: name, ContentType: "text/plain", Content: []byte(text)}
}

// threeChunks is cut into three chunks by a Chunker of Size 50, Overlap 10.
var threeChunks = strings.Repeat("Alpha facts about pricing and plans. ", 4) + "\n\n" +
	strings.Repeat("Beta notes on the roadmap for spring. ", 4) + "\n\n" +
	strings.Repeat("Gamma appendix with contact data here. ", 4)

func TestProcessorUploadToReady(t *testing.T) {
	t.Parallel()
	model := llmtest.New().
		On("Part 1 of 3", llmtest.Text("About pricing.")).
		On("Part 2 of 3", llmtest.Text("About the roadmap.")).
		On("Part 3 of 3", llmtest.Text("Contact data.")).
		On("Summaries of its parts", llmtest.Text("Pricing, roadmap and contacts."))
	var rec recorder
	p := newProcessor(t, document.Config{
		Summarizer: &document.LLMSummarizer{Model: model},
		Chunker:    document.Chunker{Size: 50, Overlap: 10},
		OnChange:   rec.onChange,
	})
	doc, err := p.Upload(t.Context(), upload("c1", "plan.txt", threeChunks))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Status != document.StatusPending || doc.ID == "" || doc.Size != int64(len(threeChunks)) {
		t.Fatalf("Upload returned %+v; want a pending document with an id and the size", doc)
	}
	got, err := p.Wait(t.Context(), doc.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != document.StatusReady || got.Summary != "Pricing, roadmap and contacts." || got.Chunks != 3 || got.Error != "" {
		t.Fatalf("after Wait: %+v; want ready with the combined summary and 3 chunks", got)
	}
	chunks, err := p.Store().Chunks(t.Context(), doc.ID)
	if err != nil {
		t.Fatal(err)
	}
	var sums []string
	for _, c := range chunks {
		sums = append(sums, c.Summary)
	}
	if diff := cmp.Diff([]string{"About pricing.", "About the roadmap.", "Contact data."}, sums); diff != "" {
		t.Errorf("chunk summaries (-want +got):\n%s", diff)
	}
	want := []document.Status{document.StatusPending, document.StatusProcessing, document.StatusReady}
	if diff := cmp.Diff(want, rec.statuses(doc.ID)); diff != "" {
		t.Errorf("OnChange statuses (-want +got):\n%s", diff)
	}
	// The combine call saw the chunk summaries in order.
	var combine string
	for _, c := range model.Calls() {
		if strings.Contains(c.Prompt, "Summaries of its parts") {
			combine = c.Prompt
		}
	}
	if i, j := strings.Index(combine, "About pricing."), strings.Index(combine, "Contact data."); i < 0 || j < i {
		t.Errorf("combine prompt does not list the chunk summaries in order:\n%s", combine)
	}
}

func TestProcessorSingleChunkNeedsNoCombine(t *testing.T) {
	t.Parallel()
	model := llmtest.New(llmtest.Text("A greeting."))
	p := newProcessor(t, document.Config{Summarizer: &document.LLMSummarizer{Model: model}})
	doc, err := p.Upload(t.Context(), upload("c1", "hi.txt", "Hello there."))
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Wait(t.Context(), doc.ID)
	if err != nil || got.Status != document.StatusReady || got.Summary != "A greeting." {
		t.Fatalf("Wait = %+v, %v; want ready with the chunk's summary", got, err)
	}
	if n := len(model.Calls()); n != 1 {
		t.Errorf("%d model calls; want 1 (one chunk, no combine)", n)
	}
}

func TestProcessorSummaryFailureMarksFailed(t *testing.T) {
	t.Parallel()
	model := llmtest.New().
		On("Part 2 of 3", llmtest.Fail(errors.New("model overloaded")), llmtest.Text("Roadmap.")).
		On("Summaries of its parts", llmtest.Text("Doc.")).
		Default(llmtest.Text("Part."))
	var rec recorder
	p := newProcessor(t, document.Config{
		Summarizer: &document.LLMSummarizer{Model: model},
		Chunker:    document.Chunker{Size: 50, Overlap: 10},
		OnChange:   rec.onChange,
	})
	doc, err := p.Upload(t.Context(), upload("c1", "plan.txt", threeChunks))
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Wait(t.Context(), doc.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != document.StatusFailed || !strings.Contains(got.Error, "summarize chunk 2 of 3: model overloaded") {
		t.Fatalf("after a failed chunk summary: status %s, error %q; want failed naming chunk 2 and the cause", got.Status, got.Error)
	}
	if _, err := document.Load(t.Context(), p.Store(), doc.ID, document.LoadOptions{}); !errors.Is(err, document.ErrNotReady) || !strings.Contains(err.Error(), "model overloaded") {
		t.Errorf("Load of a failed document: %v; want ErrNotReady with the failure", err)
	}
	// Processing it again succeeds now that the model answers.
	if err := p.Process(t.Context(), doc.ID); err != nil {
		t.Fatal(err)
	}
	got, err = p.Wait(t.Context(), doc.ID)
	if err != nil || got.Status != document.StatusReady || got.Error != "" {
		t.Fatalf("after Process: %+v, %v; want ready with no error", got, err)
	}
	want := []document.Status{document.StatusPending, document.StatusProcessing, document.StatusFailed,
		document.StatusPending, document.StatusProcessing, document.StatusReady}
	if diff := cmp.Diff(want, rec.statuses(doc.ID)); diff != "" {
		t.Errorf("OnChange statuses (-want +got):\n%s", diff)
	}
}

func TestProcessorCombinesInRounds(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	combines := 0
	model := llmtest.New()
	model.OnFunc(func(c llmtest.Call) bool {
		if !strings.Contains(c.Prompt, "Summaries of its parts") {
			return false
		}
		mu.Lock()
		combines++
		mu.Unlock()
		return true
	}, llmtest.Text("Combined summary of several parts of the document."))
	model.Default(llmtest.Text("A chunk summary of about sixty bytes, fifteen tokens or so."))
	p := newProcessor(t, document.Config{
		Summarizer:    &document.LLMSummarizer{Model: model},
		Chunker:       document.Chunker{Size: 20, Overlap: 5},
		CombineBudget: 60, // four chunk summaries per combine
	})
	doc, err := p.Upload(t.Context(), upload("c1", "long.txt", prose(20)))
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Wait(t.Context(), doc.ID)
	if err != nil || got.Status != document.StatusReady {
		t.Fatalf("Wait = %+v, %v; want ready", got, err)
	}
	if got.Chunks < 30 {
		t.Fatalf("%d chunks; the test needs many", got.Chunks)
	}
	// Each combine call holds at most 4 summaries; the number of calls is
	// at least chunks/4 for the first round plus one final call.
	mu.Lock()
	n := combines
	mu.Unlock()
	if n < got.Chunks/4+1 {
		t.Errorf("%d combine calls for %d chunks; want at least %d (rounds of at most 4)", n, got.Chunks, got.Chunks/4+1)
	}
	for _, c := range model.Calls() {
		if strings.Contains(c.Prompt, "Summaries of its parts") && strings.Count(c.Prompt, "\n5. ") > 0 {
			t.Errorf("a combine call received more than 4 summaries:\n%s", c.Prompt)
		}
	}
}

func TestProcessorQueueFullAndClose(t *testing.T) {
	t.Parallel()
	model := llmtest.New().Default(llmtest.Hang())
	started := make(chan struct{}, 1)
	var rec recorder
	rec.hook = func(d document.Document) {
		if d.Status == document.StatusProcessing {
			select {
			case started <- struct{}{}:
			default:
			}
		}
	}
	store := document.NewMemoryStore()
	p, err := document.NewProcessor(document.Config{
		Store: store, Summarizer: &document.LLMSummarizer{Model: model},
		Workers: 1, Queue: 1, OnChange: rec.onChange,
	})
	if err != nil {
		t.Fatal(err)
	}
	first, err := p.Upload(t.Context(), upload("c1", "a.txt", "first"))
	if err != nil {
		t.Fatal(err)
	}
	<-started // the worker holds the first; the queue is empty
	second, err := p.Upload(t.Context(), upload("c1", "b.txt", "second"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Upload(t.Context(), upload("c1", "c.txt", "third")); !errors.Is(err, document.ErrQueueFull) {
		t.Fatalf("third upload with a full queue: %v; want ErrQueueFull", err)
	}
	if docs, _ := store.List(t.Context(), "c1"); len(docs) != 2 {
		t.Errorf("%d documents stored; want 2 (the refused upload stores nothing)", len(docs))
	}

	ctx, cancel := context.WithCancel(t.Context())
	cancel() // give up at once: the hung call is cancelled
	if err := p.Close(ctx); !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "2 documents were interrupted") {
		t.Fatalf("Close with a done context: %v; want context.Canceled reporting 2 interrupted documents", err)
	}
	for _, d := range []document.Document{first, second} {
		got, err := store.Get(t.Context(), d.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != document.StatusFailed || !strings.Contains(got.Error, "interrupted") {
			t.Errorf("%s after Close: status %s, error %q; want failed as interrupted", d.Name, got.Status, got.Error)
		}
	}
	if _, err := p.Upload(t.Context(), upload("c1", "d.txt", "late")); !errors.Is(err, document.ErrClosed) {
		t.Errorf("Upload after Close: %v; want ErrClosed", err)
	}
	if err := p.Close(t.Context()); err != nil {
		t.Errorf("second Close: %v; want nil", err)
	}
}

func TestProcessorCloseDrains(t *testing.T) {
	t.Parallel()
	model := llmtest.New().Default(llmtest.Text("Summary."))
	store := document.NewMemoryStore()
	p, err := document.NewProcessor(document.Config{Store: store, Summarizer: &document.LLMSummarizer{Model: model}, Workers: 2,
		Limits: document.Limits{MaxPerConversation: -1}})
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for i := range 10 {
		d, err := p.Upload(t.Context(), upload("c1", fmt.Sprintf("d%d.txt", i), fmt.Sprintf("Document number %d.", i)))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, d.ID)
	}
	if err := p.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if d, err := store.Get(t.Context(), id); err != nil || d.Status != document.StatusReady {
			t.Errorf("%s after Close: %+v, %v; want ready (Close drains the queue)", id, d, err)
		}
	}
	// Wait after Close still reports a finished document.
	if d, err := p.Wait(t.Context(), ids[0]); err != nil || d.Status != document.StatusReady {
		t.Errorf("Wait after Close = %s, %v; want ready", d.Status, err)
	}
}

func TestProcessorTimeout(t *testing.T) {
	t.Parallel()
	model := llmtest.New().Default(llmtest.Hang())
	p := newProcessor(t, document.Config{Summarizer: &document.LLMSummarizer{Model: model}, Timeout: 20 * time.Millisecond})
	doc, err := p.Upload(t.Context(), upload("c1", "a.txt", "text"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Wait(t.Context(), doc.ID)
	if err != nil || got.Status != document.StatusFailed || !strings.Contains(got.Error, "deadline exceeded") {
		t.Fatalf("Wait = %s %q, %v; want failed with the deadline", got.Status, got.Error, err)
	}
}

func TestProcessorUploadErrors(t *testing.T) {
	t.Parallel()
	model := llmtest.New().Default(llmtest.Text("S."))
	p := newProcessor(t, document.Config{Summarizer: &document.LLMSummarizer{Model: model}, Limits: document.Limits{MaxPerConversation: 2}})
	for i := range 2 {
		if _, err := p.Upload(t.Context(), upload("c1", fmt.Sprint(i, ".txt"), "text")); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.Upload(t.Context(), upload("c1", "3.txt", "text")); !errors.Is(err, document.ErrTooMany) {
		t.Errorf("third upload with MaxPerConversation 2: %v; want ErrTooMany", err)
	}
	if _, err := p.Upload(t.Context(), upload("c1", "bad.txt", "")); !errors.Is(err, document.ErrInvalid) {
		t.Errorf("empty upload: %v; want ErrInvalid", err)
	}
	if _, err := p.Upload(t.Context(), upload("c2", "ok.txt", "text")); err != nil {
		t.Errorf("upload to another conversation: %v", err)
	}
}

// TestProcessorOwnerQuota: Limits.MaxPerOwner and MaxBytesPerOwner reach
// the store: an owner's upload past either is refused with a *QuotaError
// on its field, in any conversation, and another owner's is not.
func TestProcessorOwnerQuota(t *testing.T) {
	t.Parallel()
	model := llmtest.New().Default(llmtest.Text("S."))
	p := newProcessor(t, document.Config{Summarizer: &document.LLMSummarizer{Model: model}, Limits: document.Limits{MaxPerOwner: 2, MaxBytesPerOwner: 12}})
	owned := func(conv, name, text, owner string) document.Upload {
		u := upload(conv, name, text)
		u.Owner = owner
		return u
	}
	for i := range 2 {
		if _, err := p.Upload(t.Context(), owned(fmt.Sprint("c", i), fmt.Sprint(i, ".txt"), "text", "ada")); err != nil {
			t.Fatal(err)
		}
	}
	var qe *document.QuotaError
	_, err := p.Upload(t.Context(), owned("c9", "3.txt", "text", "ada"))
	const wantDocs = `document: owner "ada" holds 2 documents (8 bytes); one more would pass the limit of 2 documents per owner (Limits.MaxPerOwner, Quota.Owner.Documents); delete some first`
	if !errors.As(err, &qe) || qe.Field != "Documents" || !strings.HasSuffix(err.Error(), wantDocs) {
		t.Errorf("third upload of ada with MaxPerOwner 2: %v; want a *QuotaError on Documents ending %q", err, wantDocs)
	}
	if _, err := p.Upload(t.Context(), owned("c9", "b.txt", "text", "bob")); err != nil {
		t.Errorf("upload of another owner: %v", err)
	}
	_, err = p.Upload(t.Context(), owned("c9", "more.txt", "ninebytes", "bob"))
	const wantMore = `document: owner "bob" holds 1 documents (4 bytes); one more of 9 bytes would pass the limit of 12 bytes per owner (Limits.MaxBytesPerOwner, Quota.Owner.Bytes); delete some first`
	if !errors.As(err, &qe) || qe.Field != "Bytes" || !strings.HasSuffix(err.Error(), wantMore) {
		t.Errorf("upload taking bob to 13 bytes with MaxBytesPerOwner 12: %v; want a *QuotaError on Bytes ending %q", err, wantMore)
	}
	// A document larger than the bound alone never fits: deleting others
	// would not help.
	_, err = p.Upload(t.Context(), owned("c9", "big.txt", "thirteen byte", "bob"))
	const wantBig = `document: a document of 13 bytes is too large for the quota of 12 bytes per owner (Limits.MaxBytesPerOwner, Quota.Owner.Bytes); upload a smaller one or raise the limit`
	if !errors.As(err, &qe) || qe.Field != "Bytes" || !strings.HasSuffix(err.Error(), wantBig) {
		t.Errorf("upload of 13 bytes with MaxBytesPerOwner 12: %v; want a *QuotaError on Bytes ending %q", err, wantBig)
	}
}

func TestProcessorWaitCanceled(t *testing.T) {
	t.Parallel()
	model := llmtest.New().Default(llmtest.Hang())
	p := newProcessor(t, document.Config{Summarizer: &document.LLMSummarizer{Model: model}})
	doc, err := p.Upload(t.Context(), upload("c1", "a.txt", "text"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Millisecond)
	defer cancel()
	if _, err := p.Wait(ctx, doc.ID); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Wait with an expiring context: %v; want DeadlineExceeded", err)
	}
	if err := p.Process(t.Context(), doc.ID); err == nil || !strings.Contains(err.Error(), "already queued or being processed") {
		t.Errorf("Process of a document being processed: %v; want an error saying so", err)
	}
	if _, err := p.Wait(t.Context(), "nope"); !errors.Is(err, document.ErrNotFound) {
		t.Errorf("Wait for an unknown id: %v; want ErrNotFound", err)
	}
	// The model never answers: give up on closing at once.
	done, cancelClose := context.WithCancel(t.Context())
	cancelClose()
	if err := p.Close(done); !errors.Is(err, context.Canceled) {
		t.Errorf("Close: %v; want context.Canceled", err)
	}
	if d, err := p.Wait(t.Context(), doc.ID); err != nil || d.Status != document.StatusFailed {
		t.Errorf("Wait after an interrupting Close = %s, %v; want failed", d.Status, err)
	}
}

func TestNewProcessorErrors(t *testing.T) {
	t.Parallel()
	sum := &document.LLMSummarizer{Model: llmtest.New()}
	for name, cfg := range map[string]document.Config{
		"no store":      {Summarizer: sum},
		"no summarizer": {Store: document.NewMemoryStore()},
		"bad chunker":   {Store: document.NewMemoryStore(), Summarizer: sum, Chunker: document.Chunker{Size: 10, Overlap: 6}},
		"bad workers":   {Store: document.NewMemoryStore(), Summarizer: sum, Workers: -1},
	} {
		if p, err := document.NewProcessor(cfg); err == nil {
			p.Close(t.Context())
			t.Errorf("%s: NewProcessor succeeded; want an error", name)
		}
	}
}

func TestThreeChunks(t *testing.T) {
	cs, err := document.Chunker{Size: 50, Overlap: 10}.Split(threeChunks)
	if err != nil || len(cs) != 3 {
		t.Fatalf("threeChunks is cut into %d chunks (%v); the processor tests need 3", len(cs), err)
	}
}

func TestProcessorMaxChunks(t *testing.T) {
	t.Parallel()
	model := llmtest.New()
	p := newProcessor(t, document.Config{
		Summarizer: &document.LLMSummarizer{Model: model},
		Chunker:    document.Chunker{Size: 50, Overlap: 10},
		MaxChunks:  2,
	})
	doc, err := p.Upload(t.Context(), upload("c1", "plan.txt", threeChunks))
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Wait(t.Context(), doc.ID)
	if err != nil || got.Status != document.StatusFailed || !strings.Contains(got.Error, "3 chunks, more than Config.MaxChunks (2)") {
		t.Fatalf("Wait = %s %q, %v; want failed naming the chunk limit", got.Status, got.Error, err)
	}
	if n := len(model.Calls()); n != 0 {
		t.Errorf("%d model calls; want none for a document over the chunk limit", n)
	}
}

func TestProcessorResume(t *testing.T) {
	t.Parallel()
	store := document.NewMemoryStore()
	// Left behind by a process that stopped: two pending, one processing,
	// one ready that must stay alone.
	for i, st := range []document.Status{document.StatusPending, document.StatusPending, document.StatusProcessing, document.StatusPending} {
		text := fmt.Sprintf("Document number %d.", i)
		d := document.Document{ID: fmt.Sprint("d", i), ConversationID: "c1", Name: "x.txt", ContentType: "text/plain",
			Size: int64(len(text)), Status: document.StatusPending, Created: time.Now()}
		if err := store.Create(t.Context(), d, []byte(text), document.Quota{}); err != nil {
			t.Fatal(err)
		}
		if st == document.StatusProcessing {
			if _, err := store.SetStatus(t.Context(), d.ID, st, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := store.Complete(t.Context(), "d3", "done before", []document.Chunk{{Text: "Document number 3.", End: 18}}); err != nil {
		t.Fatal(err)
	}
	model := llmtest.New().Default(llmtest.Text("Summary."))
	// A queue of one: Resume waits for room.
	p := newProcessor(t, document.Config{Store: store, Summarizer: &document.LLMSummarizer{Model: model}, Workers: 1, Queue: 1})
	n, err := p.Resume(t.Context())
	if err != nil || n != 3 {
		t.Fatalf("Resume = %d, %v; want 3 queued", n, err)
	}
	for _, id := range []string{"d0", "d1", "d2"} {
		if d, err := p.Wait(t.Context(), id); err != nil || d.Status != document.StatusReady || d.Summary != "Summary." {
			t.Errorf("%s after Resume: %s %q, %v; want ready", id, d.Status, d.Summary, err)
		}
	}
	if d, _ := store.Get(t.Context(), "d3"); d.Summary != "done before" {
		t.Errorf("the ready document was processed again: summary %q", d.Summary)
	}
	if left, err := store.Unfinished(t.Context()); err != nil || len(left) != 0 {
		t.Errorf("Unfinished after Resume = %d, %v; want none", len(left), err)
	}
}

// TestWaitOutlastsTheWorkersHold: Wait returns only once the Processor has
// let go of the document, so a Process right after it is accepted. The
// failure is recorded (and OnChange called) before the worker lets go; here
// OnChange holds the worker there while Wait runs.
func TestWaitOutlastsTheWorkersHold(t *testing.T) {
	t.Parallel()
	model := llmtest.New().
		On("Part 2 of 3", llmtest.Fail(errors.New("model overloaded"))).
		Default(llmtest.Text("Part."))
	failed := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	p := newProcessor(t, document.Config{
		Summarizer: &document.LLMSummarizer{Model: model},
		Chunker:    document.Chunker{Size: 50, Overlap: 10},
		OnChange: func(d document.Document) {
			if d.Status == document.StatusFailed {
				once.Do(func() { close(failed); <-release })
			}
		},
	})
	doc, err := p.Upload(t.Context(), upload("c1", "plan.txt", threeChunks))
	if err != nil {
		t.Fatal(err)
	}
	<-failed // stored as failed; the worker is held inside OnChange
	waited := make(chan error, 1)
	go func() {
		_, err := p.Wait(t.Context(), doc.ID)
		waited <- err
	}()
	select {
	case err := <-waited:
		close(release)
		t.Fatalf("Wait returned (%v) while the worker still held the document", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	if err := <-waited; err != nil {
		t.Fatal(err)
	}
	if err := p.Process(t.Context(), doc.ID); err != nil {
		t.Fatalf("Process right after Wait: %v", err)
	}
	if _, err := p.Wait(t.Context(), doc.ID); err != nil {
		t.Fatal(err)
	}
}
