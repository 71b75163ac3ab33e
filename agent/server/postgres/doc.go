// Package postgres is a [server.Store] in PostgreSQL through pgx, for
// agent servers that run as several instances: every instance opens the
// same database and serves any thread, any run and any run's stream.
//
// Threads, runs and run event logs are rows of three tables
// (agentserver_threads, agentserver_runs, agentserver_events), created or
// brought up to date by [New] with versioned migrations recorded in
// agentserver_migrations. Set Config.Schema to keep them apart from other
// applications (or tests) in one database.
//
// # Queue and leases
//
// A run is claimed in a transaction that first locks its thread's row, so
// the runs of a thread start one at a time and in order, whichever
// instance claims them. [Store.ClaimDue] is the queue every instance's
// sweeper polls: it locks the row of a thread with a due run with FOR
// UPDATE SKIP LOCKED, so sweepers of several instances take different
// threads instead of waiting on each other. A claim holds a lease, on the
// database's clock, that its worker renews; a run whose lease expired (its
// instance died or lost the database) is claimed again, as a new attempt.
//
// # Wake-ups between instances
//
// Every change to a run's record or event log sends a PostgreSQL
// notification (NOTIFY, delivered at commit, so never before the change is
// visible) on a channel named after the schema. [Store.WatchRuns] listens
// on one connection of its own and reports the changes other Store values
// made; the server uses it to wake the streams and waits it serves on that
// run and to cancel a run another instance asked to cancel. Clients
// therefore need no sticky sessions: the event log is read from the table,
// and the notification only says when to read it.
package postgres
