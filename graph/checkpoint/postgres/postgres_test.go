package postgres_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/checkpointtest"
	"github.com/agentgraph/agentgraph/graph/checkpoint/internal/proctest"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
)

func TestMain(m *testing.M) {
	proctest.Main(func(ctx context.Context, target string) (checkpoint.Saver, func(), error) {
		schema, dsn, _ := strings.Cut(target, "|")
		s, err := postgres.New(ctx, postgres.Config{DSN: dsn, Schema: schema})
		if err != nil {
			return nil, nil, err
		}
		return s, s.Close, nil
	})
	goleak.VerifyTestMain(m)
}

// dsn is the test server's connection string.
func dsn() string {
	if v := os.Getenv("AGENTGRAPH_TEST_POSTGRES"); v != "" {
		return v
	}
	return "postgres://postgres@127.0.0.1:5432/test?sslmode=disable"
}

// testPool connects to the test server, or skips the test when none
// answers.
func testPool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	pool, err := pgxpool.New(context.Background(), dsn())
	if err != nil {
		t.Fatalf("AGENTGRAPH_TEST_POSTGRES: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		t.Skipf("PostgreSQL does not answer at %s (%v); start it or set AGENTGRAPH_TEST_POSTGRES to a server's DSN to run these tests", dsn(), err)
	}
	t.Cleanup(pool.Close)
	return pool
}

// freshSchema returns the name of a schema unique to this test, dropped when
// the test ends.
func freshSchema(t testing.TB, pool *pgxpool.Pool) string {
	t.Helper()
	b := make([]byte, 6)
	rand.Read(b)
	schema := "agentgraph_test_" + hex.EncodeToString(b)
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if _, err := pool.Exec(ctx, `DROP SCHEMA IF EXISTS `+pgx.Identifier{schema}.Sanitize()+` CASCADE`); err != nil {
			t.Errorf("drop test schema %s: %v", schema, err)
		}
	})
	return schema
}

func newSaver(t testing.TB) *postgres.Saver {
	t.Helper()
	pool := testPool(t)
	s, err := postgres.New(context.Background(), postgres.Config{Pool: pool, Schema: freshSchema(t, pool)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return s
}

func TestConformance(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver { return newCorruptible(t) })
}

// corruptible is a Saver whose stored data the conformance suite can
// damage through the pool.
type corruptible struct {
	*postgres.Saver
	pool   *pgxpool.Pool
	schema string // quoted
}

var _ checkpointtest.Corrupter = corruptible{}

func newCorruptible(t testing.TB) corruptible { return newCorruptibleWith(t, false) }

// newCorruptibleWith is newCorruptible with the async-commit option set as
// asked.
func newCorruptibleWith(t testing.TB, asyncCommit bool) corruptible {
	return newCorruptibleConfig(t, postgres.Config{AsyncCommit: asyncCommit})
}

// newCorruptibleConfig is newCorruptible with cfg's options (its Pool and
// Schema are set here).
func newCorruptibleConfig(t testing.TB, cfg postgres.Config) corruptible {
	t.Helper()
	pool := testPool(t)
	schema := freshSchema(t, pool)
	cfg.Pool, cfg.Schema = pool, schema
	s, err := postgres.New(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Close)
	return corruptible{s, pool, pgx.Identifier{schema}.Sanitize()}
}

// exec runs a statement that must change exactly one row; {s} stands for
// the schema.
func (c corruptible) exec(ctx context.Context, query string, args ...any) error {
	ct, err := c.pool.Exec(ctx, strings.ReplaceAll(query, "{s}", c.schema), args...)
	if err != nil {
		return err
	}
	if ct.RowsAffected() != 1 {
		return fmt.Errorf("%d rows changed; want 1", ct.RowsAffected())
	}
	return nil
}

func (c corruptible) CorruptBlob(ctx context.Context, threadID, channel string, n int64, kind checkpoint.Kind, base int64) error {
	return c.exec(ctx, `UPDATE {s}.agentgraph_blobs SET kind = $1, base = $2 WHERE thread_id = $3 AND channel = $4 AND writer = $5`,
		int16(kind), base, threadID, channel, n)
}

func (c corruptible) CorruptRef(ctx context.Context, threadID string, n int64, channel string, writer int64) error {
	return c.exec(ctx, `UPDATE {s}.agentgraph_checkpoints SET refs = jsonb_set(refs, ARRAY[$1::text, '1'], to_jsonb($2::bigint))
		WHERE thread_id = $3 AND seq = $4`, channel, writer, threadID, n)
}

// TestCorruptRecords damages the columns of a checkpoint in ways the
// conformance suite cannot express: references that the recursive query
// cannot follow (numbers beyond 64 bits, strings, an array), nodes and
// metadata that do not decode.
func TestCorruptRecords(t *testing.T) {
	ctx := context.Background()
	s := newCorruptible(t)
	tests := []struct {
		name, set string
		value     any
	}{
		{"references of the wrong type", `refs = $1::jsonb`, `{"n":["1","x"]}`},
		{"references beyond 64 bits", `refs = $1::jsonb`, `{"n":[1,18446744073709551616]}`},
		{"references beyond bigint", `refs = $1::jsonb`, `{"n":[1,9223372036854775808]}`},
		{"references as an array", `refs = $1::jsonb`, `[[1,1]]`},
		{"references as a number", `refs = $1::jsonb`, `7`},
		{"nodes not JSON", `body = $1`, []byte(`{"ran":`)},
		{"nodes as null", `body = $1`, []byte(`null`)},
		{"tasks as null", `body = $1`, []byte(`{"next":null}`)},
		{"nodes in a newer format", `body = $1`, []byte(`{"v":2,"tasks":[{"id":"t1","node":"approve"}]}`)},
		{"task without node", `body = $1`, []byte(`{"next":[{"id":"t1"}]}`)},
		{"metadata of the wrong type", `metadata = $1::jsonb`, `{"source":[1]}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			cp := &checkpoint.Checkpoint{ThreadID: tc.name, Versions: map[string]uint64{"n": 1}}
			if err := s.Put(ctx, "", cp, []checkpoint.Blob{{Channel: "n", Kind: checkpoint.Full, Data: []byte("1")}}, nil); err != nil {
				t.Fatal(err)
			}
			if err := s.exec(ctx, `UPDATE {s}.agentgraph_checkpoints SET `+tc.set+` WHERE thread_id = $2`, tc.value, tc.name); err != nil {
				t.Fatal(err)
			}
			checkpointtest.CheckCorrupt(t, s, tc.name, cp.ID)
			checkpointtest.CheckCorrupt(t, s, tc.name, "")
		})
	}
}

// TestConformanceNoMemory runs the suite on a Saver that remembers no
// thread's latest checkpoint, whose every Put reads what it needs in a
// transaction of two round trips.
func TestConformanceNoMemory(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver {
		return newCorruptibleConfig(t, postgres.Config{RecentThreads: -1})
	})
}

func TestConformanceAsyncCommit(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver { return newCorruptibleWith(t, true) })
}

// TestProcesses shows the optimistic concurrency across processes sharing
// one database.
func TestProcesses(t *testing.T) {
	pool := testPool(t)
	schema := freshSchema(t, pool)
	s, err := postgres.New(context.Background(), postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	proctest.Run(t, s, schema+"|"+dsn())
}

// TestFirstStart starts several processes at once on a schema that does not
// exist yet: all migrate without error and exactly one creates the thread.
func TestFirstStart(t *testing.T) {
	pool := testPool(t)
	schema := freshSchema(t, pool)
	proctest.FirstStart(t, schema+"|"+dsn())
	var version int
	err := pool.QueryRow(context.Background(), `SELECT max(version) FROM `+pgx.Identifier{schema}.Sanitize()+`.agentgraph_checkpoint_migrations`).Scan(&version)
	if err != nil || version != 3 {
		t.Errorf("schema version = %d, %v; want 3", version, err)
	}
}

// TestNewIdempotent opens a Saver twice on one schema, with a DSN: the second
// finds the tables in place and sees the first one's data.
func TestNewIdempotent(t *testing.T) {
	pool := testPool(t)
	schema := freshSchema(t, pool)
	ctx := context.Background()
	a, err := postgres.New(ctx, postgres.Config{DSN: dsn(), Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	cp := &checkpoint.Checkpoint{ThreadID: "t", Versions: map[string]uint64{"n": 1}}
	if err := a.Put(ctx, "", cp, []checkpoint.Blob{{Channel: "n", Kind: checkpoint.Full, Data: []byte("1")}}, nil); err != nil {
		t.Fatal(err)
	}
	b, err := postgres.New(ctx, postgres.Config{DSN: dsn(), Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	snap, err := b.Get(ctx, "t", "")
	if err != nil || snap.ID != cp.ID {
		t.Fatalf("second Saver Get = %v, %v; want %s", snap, err, cp.ID)
	}
}

func TestNewConfigErrors(t *testing.T) {
	pool := testPool(t)
	tests := []struct {
		name string
		cfg  postgres.Config
		want string
	}{
		{"neither", postgres.Config{}, "neither Pool nor DSN"},
		{"both", postgres.Config{Pool: pool, DSN: dsn()}, "both Pool and DSN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := postgres.New(context.Background(), tc.cfg)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("got %v; want an error saying %q", err, tc.want)
			}
		})
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := postgres.New(ctx, postgres.Config{Pool: pool, Schema: freshSchema(t, pool)}); !errors.Is(err, context.Canceled) {
		t.Errorf("New with a cancelled context: got %v; want context.Canceled", err)
	}
}

// noSyncSaver makes every save of a Saver with its NoSync methods; it can
// still damage what it saved, for the suite's tampering tests.
type noSyncSaver struct{ corruptible }

func (s noSyncSaver) Put(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	return s.PutNoSync(ctx, expect, cp, blobs, writes)
}

func (s noSyncSaver) PutWrites(ctx context.Context, thread, id string, writes []checkpoint.Write) error {
	return s.PutWritesNoSync(ctx, thread, id, writes)
}

// TestConformanceNoSync: PutNoSync and PutWritesNoSync keep the whole
// contract of Put and PutWrites, and Sync succeeds after them.
func TestConformanceNoSync(t *testing.T) {
	checkpointtest.Run(t, func(t *testing.T) checkpoint.Saver {
		c := newCorruptible(t)
		t.Cleanup(func() {
			if err := c.Sync(context.Background()); err != nil {
				t.Errorf("Sync: %v", err)
			}
		})
		return noSyncSaver{c}
	})
}
