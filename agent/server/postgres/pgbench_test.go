package postgres_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/agent/server"
	"github.com/agentgraph/agentgraph/agent/server/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
)

// TestWritePGBenchScript writes, when AGENTSERVER_PGBENCH_SCRIPT names a
// file, a pgbench script that replays the Store statements of one run as
// BenchmarkStoreRunPath makes them (the creation counting the owner's
// active runs, the start with its metadata event, the values event and
// the end), each pgx batch as a pgbench pipeline (one implicit
// transaction, as pgx sends it), and beside it the file's name with
// ".args" added: the pgbench options (-D) that define the script's
// variables, one a line. The schema is AGENTSERVER_PGBENCH_SCHEMA
// (default "pgbench_run"), dropped and made again with the thread "t0",
// on the test server (AGENTGRAPH_TEST_POSTGRES). Each pgbench
// transaction is one run of its own id (:n, random). Replay it on a
// private cluster with the backend under callgrind:
//
//	mapfile -t args < script.args
//	pgbench -n -M prepared -c 1 -t 140 -f script "${args[@]}" ...
//
// and take (I(140) − I(40)) / 100 of the pgbench backend as the
// PostgreSQL instructions per run. Without the variable the script goes
// to a temporary file in a schema of its own, dropped at the end; either
// way, where pgbench is on PATH the test replays the script three times
// and fails if pgbench does.
func TestWritePGBenchScript(t *testing.T) {
	out := os.Getenv("AGENTSERVER_PGBENCH_SCRIPT")
	schema := os.Getenv("AGENTSERVER_PGBENCH_SCHEMA")
	ctx := t.Context()
	var admin *pgxpool.Pool
	if out == "" {
		out = filepath.Join(t.TempDir(), "run.pgbench")
		admin, schema = postgrestest.Schema(t, "pgbench_")
	} else {
		if schema == "" {
			schema = "pgbench_run"
		}
		var err error
		if admin, err = pgxpool.New(ctx, postgrestest.DSN()); err != nil {
			t.Fatal(err)
		}
		defer admin.Close()
		if _, err := admin.Exec(ctx, "DROP SCHEMA IF EXISTS "+pgx.Identifier{schema}.Sanitize()+" CASCADE"); err != nil {
			t.Fatal(err)
		}
	}
	rec := &scriptRecorder{}
	pool := postgrestest.TracedPool(t, rec, func(c *pgxpool.Config) { c.MaxConns = 2 })
	st, err := postgres.New(ctx, postgres.Config{Pool: pool, Schema: schema, SharedCheckpoints: true})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now := time.Now().UTC().Truncate(time.Microsecond)
	if err := st.CreateThread(ctx, &server.Thread{ID: "t0", Owner: "o", Status: server.ThreadIdle, CreatedAt: now, UpdatedAt: now}); err != nil {
		t.Fatal(err)
	}
	const rid = "pgbench-run-id"
	oneRun := func(record bool) {
		rec.on(record)
		defer rec.on(false)
		run := &server.Run{ID: rid, ThreadID: "t0", AssistantID: "trivial", CreatedAt: now, UpdatedAt: now, Status: server.RunRunning,
			Kwargs: json.RawMessage(`{"assistant_id":"trivial"}`), MultitaskStrategy: "reject", Owner: "o", Worker: "w", Attempt: 1}
		counted := func(*server.Thread, []*server.Run, int) (*server.Run, string, map[string]any, error) {
			return run, "trivial", map[string]any{"graph_id": "trivial"}, nil
		}
		if _, err := any(st).(runCounter).CreateRunClaimedCountActive(ctx, "t0", "o", time.Minute, counted); err != nil {
			t.Fatal(err)
		}
		meta := json.RawMessage(`{"run_id":"r","thread_id":"t","attempt":1}`)
		_, ev, err := any(st).(runStarter).StartRunEvent(ctx, rid, "cp", "metadata", meta, 100)
		if err != nil {
			t.Fatal(err)
		}
		vals := json.RawMessage(`{"name":"x","reply":"hi x"}`)
		ev, err = st.AppendEventAfter(ctx, rid, 1, ev.ID, "values", vals, 100)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := st.FinishRunLocked(ctx, server.RunEnd{RunID: rid, ThreadID: "t0",
			Refresh:   server.ThreadRefresh{State: true, Values: vals, Exclude: []string{rid}, At: now},
			EventName: "end", EventData: json.RawMessage(`{"run_id":"r","status":"success"}`), MaxEvents: 100,
			Status: server.RunSuccess, At: now, Worker: "w", Attempt: 1, Next: ev.ID + 1}); err != nil {
			t.Fatal(err)
		}
		if err := st.DeleteRun(ctx, rid); err != nil {
			t.Fatal(err)
		}
	}
	oneRun(false) // the connection's first statements: set-up, not replayed
	oneRun(true)
	script, args := rec.script(rid)
	if err := os.WriteFile(out, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(out+".args", []byte(strings.Join(args, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("wrote %s (%d variables)", out, len(args))
	for _, want := range []string{"\\startpipeline", "\\endpipeline", ":n"} {
		if !strings.Contains(script, want) {
			t.Errorf("script has no %q:\n%s", want, script)
		}
	}
	pgbench, err := exec.LookPath("pgbench")
	if err != nil {
		t.Logf("pgbench not on PATH (%v); the script was not replayed", err)
		return
	}
	// Each replayed run must go through: a statement the script renders
	// wrongly (an argument, a pipeline) fails pgbench.
	cmd := exec.CommandContext(ctx, pgbench, append(append([]string{"-n", "-M", "prepared", "-c", "1", "-t", "3", "-f", out}, args...), postgrestest.DSN())...)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("pgbench replay: %v\n%s", err, b)
	}
	var runs int
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM "+pgx.Identifier{schema, "agentserver_runs"}.Sanitize()).Scan(&runs); err != nil {
		t.Fatal(err)
	}
	if runs != 3 {
		t.Errorf("%d runs left by 3 replays, want 3 (each replay creates one run of its own id)", runs)
	}
}

// scriptRecorder records the statements sent while on, with their
// arguments, as pgx's tracer reports them.
type scriptRecorder struct {
	mu        sync.Mutex
	recording bool
	lines     []recordedStatement
}

type recordedStatement struct {
	sql   string // "" for a pipeline's start or end
	args  []any
	start bool
}

func (r *scriptRecorder) on(b bool) {
	r.mu.Lock()
	r.recording = b
	r.mu.Unlock()
}

func (r *scriptRecorder) add(s recordedStatement) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.recording {
		r.lines = append(r.lines, s)
	}
}

func (r *scriptRecorder) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.add(recordedStatement{sql: d.SQL, args: d.Args})
	return ctx
}

func (r *scriptRecorder) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *scriptRecorder) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	r.add(recordedStatement{start: true})
	return ctx
}

func (r *scriptRecorder) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	r.add(recordedStatement{sql: d.SQL, args: d.Args})
}

func (r *scriptRecorder) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {
	r.add(recordedStatement{})
}

var paramRE = regexp.MustCompile(`\$([0-9]+)\b`)

// script returns the pgbench script of the statements recorded, the run
// id rid replaced by :n, and its -D options.
func (r *scriptRecorder) script(rid string) (string, []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var b strings.Builder
	b.WriteString("\\set n random(1, 1000000000000)\n")
	vars := map[string]string{}
	var opts []string
	for _, s := range r.lines {
		switch {
		case s.start:
			b.WriteString("\\startpipeline\n")
			continue
		case s.sql == "":
			b.WriteString("\\endpipeline\n")
			continue
		case s.sql == "DELETE" || strings.HasPrefix(s.sql, "WITH r AS (DELETE FROM"):
			continue // the recorder's clean-up
		}
		sql := paramRE.ReplaceAllStringFunc(s.sql, func(m string) string {
			i, _ := strconv.Atoi(m[1:])
			if i < 1 || i > len(s.args) {
				return m
			}
			if a, ok := s.args[i-1].([]string); ok && len(a) == 1 && a[0] == rid {
				return "ARRAY[:n]"
			}
			v, null := argText(s.args[i-1])
			switch {
			case null:
				return "NULL"
			case v == rid:
				return ":n"
			case v == "":
				return "''" // pgbench defines no empty variable
			}
			name, ok := vars[v]
			if !ok {
				name = fmt.Sprintf("v%d", len(vars))
				vars[v] = name
				opts = append(opts, "-D"+name+"="+v)
			}
			return ":" + name
		})
		b.WriteString(strings.TrimSpace(sql) + ";\n")
	}
	return b.String(), opts
}

// argText is the text form of a statement's argument a, as PostgreSQL
// reads it for a parameter of any type the statements use; null when a
// is nil or a nil pointer.
func argText(a any) (string, bool) {
	if a == nil {
		return "", true
	}
	v := reflect.ValueOf(a)
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return "", true
		}
		return argText(v.Elem().Interface())
	}
	switch x := a.(type) {
	case string:
		return x, false
	case []byte:
		if x == nil {
			return "", true
		}
		if utf8.Valid(x) && !strings.Contains(string(x), `\`) {
			return string(x), false
		}
		return fmt.Sprintf(`\x%x`, x), false
	case json.RawMessage:
		return argText([]byte(x))
	case time.Time:
		return x.Format("2006-01-02 15:04:05.999999Z07:00"), false
	case []string:
		q := make([]string, len(x))
		for i, s := range x {
			q[i] = strconv.Quote(s)
		}
		return "{" + strings.Join(q, ",") + "}", false
	}
	return fmt.Sprint(a), false
}
