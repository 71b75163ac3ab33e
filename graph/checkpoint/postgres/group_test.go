package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// groupFixture is a Saver on a counted pool, with a way to hold one Put
// in flight (a transaction holding its thread's row lock) so that the
// Puts made meanwhile wait and are then sent together.
type groupFixture struct {
	t      *testing.T
	ctx    context.Context
	pool   *pgxpool.Pool
	schema string
	tr     *postgrestest.Counter
	s      *postgres.Saver
	slots  int // the threads occupy made
}

func newGroupFixture(t *testing.T) *groupFixture {
	t.Helper()
	base := testPool(t)
	f := &groupFixture{t: t, ctx: context.Background(), schema: freshSchema(t, base), tr: &postgrestest.Counter{}}
	f.pool = postgrestest.CountedPool(t, f.tr, func(cfg *pgxpool.Config) { cfg.MaxConns = 8 })
	var err error
	if f.s, err = postgres.New(f.ctx, postgres.Config{Pool: f.pool, Schema: f.schema}); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(f.s.Close)
	return f
}

// put saves a checkpoint of thread extending expect, with one blob and one
// write, and returns it.
func (f *groupFixture) put(ctx context.Context, s *postgres.Saver, lazy bool, thread, expect string, step int) (*checkpoint.Checkpoint, error) {
	cp := &checkpoint.Checkpoint{ThreadID: thread, ParentID: expect, Step: step, Versions: map[string]uint64{"n": uint64(step + 2)}}
	blobs := []checkpoint.Blob{{Channel: "n", Kind: checkpoint.Delta, Data: []byte(fmt.Sprintf(`[%q]`, thread))}}
	writes := []checkpoint.Write{{TaskID: "a", Node: "n", Channel: "n", Value: []byte(fmt.Sprintf(`%d`, step))}}
	if lazy {
		return cp, s.PutNoSync(ctx, expect, cp, blobs, writes)
	}
	return cp, s.Put(ctx, expect, cp, blobs, writes)
}

// hold locks thread's row in a transaction of its own, so that a Put on
// it waits, until the returned function is called.
func (f *groupFixture) hold(thread string) (release func()) {
	f.t.Helper()
	tx, err := testPool(f.t).Begin(f.ctx)
	if err != nil {
		f.t.Fatal(err)
	}
	if _, err := tx.Exec(f.ctx, `SELECT 1 FROM `+pgx.Identifier{f.schema}.Sanitize()+`.agentgraph_threads WHERE thread_id = $1 FOR UPDATE`, thread); err != nil {
		f.t.Fatal(err)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			if err := tx.Rollback(f.ctx); err != nil {
				f.t.Error(err)
			}
		})
	}
	f.t.Cleanup(release) // a test that fails before it releases the lock
	return release
}

// occupy holds every slot of the kind lazy with a Put waiting on a row
// lock, so that the Puts made meanwhile wait and are then sent together
// once release is called; release returns once the slots' Puts did.
func (f *groupFixture) occupy(lazy bool) (release func()) {
	f.t.Helper()
	var (
		wg       sync.WaitGroup
		releases []func()
	)
	for range postgres.GroupSlots {
		f.slots++
		th := fmt.Sprintf("slot%d", f.slots)
		holder, err := f.put(f.ctx, f.s, lazy, th, "", 1)
		if err != nil {
			f.t.Fatal(err)
		}
		releases = append(releases, f.hold(th))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := f.put(f.ctx, f.s, lazy, th, holder.ID, 2); err != nil {
				f.t.Errorf("Put on %s: %v", th, err)
			}
		}()
	}
	waitFor(f.t, "the slots' Puts to be sent", func() bool { _, n := postgres.GroupWaiting(f.s, lazy); return n == postgres.GroupSlots })
	f.waitLocked(postgres.GroupSlots)
	return func() {
		for _, r := range releases {
			r()
		}
		wg.Wait()
	}
}

// waitLocked waits until n statements on the fixture's schema wait for
// a lock in the server (so that they are counted as sent).
func (f *groupFixture) waitLocked(n int) {
	f.t.Helper()
	pool := testPool(f.t)
	waitFor(f.t, fmt.Sprintf("%d statements to wait for a lock", n), func() bool {
		var got int
		if err := pool.QueryRow(f.ctx, `SELECT count(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND strpos(query, $1) > 0`, f.schema).Scan(&got); err != nil {
			f.t.Fatal(err)
		}
		return got >= n
	})
}

// waitFor polls until cond holds; the deadline only bounds a broken test.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// latest returns the thread's latest checkpoint ID and how many checkpoints
// it has.
func (f *groupFixture) latest(thread string) (string, int) {
	f.t.Helper()
	snap, err := f.s.Get(f.ctx, thread, "")
	if errors.Is(err, checkpoint.ErrNotFound) {
		return "", 0
	}
	if err != nil {
		f.t.Fatal(err)
	}
	list, err := f.s.List(f.ctx, thread, checkpoint.ListOptions{})
	if err != nil {
		f.t.Fatal(err)
	}
	return snap.ID, len(list)
}

// TestGroupCommit: the Puts of other threads made while a Put is being
// sent wait for it and are then sent together, in one statement (and one
// transaction); each is saved as if alone, first checkpoints and
// checkpoints extending the remembered latest alike, with its blobs,
// writes and running totals.
func TestGroupCommit(t *testing.T) {
	for _, lazy := range []bool{false, true} {
		t.Run(fmt.Sprintf("lazy=%v", lazy), func(t *testing.T) {
			f := newGroupFixture(t)
			// Threads 0 to 4 have a checkpoint; 5 to 9 have none.
			prev := map[string]string{}
			for i := range 5 {
				th := fmt.Sprintf("t%d", i)
				cp, err := f.put(f.ctx, f.s, lazy, th, "", 1)
				if err != nil {
					t.Fatal(err)
				}
				prev[th] = cp.ID
			}
			release := f.occupy(lazy)
			var wg sync.WaitGroup
			f.tr.Take()
			saved := make([]*checkpoint.Checkpoint, 10)
			for i := range 10 {
				th := fmt.Sprintf("t%d", i)
				wg.Add(1)
				go func() {
					defer wg.Done()
					cp, err := f.put(f.ctx, f.s, lazy, th, prev[th], 2)
					if err != nil {
						t.Errorf("Put on %s: %v", th, err)
						return
					}
					saved[i] = cp
				}()
			}
			waitFor(t, "10 Puts to wait", func() bool { n, _ := postgres.GroupWaiting(f.s, lazy); return n == 10 })
			release()
			wg.Wait()
			got := f.tr.Take()
			if got.Trips != 1 || got.Txs != 1 || got.SQL[firstSix(postgres.GroupSQL(f.s))] != 1 {
				t.Errorf("10 waiting Puts sent in %d round trips, %d transactions; want the group's one statement, in one round trip. %s", got.Trips, got.Txs, got)
			}
			for i, cp := range saved {
				th := fmt.Sprintf("t%d", i)
				if cp == nil {
					continue
				}
				id, n := f.latest(th)
				want := 1
				if prev[th] != "" {
					want = 2
				}
				if id != cp.ID || n != want {
					t.Errorf("thread %s: latest %s of %d checkpoints; want %s of %d", th, id, n, cp.ID, want)
				}
				snap, err := f.s.Get(f.ctx, th, "")
				if err != nil {
					t.Fatal(err)
				}
				if len(snap.Writes) != 1 || string(snap.Writes[0].Value) != "2" {
					t.Errorf("thread %s: writes %+v; want the one of step 2", th, snap.Writes)
				}
				u, err := f.s.Usage(f.ctx, th)
				if err != nil {
					t.Fatal(err)
				}
				if u.Checkpoints != want || u.Blobs != want || u.Writes != want {
					t.Errorf("thread %s: usage %+v; want %d checkpoints, blobs and writes", th, u, want)
				}
			}
			// Each thread's next Put extends the checkpoint the group
			// saved, from memory: one statement.
			f.tr.Take()
			if _, err := f.put(f.ctx, f.s, lazy, "t0", saved[0].ID, 3); err != nil {
				t.Fatal(err)
			}
			if got := f.tr.Take(); got.Statements != 1 {
				t.Errorf("Put after the group: %d statements; want 1. %s", got.Statements, got)
			}
		})
	}
}

// firstSix is the key postgrestest.Counts.SQL counts sql under: its first
// six words.
func firstSix(sql string) string {
	f := strings.Fields(sql)
	return strings.Join(f[:min(6, len(f))], " ")
}

// TestGroupConflict: in a group, a Put whose thread another Saver moved on
// fails alone with its conflict; the others are saved. A Put whose
// checkpoint ID is taken makes PostgreSQL refuse the group's statement:
// every Put is then sent alone, that one fails alone and the others are
// saved, once.
func TestGroupConflict(t *testing.T) {
	f := newGroupFixture(t)
	other, err := postgres.New(f.ctx, postgres.Config{Pool: f.pool, Schema: f.schema})
	if err != nil {
		t.Fatal(err)
	}
	prev := map[string]string{}
	for _, th := range []string{"a", "b", "c", "moved", "taken"} {
		cp, err := f.put(f.ctx, f.s, false, th, "", 1)
		if err != nil {
			t.Fatal(err)
		}
		prev[th] = cp.ID
	}
	// The thread "taken" has two checkpoints: a Put extending the second
	// with the first's ID is refused.
	takenID := prev["taken"]
	second, err := f.put(f.ctx, f.s, false, "taken", takenID, 2)
	if err != nil {
		t.Fatal(err)
	}
	prev["taken"] = second.ID
	// other moves "moved" on: f.s's memory of it is stale.
	if _, err := other.Get(f.ctx, "moved", ""); err != nil {
		t.Fatal(err)
	}
	movedTo, err := f.put(f.ctx, other, false, "moved", prev["moved"], 2)
	if err != nil {
		t.Fatal(err)
	}
	heldStep := 0
	for _, withTaken := range []bool{false, true} {
		t.Run(fmt.Sprintf("taken=%v", withTaken), func(t *testing.T) {
			heldStep += 2
			release := f.occupy(false)
			var wg sync.WaitGroup
			threads := []string{"a", "b", "c", "moved"}
			if withTaken {
				threads = append(threads, "taken")
			}
			errs := make([]error, len(threads))
			cps := make([]*checkpoint.Checkpoint, len(threads))
			for i, th := range threads {
				wg.Add(1)
				go func() {
					defer wg.Done()
					cp := &checkpoint.Checkpoint{ThreadID: th, ParentID: prev[th], Step: heldStep, Versions: map[string]uint64{"n": uint64(10 + heldStep)}}
					if th == "taken" {
						cp.ID = takenID // the ID of the thread's first checkpoint
					}
					errs[i] = f.s.Put(f.ctx, prev[th], cp, []checkpoint.Blob{{Channel: "n", Kind: checkpoint.Delta, Data: []byte(`[1]`)}}, nil)
					cps[i] = cp
				}()
			}
			waitFor(t, "the Puts to wait", func() bool { n, _ := postgres.GroupWaiting(f.s, false); return n == len(threads) })
			f.tr.Take()
			release()
			wg.Wait()
			sent := f.tr.Take()
			if n := sent.SQL[firstSix(postgres.GroupSQL(f.s))]; n != 1 {
				t.Errorf("the group's statement sent %d times; want once. %s", n, sent)
			}
			for i, th := range threads {
				switch th {
				case "moved":
					var ce *checkpoint.ConflictError
					if !errors.As(errs[i], &ce) || ce.Actual != movedTo.ID {
						t.Errorf("Put on a thread another Saver moved on: %v; want a conflict with %s", errs[i], movedTo.ID)
					}
				case "taken":
					if !errors.Is(errs[i], checkpoint.ErrInvalid) {
						t.Errorf("Put with a taken checkpoint ID: %v; want ErrInvalid", errs[i])
					}
				default:
					if errs[i] != nil {
						t.Errorf("Put on %s: %v", th, errs[i])
						continue
					}
					id, _ := f.latest(th)
					if id != cps[i].ID {
						t.Errorf("thread %s: latest %s; want %s", th, id, cps[i].ID)
					}
					u, err := f.s.Usage(f.ctx, th)
					if err != nil {
						t.Fatal(err)
					}
					list, err := f.s.List(f.ctx, th, checkpoint.ListOptions{})
					if err != nil {
						t.Fatal(err)
					}
					if u.Checkpoints != len(list) {
						t.Errorf("thread %s: usage counts %d checkpoints of %d", th, u.Checkpoints, len(list))
					}
					prev[th] = cps[i].ID
				}
			}
			if id, n := f.latest("taken"); id != second.ID || n != 2 {
				t.Errorf("thread taken: latest %s of %d checkpoints; want %s of 2", id, n, second.ID)
			}
		})
	}
}

// TestGroupCancel: a Put whose context ends while it waits to be sent
// returns the context's error and is not written; the group is sent
// without it.
func TestGroupCancel(t *testing.T) {
	f := newGroupFixture(t)
	a, err := f.put(f.ctx, f.s, false, "a", "", 1)
	if err != nil {
		t.Fatal(err)
	}
	c, err := f.put(f.ctx, f.s, false, "c", "", 1)
	if err != nil {
		t.Fatal(err)
	}
	release := f.occupy(false)
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancel(f.ctx)
	var cancelled error
	wg.Add(2)
	go func() {
		defer wg.Done()
		_, cancelled = f.put(ctx, f.s, false, "a", a.ID, 2)
	}()
	var kept *checkpoint.Checkpoint
	go func() {
		defer wg.Done()
		var err error
		if kept, err = f.put(f.ctx, f.s, false, "c", c.ID, 2); err != nil {
			t.Error(err)
		}
	}()
	waitFor(t, "2 Puts to wait", func() bool { n, _ := postgres.GroupWaiting(f.s, false); return n == 2 })
	cancel()
	waitFor(t, "the cancelled Put to leave", func() bool { n, _ := postgres.GroupWaiting(f.s, false); return n == 1 })
	release()
	wg.Wait()
	if !errors.Is(cancelled, context.Canceled) {
		t.Errorf("cancelled Put: %v; want context.Canceled", cancelled)
	}
	if id, n := f.latest("a"); id != a.ID || n != 1 {
		t.Errorf("thread a: latest %s of %d checkpoints; want %s alone (the cancelled Put not written)", id, n, a.ID)
	}
	if id, n := f.latest("c"); id != kept.ID || n != 2 {
		t.Errorf("thread c: latest %s of %d checkpoints; want %s of 2", id, n, kept.ID)
	}
}

// TestGroupConcurrent: many callers, each putting a chain of checkpoints
// on its own thread, with and without the flush wait: every checkpoint is
// saved once, in order (the statements sent are logged: how many Puts
// share one depends on the scheduling).
func TestGroupConcurrent(t *testing.T) {
	f := newGroupFixture(t)
	const callers, puts = 16, 20
	var wg sync.WaitGroup
	ids := make([][]string, callers)
	f.tr.Take()
	for c := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			th, prev := fmt.Sprintf("c%d", c), ""
			for i := range puts {
				cp, err := f.put(f.ctx, f.s, (c+i)%2 == 0, th, prev, i+1)
				if err != nil {
					t.Errorf("Put %d on %s: %v", i, th, err)
					return
				}
				prev = cp.ID
				ids[c] = append(ids[c], cp.ID)
			}
		}()
	}
	wg.Wait()
	got := f.tr.Take()
	t.Logf("%d Puts: %s", callers*puts, got)
	if got.SQL[firstSix(postgres.GroupSQL(f.s))] == 0 {
		t.Errorf("%d callers sent no group statement; want some Puts sent together", callers)
	}
	for c := range callers {
		list, err := f.s.List(f.ctx, fmt.Sprintf("c%d", c), checkpoint.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if len(list) != puts {
			t.Errorf("thread c%d: %d checkpoints; want %d", c, len(list), puts)
			continue
		}
		for i, cp := range list {
			if want := ids[c][puts-1-i]; cp.ID != want {
				t.Errorf("thread c%d: checkpoint %d is %s; want %s", c, i, cp.ID, want)
			}
		}
	}
}

// TestGroupBounded: a group holds at most 64 Puts: the Puts that find it
// full are sent at once, beside it.
func TestGroupBounded(t *testing.T) {
	f := newGroupFixture(t)
	release := f.occupy(false)
	var wg sync.WaitGroup
	f.tr.Take()
	const n = 70
	var (
		mu   sync.Mutex
		done int
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := f.put(f.ctx, f.s, false, fmt.Sprintf("t%d", i), "", 1); err != nil {
				t.Errorf("Put on t%d: %v", i, err)
			}
			mu.Lock()
			done++
			mu.Unlock()
		}()
	}
	waitFor(t, "64 Puts to wait and 6 to be saved", func() bool {
		w, _ := postgres.GroupWaiting(f.s, false)
		mu.Lock()
		defer mu.Unlock()
		return w == 64 && done == n-64
	})
	release()
	wg.Wait()
	got := f.tr.Take()
	if g := got.SQL[firstSix(postgres.GroupSQL(f.s))]; g != 1 {
		t.Errorf("the group's statement sent %d times; want once. %s", g, got)
	}
	for i := range n {
		if _, k := f.latest(fmt.Sprintf("t%d", i)); k != 1 {
			t.Errorf("thread t%d: %d checkpoints; want 1", i, k)
		}
	}
}

// TestGroupCancelSent: a Put (a thread's first) whose context ends once
// its group's statement is being sent waits for the statement's outcome before it
// returns: the caller may then reuse its blobs slice and delete the
// thread, and the statement writes what the Put was given and does not
// put the deleted thread back. Its error wraps the context's and says
// that the checkpoint was saved.
func TestGroupCancelSent(t *testing.T) {
	f := newGroupFixture(t)
	// The group sorts its Puts by thread: "locked" is locked first, so
	// that the statement waits before it touches "zed".
	locked, err := f.put(f.ctx, f.s, false, "locked", "", 1)
	if err != nil {
		t.Fatal(err)
	}
	release := f.occupy(false)
	unlock := f.hold("locked")
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	blobs := []checkpoint.Blob{{Channel: "n", Kind: checkpoint.Delta, Data: []byte(`["zed"]`)}}
	returned := make(chan error, 1)
	go func() {
		err := f.s.Put(ctx, "", &checkpoint.Checkpoint{ThreadID: "zed", Step: 1, Versions: map[string]uint64{"n": 1}}, blobs, nil)
		blobs[0] = checkpoint.Blob{Channel: "n", Kind: checkpoint.Delta, Data: []byte(`["reused"]`)} // a run reuses its buffer
		returned <- err
	}()
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		if _, err := f.put(f.ctx, f.s, false, "locked", locked.ID, 2); err != nil {
			t.Error(err)
		}
	}()
	waitFor(t, "2 Puts to wait", func() bool { n, _ := postgres.GroupWaiting(f.s, false); return n == 2 })
	release()
	waitFor(t, "the group to be taken", func() bool { n, _ := postgres.GroupWaiting(f.s, false); return n == 0 })
	cancel()
	var (
		putErr error
		early  bool
	)
	waitFor(t, "the cancelled Put to return or wait", func() bool {
		select {
		case putErr = <-returned:
			early = true
			return true
		default:
			return postgres.GroupLeft(f.s) == 1
		}
	})
	if early {
		t.Errorf("the Put returned (%v) while its group's statement was being sent", putErr)
		if err := f.s.DeleteThread(f.ctx, "zed"); err != nil {
			t.Fatal(err)
		}
		unlock()
		wg.Wait()
	} else {
		unlock()
		putErr = <-returned
		wg.Wait()
		if !errors.Is(putErr, context.Canceled) || !strings.Contains(putErr.Error(), "was saved") {
			t.Errorf("cancelled Put: %v; want context.Canceled, saying the checkpoint was saved", putErr)
		}
		snap, err := f.s.Get(f.ctx, "zed", "")
		if err != nil {
			t.Fatal(err)
		}
		if d := snap.Channels["n"].Deltas; snap.Step != 1 || len(d) != 1 || string(d[0]) != `["zed"]` {
			t.Errorf("thread zed: step %d, deltas %q; want step 1 with the delta given", snap.Step, d)
		}
		if err := f.s.DeleteThread(f.ctx, "zed"); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "the group to end", func() bool { _, n := postgres.GroupWaiting(f.s, false); return n == 0 })
	if _, n := f.latest("zed"); n != 0 {
		t.Errorf("thread zed: %d checkpoints after its deletion; want none (the group put it back)", n)
	}
}

// TestGroupServerError: when PostgreSQL refuses a group's statement for
// any reason (here a lock timeout on one thread's rows, SQLSTATE 55P03,
// which a trigger raises), nothing was saved and every Put is sent again
// alone: the others are saved, that one fails alone.
func TestGroupServerError(t *testing.T) {
	f := newGroupFixture(t)
	schema := pgx.Identifier{f.schema}.Sanitize()
	if _, err := f.pool.Exec(f.ctx, `CREATE FUNCTION `+schema+`.refuse() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF NEW.thread_id = 'refused' THEN
		RAISE EXCEPTION 'could not obtain lock on row' USING ERRCODE = 'lock_not_available';
	END IF;
	RETURN NEW;
END $$;
CREATE TRIGGER refuse BEFORE INSERT ON `+schema+`.agentgraph_checkpoints FOR EACH ROW EXECUTE FUNCTION `+schema+`.refuse()`); err != nil {
		t.Fatal(err)
	}
	threads := []string{"a", "b", "refused"}
	release := f.occupy(false)
	var wg sync.WaitGroup
	errs := make([]error, len(threads))
	for i, th := range threads {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, errs[i] = f.put(f.ctx, f.s, false, th, "", 1)
		}()
	}
	waitFor(t, "the Puts to wait", func() bool { n, _ := postgres.GroupWaiting(f.s, false); return n == len(threads) })
	f.tr.Take()
	release()
	wg.Wait()
	if got := f.tr.Take(); got.SQL[firstSix(postgres.GroupSQL(f.s))] != 1 {
		t.Errorf("the group's statement sent %d times; want once. %s", got.SQL[firstSix(postgres.GroupSQL(f.s))], got)
	}
	var pe *pgconn.PgError
	if !errors.As(errs[2], &pe) || pe.Code != "55P03" {
		t.Errorf("Put refused by the server: %v; want SQLSTATE 55P03", errs[2])
	}
	for i, th := range threads[:2] {
		if errs[i] != nil {
			t.Errorf("Put on %s: %v; want it saved (sent again alone)", th, errs[i])
		}
		if _, n := f.latest(th); n != 1 {
			t.Errorf("thread %s: %d checkpoints; want 1", th, n)
		}
	}
}

// TestGroupStuck: a Put waiting on its thread's row lock (held by
// another transaction for as long as it likes) holds no Put of other
// threads behind it.
func TestGroupStuck(t *testing.T) {
	for _, lazy := range []bool{false, true} {
		t.Run(fmt.Sprintf("lazy=%v", lazy), func(t *testing.T) {
			f := newGroupFixture(t)
			stuck, err := f.put(f.ctx, f.s, lazy, "stuck", "", 1)
			if err != nil {
				t.Fatal(err)
			}
			unlock := f.hold("stuck")
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				if _, err := f.put(f.ctx, f.s, lazy, "stuck", stuck.ID, 2); err != nil {
					t.Error(err)
				}
			}()
			waitFor(t, "the stuck Put to be sent", func() bool { _, n := postgres.GroupWaiting(f.s, lazy); return n == 1 })
			const n = 10
			var (
				mu   sync.Mutex
				done int
			)
			for i := range n {
				wg.Add(1)
				go func() {
					defer wg.Done()
					th, prev := fmt.Sprintf("t%d", i), ""
					for step := range 3 {
						cp, err := f.put(f.ctx, f.s, lazy, th, prev, step+1)
						if err != nil {
							t.Errorf("Put on %s: %v", th, err)
							return
						}
						prev = cp.ID
					}
					mu.Lock()
					done++
					mu.Unlock()
				}()
			}
			waitFor(t, "the other threads' Puts while one is stuck", func() bool { mu.Lock(); defer mu.Unlock(); return done == n })
			unlock()
			wg.Wait()
		})
	}
}

// panicContext panics when a Put reads whether it ended, as a caller's
// code may (the caller recovers, as net/http does).
type panicContext struct{ context.Context }

func (panicContext) Done() <-chan struct{} { panic("panicContext.Done") }

// TestGroupPanic: a Put sent alone whose sending panics does not leave
// the group believing it is still being sent: later Puts are sent.
func TestGroupPanic(t *testing.T) {
	f := newGroupFixture(t)
	for i := range postgres.GroupSlots + 1 {
		func() {
			defer func() {
				if recover() == nil {
					t.Fatal("Put with a panicking context did not panic")
				}
			}()
			_, _ = f.put(panicContext{f.ctx}, f.s, false, fmt.Sprintf("p%d", i), "", 1)
		}()
	}
	if _, n := postgres.GroupWaiting(f.s, false); n != 0 {
		t.Errorf("%d Puts being sent after the panics; want none", n)
	}
	done := make(chan error, 1)
	go func() {
		_, err := f.put(f.ctx, f.s, false, "after", "", 1)
		done <- err
	}()
	var err error
	waitFor(t, "a Put after the panics", func() bool {
		select {
		case err = <-done:
			return true
		default:
			return false
		}
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestGroupAllLeft: when the contexts of every Put of a group end while
// its statement waits on a lock, the statement is cancelled: the Puts
// return, with errors that wrap the contexts', while the lock is held.
func TestGroupAllLeft(t *testing.T) {
	f := newGroupFixture(t)
	locked, err := f.put(f.ctx, f.s, false, "locked", "", 1)
	if err != nil {
		t.Fatal(err)
	}
	release := f.occupy(false)
	unlock := f.hold("locked")
	ctx, cancel := context.WithCancel(f.ctx)
	defer cancel()
	errs := make(chan error, 2)
	go func() {
		_, err := f.put(ctx, f.s, false, "locked", locked.ID, 2)
		errs <- err
	}()
	go func() {
		_, err := f.put(ctx, f.s, false, "other", "", 1)
		errs <- err
	}()
	waitFor(t, "2 Puts to wait", func() bool { n, _ := postgres.GroupWaiting(f.s, false); return n == 2 })
	release()
	waitFor(t, "the group to be taken", func() bool { n, _ := postgres.GroupWaiting(f.s, false); return n == 0 })
	cancel()
	var got []error
	waitFor(t, "the Puts to return while the lock is held", func() bool {
		select {
		case err := <-errs:
			got = append(got, err)
		default:
		}
		return len(got) == 2
	})
	unlock()
	for _, err := range got {
		if !errors.Is(err, context.Canceled) {
			t.Errorf("Put of a cancelled group: %v; want context.Canceled", err)
		}
	}
	waitFor(t, "the group to end", func() bool { _, n := postgres.GroupWaiting(f.s, false); return n == 0 })
}
