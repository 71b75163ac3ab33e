package postgres_test

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// leaseFixture saves thread tid with one run (tid-r) running under the
// worker w1, attempt 1, whose lease expired, and returns the run.
func leaseFixture(t *testing.T, st *postgres.Store, tid string) *server.Run {
	t.Helper()
	at := time.Now().UTC().Add(-time.Hour)
	if err := st.CreateThread(t.Context(), &server.Thread{ID: tid, Owner: "o", CreatedAt: at, UpdatedAt: at, Status: server.ThreadBusy, GraphID: "g",
		Values: json.RawMessage(`{"v":0}`)}); err != nil {
		t.Fatal(err)
	}
	r := &server.Run{ID: tid + "-r", ThreadID: tid, AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: server.RunRunning,
		Owner: "o", Worker: "w1", LeaseUntil: at.Add(time.Minute), Attempt: 1, Started: true}
	if err := st.CreateRun(t.Context(), r); err != nil {
		t.Fatal(err)
	}
	return r
}

// leaseEnd is the end of run r by worker and attempt.
func leaseEnd(r *server.Run, worker string, attempt int, values string) server.RunEnd {
	at := time.Now().UTC()
	return server.RunEnd{RunID: r.ID, ThreadID: r.ThreadID, Refresh: server.ThreadRefresh{State: true, Values: json.RawMessage(values),
		Exclude: []string{r.ID}, At: at}, EventName: "end", EventData: json.RawMessage(`{"by":"` + worker + `"}`),
		Status: server.RunSuccess, At: at, Worker: worker, Attempt: attempt}
}

// TestFinishRunLeaseLost: a worker whose lease expired and whose run
// another instance took over (a second Store's ClaimDue, attempt 2)
// cannot record the run's end: FinishRunLocked and FinishClaimNextLocked
// return ErrLeaseLost and write nothing (the run stays the new owner's,
// the thread keeps its values, the run's log gets no event), for the old
// worker and for the new worker's name with the old attempt. The new
// owner's end is recorded.
func TestFinishRunLeaseLost(t *testing.T) {
	stores, _, _ := twoStores(t)
	r := leaseFixture(t, stores[0], "t1")
	taken, err := stores[1].ClaimDue(t.Context(), "w2", time.Hour)
	if err != nil || taken == nil || taken.ID != r.ID || taken.Attempt != 2 || taken.Worker != "w2" {
		t.Fatalf("ClaimDue of the expired run: %+v, %v; want %s, attempt 2, worker w2", taken, err, r.ID)
	}
	for _, stale := range []struct {
		worker  string
		attempt int
	}{{"w1", 1}, {"w2", 1}} {
		e := leaseEnd(r, stale.worker, stale.attempt, `{"v":"stale"}`)
		if _, _, err := stores[0].FinishRunLocked(t.Context(), e); !errors.Is(err, server.ErrLeaseLost) {
			t.Errorf("FinishRunLocked by %s attempt %d after the takeover: %v; want ErrLeaseLost", stale.worker, stale.attempt, err)
		}
		if _, _, _, _, err := stores[0].FinishClaimNextLocked(t.Context(), e, stale.worker, time.Hour); !errors.Is(err, server.ErrLeaseLost) {
			t.Errorf("FinishClaimNextLocked by %s attempt %d after the takeover: %v; want ErrLeaseLost", stale.worker, stale.attempt, err)
		}
	}
	got, err := stores[0].Run(t.Context(), r.ID)
	if err != nil || got.Status != server.RunRunning || got.Worker != "w2" || got.Attempt != 2 {
		t.Fatalf("run after the stale ends: %+v, %v; want running under w2, attempt 2", got, err)
	}
	th, err := stores[0].Thread(t.Context(), "t1")
	if err != nil || string(th.Values) != `{"v":0}` || th.Status != server.ThreadBusy {
		t.Fatalf("thread after the stale ends: %+v, %v; want busy with its values unchanged", th, err)
	}
	if evs, _, err := stores[0].Events(t.Context(), r.ID, -1, 0); err != nil || len(evs) != 0 {
		t.Fatalf("events after the stale ends: %+v, %v; want none", evs, err)
	}
	_, ev, err := stores[1].FinishRunLocked(t.Context(), leaseEnd(r, "w2", 2, `{"v":2}`))
	ended, _ := stores[0].Run(t.Context(), r.ID)
	if err != nil || ended == nil || ended.Status != server.RunSuccess || ev.Name != "end" {
		t.Fatalf("FinishRunLocked by the new owner: %+v, %+v, %v; want the run ended", ended, ev, err)
	}
	th, err = stores[0].Thread(t.Context(), "t1")
	if err != nil || string(th.Values) != `{"v":2}` || th.Status != server.ThreadIdle {
		t.Fatalf("thread after the new owner's end: %+v, %v; want idle with the new owner's values", th, err)
	}
	// An end that names no worker is recorded as before (the run ended
	// is ended again: no ownership is asked for).
	if _, _, err := stores[0].FinishRunLocked(t.Context(), leaseEnd(r, "", 0, `{"v":3}`)); err != nil {
		t.Fatalf("FinishRunLocked without a worker: %v; want it recorded", err)
	}
}

// replyCutter is a TCP proxy to PostgreSQL. Armed, it passes what the
// client sends but holds what the server replies, and when the server
// has completed at least minCommands statements, or a COMMIT, and is
// ready for the next query (their transaction ended: committed), it
// closes both connections: the client never hears that its statements
// committed. Replies with fewer statements (a ping, a statement's
// preparation, a statement of an explicit transaction before its
// COMMIT) go through. With single set, one statement is enough.
// onCut, if set before the cut, is called as the proxy cuts (before it
// closes the connections). cutAll closes every connection at once.
// With dropCancels set, the proxy closes a connection that opens with
// a cancel request without passing it on (pgx sends one as it closes a
// broken connection: a network that lost the connection may lose that
// too).
type replyCutter struct {
	ln          net.Listener
	target      string
	minCommands int
	armed       atomic.Bool
	single      atomic.Bool
	cuts        atomic.Int32
	onCut       func()
	dropCancels atomic.Bool
	wg          sync.WaitGroup
	mu          sync.Mutex
	open        []net.Conn
}

// cutAll closes every connection the proxy has passed, both sides.
func (p *replyCutter) cutAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.open {
		c.Close()
	}
	p.open = nil
}

func newReplyCutter(t *testing.T, target string, minCommands int) *replyCutter {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &replyCutter{ln: ln, target: target, minCommands: minCommands}
	p.wg.Add(1)
	go p.serve()
	t.Cleanup(func() { ln.Close(); p.wg.Wait() })
	return p
}

func (p *replyCutter) serve() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		s, err := net.Dial("tcp", p.target)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.open = append(p.open, c, s)
		p.mu.Unlock()
		p.wg.Add(2)
		go func() {
			defer p.wg.Done()
			// A startup packet's length and code: a cancel request's
			// are 16 and 80877102.
			var hdr [8]byte
			if _, err := io.ReadFull(c, hdr[:]); err != nil {
				s.Close()
				return
			}
			if p.dropCancels.Load() && binary.BigEndian.Uint32(hdr[:4]) == 16 && binary.BigEndian.Uint32(hdr[4:]) == 80877102 {
				c.Close()
				s.Close()
				return
			}
			if _, err := s.Write(hdr[:]); err != nil {
				s.Close()
				return
			}
			io.Copy(s, c)
			s.Close()
		}()
		go func() {
			defer p.wg.Done()
			p.replies(c, s)
			c.Close()
			s.Close()
		}()
	}
}

// replies copies the server's bytes to the client, holding them while
// armed as the type says.
func (p *replyCutter) replies(c, s net.Conn) {
	buf := make([]byte, 32<<10)
	var held []byte
	commands, committed := 0, false
	for {
		n, err := s.Read(buf)
		if err != nil {
			return
		}
		if !p.armed.Load() && len(held) == 0 {
			if _, err := c.Write(buf[:n]); err != nil {
				return
			}
			continue
		}
		held = append(held, buf[:n]...)
		off := 0
		for len(held)-off >= 5 {
			typ, size := held[off], int(binary.BigEndian.Uint32(held[off+1:]))
			if len(held)-off < 1+size {
				break
			}
			msg := held[off+5 : off+1+size]
			off += 1 + size
			switch typ {
			case 'C':
				commands++
				committed = committed || string(msg) == "COMMIT\x00"
			case 'Z':
				if (commands >= p.minCommands || committed || commands > 0 && p.single.Load()) && p.armed.CompareAndSwap(true, false) {
					p.cuts.Add(1)
					if p.onCut != nil {
						p.onCut()
					}
					return
				}
				if _, err := c.Write(held[:off]); err != nil {
					return
				}
				held, off, commands, committed = held[off:], 0, 0, false
			}
		}
	}
}

// TestFinishLostReplyClaimsNext: when the batch that ends a run and
// claims the thread's next run commits but its reply is lost (the
// connection cut after the commit), FinishClaimNextLocked reads back
// what it committed and returns the run its claim took, for its worker
// to execute now, instead of an error that left that run waiting for its
// lease (Config.Lease) to expire. Without a claim, FinishRunLocked
// returns the run as ended.
func TestFinishLostReplyClaimsNext(t *testing.T) {
	direct, st, cutter := cutStores(t)

	pending, running := foldFixture(t, direct, "t1")
	cutter.armed.Store(true)
	e := leaseEnd(running, "w", 1, `{"v":1}`)
	active, ev, next, th, err := st.FinishClaimNextLocked(t.Context(), e, "w", time.Hour)
	if n := cutter.cuts.Load(); n != 1 {
		t.Fatalf("the proxy cut %d replies; want 1", n)
	}
	if err != nil {
		t.Fatalf("FinishClaimNextLocked with its reply lost: %v; want what it committed", err)
	}
	ended, _ := direct.Run(t.Context(), running.ID)
	if ended == nil || ended.ID != running.ID || ended.Status != server.RunSuccess {
		t.Errorf("run ended: %+v; want %s, success", ended, running.ID)
	}
	if next == nil || next.ID != pending.ID || next.Status != server.RunRunning || next.Worker != "w" || next.Attempt != 1 || th == nil || th.ID != "t1" {
		t.Errorf("run claimed next: %+v, thread %+v; want %s running under w, attempt 1, with its thread", next, th, pending.ID)
	}
	if active != 1 || ev.Name != "end" || ev.ID != 0 {
		t.Errorf("active %d, event %+v; want 1, the end event at 0", active, ev)
	}
	// Without a claim: the run's end, read back.
	r2 := leaseFixture(t, direct, "t2")
	cutter.armed.Store(true)
	_, ev, err = st.FinishRunLocked(t.Context(), leaseEnd(r2, "w1", 1, `{"v":1}`))
	if n := cutter.cuts.Load(); n != 2 {
		t.Fatalf("the proxy cut %d replies; want 2", n)
	}
	ended, _ = direct.Run(t.Context(), r2.ID)
	if err != nil || ended == nil || ended.ID != r2.ID || ended.Status != server.RunSuccess || ev.Name != "end" {
		t.Fatalf("FinishRunLocked with its reply lost: %+v, %+v, %v; want the run ended", ended, ev, err)
	}
}

// sqlTracer records the statements a pool's queries send.
type sqlTracer struct {
	mu   sync.Mutex
	sent []string
}

func (tr *sqlTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	tr.mu.Lock()
	tr.sent = append(tr.sent, data.SQL)
	tr.mu.Unlock()
	return ctx
}

func (tr *sqlTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// asyncCommits counts the statements sent that turn synchronous_commit
// off for their transaction.
func (tr *sqlTracer) asyncCommits() int {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	n := 0
	for _, q := range tr.sent {
		if strings.Contains(q, "set_config('synchronous_commit', 'off', true)") {
			n++
		}
	}
	return n
}

// TestSharedCheckpointsStartAsync: with Config.SharedCheckpoints a run's
// start (StartRunEvent) is sent as a statement that turns
// synchronous_commit off for its own transaction, and records the start
// and the event as without it; without SharedCheckpoints no statement
// does. (Whether PostgreSQL then skipped the flush is measured, not
// tested: pg_stat_wal's fsyncs per op in BenchmarkStoreRunPath.)
func TestSharedCheckpointsStartAsync(t *testing.T) {
	_, schema := postgrestest.Schema(t, "agentserver_test_")
	for _, shared := range []bool{false, true} {
		tr := &sqlTracer{}
		// One connection: the SHOW below reads the start's connection.
		pool := postgrestest.TracedPool(t, tr, func(c *pgxpool.Config) { c.MaxConns = 1 })
		st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema, SharedCheckpoints: shared})
		if err != nil {
			t.Fatal(err)
		}
		tid := "t-" + strconv.FormatBool(shared)
		r := leaseFixture(t, st, tid)
		if _, err := st.UpdateRun(t.Context(), r.ID, func(r *server.Run) error { r.Started = false; return nil }); err != nil {
			t.Fatal(err)
		}
		before := tr.asyncCommits()
		_, ev, err := st.StartRunEvent(t.Context(), r.ID, "cp1", "metadata", json.RawMessage(`{}`), 10)
		got, _ := st.Run(t.Context(), r.ID)
		if err != nil || got == nil || !got.Started || got.Start != "cp1" || ev.ID != 0 || ev.Name != "metadata" {
			t.Fatalf("SharedCheckpoints %v: StartRunEvent: %+v, %+v, %v; want the run started at cp1, event 0", shared, got, ev, err)
		}
		want := 0
		if shared {
			want = 1
		}
		if n := tr.asyncCommits() - before; n != want {
			t.Errorf("SharedCheckpoints %v: %d statements turned synchronous_commit off; want %d", shared, n, want)
		}
		var setting string
		if err := pool.QueryRow(t.Context(), "SHOW synchronous_commit").Scan(&setting); err != nil || setting != "on" {
			t.Errorf("SharedCheckpoints %v: synchronous_commit after the start: %q, %v; want on (the setting is the start's transaction's alone)", shared, setting, err)
		}
		st.Close()
	}
}

// TestFinishClaimNextLeaseLostReturnsClaim: a worker (w1) whose run was
// taken over and ended by another worker (w2) gets ErrLeaseLost from
// FinishClaimNextLocked, and with it the thread's pending run that the
// batch's claim took for w1: the run is w1's to execute now, not left
// running under w1 with nobody executing it until its lease expires.
func TestFinishClaimNextLeaseLostReturnsClaim(t *testing.T) {
	stores, _, _ := twoStores(t)
	r := leaseFixture(t, stores[0], "t1")
	taken, err := stores[1].ClaimDue(t.Context(), "w2", time.Hour)
	if err != nil || taken == nil || taken.ID != r.ID || taken.Attempt != 2 {
		t.Fatalf("ClaimDue of the expired run: %+v, %v; want %s, attempt 2", taken, err, r.ID)
	}
	if _, _, err := stores[1].FinishRunLocked(t.Context(), leaseEnd(r, "w2", 2, `{"v":2}`)); err != nil {
		t.Fatalf("FinishRunLocked by the new owner: %v; want the run ended", err)
	}
	at := time.Now().UTC().Add(-time.Minute)
	pending := &server.Run{ID: "t1-p", ThreadID: "t1", AssistantID: "a", CreatedAt: at, UpdatedAt: at, Status: server.RunPending, Owner: "o"}
	if err := stores[0].CreateRun(t.Context(), pending); err != nil {
		t.Fatal(err)
	}
	_, _, next, th, err := stores[0].FinishClaimNextLocked(t.Context(), leaseEnd(r, "w1", 1, `{"v":"stale"}`), "w1", time.Hour)
	if !errors.Is(err, server.ErrLeaseLost) {
		t.Fatalf("FinishClaimNextLocked by the stale worker: %v; want ErrLeaseLost", err)
	}
	got, gerr := stores[0].Run(t.Context(), pending.ID)
	if gerr != nil {
		t.Fatal(gerr)
	}
	if got.Status == server.RunRunning && (next == nil || next.ID != pending.ID || next.Worker != "w1" || th == nil || th.ID != "t1") {
		t.Fatalf("the pending run was claimed for w1 (%+v) but not returned: next %+v, thread %+v", got, next, th)
	}
	if next != nil && (next.ID != pending.ID || next.Status != server.RunRunning || next.Worker != "w1") {
		t.Fatalf("run returned with ErrLeaseLost: %+v; want %s running under w1", next, pending.ID)
	}
	if th, err := stores[0].Thread(t.Context(), "t1"); err != nil || string(th.Values) != `{"v":2}` {
		t.Fatalf("thread after the stale end: %+v, %v; want the new owner's values", th, err)
	}
}

// TestFinishLostReplyLateReadBack: when the reply of the batch that ended
// a run and claimed the next is lost, and the read-back comes after the
// claimed run's lease expired (here a lease of a microsecond), the run
// is not adopted (a sweeper may claim it at any moment: it would run
// twice); it stays claimable. The run's end is still returned.
func TestFinishLostReplyLateReadBack(t *testing.T) {
	direct, st, cutter := cutStores(t)

	pending, running := foldFixture(t, direct, "t1")
	cutter.armed.Store(true)
	_, _, next, _, err := st.FinishClaimNextLocked(t.Context(), leaseEnd(running, "w", 1, `{"v":1}`), "w", time.Microsecond)
	if n := cutter.cuts.Load(); n != 1 {
		t.Fatalf("the proxy cut %d replies; want 1", n)
	}
	ended, _ := direct.Run(t.Context(), running.ID)
	if err != nil || ended == nil || ended.ID != running.ID || ended.Status != server.RunSuccess {
		t.Fatalf("FinishClaimNextLocked with its reply lost: %+v, %v; want the run ended", ended, err)
	}
	if next != nil {
		t.Fatalf("run adopted by the late read-back: %+v; want none (its lease expired before the read)", next)
	}
	due, err := direct.ClaimDue(t.Context(), "sweeper", time.Hour)
	if err != nil || due == nil || due.ID != pending.ID || due.Attempt != 2 {
		t.Fatalf("ClaimDue after the late read-back: %+v, %v; want %s claimed again, attempt 2", due, err, pending.ID)
	}
}

// cutStores returns two stores on one new schema: direct, on a pool of
// its own, and st, whose one connection goes through a replyCutter that,
// once armed, cuts the connection after a reply's commit (see
// newReplyCutter).
func cutStores(t *testing.T) (*postgres.Store, *postgres.Store, *replyCutter) {
	t.Helper()
	direct, st, cutter, _, _ := cutStoresPool(t)
	return direct, st, cutter
}

// cutStoresPool is cutStores that also returns direct's pool and the
// schema.
func cutStoresPool(t *testing.T) (*postgres.Store, *postgres.Store, *replyCutter, *pgxpool.Pool, string) {
	t.Helper()
	pool, schema := postgrestest.Schema(t, "agentserver_test_")
	direct, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(direct.Close)
	pcfg, err := pgxpool.ParseConfig(postgrestest.DSN())
	if err != nil {
		t.Fatal(err)
	}
	cutter := newReplyCutter(t, net.JoinHostPort(pcfg.ConnConfig.Host, strconv.Itoa(int(pcfg.ConnConfig.Port))), 2)
	host, port, _ := net.SplitHostPort(cutter.ln.Addr().String())
	p, _ := strconv.Atoi(port)
	pcfg.ConnConfig.Host, pcfg.ConnConfig.Port, pcfg.MaxConns = host, uint16(p), 1
	proxied, err := pgxpool.NewWithConfig(t.Context(), pcfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(proxied.Close)
	st, err := postgres.New(t.Context(), postgres.Config{Pool: proxied, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(st.Close)
	return direct, st, cutter, pool, schema
}
