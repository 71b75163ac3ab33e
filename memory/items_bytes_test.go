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
