package server

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// MemoryStore is a [Store] in memory, for tests and for servers whose
// threads need not outlive the process. Its zero value is not usable; make
// one with NewMemoryStore.
type MemoryStore struct {
	mu      sync.Mutex
	threads map[string]*Thread
	runs    map[string]*Run
	byTh    map[string][]string // thread id -> run ids, oldest first
	logs    map[string]*eventLog
	// active holds, by thread, the ids of the thread's pending and
	// running runs, oldest first: what claims, ClaimDue and the server's
	// double-texting checks look at, so that their cost does not grow with
	// a thread's history of ended runs.
	active map[string][]string
	// bytes holds, by thread, the bytes of checkpoints of the thread's
	// own and of its durable subgraphs' ([ByteCounter]); a thread
	// without an entry counts none.
	bytes map[string][2]int64
	// assistants holds the assistants clients created ([AssistantStore]),
	// by id.
	assistants map[string]*memAssistant
}

type eventLog struct {
	next int64
	evs  []Event
}

// NewMemoryStore returns an empty store.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{threads: map[string]*Thread{}, runs: map[string]*Run{}, byTh: map[string][]string{}, logs: map[string]*eventLog{}, active: map[string][]string{}, bytes: map[string][2]int64{}, assistants: map[string]*memAssistant{}}
}

// copies, so that callers never share a record with the store.
func cloneThread(t *Thread) *Thread {
	c := *t
	c.Metadata = cloneMap(t.Metadata)
	c.Config = cloneMap(t.Config)
	c.Values = slices.Clone(t.Values)
	if t.Interrupts != nil {
		c.Interrupts = make(map[string][]Interrupt, len(t.Interrupts))
		for k, v := range t.Interrupts {
			c.Interrupts[k] = slices.Clone(v)
		}
	}
	return &c
}

func cloneRun(r *Run) *Run {
	c := *r
	c.Metadata = cloneMap(r.Metadata)
	c.Kwargs = slices.Clone(r.Kwargs)
	return &c
}

// cloneMap copies a JSON-shaped map deeply: maps and slices are copied,
// scalars shared; a value of another type is copied through JSON.
func cloneMap(m map[string]any) map[string]any {
	if m == nil {
		return nil
	}
	c := make(map[string]any, len(m))
	for k, v := range m {
		c[k] = cloneValue(v)
	}
	return c
}

func cloneValue(v any) any {
	switch v := v.(type) {
	case nil, string, bool, float64, float32, int, int64, int32, uint, uint64, uint32, json.Number:
		return v
	case map[string]any:
		return cloneMap(v)
	case []any:
		if v == nil {
			return v
		}
		c := make([]any, len(v))
		for i, x := range v {
			c[i] = cloneValue(x)
		}
		return c
	case []string:
		return slices.Clone(v)
	case json.RawMessage:
		return slices.Clone(v)
	}
	b, err := json.Marshal(v)
	if err != nil {
		return v
	}
	var out any
	if json.Unmarshal(b, &out) != nil {
		return v
	}
	return out
}

// CreateThread implements [Store].
func (m *MemoryStore) CreateThread(_ context.Context, t *Thread) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.threads[t.ID]; ok {
		return fmt.Errorf("thread %s: %w", t.ID, ErrExists)
	}
	m.threads[t.ID] = cloneThread(t)
	return nil
}

// Thread implements [Store].
func (m *MemoryStore) Thread(_ context.Context, id string) (*Thread, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.threads[id]
	if !ok {
		return nil, fmt.Errorf("thread %s: %w", id, ErrNotFound)
	}
	return cloneThread(t), nil
}

// UpdateThread implements [Store].
func (m *MemoryStore) UpdateThread(_ context.Context, id string, fn func(*Thread) error) (*Thread, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t, ok := m.threads[id]
	if !ok {
		return nil, fmt.Errorf("thread %s: %w", id, ErrNotFound)
	}
	c := cloneThread(t)
	if err := fn(c); err != nil {
		return nil, err
	}
	c.ID = id
	m.threads[id] = cloneThread(c)
	return c, nil
}

// DeleteThread implements [Store].
func (m *MemoryStore) DeleteThread(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.threads, id)
	for _, rid := range m.byTh[id] {
		delete(m.runs, rid)
		delete(m.logs, rid)
	}
	delete(m.byTh, id)
	delete(m.active, id)
	delete(m.bytes, id)
	return nil
}

// SearchThreads implements [Store]. It selects the candidates under the
// store's lock and decodes their values for q.Values after it: stored
// threads are replaced, never modified, so the candidates stay as read.
func (m *MemoryStore) SearchThreads(_ context.Context, q ThreadQuery) ([]*Thread, int, error) {
	m.mu.Lock()
	var all []*Thread
	for _, t := range m.threads {
		if t.Owner != q.Owner || (q.Status != "" && t.Status != q.Status) || (len(q.IDs) > 0 && !slices.Contains(q.IDs, t.ID)) || !containsAll(t.Metadata, q.Metadata) {
			continue
		}
		all = append(all, t)
	}
	m.mu.Unlock()
	all = slices.DeleteFunc(all, func(t *Thread) bool { return !q.ValuesMatch(t.Values) })
	sortThreads(all, q.SortBy, q.SortDesc)
	out := page(all, q.Offset, q.Limit)
	if q.MaxBytes > 0 {
		size := 0
		for i, t := range out {
			if size += t.Size(); size > q.MaxBytes {
				out = out[:i+1] // the page is cut here (ThreadQuery.MaxBytes)
				break
			}
		}
	}
	for i, t := range out {
		out[i] = cloneThread(t)
	}
	return out, len(all), nil
}

func sortThreads(ts []*Thread, by string, desc bool) {
	// Times compare as instants: their RFC 3339 text drops trailing
	// zeros of the fraction, so ".5Z" sorts before ".45Z" as text.
	var key func(a, b *Thread) int
	switch by {
	case "thread_id":
		key = func(a, b *Thread) int { return strings.Compare(a.ID, b.ID) }
	case "status":
		key = func(a, b *Thread) int { return strings.Compare(a.Status, b.Status) }
	case "updated_at":
		key = func(a, b *Thread) int { return a.UpdatedAt.Compare(b.UpdatedAt) }
	default:
		key = func(a, b *Thread) int { return a.CreatedAt.Compare(b.CreatedAt) }
	}
	slices.SortStableFunc(ts, func(a, b *Thread) int {
		c := key(a, b)
		if c == 0 {
			c = strings.Compare(a.ID, b.ID)
		}
		if desc {
			c = -c
		}
		return c
	})
}

func page[T any](xs []T, offset, limit int) []T {
	if offset >= len(xs) {
		return []T{}
	}
	xs = xs[offset:]
	if limit > 0 && limit < len(xs) {
		xs = xs[:limit]
	}
	return xs
}

// containsAll reports whether have contains want as PostgreSQL's jsonb
// @> does, which LangGraph's servers filter metadata and values with
// (see jsonContains): every key of want is in have, with a value that
// contains want's.
func containsAll(have, want map[string]any) bool {
	for k, v := range want {
		h, ok := have[k]
		if !ok || !jsonContains(h, v) {
			return false
		}
	}
	return true
}

// valuesHold reports whether a thread's values, a JSON object, hold every
// pair of want (true for an empty want). Numbers are compared exactly.
func valuesHold(vals json.RawMessage, want map[string]any) bool {
	if len(want) == 0 {
		return true
	}
	var have map[string]any
	if decodeNumbers(vals, &have) != nil {
		return false
	}
	return containsAll(have, want)
}

// CreateRun implements [Store].
func (m *MemoryStore) CreateRun(_ context.Context, r *Run) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.runs[r.ID]; ok {
		return fmt.Errorf("run %s: %w", r.ID, ErrExists)
	}
	m.runs[r.ID] = cloneRun(r)
	m.byTh[r.ThreadID] = append(m.byTh[r.ThreadID], r.ID)
	if !finished(r.Status) {
		m.active[r.ThreadID] = append(m.active[r.ThreadID], r.ID)
	}
	return nil
}

// Run implements [Store].
func (m *MemoryStore) Run(_ context.Context, id string) (*Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[id]
	if !ok {
		return nil, fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	return cloneRun(r), nil
}

// UpdateRun implements [Store].
func (m *MemoryStore) UpdateRun(_ context.Context, id string, fn func(*Run) error) (*Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[id]
	if !ok {
		return nil, fmt.Errorf("run %s: %w", id, ErrNotFound)
	}
	c := cloneRun(r)
	if err := fn(c); err != nil {
		return nil, err
	}
	c.ID, c.ThreadID = id, r.ThreadID
	m.runs[id] = cloneRun(c)
	if finished(r.Status) != finished(c.Status) {
		m.reindex(c.ThreadID)
	}
	return c, nil
}

// DeleteRun implements [Store].
func (m *MemoryStore) DeleteRun(_ context.Context, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[id]
	if !ok {
		return nil
	}
	delete(m.runs, id)
	delete(m.logs, id)
	m.byTh[r.ThreadID] = slices.DeleteFunc(m.byTh[r.ThreadID], func(s string) bool { return s == id })
	if !finished(r.Status) {
		m.reindex(r.ThreadID)
	}
	return nil
}

// reindex rebuilds the thread's list of pending and running runs after a
// run entered or left it; m.mu is held. A run leaves the list when it
// ends, the common case, found near the list's start; a run that comes
// back (rare) is put back in creation order.
func (m *MemoryStore) reindex(threadID string) {
	ids := m.active[threadID][:0]
	for _, id := range m.active[threadID] {
		if r := m.runs[id]; r != nil && !finished(r.Status) {
			ids = append(ids, id)
		}
	}
	if len(ids) == len(m.active[threadID]) { // a run came back: rebuild from the history
		ids = ids[:0]
		for _, id := range m.byTh[threadID] {
			if r := m.runs[id]; r != nil && !finished(r.Status) {
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		delete(m.active, threadID)
		return
	}
	m.active[threadID] = ids
}

// Runs implements [Store]: it walks the thread's runs in q's order and
// copies only those of the page.
func (m *MemoryStore) Runs(_ context.Context, q RunQuery) ([]*Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	ids := m.byTh[q.ThreadID]
	if q.Status == RunPending || q.Status == RunRunning {
		ids = m.active[q.ThreadID]
	}
	var out []*Run
	skip, size := q.Offset, 0
	for i := range ids {
		if q.Newest {
			i = len(ids) - 1 - i
		}
		r := m.runs[ids[i]]
		if r == nil || q.Status != "" && r.Status != q.Status {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		out = append(out, cloneRun(r))
		if size += r.Size(); q.Limit > 0 && len(out) == q.Limit || q.MaxBytes > 0 && size > q.MaxBytes {
			break
		}
	}
	return out, nil
}

// ActiveRuns implements [ActiveRunLister].
func (m *MemoryStore) ActiveRuns(_ context.Context, threadID string) ([]*Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var running, pending []*Run
	for _, id := range m.active[threadID] {
		if r := m.runs[id]; r != nil && r.Status == RunRunning {
			running = append(running, cloneRun(r))
		} else if r != nil && r.Status == RunPending {
			pending = append(pending, cloneRun(r))
		}
	}
	return append(running, pending...), nil
}

// Claim implements [Store].
func (m *MemoryStore) Claim(_ context.Context, threadID, worker string, lease time.Duration) (*Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.claim(threadID, worker, lease, time.Now()), nil
}

// claim claims the thread's next run; m.mu is held.
func (m *MemoryStore) claim(threadID, worker string, lease time.Duration, now time.Time) *Run {
	next, _ := m.next(threadID, now)
	if next == nil {
		return nil
	}
	next.Status, next.Worker, next.LeaseUntil, next.UpdatedAt = RunRunning, worker, now.Add(lease), now.UTC()
	next.Attempt++
	return cloneRun(next)
}

// next returns the thread's run to claim, if any, and whether the thread
// has a pending or running run at all; m.mu is held.
func (m *MemoryStore) next(threadID string, now time.Time) (next *Run, active bool) {
	for _, id := range m.active[threadID] {
		r := m.runs[id]
		switch {
		case r.Status == RunRunning && r.LeaseUntil.After(now):
			return nil, true
		case r.Status == RunRunning: // its worker's lease expired: take it over
			active = true
			if next == nil {
				next = r
			}
		case r.Status == RunPending:
			active = true
			if next == nil && !r.CreatedAt.After(now) {
				next = r
			}
		}
	}
	return next, active
}

// ClaimDue implements [Store]. It looks at the threads that have a
// pending or running run, not at every thread.
func (m *MemoryStore) ClaimDue(_ context.Context, worker string, lease time.Duration) (*Run, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	now := time.Now()
	var best *Run
	for tid := range m.active {
		next, _ := m.next(tid, now)
		if next != nil && (best == nil || next.CreatedAt.Before(best.CreatedAt)) {
			best = next
		}
	}
	if best == nil {
		return nil, nil
	}
	return m.claim(best.ThreadID, worker, lease, now), nil
}

// Prune implements [Store].
func (m *MemoryStore) Prune(_ context.Context, endedBefore time.Time, keep int) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	if keep > 0 {
		for tid, ids := range m.byTh {
			ended, cut := 0, -1
			for i := len(ids) - 1; i >= 0; i-- { // newest first
				if finished(m.runs[ids[i]].Status) {
					if ended++; ended > keep {
						cut = i
						break
					}
				}
			}
			if cut < 0 {
				continue
			}
			// ids[:cut+1] holds the ended runs past keep, and any
			// run still pending or running among them, which stays.
			seen := 0
			m.byTh[tid] = slices.DeleteFunc(ids, func(id string) bool {
				if seen++; seen > cut+1 {
					return false
				}
				r := m.runs[id]
				if !finished(r.Status) {
					return false
				}
				delete(m.runs, id)
				delete(m.logs, id)
				n++
				return true
			})
		}
	}
	if endedBefore.IsZero() {
		return n, nil
	}
	for id, r := range m.runs {
		if finished(r.Status) && r.UpdatedAt.Before(endedBefore) && (m.logs[id] != nil || r.Kwargs != nil) {
			delete(m.logs, id)
			r.Kwargs = nil
			n++
		}
	}
	return n, nil
}

// Renew implements [Store].
func (m *MemoryStore) Renew(_ context.Context, runID, worker string, lease time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[runID]
	if !ok || r.Worker != worker || r.Status != RunRunning {
		return fmt.Errorf("run %s is not held by %s: %w", runID, worker, ErrNotFound)
	}
	r.LeaseUntil = time.Now().Add(lease)
	return nil
}

// RenewAttempt implements [AttemptRenewer].
func (m *MemoryStore) RenewAttempt(_ context.Context, runID, worker string, attempt int, lease time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[runID]
	if !ok || r.Worker != worker || r.Attempt != attempt || r.Status != RunRunning {
		return fmt.Errorf("run %s is not held by %s attempt %d: %w", runID, worker, attempt, ErrNotFound)
	}
	r.LeaseUntil = time.Now().Add(lease)
	return nil
}

// AppendEvent implements [Store].
func (m *MemoryStore) AppendEvent(_ context.Context, runID, name string, data json.RawMessage, max int) (Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.runs[runID]; !ok {
		return Event{}, fmt.Errorf("run %s: %w", runID, ErrNotFound)
	}
	return m.appendEvent(runID, name, data, max), nil
}

// EndRunEvent implements [EventEnder]: the run's end and its last event
// under one hold of the store's lock.
func (m *MemoryStore) EndRunEvent(_ context.Context, e RunEnd) (*Run, Event, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	r, ok := m.runs[e.RunID]
	if !ok {
		return nil, Event{}, fmt.Errorf("run %s: %w", e.RunID, ErrNotFound)
	}
	if e.Worker != "" && (r.Status != RunRunning || r.Worker != e.Worker || r.Attempt != e.Attempt) {
		return nil, Event{}, fmt.Errorf("run %s: %s under worker %q attempt %d, no longer running under %q attempt %d: %w",
			e.RunID, r.Status, r.Worker, r.Attempt, e.Worker, e.Attempt, ErrLeaseLost)
	}
	ev := m.appendEvent(e.RunID, e.EventName, e.EventData, e.MaxEvents)
	wasFinished := finished(r.Status)
	r.endAt(e.Status, e.Error, e.At)
	if wasFinished != finished(r.Status) {
		m.reindex(r.ThreadID)
	}
	return cloneRun(r), ev, nil
}

// appendEvent appends an event to the run's log; m.mu is held.
func (m *MemoryStore) appendEvent(runID, name string, data json.RawMessage, max int) Event {
	l := m.logs[runID]
	if l == nil {
		l = &eventLog{}
		m.logs[runID] = l
	}
	ev := Event{ID: l.next, Name: name, Data: slices.Clone(data)}
	l.next++
	l.evs = append(l.evs, ev)
	if max > 0 && len(l.evs) > max {
		// Reslicing drops the oldest without copying; append copies the
		// kept events when it grows the array, so the log's memory stays
		// within about twice max, at an amortised constant cost.
		clear(l.evs[:len(l.evs)-max])
		l.evs = l.evs[len(l.evs)-max:]
	}
	return ev
}

// Events implements [Store].
func (m *MemoryStore) Events(_ context.Context, runID string, after int64, limit int) ([]Event, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.logs[runID]
	if l == nil {
		if _, ok := m.runs[runID]; !ok {
			return nil, 0, fmt.Errorf("run %s: %w", runID, ErrNotFound)
		}
		return nil, 0, nil
	}
	// Ids are consecutive, so the events after `after` start at an index
	// computed, not searched for.
	first := l.next - int64(len(l.evs))
	i := max(after+1-first, 0)
	if i >= int64(len(l.evs)) {
		return nil, first, nil
	}
	evs := l.evs[i:]
	if limit > 0 && len(evs) > limit {
		evs = evs[:limit]
	}
	return slices.Clone(evs), first, nil
}

// LastEvent implements [LastEventReader]: the log is read backwards.
func (m *MemoryStore) LastEvent(_ context.Context, runID, name string) (Event, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.logs[runID]
	if l == nil {
		return Event{}, false, nil
	}
	for i := len(l.evs) - 1; i >= 0; i-- {
		if ev := l.evs[i]; ev.Name == name {
			ev.Data = slices.Clone(ev.Data)
			return ev, true, nil
		}
	}
	return Event{}, false, nil
}

// LastEventID implements [LastEventIDReader].
func (m *MemoryStore) LastEventID(_ context.Context, runID string) (int64, bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.logs[runID]
	if l == nil || len(l.evs) == 0 {
		return 0, false, nil
	}
	return l.evs[len(l.evs)-1].ID, true, nil
}

// CountThreads implements [OwnerCounter].
func (m *MemoryStore) CountThreads(_ context.Context, owner string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, t := range m.threads {
		if t.Owner == owner {
			n++
		}
	}
	return n, nil
}

// CountActiveRuns implements [OwnerCounter]. It reads the active runs of
// every thread, which are few beside the runs that ended.
func (m *MemoryStore) CountActiveRuns(_ context.Context, owner string) (int, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, ids := range m.active {
		for _, id := range ids {
			if r := m.runs[id]; r != nil && r.Owner == owner && (r.Status == RunPending || r.Status == RunRunning) {
				n++
			}
		}
	}
	return n, nil
}

// SetThreadBytes implements [ByteCounter].
func (m *MemoryStore) SetThreadBytes(_ context.Context, threadID string, bytes, subgraphBytes int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.threads[threadID]; !ok {
		return nil
	}
	b := m.bytes[threadID]
	b[0] = bytes
	if subgraphBytes >= 0 {
		b[1] = subgraphBytes
	}
	m.bytes[threadID] = b
	return nil
}

// CountBytes implements [ByteCounter]. It reads the counts of the
// threads that have one, of every principal.
func (m *MemoryStore) CountBytes(_ context.Context, owner string) (int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var n int64
	for id, b := range m.bytes {
		if t := m.threads[id]; t != nil && t.Owner == owner {
			n += b[0] + b[1]
		}
	}
	return n, nil
}

// memAssistant is an assistant of a MemoryStore: its versions, oldest
// first, the current one's index, and the bytes they take.
type memAssistant struct {
	versions []*Assistant
	current  int
	bytes    int64
}

func (e *memAssistant) cur() *Assistant { return e.versions[e.current] }

// CreateAssistant implements [AssistantStore].
func (m *MemoryStore) CreateAssistant(_ context.Context, a *Assistant) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.assistants[a.ID]; ok {
		return fmt.Errorf("assistant %s: %w", a.ID, ErrExists)
	}
	m.assistants[a.ID] = &memAssistant{versions: []*Assistant{cloneAssistant(a)}, bytes: assistantBytes(a)}
	return nil
}

// Assistant implements [AssistantStore].
func (m *MemoryStore) Assistant(_ context.Context, id string) (*Assistant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.assistants[id]
	if !ok {
		return nil, fmt.Errorf("assistant %s: %w", id, ErrNotFound)
	}
	return cloneAssistant(e.cur()), nil
}

// Assistants implements [AssistantStore].
func (m *MemoryStore) Assistants(_ context.Context, owner string) ([]*Assistant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []*Assistant
	for _, e := range m.assistants {
		if a := e.cur(); a.Owner == owner {
			out = append(out, cloneAssistant(a))
		}
	}
	slices.SortFunc(out, func(a, b *Assistant) int {
		if c := a.CreatedAt.Compare(b.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
	return out, nil
}

// UpdateAssistant implements [AssistantStore].
func (m *MemoryStore) UpdateAssistant(_ context.Context, id string, fn func(*Assistant) error) (*Assistant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.assistants[id]
	if !ok {
		return nil, fmt.Errorf("assistant %s: %w", id, ErrNotFound)
	}
	a := cloneAssistant(e.cur())
	if err := fn(a); err != nil {
		return nil, err
	}
	a.ID, a.Version = id, e.versions[len(e.versions)-1].Version+1
	e.versions = append(e.versions, cloneAssistant(a))
	e.current = len(e.versions) - 1
	e.bytes += assistantBytes(a)
	return a, nil
}

// AssistantVersions implements [AssistantStore].
func (m *MemoryStore) AssistantVersions(_ context.Context, owner, id string) ([]*Assistant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.assistants[id]
	if !ok || e.cur().Owner != owner {
		return nil, fmt.Errorf("assistant %s: %w", id, ErrNotFound)
	}
	out := make([]*Assistant, 0, len(e.versions))
	for i := len(e.versions) - 1; i >= 0; i-- {
		out = append(out, cloneAssistant(e.versions[i]))
	}
	return out, nil
}

// SetAssistantVersion implements [AssistantStore].
func (m *MemoryStore) SetAssistantVersion(_ context.Context, owner, id string, version int) (*Assistant, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.assistants[id]
	if !ok || e.cur().Owner != owner {
		return nil, fmt.Errorf("assistant %s: %w", id, ErrNotFound)
	}
	for i, v := range e.versions {
		if v.Version == version {
			e.current = i
			return cloneAssistant(v), nil
		}
	}
	return nil, fmt.Errorf("assistant %s version %d: %w", id, version, ErrNotFound)
}

// DeleteAssistant implements [AssistantStore].
func (m *MemoryStore) DeleteAssistant(_ context.Context, owner, id string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if e, ok := m.assistants[id]; ok && e.cur().Owner == owner {
		delete(m.assistants, id)
	}
	return nil
}

// AssistantUsage implements [AssistantStore].
func (m *MemoryStore) AssistantUsage(_ context.Context, owner string) (int, int64, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	n, bytes := 0, int64(0)
	for _, e := range m.assistants {
		if e.cur().Owner == owner {
			n++
			bytes += e.bytes
		}
	}
	return n, bytes, nil
}
