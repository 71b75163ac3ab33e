package memory_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/memory"
)

// TestInMemoryItemsMaxBytes: a Put that would take the store past
// InMemoryItemsConfig.MaxBytes fails with ErrFull, naming MaxBytes; a
// replacement counts only what it adds, a Delete and an expiry give
// their bytes back, and a search by Query still matches in either case.
func TestInMemoryItemsMaxBytes(t *testing.T) {
	now := time.Unix(1000, 0)
	s := memory.NewInMemoryItems(memory.InMemoryItemsConfig{MaxBytes: 3000, Now: func() time.Time { return now }})
	ctx := t.Context()
	val := func(n int) json.RawMessage { return json.RawMessage(`{"t":"` + strings.Repeat("A", n) + `"}`) }
	rec := func(k string, n int, ttl time.Duration) memory.Record {
		return memory.Record{Namespace: []string{"n"}, Key: k, Value: val(n), TTL: ttl}
	}
	if err := s.Put(ctx, rec("a", 1000, 0)); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, rec("b", 1000, time.Second)); err != nil {
		t.Fatal(err)
	}
	err := s.Put(ctx, rec("c", 1000, 0))
	if !errors.Is(err, memory.ErrFull) || !strings.Contains(err.Error(), "MaxBytes") {
		t.Fatalf("Put past MaxBytes = %v; want ErrFull naming MaxBytes", err)
	}
	if err := s.Put(ctx, rec("a", 900, 0)); err != nil {
		t.Fatalf("a smaller replacement at the bound = %v; want it stored", err)
	}
	if err := s.Delete(ctx, []string{"n"}, "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, rec("c", 1000, 0)); err != nil {
		t.Fatalf("Put once a record was deleted = %v; want it stored", err)
	}
	if err := s.Put(ctx, rec("d", 1000, 0)); !errors.Is(err, memory.ErrFull) {
		t.Fatalf("Put past MaxBytes again = %v; want ErrFull", err)
	}
	now = now.Add(2 * time.Second) // b expires
	if err := s.Put(ctx, rec("d", 1000, 0)); err != nil {
		t.Fatalf("Put once a record expired = %v; want it stored", err)
	}
	got, err := s.Search(ctx, memory.ItemQuery{Prefix: []string{"n"}, Query: "aaa"})
	if err != nil || len(got) != 2 {
		t.Fatalf("Search by Query = %d records, %v; want 2 (c and d, matched in either case)", len(got), err)
	}
}

// TestInMemoryItemsMaxBytesExpiredReplacement: a Put at a key whose record
// has expired but was not swept yet, near MaxBytes, counts the new record
// whole once the sweep has dropped the old one, so the bytes counted stay
// the bytes held and MaxBytes still bounds the next Put.
func TestInMemoryItemsMaxBytesExpiredReplacement(t *testing.T) {
	now := time.Unix(1000, 0)
	s := memory.NewInMemoryItems(memory.InMemoryItemsConfig{MaxBytes: 3000, Now: func() time.Time { return now }})
	ctx := t.Context()
	val := func(n int) json.RawMessage { return json.RawMessage(`{"t":"` + strings.Repeat("A", n) + `"}`) }
	rec := func(k string, n int, ttl time.Duration) memory.Record {
		return memory.Record{Namespace: []string{"n"}, Key: k, Value: val(n), TTL: ttl}
	}
	for _, r := range []memory.Record{rec("a", 1000, time.Second), rec("b", 1000, time.Second), rec("c", 900, 0)} {
		if err := s.Put(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	now = now.Add(2 * time.Second) // a and b expire, unswept
	// Counted as a growth of ~100 bytes over the expired a, this passes
	// the bound, so the Put sweeps a and b, then stores the new a whole.
	if err := s.Put(ctx, rec("a", 1100, 0)); err != nil {
		t.Fatalf("Put over an expired record once the sweep made room = %v; want it stored", err)
	}
	// Held now: c (~900) and a (~1100); d (~1000) would pass 3000.
	if err := s.Put(ctx, rec("d", 1000, 0)); !errors.Is(err, memory.ErrFull) {
		t.Fatalf("Put past MaxBytes after replacing an expired record = %v; want ErrFull", err)
	}
	if err := s.Put(ctx, rec("d", 800, 0)); err != nil {
		t.Fatalf("Put that fits = %v; want it stored", err)
	}
}
