package checkpoint

import (
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"
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

// MaxIDLen is the most bytes a thread ID, checkpoint ID, task ID, interrupt
// ID, channel name or node name may have. PostgreSQL indexes thread IDs
// with checkpoint IDs, channels and task IDs, and an index entry holds at
// most about 2.7 KB; every Saver refuses a longer name alike, so that a
// thread that works with Memory works with every backend.
const MaxIDLen = 1024

// idRule is what an ID must be, for error messages.
const idRule = "use valid UTF-8 without NUL bytes, at most %d bytes (checkpoint.MaxIDLen)"

// badText returns why s cannot be stored as given by every Saver (it is not
// valid UTF-8, which JSON columns replace, or holds a NUL byte, which
// PostgreSQL's text and jsonb refuse), or "" when it can.
func badText(s string) string {
	if i := strings.IndexByte(s, 0); i >= 0 {
		return fmt.Sprintf("holds a NUL byte at offset %d", i)
	}
	if !utf8.ValidString(s) {
		return "is not valid UTF-8"
	}
	return ""
}

// badID is badText, and also refuses a value longer than MaxIDLen. IDs
// are short and most often ASCII: one pass over the bytes finds them
// sound.
func badID(s string) string {
	if len(s) > MaxIDLen {
		return fmt.Sprintf("is %d bytes long", len(s))
	}
	const lo, hi = 0x0101010101010101, 0x8080808080808080
	i := 0
	for ; i+8 <= len(s); i += 8 {
		// A byte of x is 0 or above 0x7f when this is not 0.
		x := uint64(s[i]) | uint64(s[i+1])<<8 | uint64(s[i+2])<<16 | uint64(s[i+3])<<24 |
			uint64(s[i+4])<<32 | uint64(s[i+5])<<40 | uint64(s[i+6])<<48 | uint64(s[i+7])<<56
		if (x|(x-lo)&^x)&hi != 0 {
			return badText(s)
		}
	}
	for ; i < len(s); i++ {
		if c := s[i]; c == 0 || c >= utf8.RuneSelf {
			return badText(s)
		}
	}
	return ""
}

// invalidID returns the error for value, field of op, refused for why.
func invalidID(op, field, value, why string) error {
	return invalid("%s: %s %s %s; "+idRule, op, field, quoteClipped(value), why, MaxIDLen)
}

// quoteClipped quotes s, or its first 32 bytes followed by "...", so that
// an error does not repeat a megabyte-long ID.
func quoteClipped(s string) string {
	const most = 32
	if len(s) > most {
		return fmt.Sprintf("%q...", s[:most])
	}
	return fmt.Sprintf("%q", s)
}

// ValidateID checks value, the field of op (as an error should name it,
// say "Checkpoint.ThreadID"), against what every Saver stores as given:
// valid UTF-8 without NUL bytes, at most MaxIDLen bytes. The empty string
// passes; whether it is allowed is the caller's check. The error wraps
// ErrInvalid and names op, field and the limit. ValidatePut and
// ValidateWrites check every ID of a write with it; backends check with it
// the IDs that Get, List (and ListOptions.Before), PutWrites,
// PatchMetadata, CopyThread and Usage name, so that an ID no Put accepts
// is refused with ErrInvalid by every Saver alike. DeleteThread and
// Retention.ThreadID do not apply it: a thread stored by a release without
// the limit can still be deleted.
func ValidateID(op, field, value string) error {
	if why := badID(value); why != "" {
		return invalidID(op, field, value, why)
	}
	return nil
}

// validateCopy checks the thread IDs of a CopyThread: two different,
// non-empty IDs that pass ValidateID.
func validateCopy(from, to string) error {
	if from == "" || to == "" || from == to {
		return invalid("CopyThread: from %s and to %s must be two different thread ids", quoteClipped(from), quoteClipped(to))
	}
	if err := ValidateID("CopyThread", "from", from); err != nil {
		return err
	}
	return ValidateID("CopyThread", "to", to)
}

// validateList checks the thread ID and options of a List or
// ListSnapshots: the thread ID and opts.Before with ValidateID, and
// opts.Metadata with ValidateMetadata.
func validateList(threadID string, opts ListOptions) error {
	if err := ValidateID("List", "the thread ID", threadID); err != nil {
		return err
	}
	if err := ValidateID("List", "ListOptions.Before", opts.Before); err != nil {
		return err
	}
	return ValidateMetadata("List", "ListOptions.Metadata", opts.Metadata)
}

// ValidateMetadata checks the keys and values of md, the field of op:
// valid UTF-8 without NUL bytes, as ValidateID, but of any length. The
// error wraps ErrInvalid and names the key.
func ValidateMetadata(op, field string, md map[string]string) error {
	for k, v := range md {
		if why := badText(k); why != "" {
			return invalid("%s: %s has the key %s, which %s; use valid UTF-8 without NUL bytes", op, field, quoteClipped(k), why)
		}
		if why := badText(v); why != "" {
			return invalid("%s: %s[%s] %s; use valid UTF-8 without NUL bytes", op, field, quoteClipped(k), why)
		}
	}
	return nil
}

// ValidatePut checks the parts of a Put request that do not depend on what
// is stored: a thread ID, distinct IDs, and one well-formed Blob per changed
// channel, each naming a channel of cp.Versions, and that every ID and name
// passes ValidateID and the metadata ValidateMetadata. Backends call it
// first; the error wraps ErrInvalid and names the field to fix.
func ValidatePut(expect string, cp *Checkpoint, blobs []Blob, writes []Write) error {
	if cp == nil {
		return invalid("Put: the checkpoint is nil")
	}
	if cp.ThreadID == "" {
		return invalid("Put: Checkpoint.ThreadID is empty; set it to the thread's ID")
	}
	if err := validateIDs(expect, cp); err != nil {
		return err
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
		if why := badID(ch); why != "" {
			return invalidID("Put", "the channel of Checkpoint.Versions", ch, why)
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

// validateIDs checks expect and every ID and name of cp but its channels
// (ValidatePut's loop over Versions does) with badID, and its metadata with
// badText.
func validateIDs(expect string, cp *Checkpoint) error {
	for _, f := range [...]struct{ field, value string }{
		{"Checkpoint.ThreadID", cp.ThreadID}, {"Checkpoint.ID", cp.ID},
		{"Checkpoint.ParentID", cp.ParentID}, {"the expected checkpoint ID", expect},
	} {
		if why := badID(f.value); why != "" {
			return invalidID("Put", f.field, f.value, why)
		}
	}
	for i, n := range cp.Ran {
		if why := badID(n); why != "" {
			return invalidID("Put", fmt.Sprintf("Checkpoint.Ran[%d]", i), n, why)
		}
	}
	for i, t := range cp.Next {
		if why := badID(t.ID); why != "" {
			return invalidID("Put", fmt.Sprintf("Checkpoint.Next[%d].ID", i), t.ID, why)
		}
		if why := badID(t.Node); why != "" {
			return invalidID("Put", fmt.Sprintf("Checkpoint.Next[%d].Node", i), t.Node, why)
		}
	}
	for i, in := range cp.Interrupts {
		for _, f := range [...]struct{ field, value string }{{"ID", in.ID}, {"Node", in.Node}, {"TaskID", in.TaskID}} {
			if why := badID(f.value); why != "" {
				return invalidID("Put", fmt.Sprintf("Checkpoint.Interrupts[%d].%s", i, f.field), f.value, why)
			}
		}
	}
	return ValidateMetadata("Put", "Checkpoint.Metadata", cp.Metadata)
}

// ValidateWrites checks a PutWrites request: IDs present and passing
// ValidateID, and every write naming its task and channel.
func ValidateWrites(threadID, checkpointID string, writes []Write) error {
	if threadID == "" {
		return invalid("PutWrites: the thread ID is empty")
	}
	if checkpointID == "" {
		return invalid("PutWrites: the checkpoint ID is empty; name the checkpoint the step started from")
	}
	if err := ValidateID("PutWrites", "the thread ID", threadID); err != nil {
		return err
	}
	if err := ValidateID("PutWrites", "the checkpoint ID", checkpointID); err != nil {
		return err
	}
	return validateWrites("PutWrites", writes)
}

// validateWrites checks that every write names its task and channel, with
// IDs and names that pass ValidateID.
func validateWrites(op string, writes []Write) error {
	for i, w := range writes {
		if w.TaskID == "" {
			return invalid("%s: writes[%d].TaskID is empty; name the task that made the write", op, i)
		}
		if w.Channel == "" {
			return invalid("%s: writes[%d].Channel is empty; name the channel written", op, i)
		}
		for _, f := range [...]struct{ field, value string }{{"TaskID", w.TaskID}, {"Node", w.Node}, {"Channel", w.Channel}} {
			if why := badID(f.value); why != "" {
				return invalidID(op, fmt.Sprintf("writes[%d].%s", i, f.field), f.value, why)
			}
		}
	}
	return nil
}
