package chatbot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/document"
	docsqlite "github.com/agentgraph/agentgraph/document/sqlite"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/toolresult"
)

// Defaults of DocumentConfig.
const (
	// DefaultDocumentWait is how long load_document waits for a document
	// that is still being processed (the design's DEFAULT_WAIT_TIMEOUT).
	DefaultDocumentWait = 30 * time.Second
	// DefaultDocumentLoadBudget is the most estimated tokens of document
	// text load_document returns: what fits one observation (the prompts
	// show at most 6000 bytes of a tool result).
	DefaultDocumentLoadBudget = 1400
	// DefaultDocumentsPerPrincipal and DefaultDocumentBytesPerPrincipal
	// bound the documents one principal holds (DocumentConfig.MaxPerPrincipal,
	// DocumentConfig.MaxBytesPerPrincipal).
	DefaultDocumentsPerPrincipal     = 100
	DefaultDocumentBytesPerPrincipal = 32 << 20
)

// DefaultQueuePerPrincipalShare divides DocumentConfig.Queue into the
// number of one principal's documents that may wait or be processed when
// QueuePerPrincipal is zero: Queue/4 (16 of the default 64), at least 1.
const DefaultQueuePerPrincipalShare = 4

// LoadDocumentTool is the name of the local tool that loads an uploaded
// document's content, or its chunks most relevant to a query, into the
// turn. The supervisor is offered it only in conversations that have
// documents.
const LoadDocumentTool = "load_document"

// DocumentConfig configures the documents users upload to a conversation
// (package document): the limits of an upload, the background processing
// (chunks and their summaries, by Config.FastModel) and what
// load_document returns. The zero value uses the defaults.
type DocumentConfig struct {
	// Limits says which uploads are accepted. The zero value means
	// document's defaults: text formats, 1 MB, 5 documents per
	// conversation. Its MaxPerOwner and MaxBytesPerOwner are replaced by
	// MaxPerPrincipal and MaxBytesPerPrincipal.
	Limits document.Limits
	// Workers and Queue size the processing: how many documents are
	// processed at once and how many may wait (an upload beyond that is
	// refused with 503). Zero means document.DefaultWorkers and
	// document.DefaultQueue.
	Workers, Queue int
	// QueuePerPrincipal is the most documents of one principal that may
	// wait for, or be in, processing at once, so that one principal's
	// uploads cannot fill the queue others share: an upload through the
	// HTTP API beyond it gets 429 until one of them is processed (or
	// fails, or is deleted). Zero means a quarter of Queue
	// (DefaultQueuePerPrincipalShare), at least 1; negative means no
	// bound but Queue. It counts the documents this Bot queued.
	QueuePerPrincipal int
	// Wait is how long load_document waits for a document still being
	// processed. Zero means DefaultDocumentWait.
	Wait time.Duration
	// LoadBudget is the most estimated tokens of text load_document
	// returns. Zero means DefaultDocumentLoadBudget.
	LoadBudget int
	// MaxPerPrincipal and MaxBytesPerPrincipal bound the documents one
	// principal holds over all its conversations, in number and in bytes
	// of content: an upload through the HTTP API beyond either gets 409
	// until the principal deletes documents. Zero means
	// DefaultDocumentsPerPrincipal and DefaultDocumentBytesPerPrincipal;
	// negative means no bound. A principal's documents are those whose
	// Owner names it: the HTTP API sets it; a document uploaded through
	// [Bot.Documents] counts, and is bounded, when its Owner is set. The
	// store checks the bounds atomically with the upload, so instances
	// sharing Config.Postgres hold them together. They override
	// Limits.MaxPerOwner and MaxBytesPerOwner.
	MaxPerPrincipal      int
	MaxBytesPerPrincipal int64
	// Summarizer writes the chunk and document summaries. Nil means a
	// document.LLMSummarizer on Config.FastModel.
	Summarizer document.Summarizer
}

// documents is the bot's document processing, and the set of
// conversations that hold documents, so that a turn of a conversation
// without any costs one map lookup.
type documents struct {
	proc   *document.Processor
	store  document.Store
	wait   time.Duration
	budget int
	limits document.Limits
	// perPrincipal is the most queued documents of one principal
	// (DocumentConfig.QueuePerPrincipal); 0 means no bound.
	perPrincipal int

	mu sync.RWMutex
	// queued counts each principal's documents waiting for or in
	// processing, and its uploads under way; queuedBy names the principal
	// of each such document. Both hold at most Queue + Workers documents
	// (and the uploads under way): the processor's OnFinish removes each.
	queued   map[string]int
	queuedBy map[string]string
	convs    map[string]bool // conversations that hold, or held, documents
	// all, once convs would pass maxTrackedConversations, says that any
	// conversation may hold documents: convs is dropped, and each turn
	// asks the store.
	all bool
}

// maxTrackedConversations bounds documents.convs: conversations come and
// go with uploads and deletions a client chooses, and the set only grows.
const maxTrackedConversations = 100_000

// has reports whether the conversation may hold documents.
func (d *documents) has(conversationID string) bool {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.all || d.convs[conversationID]
}

func (d *documents) add(conversationID string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.all || d.convs[conversationID] {
		return
	}
	if len(d.convs) >= maxTrackedConversations {
		d.all, d.convs = true, nil
		return
	}
	d.convs[conversationID] = true
}

// queueShareError is an upload past its principal's share of the
// processing queue: 429.
type queueShareError struct{ limit int }

func (e *queueShareError) Error() string {
	return fmt.Sprintf("chatbot: you have %d documents waiting to be processed, the most one principal may (Config.Documents.QueuePerPrincipal); wait until one is ready (GET its status) and upload again", e.limit)
}

// reserveQueue counts an upload of principal against its share of the
// queue, or fails with a *queueShareError; the caller calls the returned
// func when the upload returns (the document itself is counted, if
// stored, by queuedDoc).
func (d *documents) reserveQueue(principal string) (func(), error) {
	if d.perPrincipal <= 0 || principal == "" {
		return func() {}, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.queued[principal] >= d.perPrincipal {
		return nil, &queueShareError{limit: d.perPrincipal}
	}
	d.queued[principal]++
	return func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		d.release(principal)
	}, nil
}

// queuedDoc counts a document the processor reported pending or
// processing against its owner's share, once.
func (d *documents) queuedDoc(doc document.Document) {
	if d.perPrincipal <= 0 || doc.Owner == "" || doc.Status.Done() {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if _, ok := d.queuedBy[doc.ID]; ok {
		return
	}
	d.queuedBy[doc.ID] = doc.Owner
	d.queued[doc.Owner]++
}

// finished releases the share a document held, when the processor is
// done with it.
func (d *documents) finished(id string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	p, ok := d.queuedBy[id]
	if !ok {
		return
	}
	delete(d.queuedBy, id)
	d.release(p)
}

// release takes one from principal's count; d.mu is held.
func (d *documents) release(principal string) {
	if d.queued[principal] <= 1 {
		delete(d.queued, principal)
		return
	}
	d.queued[principal]--
}

// quotaError is an upload beyond its principal's quota: 409.
type quotaError struct {
	field string // the DocumentConfig field of the bound
	limit int64
	what  string // "documents" or "bytes of documents"
	size  int64  // the document's size, when it alone passes the bound
}

func (e *quotaError) Error() string {
	if e.size > 0 {
		return fmt.Sprintf("chatbot: a document of %d bytes is too large for the %d %s a principal may hold (Config.Documents.%s); upload a smaller one",
			e.size, e.limit, e.what, e.field)
	}
	return fmt.Sprintf("chatbot: your documents would pass the %d %s a principal may hold (Config.Documents.%s); delete some first",
		e.limit, e.what, e.field)
}

// principalQuota names the Config field of the store's refusal of an
// upload past its owner's quota (a *document.QuotaError: the processor's
// Limits.MaxPerOwner and MaxBytesPerOwner are the principal's bounds);
// other errors are returned as they are.
func principalQuota(err error) error {
	var qe *document.QuotaError
	if !errors.As(err, &qe) {
		return err
	}
	if qe.Field == "Bytes" {
		e := &quotaError{field: "MaxBytesPerPrincipal", limit: qe.Limit, what: "bytes of documents"}
		if qe.Size > qe.Limit {
			e.size = qe.Size
		}
		return e
	}
	return &quotaError{field: "MaxPerPrincipal", limit: qe.Limit, what: "documents"}
}

// openDocuments opens the document store (DataDir/documents.db, or memory
// when DataDir is empty), starts the processor, queues the documents a
// previous run left unfinished, and registers the "documents" context
// source and the load_document tool.
func (b *Bot) openDocuments(ctx context.Context, local *operator.LocalRegistry) error {
	cfg := b.cfg.Documents
	// The principal's quota is the owner's, which the store checks
	// atomically with the upload (across instances too).
	limits := cfg.Limits
	limits.MaxPerOwner = max(cmp.Or(cfg.MaxPerPrincipal, DefaultDocumentsPerPrincipal), 0)
	limits.MaxBytesPerOwner = max(cmp.Or(cfg.MaxBytesPerPrincipal, DefaultDocumentBytesPerPrincipal), 0)
	d := &documents{wait: cfg.Wait, budget: cfg.LoadBudget, limits: limits, convs: map[string]bool{},
		queued: map[string]int{}, queuedBy: map[string]string{}}
	switch {
	case cfg.QueuePerPrincipal > 0:
		d.perPrincipal = cfg.QueuePerPrincipal
	case cfg.QueuePerPrincipal == 0:
		d.perPrincipal = max(cmp.Or(cfg.Queue, document.DefaultQueue)/DefaultQueuePerPrincipalShare, 1)
	}
	if d.wait <= 0 {
		d.wait = DefaultDocumentWait
	}
	if d.budget <= 0 {
		d.budget = DefaultDocumentLoadBudget
	}
	if b.pg != nil {
		st, err := b.postgresDocuments(ctx)
		if err != nil {
			return err
		}
		d.store = st
	} else if dir := b.cfg.DataDir; dir != "" {
		if err := privateFile(filepath.Join(dir, "documents.db"), b.log, os.Chmod); err != nil {
			return err
		}
		st, err := docsqlite.New(ctx, docsqlite.Config{Path: filepath.Join(dir, "documents.db"), Logger: b.log})
		if err != nil {
			return fmt.Errorf("chatbot: document store: %w", err)
		}
		b.closers = append(b.closers, func(context.Context) error { return st.Close() })
		d.store = st
	} else {
		d.store = document.NewMemoryStore()
	}
	// The conversations that hold documents now; those this process
	// uploads to join through OnChange below.
	convs, err := d.store.Conversations(ctx)
	if err != nil {
		return fmt.Errorf("chatbot: document store: %w", err)
	}
	for _, id := range convs {
		d.add(id)
	}
	sum := cfg.Summarizer
	if sum == nil {
		sum = &document.LLMSummarizer{Model: b.turnModel(), ModelName: b.cfg.FastModel}
	}
	proc, err := document.NewProcessor(document.Config{
		Store: d.store, Summarizer: sum, Limits: limits, Workers: cfg.Workers, Queue: cfg.Queue,
		OnChange: func(doc document.Document) {
			d.add(doc.ConversationID)
			d.queuedDoc(doc)
		},
		OnFinish: d.finished,
		Logger:   b.log,
	})
	if err != nil {
		return fmt.Errorf("chatbot: Config.Documents: %w", err)
	}
	d.proc = proc
	// Closed before the store and the model it needs (closers run in
	// reverse order), after the turns (Close waits for them first).
	b.closers = append(b.closers, func(ctx context.Context) error {
		if err := proc.Close(ctx); err != nil {
			return fmt.Errorf("chatbot: document processing: %w", err)
		}
		return nil
	})
	b.docs = d
	if n, err := proc.Resume(ctx); err != nil {
		return fmt.Errorf("chatbot: resuming unfinished documents: %w", err)
	} else if n > 0 {
		b.log.Info("chatbot: processing documents a previous run left unfinished", zap.Int("documents", n))
	}
	if err := b.assembler.Register("documents", document.ContextSource(d.store, d.budget)); err != nil {
		return fmt.Errorf("chatbot: context assembler: %w", err)
	}
	return local.Register(operator.LocalFunc(operator.LocalInfo{
		Name: LoadDocumentTool,
		Description: "Loads a document the user uploaded to this conversation (waiting until it is processed): " +
			"its content, or the parts most relevant to a query. Arguments: document_id (from the documents list), query (optional: what to look for)",
		InputSchema: []byte(`{"type":"object","properties":{` +
			`"document_id":{"type":"string","description":"the document's id, from the conversation's documents list"},` +
			`"query":{"type":"string","description":"what to look for in the document; empty means the user's question"}},` +
			`"required":["document_id"]}`),
		Capabilities: operator.Capabilities{Progress: true},
	}, b.loadDocument))
}

// Documents returns the bot's document processor: Upload adds a document
// to a conversation (as POST /api/v1/documents does), Wait waits for it
// to be processed, and Store reads and deletes documents. Documents
// uploaded through it are shown to the conversation's supervisor. Its
// Limits.MaxPerOwner and MaxBytesPerOwner are Config.Documents'
// MaxPerPrincipal and MaxBytesPerPrincipal: the *document.QuotaError of
// an upload with an Owner past them names the former.
func (b *Bot) Documents() *document.Processor { return b.docs.proc }

// loadDocument is the load_document tool: it waits for the document to be
// processed and returns its text, or its chunks most relevant to the
// query, within the load budget. It serves only documents of the turn's
// conversation.
func (b *Bot) loadDocument(ctx context.Context, c operator.LocalCall) (*toolresult.Result, error) {
	fail := func(format string, args ...any) (*toolresult.Result, error) {
		msg := fmt.Sprintf(format, args...)
		return &toolresult.Result{Tool: LoadDocumentTool, IsError: true, Error: msg}, nil
	}
	turn := c.Turn
	if turn == nil || turn.ConversationID == "" {
		return nil, errors.New("load_document runs only within a chat turn, which names the conversation")
	}
	id, _ := c.Args["document_id"].(string)
	id = strings.TrimSpace(id)
	if id == "" {
		return fail("the document_id argument is required: %s", b.docs.listing(ctx, turn.ConversationID))
	}
	query, _ := c.Args["query"].(string)
	if strings.TrimSpace(query) == "" {
		query = turn.Query
	}
	doc, err := b.docs.store.Get(ctx, id)
	if errors.Is(err, document.ErrNotFound) || err == nil && doc.ConversationID != turn.ConversationID {
		return fail("this conversation has no document %q: %s", id, b.docs.listing(ctx, turn.ConversationID))
	}
	if err != nil {
		return nil, err
	}
	if !doc.Status.Done() {
		_ = c.Messenger.Progress(ctx, 0, fmt.Sprintf("Waiting for %q to be processed...", doc.Name))
		// The turn's running slot (Config.MaxRunningTurns) is given up
		// while it waits, so that the other turns go on.
		resumed := func(context.Context) error { return nil }
		if run := runFrom(ctx); run.slot != nil {
			resumed = run.slot.asking()
		}
		wctx, cancel := context.WithTimeout(ctx, b.docs.wait)
		waited, werr := b.docs.proc.Wait(wctx, id)
		cancel()
		if waited.ID != "" { // Wait returns no document when its time ends reading the store
			doc = waited
		}
		err = werr
		if serr := resumed(ctx); serr != nil && ctx.Err() == nil {
			return nil, serr
		}
		switch {
		case ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, context.DeadlineExceeded):
			return fail("document %q (id %s) is still %s after %s; ask again in a moment", doc.Name, id, doc.Status, b.docs.wait)
		case err != nil:
			return nil, err
		}
	}
	if doc.Status == document.StatusFailed {
		return fail("document %q (id %s) could not be processed: %s", doc.Name, id, doc.Error)
	}
	l, err := document.Load(ctx, b.docs.store, id, document.LoadOptions{Query: query, Budget: b.docs.budget})
	if err != nil {
		return nil, err
	}
	head := fmt.Sprintf("# %q", doc.Name) // quoted: a name stored before document.CheckName can hold a newline
	if !l.Complete {
		head += fmt.Sprintf(" (%d of %d parts, the most relevant)", len(l.Chunks), doc.Chunks)
	}
	return operator.TextResult(LoadDocumentTool, head+"\n\n"+l.Text(), map[string]any{
		"document_id": doc.ID, "name": doc.Name, "chunks": len(l.Chunks), "of": doc.Chunks, "complete": l.Complete,
	}), nil
}

// listing names the conversation's documents, for an error that helps
// the supervisor correct its call.
func (d *documents) listing(ctx context.Context, conversationID string) string {
	docs, err := d.store.List(ctx, conversationID)
	if err != nil || len(docs) == 0 {
		return "it has no documents"
	}
	names := make([]string, len(docs))
	for i, doc := range docs {
		names[i] = fmt.Sprintf("%q (id %s, %s)", doc.Name, doc.ID, doc.Status)
	}
	return "its documents are " + strings.Join(names, ", ")
}

// DocumentsHeading starts the list of a conversation's documents in the
// supervisor's Conversation section: one line per document after it, as
// document.Describe writes them.
const DocumentsHeading = "Documents the user uploaded to this conversation (load one with load_document):"

// supervisorDocuments is added to the supervisor's instructions in
// conversations that have documents (the design's "PRIORITY: check
// document summaries first").
const supervisorDocuments = `

The user uploaded documents to this conversation; the Conversation section lists them under "` + DocumentsHeading + `", each with its id, status and summary. PRIORITY: check the document summaries first. If a document may answer the question, CALL_TOOL load_document with its document_id (and a query saying what to look for) before using any other tool; a document still being processed is waited for.`

// supervisorInput returns the supervisor's input and options for a turn
// of the conversation: with its documents listed in the Conversation
// section and the system prompt saying to check them first, or, for a
// conversation without documents, as they are, without load_document
// among the tools.
func (b *Bot) supervisorInput(ctx context.Context, conversationID string, in supervisor.DecideInput) (supervisor.DecideInput, []agent.Option) {
	opts := []agent.Option{agent.WithModel(b.cfg.SupervisorModel)}
	overview := ""
	if b.docs.has(conversationID) {
		var err error
		overview, err = document.Overview(ctx, b.docs.store, conversationID)
		if err != nil {
			b.log.Warn("chatbot: listing the conversation's documents failed; the supervisor does not see them", zap.Error(err))
		}
	}
	if overview == "" {
		in.Tools = withoutTool(in.Tools, LoadDocumentTool)
		return in, opts
	}
	in.Context = strings.TrimSpace(in.Context + "\n\n" + DocumentsHeading + "\n" + overview)
	in.Instructions = strings.TrimSpace(supervisorDocuments)
	return in, opts
}

// withoutTool returns tools without the one named name, in a new slice if
// it is there.
func withoutTool(tools []model.ToolDef, name string) []model.ToolDef {
	for i, t := range tools {
		if t.Name == name {
			out := make([]model.ToolDef, 0, len(tools)-1)
			return append(append(out, tools[:i]...), tools[i+1:]...)
		}
	}
	return tools
}
