package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Pruner is an optional interface of a Saver that applies retention
// policies. Memory and the SQLite and PostgreSQL backends implement it;
// Prune uses it.
type Pruner interface {
	// Prune applies a retention policy: it deletes threads idle for longer
	// than r.MaxIdle and the checkpoints beyond the r.KeepLatest newest of
	// each remaining thread. Every checkpoint it keeps stays loadable: blobs
	// are deleted only when no kept checkpoint needs them.
	Prune(ctx context.Context, r Retention) (Pruned, error)
}

// UsageReporter is an optional interface of a Saver that reports the
// storage a thread takes. Memory and the SQLite and PostgreSQL backends
// implement it, each reading running totals it keeps per thread, so that
// a Usage costs the same on a thread of one run as on one of thousands (an
// agent server calls it at every run's end); ThreadUsage uses it.
type UsageReporter interface {
	// Usage reports how many checkpoints, blobs and pending writes a thread
	// holds and how many payload bytes they take. A thread that does not
	// exist takes nothing.
	Usage(ctx context.Context, threadID string) (Usage, error)
}

// Prune applies the retention policy r to s if s is a Pruner. Otherwise it
// returns an error wrapping errors.ErrUnsupported that names s's type and
// the missing capability.
func Prune(ctx context.Context, s Saver, r Retention) (Pruned, error) {
	p, ok := s.(Pruner)
	if !ok {
		return Pruned{}, unsupported(s, "Pruner", "Prune")
	}
	return p.Prune(ctx, r)
}

// ThreadUsage reports the storage the thread takes in s if s is a
// UsageReporter. Otherwise it returns an error wrapping
// errors.ErrUnsupported that names s's type and the missing capability.
func ThreadUsage(ctx context.Context, s Saver, threadID string) (Usage, error) {
	u, ok := s.(UsageReporter)
	if !ok {
		return Usage{}, unsupported(s, "UsageReporter", "Usage")
	}
	return u.Usage(ctx, threadID)
}

func unsupported(s Saver, iface, method string) error {
	return fmt.Errorf("checkpoint: the Saver %T does not implement checkpoint.%s (no %s method); use a backend that does, such as checkpoint.Memory, sqlite.Saver or postgres.Saver: %w",
		s, iface, method, errors.ErrUnsupported)
}

// Retention is a policy for Prune. Its zero value deletes nothing.
type Retention struct {
	// ThreadID limits pruning to one thread; "" prunes every thread.
	ThreadID string
	// KeepLatest keeps only the newest KeepLatest checkpoints of each
	// thread, in the order they were saved, whichever branch of a forked
	// thread they are on; 0 keeps them all. The latest checkpoint is always
	// kept, so a thread can go on.
	KeepLatest int
	// MaxIdle deletes threads not written (by Put or PutWrites) for longer
	// than MaxIdle; 0 never deletes a thread for being idle.
	MaxIdle time.Duration
	// Now is the time idleness is measured against; zero means time.Now().
	Now time.Time
}

// Pruned counts what Prune deleted.
type Pruned struct {
	// Threads is the number of idle threads deleted.
	Threads int
	// Checkpoints is the number of checkpoints deleted, including those of
	// deleted threads.
	Checkpoints int
	// Blobs is the number of blobs deleted, including those of deleted
	// threads.
	Blobs int
}

// Usage describes the storage a thread takes.
type Usage struct {
	// Checkpoints is the number of checkpoints stored.
	Checkpoints int
	// Blobs is the number of channel blobs stored.
	Blobs int
	// BlobBytes is the total size of the blobs' data.
	BlobBytes int64
	// Writes is the number of pending writes stored.
	Writes int
	// WriteBytes is the total size of the pending writes' values.
	WriteBytes int64
}

// ValidateRetention checks a Retention policy; the error wraps ErrInvalid.
// r.ThreadID is not held to ValidateID's rule, as DeleteThread's is not: a
// thread stored by a release without that rule can still be pruned, and an
// ID no backend stores prunes nothing.
func ValidateRetention(r Retention) error {
	if r.KeepLatest < 0 {
		return invalid("Prune: Retention.KeepLatest is %d; use 0 to keep every checkpoint or a positive count", r.KeepLatest)
	}
	if r.MaxIdle < 0 {
		return invalid("Prune: Retention.MaxIdle is %v; use 0 to keep idle threads or a positive duration", r.MaxIdle)
	}
	return nil
}

// Syncer is an optional interface of a Saver that can save without waiting
// for the storage to make each save durable, and make all of them durable
// later at once. A run in [github.com/agentgraph/agentgraph/graph.DurabilityAsync]
// uses it: its saves are made with PutNoSync and PutWritesNoSync, and it
// calls Sync before it returns (or pauses), so a run that has returned is as
// durable as with Put. The PostgreSQL backend implements it (one disk flush
// per run instead of one per step).
type Syncer interface {
	// PutNoSync is Put, with all of Put's contract (atomic, ordered after
	// every earlier save, visible to every reader once it returns), except
	// that it may return before the save is durable: a crash of the storage
	// itself (not of the caller) may lose the saves made since the last
	// Sync. They are lost as a suffix, latest first, so the thread stays
	// loadable at an earlier checkpoint.
	PutNoSync(ctx context.Context, expect string, cp *Checkpoint, blobs []Blob, writes []Write) error
	// PutWritesNoSync is PutWrites with the same relaxation.
	PutWritesNoSync(ctx context.Context, threadID, checkpointID string, writes []Write) error
	// Sync returns once every save that returned before it was called is
	// durable. A Put or PutWrites that returns does the same for the saves
	// made before it.
	Sync(ctx context.Context) error
}

// MetadataPatcher is an optional interface of a Saver that changes the
// metadata of a checkpoint it has saved, leaving the checkpoint and its
// place in the history as they are. Memory and the SQLite and PostgreSQL
// backends implement it; PatchMetadata uses it.
type MetadataPatcher interface {
	// PatchMetadata sets the pairs of md in the metadata of checkpoint
	// checkpointID of the thread, keeping its other pairs. It returns an
	// error wrapping ErrNotFound if there is no such checkpoint.
	PatchMetadata(ctx context.Context, threadID, checkpointID string, md map[string]string) error
}

// PatchMetadata sets the pairs of md in the metadata of checkpoint
// checkpointID of the thread in s if s is a MetadataPatcher. Otherwise it
// returns an error wrapping errors.ErrUnsupported that names s's type and
// the missing capability.
func PatchMetadata(ctx context.Context, s Saver, threadID, checkpointID string, md map[string]string) error {
	p, ok := s.(MetadataPatcher)
	if !ok {
		return unsupported(s, "MetadataPatcher", "PatchMetadata")
	}
	return p.PatchMetadata(ctx, threadID, checkpointID, md)
}

// Copier is an optional interface of a Saver that copies a thread's stored
// checkpoints, blobs and pending writes to another thread as they are
// stored. Unlike a copy through Get and Put, it also copies a thread that
// Prune has shortened, whose oldest kept checkpoint holds a channel as a
// full value plus deltas. Memory and the SQLite and PostgreSQL backends
// implement it; CopyThread uses it.
type Copier interface {
	// CopyThread copies every checkpoint of thread from to thread to in
	// one atomic operation and returns how many it copied (0 when from
	// has none, and then it writes nothing). It returns a *ConflictError
	// when to already has a checkpoint.
	CopyThread(ctx context.Context, from, to string) (int, error)
}
