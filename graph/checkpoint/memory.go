package checkpoint

import (
	"context"
	"maps"
	"slices"
	"sync"
	"time"

	"github.com/agentgraph/agentgraph/graph/checkpoint/internal/chain"
)

// Memory is a Saver that keeps checkpoints in the process's memory. It suits
// tests, examples and short-lived programs; everything is lost when the
// process exits. Its zero value is an empty store ready to use, and it is
// safe for concurrent use.
type Memory struct {
	mu      sync.Mutex
	threads map[string]*memThread
}

// NewMemory returns an empty in-memory Saver.
func NewMemory() *Memory { return &Memory{} }

var _ Saver = (*Memory)(nil)

type memThread struct {
	seq     int64
	order   []*memCheckpoint // oldest first; the last is the latest
	byID    map[string]*memCheckpoint
	blobs   map[chain.Key]chain.Blob
	touched time.Time
}

type memCheckpoint struct {
	cp     Checkpoint
	seq    int64
	refs   chain.Refs
	writes []Write
}

func (t *memThread) latest() *memCheckpoint {
	if len(t.order) == 0 {
		return nil
	}
	return t.order[len(t.order)-1]
}

// Put implements Saver.
func (m *Memory) Put(ctx context.Context, expect string, cp *Checkpoint, blobs []Blob) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := ValidatePut(expect, cp, blobs); err != nil {
		return err
	}
	var pieceBuf [8]chain.Piece
	pieces := pieceBuf[:0]
	for _, b := range blobs {
		pieces = append(pieces, chain.Piece{Channel: b.Channel, Delta: b.Kind == Delta})
	}
	now := time.Now()

	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[cp.ThreadID]
	actual := ""
	if t != nil {
		actual = t.latest().cp.ID
	}
	if actual != expect {
		return &ConflictError{ThreadID: cp.ThreadID, Expected: expect, Actual: actual}
	}
	var parent chain.Refs
	if cp.ParentID != "" {
		var p *memCheckpoint
		if t != nil {
			p = t.byID[cp.ParentID]
		}
		if p == nil {
			return NotFoundError(cp.ThreadID, cp.ParentID)
		}
		parent = p.refs
	}
	if cp.ID != "" && t != nil && t.byID[cp.ID] != nil {
		return invalid("Put: thread %q already has checkpoint %q; leave Checkpoint.ID empty to get a new one", cp.ThreadID, cp.ID)
	}
	seq := int64(1)
	if t != nil {
		seq = t.seq + 1
	}
	refs, err := chain.Next(parent, cp.Versions, pieces, seq)
	if err != nil {
		return invalid("Put: %v", err)
	}
	if t == nil {
		t = &memThread{byID: make(map[string]*memCheckpoint), blobs: make(map[chain.Key]chain.Blob)}
		if m.threads == nil {
			m.threads = make(map[string]*memThread)
		}
		m.threads[cp.ThreadID] = t
	}
	if cp.ID == "" {
		cp.ID = NewID()
	}
	if cp.CreatedAt.IsZero() {
		cp.CreatedAt = now
	}
	// One allocation holds the data of all the step's blobs.
	size := 0
	for _, b := range blobs {
		size += len(b.Data)
	}
	buf := make([]byte, 0, size)
	for _, b := range blobs {
		start := len(buf)
		buf = append(buf, b.Data...)
		t.blobs[chain.Key{Channel: b.Channel, Writer: seq}] = chain.Blob{
			Kind: uint8(b.Kind),
			Base: parent.Base(b.Channel, b.Kind == Delta),
			Data: buf[start:len(buf):len(buf)],
		}
	}
	mc := &memCheckpoint{cp: cloneCheckpoint(cp), seq: seq, refs: refs}
	mc.cp.Versions = nil // kept in refs
	t.seq = seq
	t.order = append(t.order, mc)
	t.byID[mc.cp.ID] = mc
	t.touched = now
	return nil
}

// PutWrites implements Saver.
func (m *Memory) PutWrites(ctx context.Context, threadID, checkpointID string, writes []Write) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := ValidateWrites(threadID, checkpointID, writes); err != nil {
		return err
	}
	tasks := make(map[string]bool)
	for _, w := range writes {
		tasks[w.TaskID] = true
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[threadID]
	var c *memCheckpoint
	if t != nil {
		c = t.byID[checkpointID]
	}
	if c == nil {
		return NotFoundError(threadID, checkpointID)
	}
	kept := c.writes[:0:0]
	for _, w := range c.writes {
		if !tasks[w.TaskID] {
			kept = append(kept, w)
		}
	}
	for _, w := range writes {
		w.Value = slices.Clone(w.Value)
		kept = append(kept, w)
	}
	c.writes = kept
	t.touched = time.Now()
	return nil
}

// Get implements Saver.
func (m *Memory) Get(ctx context.Context, threadID, checkpointID string) (*Snapshot, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[threadID]
	var c *memCheckpoint
	if t != nil {
		if checkpointID == "" {
			c = t.latest()
		} else {
			c = t.byID[checkpointID]
		}
	}
	if c == nil {
		return nil, NotFoundError(threadID, checkpointID)
	}
	s := &Snapshot{
		Checkpoint: c.checkpoint(),
		Channels:   make(map[string]Channel, len(c.refs)),
		Writes:     slices.Clone(c.writes),
	}
	err := chain.Resolve(c.refs, func(k chain.Key) (chain.Blob, bool) {
		b, ok := t.blobs[k]
		return b, ok
	}, func(ch string, base []byte, deltas [][]byte) {
		s.Channels[ch] = Channel{Base: base, Deltas: deltas}
	})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// List implements Saver.
func (m *Memory) List(ctx context.Context, threadID string, opts ListOptions) ([]Checkpoint, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[threadID]
	if t == nil {
		if opts.Before != "" {
			return nil, NotFoundError(threadID, opts.Before)
		}
		return nil, nil
	}
	end := len(t.order)
	if opts.Before != "" {
		b := t.byID[opts.Before]
		if b == nil {
			return nil, NotFoundError(threadID, opts.Before)
		}
		end, _ = slices.BinarySearchFunc(t.order, b.seq, func(c *memCheckpoint, seq int64) int {
			return int(c.seq - seq)
		})
	}
	var out []Checkpoint
	for i := end - 1; i >= 0; i-- {
		c := t.order[i]
		if !matches(c.cp.Metadata, opts.Metadata) {
			continue
		}
		out = append(out, c.checkpoint())
		if opts.Limit > 0 && len(out) == opts.Limit {
			break
		}
	}
	return out, nil
}

// DeleteThread implements Saver.
func (m *Memory) DeleteThread(ctx context.Context, threadID string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.threads, threadID)
	return nil
}

// Prune implements Saver.
func (m *Memory) Prune(ctx context.Context, r Retention) (Pruned, error) {
	if err := ctx.Err(); err != nil {
		return Pruned{}, err
	}
	if err := ValidateRetention(r); err != nil {
		return Pruned{}, err
	}
	now := r.Now
	if now.IsZero() {
		now = time.Now()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var p Pruned
	for id, t := range m.threads {
		if r.ThreadID != "" && id != r.ThreadID {
			continue
		}
		if r.MaxIdle > 0 && now.Sub(t.touched) > r.MaxIdle {
			p.Threads++
			p.Checkpoints += len(t.order)
			p.Blobs += len(t.blobs)
			delete(m.threads, id)
			continue
		}
		if r.KeepLatest <= 0 || len(t.order) <= r.KeepLatest {
			continue
		}
		drop := len(t.order) - r.KeepLatest
		for _, c := range t.order[:drop] {
			delete(t.byID, c.cp.ID)
		}
		p.Checkpoints += drop
		t.order = slices.Delete(t.order, 0, drop)
		kept := make([]chain.Refs, len(t.order))
		for i, c := range t.order {
			kept[i] = c.refs
		}
		live := chain.Live(kept, func(k chain.Key) (int64, bool) {
			b, ok := t.blobs[k]
			return b.Base, ok
		})
		for k := range t.blobs {
			if !live[k] {
				delete(t.blobs, k)
				p.Blobs++
			}
		}
	}
	return p, nil
}

// Usage implements Saver.
func (m *Memory) Usage(ctx context.Context, threadID string) (Usage, error) {
	if err := ctx.Err(); err != nil {
		return Usage{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var u Usage
	t := m.threads[threadID]
	if t == nil {
		return u, nil
	}
	u.Checkpoints = len(t.order)
	u.Blobs = len(t.blobs)
	for _, b := range t.blobs {
		u.BlobBytes += int64(len(b.Data))
	}
	for _, c := range t.order {
		u.Writes += len(c.writes)
		for _, w := range c.writes {
			u.WriteBytes += int64(len(w.Value))
		}
	}
	return u, nil
}

// ValidateRetention checks a Retention policy; the error wraps ErrInvalid.
func ValidateRetention(r Retention) error {
	if r.KeepLatest < 0 {
		return invalid("Prune: Retention.KeepLatest is %d; use 0 to keep every checkpoint or a positive count", r.KeepLatest)
	}
	if r.MaxIdle < 0 {
		return invalid("Prune: Retention.MaxIdle is %v; use 0 to keep idle threads or a positive duration", r.MaxIdle)
	}
	return nil
}

// matches reports whether md holds every pair of filter.
func matches(md, filter map[string]string) bool {
	for k, v := range filter {
		if got, ok := md[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// cloneCheckpoint copies cp's maps, slices and byte payloads, except
// Versions, which the store keeps in its references.
func cloneCheckpoint(cp *Checkpoint) Checkpoint {
	c := *cp
	c.Versions = nil
	c.Metadata = maps.Clone(cp.Metadata)
	c.Ran = slices.Clone(cp.Ran)
	c.Next = slices.Clone(cp.Next)
	c.Interrupts = slices.Clone(cp.Interrupts)
	for i := range c.Next {
		c.Next[i].Input = slices.Clone(c.Next[i].Input)
	}
	for i := range c.Interrupts {
		c.Interrupts[i].Payload = slices.Clone(c.Interrupts[i].Payload)
	}
	return c
}

// checkpoint returns a copy of the stored checkpoint the caller may modify
// (byte payloads are shared and read-only).
func (c *memCheckpoint) checkpoint() Checkpoint {
	cp := c.cp
	cp.Versions = c.refs.Versions()
	cp.Metadata = maps.Clone(c.cp.Metadata)
	cp.Ran = slices.Clone(c.cp.Ran)
	cp.Next = slices.Clone(c.cp.Next)
	cp.Interrupts = slices.Clone(c.cp.Interrupts)
	return cp
}
