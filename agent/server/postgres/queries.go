package postgres

import (
	"strconv"
	"strings"

	evpg "github.com/agentgraph/agentgraph/event/postgres"
	"github.com/agentgraph/agentgraph/internal/pgdb"
	"github.com/agentgraph/agentgraph/internal/pglease"
)

// attemptBase is the id, times the attempt, from which a run's attempt
// after its first numbers its events when its start finds the run's
// event log lost (see startRunEvent): 2^40, so that an attempt's ids stay
// below the next attempt's base and, for 8191 attempts, within a
// JavaScript number's exact integers.
const attemptBase int64 = 1 << 40

// maxBaseAttempt caps the attempt that attemptBase multiplies: the ids
// stay below 2^53 (and the product within a bigint) for any attempt; an
// attempt past it numbers a new log from the cap's base, which a client
// further on is told restarted below its position.
const maxBaseAttempt = 8191

// migrations are applied in order, once each; version i+1 is migrations[i].
// Never edit a released migration; append a new one. {threads}, {runs} and
// {events} stand for the schema-qualified table names.
var migrations = []string{
	`CREATE TABLE {threads} (
		id         text PRIMARY KEY,
		owner      text NOT NULL,
		status     text NOT NULL,
		created    timestamptz NOT NULL,
		updated    timestamptz NOT NULL,
		metadata   jsonb,
		config     jsonb,
		vals       bytea,
		interrupts jsonb,
		graph_id   text NOT NULL,
		head       text NOT NULL,
		rolled     boolean NOT NULL
	);
	CREATE INDEX ON {threads} (owner, created);
	CREATE TABLE {runs} (
		id           text PRIMARY KEY,
		thread_id    text NOT NULL REFERENCES {threads} (id) ON DELETE CASCADE,
		seq          bigint GENERATED ALWAYS AS IDENTITY,
		assistant_id text NOT NULL,
		created      timestamptz NOT NULL,
		updated      timestamptz NOT NULL,
		status       text NOT NULL,
		metadata     jsonb,
		kwargs       bytea,
		multitask    text NOT NULL,
		owner        text NOT NULL,
		worker       text NOT NULL,
		lease_until  timestamptz,
		attempt      integer NOT NULL,
		started      boolean NOT NULL,
		start        text NOT NULL,
		cancel       text NOT NULL,
		error        text NOT NULL,
		next_event   bigint NOT NULL DEFAULT 0,
		pruned       boolean NOT NULL DEFAULT false
	);
	CREATE INDEX ON {runs} (thread_id, seq);
	CREATE INDEX ON {runs} (created) WHERE status IN ('pending', 'running');
	CREATE INDEX ON {runs} (updated) WHERE NOT pruned AND status NOT IN ('pending', 'running');
	CREATE TABLE {events} (
		run_id text NOT NULL REFERENCES {runs} (id) ON DELETE CASCADE,
		id     bigint NOT NULL,
		name   text NOT NULL,
		data   bytea NOT NULL,
		PRIMARY KEY (run_id, id)
	);
	CREATE TABLE {locks} (
		thread_id text PRIMARY KEY,
		token     text NOT NULL,
		until     timestamptz NOT NULL
	);`,
	// The thread locks flag a row a waiter found held (pglease's
	// WaitFlag), so that a release nobody waited for sends no NOTIFY; and
	// their table is UNLOGGED, as pglease.DDL's: a lock does not wait for
	// a WAL flush, and a database crash frees every lock.
	`ALTER TABLE {locks} ADD COLUMN waited boolean NOT NULL DEFAULT false;
	ALTER TABLE {locks} SET UNLOGGED;`,
	// The run event logs move to an event/postgres Log (the tables
	// {logkeys} and {logevents}, whose shape and queries event/postgres's
	// Journal shares): the rows are copied there. The table
	// {events} and the column {runs}.next_event of the earlier versions
	// stay, unused by this version, so that instances of the earlier
	// version still running during a rolling deploy keep working; a
	// migration of a later release drops them (DROP TABLE {events};
	// ALTER TABLE {runs} DROP COLUMN next_event).
	`INSERT INTO {logkeys} (key, writer, next, ended, updated)
		SELECT id, '', next_event, false, updated FROM {runs} WHERE next_event > 0 AND NOT pruned
		ON CONFLICT (key) DO NOTHING;
	INSERT INTO {logevents} (key, pos, seq, name, data)
		SELECT e.run_id, e.id, 0, e.name, e.data FROM {events} e JOIN {runs} r ON r.id = e.run_id WHERE NOT r.pruned
		ON CONFLICT (key, pos) DO NOTHING;`,
	// The active runs of a thread, by their order: the claim, the
	// thread's refresh, the active-run listing and lockDue look for them
	// among the thread's runs, which without this index they read all of
	// (a thread with 200 finished runs: about 170 buffers per claim). The
	// build holds a write lock on {runs} for its duration (once, at the
	// upgrade).
	`CREATE INDEX agentserver_runs_active ON {runs} (thread_id, seq) WHERE status IN ('pending', 'running');`,
	// The index of the active runs by creation time, of migration 1, is
	// read by no statement since migration 4 (agentserver_runs_active
	// holds the same rows, and serves the queue's search too) and cost
	// every run's creation an index entry: it goes. The drop needs an
	// exclusive lock on {runs}; waiting for it behind a long statement
	// would queue every instance's run statements behind the wait, so it
	// gives up after 5 s (New then fails and can be retried).
	`SET LOCAL lock_timeout = '5s'; DROP INDEX IF EXISTS {runsCreatedIdx}; SET LOCAL lock_timeout = DEFAULT;`,
	// The active runs by owner: the count of a principal's pending and
	// running runs (Config.MaxActiveRuns, at each run's creation) read
	// every principal's active runs without it. A run's owner is a
	// column of its own (its thread's owner, copied at its creation). The
	// build holds a write lock on {runs} for its duration, as migration
	// 4's, once at the upgrade; it waits at most 5 s for that lock behind
	// a long statement (New then fails and can be retried).
	`SET LOCAL lock_timeout = '5s'; CREATE INDEX agentserver_runs_owner_active ON {runs} (owner) WHERE status IN ('pending', 'running'); SET LOCAL lock_timeout = DEFAULT;`,
	// The deletion of a thread's expired LockThread lease ({freeDrop}),
	// as a function called only when such a lease is there: as a
	// data-modifying WITH query of the statements that read the lease,
	// its nodes were initialised at every execution, 50k to 67k of
	// PostgreSQL's instructions each time (callgrind), two or three
	// times per run, to delete nothing almost always.
	`CREATE FUNCTION {dropExpired}(thread text) RETURNS boolean LANGUAGE sql VOLATILE AS $f$
		WITH d AS (DELETE FROM {locks} WHERE thread_id = thread AND until < clock_timestamp() RETURNING 1)
		SELECT count(*) > 0 FROM d
	$f$;`,
	// Migration 7's function answered false, "a live lease is there",
	// when the expired lease it was to delete had been deleted by
	// another transaction (an unlock, a release, the sweep of dropped
	// leases) since the calling statement's snapshot: the thread counted
	// as locked. It answers now whether no live lease remains: its
	// second statement runs in a snapshot taken after the DELETE, which
	// sees neither a row the DELETE removed nor one another transaction
	// removed, and sees a lease renewed meanwhile (which the DELETE, re-
	// checking the row, left) as live. Replacing the function locks no
	// table; a statement of an earlier instance calling it reads the
	// same answer for a lease that is there.
	`CREATE OR REPLACE FUNCTION {dropExpired}(thread text) RETURNS boolean LANGUAGE sql VOLATILE AS $f$
		DELETE FROM {locks} WHERE thread_id = thread AND until < clock_timestamp();
		SELECT NOT EXISTS (SELECT 1 FROM {locks} WHERE thread_id = thread AND until >= clock_timestamp());
	$f$;`,
	// The bytes of checkpoints each thread keeps, its own and its
	// durable subgraphs' (server.ByteCounter, Config.MaxThreadBytes),
	// written by the refresh of a run's end. They are in no index, so
	// that the refresh's update of the thread's row stays HOT (an
	// index on them took an index entry per run's end); CountBytes
	// sums them over the owner's rows, found on the index (owner,
	// created). Adding columns with a constant default rewrites no row.
	// The ALTER takes the table's ACCESS EXCLUSIVE lock: bounded, as
	// migrations 5 and 6 are, so that it fails (and is retried at the
	// next start) rather than queueing every request behind a long
	// transaction.
	`SET LOCAL lock_timeout = '5s'; ALTER TABLE {threads} ADD COLUMN bytes bigint NOT NULL DEFAULT 0, ADD COLUMN subgraph_bytes bigint NOT NULL DEFAULT 0; SET LOCAL lock_timeout = DEFAULT;`,
	// The assistants clients create (server.AssistantStore): a row per
	// assistant with its current and highest versions, and a row per
	// version holding the assistant's document at that version (see
	// assistants.go).
	`CREATE TABLE {assistants} (
		id      text PRIMARY KEY,
		owner   text NOT NULL,
		current integer NOT NULL,
		latest  integer NOT NULL,
		created timestamptz NOT NULL
	);
	CREATE INDEX ON {assistants} (owner, created);
	CREATE TABLE {assistantVersions} (
		id      text NOT NULL REFERENCES {assistants} (id) ON DELETE CASCADE,
		version integer NOT NULL,
		doc     text NOT NULL,
		PRIMARY KEY (id, version)
	);`,
}

// logName names the event log's tables (logName_keys, logName_events,
// logName_writers).
const logName = "agentserver_log"

const (
	// freeDrop holds when no lease of LockThread's is live on the
	// thread $1, and deletes the thread's lease if it expired: the probe
	// of the lease row calls the function of migrations 7 and 8 on a row
	// that is not live (the OR's arms are evaluated in order; the call
	// returns true when no live lease remains, the row deleted by it or
	// by another transaction, which then does not count), and on no
	// other. The call runs in snapshots of its own, after the
	// statement's: a lease committed in between cannot be there, for its
	// take waits for the transaction-level lock the statement's
	// transaction holds; a renewal committed in between is re-checked by
	// the DELETE, which leaves the renewed row, and the call's false
	// counts it as live. The statements use it once each (in a WITH
	// query f when they read it more than once, which, volatile, is
	// computed once).
	freeDrop = `NOT EXISTS (SELECT 1 FROM {locks} WHERE thread_id = $1 AND (until >= clock_timestamp() OR NOT {dropExpired}($1)))`
	// readCommitted holds when the statement's transaction is READ
	// COMMITTED (or READ UNCOMMITTED, which PostgreSQL runs as READ
	// COMMITTED): each statement then takes a snapshot of its own, and
	// one made after the transaction's first statement took the
	// thread's transaction-level lock sees every lease committed before
	// the lock was granted. Under REPEATABLE READ or SERIALIZABLE the
	// transaction's snapshot is its first statement's, taken before the
	// lock: a lease that LockThread's take committed while the lock was
	// waited for is not in it.
	readCommitted = `current_setting('transaction_isolation') IN ('read committed', 'read uncommitted')`
	// freeExpired is the WITH query f: freeDrop, the column free, of the
	// statements made in an implicit transaction (a batch without BEGIN,
	// at the connection's default isolation) after the statement that
	// took the thread's lock. It is false, whether or not a lease is
	// there, unless the transaction is READ COMMITTED (readCommitted):
	// the statement then writes nothing and its method returns
	// ErrThreadLocked, for the caller to take the lock with LockThread.
	freeExpired = `f AS (SELECT ` + readCommitted + ` AND ` + freeDrop + ` AS free)`
	threadCols  = `id, owner, status, created, updated, metadata, config, vals, interrupts, graph_id, head, rolled`
	// threadColsT is threadCols of the table aliased t.
	threadColsT = `t.id, t.owner, t.status, t.created, t.updated, t.metadata, t.config, t.vals, t.interrupts, t.graph_id, t.head, t.rolled`
	runCols     = `id, thread_id, assistant_id, created, updated, status, metadata, kwargs, multitask, owner, worker, lease_until, attempt, started, start, cancel, error`
	// due selects a run that may be claimed; live, one that holds a lease.
	due  = `(r.status = 'pending' AND r.created <= clock_timestamp() OR r.status = 'running' AND (r.lease_until IS NULL OR r.lease_until < clock_timestamp()))`
	live = `x.status = 'running' AND x.lease_until >= clock_timestamp()`
)

// trimLog is the column that trims the event log key, written by the
// statement's WITH query h (which returns the log's next position,
// joined to the statement's row as h), to its cap: when the log holds
// more than cap records (its next position modulo evpg.EpochSize: a log
// starts at an epoch's first position, that of a later attempt or of a
// log recreated after a loss too, and holds fewer than EpochSize
// records; next alone exceeds cap at every write of such a log, which
// called the function for nothing each time), it deletes the one that
// fell out, by the event
// log's function (evpg.TrimOneFunction), and is true; otherwise it is
// NULL and the function is not called. A DELETE in the statement (a
// data-modifying WITH query) had its nodes initialised at every
// execution, to delete nothing until the log is full: about 14k
// PostgreSQL instructions per statement (callgrind).
func trimLog(key, cap string) string {
	return `CASE WHEN h.next % ` + strconv.FormatInt(evpg.EpochSize, 10) + ` > ` + cap + `::bigint THEN {trimOne}(` + key + `, h.next - 1 - ` + cap + `::bigint) END`
}

// threadZero and runZero are the zero values of the NOT NULL columns of
// threadCols and runCols, by column, for zeroCols.
var (
	threadZero = map[string]string{"id": "''", "owner": "''", "status": "''", "created": "'epoch'", "updated": "'epoch'",
		"graph_id": "''", "head": "''", "rolled": "false"}
	runZero = map[string]string{"id": "''", "thread_id": "''", "assistant_id": "''", "created": "'epoch'", "updated": "'epoch'",
		"status": "''", "multitask": "''", "owner": "''", "worker": "''", "attempt": "0", "started": "false", "start": "''",
		"cancel": "''", "error": "''"}
)

// zeroCols returns the columns cols (threadCols or runCols) of the
// relation alias, each of those zero names with its zero value in place
// of NULL: the columns of an outer join's row that may be missing,
// scanned as the table's own.
func zeroCols(alias, cols string, zero map[string]string) string {
	var b strings.Builder
	for i, c := range strings.Split(cols, ", ") {
		if i > 0 {
			b.WriteString(", ")
		}
		if z, ok := zero[c]; ok {
			b.WriteString("COALESCE(" + alias + "." + c + ", " + z + ")")
		} else {
			b.WriteString(alias + "." + c)
		}
	}
	return b.String()
}

type queries struct {
	threads, runs, events, locks string
	tables                       *strings.Replacer

	insertThread, selectThread, lockThread, lockThreadID, updateThread, deleteThread string
	insertRun, selectRun, lockRun, updateRun, deleteRun, threadRuns, activeRuns      string
	newestRuns                                                                       string
	claim, lockDue, claimDue, renew, renewAttempt, prune, pruneRecords, sweepLogs    string
	dropLocks, readEvents, lastEvent, lastEventID                                    string
	createRunBusy, createRunClaimed, startRun, endRun, refreshThread, startRunEvent  string
	claimThread, xactLock, xactLockThread, threadFreeActive, claimLocked, finishRun  string
	finishedBy, startRunEventAsync                                                   string
	endRunOwned, runExists                                                           string
	countActive, threadFreeActiveCount                                               string
	setBytes, countBytes                                                             string
	createRunGuess, createRunGuessClaimed, createRunBusyMD, createRunClaimedMD       string
}

func newQueries(schema string) queries {
	q := queries{
		threads: pgdb.Table(schema, "agentserver_threads"),
		runs:    pgdb.Table(schema, "agentserver_runs"),
		events:  pgdb.Table(schema, "agentserver_events"),
		locks:   pgdb.Table(schema, "agentserver_locks"),
	}
	q.tables = strings.NewReplacer("{threads}", q.threads, "{runs}", q.runs, "{events}", q.events, "{locks}", q.locks,
		"{logkeys}", pgdb.Table(schema, logName+"_keys"), "{logevents}", pgdb.Table(schema, logName+"_events"),
		"{runsCreatedIdx}", pgdb.Table(schema, "agentserver_runs_created_idx"), "{dropExpired}", pgdb.Table(schema, "agentserver_drop_expired_lock"),
		"{trimOne}", evpg.TrimOneFunction(schema, logName),
		"{assistants}", pgdb.Table(schema, "agentserver_assistants"), "{assistantVersions}", pgdb.Table(schema, "agentserver_assistant_versions"))
	r := func(s string) string {
		return q.tables.Replace(strings.NewReplacer("{threadCols}", threadCols, "{threadColsT}", threadColsT, "{runCols}", runCols, "{due}", due, "{live}", live).Replace(s))
	}
	q.insertThread = r(`INSERT INTO {threads} ({threadCols}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT DO NOTHING`)
	q.selectThread = r(`SELECT {threadCols} FROM {threads} WHERE id = $1`)
	// countActive reads the index agentserver_runs_owner_active (migration
	// 6): the owner's active runs alone.
	q.countActive = r(`SELECT count(*) FROM {runs} WHERE owner = $1 AND status IN ('pending', 'running')`)
	// setBytes is ByteCounter.SetThreadBytes: $2 the thread's own
	// bytes, $3 its subgraphs' (negative: left as stored).
	q.setBytes = r(`UPDATE {threads} SET bytes = $2, subgraph_bytes = CASE WHEN $3::bigint >= 0 THEN $3 ELSE subgraph_bytes END WHERE id = $1`)
	// countBytes reads the owner's rows, found on the index (owner,
	// created) (see migration 10).
	q.countBytes = r(`SELECT coalesce(sum(bytes + subgraph_bytes), 0)::bigint FROM {threads} WHERE owner = $1`)
	q.lockThread = r(`SELECT {threadCols} FROM {threads} WHERE id = $1 FOR UPDATE`)
	q.lockThreadID = r(`SELECT 1 FROM {threads} WHERE id = $1 FOR UPDATE`)
	q.updateThread = r(`UPDATE {threads} SET owner = $2, status = $3, created = $4, updated = $5, metadata = $6, config = $7,
		vals = $8, interrupts = $9, graph_id = $10, head = $11, rolled = $12 WHERE id = $1`)
	// The deletions of runs take their event logs with them in the same
	// statement, so that no failure (a cancelled ctx) between the two
	// leaves a log behind. {dropLogs} deletes the logs of the run ids of
	// CTE r.
	dropLogs := `k AS (DELETE FROM {logkeys} WHERE key = ANY (ARRAY(SELECT id FROM r))),
		e AS (DELETE FROM {logevents} WHERE key = ANY (ARRAY(SELECT id FROM r)))`
	r = func(s string) string {
		return q.tables.Replace(strings.NewReplacer("{threadCols}", threadCols, "{threadColsT}", threadColsT, "{runCols}", runCols, "{due}", due, "{live}", live,
			"{dropLogs}", dropLogs, "{freeExpired}", freeExpired, "{freeDrop}", freeDrop, "{threadColsTZ}", zeroCols("t", threadCols, threadZero), "{runColsCZ}", zeroCols("c", runCols, runZero),
			"{runColsNZ}", zeroCols("n", runCols, runZero)).Replace(s))
	}
	q.deleteThread = r(`WITH r AS (SELECT id FROM {runs} WHERE thread_id = $1), t AS (DELETE FROM {threads} WHERE id = $1), {dropLogs} SELECT id FROM r`)
	q.insertRun = r(`INSERT INTO {runs} ({runCols}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17)`)
	q.selectRun = r(`SELECT {runCols} FROM {runs} WHERE id = $1`)
	q.lockRun = r(`SELECT {runCols} FROM {runs} WHERE id = $1 FOR UPDATE`)
	q.updateRun = r(`UPDATE {runs} SET assistant_id = $3, created = $4, updated = $5, status = $6, metadata = $7, kwargs = $8,
		multitask = $9, owner = $10, worker = $11, lease_until = $12, attempt = $13, started = $14, start = $15, cancel = $16, error = $17 WHERE id = $1 AND thread_id = $2`)
	q.deleteRun = r(`WITH r AS (DELETE FROM {runs} WHERE id = $1 RETURNING id), {dropLogs} SELECT count(*) FROM r`)
	// threadRuns and newestRuns read a page of a thread's runs on the
	// index (thread_id, seq), forwards or backwards: a LIMIT of NULL is
	// none.
	q.threadRuns = r(`SELECT {runCols} FROM {runs} WHERE thread_id = $1 AND ($2 = '' OR status = $2) ORDER BY seq LIMIT $3 OFFSET $4`)
	q.newestRuns = r(`SELECT {runCols} FROM {runs} WHERE thread_id = $1 AND ($2 = '' OR status = $2) ORDER BY seq DESC LIMIT $3 OFFSET $4`)
	q.activeRuns = r(`SELECT {runCols} FROM {runs} WHERE thread_id = $1 AND status IN ('running', 'pending') ORDER BY status = 'pending', seq`)
	// The outer condition repeats the run's own part of {due}: a claim
	// whose snapshot predates another claim of the same run finds the
	// row changed, re-checks it and leaves it.
	q.claim = r(`UPDATE {runs} SET status = 'running', worker = $2, lease_until = clock_timestamp() + $3 * interval '1 microsecond',
			attempt = attempt + 1, updated = clock_timestamp()
		WHERE id = (SELECT r.id FROM {runs} r WHERE r.thread_id = $1 AND {due}
				AND NOT EXISTS (SELECT 1 FROM {runs} x WHERE x.thread_id = $1 AND {live})
				ORDER BY r.seq LIMIT 1)
			AND (status = 'pending' AND created <= clock_timestamp() OR status = 'running' AND (lease_until IS NULL OR lease_until < clock_timestamp()))
		RETURNING {runCols}`)
	// claimThread is claim that also returns the claimed run's thread
	// (its columns after the run's): nothing when no run is claimed.
	q.claimThread = r(`WITH c AS (` + q.claim + `)
		SELECT c.*, {threadColsT} FROM c JOIN {threads} t ON t.id = c.thread_id`)
	// lockDue leaves a pending run changed less than $1 microseconds
	// ago (Config.PendingGrace) to the instance that created it.
	q.lockDue = r(`SELECT t.id FROM {threads} t
		JOIN (SELECT r.thread_id, min(r.created) AS due FROM {runs} r
			WHERE r.status IN ('pending', 'running') AND {due}
				AND (r.status = 'running' OR r.updated <= clock_timestamp() - $1 * interval '1 microsecond')
				AND NOT EXISTS (SELECT 1 FROM {runs} x WHERE x.thread_id = r.thread_id AND {live})
			GROUP BY r.thread_id) d ON d.thread_id = t.id
		ORDER BY d.due LIMIT 1
		FOR UPDATE OF t SKIP LOCKED`)
	// claimDue is ClaimDue's claim in one statement: lockDue ($1 the
	// grace) locks the row of a thread with a due run, then claim ($2
	// the worker, $3 the lease) claims that thread's next run. The
	// statement's snapshot is taken before the thread's lock, unlike a
	// claim made after the lock in a statement of its own: a claim of
	// the same thread that committed in between is not in the snapshot,
	// so the run picked may be one that claim took, or ended, meanwhile;
	// claim's outer condition re-reads that run's row as committed (the
	// UPDATE waits for and re-checks a row changed since its snapshot)
	// and leaves it. The run picked is the thread's first due run, so a
	// run behind it is never taken over it.
	q.claimDue = r(`WITH d AS (` + q.lockDue + `)
		` + strings.NewReplacer("$1", "(SELECT id FROM d)", "$2", "$2", "$3", "$3").Replace(q.claim))
	q.renew = r(`UPDATE {runs} SET lease_until = clock_timestamp() + $3 * interval '1 microsecond' WHERE id = $1 AND worker = $2 AND status = 'running'`)
	q.renewAttempt = r(`UPDATE {runs} SET lease_until = clock_timestamp() + $3 * interval '1 microsecond' WHERE id = $1 AND worker = $2 AND attempt = $4 AND status = 'running'`)
	q.prune = r(`WITH r AS (UPDATE {runs} SET kwargs = NULL, pruned = true
			WHERE NOT pruned AND status NOT IN ('pending', 'running') AND updated < $1 RETURNING id), {dropLogs}
		SELECT id FROM r`)
	// pruneRecords deletes up to $2 ended runs, with their event logs,
	// of the threads that hold more than $1 ended runs: the oldest past
	// the newest $1 of each. It reads the ended runs whole.
	q.pruneRecords = r(`WITH r AS (DELETE FROM {runs} WHERE id IN (SELECT id FROM
				(SELECT id, row_number() OVER (PARTITION BY thread_id ORDER BY seq DESC) AS n
					FROM {runs} WHERE status NOT IN ('pending', 'running')) x
				WHERE n > $1 LIMIT $2)
			AND status NOT IN ('pending', 'running') RETURNING id), {dropLogs}
		SELECT count(*) FROM r`)
	// sweepLogs deletes up to $1 event logs whose run is gone or pruned:
	// an append that checked its run before a concurrent deletion of the
	// run committed writes the log after the deletion removed it.
	q.sweepLogs = r(`WITH r AS (SELECT l.key AS id FROM {logkeys} l
				WHERE NOT EXISTS (SELECT 1 FROM {runs} x WHERE x.id = l.key AND NOT x.pruned) LIMIT $1), {dropLogs}
		SELECT count(*) FROM r`)
	q.dropLocks = r(`DELETE FROM {locks} WHERE until < clock_timestamp()`)
	// readEvents is the event log's read (event/postgres's Log.Read) with
	// the log's next id, which tells a log that restarted below after.
	q.readEvents = r(`SELECT k.next, (SELECT min(pos) FROM {logevents} WHERE key = $1), e.pos, e.name, e.data
		FROM {logkeys} k LEFT JOIN LATERAL (SELECT pos, name, data FROM {logevents} WHERE key = k.key AND pos > $2 ORDER BY pos LIMIT $3) e ON true
		WHERE k.key = $1 ORDER BY e.pos`)
	// lastEvent is the newest event of a name in a run's log: the log's
	// (key, pos) order read backwards to the first of that name (a
	// failed run's error event is at or near its log's end).
	q.lastEvent = r(`SELECT pos, name, data FROM {logevents} WHERE key = $1 AND name = $2 ORDER BY pos DESC LIMIT 1`)
	// lastEventID is the id of a run log's last event: its (key, pos)
	// order read backwards, one row.
	q.lastEventID = r(`SELECT pos FROM {logevents} WHERE key = $1 ORDER BY pos DESC LIMIT 1`)
	// The statements of server.RunRecorder, each one of the
	// read-modify-writes (or pairs of statements) it replaces.
	// createRunBusy inserts the run and marks its thread busy: a missing
	// thread fails the insert on its foreign key.
	q.createRunBusy = r(`WITH r AS (INSERT INTO {runs} ({runCols}) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17) RETURNING thread_id)
		UPDATE {threads} SET status = 'busy', updated = $5, graph_id = $18, metadata = coalesce(metadata, '{}'::jsonb) || $19::jsonb
		WHERE id = (SELECT thread_id FROM r)`)
	// createRunClaimed is createRunBusy for a run created claimed: $12
	// is its lease in microseconds from the database's clock, the clock
	// claim and renew read.
	q.createRunClaimed = strings.Replace(q.createRunBusy, "$11, $12, $13", "$11, clock_timestamp() + $12 * interval '1 microsecond', $13", 1)
	// createRunBusyMD and createRunClaimedMD are createRunBusy and
	// createRunClaimed that return the thread's metadata as the update
	// left it, which the Store remembers for the thread's next creation
	// (threadGuess).
	q.createRunBusyMD = q.createRunBusy + ` RETURNING metadata`
	q.createRunClaimedMD = q.createRunClaimed + ` RETURNING metadata`
	// createRunGuess is a run's creation in one statement, made under
	// the lock taken by xactLock from what the Store remembers of the
	// thread (threadGuess), in the implicit transaction of one batch
	// (xactLock, then this statement: no BEGIN or COMMIT): createRunBusy
	// ($1 to $19), made only if the transaction is READ COMMITTED
	// (readCommitted; PostgreSQL's default isolation: this statement's snapshot, taken
	// after the lock, then sees every change committed before it; under
	// another default, where the transaction's snapshot is its first
	// statement's, taken before the lock, nothing is inserted and the
	// creation reads the thread in a transaction begun READ COMMITTED), the
	// thread's record holds what the run was planned from (its owner $20,
	// metadata $21, compared as text, as jsonb's equality takes 1 for
	// 1.0 and the plan reads the number's text, graph $22, head $23 and rolled $24), the thread has
	// no active run, no lease of LockThread's is live on it ({freeDrop}
	// of the thread $2), and, with $26 ≥ 0, the principal $25 has at
	// most $26 pending and running runs (countActive's count, on its
	// index; not made with $26 < 0): the plan then gives the run it gave
	// on the guess. It returns, when the run was inserted, the thread's
	// metadata as the update left it and the count (0 when not made),
	// and no row otherwise: the thread's row, read by g, is there for
	// the update, which follows it if another transaction changed it
	// since the statement's snapshot, or has been deleted since, and
	// then the run's foreign key fails the statement. The run's columns
	// are cast, as INSERT ... SELECT does not take their types from the
	// table's. Its PostgreSQL instructions are those of the read and the
	// insert it replaces, within 1 % (callgrind of the pgbench replay):
	// what it saves is a round trip.
	guess := `WITH g AS (SELECT CASE WHEN $26::bigint < 0 THEN 0 ELSE (` + strings.Replace(q.countActive, "$1", "$25", 1) + `) END AS n
			FROM {threads} t WHERE ` + readCommitted + ` AND t.id = $2 AND t.owner = $20 AND t.metadata::text IS NOT DISTINCT FROM $21::jsonb::text
				AND t.graph_id = $22 AND t.head = $23 AND t.rolled = $24
				AND NOT EXISTS (SELECT 1 FROM {runs} a WHERE a.thread_id = $2 AND a.status IN ('running', 'pending'))
				AND ` + strings.ReplaceAll(freeDrop, "$1", "$2") + `),
		r AS (INSERT INTO {runs} ({runCols}) SELECT $1::text, $2::text, $3::text, $4::timestamptz, $5::timestamptz, $6::text,
				$7::jsonb, $8::bytea, $9::text, $10::text, $11::text, {lease}, $13::integer, $14::boolean, $15::text, $16::text, $17::text
			FROM g WHERE $26::bigint < 0 OR g.n <= $26::bigint RETURNING thread_id)
		UPDATE {threads} SET status = 'busy', updated = $5, graph_id = $18, metadata = coalesce(metadata, '{}'::jsonb) || $19::jsonb
		FROM g WHERE id = (SELECT thread_id FROM r) RETURNING metadata, g.n`
	q.createRunGuess = r(strings.Replace(guess, "{lease}", "$12::timestamptz", 1))
	q.createRunGuessClaimed = r(strings.Replace(guess, "{lease}", "clock_timestamp() + $12 * interval '1 microsecond'", 1))
	// The SET expressions read the row as it was: start changes only when
	// the run had not started.
	q.startRun = r(`UPDATE {runs} SET start = CASE WHEN started THEN start ELSE $2 END, started = true WHERE id = $1 RETURNING {runCols}`)
	// startRunEvent is startRun and the run's event log's one-record
	// write ($1 the run, $3 the writer, $4 and $5 the event, $6 the log's
	// cap, $7 and $8 the log's NOTIFY) at one commit, and returns the
	// run's cancel column (of the run's record, the one the server reads
	// at a start: the whole record's 17 columns cost about 47k more
	// PostgreSQL instructions per start, callgrind), the event's
	// position, whether the log was trimmed
	// (trimLog) and the NOTIFY's result; no row when the run is
	// missing. The log's row is written first, then the run's, the order
	// finishRun locks them in: the run's UPDATE, the statement itself,
	// joins the log's row h (one row; none when the run is missing), its
	// row locked once h is written. The UPDATE returns the row itself:
	// as a WITH query read by an outer SELECT, the run's 17 columns were
	// carried through two more plan nodes and projections, about 30k
	// more PostgreSQL instructions per start (callgrind). The commit waits for its WAL flush, as the
	// start's own did: a start a crash lost would make the run's next
	// attempt start the run afresh over the steps a checkpointer of
	// another database (SQLite, another cluster, a standby after a
	// failover) kept. With Config.SharedCheckpoints it does not wait
	// (startRunEventAsync).
	//
	// A log the start creates for a run's attempt after its first (the
	// start finds no log: a crash emptied its UNLOGGED tables, or the
	// first attempt was claimed and died before it started) numbers its
	// events from attemptBase times the attempt (at most
	// maxBaseAttempt), above every id an earlier attempt can have given a
	// client (fewer than attemptBase events each): a client resuming with
	// the id of an event the crash lost then reads every event of the new
	// attempt, its metadata event first, instead of those past its id
	// only.
	q.startRunEvent = r(`WITH h AS (INSERT INTO {logkeys} AS k (key, writer, next, ended, updated)
				SELECT $1, $3, CASE WHEN p.attempt > 1 THEN LEAST(p.attempt, ` + strconv.Itoa(maxBaseAttempt) + `)::bigint * ` + strconv.FormatInt(attemptBase, 10) + ` + 1 ELSE 1 END, false, clock_timestamp()
				FROM {runs} p WHERE p.id = $1
			ON CONFLICT (key) DO UPDATE SET next = k.next + 1, writer = EXCLUDED.writer, updated = EXCLUDED.updated
			RETURNING next),
		i AS (INSERT INTO {logevents} (key, pos, seq, name, data) SELECT $1, h.next - 1, 0, $4, $5 FROM h)
		UPDATE {runs} SET start = CASE WHEN started THEN start ELSE $2 END, started = true FROM h
		WHERE id = $1 RETURNING cancel, h.next - 1, ` + trimLog("$1", "$6") + `, pg_notify($7, $8)`)
	// startRunEventAsync is startRunEvent whose commit does not wait for
	// its WAL flush (Config.SharedCheckpoints): set_config with is_local
	// sets synchronous_commit for the statement's own transaction, which
	// commits once the statement is done. Its last column is the
	// setting's new value.
	q.startRunEventAsync = strings.Replace(q.startRunEvent, "pg_notify($7, $8)", "pg_notify($7, $8), set_config('synchronous_commit', 'off', true)", 1)
	// endRun also releases the lock of the run's thread that this
	// store holds, if it holds it and no waiter flagged it: $5 and $6 are
	// the keys and tokens of the held locks (pglease.Locks.Holding). A
	// flagged lock is left to the unlock function, whose release
	// notifies the waiter in a transaction of its own: a NOTIFY in this
	// one, which writes a logged table, would hold PostgreSQL's
	// notification lock across its WAL flush. The last column is the
	// released token ('' if none).
	q.endRun = r(`WITH r AS (UPDATE {runs} SET status = $2, error = $3, updated = $4, worker = '', lease_until = NULL WHERE id = $1 RETURNING {runCols}),
		d AS (DELETE FROM {locks} AS l USING unnest($5::text[], $6::text[]) AS h(k, tok)
			WHERE l.thread_id = h.k AND l.token = h.tok AND NOT l.waited AND l.thread_id IN (SELECT thread_id FROM r) RETURNING l.token)
		SELECT r.*, COALESCE((SELECT token FROM d), '') FROM r`)
	// endRunOwned is endRun made only if the run is running under the
	// worker $7 with the attempt $8 (server.OwnedEnder); runExists tells
	// then whether the run exists.
	q.endRunOwned = r(strings.Replace(q.endRun, "WHERE id = $1 RETURNING",
		"WHERE id = $1 AND status = 'running' AND worker = $7 AND attempt = $8::integer RETURNING", 1))
	q.runExists = r(`SELECT EXISTS (SELECT 1 FROM {runs} WHERE id = $1)`)
	// refreshThread is server.ThreadRefresh.Apply in SQL: $3 State, $4
	// Values, $5 Interrupts, $6 Next, $7 Failed, $8 Cancelled, $2
	// Exclude, $9 At, and the thread's bytes ($10 Bytes and $11
	// SubgraphBytes; negative when not Sized: left as stored). It
	// returns the active runs counted, and whether the thread was found.
	refresh := `a AS (SELECT count(*) AS n FROM {runs} WHERE thread_id = $1 AND status IN ('running', 'pending') AND id <> ALL ($2::text[])),
		u AS (UPDATE {threads} SET
			vals = CASE WHEN $3 AND head = '' AND NOT rolled THEN $4::bytea ELSE vals END,
			interrupts = CASE WHEN $3 AND head = '' AND NOT rolled THEN $5::jsonb ELSE interrupts END,
			status = CASE WHEN $7 THEN 'error'
				WHEN NOT $8 AND $3 AND $6 AND head = '' AND NOT rolled THEN 'interrupted'
				WHEN (SELECT n FROM a) > 0 THEN 'busy' ELSE 'idle' END,
			updated = $9,
			bytes = CASE WHEN {bytes}::bigint >= 0 THEN {bytes} ELSE bytes END,
			subgraph_bytes = CASE WHEN {bytes}::bigint >= 0 AND {sub}::bigint >= 0 THEN {sub} ELSE subgraph_bytes END
			WHERE id = $1{held} RETURNING 1)`
	q.refreshThread = r(`WITH ` + strings.NewReplacer("{held}", "", "{bytes}", "$10", "{sub}", "$11").Replace(refresh) + `
		SELECT (SELECT n FROM a), EXISTS (SELECT 1 FROM u)`)

	// The statements of server.LockingRecorder. Each runs in a
	// transaction whose first statement takes the thread's lock as a
	// transaction-level advisory lock (pglease.XactLock, which the lock's
	// takes by LockThread take too, Config.XactLocks): it excludes the
	// other transactions of the thread's lock, and the takes of its
	// lease, until the transaction ends, and writes no row. The
	// transaction's later statements, each with a snapshot taken after
	// the lock (READ COMMITTED), hold the lock if no lease of
	// LockThread's is live on the thread ({freeDrop}, $1 the thread);
	// one is, and they write nothing, and the method returns
	// ErrThreadLocked. A transaction of one batch without BEGIN runs at
	// the connection's default isolation: under another than READ
	// COMMITTED its snapshot is taken before the lock, and the
	// statements count the lock as held ({freeExpired}, readCommitted).
	q.xactLock = r(`SELECT ` + pglease.XactLock(q.locks, "$1::text"))
	// xactLockThread also locks the thread's row, as claim's transaction
	// does, once the lock is taken (the condition on a is a one-time
	// filter, evaluated before the row is read).
	q.xactLockThread = r(`WITH a AS (SELECT ` + pglease.XactLock(q.locks, "$1::text") + `)
		SELECT 1 FROM {threads} WHERE id = $1 AND EXISTS (SELECT 1 FROM a) FOR UPDATE`)
	// threadFreeActive is, under the lock taken by xactLock, whether
	// the lock is held ({freeDrop}), the thread and its active runs, in one
	// statement: one snapshot, and one statement per run's creation
	// fewer than a read of each. It returns a row per active run, or one
	// row when there is none: the lock's state, the thread's columns that
	// a run's creation reads (server.LockingRecorder.CreateRunLocked: its
	// id, owner, metadata, graph, head and rolled; NULL when the row does
	// not hold the thread), then the run's id, status and seq (NULL when
	// the row holds no run). The thread's columns are on one row alone,
	// the one of the thread's first active run by seq (or the lone row
	// when there is none), so that they are sent once however many runs
	// are queued on it. The rows come in no particular order:
	// scanThreadActive orders the runs as activeRuns does. The plan has
	// no sort and no window, and the columns are those a creation reads,
	// unwrapped: each node initialised at every execution carries the
	// statement's columns, and the sorts and the window function an order
	// in SQL needed cost about a sixth of the statement, the 30 columns of
	// the whole thread and run records (each NULL one replaced by its zero
	// value) about 40 % of it (PostgreSQL instructions, callgrind).
	// Each statement that reads whether the lock is held also deletes
	// the thread's lease row if it expired ({freeDrop}): the holder that let it expire then
	// finds its lease gone when it renews or releases it, and logs that
	// another holder may have had the lock, as when a take replaced it.
	// The row is written only then.
	q.threadFreeActive = r(`SELECT {freeDrop}, t.id, t.owner, t.metadata, t.graph_id, t.head, t.rolled, a.id, a.status, a.seq AS seq
		FROM (SELECT 1) o
		LEFT JOIN {runs} a ON a.thread_id = $1 AND a.status IN ('running', 'pending')
		LEFT JOIN {threads} t ON t.id = $1 AND (a.seq IS NULL
			OR a.seq = (SELECT min(seq) FROM {runs} WHERE thread_id = $1 AND status IN ('running', 'pending')))`)
	// threadFreeActiveCount is threadFreeActive with, last, the count of
	// the owner $2's pending and running runs (countActive's, on its
	// index; an InitPlan, computed once), in the read's snapshot: the
	// count of a run's creation under Config.MaxActiveRuns without a
	// statement, a round trip and a transaction of its own.
	q.threadFreeActiveCount = strings.Replace(q.threadFreeActive, "a.seq AS seq",
		"a.seq AS seq, ("+strings.Replace(q.countActive, "$1", "$2", 1)+")", 1)
	// claimLocked is claimThread under the lock taken by xactLockThread:
	// whether the lock is held, whether a run was claimed, the run's
	// columns and its thread's (zero values when none was).
	q.claimLocked = r(`WITH {freeExpired},
		c AS (` + strings.Replace(q.claim, "RETURNING", "AND (SELECT free FROM f) RETURNING", 1) + `)
		SELECT (SELECT free FROM f), c.id IS NOT NULL, {runColsCZ}, {threadColsTZ}
		FROM (SELECT 1) o LEFT JOIN c ON true LEFT JOIN {threads} t ON t.id = c.thread_id`)
	// finishRun is, under the lock taken by xactLock: refreshThread ($1
	// to $9, and the thread's bytes $21 and $22), the run's last event in its event log (as the log's
	// one-record write, $10 the run, $11 the writer, $12 and $13 the
	// event, $14 the log's cap; without the log's NOTIFY: the run's end
	// notifies the same payload once committed), and endRun ($15 to
	// $17). One transaction: a reader that sees the last event sees the
	// thread refreshed, and one that sees the run ended sees its last
	// event. The thread's row is updated first, then the log's, then the
	// run's (each CTE waits for the one before), the order claims lock
	// them in. It returns whether the lock is held, whether the run was
	// ended (not the ended run's record, which the server does not use:
	// its 17 columns, carried through the WITH query and the outer
	// join, cost about 100k PostgreSQL instructions per end, callgrind),
	// the active runs counted, the event's position (NULL without the
	// event), whether the run was lost to another worker, and whether
	// the log was trimmed (trimLog; NULL when not). A log the
	// event creates (a crash lost the run's) starts at the epoch $20
	// (of evpg.EpochSize ids; see logEpoch). The statement's one row
	// joins f, a and o (one row each) with h and r (at most one each):
	// a scalar subquery per column (an InitPlan and a scan of the WITH
	// query each, initialised at every execution) cost about 11k more
	// PostgreSQL instructions per run's start and end (callgrind). The
	// run's row is read by o as one outer join's row, and u and h, one
	// row each at most (a key's), are made to run before the CTE that
	// reads them by a scalar subquery that is never 0, not by a count:
	// an aggregate node each, initialised at every execution, cost about
	// 30k PostgreSQL instructions per run's end (pgbench replay,
	// callgrind).
	//
	// With $18 set, the run is ended only if it is still running under
	// the worker $18 and the attempt $19 (RunEnd.Worker and Attempt):
	// when it is not (its lease expired and another worker claimed it,
	// or it ended otherwise), o.lost is true and nothing is written, not
	// the thread's refresh nor the event. The batch's first statement
	// then locks the thread's row (xactLockThread), as every claim does
	// before it changes a run's worker: no takeover commits between
	// this statement's snapshot and its writes. r repeats the condition,
	// which its UPDATE re-checks on a row changed meanwhile.
	q.finishRun = r(`WITH {freeExpired},
		o AS (SELECT x.id IS NOT NULL AS found, coalesce($18::text <> ''
			AND NOT (x.status = 'running' AND x.worker = $18 AND x.attempt = $19::integer), false) AS lost
			FROM (SELECT 1) d LEFT JOIN {runs} x ON x.id = $10),
		l AS (SELECT 1 FROM f, o WHERE f.free AND NOT o.lost),
		` + strings.NewReplacer("{held}", " AND EXISTS (SELECT 1 FROM l)", "{bytes}", "$21", "{sub}", "$22").Replace(refresh) + `,
		h AS (INSERT INTO {logkeys} AS k (key, writer, next, ended, updated)
				SELECT $10, $11, $20::bigint * 4294967296 + 1, false, clock_timestamp()
				WHERE EXISTS (SELECT 1 FROM l) AND (SELECT 1 FROM u) IS DISTINCT FROM 0 AND (SELECT found FROM o)
			ON CONFLICT (key) DO UPDATE SET next = k.next + 1, writer = EXCLUDED.writer, updated = EXCLUDED.updated
			RETURNING next),
		i AS (INSERT INTO {logevents} (key, pos, seq, name, data) SELECT $10, h.next - 1, 0, $12, $13 FROM h),
		r AS (UPDATE {runs} SET status = $15, error = $16, updated = $17, worker = '', lease_until = NULL
			WHERE id = $10 AND EXISTS (SELECT 1 FROM l) AND (SELECT 1 FROM h) IS DISTINCT FROM 0
				AND ($18::text = '' OR status = 'running' AND worker = $18 AND attempt = $19::integer) RETURNING 1 AS ended)
		SELECT f.free, r.ended IS NOT NULL, a.n, h.next - 1, o.lost, ` + trimLog("$10", "$14") + `
		FROM f CROSS JOIN a CROSS JOIN o LEFT JOIN h ON true LEFT JOIN r ON true`)
	// finishedBy tells, after finishRun's reply was lost, whether its
	// transaction committed, and what it returned: the run $1 ended with
	// the status $3 at $4 (finishRun's own values; ended runs have no
	// worker), the thread's active runs now (not counting those of $5),
	// the position of its log's last event, and the run its batch's
	// claim took for the worker $2 ($2 '' for none): the thread's run
	// running under $2 whose row version is of the same transaction as
	// the ended run's (xmin), and whose lease is still live. A claim made
	// since by another transaction (this instance's sweeper after the
	// lease expired) changed the row, and that run is left to it; so is
	// a run whose lease expired before this read (a sweeper may claim it
	// at any moment). The run adopted has its lease renewed by the read
	// itself ($6 microseconds from now), so that no sweeper claims it
	// between the read and its execution; the update re-checks its
	// conditions on a row a sweeper changed meanwhile.
	q.finishedBy = r(`WITH n AS (UPDATE {runs} n SET lease_until = clock_timestamp() + $6 * interval '1 microsecond'
			FROM {runs} e
			WHERE $2::text <> '' AND e.id = $1 AND e.status = $3 AND e.updated = $4 AND e.worker = ''
				AND n.thread_id = e.thread_id AND n.status = 'running' AND n.worker = $2
				AND n.id <> e.id AND n.xmin = e.xmin AND n.lease_until > clock_timestamp()
			RETURNING n.*)
		SELECT (SELECT count(*) FROM {runs} a WHERE a.thread_id = e.thread_id
				AND a.status IN ('running', 'pending') AND a.id <> ALL ($5::text[])),
			(SELECT k.next - 1 FROM {logkeys} k WHERE k.key = e.id),
			n.id IS NOT NULL, {runColsNZ}, {threadColsTZ}
		FROM {runs} e
		LEFT JOIN n ON true
		LEFT JOIN {threads} t ON t.id = n.thread_id
		WHERE e.id = $1 AND e.status = $3 AND e.updated = $4 AND e.worker = ''`)
	return q
}
