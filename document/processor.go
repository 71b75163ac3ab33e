package document

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"
	"golang.org/x/sync/errgroup"
)

// Defaults of [Config] fields left zero.
const (
	// DefaultWorkers is the number of documents processed at once.
	DefaultWorkers = 2
	// DefaultQueue is the number of documents that may wait for a worker.
	DefaultQueue = 64
	// DefaultConcurrency is the number of summaries one document asks
	// for at once.
	DefaultConcurrency = 5
	// DefaultCombineBudget is the most estimated tokens of summaries one
	// Combine call receives.
	DefaultCombineBudget = 3000
)

// interruptTimeout bounds the store write that marks a document failed
// after its processing was cut short.
const interruptTimeout = 10 * time.Second

// Config configures [NewProcessor].
type Config struct {
	// Store keeps the documents. Required.
	Store Store
	// Summarizer writes chunk and document summaries, usually an
	// [*LLMSummarizer]. Required.
	Summarizer Summarizer
	// Chunker cuts documents into chunks. The zero value uses the
	// defaults.
	Chunker Chunker
	// Limits validates uploads. The zero value uses the defaults.
	Limits Limits
	// Workers is how many documents are processed at once. Zero means
	// [DefaultWorkers].
	Workers int
	// Queue is how many uploaded documents may wait for a worker; an
	// upload beyond it fails with [ErrQueueFull] and stores nothing. Zero
	// means [DefaultQueue].
	Queue int
	// Concurrency is how many summaries of one document are asked for at
	// once. Zero means [DefaultConcurrency].
	Concurrency int
	// CombineBudget is the most estimated tokens of chunk summaries one
	// Summarizer.Combine call receives; longer documents are combined in
	// rounds. Zero means [DefaultCombineBudget].
	CombineBudget int
	// MaxChunks is the most chunks a document may have; a longer one
	// fails (before any summary is asked for) with an error saying to
	// raise it or Chunker.Size. It bounds the model calls one upload
	// costs. Zero means no limit.
	MaxChunks int
	// Timeout bounds the processing of one document. Zero means no limit
	// beyond the Summarizer's own.
	Timeout time.Duration
	// OnChange is called with the document after every status change the
	// Processor makes (pending on upload, processing, ready, failed), in
	// order for each document, from the goroutine that made it. Use it to
	// emit events or metrics; it must not block. Nil means nothing is
	// called.
	OnChange func(Document)
	// OnFinish is called with a document's id once the Processor is done
	// with it after queueing it: processed, failed, interrupted by Close,
	// deleted meanwhile (which OnChange does not report), or not queued
	// after all because Close came first. Every document an OnChange
	// reported pending is followed by one OnFinish call, from the
	// goroutine that finished it, before [Processor.Wait] returns it; use
	// it to release what was counted per queued document. It must not
	// block. Nil means nothing is called.
	OnFinish func(id string)
	// NewID returns the id of an uploaded document. Nil means a random
	// UUID.
	NewID func() string
	// Now returns the upload time, kept to the microsecond. Nil means
	// time.Now.
	Now func() time.Time
	// Logger receives a line per failed document. Nil means no logging.
	Logger *zap.Logger
}

// Processor accepts uploads and processes them in the background: an
// upload is validated, stored with status pending and queued, and
// [Processor.Upload] returns at once; a worker then chunks the document,
// summarizes the chunks and the document, and stores the result (ready),
// or records why it failed (failed). It is safe for concurrent use; build
// one per service and [Processor.Close] it on shutdown.
type Processor struct {
	cfg   Config
	log   *zap.Logger
	queue chan string
	slots chan struct{}

	ctx    context.Context // cancelled when Close gives up waiting
	cancel context.CancelFunc
	wg     sync.WaitGroup

	interrupted atomic.Int64 // documents Close cut short

	mu      sync.Mutex
	closed  bool
	active  map[string]bool // queued or processing
	changed chan struct{}   // closed and replaced on every change
}

// NewProcessor validates cfg and starts the workers.
func NewProcessor(cfg Config) (*Processor, error) {
	if cfg.Store == nil {
		return nil, errors.New("document: Config.Store is nil; use NewMemoryStore or a database store")
	}
	if cfg.Summarizer == nil {
		return nil, errors.New("document: Config.Summarizer is nil; use &LLMSummarizer{Model: model}")
	}
	if err := cfg.Chunker.Validate(); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		v    *int
		def  int
	}{
		{"Workers", &cfg.Workers, DefaultWorkers},
		{"Queue", &cfg.Queue, DefaultQueue},
		{"Concurrency", &cfg.Concurrency, DefaultConcurrency},
		{"CombineBudget", &cfg.CombineBudget, DefaultCombineBudget},
		{"MaxChunks", &cfg.MaxChunks, 0},
	} {
		if *f.v < 0 {
			return nil, fmt.Errorf("document: Config.%s is %d; use a positive number, or 0 for the default (%d)", f.name, *f.v, f.def)
		}
		if *f.v == 0 {
			*f.v = f.def
		}
	}
	if cfg.NewID == nil {
		cfg.NewID = uuid.NewString
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	p := &Processor{
		cfg:     cfg,
		log:     cfg.Logger,
		queue:   make(chan string, cfg.Queue),
		slots:   make(chan struct{}, cfg.Queue),
		active:  make(map[string]bool),
		changed: make(chan struct{}),
	}
	if p.log == nil {
		p.log = zap.NewNop()
	}
	p.ctx, p.cancel = context.WithCancel(context.Background())
	p.wg.Add(cfg.Workers)
	for range cfg.Workers {
		go p.work()
	}
	return p, nil
}

// Store returns the store the Processor writes to.
func (p *Processor) Store() Store { return p.cfg.Store }

// Upload validates u against Config.Limits, stores it with status pending
// and queues it for processing; it returns the stored document without
// waiting for processing. It fails with a [*ValidationError] for a bad
// upload, [ErrTooMany] when the conversation is full, a [*QuotaError]
// when the owner's documents would pass Limits.MaxPerOwner or
// MaxBytesPerOwner, [ErrQueueFull] when
// the queue is, and [ErrClosed] after Close; in each case nothing is
// stored.
func (p *Processor) Upload(ctx context.Context, u Upload) (Document, error) {
	ct, content, err := p.cfg.Limits.Check(u)
	if err != nil {
		return Document{}, err
	}
	if err := p.reserve(ctx, false); err != nil {
		return Document{}, err
	}
	// Every store keeps microseconds.
	now := p.cfg.Now().UTC().Truncate(time.Microsecond)
	doc := Document{
		ID: p.cfg.NewID(), ConversationID: u.ConversationID, Owner: u.Owner, Name: u.Name,
		ContentType: ct, Size: int64(len(content)), Status: StatusPending,
		Tokens: EstimateTokens(string(content)), Created: now, Updated: now,
	}
	if err := p.cfg.Store.Create(ctx, doc, content, p.cfg.Limits.quota()); err != nil {
		<-p.slots
		return Document{}, err
	}
	p.changedTo(doc)
	if err := p.enqueue(doc.ID); err != nil {
		// Closed between reserve and enqueue: say so on the document.
		p.fail(doc.ID, &ProcessError{DocumentID: doc.ID, Stage: "queue", Err: err})
		p.finished(doc.ID)
		return Document{}, err
	}
	return doc, nil
}

// Process queues a stored document for processing again: one that failed,
// or one left pending or processing by a process that stopped. It sets the
// status to pending first. A document already queued or being processed
// by this Processor fails with an error saying so; a full queue with
// [ErrQueueFull].
func (p *Processor) Process(ctx context.Context, id string) error {
	return p.requeue(ctx, id, false)
}

// Resume queues every document the store holds as pending or processing
// ([Store.Unfinished]), waiting for room in the queue, and returns how
// many it queued. Call it when a service starts, so that uploads a crash
// or a cut-short Close left unfinished are processed. With several
// service instances sharing a store, call it from one of them only, or a
// document may be processed twice (harmless, as Complete replaces the
// result, but it costs model calls).
func (p *Processor) Resume(ctx context.Context) (int, error) {
	docs, err := p.cfg.Store.Unfinished(ctx)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, d := range docs {
		if err := p.requeue(ctx, d.ID, true); err != nil {
			return n, fmt.Errorf("document: resume: queued %d of %d unfinished documents: %w", n, len(docs), err)
		}
		n++
	}
	return n, nil
}

func (p *Processor) requeue(ctx context.Context, id string, wait bool) error {
	p.mu.Lock()
	busy := p.active[id]
	if !busy {
		p.active[id] = true // claimed; enqueue keeps it
	}
	p.mu.Unlock()
	if busy {
		return fmt.Errorf("document: %q is already queued or being processed; wait for it with Processor.Wait", id)
	}
	release := func() {
		p.mu.Lock()
		delete(p.active, id)
		p.mu.Unlock()
		p.notify()
	}
	if err := p.reserve(ctx, wait); err != nil {
		release()
		return err
	}
	doc, err := p.cfg.Store.SetStatus(ctx, id, StatusPending, "")
	if err != nil {
		<-p.slots
		release()
		return err
	}
	p.changedTo(doc)
	if err := p.enqueue(id); err != nil {
		p.fail(id, &ProcessError{DocumentID: id, Stage: "queue", Err: err})
		p.finished(id)
		return err
	}
	return nil
}

// reserve takes a queue slot, so that a document is stored only when it
// can be queued. With wait, it waits for a slot until ctx ends.
func (p *Processor) reserve(ctx context.Context, wait bool) error {
	p.mu.Lock()
	closed := p.closed
	p.mu.Unlock()
	if closed {
		return ErrClosed
	}
	if wait {
		select {
		case p.slots <- struct{}{}:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	select {
	case p.slots <- struct{}{}:
		return nil
	default:
		return fmt.Errorf("%w (%d waiting)", ErrQueueFull, cap(p.slots))
	}
}

// enqueue queues id into the slot reserve took.
func (p *Processor) enqueue(id string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		<-p.slots
		delete(p.active, id)
		return ErrClosed
	}
	p.active[id] = true
	p.queue <- id // never blocks: reserve took a slot
	return nil
}

// Wait blocks until the document is ready or failed and this Processor's
// work on it is over (so [Processor.Process] may take it again), and
// returns it; check its Status. It observes the changes this Processor
// makes; it fails with [ErrClosed] if the Processor closes first, and with
// the context's error when ctx ends.
func (p *Processor) Wait(ctx context.Context, id string) (Document, error) {
	for {
		p.mu.Lock()
		ch, closed, busy := p.changed, p.closed && len(p.active) == 0, p.active[id]
		p.mu.Unlock()
		doc, err := p.cfg.Store.Get(ctx, id)
		if err != nil {
			return Document{}, err
		}
		if doc.Status.Done() && !busy {
			return doc, nil
		}
		if closed {
			return doc, fmt.Errorf("%w; document %q is still %s", ErrClosed, id, doc.Status)
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return doc, fmt.Errorf("document: waiting for %q (%s): %w", id, doc.Status, ctx.Err())
		}
	}
}

// Close stops accepting uploads and waits for the queued and running
// documents to finish. If ctx ends first, it cancels the running ones,
// marks every unfinished document failed with an error saying it was
// interrupted (so nothing is left pending unseen; [Processor.Process]
// resumes it), waits for the workers to stop, and returns an error
// matching ctx.Err() that says how many were interrupted (none
// interrupted: nil). Close is idempotent.
func (p *Processor) Close(ctx context.Context) error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.queue)
	}
	p.mu.Unlock()
	done := make(chan struct{})
	go func() { p.wg.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		p.cancel()
		<-done
		if n := p.interrupted.Load(); n > 0 {
			err = fmt.Errorf("document: close: %d documents were interrupted and marked failed; call Processor.Process on a new Processor to resume them: %w", n, ctx.Err())
		}
	}
	p.cancel()
	p.notify()
	return err
}

func (p *Processor) work() {
	defer p.wg.Done()
	for id := range p.queue {
		<-p.slots
		if p.ctx.Err() != nil {
			p.interrupted.Add(1)
			p.fail(id, &ProcessError{DocumentID: id, Stage: "queue", Err: errors.New("interrupted by Processor.Close before processing started")})
		} else if err := p.process(id); err != nil {
			if p.ctx.Err() != nil {
				p.interrupted.Add(1)
			}
			p.fail(id, err)
		}
		p.finished(id) // before Wait returns; Process takes the id again once it leaves active
		p.mu.Lock()
		delete(p.active, id)
		p.mu.Unlock()
		p.notify()
	}
}

// finished calls Config.OnFinish, if set, for a document the Processor
// is done with.
func (p *Processor) finished(id string) {
	if p.cfg.OnFinish != nil {
		p.cfg.OnFinish(id)
	}
}

// process chunks and summarizes one document and stores the result.
func (p *Processor) process(id string) error {
	ctx := p.ctx
	if p.cfg.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.cfg.Timeout)
		defer cancel()
	}
	stageErr := func(stage string, err error) error {
		if p.ctx.Err() != nil {
			err = fmt.Errorf("interrupted by Processor.Close: %w", err)
		}
		return &ProcessError{DocumentID: id, Stage: stage, Err: err}
	}
	doc, err := p.cfg.Store.SetStatus(ctx, id, StatusProcessing, "")
	if err != nil {
		return stageErr("store", err)
	}
	p.changedTo(doc)
	content, err := p.cfg.Store.Content(ctx, id)
	if err != nil {
		return stageErr("store", err)
	}
	chunks, err := p.cfg.Chunker.Split(string(content))
	if err != nil {
		return stageErr("chunk", err)
	}
	if len(chunks) == 0 {
		return stageErr("chunk", errors.New("the content has no text"))
	}
	if p.cfg.MaxChunks > 0 && len(chunks) > p.cfg.MaxChunks {
		return stageErr("chunk", fmt.Errorf("%d chunks, more than Config.MaxChunks (%d); raise it or Chunker.Size, or upload a shorter document", len(chunks), p.cfg.MaxChunks))
	}
	doc.Chunks = len(chunks)

	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(p.cfg.Concurrency)
	for i := range chunks {
		g.Go(func() error {
			sum, err := p.cfg.Summarizer.SummarizeChunk(gctx, doc, chunks[i])
			if err != nil {
				return stageErr(fmt.Sprintf("summarize chunk %d of %d", i+1, len(chunks)), err)
			}
			chunks[i].Summary = sum
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return err
	}
	summary, err := p.combine(ctx, doc, chunks)
	if err != nil {
		return stageErr("summarize document", err)
	}
	doc, err = p.cfg.Store.Complete(ctx, id, summary, chunks)
	if err != nil {
		return stageErr("store", err)
	}
	p.changedTo(doc)
	return nil
}

// combine reduces the chunk summaries to one document summary: a single
// chunk's summary is the document's; otherwise consecutive summaries are
// combined in groups of at most CombineBudget tokens, round after round,
// until one Combine call can take them all.
func (p *Processor) combine(ctx context.Context, doc Document, chunks []Chunk) (string, error) {
	parts := make([]string, len(chunks))
	for i, c := range chunks {
		parts[i] = c.Summary
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	for {
		var groups [][]string
		total, size := 0, 0
		for _, s := range parts {
			t := EstimateTokens(s)
			total += t
			if len(groups) == 0 || size+t > p.cfg.CombineBudget {
				groups = append(groups, nil)
				size = 0
			}
			groups[len(groups)-1] = append(groups[len(groups)-1], s)
			size += t
		}
		if total <= p.cfg.CombineBudget || len(groups) == len(parts) {
			return p.cfg.Summarizer.Combine(ctx, doc, parts)
		}
		next := make([]string, len(groups))
		g, gctx := errgroup.WithContext(ctx)
		g.SetLimit(p.cfg.Concurrency)
		for i, grp := range groups {
			if len(grp) == 1 {
				next[i] = grp[0]
				continue
			}
			g.Go(func() error {
				s, err := p.cfg.Summarizer.Combine(gctx, doc, grp)
				next[i] = s
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return "", err
		}
		parts = next
	}
}

// fail records err on the document with a context of its own, since the
// processing context may be the reason for the failure.
func (p *Processor) fail(id string, err error) {
	ctx, cancel := context.WithTimeout(context.Background(), interruptTimeout)
	defer cancel()
	doc, serr := p.cfg.Store.SetStatus(ctx, id, StatusFailed, err.Error())
	if errors.Is(serr, ErrNotFound) {
		p.log.Debug("document deleted while processing", zap.String("document", id))
		return
	}
	if serr != nil {
		p.log.Error("document failed, and recording the failure failed too; it stays in its last status",
			zap.String("document", id), zap.Error(err), zap.NamedError("store_error", serr))
		return
	}
	p.log.Warn("document processing failed", zap.String("document", id), zap.Error(err))
	p.changedTo(doc)
}

func (p *Processor) changedTo(doc Document) {
	if p.cfg.OnChange != nil {
		p.cfg.OnChange(doc)
	}
	p.notify()
}

func (p *Processor) notify() {
	p.mu.Lock()
	close(p.changed)
	p.changed = make(chan struct{})
	p.mu.Unlock()
}
