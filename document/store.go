package document

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/agentgraph/agentgraph/internal/storeid"
)

// Store keeps documents: metadata, original content and chunks.
// Implementations are safe for concurrent use; this package has
// [MemoryStore], and document/sqlite and document/postgres keep documents
// in databases. Package documenttest checks an implementation against this
// contract.
//
// A document's chunks exist exactly while it is ready: [Store.Complete]
// stores them with the summary and marks the document ready in one step,
// and [Store.SetStatus] to any other status removes them.
type Store interface {
	// Create stores a new document with its content. doc.ID,
	// doc.ConversationID and doc.Status are required; an id already stored
	// fails with [ErrExists]. The document must fit the quota q: when the
	// conversation already holds q.PerConversation documents, Create
	// fails with [ErrTooMany]; when doc.Owner's documents with this one
	// would pass q.Owner, with a [*QuotaError]. The checks and the insert
	// are atomic, also across processes sharing a database.
	Create(ctx context.Context, doc Document, content []byte, q Quota) error
	// Get returns the document, or an error matching [ErrNotFound].
	Get(ctx context.Context, id string) (Document, error)
	// List returns the conversation's documents, oldest first (by Created,
	// then ID); none for an unknown conversation.
	List(ctx context.Context, conversationID string) ([]Document, error)
	// Conversations returns the ids of the conversations that hold at least
	// one document, in ascending order.
	Conversations(ctx context.Context) ([]string, error)
	// Usage returns how many documents owner holds (those whose Owner is
	// owner, in any conversation) and the sum of their sizes: what a
	// quota per owner checks, at the cost of an index lookup rather than
	// a listing of the conversations. An owner without documents has the
	// zero Usage.
	Usage(ctx context.Context, owner string) (Usage, error)
	// Unfinished returns the documents of every conversation that are
	// pending or processing, oldest first (by Created, then ID): what
	// [Processor.Resume] queues again after a restart.
	Unfinished(ctx context.Context) ([]Document, error)
	// Content returns the document's original content.
	Content(ctx context.Context, id string) ([]byte, error)
	// Chunks returns the document's chunks in order; none unless the
	// document is ready.
	Chunks(ctx context.Context, id string) ([]Chunk, error)
	// SetStatus sets the status (not [StatusReady]: use Complete) and the
	// error text (kept only with [StatusFailed]), sets Updated, and removes
	// the summary and the chunks. It returns the updated document.
	SetStatus(ctx context.Context, id string, status Status, errText string) (Document, error)
	// Complete stores the document summary and the chunks (with their
	// summaries), replacing any, and marks the document ready, in one
	// step. It returns the updated document.
	Complete(ctx context.Context, id string, summary string, chunks []Chunk) (Document, error)
	// Delete removes the document, its content and its chunks. An unknown
	// id fails with [ErrNotFound].
	Delete(ctx context.Context, id string) error
}

// Usage is what an owner's documents hold (see [Store.Usage]).
type Usage struct {
	// Documents is how many documents the owner holds.
	Documents int
	// Bytes is the sum of their sizes ([Document.Size]).
	Bytes int64
}

// Quota is what [Store.Create] checks atomically with the insert. The
// zero value checks nothing.
type Quota struct {
	// PerConversation is the most documents one conversation holds;
	// zero or negative means no bound.
	PerConversation int
	// Owner is the most the documents of one owner ([Document.Owner]) hold
	// over all conversations, in number and in bytes, the new document
	// included; a field zero or negative is no bound on it. Documents
	// without an owner are not bound by it.
	Owner Usage
}

// BindsOwner reports whether q bounds what the owner of doc holds: doc
// has an owner and q.Owner a bound. Implementations of [Store.Create]
// read the owner's usage only then.
func (q Quota) BindsOwner(doc Document) bool {
	return doc.Owner != "" && (q.Owner.Documents > 0 || q.Owner.Bytes > 0)
}

// CheckOwner returns a [*QuotaError] when doc would take its owner, who
// holds held, past q.Owner; nil when it fits or q does not bind its
// owner. It is for implementations of [Store.Create], which call it with
// the usage they read in the transaction (or under the lock) of the
// insert.
func (q Quota) CheckOwner(doc Document, held Usage) error {
	if !q.BindsOwner(doc) {
		return nil
	}
	if q.Owner.Documents > 0 && held.Documents+1 > q.Owner.Documents {
		return &QuotaError{Owner: doc.Owner, Field: "Documents", Limit: int64(q.Owner.Documents), Held: held, Size: doc.Size}
	}
	if q.Owner.Bytes > 0 && held.Bytes+doc.Size > q.Owner.Bytes {
		return &QuotaError{Owner: doc.Owner, Field: "Bytes", Limit: q.Owner.Bytes, Held: held, Size: doc.Size}
	}
	return nil
}

// CheckCreate validates the arguments of [Store.Create], for
// implementations. An ID, ConversationID or Owner longer than [MaxIDBytes],
// not valid UTF-8 or holding a NUL byte is a [*ValidationError].
func CheckCreate(doc Document, content []byte) error {
	switch {
	case doc.ID == "":
		return errors.New("document: Document.ID is empty; set a unique id")
	case doc.ConversationID == "":
		return errors.New("document: Document.ConversationID is empty; set the conversation the document belongs to")
	case storeid.Problem(doc.ID) != "":
		return &ValidationError{Field: "ID", Problem: storeid.Problem(doc.ID)}
	case storeid.Problem(doc.ConversationID) != "":
		return &ValidationError{Field: "ConversationID", Problem: storeid.Problem(doc.ConversationID)}
	case storeid.Problem(doc.Owner) != "":
		return &ValidationError{Field: "Owner", Problem: storeid.Problem(doc.Owner)}
	case !doc.Status.Valid():
		return fmt.Errorf("document: Document.Status %q is not a status; use StatusPending", doc.Status)
	case int64(len(content)) != doc.Size:
		return fmt.Errorf("document: Document.Size is %d but the content has %d bytes; set Size to len(content)", doc.Size, len(content))
	}
	return nil
}

// CheckStatus validates the status argument of [Store.SetStatus], for
// implementations.
func CheckStatus(status Status) error {
	if status == StatusReady {
		return errors.New("document: SetStatus cannot mark a document ready; call Store.Complete with its summary and chunks")
	}
	if !status.Valid() {
		return fmt.Errorf("document: %q is not a status; use pending, processing or failed", status)
	}
	return nil
}

// CheckChunks validates the chunks argument of [Store.Complete], for
// implementations: indexes are 0, 1, 2... in order.
func CheckChunks(chunks []Chunk) error {
	for i, c := range chunks {
		if c.Index != i {
			return fmt.Errorf("document: chunk %d has Index %d; chunks must be numbered 0, 1, 2... in order", i, c.Index)
		}
	}
	return nil
}

func notFound(id string) error { return fmt.Errorf("%w: no document with id %q", ErrNotFound, id) }

// MemoryStore is a [Store] in memory, for tests and single-process
// services that need not keep documents across restarts. The zero value is
// ready to use.
type MemoryStore struct {
	mu    sync.RWMutex
	docs  map[string]*memDoc
	usage map[string]Usage // by owner; no entry for an owner without documents
	// Now returns the time stamped on status changes. Nil means time.Now.
	Now func() time.Time
}

type memDoc struct {
	doc     Document
	content []byte
	chunks  []Chunk
}

var _ Store = (*MemoryStore)(nil)

// NewMemoryStore returns an empty store.
func NewMemoryStore() *MemoryStore { return &MemoryStore{} }

func (s *MemoryStore) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Create implements [Store].
func (s *MemoryStore) Create(ctx context.Context, doc Document, content []byte, q Quota) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := CheckCreate(doc, content); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.docs == nil {
		s.docs = make(map[string]*memDoc)
	}
	if _, ok := s.docs[doc.ID]; ok {
		return fmt.Errorf("%w: %q", ErrExists, doc.ID)
	}
	if q.PerConversation > 0 {
		n := 0
		for _, d := range s.docs {
			if d.doc.ConversationID == doc.ConversationID {
				n++
			}
		}
		if n >= q.PerConversation {
			return fmt.Errorf("%w: conversation %q holds %d documents, the limit; delete one first", ErrTooMany, doc.ConversationID, n)
		}
	}
	if err := q.CheckOwner(doc, s.usage[doc.Owner]); err != nil {
		return err
	}
	if doc.Updated.IsZero() {
		doc.Updated = doc.Created
	}
	s.docs[doc.ID] = &memDoc{doc: doc, content: slices.Clone(content)}
	if s.usage == nil {
		s.usage = make(map[string]Usage)
	}
	u := s.usage[doc.Owner]
	u.Documents++
	u.Bytes += doc.Size
	s.usage[doc.Owner] = u
	return nil
}

func (s *MemoryStore) get(ctx context.Context, id string) (*memDoc, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	d, ok := s.docs[id]
	if !ok {
		return nil, notFound(id)
	}
	return d, nil
}

// Get implements [Store].
func (s *MemoryStore) Get(ctx context.Context, id string) (Document, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, err := s.get(ctx, id)
	if err != nil {
		return Document{}, err
	}
	return d.doc, nil
}

// List implements [Store].
func (s *MemoryStore) List(ctx context.Context, conversationID string) ([]Document, error) {
	return s.filter(ctx, func(d Document) bool { return d.ConversationID == conversationID })
}

// Conversations implements [Store].
func (s *MemoryStore) Conversations(ctx context.Context) ([]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	seen := map[string]bool{}
	for _, d := range s.docs {
		seen[d.doc.ConversationID] = true
	}
	s.mu.RUnlock()
	return slices.Sorted(maps.Keys(seen)), nil
}

// Usage implements [Store].
func (s *MemoryStore) Usage(ctx context.Context, owner string) (Usage, error) {
	if err := ctx.Err(); err != nil {
		return Usage{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.usage[owner], nil
}

// Unfinished implements [Store].
func (s *MemoryStore) Unfinished(ctx context.Context) ([]Document, error) {
	return s.filter(ctx, func(d Document) bool { return d.Status == StatusPending || d.Status == StatusProcessing })
}

func (s *MemoryStore) filter(ctx context.Context, keep func(Document) bool) ([]Document, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	var out []Document
	for _, d := range s.docs {
		if keep(d.doc) {
			out = append(out, d.doc)
		}
	}
	s.mu.RUnlock()
	slices.SortFunc(out, func(a, b Document) int {
		return cmp.Or(a.Created.Compare(b.Created), cmp.Compare(a.ID, b.ID))
	})
	return out, nil
}

// Content implements [Store].
func (s *MemoryStore) Content(ctx context.Context, id string) ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, err := s.get(ctx, id)
	if err != nil {
		return nil, err
	}
	return slices.Clone(d.content), nil
}

// Chunks implements [Store].
func (s *MemoryStore) Chunks(ctx context.Context, id string) ([]Chunk, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	d, err := s.get(ctx, id)
	if err != nil {
		return nil, err
	}
	return slices.Clone(d.chunks), nil
}

// SetStatus implements [Store].
func (s *MemoryStore) SetStatus(ctx context.Context, id string, status Status, errText string) (Document, error) {
	if err := CheckStatus(status); err != nil {
		return Document{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.get(ctx, id)
	if err != nil {
		return Document{}, err
	}
	if status != StatusFailed {
		errText = ""
	}
	d.doc.Status, d.doc.Error, d.doc.Updated = status, errText, s.now()
	d.doc.Summary, d.doc.Chunks, d.chunks = "", 0, nil
	return d.doc, nil
}

// Complete implements [Store].
func (s *MemoryStore) Complete(ctx context.Context, id string, summary string, chunks []Chunk) (Document, error) {
	if err := CheckChunks(chunks); err != nil {
		return Document{}, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.get(ctx, id)
	if err != nil {
		return Document{}, err
	}
	d.doc.Status, d.doc.Error, d.doc.Updated = StatusReady, "", s.now()
	d.doc.Summary, d.doc.Chunks, d.chunks = summary, len(chunks), slices.Clone(chunks)
	return d.doc, nil
}

// Delete implements [Store].
func (s *MemoryStore) Delete(ctx context.Context, id string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d, err := s.get(ctx, id)
	if err != nil {
		return err
	}
	delete(s.docs, id)
	u := s.usage[d.doc.Owner]
	u.Documents--
	u.Bytes -= d.doc.Size
	if u.Documents <= 0 {
		delete(s.usage, d.doc.Owner)
	} else {
		s.usage[d.doc.Owner] = u
	}
	return nil
}
