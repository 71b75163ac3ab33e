package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// manyKeyWrite is how a [postgrestest.Counter] keys the Log's write
// statement of several keys (its first six words).
const manyKeyWrite = "WITH c AS (SELECT * FROM"

// onePool opens a pool of one connection on the test server's schema,
// traced by tr.
func onePool(t *testing.T, tr pgx.QueryTracer) *pgxpool.Pool {
	t.Helper()
	return postgrestest.TracedPool(t, tr, func(cfg *pgxpool.Config) { cfg.MaxConns = 1 })
}

func newLog(t *testing.T, cfg postgres.LogConfig) *postgres.Log {
	t.Helper()
	l, err := postgres.NewLog(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(l.Close)
	return l
}

// waitQueued waits until l's next write has collected n records.
func waitQueued(t *testing.T, l *postgres.Log, n int) {
	t.Helper()
	for {
		if _, next := postgres.Queued(l); next >= n {
			return
		}
		select {
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		case <-time.After(time.Millisecond):
		}
	}
}

// holdWrites takes the pool's only connection and starts a write of one
// record to key "lead" that waits for it, so that the appends made until
// the returned release is called are collected for the next write.
func holdWrites(t *testing.T, l *postgres.Log, pool *pgxpool.Pool) (release func()) {
	t.Helper()
	conn, err := pool.Acquire(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := l.Append(t.Context(), "lead", 0, postgres.Record{Data: []byte("lead")})
		done <- err
	}()
	for {
		if in, _ := postgres.Queued(l); in == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	return func() {
		conn.Release()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
}

// appended is what a concurrent Append returned.
type appended struct {
	key  string
	data string
	pos  int64
	err  error
}

// appendAll appends recs concurrently, one goroutine each, and returns
// once they are all collected for the next write; wait returns their
// results.
func appendAll(t *testing.T, l *postgres.Log, max int, keys []string, recs []postgres.Record) (wait func() []appended) {
	t.Helper()
	out := make([]appended, len(recs))
	var wg sync.WaitGroup
	for i := range recs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			pos, err := l.Append(t.Context(), keys[i], max, recs[i])
			out[i] = appended{key: keys[i], data: string(recs[i].Data), pos: pos, err: err}
		}()
	}
	waitQueued(t, l, len(recs))
	return func() []appended {
		wg.Wait()
		return out
	}
}

// TestLogWritesWhatWaitsInOneStatement appends 200 records to 20 keys
// while the pool's only connection is held, so that they all wait for
// the write in flight: they are then written by one statement, each
// key's records numbered from 0 in the order the appends were taken,
// each append returning its record's position.
func TestLogWritesWhatWaitsInOneStatement(t *testing.T) {
	_, schema := postgrestest.Schema(t, "log_")
	var tr postgrestest.Counter
	pool := onePool(t, &tr)
	l := newLog(t, postgres.LogConfig{Pool: pool, Schema: schema})
	release := holdWrites(t, l, pool)
	var keys []string
	var recs []postgres.Record
	for k := range 20 {
		for i := range 10 {
			keys = append(keys, fmt.Sprintf("k%d", k))
			recs = append(recs, postgres.Record{Name: "n", Seq: int64(i), Data: fmt.Appendf(nil, "%d/%d", k, i)})
		}
	}
	wait := appendAll(t, l, 0, keys, recs)
	release()
	got := map[string]appended{}
	for _, a := range wait() {
		if a.err != nil {
			t.Fatal(a.err)
		}
		got[a.data] = a
	}
	if n := tr.Snapshot().SQL[manyKeyWrite]; n != 1 {
		t.Errorf("200 waiting records took %d write statements; want 1", n)
	}
	for k := range 20 {
		recs, first, found, err := l.Read(t.Context(), fmt.Sprintf("k%d", k), -1, 0)
		if err != nil || !found || first != 0 || len(recs) != 10 {
			t.Fatalf("k%d: %d records from %d, found %v, %v; want 10 from 0", k, len(recs), first, found, err)
		}
		for i, r := range recs {
			if r.Pos != int64(i) || r.Name != "n" || got[string(r.Data)].pos != r.Pos || got[string(r.Data)].key != fmt.Sprintf("k%d", k) {
				t.Fatalf("k%d record %d: %+v; its append: %+v", k, i, r, got[string(r.Data)])
			}
		}
	}
}

// TestLogKeepsTheLastMax appends records one at a time and ten in one
// write (past the bound within the write itself): a key keeps its last
// max, and Read reports where the log starts and pages with a limit.
func TestLogKeepsTheLastMax(t *testing.T) {
	_, schema := postgrestest.Schema(t, "log_")
	pool := onePool(t, nil)
	l := newLog(t, postgres.LogConfig{Pool: pool, Schema: schema})
	for i := range 5 {
		pos, err := l.Append(t.Context(), "one", 3, postgres.Record{Data: []byte{byte(i)}})
		if err != nil || pos != int64(i) {
			t.Fatalf("append %d: position %d, %v", i, pos, err)
		}
	}
	recs, first, _, err := l.Read(t.Context(), "one", -1, 0)
	if err != nil || first != 2 || len(recs) != 3 || recs[0].Pos != 2 || recs[2].Pos != 4 {
		t.Fatalf("one: %+v from %d, %v; want 2..4", recs, first, err)
	}
	if recs, _, _, _ := l.Read(t.Context(), "one", 2, 1); len(recs) != 1 || recs[0].Pos != 3 {
		t.Fatalf("one after 2, limit 1: %+v; want 3", recs)
	}
	release := holdWrites(t, l, pool)
	var keys []string
	var many []postgres.Record
	for i := range 10 {
		keys, many = append(keys, "many"), append(many, postgres.Record{Data: []byte{byte(i)}})
	}
	wait := appendAll(t, l, 3, keys, many)
	release()
	byPos := map[int64]byte{}
	for _, a := range wait() {
		if a.err != nil {
			t.Fatal(a.err)
		}
		byPos[a.pos] = a.data[0]
	}
	if len(byPos) != 10 {
		t.Fatalf("positions %v; want 10 distinct", byPos)
	}
	recs, first, _, err = l.Read(t.Context(), "many", -1, 0)
	if err != nil || first != 7 || len(recs) != 3 || recs[0].Pos != 7 || recs[2].Pos != 9 {
		t.Fatalf("many: %+v from %d, %v; want 7..9", recs, first, err)
	}
	for _, r := range recs {
		if byPos[r.Pos] != r.Data[0] {
			t.Fatalf("many: record %+v; its append returned position %d for it", r, r.Pos)
		}
	}
}

// TestLogBadRecordFailsAlone appends a record PostgreSQL refuses (a NUL
// byte in its name) in the same write as good records of other keys:
// only its append fails, the others are stored, their positions
// returned, and LogConfig.Stored gets their keys.
func TestLogBadRecordFailsAlone(t *testing.T) {
	_, schema := postgrestest.Schema(t, "log_")
	pool := onePool(t, nil)
	var mu sync.Mutex
	stored := map[string]bool{}
	l := newLog(t, postgres.LogConfig{Pool: pool, Schema: schema, Stored: func(keys []string) {
		mu.Lock()
		defer mu.Unlock()
		for _, k := range keys {
			stored[k] = true
		}
	}})
	release := holdWrites(t, l, pool)
	keys := []string{"bad"}
	recs := []postgres.Record{{Name: "a\x00b", Data: []byte("bad")}}
	for k := range 5 {
		for i := range 3 {
			keys = append(keys, fmt.Sprintf("g%d", k))
			recs = append(recs, postgres.Record{Name: "n", Data: fmt.Appendf(nil, "%d/%d", k, i)})
		}
	}
	wait := appendAll(t, l, 0, keys, recs)
	release()
	for _, a := range wait() {
		if a.key == "bad" {
			if a.err == nil {
				t.Fatal("a name with a NUL byte was stored")
			}
			continue
		}
		if a.err != nil {
			t.Fatalf("%s (%s): %v; want it stored although another record of its write was refused", a.key, a.data, a.err)
		}
	}
	for k := range 5 {
		key := fmt.Sprintf("g%d", k)
		if recs, _, _, err := l.Read(t.Context(), key, -1, 0); err != nil || len(recs) != 3 || recs[2].Pos != 2 {
			t.Fatalf("%s: %+v, %v; want 3 records at 0..2", key, recs, err)
		}
		mu.Lock()
		ok := stored[key]
		mu.Unlock()
		if !ok {
			t.Errorf("Stored was not told of %s", key)
		}
	}
	if _, _, found, _ := l.Read(t.Context(), "bad", -1, 0); found {
		t.Error("the refused record's key has a log")
	}
}

// TestLogAppendReturnsWhenCancelled blocks the writes on a key row
// locked from another connection and cancels appends: the one whose
// write is blocked and the one waiting for room (MaxPending 1) return
// ctx.Err(); an append of another caller written with them is stored
// once the lock goes.
func TestLogAppendReturnsWhenCancelled(t *testing.T) {
	base, schema := postgrestest.Schema(t, "log_")
	l := newLog(t, postgres.LogConfig{Pool: base, Schema: schema, MaxPending: 1})
	if _, err := l.Append(t.Context(), "k", 0, postgres.Record{Data: []byte("0")}); err != nil {
		t.Fatal(err)
	}
	tx, err := base.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(t.Context(), `SELECT 1 FROM `+pgx.Identifier{schema, postgres.DefaultJournalName + "_keys"}.Sanitize()+` WHERE key = 'k' FOR UPDATE`); err != nil {
		t.Fatal(err)
	}
	result := func(ctx context.Context, key string) chan error {
		ch := make(chan error, 1)
		go func() {
			_, err := l.Append(ctx, key, 0, postgres.Record{Data: []byte(key)})
			ch <- err
		}()
		return ch
	}
	within := func(ch chan error, what string) error {
		select {
		case err := <-ch:
			return err
		case <-time.After(30 * time.Second): // failure guard only
			_ = tx.Rollback(context.Background())
			t.Fatalf("%s did not return", what)
			return nil
		}
	}
	leadCtx, cancelLead := context.WithCancel(t.Context())
	defer cancelLead()
	lead := result(leadCtx, "k") // writes alone, blocked on the lock
	for {
		if in, _ := postgres.Queued(l); in == 1 {
			break
		}
		time.Sleep(time.Millisecond)
	}
	other := result(t.Context(), "k") // collected for the next write
	waitQueued(t, l, 1)
	roomCtx, cancelRoom := context.WithCancel(t.Context())
	defer cancelRoom()
	room := result(roomCtx, "k2")     // waits for room
	time.Sleep(20 * time.Millisecond) // lets it reach the wait (the test passes either way)
	cancelRoom()
	if err := within(room, "an append waiting for room, cancelled,"); !errors.Is(err, context.Canceled) {
		t.Fatalf("append waiting for room, cancelled: %v; want context.Canceled", err)
	}
	cancelLead()
	if err := within(lead, "an append whose write is blocked, cancelled,"); !errors.Is(err, context.Canceled) {
		t.Fatalf("append whose write is blocked, cancelled: %v; want context.Canceled", err)
	}
	if err := tx.Rollback(t.Context()); err != nil {
		t.Fatal(err)
	}
	if err := within(other, "the other append"); err != nil {
		t.Fatalf("the other append: %v", err)
	}
}

// TestLogParentAndDelete checks that a log with a Parent table writes
// only the keys it lists (the others fail with event.ErrUnknownKey),
// and that Delete drops a key's log.
func TestLogParentAndDelete(t *testing.T) {
	base, schema := postgrestest.Schema(t, "log_")
	if _, err := base.Exec(t.Context(), `CREATE SCHEMA IF NOT EXISTS `+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatal(err)
	}
	parent := pgx.Identifier{schema, "parents"}.Sanitize()
	if _, err := base.Exec(t.Context(), `CREATE TABLE `+parent+` (id text PRIMARY KEY); INSERT INTO `+parent+` VALUES ('yes')`); err != nil {
		t.Fatal(err)
	}
	l := newLog(t, postgres.LogConfig{Pool: base, Schema: schema, Parent: parent})
	if _, err := l.Append(t.Context(), "yes", 0, postgres.Record{Data: []byte("a")}); err != nil {
		t.Fatal(err)
	}
	if _, err := l.Append(t.Context(), "no", 0, postgres.Record{Data: []byte("a")}); !errors.Is(err, event.ErrUnknownKey) {
		t.Fatalf("append to a key its parent does not list: %v; want event.ErrUnknownKey", err)
	}
	if _, _, found, _ := l.Read(t.Context(), "no", -1, 0); found {
		t.Fatal("a refused key has a log")
	}
	if err := l.Delete(t.Context(), "yes"); err != nil {
		t.Fatal(err)
	}
	if recs, _, found, err := l.Read(t.Context(), "yes", -1, 0); err != nil || found || len(recs) != 0 {
		t.Fatalf("deleted key: %+v, found %v, %v", recs, found, err)
	}
}

// keyOrder records the keys of the Log's multi-key write statements.
type keyOrder struct {
	mu   sync.Mutex
	keys [][]string
}

func (o *keyOrder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	if strings.HasPrefix(data.SQL, "WITH c AS (SELECT * FROM unnest(") {
		o.mu.Lock()
		o.keys = append(o.keys, slices.Clone(data.Args[0].([]string)))
		o.mu.Unlock()
	}
	return ctx
}

func (o *keyOrder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// TestLogWritesKeysSorted appends to keys in reverse order within one
// write: the statement gets them sorted, so that it locks their rows in
// the order every other process does (in append order, two processes
// writing b, a and a, b deadlock).
func TestLogWritesKeysSorted(t *testing.T) {
	_, schema := postgrestest.Schema(t, "log_")
	var tr keyOrder
	pool := onePool(t, &tr)
	l := newLog(t, postgres.LogConfig{Pool: pool, Schema: schema})
	release := holdWrites(t, l, pool)
	var waits []func() []appended
	for i, key := range []string{"c", "b", "a"} {
		waits = append(waits, appendAll(t, l, 0, []string{key}, []postgres.Record{{Data: []byte(key)}}))
		waitQueued(t, l, i+1)
	}
	release()
	for _, w := range waits {
		if a := w(); a[0].err != nil || a[0].pos != 0 {
			t.Fatalf("%+v", a[0])
		}
	}
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.keys) != 1 || !slices.Equal(tr.keys[0], []string{"a", "b", "c"}) {
		t.Fatalf("write statements' keys %v; want one of a, b, c", tr.keys)
	}
}

// TestLogAppendEpoch: a key with no log numbers its records from the
// epoch its append gives (alone, one write of several records of one
// key, and a write of several keys); a key with a log goes on from its
// next position whatever the epoch; a log deleted (as a crash empties
// the tables) starts again at the epoch given; an epoch out of range is
// refused.
func TestLogAppendEpoch(t *testing.T) {
	_, schema := postgrestest.Schema(t, "log_")
	pool := onePool(t, nil)
	l := newLog(t, postgres.LogConfig{Pool: pool, Schema: schema})
	rec := postgres.Record{Name: "n", Data: []byte("x")}
	e := postgres.EpochSize
	if pos, err := l.AppendEpoch(t.Context(), "one", 0, 3, rec); err != nil || pos != 3*e {
		t.Fatalf("first record of a key at epoch 3: %d, %v; want %d", pos, err, 3*e)
	}
	if pos, err := l.AppendEpoch(t.Context(), "one", 0, 5, rec); err != nil || pos != 3*e+1 {
		t.Fatalf("second record at epoch 5: %d, %v; want %d (the log goes on)", pos, err, 3*e+1)
	}
	if err := l.Delete(t.Context(), "one"); err != nil {
		t.Fatal(err)
	}
	if pos, err := l.AppendEpoch(t.Context(), "one", 0, 4, rec); err != nil || pos != 4*e {
		t.Fatalf("first record of a deleted log at epoch 4: %d, %v; want %d", pos, err, 4*e)
	}
	// Writes of several records: one key (write1), several keys (write),
	// one key new, one with a log.
	release := holdWrites(t, l, pool)
	keys := []string{"new", "new", "one", "one", "two"}
	out := make([]int64, len(keys))
	errs := make([]error, len(keys))
	var wg sync.WaitGroup
	for i, k := range keys {
		wg.Add(1)
		go func() {
			defer wg.Done()
			out[i], errs[i] = l.AppendEpoch(t.Context(), k, 0, 7, postgres.Record{Name: "n", Seq: int64(i), Data: []byte(k)})
		}()
	}
	waitQueued(t, l, len(keys))
	release()
	wg.Wait()
	got := map[string][]int64{}
	for i, k := range keys {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		got[k] = append(got[k], out[i])
	}
	for k, want := range map[string][]int64{"new": {7 * e, 7*e + 1}, "one": {4*e + 1, 4*e + 2}, "two": {7 * e}} {
		slices.Sort(got[k])
		if !slices.Equal(got[k], want) {
			t.Errorf("key %s written with others at epoch 7: positions %v; want %v", k, got[k], want)
		}
	}
	if pos, err := l.AppendEpoch(t.Context(), "one", 0, 0, rec); err != nil || pos != 4*e+3 {
		t.Errorf("a record at epoch 0 after the write: %d, %v; want %d", pos, err, 4*e+3)
	}
	// Writes of two records of one key: new, then with a log.
	for b, want := range [][]int64{{9 * e, 9*e + 1}, {9*e + 2, 9*e + 3}} {
		release := holdWrites(t, l, pool)
		var pos [2]int64
		var perr [2]error
		var wg sync.WaitGroup
		for i := range 2 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				pos[i], perr[i] = l.AppendEpoch(t.Context(), "three", 0, 9+2*int64(b), rec)
			}()
		}
		waitQueued(t, l, 2)
		release()
		wg.Wait()
		if perr[0] != nil || perr[1] != nil {
			t.Fatal(perr)
		}
		got := pos[:]
		slices.Sort(got)
		if !slices.Equal(got, want) {
			t.Errorf("two records of one key in one write: positions %v; want %v", got, want)
		}
	}
	for _, bad := range []int64{-1, postgres.MaxEpoch} {
		if _, err := l.AppendEpoch(t.Context(), "bad", 0, bad, rec); err == nil || !strings.Contains(err.Error(), "epoch") {
			t.Errorf("epoch %d: %v; want an error naming the epoch", bad, err)
		}
	}
}
