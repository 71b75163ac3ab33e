package checkpoint

import (
	"errors"
	"fmt"
)

var (
	// ErrNotFound reports that a thread, checkpoint or parent checkpoint does
	// not exist.
	ErrNotFound = errors.New("checkpoint: not found")
	// ErrConflict reports that another writer moved the thread on since the
	// caller read it. The error is a *ConflictError.
	ErrConflict = errors.New("checkpoint: conflict")
	// ErrInvalid reports a malformed request; the error's text names the
	// field and the fix.
	ErrInvalid = errors.New("checkpoint: invalid request")
	// ErrCorrupt reports stored data that no Put could have written: a
	// delta chain that loops or refers to a newer blob, a blob of unknown
	// kind, a missing blob, a record that does not decode. The error is a
	// *CorruptError.
	ErrCorrupt = errors.New("checkpoint: corrupt")
)

// CorruptError is returned when a checkpoint's stored data is damaged (by a
// failing disk, a faulty migration, or a hand edit of the database), so that
// the checkpoint cannot be loaded. errors.Is(err, ErrCorrupt) reports true
// for it. Loading never follows damaged data further than the checkpoint's
// own records: a corrupt checkpoint fails at once, without reading or
// allocating more than a sound one would.
type CorruptError struct {
	// ThreadID is the thread of the damaged checkpoint.
	ThreadID string
	// CheckpointID is the damaged checkpoint; "" when the damage could not
	// be traced to one checkpoint of the thread.
	CheckpointID string
	// Err says what is damaged, naming the channel where there is one. It
	// numbers checkpoints (#n) by their position in the thread, counting
	// from 1 in the order they were saved.
	Err error
}

// Error names the checkpoint, the damage and what to do about it.
func (e *CorruptError) Error() string {
	const fix = "restore the database from a backup, or go on from an earlier checkpoint of the thread, or delete the thread"
	if e.CheckpointID == "" {
		return fmt.Sprintf("checkpoint: thread %q is corrupt: %v; %s", e.ThreadID, e.Err, fix)
	}
	return fmt.Sprintf("checkpoint: thread %q checkpoint %q is corrupt: %v; %s", e.ThreadID, e.CheckpointID, e.Err, fix)
}

// Is reports whether target is ErrCorrupt.
func (e *CorruptError) Is(target error) bool { return target == ErrCorrupt }

// Unwrap returns the description of the damage.
func (e *CorruptError) Unwrap() error { return e.Err }

// ConflictError is returned by Put when the thread's latest checkpoint is not
// the one the caller expected. errors.Is(err, ErrConflict) reports true for
// it.
type ConflictError struct {
	// ThreadID is the thread written to.
	ThreadID string
	// Expected is the checkpoint the caller expected to be the latest; ""
	// means it expected a new thread.
	Expected string
	// Actual is the thread's latest checkpoint at the time of the Put; ""
	// means the thread has no checkpoint (it never had one, or it was
	// deleted).
	Actual string
}

// Error describes the conflict and what to do about it.
func (e *ConflictError) Error() string {
	return fmt.Sprintf("checkpoint: thread %q was moved on by another writer: expected latest checkpoint %q, found %q; load the thread again and retry from its latest checkpoint",
		e.ThreadID, e.Expected, e.Actual)
}

// Is reports whether target is ErrConflict.
func (e *ConflictError) Is(target error) bool { return target == ErrConflict }

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{ErrInvalid}, args...)...)
}

// NotFoundError returns an error wrapping ErrNotFound that names what is
// missing. Backends use it so that every Saver words the error the same way.
func NotFoundError(threadID, checkpointID string) error {
	return &notFoundError{threadID, checkpointID}
}

// notFoundError formats its message only when asked: a run on a new thread
// starts with a Get that fails, and should not pay for the text.
type notFoundError struct{ thread, id string }

func (e *notFoundError) Error() string {
	if e.id == "" {
		return fmt.Sprintf("%v: thread %q has no checkpoint", ErrNotFound, e.thread)
	}
	return fmt.Sprintf("%v: thread %q has no checkpoint %q", ErrNotFound, e.thread, e.id)
}

func (e *notFoundError) Unwrap() error { return ErrNotFound }

// ValidatePut checks the parts of a Put request that do not depend on what
// is stored: a thread ID, distinct IDs, and one well-formed Blob per changed
// channel, each naming a channel of cp.Versions. Backends call it first; the
// error wraps ErrInvalid and names the field to fix.
func ValidatePut(expect string, cp *Checkpoint, blobs []Blob, writes []Write) error {
	if cp == nil {
		return invalid("Put: the checkpoint is nil")
	}
	if cp.ThreadID == "" {
		return invalid("Put: Checkpoint.ThreadID is empty; set it to the thread's ID")
	}
	if cp.ID != "" && cp.ID == cp.ParentID {
		return invalid("Put: Checkpoint.ID %q equals its ParentID; leave ID empty to get a new one", cp.ID)
	}
	if cp.ID != "" && cp.ID == expect {
		return invalid("Put: Checkpoint.ID %q is the expected latest checkpoint's ID; leave ID empty to get a new one", cp.ID)
	}
	for ch := range cp.Versions {
		if ch == "" {
			return invalid("Put: Checkpoint.Versions has an empty channel name")
		}
	}
	for i, b := range blobs {
		if b.Channel == "" {
			return invalid("Put: blobs[%d].Channel is empty; name the channel the blob holds", i)
		}
		if _, ok := cp.Versions[b.Channel]; !ok {
			return invalid("Put: blobs[%d].Channel %q is not in Checkpoint.Versions; add the channel's new version to Versions", i, b.Channel)
		}
		if b.Kind != Full && b.Kind != Delta {
			return invalid("Put: blobs[%d].Kind is %v; use checkpoint.Full or checkpoint.Delta", i, b.Kind)
		}
	}
	if err := validateWrites("Put", writes); err != nil {
		return err
	}
	if len(blobs) <= 16 {
		for i := range blobs {
			for j := i + 1; j < len(blobs); j++ {
				if blobs[i].Channel == blobs[j].Channel {
					return invalid("Put: two blobs for channel %q; pass one blob per changed channel", blobs[i].Channel)
				}
			}
		}
		return nil
	}
	seen := make(map[string]struct{}, len(blobs))
	for _, b := range blobs {
		if _, dup := seen[b.Channel]; dup {
			return invalid("Put: two blobs for channel %q; pass one blob per changed channel", b.Channel)
		}
		seen[b.Channel] = struct{}{}
	}
	return nil
}

// ValidateWrites checks a PutWrites request: IDs present and every write
// naming its task and channel.
func ValidateWrites(threadID, checkpointID string, writes []Write) error {
	if threadID == "" {
		return invalid("PutWrites: the thread ID is empty")
	}
	if checkpointID == "" {
		return invalid("PutWrites: the checkpoint ID is empty; name the checkpoint the step started from")
	}
	return validateWrites("PutWrites", writes)
}

// validateWrites checks that every write names its task and channel.
func validateWrites(op string, writes []Write) error {
	for i, w := range writes {
		if w.TaskID == "" {
			return invalid("%s: writes[%d].TaskID is empty; name the task that made the write", op, i)
		}
		if w.Channel == "" {
			return invalid("%s: writes[%d].Channel is empty; name the channel written", op, i)
		}
	}
	return nil
}
