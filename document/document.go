package document

import (
	"time"
)

// Status is where a document is in the processing pipeline.
type Status string

// The statuses of a document, in the order it passes through them. A
// document ends ready or failed; [Processor.Process] sends a failed one
// through the pipeline again.
const (
	// StatusPending: uploaded and stored, waiting for a worker.
	StatusPending Status = "pending"
	// StatusProcessing: a worker is chunking and summarizing it.
	StatusProcessing Status = "processing"
	// StatusReady: chunked and summarized; its chunks can be loaded.
	StatusReady Status = "ready"
	// StatusFailed: processing failed; Document.Error says why.
	StatusFailed Status = "failed"
)

// Done reports whether s is final: ready or failed.
func (s Status) Done() bool { return s == StatusReady || s == StatusFailed }

// Valid reports whether s is one of the four statuses.
func (s Status) Valid() bool {
	switch s {
	case StatusPending, StatusProcessing, StatusReady, StatusFailed:
		return true
	}
	return false
}

// Document is an uploaded document's metadata. Its content and chunks are
// kept beside it in the [Store].
type Document struct {
	// ID names the document; unique in its store.
	ID string
	// ConversationID is the conversation the document belongs to; only
	// that conversation's context sees it.
	ConversationID string
	// Owner optionally names who uploaded it (a user id); the package
	// stores it and does not interpret it.
	Owner string
	// Name is the file name the user gave, e.g. "pricing.md".
	Name string
	// ContentType is the media type without parameters, e.g. "text/plain".
	ContentType string
	// Size is the content's length in bytes.
	Size int64
	// Status is where the document is in the pipeline.
	Status Status
	// Error says why processing failed; empty unless Status is
	// [StatusFailed].
	Error string
	// Summary is the summary of the whole document; empty until ready.
	Summary string
	// Chunks is the number of chunks; 0 until ready.
	Chunks int
	// Tokens is the estimated token count of the content (four bytes per
	// token, see [EstimateTokens]).
	Tokens int
	// Created is when the document was uploaded.
	Created time.Time
	// Updated is when its status last changed.
	Updated time.Time
}

// Chunk is one piece of a document's content, cut by a [Chunker].
// Consecutive chunks overlap, so Text of chunk i+1 starts before the end of
// chunk i.
type Chunk struct {
	// Index is the chunk's position in the document, from 0.
	Index int
	// Text is content[Start:End].
	Text string
	// Start and End are the byte offsets of Text in the content.
	Start, End int
	// RuneStart and RuneEnd are the same offsets counted in runes
	// (characters), for clients that index text by character.
	RuneStart, RuneEnd int
	// Tokens is the estimated token count of Text.
	Tokens int
	// Summary is the language model's summary of Text; empty until the
	// document is ready.
	Summary string
}

// Upload is a document as a client sends it, before validation.
type Upload struct {
	// ConversationID is the conversation the document belongs to.
	// Required.
	ConversationID string
	// Owner optionally names the uploader.
	Owner string
	// Name is the file name. Required.
	Name string
	// ContentType is the media type, e.g. "text/markdown" or
	// "text/plain; charset=utf-8". Empty means guess from Name's extension
	// (see [Limits.Check]).
	ContentType string
	// Content is the document's bytes, UTF-8 text.
	Content []byte
}

// EstimateTokens is the package's token estimate: one token per four bytes
// of UTF-8, rounded up; the same rule as memory.EstimateTokens, so that
// chunk sizes and context budgets agree.
func EstimateTokens(s string) int { return (len(s) + 3) / 4 }
