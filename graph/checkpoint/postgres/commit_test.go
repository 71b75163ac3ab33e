package postgres_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
)

// TestCommitSetting shows, for each way a Put is saved, the
// synchronous_commit its transaction commits with: a deferred constraint
// trigger on the checkpoints table, which PostgreSQL runs at the commit
// of each transaction that inserted a checkpoint, records the setting
// then in effect. Put waits for the WAL flush ("on") unless
// Config.AsyncCommit is set; PutNoSync never waits ("off"), in one
// statement as in the transaction a Put the Saver cannot make from
// memory takes. The Savers share a pool of one connection, and sync Puts
// follow the others: a setting that outlived its transaction would show
// in theirs.
func TestCommitSetting(t *testing.T) {
	ctx := context.Background()
	schema := freshSchema(t, testPool(t))
	pc, err := pgxpool.ParseConfig(dsn())
	if err != nil {
		t.Fatal(err)
	}
	pc.MaxConns = 1
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	sync, err := postgres.New(ctx, postgres.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	async, err := postgres.New(ctx, postgres.Config{Pool: pool, Schema: schema, AsyncCommit: true})
	if err != nil {
		t.Fatal(err)
	}
	// cold remembers nothing: its every Put is the transaction of two
	// round trips.
	cold, err := postgres.New(ctx, postgres.Config{Pool: pool, Schema: schema, RecentThreads: -1})
	if err != nil {
		t.Fatal(err)
	}
	sch := pgx.Identifier{schema}.Sanitize()
	for _, q := range []string{
		`CREATE TABLE {s}.commit_settings (id bigserial, checkpoint_id text, setting text)`,
		`CREATE FUNCTION {s}.record_setting() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			INSERT INTO {s}.commit_settings (checkpoint_id, setting) VALUES (NEW.checkpoint_id, current_setting('synchronous_commit'));
			RETURN NULL;
		END $$`,
		`CREATE CONSTRAINT TRIGGER record_setting AFTER INSERT ON {s}.agentgraph_checkpoints
			DEFERRABLE INITIALLY DEFERRED FOR EACH ROW EXECUTE FUNCTION {s}.record_setting()`,
	} {
		if _, err := pool.Exec(ctx, strings.ReplaceAll(q, "{s}", sch)); err != nil {
			t.Fatal(err)
		}
	}
	prev := map[string]string{}  // thread → its latest checkpoint
	steps := map[string]uint64{} // thread → its checkpoints
	put := func(s *postgres.Saver, thread string, noSync bool) string {
		t.Helper()
		steps[thread]++
		cp := &checkpoint.Checkpoint{ThreadID: thread, ParentID: prev[thread], Versions: map[string]uint64{"n": steps[thread]}}
		blobs := []checkpoint.Blob{{Channel: "n", Kind: checkpoint.Full, Data: []byte(`1`)}}
		if noSync {
			err = s.PutNoSync(ctx, prev[thread], cp, blobs, nil)
		} else {
			err = s.Put(ctx, prev[thread], cp, blobs, nil)
		}
		if err != nil {
			t.Fatal(err)
		}
		prev[thread] = cp.ID
		return cp.ID
	}
	tests := []struct {
		name string
		put  func() string
		want string
	}{
		{"Put of a thread's first checkpoint", func() string { return put(sync, "a", false) }, "on"},
		{"Put extending the Saver's own", func() string { return put(sync, "a", false) }, "on"},
		{"Put by a Saver remembering nothing", func() string { return put(cold, "a", false) }, "on"},
		{"PutNoSync of a thread's first checkpoint", func() string { return put(sync, "b", true) }, "off"},
		{"PutNoSync extending the Saver's own", func() string { return put(sync, "b", true) }, "off"},
		{"PutNoSync by a Saver remembering nothing", func() string { return put(cold, "b", true) }, "off"},
		{"AsyncCommit Put of a thread's first checkpoint", func() string { return put(async, "c", false) }, "off"},
		{"AsyncCommit Put extending the Saver's own", func() string { return put(async, "c", false) }, "off"},
		// async never saw thread a: it reads the thread in the
		// transaction.
		{"AsyncCommit Put of a thread the Saver does not remember", func() string { return put(async, "a", false) }, "off"},
		// async remembers its own Put to thread d, which sync moves on:
		// the one statement from memory saves nothing, and the Put is
		// made again in the transaction.
		{"AsyncCommit Put of a thread the Saver remembers", func() string { return put(async, "d", false) }, "off"},
		{"Put moving on a thread another Saver remembers", func() string { return put(sync, "d", false) }, "on"},
		{"AsyncCommit Put the Saver cannot make from memory", func() string { return put(async, "d", false) }, "off"},
		// The same connection, after the saves that did not wait.
		{"Put of a thread's first checkpoint, after", func() string { return put(sync, "e", false) }, "on"},
		{"Put extending the Saver's own, after", func() string { return put(sync, "e", false) }, "on"},
		{"Put by a Saver remembering nothing, after", func() string { return put(cold, "e", false) }, "on"},
	}
	for _, tc := range tests {
		id := tc.put()
		var got []string
		rows, err := pool.Query(ctx, `SELECT setting FROM `+sch+`.commit_settings WHERE checkpoint_id = $1`, id)
		if err != nil {
			t.Fatal(err)
		}
		if got, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0] != tc.want {
			t.Errorf("%s: committed with synchronous_commit %q; want %q", tc.name, got, tc.want)
		}
	}
}
