// Package postgres is a [server.Store] in PostgreSQL through pgx, for
// agent servers that run as several instances: every instance opens the
// same database and serves any thread, any run and any run's stream.
//
// Threads and runs are rows of two tables (agentserver_threads,
// agentserver_runs), created or brought up to date by [New] with
// versioned migrations recorded in agentserver_migrations (which also
// create the function agentserver_drop_expired_lock in the schema: the
// deletion of a thread's expired lock lease). Run event logs
// are kept by an [github.com/agentgraph/agentgraph/event/postgres.Log]
// named agentserver_log (the
// tables agentserver_log_keys and agentserver_log_events, one key per
// run, the shape and the queries of event/postgres.Journal,
// and the log's function agentserver_log_trim_one, with which a run's
// start and end trim its log when it is full):
// the events appended by all runs while a write is in flight are written
// together by the next write, in one statement. Those tables are
// UNLOGGED: an append does not wait for a WAL flush, and a database
// crash empties them, losing the event logs of the runs then kept: the
// runs' records, their threads and the graphs' checkpoints are in logged
// tables and survive. A run in flight then is taken over from its
// checkpoint: its next attempt's start, which writes the attempt's
// metadata event, finds the log lost and numbers the attempt's events
// from 2^40 times the attempt, above every id an earlier attempt gave, so
// a client resuming with any Last-Event-ID it was sent (even the id of
// an event the crash lost, as a start Config.SharedCheckpoints commits
// without a flush wait can be) is sent an EventsDropped error event and
// every event of the new attempt, its metadata event first. An
// execution that goes on across the crash (the Store is a
// [server.LostLogAppender]) passes each append the highest id it was
// given: the append that finds the log lost, or the run's end
// ([server.RunEnd].Next), creates it from the next multiple of 2^32
// (an epoch, [evpg.EpochSize]) above that id, above every id the lost
// log gave (an epoch holds fewer events), and at least one epoch above
// the attempt's base (2^40 times the attempt from the second, 0 for the
// first), where only a log that holds every event of its attempt starts.
// A client resuming with any Last-Event-ID it was sent, or joining from
// the log's start (-1), is then sent an EventsDropped error event and
// every event since, and no id is given twice: an append whose reply
// was lost counts as having given every id of the epoch it may have
// created a log in ([server.UnknownAppendError]). An attempt has 255
// epochs above its base for this, each used by a loss (or by an append
// whose reply was lost); past them the attempt numbers each new log
// from its last epoch again, giving ids it gave before: a client
// resuming with a Last-Event-ID at or past the new log's end is sent an
// EventsDropped error event and the log from its start, but one that
// resumes once the new log's ids passed its Last-Event-ID misses the
// events between, and may have been sent other events under ids it is
// sent again. A run's deletion (DeleteRun, DeleteThread,
// Prune) deletes its event log in the same statement, and Prune deletes
// up to 1000 logs whose run is gone (an append racing with the run's
// deletion can write one). Set Config.Schema to keep the tables apart
// from other applications (or tests) in one database.
//
// # Upgrades
//
// Migration 3 copies the run events of earlier versions (the table
// agentserver_events, the column agentserver_runs.next_event) into the
// event log and keeps that table and column, unused, so that instances
// of the earlier version keep working during a rolling deploy; a later
// release drops them. Until every instance runs this version, a run's
// events are visible only to the instances of the version that executes
// it: a stream served by an instance of the other version sees none of
// them, and closes without an end event when the run ends.
//
// # Queue and leases
//
// A run is claimed in a transaction that first locks its thread's row, so
// the runs of a thread start one at a time and in order, whichever
// instance claims them; the claim returns the claimed run's thread, which
// the run's execution starts from ([Store.ClaimThread]). The Store is a
// [server.RunRecorder]: a run's creation, start and end are one statement
// each, and a thread's refresh at a run's end (its values and status from
// the run's state and its other active runs) is one statement that
// counts the runs and updates the row. It is a [server.LockingRecorder]
// too: a run's creation, claim and end each take the thread's lock (a
// transaction-level advisory lock, which LockThread's lease rows of
// agentserver_locks respect) in their own transaction's first statement
// and release it with the commit, in one round trip each; the lock's own
// take and release statements are left to the contended case. A run's
// creation applies the server's strategy (a Go function) between its
// read of the thread and its write: two round trips, except on a thread
// whose last run this Store created, and ended (its end, EndRun or
// FinishRunLocked, made here), which it remembers (up to 4096 threads,
// each with metadata of at most 8 KiB; a thread this Store updates,
// deletes or locks is forgotten): the strategy is applied to the thread as remembered, idle,
// and the run inserted in one round trip by a statement that checks,
// under the lock, that the thread's record is still as remembered, that
// it has no active run and that the principal has no more active runs
// than the strategy was told (the count of Config.MaxActiveRuns, as
// remembered plus 16); when it is not, nothing is inserted, and the
// creation reads the thread and applies the strategy again, in two more
// round trips. A transaction of one round trip is one batch, without
// BEGIN or COMMIT, which PostgreSQL runs at the session's default
// isolation; the lock it takes in its first statement holds only under
// READ COMMITTED (PostgreSQL's default, or READ UNCOMMITTED, run as READ
// COMMITTED), where each later statement's snapshot is taken after the
// lock. On a database, role or pool whose default_transaction_isolation
// is another (read once by [New]), a run's creation reads the thread in
// a transaction begun READ COMMITTED (two round trips), and a run's claim
// and end under the lock return [server.ErrThreadLocked] without a
// round trip, so that the server takes the thread's lock with LockThread
// and records them step by step; a session set to another isolation
// since gets the same refusal from the statements themselves. A step-by-step
// claim there that waited for the thread's row while another claim
// committed fails to serialize (its snapshot predates the wait): having
// written nothing, it is sent again, up to three times. And it is
// a [server.RunStarter]: a run's start and its metadata event are one
// statement. And a [server.RunClaimer]: a
// run that its creating instance executes at once is inserted claimed
// (running, under that instance's lease on the database's clock) by its
// creation's transaction, and is not claimed apart. And a
// [server.CountingClaimer]: the count of the principal's active runs
// (Config.MaxActiveRuns) is made by the read of the run's creation, not
// by a statement of its own. And a
// [server.NextClaimer]: when a run was enqueued, through the instance
// that executes a thread's run, behind that run, the batch that ends the
// run claims the thread's next due run as its third statement.
// [Store.ClaimDue] is the queue every instance's sweeper polls, one
// statement: it locks the row of a thread with a due run with FOR
// UPDATE SKIP LOCKED, so sweepers of several instances take different
// threads instead of waiting on each other, and claims the thread's
// next run. A claim holds a lease, on the
// database's clock, that its worker renews; a run whose lease expired (its
// instance died or lost the database) is claimed again, as a new attempt.
//
// A run's end ([Store.FinishRunLocked], [Store.FinishClaimNextLocked])
// names the worker and attempt that executed the run
// ([server.RunEnd].Worker and Attempt) and is recorded only if the run is
// still running under them: a worker whose lease expired and whose run
// another instance took over writes nothing (not the thread's refresh
// nor the last event) and gets [server.ErrLeaseLost], with the thread's
// next run if FinishClaimNextLocked's claim took one (the run lost was
// ended by its new owner): that run is the worker's to execute now.
// [Store.EndRunOwned], the end the server makes step by step, is as
// conditional. The end's batch locks the
// thread's row first, as every claim does before it changes a run's
// worker, so that no takeover commits between the check and the writes.
// When the connection fails after the end's batch was sent (its reply
// lost: the batch may have committed), the Store reads back whether the
// run ended as that batch ended it and, if so, returns what the batch
// did, the next run its claim took included: that run is the one of the
// thread's runs running under the worker whose row was written by the
// same transaction as the ended run's (the same xmin). Without that
// read, the claimed run would wait for its lease to expire before any
// instance executed it. A run claimed by another transaction meanwhile
// (the sweeper, once that lease expired) is not returned, nor is one
// whose lease expired before the read (a sweeper may claim it at any
// moment); the read renews the lease of the run it returns.
//
// # Wake-ups between instances
//
// Every change to a run's record or event log sends a PostgreSQL
// notification on a channel named after the schema, never before the
// change is visible. An event write notifies in its own statement (its
// tables are UNLOGGED, so its commit waits for no WAL flush); a change
// of a run's record notifies once it committed, outside its transaction
// and batched with the other notifications waiting: a NOTIFY inside a
// transaction that writes a logged table holds PostgreSQL's notification
// lock across the commit's WAL flush, which serialises every notifying
// commit behind the others' flushes.
// [Store.WatchRuns] listens on one connection of its own and reports the
// changes other Store values made; the server uses it to wake the
// streams and waits it serves on that run and to cancel a run another
// instance asked to cancel. Clients therefore need no sticky sessions:
// the event log is read from the table, and the notification only says
// when to read it.
//
// # Commit durability
//
// Every commit of the Store's logged tables waits, by default, until
// PostgreSQL has flushed it to the write-ahead log on disk. A deployment
// that prefers not to wait can turn that off for the Store's connections:
// add synchronous_commit=off to the DSN
// ("postgres://user@host/db?synchronous_commit=off"; pgx passes unknown
// parameters to the server as settings), or set it on the pool's
// configuration before opening it:
//
//	pcfg, err := pgxpool.ParseConfig(dsn)
//	...
//	pcfg.ConnConfig.RuntimeParams["synchronous_commit"] = "off"
//	pool, err := pgxpool.NewWithConfig(ctx, pcfg)
//
// What it risks: if the PostgreSQL server crashes (or its machine loses
// power), the commits of the last moments before it, up to three times
// wal_writer_delay (600 ms by default), may be lost although the Store
// reported them done. The database stays consistent (no corruption, no
// half transactions): it comes back as of a slightly earlier instant. A
// crash of the agent server's own process risks nothing more. A run whose
// end was lost is found running with a lease that expires, and is claimed
// again and resumed from its latest checkpoint that survived: the graph
// may repeat its last step, side effects included. A run whose creation
// was lost is gone although its client got its id. Use the same setting
// for the checkpoint saver (its Config.AsyncCommit), or both lose
// different instants. It removes the WAL flush waits that are left:
// about 4 per run of a one-node graph when every commit waits, 2 with
// Config.SharedCheckpoints and the saver's Config.AsyncCommit (see
// "Shared checkpoints that do not wait for their flush"); what that is
// worth depends on how long flushes take. Measured with
// BenchmarkRunStream on a 2-core machine (2 instances, 50 clients)
// against every commit waiting (its instances used neither
// SharedCheckpoints nor AsyncCommit then, and the saver shared the
// Store's pool and so its setting): on a cluster nothing else wrote to,
// no change in runs/s or in the database's CPU per run beyond the noise;
// on a cluster other clients were writing to at the same time, 12 to
// 26 % more runs/s and a quarter or more less CPU per run in the
// benchmark's backends. Against SharedCheckpoints with AsyncCommit, the
// benchmark's configuration since, on that shared cluster (machine load
// 11 to 20, four rounds of each, alternating): 75 to 130 runs/s against
// 82 to 128, no change beyond the noise. The benchmark takes the setting
// from AGENTSERVER_TEST_SYNCHRONOUS_COMMIT.
//
// Config.SharedCheckpoints turns it off for one commit per run alone, the
// run's start, where that loses nothing: when the graphs' checkpoints
// are saved in the Store's PostgreSQL cluster, a crash that loses a
// run's start loses everything written to the WAL after it too, the
// run's checkpoints included (the WAL is replayed in order, up to its
// last flushed record), and the run's next attempt then starts the run
// from its input over the thread's checkpoints as they were before it,
// which is right. Each run then waits for two WAL flushes of the Store's
// (its creation and its end) instead of three. The run's creation and
// its end keep theirs: a creation lost would lose a run its client was
// given, and an end lost would show a run that its clients saw end as
// running again until its lease expired and another instance ended it
// again (sending its webhook twice), and would run a cancelled or failed
// run's last step again.
//
// # Shared checkpoints that do not wait for their flush
//
// Config.SharedCheckpoints with the checkpoint saver's
// Config.AsyncCommit (graph/checkpoint/postgres), both on the same
// PostgreSQL server, is what examples/agentserver and BenchmarkRunStream
// use: a run then waits for two WAL flushes in all, its creation's and
// its end's, instead of one more per checkpoint it saves (four in all
// for a one-node graph, which saves two). What holds then:
//
//   - A run whose end the Store recorded (the end's commit returned) has
//     its start and every checkpoint it saved on disk, as with every
//     commit waiting for its flush, unless the PostgreSQL server crashed
//     between them and the end (next point): the end's commit comes after
//     them in the WAL, and PostgreSQL flushes the WAL in order, so its
//     flush wait covers them. A run's creation still waits for its own
//     flush before its client gets the run's id.
//   - A crash of the PostgreSQL server (or of its machine) during a run
//     may lose what the run wrote in the last moments before it (up to
//     three times wal_writer_delay, 600 ms by default): always an end of
//     the WAL, so what survives is the run's start with its first
//     checkpoints, or neither. If the instance executing the run died
//     too, or PostgreSQL came back after the run's lease (Config.Lease of
//     agent/server) expired, the run, found running, is claimed again and
//     resumed from the latest checkpoint that survived (from its input if
//     its start was lost). If PostgreSQL came back within the lease, the
//     instance runs the run on, and its next checkpoint finds the thread
//     behind where the lost saves left it (a checkpoint conflict on the
//     run's own thread, the run's last save gone, the thread's latest
//     checkpoint the run's start or one it saved since): the instance
//     resumes the run from the latest checkpoint that survived, three
//     times per attempt at most (the run then fails with an error that
//     says so). Unlike a takeover this is the same attempt: the resumed
//     execution's events start with a metadata event of that attempt,
//     the events of the steps run again are sent again, and as the crash
//     emptied the event log their ids start from the attempt's next
//     epoch (see above: a client resuming with a Last-Event-ID is told
//     of the events lost, then sent those since). Either way
//     the steps whose checkpoints were lost run again, side effects
//     included, as if the instance had died at that earlier instant.
//     (With checkpoints that wait for their flush, only the step in
//     progress runs again.) The run's event log is lost either way
//     (UNLOGGED tables; see above).
//   - Some cases of PostgreSQL back within the lease end the run without
//     that repair. A run whose lost saves were its last (the crash fell
//     between its last save and its end, and PostgreSQL was back before
//     the end's write; otherwise that write fails and the run is taken
//     over once its lease expires) records its end with the thread's
//     checkpoints behind it; nothing detects it. What a client then
//     sees: the run, its /join and its stream's end event say success;
//     GET /threads/{id} holds the values the run ended with and the
//     status its end gave (idle for a run that ran to its end); GET
//     /threads/{id}/state and the history answer the latest checkpoint
//     that survived, whose values lack the lost steps' and whose next
//     lists the step the run was in. A run without input on the thread
//     runs that step again (its side effects included), one with input
//     drops it, and a command.resume with strict_resume is refused when
//     the lost save was a pause (no interrupt waits in the checkpoint
//     that survived). A step of parallel tasks that saves a task's
//     writes against a lost checkpoint fails the run with
//     checkpoint.ErrNotFound.
//   - Other cases end the run with the conflict, as any other writer's
//     would: a lost save of a durable subgraph's thread (the run's
//     thread id with the subgraph's suffix), a Store that is no
//     AttemptRenewer (the lease check could not tell the execution from
//     an older one of the same worker), and a thread moved back past the
//     run's start or left with no checkpoint (checkpoints on another
//     server, with AsyncCommit there, lost from before the run began).
//   - A crash of an agent server's process, PostgreSQL running on, loses
//     nothing more than with every commit waiting for its flush.
//
// The guarantee needs the checkpoints on the Store's PostgreSQL server:
// the WAL, and its order, is the server's. With the checkpoints on
// another server, leave SharedCheckpoints off; a saver's AsyncCommit
// there risks what its doc says, with no run's end to flush its saves: a
// crash of that server after a run's end was recorded may lose the run's
// last saves, and clients then see the thread as the previous point
// describes (the run ended success, the thread's record with the run's
// values, its state and history at the checkpoint that survived),
// without any error: the run's record does not note the checkpoint it
// ended on, so nothing compares the two.
package postgres
