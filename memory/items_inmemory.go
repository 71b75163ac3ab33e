package memory

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/agentgraph/agentgraph/memory/internal/itemkey"
)

// DefaultMaxRecords is InMemoryItemsConfig.MaxRecords when it is zero.
const DefaultMaxRecords = 100_000

// DefaultMaxBytes is InMemoryItemsConfig.MaxBytes when it is zero.
const DefaultMaxBytes = 1 << 30

// ErrFull is returned by [InMemoryItems.Put] for a new record when the
// store already holds InMemoryItemsConfig.MaxRecords records that have not
// expired.
var ErrFull = errors.New("memory: the item store is full; delete records, give them a TTL, or raise InMemoryItemsConfig.MaxRecords")

// InMemoryItemsConfig configures [NewInMemoryItems].
type InMemoryItemsConfig struct {
	// MaxRecords bounds the records held; a Put of a new record beyond it
	// fails with [ErrFull] (expired records are dropped first). Zero means
	// [DefaultMaxRecords].
	MaxRecords int
	// MaxBytes bounds the bytes of the records held: their values', keys'
	// and namespaces' (the store keeps each value decoded besides, for
	// filters, which is not counted). A Put that would pass it fails with
	// an error matching [ErrFull] (expired records are dropped first).
	// Zero means [DefaultMaxBytes].
	MaxBytes int64
	// Now is the clock for timestamps and TTLs; nil means time.Now.
	Now func() time.Time
}

// InMemoryItems is an [Items] that keeps records in process memory,
// ordered, so a search under a prefix visits only the records there. Its
// zero value is not usable; call [NewInMemoryItems]. It suits tests,
// single-process services and memory that need not outlive the process.
type InMemoryItems struct {
	mu   sync.Mutex
	recs map[itemID]*memItem
	ids  []itemID // sorted by namespace encoding, then key
	max  int
	now  func() time.Time
	// size is the bytes of the records held (memItem.size), and maxSize
	// their bound.
	size, maxSize int64
}

type itemID struct{ ns, key string } // ns encoded with itemkey

func (a itemID) compare(b itemID) int {
	if c := strings.Compare(a.ns, b.ns); c != 0 {
		return c
	}
	return strings.Compare(a.key, b.key)
}

type memItem struct {
	rec Record
	obj map[string]any // rec.Value decoded, numbers as json.Number
}

// size is the bytes of it that InMemoryItemsConfig.MaxBytes counts.
func (it *memItem) size(id itemID) int64 {
	return int64(len(it.rec.Value) + len(id.ns) + len(id.key))
}

var _ Items = (*InMemoryItems)(nil)

// NewInMemoryItems returns an empty in-memory item store.
func NewInMemoryItems(cfg InMemoryItemsConfig) *InMemoryItems {
	s := &InMemoryItems{recs: map[itemID]*memItem{}, max: cfg.MaxRecords, now: cfg.Now, maxSize: cfg.MaxBytes}
	if s.max <= 0 {
		s.max = DefaultMaxRecords
	}
	if s.maxSize <= 0 {
		s.maxSize = DefaultMaxBytes
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s
}

func live(r *Record, now time.Time) bool { return r.Expires.IsZero() || now.Before(r.Expires) }

func refresh(r *Record, now time.Time) {
	if r.TTL > 0 {
		r.Expires = now.Add(r.TTL)
	}
}

// clone returns a copy of r that shares nothing with the store.
func clone(r Record) Record {
	r.Namespace = slices.Clone(r.Namespace)
	r.Value = slices.Clone(r.Value)
	return r
}

// Put implements [Items].
func (s *InMemoryItems) Put(ctx context.Context, r Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	val, err := CheckRecord(r)
	if err != nil {
		return err
	}
	obj, _ := parseObject(val)
	now := s.now()
	it := &memItem{rec: Record{
		Namespace: slices.Clone(r.Namespace), Key: r.Key, Value: val,
		Created: now, Updated: now, TTL: r.TTL,
	}, obj: obj}
	refresh(&it.rec, now)
	id := itemID{itemkey.Encode(r.Namespace), r.Key}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.recs[id]
	grow := it.size(id)
	if old != nil {
		grow -= old.size(id)
	}
	if grow > 0 && s.size+grow > s.maxSize {
		s.sweep(now)
		// The sweep may have dropped the old record (an expired one at
		// this key) and taken its size off s.size: count the new
		// record whole then.
		grow = it.size(id)
		if old = s.recs[id]; old != nil {
			grow -= old.size(id)
		}
		if s.size+grow > s.maxSize {
			return fmt.Errorf("memory: the item store holds %d bytes of records, and this one would take it past its InMemoryItemsConfig.MaxBytes (%d): %w", s.size, s.maxSize, ErrFull)
		}
	}
	if old != nil {
		if live(&old.rec, now) {
			it.rec.Created = old.rec.Created
		}
		s.recs[id] = it
		s.size += grow
		return nil
	}
	if len(s.recs) >= s.max {
		s.sweep(now)
		if len(s.recs) >= s.max {
			return ErrFull
		}
	}
	s.recs[id] = it
	s.size += grow
	i, _ := slices.BinarySearchFunc(s.ids, id, itemID.compare)
	s.ids = slices.Insert(s.ids, i, id)
	return nil
}

// sweep drops expired records. s.mu is held.
func (s *InMemoryItems) sweep(now time.Time) int {
	n := len(s.ids)
	s.ids = slices.DeleteFunc(s.ids, func(id itemID) bool {
		if live(&s.recs[id].rec, now) {
			return false
		}
		s.size -= s.recs[id].size(id)
		delete(s.recs, id)
		return true
	})
	return n - len(s.ids)
}

// DeleteExpired removes the records that have expired and returns how
// many. Expired records are invisible anyway; this frees their memory.
func (s *InMemoryItems) DeleteExpired(ctx context.Context) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sweep(s.now()), nil
}

// Get implements [Items].
func (s *InMemoryItems) Get(ctx context.Context, namespace []string, key string, refreshTTL bool) (Record, error) {
	if err := ctx.Err(); err != nil {
		return Record{}, err
	}
	if err := CheckKey(namespace, key); err != nil {
		return Record{}, err
	}
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	it := s.recs[itemID{itemkey.Encode(namespace), key}]
	if it == nil || !live(&it.rec, now) {
		return Record{}, NotFound(namespace, key)
	}
	if refreshTTL {
		refresh(&it.rec, now)
	}
	return clone(it.rec), nil
}

// Delete implements [Items].
func (s *InMemoryItems) Delete(ctx context.Context, namespace []string, key string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := CheckKey(namespace, key); err != nil {
		return err
	}
	id := itemID{itemkey.Encode(namespace), key}
	s.mu.Lock()
	defer s.mu.Unlock()
	it, ok := s.recs[id]
	if !ok {
		return nil
	}
	s.size -= it.size(id)
	delete(s.recs, id)
	if i, ok := slices.BinarySearchFunc(s.ids, id, itemID.compare); ok {
		s.ids = slices.Delete(s.ids, i, i+1)
	}
	return nil
}

// under returns the ids whose namespace starts with the encoded prefix.
// s.mu is held.
func (s *InMemoryItems) under(prefix string) []itemID {
	i, _ := slices.BinarySearchFunc(s.ids, itemID{ns: prefix}, itemID.compare)
	j := i
	for j < len(s.ids) && strings.HasPrefix(s.ids[j].ns, prefix) {
		j++
	}
	return s.ids[i:j]
}

// Search implements [Items].
func (s *InMemoryItems) Search(ctx context.Context, q ItemQuery) ([]Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q, conds, err := CheckItemQuery(q)
	if err != nil {
		return nil, err
	}
	var terms [][]byte
	for _, t := range QueryTerms(q.Query) {
		terms = append(terms, []byte(t))
	}
	var lower []byte // a record's value lower-cased, made for a Query only
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []Record
	skip, size := q.Offset, 0
	for n, id := range s.under(itemkey.Encode(q.Prefix)) {
		if n&1023 == 1023 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		it := s.recs[id]
		if !live(&it.rec, now) || !Match(conds, it.obj) {
			continue
		}
		if len(terms) > 0 {
			lower = appendLowerASCII(lower[:0], it.rec.Value)
			if !containsAll(lower, terms) {
				continue
			}
		}
		if skip > 0 {
			skip--
			continue
		}
		if q.RefreshTTL {
			refresh(&it.rec, now)
		}
		out = append(out, clone(it.rec))
		if size += len(it.rec.Value); len(out) == q.Limit || q.MaxBytes > 0 && size > q.MaxBytes {
			break
		}
	}
	return out, nil
}

func containsAll(text []byte, terms [][]byte) bool {
	for _, t := range terms {
		if !bytes.Contains(text, t) {
			return false
		}
	}
	return true
}

// appendLowerASCII appends b to dst with its ASCII letters lower-cased,
// as lowerASCII does.
func appendLowerASCII(dst, b []byte) []byte {
	for _, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
	}
	return dst
}

// Namespaces implements [Items].
func (s *InMemoryItems) Namespaces(ctx context.Context, q NamespaceQuery) ([][]string, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	q, err := CheckNamespaceQuery(q)
	if err != nil {
		return nil, err
	}
	list := itemkey.NewList(q.Suffix, q.MaxDepth, q.Offset, q.Limit)
	now := s.now()
	s.mu.Lock()
	defer s.mu.Unlock()
	var prev string
	for _, id := range s.under(itemkey.Encode(q.Prefix)) {
		if id.ns == prev || !live(&s.recs[id].rec, now) {
			continue
		}
		prev = id.ns
		if list.Add(id.ns) {
			break
		}
	}
	return list.Namespaces(), nil
}

// Match reports whether the JSON object obj (decoded with numbers as
// json.Number or float64) passes every condition. Stores that cannot
// express a filter in their query language call it on each candidate.
func Match(conds []Condition, obj map[string]any) bool {
	for _, c := range conds {
		v, ok := obj[c.Field]
		if !holds(c, v, ok) {
			return false
		}
	}
	return true
}

func holds(c Condition, v any, present bool) bool {
	if c.Op == OpNe {
		return !present || !equal(v, c.Value)
	}
	if !present {
		return false
	}
	if c.Op == OpEq {
		return equal(v, c.Value)
	}
	var r int
	switch want := c.Value.(type) {
	case float64:
		f, ok := number(v)
		if !ok {
			return false
		}
		r = cmp.Compare(f, want)
	case string:
		s, ok := v.(string)
		if !ok {
			return false
		}
		r = strings.Compare(s, want)
	default:
		return false
	}
	switch c.Op {
	case OpGt:
		return r > 0
	case OpGte:
		return r >= 0
	case OpLt:
		return r < 0
	case OpLte:
		return r <= 0
	}
	panic(fmt.Sprintf("memory: unknown filter operator %q", c.Op))
}

func number(v any) (float64, bool) {
	switch x := v.(type) {
	case float64:
		return x, true
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, false
		}
		return f, true
	}
	return 0, false
}

func equal(v, want any) bool {
	switch w := want.(type) {
	case nil:
		return v == nil
	case bool:
		b, ok := v.(bool)
		return ok && b == w
	case string:
		s, ok := v.(string)
		return ok && s == w
	case float64:
		f, ok := number(v)
		return ok && f == w
	}
	return false
}
