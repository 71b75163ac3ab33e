package checkpoint

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"
	"unsafe"

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

var (
	_ Saver          = (*Memory)(nil)
	_ SnapshotLister = (*Memory)(nil)
	_ Pruner         = (*Memory)(nil)
	_ UsageReporter  = (*Memory)(nil)
	_ Copier         = (*Memory)(nil)
)

type memThread struct {
	seq   int64
	order []*memCheckpoint          // oldest first; the last is the latest
	byID  map[string]*memCheckpoint // nil while the IDs in order ascend
	// written[i] holds the blobs written by the checkpoint with sequence
	// number first+i (Writer in chain.Key), which may outlive it. Sequence
	// numbers are dense, so a slice serves where a map would hash.
	first   int64
	written [][]memBlob
	touched time.Time
	// usage holds the running totals of the blobs in written and the
	// writes of the checkpoints in order (its Checkpoints is unused:
	// len(order) counts them), kept by every change to either, so that
	// Usage does not walk the thread's history.
	usage Usage
	// Inline room for the first checkpoints of a thread.
	orderBuf   [4]*memCheckpoint
	writtenBuf [4][]memBlob
}

type memBlob struct {
	channel string
	chain.Blob
}

// memScan is the number of newest checkpoints find scans before it
// searches further: a parent is nearly always the latest checkpoint.
const memScan = 4

// find returns the checkpoint with the given ID, or nil. While the IDs of
// t.order ascend (IDs made by NewID do, in the order they were saved), it
// finds one by binary search; a thread given IDs out of order gets a map.
func (t *memThread) find(id string) *memCheckpoint {
	if t.byID != nil {
		return t.byID[id]
	}
	for i := len(t.order) - 1; i >= 0 && i >= len(t.order)-memScan; i-- {
		if c := t.order[i]; c.cp.ID == id {
			return c
		}
	}
	i, ok := slices.BinarySearchFunc(t.order, id, func(c *memCheckpoint, id string) int { return strings.Compare(c.cp.ID, id) })
	if !ok {
		return nil
	}
	return t.order[i]
}

// index makes mc, just appended to t.order, findable.
func (t *memThread) index(mc *memCheckpoint) {
	n := len(t.order)
	if t.byID == nil && (n < 2 || t.order[n-2].cp.ID < mc.cp.ID) {
		return // IDs still ascend
	}
	if t.byID == nil {
		t.byID = make(map[string]*memCheckpoint, 2*n)
		for _, c := range t.order {
			t.byID[c.cp.ID] = c
		}
		return
	}
	t.byID[mc.cp.ID] = mc
}

// blob looks the blob k up.
func (t *memThread) blob(k chain.Key) (chain.Blob, bool) {
	i := k.Writer - t.first
	if i < 0 || i >= int64(len(t.written)) {
		return chain.Blob{}, false
	}
	for _, b := range t.written[i] {
		if b.channel == k.Channel {
			return b.Blob, true
		}
	}
	return chain.Blob{}, false
}

// blobCount returns the number of stored blobs.
func (t *memThread) blobCount() int {
	n := 0
	for _, w := range t.written {
		n += len(w)
	}
	return n
}

type memCheckpoint struct {
	cp     Checkpoint
	seq    int64
	refs   chain.Refs
	writes []Write
	// Inline room for the references and blobs of a checkpoint of a small
	// state, which saves two allocations per Put.
	refsBuf  [4]chain.Entry
	blobsBuf [2]memBlob
	id       [36]byte
}

func (t *memThread) latest() *memCheckpoint {
	if len(t.order) == 0 {
		return nil
	}
	return t.order[len(t.order)-1]
}

// Put implements Saver.
func (m *Memory) Put(ctx context.Context, expect string, cp *Checkpoint, blobs []Blob, writes []Write) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := ValidatePut(expect, cp, blobs, writes); err != nil {
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
			p = t.find(cp.ParentID)
		}
		if p == nil {
			return NotFoundError(cp.ThreadID, cp.ParentID)
		}
		parent = p.refs
	}
	if cp.ID != "" && t != nil && t.find(cp.ID) != nil {
		return invalid("Put: thread %q already has checkpoint %q; leave Checkpoint.ID empty to get a new one", cp.ThreadID, cp.ID)
	}
	seq := int64(1)
	if t != nil {
		seq = t.seq + 1
	}
	mc := &memCheckpoint{seq: seq}
	refs, err := chain.NextInto(mc.refsBuf[:0], parent, cp.Versions, pieces, seq)
	if err != nil {
		return invalid("Put: %v", err)
	}
	if t == nil {
		t = &memThread{first: seq}
		t.order, t.written = t.orderBuf[:0], t.writtenBuf[:0]
		if m.threads == nil {
			m.threads = make(map[string]*memThread)
		}
		m.threads[cp.ThreadID] = t
	}
	if cp.ID == "" {
		// The ID's text lives in mc, which is never modified after Put.
		writeID(&mc.id, now)
		cp.ID = unsafe.String(&mc.id[0], len(mc.id))
	}
	if cp.CreatedAt.IsZero() {
		cp.CreatedAt = now
	}
	// Put may keep what it is given (see Saver): the blobs' data and cp's
	// slices and maps are stored as they are, and copied on the way out.
	written := mc.blobsBuf[:0]
	for _, b := range blobs {
		written = append(written, memBlob{channel: b.Channel, Blob: chain.Blob{
			Kind: uint8(b.Kind),
			Base: parent.Base(b.Channel, b.Kind == Delta),
			Data: b.Data,
		}})
		t.usage.Blobs++
		t.usage.BlobBytes += int64(len(b.Data))
	}
	for int64(len(t.written)) < seq-t.first {
		t.written = append(t.written, nil) // cannot happen: seq grows by one
	}
	t.written = append(t.written, written)
	mc.cp, mc.refs = *cp, refs
	if len(writes) > 0 {
		mc.writes = writes
		t.usage.addWrites(writes, 1)
	}
	mc.cp.Versions = nil // kept in refs
	t.seq = seq
	t.order = append(t.order, mc)
	t.index(mc)
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
	c, err := m.stored(threadID, checkpointID)
	if err != nil {
		return err
	}
	t := m.threads[threadID]
	kept := c.writes[:0:0]
	for _, w := range c.writes {
		if !tasks[w.TaskID] {
			kept = append(kept, w)
		} else {
			t.usage.addWrites([]Write{w}, -1)
		}
	}
	for _, w := range writes {
		w.Value = slices.Clone(w.Value)
		kept = append(kept, w)
	}
	t.usage.addWrites(writes, 1)
	c.writes = kept
	t.touched = time.Now()
	return nil
}

// Get implements Saver.
func (m *Memory) Get(ctx context.Context, threadID, checkpointID string) (*Snapshot, error) {
	if err := ValidateID("Get", "the thread ID", threadID); err != nil {
		return nil, err
	}
	if err := ValidateID("Get", "the checkpoint ID", checkpointID); err != nil {
		return nil, err
	}
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
			c = t.find(checkpointID)
		}
	}
	if c == nil {
		return nil, NotFoundError(threadID, checkpointID)
	}
	return t.snapshot(ctx, c)
}

// snapshot loads checkpoint c of t.
func (t *memThread) snapshot(ctx context.Context, c *memCheckpoint) (*Snapshot, error) {
	s := &Snapshot{
		Checkpoint: c.checkpoint(),
		Channels:   make(map[string]Channel, len(c.refs)),
		Writes:     slices.Clone(c.writes),
	}
	err := chain.Resolve(ctx, c.seq, c.refs, t.blob, func(ch string, base []byte, deltas [][]byte) {
		s.Channels[ch] = Channel{Base: base, Deltas: deltas}
	})
	if err != nil {
		return nil, corruption(c.cp.ThreadID, c.cp.ID, err)
	}
	return s, nil
}

// corruption returns err as a *CorruptError of the checkpoint when it
// describes damaged data, and unchanged otherwise (a cancelled context).
func corruption(threadID, checkpointID string, err error) error {
	var c *chain.Corruption
	if errors.As(err, &c) {
		return &CorruptError{ThreadID: threadID, CheckpointID: checkpointID, Err: err}
	}
	return err
}

// List implements Saver.
func (m *Memory) List(ctx context.Context, threadID string, opts ListOptions) ([]Checkpoint, error) {
	var out []Checkpoint
	err := m.list(ctx, threadID, opts, func(_ *memThread, c *memCheckpoint) error {
		out = append(out, c.checkpoint())
		return nil
	})
	return out, err
}

// ListSnapshots implements SnapshotLister: a page of History in one call.
func (m *Memory) ListSnapshots(ctx context.Context, threadID string, opts ListOptions) ([]*Snapshot, error) {
	var out []*Snapshot
	err := m.list(ctx, threadID, opts, func(t *memThread, c *memCheckpoint) error {
		s, err := t.snapshot(ctx, c)
		out = append(out, s)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// list calls f, under the lock, on every checkpoint List selects, newest
// first.
func (m *Memory) list(ctx context.Context, threadID string, opts ListOptions, f func(*memThread, *memCheckpoint) error) error {
	if err := validateList(threadID, opts); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.threads[threadID]
	if t == nil {
		if opts.Before != "" {
			return NotFoundError(threadID, opts.Before)
		}
		return nil
	}
	end := len(t.order)
	if opts.Before != "" {
		b := t.find(opts.Before)
		if b == nil {
			return NotFoundError(threadID, opts.Before)
		}
		end, _ = slices.BinarySearchFunc(t.order, b.seq, func(c *memCheckpoint, seq int64) int {
			return int(c.seq - seq)
		})
	}
	n := 0
	for i := end - 1; i >= 0; i-- {
		c := t.order[i]
		if !matches(c.cp.Metadata, opts.Metadata) {
			continue
		}
		if err := f(t, c); err != nil {
			return err
		}
		n++
		if opts.Limit > 0 && n == opts.Limit {
			break
		}
	}
	return nil
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

// stored returns the checkpoint checkpointID of the thread, or a
// NotFoundError; m.mu is held.
func (m *Memory) stored(threadID, checkpointID string) (*memCheckpoint, error) {
	var c *memCheckpoint
	if t := m.threads[threadID]; t != nil {
		c = t.find(checkpointID)
	}
	if c == nil {
		return nil, NotFoundError(threadID, checkpointID)
	}
	return c, nil
}

// PatchMetadata implements MetadataPatcher. The checkpoint gets a new
// metadata map: copies of the thread (CopyThread) keep the old one.
func (m *Memory) PatchMetadata(ctx context.Context, threadID, checkpointID string, md map[string]string) error {
	if err := ValidateID("PatchMetadata", "the thread ID", threadID); err != nil {
		return err
	}
	if err := ValidateID("PatchMetadata", "the checkpoint ID", checkpointID); err != nil {
		return err
	}
	if err := ValidateMetadata("PatchMetadata", "the metadata", md); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	c, err := m.stored(threadID, checkpointID)
	if err != nil {
		return err
	}
	merged := make(map[string]string, len(c.cp.Metadata)+len(md))
	maps.Copy(merged, c.cp.Metadata)
	maps.Copy(merged, md)
	c.cp.Metadata = merged
	return nil
}

// CopyThread implements Copier. The copy shares the stored byte slices,
// which no Saver method modifies.
func (m *Memory) CopyThread(ctx context.Context, from, to string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := validateCopy(from, to); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if t := m.threads[to]; t != nil && len(t.order) > 0 {
		return 0, &ConflictError{ThreadID: to, Actual: t.latest().cp.ID}
	}
	src := m.threads[from]
	if src == nil || len(src.order) == 0 {
		return 0, nil
	}
	t := &memThread{seq: src.seq, first: src.first, touched: src.touched, usage: src.usage,
		order: make([]*memCheckpoint, len(src.order)), written: make([][]memBlob, len(src.written))}
	for i, w := range src.written {
		t.written[i] = slices.Clip(w)
	}
	for i, c := range src.order {
		mc := &memCheckpoint{cp: c.cp, seq: c.seq, refs: c.refs, writes: slices.Clip(c.writes)}
		mc.cp.ThreadID = to
		t.order[i] = mc
	}
	if src.byID != nil {
		t.byID = make(map[string]*memCheckpoint, len(t.order))
		for _, c := range t.order {
			t.byID[c.cp.ID] = c
		}
	}
	if m.threads == nil {
		m.threads = map[string]*memThread{}
	}
	m.threads[to] = t
	return len(t.order), nil
}

// Prune implements Pruner.
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
			p.Blobs += t.blobCount()
			delete(m.threads, id)
			continue
		}
		if r.KeepLatest <= 0 || len(t.order) <= r.KeepLatest {
			continue
		}
		drop := len(t.order) - r.KeepLatest
		for _, c := range t.order[:drop] {
			if t.byID != nil {
				delete(t.byID, c.cp.ID)
			}
			t.usage.addWrites(c.writes, -1)
		}
		p.Checkpoints += drop
		t.order = slices.Delete(t.order, 0, drop)
		kept := make([]chain.Refs, len(t.order))
		for i, c := range t.order {
			kept[i] = c.refs
		}
		live := chain.Live(kept, func(k chain.Key) (int64, bool) {
			b, ok := t.blob(k)
			return b.Base, ok
		})
		for i, w := range t.written {
			kept := w[:0:0]
			for _, b := range w {
				if live[chain.Key{Channel: b.channel, Writer: t.first + int64(i)}] {
					kept = append(kept, b)
				} else {
					p.Blobs++
					t.usage.Blobs--
					t.usage.BlobBytes -= int64(len(b.Data))
				}
			}
			t.written[i] = kept
		}
		drop = 0
		for drop < len(t.written) && len(t.written[drop]) == 0 {
			drop++
		}
		t.written = slices.Delete(t.written, 0, drop)
		t.first += int64(drop)
	}
	return p, nil
}

// Usage implements UsageReporter. It reads the thread's running totals,
// in constant time.
func (m *Memory) Usage(ctx context.Context, threadID string) (Usage, error) {
	if err := ValidateID("Usage", "the thread ID", threadID); err != nil {
		return Usage{}, err
	}
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
	u = t.usage
	u.Checkpoints = len(t.order)
	return u, nil
}

// addWrites adds writes to u's write totals (sign 1) or takes them off
// (sign -1).
func (u *Usage) addWrites(writes []Write, sign int) {
	for _, w := range writes {
		u.Writes += sign
		u.WriteBytes += int64(sign * len(w.Value))
	}
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
