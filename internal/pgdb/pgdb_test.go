package pgdb_test

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	cppg "github.com/agentgraph/agentgraph/graph/checkpoint/postgres"
	"github.com/agentgraph/agentgraph/graph/checkpoint/postgres/postgrestest"
	"github.com/agentgraph/agentgraph/internal/pgdb"
	"github.com/jackc/pgx/v5/pgxpool"
	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest/observer"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestTable(t *testing.T) {
	if got, want := pgdb.Table("", "x_migrations"), `"x_migrations"`; got != want {
		t.Errorf("Table without schema = %s, want %s", got, want)
	}
	if got, want := pgdb.Table(`my"schema`, "t"), `"my""schema"."t"`; got != want {
		t.Errorf("Table = %s, want %s", got, want)
	}
}

func TestConnect(t *testing.T) {
	if _, _, err := pgdb.Connect(t.Context(), nil, ""); err == nil || !strings.Contains(err.Error(), "neither Pool nor DSN") {
		t.Errorf("Connect with neither pool nor DSN: %v, want an error naming both", err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	// pgxpool connects lazily: New itself fails only on a bad DSN.
	_, _, err := pgdb.Connect(ctx, nil, "postgres://nobody:secret@127.0.0.1:1/none?sslmode=disable&connect_timeout=nope")
	if err == nil {
		t.Fatal("Connect with a malformed DSN succeeded")
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("error leaks the password: %v", err)
	}

	pool, _ := postgrestest.Schema(t, "pgdbtest_")
	got, owned, err := pgdb.Connect(t.Context(), pool, "ignored")
	if err != nil || got != pool || owned {
		t.Errorf("Connect with a pool = %p, %v, %v; want the same pool, not owned", got, owned, err)
	}
	own, owned, err := pgdb.Connect(t.Context(), nil, postgrestest.DSN())
	if err != nil || !owned {
		t.Fatalf("Connect with a DSN: owned %v, %v; want a pool of its own", owned, err)
	}
	defer own.Close()
	if err := own.Ping(t.Context()); err != nil {
		t.Error(err)
	}
}

var steps = []string{
	`CREATE TABLE {a} (id INT PRIMARY KEY)`,
	`INSERT INTO {a} (id) VALUES (1)`,
}

func migrations(schema string, steps []string) pgdb.Migrations {
	return pgdb.Migrations{
		Schema:   schema,
		Table:    "x_migrations",
		Lock:     "agentgraph/internal/pgdb test",
		Steps:    steps,
		Replacer: strings.NewReplacer("{a}", pgdb.Table(schema, "a")),
	}
}

func count(t *testing.T, pool *pgxpool.Pool, query string) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(t.Context(), query).Scan(&n); err != nil {
		t.Fatalf("%s: %v", query, err)
	}
	return n
}

// TestStrings reads a text column in the query's order, through a pool
// or a transaction, and returns the query's error.
func TestStrings(t *testing.T) {
	pool, _ := postgrestest.Schema(t, "pgdbtest_")
	const q = `SELECT x FROM unnest($1::text[]) WITH ORDINALITY AS t(x, i) ORDER BY i DESC`
	got, err := pgdb.Strings(t.Context(), pool, q, []string{"a", "b", "c"})
	if err != nil || strings.Join(got, "") != "cba" {
		t.Errorf("Strings = %q, %v; want [c b a]", got, err)
	}
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(t.Context())
	if got, err := pgdb.Strings(t.Context(), tx, q, []string{}); err != nil || len(got) != 0 {
		t.Errorf("Strings of no rows in a transaction = %q, %v; want none", got, err)
	}
	if _, err := pgdb.Strings(t.Context(), pool, `SELECT nope`); err == nil {
		t.Error("Strings of a broken query: no error")
	}
}

func TestMigrateIdempotent(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "pgdbtest_")
	core, logs := observer.New(zap.InfoLevel)
	m := migrations(schema, steps)
	m.Logger, m.Message = zap.New(core), "applied x migration"
	for range 3 {
		if err := pgdb.Migrate(t.Context(), pool, m); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(t, pool, `SELECT COUNT(*) FROM `+pgdb.Table(schema, "x_migrations")); n != 2 {
		t.Errorf("%d versions recorded, want 2", n)
	}
	if n := count(t, pool, `SELECT COUNT(*) FROM `+pgdb.Table(schema, "a")); n != 1 {
		t.Errorf("%d rows in a, want 1 (step 2 applied once)", n)
	}
	if logs.Len() != 2 || logs.All()[1].Message != "applied x migration" || logs.All()[1].ContextMap()["version"] != int64(2) {
		t.Errorf("log lines %v, want one per applied step", logs.All())
	}
}

func TestMigrateNewerSchema(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "pgdbtest_")
	if err := pgdb.Migrate(t.Context(), pool, migrations(schema, steps)); err != nil {
		t.Fatal(err)
	}
	err := pgdb.Migrate(t.Context(), pool, migrations(schema, steps[:1]))
	if err == nil || !strings.Contains(err.Error(), "newer than this build knows (1)") || !strings.HasPrefix(err.Error(), "postgres: migrate: ") {
		t.Errorf("Migrate of a newer schema: %v, want the newer-schema error", err)
	}
}

func TestMigrateFailureRollsBack(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "pgdbtest_")
	bad := append(append([]string{}, steps...), `INSERT INTO {a} (id) VALUES (1)`) // duplicate key
	err := pgdb.Migrate(t.Context(), pool, migrations(schema, bad))
	if err == nil || !strings.Contains(err.Error(), "migration 3") {
		t.Fatalf("Migrate with a failing step 3: %v, want an error naming migration 3", err)
	}
	if n := count(t, pool, `SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = '`+schema+`'`); n != 0 {
		t.Errorf("schema %s exists after a failed Migrate, want it rolled back", schema)
	}
}

// TestMigrateConcurrent runs Migrate from several goroutines, each on a
// connection of its own, as processes starting together would. Without the
// advisory lock they would race on CREATE SCHEMA / CREATE TABLE and insert
// the row of step 2 more than once, or fail.
func TestMigrateConcurrent(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "pgdbtest_")
	var wg sync.WaitGroup
	errs := make([]error, 6)
	for i := range errs {
		wg.Go(func() {
			errs[i] = pgdb.Migrate(t.Context(), pool, migrations(schema, steps))
		})
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Migrate %d: %v", i, err)
		}
	}
	if n := count(t, pool, `SELECT COUNT(*) FROM `+pgdb.Table(schema, "x_migrations")); n != 2 {
		t.Errorf("%d versions recorded, want 2", n)
	}
	if n := count(t, pool, `SELECT COUNT(*) FROM `+pgdb.Table(schema, "a")); n != 1 {
		t.Errorf("%d rows in a, want 1", n)
	}
}

// waitingOnLock waits until n sessions of pool's server named app
// (application_name) wait for a lock.
func waitingOnLock(t *testing.T, pool *pgxpool.Pool, app string, n int) {
	t.Helper()
	for count(t, pool, `SELECT COUNT(*) FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name = '`+app+`'`) < n {
		select {
		case <-t.Context().Done():
			t.Fatalf("%d sessions of %s waiting for a lock: %v", n, app, t.Context().Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// holdLock takes the transaction-scoped advisory lock of key on a
// connection of pool and returns the function that releases it.
func holdLock(t *testing.T, pool *pgxpool.Pool, key string) (release func()) {
	t.Helper()
	tx, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(t.Context(), `SELECT pg_advisory_xact_lock(hashtext($1))`, key); err != nil {
		t.Fatal(err)
	}
	return func() {
		if err := tx.Commit(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}

// TestMigrateConcurrentRepeatableRead: two processes whose sessions
// default to repeatable read (default_transaction_isolation) migrate at
// once: the one that waited for the other's lock sees the steps the other
// applied, not the snapshot it took before it waited, and applies none
// again.
func TestMigrateConcurrentRepeatableRead(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "pgdbtest_")
	app := "rr_" + schema
	rr := postgrestest.Settings(t, pool, map[string]string{"default_transaction_isolation": "repeatable read", "application_name": app})
	m := migrations(schema, steps)
	release := holdLock(t, pool, m.Lock+":"+pgdb.Table(schema, m.Table)) // both wait for it, their snapshots taken
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() { errs[i] = pgdb.Migrate(t.Context(), rr, m) })
	}
	waitingOnLock(t, pool, app, len(errs))
	release()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Migrate %d: %v", i, err)
		}
	}
	if n := count(t, pool, `SELECT COUNT(*) FROM `+pgdb.Table(schema, "a")); n != 1 {
		t.Errorf("%d rows in a, want 1", n)
	}
}

// TestMigrateConcurrentSchema: two stores' migrations (tables and locks of
// their own) create their shared schema at once: the second waits for
// the first's schema instead of failing on it.
func TestMigrateConcurrentSchema(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "pgdbtest_")
	app := "schema_" + schema
	p := postgrestest.Settings(t, pool, map[string]string{"application_name": app})
	gate := "pgdbtest gate " + schema
	release := holdLock(t, pool, gate)
	// a holds its transaction open, the schema created, until the gate
	// opens.
	a := migrations(schema, append([]string{`SELECT pg_advisory_xact_lock(hashtext('` + gate + `'))`}, steps...))
	b := migrations(schema, []string{`CREATE TABLE {b} (id INT PRIMARY KEY)`})
	b.Table, b.Lock, b.Replacer = "y_migrations", "agentgraph/internal/pgdb test y", strings.NewReplacer("{b}", pgdb.Table(schema, "b"))
	errs := make([]error, 2)
	var wg sync.WaitGroup
	wg.Go(func() { errs[0] = pgdb.Migrate(t.Context(), p, a) })
	waitingOnLock(t, pool, app, 1)
	wg.Go(func() { errs[1] = pgdb.Migrate(t.Context(), p, b) })
	waitingOnLock(t, pool, app, 2)
	release()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("Migrate %d: %v", i, err)
		}
	}
	if n := count(t, pool, `SELECT COUNT(*) FROM `+pgdb.Table(schema, "b")); n != 0 {
		t.Errorf("%d rows in b, want the table, empty", n)
	}
}

// TestMigrateSaverSharedSchema: the checkpoint saver's migration
// (pgdb.MigrateFunc) and a store's (Migrate) create their new shared
// schema at once: the saver waits for the store's CREATE SCHEMA instead
// of failing on it with a duplicate key on pg_namespace.
func TestMigrateSaverSharedSchema(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "pgdbtest_")
	app := "saver_" + schema
	p := postgrestest.Settings(t, pool, map[string]string{"application_name": app})
	gate := "pgdbtest gate " + schema
	release := holdLock(t, pool, gate)
	// The store holds its transaction open, the schema created, until
	// the gate opens.
	store := migrations(schema, append([]string{`SELECT pg_advisory_xact_lock(hashtext('` + gate + `'))`}, steps...))
	errs := make([]error, 2)
	var wg sync.WaitGroup
	wg.Go(func() { errs[0] = pgdb.Migrate(t.Context(), p, store) })
	waitingOnLock(t, pool, app, 1)
	wg.Go(func() {
		s, err := cppg.New(t.Context(), cppg.Config{Pool: p, Schema: schema})
		if err == nil {
			s.Close()
		}
		errs[1] = err
	})
	waitingOnLock(t, pool, app, 2)
	release()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("migration %d (the store's, then the saver's): %v", i, err)
		}
	}
}

// TestMigrateSaverRepeatableRead: two checkpoint savers whose sessions
// default to repeatable read migrate at once: the one that waited reads
// the version the other recorded, and applies nothing again.
func TestMigrateSaverRepeatableRead(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "pgdbtest_")
	s, err := cppg.New(t.Context(), cppg.Config{Pool: pool, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	rrApp := "rr_" + schema
	rr := postgrestest.Settings(t, pool, map[string]string{"default_transaction_isolation": "repeatable read", "application_name": rrApp})
	// Every version after the first is applied again: each step must
	// run over its own result.
	all := count(t, pool, `SELECT COUNT(*) FROM `+pgdb.Table(schema, "agentgraph_checkpoint_migrations"))
	if _, err := pool.Exec(t.Context(), `DELETE FROM `+pgdb.Table(schema, "agentgraph_checkpoint_migrations")+` WHERE version > 1`); err != nil {
		t.Fatal(err)
	}
	// Both wait, their first statement run (the snapshot taken under
	// repeatable read): one for the table, the other for its lock.
	versions, err := pool.Begin(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := versions.Exec(t.Context(), `LOCK TABLE `+pgdb.Table(schema, "agentgraph_checkpoint_migrations")+` IN ACCESS EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	release := func() {
		if err := versions.Commit(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
	errs := make([]error, 2)
	var wg sync.WaitGroup
	for i := range errs {
		wg.Go(func() {
			s, err := cppg.New(t.Context(), cppg.Config{Pool: rr, Schema: schema})
			if err == nil {
				s.Close()
			}
			errs[i] = err
		})
	}
	waitingOnLock(t, pool, rrApp, len(errs))
	release()
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Errorf("saver %d under repeatable read: %v", i, err)
		}
	}
	if n := count(t, pool, `SELECT COUNT(*) FROM `+pgdb.Table(schema, "agentgraph_checkpoint_migrations")); n != all {
		t.Errorf("%d checkpoint versions recorded, want %d (each applied once)", n, all)
	}
}

func TestMigrateCanceled(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "pgdbtest_")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if err := pgdb.Migrate(ctx, pool, migrations(schema, steps)); err == nil {
		t.Error("Migrate with a canceled context succeeded")
	}
}

// TestSetup connects and migrates as a store's New does: with migrate
// false it leaves the database alone; a failed migration returns its error
// and closes a pool Setup opened (goleak in TestMain sees one left open)
// but not the caller's.
func TestSetup(t *testing.T) {
	pool, schema := postgrestest.Schema(t, "pgdbtest_")
	exists := `SELECT COUNT(*) FROM information_schema.schemata WHERE schema_name = '` + schema + `'`
	got, owned, err := pgdb.Setup(t.Context(), nil, postgrestest.DSN(), migrations(schema, steps), false)
	if err != nil || !owned {
		t.Fatalf("Setup without migrating = %v, %v; want an owned pool", owned, err)
	}
	got.Close()
	if n := count(t, pool, exists); n != 0 {
		t.Errorf("Setup without migrating created schema %s", schema)
	}
	got, owned, err = pgdb.Setup(t.Context(), nil, postgrestest.DSN(), migrations(schema, steps), true)
	if err != nil || !owned {
		t.Fatalf("Setup = %v, %v; want an owned pool", owned, err)
	}
	got.Close()
	if n := count(t, pool, `SELECT COUNT(*) FROM `+pgdb.Table(schema, "x_migrations")); n != 2 {
		t.Errorf("Setup recorded %d versions, want 2", n)
	}

	bad := migrations(schema, append(append([]string{}, steps...), `INSERT INTO {a} (id) VALUES (1)`)) // duplicate key
	if got, _, err := pgdb.Setup(t.Context(), nil, postgrestest.DSN(), bad, true); err == nil || got != nil || !strings.Contains(err.Error(), "migration 3") {
		t.Errorf("Setup with a failing step 3 = %v, %v; want no pool and an error naming migration 3", got, err)
	}
	if got, owned, err := pgdb.Setup(t.Context(), pool, "ignored", bad, true); err == nil || got != nil || owned {
		t.Errorf("Setup of the caller's pool with a failing step = %v, %v, %v; want an error", got, owned, err)
	}
	if err := pool.Ping(t.Context()); err != nil {
		t.Errorf("the caller's pool after a failed Setup: %v, want it open", err)
	}
}
