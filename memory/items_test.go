package memory_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/memory"
)

func TestInMemoryItemsFull(t *testing.T) {
	now := time.Unix(1000, 0)
	s := memory.NewInMemoryItems(memory.InMemoryItemsConfig{MaxRecords: 3, Now: func() time.Time { return now }})
	ctx := t.Context()
	rec := func(k string, ttl time.Duration) memory.Record {
		return memory.Record{Namespace: []string{"n"}, Key: k, Value: json.RawMessage(`{}`), TTL: ttl}
	}
	for _, k := range []string{"a", "b"} {
		if err := s.Put(ctx, rec(k, 0)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Put(ctx, rec("c", time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, rec("d", 0)); !errors.Is(err, memory.ErrFull) {
		t.Fatalf("Put of a 4th record with MaxRecords 3 = %v, want ErrFull", err)
	}
	if err := s.Put(ctx, rec("a", 0)); err != nil {
		t.Errorf("replacing a record of a full store: %v", err)
	}
	now = now.Add(time.Second) // c expires and makes room
	if err := s.Put(ctx, rec("d", 0)); err != nil {
		t.Errorf("Put after a record expired: %v", err)
	}
	if err := s.Put(ctx, rec("e", 0)); !errors.Is(err, memory.ErrFull) {
		t.Errorf("Put of a 4th live record = %v, want ErrFull", err)
	}
	if err := s.Delete(ctx, []string{"n"}, "a"); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, rec("e", 0)); err != nil {
		t.Errorf("Put after a Delete: %v", err)
	}
}

func TestInMemoryItemsDeleteExpired(t *testing.T) {
	now := time.Unix(1000, 0)
	s := memory.NewInMemoryItems(memory.InMemoryItemsConfig{Now: func() time.Time { return now }})
	for i := range 5 {
		r := memory.Record{Namespace: []string{"n"}, Key: fmt.Sprint(i), Value: json.RawMessage(`{}`)}
		if i%2 == 0 {
			r.TTL = time.Minute
		}
		if err := s.Put(t.Context(), r); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := s.DeleteExpired(t.Context()); err != nil || n != 0 {
		t.Errorf("DeleteExpired before any expiry = %d, %v; want 0", n, err)
	}
	now = now.Add(time.Minute)
	if n, err := s.DeleteExpired(t.Context()); err != nil || n != 3 {
		t.Errorf("DeleteExpired = %d, %v; want 3", n, err)
	}
	rs, err := s.Search(t.Context(), memory.ItemQuery{})
	if err != nil || len(rs) != 2 || rs[0].Key != "1" || rs[1].Key != "3" {
		t.Errorf("Search after DeleteExpired = %v, %v; want records 1 and 3", rs, err)
	}
}

func TestCheckItemQueryConditions(t *testing.T) {
	q, conds, err := memory.CheckItemQuery(memory.ItemQuery{Filter: map[string]any{
		"b": map[string]any{"$lt": int64(5), "$gte": json.Number("1")},
		"a": "x",
	}})
	if err != nil {
		t.Fatal(err)
	}
	if q.Limit != memory.DefaultSearchLimit {
		t.Errorf("Limit = %d, want the default %d", q.Limit, memory.DefaultSearchLimit)
	}
	want := []memory.Condition{{"a", memory.OpEq, "x"}, {"b", memory.OpGte, 1.0}, {"b", memory.OpLt, 5.0}}
	if fmt.Sprint(conds) != fmt.Sprint(want) {
		t.Errorf("conditions = %v, want %v", conds, want)
	}
}

func TestValidationErrorText(t *testing.T) {
	err := memory.CheckKey([]string{"users", "a.b"}, "k")
	want := `memory: invalid argument: Namespace[1]: label "a.b" contains a dot; the HTTP API joins labels with dots, so use another character such as '-' or '_'`
	if err == nil || err.Error() != want {
		t.Errorf("error = %v\nwant   %s", err, want)
	}
}
