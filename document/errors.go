package document

import (
	"errors"
	"fmt"
)

// Conditions a caller branches on with [errors.Is].
var (
	// ErrNotFound is returned for a document id the store does not hold.
	ErrNotFound = errors.New("document: not found")
	// ErrExists is returned by [Store.Create] for an id the store already
	// holds.
	ErrExists = errors.New("document: a document with this id already exists")
	// ErrInvalid is matched by every [*ValidationError]: an upload the
	// limits reject.
	ErrInvalid = errors.New("document: invalid upload")
	// ErrTooMany is returned by [Store.Create] when the conversation
	// already holds the most documents allowed.
	ErrTooMany = errors.New("document: too many documents in the conversation")
	// ErrQuota is matched by every [*QuotaError]: a document that would
	// take its owner past [Quota.Owner].
	ErrQuota = errors.New("document: the owner's documents would pass the quota")
	// ErrNotReady is returned when chunks are asked for before the
	// document is ready.
	ErrNotReady = errors.New("document: not ready")
	// ErrQueueFull is returned by [Processor.Upload] and
	// [Processor.Process] when the processing queue is full.
	ErrQueueFull = errors.New("document: processing queue is full; retry later, or raise Config.Queue or Config.Workers")
	// ErrClosed is returned by a [Processor] after Close.
	ErrClosed = errors.New("document: processor is closed")
)

// ValidationError reports an upload that the [Limits] reject. It names the
// field at fault and says how to fix it, and matches [ErrInvalid].
type ValidationError struct {
	// Field is the [Upload] or [Document] field at fault: "ID",
	// "ConversationID", "Owner", "Name", "ContentType" or "Content".
	Field string
	// Problem says what is wrong and how to fix it.
	Problem string
}

// Error returns "document: invalid upload: Content: ...".
func (e *ValidationError) Error() string {
	return fmt.Sprintf("document: invalid upload: %s: %s", e.Field, e.Problem)
}

// Is reports whether target is [ErrInvalid].
func (e *ValidationError) Is(target error) bool { return target == ErrInvalid }

// QuotaError is [Store.Create]'s refusal of a document that would take its
// owner past [Quota.Owner]; it matches [ErrQuota].
type QuotaError struct {
	// Owner is the document's owner.
	Owner string
	// Field is the field of Quota.Owner the document would pass:
	// "Documents" or "Bytes".
	Field string
	// Limit is that field's value.
	Limit int64
	// Held is what the owner held before the document.
	Held Usage
	// Size is the document's size in bytes.
	Size int64
}

// Error names the bound passed by both its names: the [Limits] field a
// [Processor] is configured with and the [Quota] field a [Store] is
// given. For example "document: owner "u" holds 20 documents (81234
// bytes); one more would pass the limit of 20 documents per owner
// (Limits.MaxPerOwner, Quota.Owner.Documents); delete some first", or,
// for a document larger than the bound alone, "document: a document of
// 5000 bytes is too large for the quota of 1000 bytes per owner
// (Limits.MaxBytesPerOwner, Quota.Owner.Bytes); upload a smaller one or
// raise the limit".
func (e *QuotaError) Error() string {
	if e.Field == "Bytes" {
		if e.Size > e.Limit {
			return fmt.Sprintf("document: a document of %d bytes is too large for the quota of %d bytes per owner (Limits.MaxBytesPerOwner, Quota.Owner.Bytes); upload a smaller one or raise the limit",
				e.Size, e.Limit)
		}
		return fmt.Sprintf("document: owner %q holds %d documents (%d bytes); one more of %d bytes would pass the limit of %d bytes per owner (Limits.MaxBytesPerOwner, Quota.Owner.Bytes); delete some first",
			e.Owner, e.Held.Documents, e.Held.Bytes, e.Size, e.Limit)
	}
	return fmt.Sprintf("document: owner %q holds %d documents (%d bytes); one more would pass the limit of %d documents per owner (Limits.MaxPerOwner, Quota.Owner.Documents); delete some first",
		e.Owner, e.Held.Documents, e.Held.Bytes, e.Limit)
}

// Is reports whether target is [ErrQuota].
func (e *QuotaError) Is(target error) bool { return target == ErrQuota }

// ProcessError is the error of a document whose processing failed; its
// text is what Document.Error holds.
type ProcessError struct {
	// DocumentID names the document.
	DocumentID string
	// Stage is "chunk", "summarize chunk N", "summarize document" or
	// "store".
	Stage string
	// Err is the cause.
	Err error
}

// Error returns "document: process "ID": summarize chunk 3: <Err>".
func (e *ProcessError) Error() string {
	return fmt.Sprintf("document: process %q: %s: %v", e.DocumentID, e.Stage, e.Err)
}

// Unwrap returns Err.
func (e *ProcessError) Unwrap() error { return e.Err }
