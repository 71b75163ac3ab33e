package postgres_test

// Tests of several server instances on one PostgreSQL: each instance is a
// child process (this test binary run again with instanceEnv set), so that
// one can be killed with SIGKILL in the middle of a run.

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/exec"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	"github.com/agentgraph/agentgraph/graph"
	cppg "github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

const (
	instanceEnv = "AGENTSERVER_TEST_INSTANCE" // "schema|dsn": run as a server instance
	holdEnv     = "AGENTSERVER_TEST_HOLD"     // "1": node s1 waits until its run is cancelled
	// pprofEnv, set to "1", serves net/http/pprof under /debug/pprof/ on
	// each instance's address, to profile an instance during the
	// benchmark (go tool pprof http://ADDR/debug/pprof/profile?seconds=10).
	pprofEnv = "AGENTSERVER_TEST_PPROF"
	// syncCommitEnv, when set, is the synchronous_commit setting of each
	// instance's pool connections ("off" to measure commits that do not
	// wait for the WAL flush; see the package doc).
	syncCommitEnv = "AGENTSERVER_TEST_SYNCHRONOUS_COMMIT"
	// sweepEnv and heartbeatEnv, when set, are each instance's
	// Config.SweepInterval and Config.Heartbeat (time.ParseDuration), in
	// place of 100 ms and 200 ms: a measurement of PostgreSQL's
	// instructions per run under callgrind, where a run takes seconds,
	// sets them long so that the sweeps' and renewals' cost, which grows
	// with time rather than with runs, does not swamp the runs'.
	sweepEnv     = "AGENTSERVER_TEST_SWEEP"
	heartbeatEnv = "AGENTSERVER_TEST_HEARTBEAT"
)

// steps is the state of the test graph: s0 -> s1 -> s2 -> s3, each node
// appending its name.
type steps struct {
	Log []string `json:"log"`
}

var stepsLog = graph.Append(func(s *steps) *[]string { return &s.Log })

// runInstance serves the test graph until the process is killed or
// interrupted. It prints the address it listens on.
func runInstance(target string) {
	schema, dsn, _ := strings.Cut(target, "|")
	ctx := context.Background()
	fail := func(err error) {
		fmt.Fprintln(os.Stderr, "instance:", err)
		os.Exit(2)
	}
	pcfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		fail(err)
	}
	pcfg.MaxConns = 16
	if v := os.Getenv(syncCommitEnv); v != "" {
		pcfg.ConnConfig.RuntimeParams["synchronous_commit"] = v
	}
	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
	if err != nil {
		fail(err)
	}
	// The checkpoint saver below shares the pool, and its saves do not
	// wait for their WAL flush: each run's end, which waits for its own,
	// flushes them (see "Commit durability" in the package doc). The
	// example server (examples/agentserver) is configured the same way.
	st, err := postgres.New(ctx, postgres.Config{Pool: pool, Schema: schema, SharedCheckpoints: true})
	if err != nil {
		fail(err)
	}
	saver, err := cppg.New(ctx, cppg.Config{Pool: pool, Schema: schema, AsyncCommit: true})
	if err != nil {
		fail(err)
	}
	sweep, heartbeat, lease := 100*time.Millisecond, 200*time.Millisecond, 10*time.Second
	for _, e := range []struct {
		env string
		d   *time.Duration
	}{{sweepEnv, &sweep}, {heartbeatEnv, &heartbeat}} {
		if v := os.Getenv(e.env); v != "" {
			if *e.d, err = time.ParseDuration(v); err != nil {
				fail(fmt.Errorf("%s=%q: %w; give a duration such as 5s", e.env, v, err))
			}
		}
	}
	lease = max(lease, 3*heartbeat)
	srv, err := server.New(server.Config{Store: st, Checkpointer: saver, Lease: lease, SweepInterval: sweep,
		Heartbeat: heartbeat, Worker: fmt.Sprintf("pid%d", os.Getpid())})
	if err != nil {
		fail(err)
	}
	sideEffects := pgx.Identifier{schema, "side_effects"}.Sanitize()
	hold := os.Getenv(holdEnv) == "1"
	g := graph.New[steps]()
	for i := range 4 {
		name := fmt.Sprintf("s%d", i)
		g.AddNode(name, func(ctx context.Context, s steps) (graph.Update[steps], error) {
			cfg := graph.ConfigFrom(ctx)
			if _, err := pool.Exec(ctx, `INSERT INTO `+sideEffects+` (run_id, node, pid) VALUES ($1, $2, $3)`, cfg.RunID, name, os.Getpid()); err != nil {
				return graph.Update[steps]{}, err
			}
			if hold && name == "s1" {
				<-ctx.Done() // killed here, or cancelled
				return graph.Update[steps]{}, ctx.Err()
			}
			return stepsLog.Set([]string{name}), nil
		})
	}
	g.AddEdge(graph.START, "s0").AddEdge("s0", "s1").AddEdge("s1", "s2").AddEdge("s2", "s3").AddEdge("s3", graph.END)
	app, err := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		fail(err)
	}
	if err := server.Register(srv, "steps", app); err != nil {
		fail(err)
	}
	// The benchmark's graph (bench_test.go).
	tg := graph.New[greeting]()
	tg.AddNode("greet", func(ctx context.Context, s greeting) (graph.Update[greeting], error) {
		return greetingReply.Set("hi " + s.Name), nil
	})
	tg.AddEdge(graph.START, "greet").AddEdge("greet", graph.END)
	trivial, err := tg.Compile(graph.WithCheckpointer(srv.Checkpointer()))
	if err != nil {
		fail(err)
	}
	if err := server.Register(srv, "trivial", trivial); err != nil {
		fail(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		fail(err)
	}
	fmt.Printf("listening http://%s\n", ln.Addr())
	var h http.Handler = srv
	if os.Getenv(pprofEnv) == "1" {
		mux := http.NewServeMux()
		mux.HandleFunc("/debug/pprof/", pprof.Index)
		mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
		mux.Handle("/", srv)
		h = mux
	}
	hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	go hs.Serve(ln)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, os.Interrupt)
	<-sig
	hs.Close()
	srv.Close(ctx)
	os.Exit(0)
}

// cluster is a schema with the side-effect table, and the instances
// started on it.
type cluster struct {
	t      testing.TB
	pool   *pgxpool.Pool
	schema string
}

func newCluster(t testing.TB) *cluster {
	t.Helper()
	pool, schema := postgrestest.Schema(t, "agentserver_test_")
	// Create the tables once, before instances start together.
	st, err := postgres.New(t.Context(), postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	if _, err := cppg.New(t.Context(), cppg.Config{Pool: pool, Schema: schema}); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(t.Context(), `CREATE TABLE `+pgx.Identifier{schema, "side_effects"}.Sanitize()+` (id bigserial, run_id text NOT NULL, node text NOT NULL, pid int NOT NULL)`); err != nil {
		t.Fatal(err)
	}
	return &cluster{t: t, pool: pool, schema: schema}
}

// instance is a server process.
type instance struct {
	cmd *exec.Cmd
	URL string
}

// start starts an instance; hold makes its node s1 wait until cancelled.
func (c *cluster) start(hold bool) *instance {
	t := c.t
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), instanceEnv+"="+c.schema+"|"+postgrestest.DSN())
	if hold {
		cmd.Env = append(cmd.Env, holdEnv+"=1")
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	in := &instance{cmd: cmd}
	t.Cleanup(func() { in.kill() })
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("instance did not start: %v", err)
	}
	in.URL = strings.TrimSpace(strings.TrimPrefix(line, "listening "))
	go io.Copy(io.Discard, out)
	return in
}

// kill kills the instance with SIGKILL and waits for it.
func (in *instance) kill() {
	if in.cmd.ProcessState == nil {
		in.cmd.Process.Kill()
		in.cmd.Wait()
	}
}

// post sends a JSON body and decodes the 2xx answer into out.
func (in *instance) post(path, body string, out any) error {
	resp, err := http.Post(in.URL+path, "application/json", strings.NewReader(body))
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %d %s", path, resp.StatusCode, b)
	}
	if out != nil {
		if err := json.Unmarshal(b, out); err != nil {
			return fmt.Errorf("POST %s: %v in %s", path, err, b)
		}
	}
	return nil
}

// newRun creates a thread and starts a background run on it.
func (in *instance) newRun() (tid, rid string, err error) {
	var th struct {
		ID string `json:"thread_id"`
	}
	if err := in.post("/threads", `{}`, &th); err != nil {
		return "", "", err
	}
	var run struct {
		ID string `json:"run_id"`
	}
	err = in.post("/threads/"+th.ID+"/runs", `{"assistant_id":"steps","input":{"log":["in"]}}`, &run)
	return th.ID, run.ID, err
}

func (in *instance) mustRun(t *testing.T) (tid, rid string) {
	t.Helper()
	tid, rid, err := in.newRun()
	if err != nil {
		t.Fatal(err)
	}
	return tid, rid
}

type sseEvent struct {
	ID   int64
	Name string
	Data string
}

// join reads the run's stream from the start (Last-Event-ID -1) until it
// ends.
func (in *instance) join(ctx context.Context, tid, rid string) ([]sseEvent, error) {
	req, _ := http.NewRequestWithContext(ctx, "GET", in.URL+"/threads/"+tid+"/runs/"+rid+"/stream", nil)
	req.Header.Set("Last-Event-ID", "-1")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		b, _ := io.ReadAll(resp.Body)
		return nil, fmt.Errorf("join: %d %s", resp.StatusCode, b)
	}
	return scanEvents(resp.Body)
}

// scanEvents reads the SSE events of r until it ends.
func scanEvents(r io.Reader) ([]sseEvent, error) {
	var evs []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, "event: "):
			cur = sseEvent{ID: -1, Name: strings.TrimPrefix(line, "event: ")}
		case strings.HasPrefix(line, "data: "):
			cur.Data = strings.TrimPrefix(line, "data: ")
		case strings.HasPrefix(line, "id: "):
			cur.ID, _ = strconv.ParseInt(strings.TrimPrefix(line, "id: "), 10, 64)
		case line == "" && cur.Name != "":
			evs = append(evs, cur)
			cur = sseEvent{}
		}
	}
	return evs, sc.Err()
}

func (in *instance) run(t *testing.T, tid, rid string) (status string) {
	t.Helper()
	resp, err := http.Get(in.URL + "/threads/" + tid + "/runs/" + rid)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r struct {
		Status string `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&r); err != nil {
		t.Fatal(err)
	}
	return r.Status
}

// sideEffects returns the nodes each run executed, with the pids that
// executed them, in the order they were recorded.
func (c *cluster) sideEffects(t *testing.T) map[string][]string {
	rows, err := c.pool.Query(t.Context(), `SELECT run_id, node, pid FROM `+pgx.Identifier{c.schema, "side_effects"}.Sanitize()+` ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	out := map[string][]string{}
	for rows.Next() {
		var rid, node string
		var pid int
		if err := rows.Scan(&rid, &node, &pid); err != nil {
			t.Fatal(err)
		}
		out[rid] = append(out[rid], fmt.Sprintf("%s@%d", node, pid))
	}
	return out
}

// waitFor polls cond until it holds or a minute passes (a failure guard,
// not a timing assumption).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// checkStream checks that a joined stream holds every event of the run
// once, in order, from metadata to end.
func checkStream(t *testing.T, evs []sseEvent) {
	t.Helper()
	if len(evs) < 2 || evs[0].Name != "metadata" || evs[len(evs)-1].Name != "end" {
		t.Fatalf("stream: %+v; want metadata first and end last", evs)
	}
	for i, ev := range evs {
		if ev.ID != int64(i) {
			t.Fatalf("stream event %d has id %d; want ids 0, 1, 2... each once (stream %+v)", i, ev.ID, evs)
		}
	}
}

// TestInstanceKilledMidRun starts a run on instance A, whose node s1 never
// returns; joins the run's stream on instance B; kills A with SIGKILL once
// s1 started. B takes the run over when A's lease expires and finishes it
// from the checkpoint after s0: s0 ran once (on A), s1 on A and again on
// B, s2 and s3 once on B; the client joined on B got every event once, in
// order.
func TestInstanceKilledMidRun(t *testing.T) {
	c := newCluster(t)
	a := c.start(true)
	tid, rid := a.mustRun(t)
	// B starts once A executes the run, so that A's sweeper, not B's,
	// claims it.
	waitFor(t, "s1 to start on A", func() bool { return len(c.sideEffects(t)[rid]) == 2 })
	b := c.start(false)
	type joined struct {
		evs []sseEvent
		err error
	}
	done := make(chan joined, 1)
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	go func() {
		evs, err := b.join(ctx, tid, rid)
		done <- joined{evs, err}
	}()
	a.kill()
	j := <-done
	if j.err != nil {
		t.Fatal(j.err)
	}
	checkStream(t, j.evs)
	// The end event is written just before the run's status.
	waitFor(t, "the run to succeed", func() bool { return b.run(t, tid, rid) == server.RunSuccess })
	apid, bpid := a.cmd.Process.Pid, b.cmd.Process.Pid
	want := []string{fmt.Sprintf("s0@%d", apid), fmt.Sprintf("s1@%d", apid), fmt.Sprintf("s1@%d", bpid), fmt.Sprintf("s2@%d", bpid), fmt.Sprintf("s3@%d", bpid)}
	if got := c.sideEffects(t)[rid]; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Fatalf("side effects %v; want %v (s0 not run again: B resumed from its checkpoint)", got, want)
	}
	var st struct {
		Values steps `json:"values"`
	}
	resp, err := http.Get(b.URL + "/threads/" + tid + "/state")
	if err != nil {
		t.Fatal(err)
	}
	json.NewDecoder(resp.Body).Decode(&st)
	resp.Body.Close()
	if got := strings.Join(st.Values.Log, " "); got != "in s0 s1 s2 s3" {
		t.Fatalf("final state %q; want in s0 s1 s2 s3", got)
	}
	// Both attempts are in the log: a metadata event for each.
	attempts := 0
	for _, ev := range j.evs {
		if ev.Name == "metadata" {
			attempts++
		}
	}
	if attempts != 2 {
		t.Fatalf("%d metadata events; want one per attempt (2)", attempts)
	}
}

// TestCancelFromAnotherInstance cancels, through instance B, a run that
// executes on A: A stops it, and the run ends interrupted.
func TestCancelFromAnotherInstance(t *testing.T) {
	c := newCluster(t)
	a := c.start(true)
	tid, rid := a.mustRun(t)
	waitFor(t, "s1 to start on A", func() bool { return len(c.sideEffects(t)[rid]) == 2 })
	b := c.start(false)
	resp, err := http.Post(b.URL+"/threads/"+tid+"/runs/"+rid+"/cancel?wait=1", "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNoContent {
		t.Fatalf("cancel on B: %d; want 204 once the run ended", resp.StatusCode)
	}
	if got := a.run(t, tid, rid); got != server.RunInterrupted {
		t.Fatalf("run status on A: %s; want interrupted", got)
	}
	if fx := c.sideEffects(t)[rid]; len(fx) != 2 {
		t.Fatalf("side effects %v; want s0 and s1 only", fx)
	}
}

// TestManyRunsTwoInstances starts 100 runs, each on its own thread,
// alternately through A and B, and joins each on the other instance: every
// run succeeds, each node ran exactly once per run, and every stream holds
// every event once, in order.
func TestManyRunsTwoInstances(t *testing.T) {
	c := newCluster(t)
	a, b := c.start(false), c.start(false)
	const n = 100
	type result struct {
		rid string
		evs []sseEvent
		err error
	}
	results := make(chan result, n)
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for i := range n {
		from, to := a, b
		if i%2 == 1 {
			from, to = b, a
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			tid, rid, err := from.newRun()
			if err != nil {
				results <- result{err: err}
				return
			}
			evs, err := to.join(ctx, tid, rid)
			results <- result{rid, evs, err}
		}()
	}
	wg.Wait()
	close(results)
	rids := map[string]bool{}
	for r := range results {
		if r.err != nil {
			t.Fatal(r.err)
		}
		checkStream(t, r.evs)
		rids[r.rid] = true
	}
	fx := c.sideEffects(t)
	if len(rids) != n || len(fx) != n {
		t.Fatalf("%d runs joined, %d with side effects; want %d", len(rids), len(fx), n)
	}
	for rid, nodes := range fx {
		var names []string
		for _, x := range nodes {
			name, _, _ := strings.Cut(x, "@")
			names = append(names, name)
		}
		if !rids[rid] || strings.Join(names, " ") != "s0 s1 s2 s3" {
			t.Fatalf("run %s executed %v; want s0 s1 s2 s3 once each", rid, nodes)
		}
	}
}

func jsonDecode(resp *http.Response, out any) error {
	defer resp.Body.Close()
	if resp.StatusCode/100 != 2 {
		b, _ := io.ReadAll(resp.Body)
		return fmt.Errorf("%s: %s", resp.Status, b)
	}
	return json.NewDecoder(resp.Body).Decode(out)
}
