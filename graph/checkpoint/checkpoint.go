package checkpoint

import (
	"context"
	"strconv"
	"time"
)

// Saver stores the checkpoints of threads. Every method is safe for
// concurrent use by many goroutines and, for the durable backends, by many
// processes sharing one database.
//
// Saver holds what every backend must do: what the engine needs to run,
// pause and resume a thread (Put, PutWrites, Get, List), and DeleteThread,
// which an application needs to honour a user who deletes a conversation.
// A backend may do more through optional interfaces, discovered by type
// assertion: [Pruner] (retention), [UsageReporter] (storage a thread
// takes), [SnapshotLister] (a page of history in one call) and [Copier]
// (a thread copied as stored). [Prune], [ThreadUsage], [AllSnapshots] and
// [CopyThread] use them. A type that wraps a Saver by
// embedding the interface hides them; it forwards those it supports with
// methods of its own.
//
// Loading (Get, List, ListSnapshots) never trusts stored data to be well
// formed: a damaged checkpoint fails at once with a [*CorruptError]
// (errors.Is(err, [ErrCorrupt])) naming the thread and checkpoint, never
// loops, and allocates no more than a sound checkpoint of the same size.
//
// Ownership: Put may keep the checkpoint's slices and Metadata map, the
// blobs' data and the writes instead of copying them (Memory does, which
// spares a copy per checkpoint), but never modifies them; the caller hands
// them over and must not modify them after the call. Put does not keep cp
// itself, the blobs slice or cp.Versions, which the caller may reuse for its
// next Put. Byte slices passed to PutWrites are copied before the call
// returns. What a Saver returns is the caller's: maps and slices of a
// returned Checkpoint or Snapshot may be modified, but byte slices (blob
// data, task inputs, payloads, write values) may be shared with the Saver and
// must not be modified.
type Saver interface {
	// Put saves cp, together with one Blob for every channel whose version
	// changed in cp's step, as the new latest checkpoint of cp.ThreadID.
	//
	// expect names the checkpoint the caller believes is the thread's latest
	// ("" for a thread that has no checkpoint yet). If another writer has
	// moved the thread on, Put saves nothing and returns a *ConflictError
	// (errors.Is(err, ErrConflict)). cp.ParentID may be any checkpoint of the
	// thread, not only expect: a Put whose parent is an older checkpoint
	// forks the thread from that point and leaves the existing history as it
	// was.
	//
	// A channel listed in cp.Versions without a Blob must hold the same
	// version in the parent checkpoint; its stored value is shared, not
	// copied. If cp.ID is empty Put assigns one with NewID, and if
	// cp.CreatedAt is zero Put sets it to the current time; both are written
	// back into cp.
	//
	// writes, when not empty, are saved as the pending writes of cp itself,
	// in the same atomic operation: after a crash either the checkpoint and
	// all its writes are stored or neither is. The engine uses it to save a
	// paused step: the checkpoint listing the interrupts together with the
	// writes of the tasks that finished and the resume values they used.
	Put(ctx context.Context, expect string, cp *Checkpoint, blobs []Blob, writes []Write) error

	// PutWrites records the writes of tasks that finished during the step
	// that starts from checkpoint checkpointID, so that a resumed run applies
	// them instead of running those tasks again. The writes are grouped by
	// TaskID: for every task named in writes, the writes stored earlier for
	// that task at that checkpoint are replaced, which makes retries
	// idempotent. It returns an error wrapping ErrNotFound if the checkpoint
	// does not exist.
	PutWrites(ctx context.Context, threadID, checkpointID string, writes []Write) error

	// Get loads checkpoint checkpointID of the thread, or the thread's latest
	// checkpoint if checkpointID is "", with what is needed to rebuild every
	// channel's value and the pending writes recorded against it. It returns
	// an error wrapping ErrNotFound if there is no such checkpoint.
	Get(ctx context.Context, threadID, checkpointID string) (*Snapshot, error)

	// List returns the thread's checkpoints, newest (most recently saved)
	// first, as selected by opts. A thread without checkpoints gives an
	// empty list; an opts.Before that names no checkpoint of the thread gives
	// an error wrapping ErrNotFound.
	List(ctx context.Context, threadID string, opts ListOptions) ([]Checkpoint, error)

	// DeleteThread deletes every checkpoint, blob and pending write of the
	// thread. Deleting a thread that does not exist is not an error. It
	// takes any thread ID, without ValidateID's rule, so that a thread an
	// earlier release stored under a longer ID can still be deleted.
	DeleteThread(ctx context.Context, threadID string) error
}

// Checkpoint describes a thread's state after one super-step. The channel
// values themselves are not part of it: they live in blobs shared between
// checkpoints, and a Snapshot carries them.
type Checkpoint struct {
	// ThreadID names the thread (a conversation, a job) the checkpoint
	// belongs to. Required: UTF-8 text without NUL bytes, at most
	// MaxIDLen bytes, as every ID and name of a checkpoint (ValidateID).
	ThreadID string
	// ID identifies the checkpoint within its thread. Put assigns one with
	// NewID when it is empty.
	ID string
	// ParentID is the checkpoint this one was computed from; "" for the
	// first checkpoint of a thread. After Prune the parent may no longer
	// exist.
	ParentID string
	// Step is the number of the super-step that produced the checkpoint.
	Step int
	// Versions holds the version of every channel current at this
	// checkpoint. A channel absent from Versions holds no value.
	Versions map[string]uint64
	// Ran lists the nodes that ran in the step.
	Ran []string
	// Next lists the tasks scheduled for the next step.
	Next []Task
	// Interrupts lists the interrupts the run is waiting on.
	Interrupts []Interrupt
	// Metadata holds free-form labels (the source of the checkpoint, a user
	// id). List can filter on them.
	Metadata map[string]string
	// CreatedAt is when the checkpoint was made. Put sets it when zero.
	CreatedAt time.Time
}

// Task is a unit of work scheduled for a step: a node to run, with its own
// input when the task was sent to the node rather than triggered by the
// state.
type Task struct {
	// ID identifies the task within its step; pending writes refer to it.
	ID string
	// Node is the node the task runs.
	Node string
	// Input is the task's encoded input; nil when the node reads the state.
	// A waiting trigger (a Task with an empty ID: the node is triggered
	// but waits for a later step) may carry package graph's record of the
	// edges that triggered it instead.
	Input []byte
}

// Interrupt is a pause requested by a node, waiting for a value to resume
// with.
type Interrupt struct {
	// ID identifies the interrupt; a resume value names it.
	ID string
	// Node is the node that asked for the interrupt.
	Node string
	// TaskID is the task that was running the node.
	TaskID string
	// Payload is the encoded value the node handed to the caller.
	Payload []byte
}

// Kind says how a Blob's data relates to its channel's value.
type Kind uint8

const (
	// Full data is the channel's whole value.
	Full Kind = iota + 1
	// Delta data is a change to apply to the channel's previous value (for
	// example the items appended by an append reducer). A Delta for a
	// channel that held no value applies to the channel's empty value.
	Delta
)

// String returns "full" or "delta".
func (k Kind) String() string {
	switch k {
	case Full:
		return "full"
	case Delta:
		return "delta"
	}
	return "Kind(" + strconv.Itoa(int(k)) + ")"
}

// Blob is the stored value of one channel at the version the checkpoint
// being put gives it.
type Blob struct {
	// Channel names the channel; it must be a key of the checkpoint's
	// Versions.
	Channel string
	// Kind says whether Data is the whole value or a change to the previous
	// one.
	Kind Kind
	// Data is the encoded value or change.
	Data []byte
}

// Channel is what a Snapshot holds for one channel: the value at the
// checkpoint's version is Base with Deltas applied in order.
type Channel struct {
	// Base is the latest whole value at or before the version; nil when the
	// deltas apply to the channel's empty value.
	Base []byte
	// Deltas are the changes written after Base, oldest first.
	Deltas [][]byte
}

// Write is one channel write of a task, stored against the checkpoint its
// step started from.
type Write struct {
	// TaskID names the task that made the write.
	TaskID string
	// Node is the node the task ran.
	Node string
	// Channel is the channel written.
	Channel string
	// Value is the encoded value written.
	Value []byte
}

// Snapshot is a loaded checkpoint: its description, the stored data of every
// channel in its Versions, and the pending writes recorded against it.
type Snapshot struct {
	Checkpoint
	// Channels maps every channel of Checkpoint.Versions to its data.
	Channels map[string]Channel
	// Writes are the pending writes recorded against the checkpoint, in the
	// order they were recorded (a task's writes in the order given).
	Writes []Write
}

// ListOptions selects the checkpoints List returns.
type ListOptions struct {
	// Before, when set, returns only checkpoints older than the checkpoint
	// with this ID: pass the last ID of a page to get the next page.
	Before string
	// Limit caps the number of checkpoints returned; 0 means no cap.
	Limit int
	// Metadata, when set, returns only checkpoints whose Metadata holds every
	// one of these key-value pairs.
	Metadata map[string]string
}

// ChainStats describes the delta chain of one channel: the full value it
// starts from and the deltas written after it. The engine keeps one per
// delta channel to decide when to write a full value.
type ChainStats struct {
	// FullBytes is the size of the chain's full value; 0 when the deltas
	// apply to the empty value.
	FullBytes int
	// DeltaBytes is the total size of the deltas after the full value.
	DeltaBytes int
	// Deltas is the number of deltas after the full value.
	Deltas int
}

// Stats returns the chain statistics of a loaded channel.
func (c Channel) Stats() ChainStats {
	s := ChainStats{FullBytes: len(c.Base), Deltas: len(c.Deltas)}
	for _, d := range c.Deltas {
		s.DeltaBytes += len(d)
	}
	return s
}

// NeedsFull reports whether the channel's next blob should be a full value:
// once the deltas written since the last full value take at least as many
// bytes as it (or, with no full value yet, once there is a delta). Following
// it, full values at least double each time, so all the full values of a
// thread take at most about twice the size of the final value and total
// storage stays proportional to the data written, however long the thread;
// loading a channel reads at most about twice its size. There is no cap on
// the number of deltas: a cap would force a full value every so many steps
// and make storage grow with the square of the steps on long threads.
func (s ChainStats) NeedsFull() bool {
	return s.Deltas > 0 && s.DeltaBytes >= s.FullBytes
}

// Add records that a blob of the given kind and size was written.
func (s *ChainStats) Add(kind Kind, size int) {
	if kind == Full {
		*s = ChainStats{FullBytes: size}
		return
	}
	s.Deltas++
	s.DeltaBytes += size
}
