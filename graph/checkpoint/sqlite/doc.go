// Package sqlite is a checkpoint.Saver that stores checkpoints in a SQLite
// file, through the pure-Go driver modernc.org/sqlite (no cgo). It is the
// embedded default for examples and single-machine services.
//
// New opens the file, creating it and its tables if needed, and applies any
// pending schema migrations (recorded in the table
// agentgraph_checkpoint_migrations). The database runs in WAL mode with a
// busy timeout, so several processes can share one file: readers never
// block, writers take turns, and every Put checks the thread's latest
// checkpoint inside its write transaction, so a writer that lost a race gets
// a *checkpoint.ConflictError, never a lost update.
//
// The Saver is a checkpoint.SnapshotLister: ListSnapshots, which
// checkpoint.AllSnapshots and graph.History use, reads a page of snapshots
// in one read transaction with at most four queries, however long the page.
//
// Tables: agentgraph_threads (one row per thread: its latest checkpoint and
// when it was last written), agentgraph_checkpoints, agentgraph_blobs (the
// channel values, full or delta, shared between checkpoints) and
// agentgraph_writes (pending writes).
package sqlite
