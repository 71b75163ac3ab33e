// Package document gives a conversation documents to draw on: a user
// uploads a text file, it is cut into overlapping chunks and summarized by
// a language model in the background, and the model that answers sees the
// summaries and loads the documents, or their most relevant chunks, that a
// question needs.
//
// # Model
//
// A [Document] is metadata (conversation, name, content type, size,
// status, summary); its original content and its [Chunk]s sit beside it in
// a [Store]. A document moves through four statuses:
//
//	pending ──► processing ──► ready
//	                     └───► failed (Document.Error says why)
//
// [Processor.Upload] validates an [Upload] against the [Limits] (size,
// content type, UTF-8, documents per conversation), stores it as pending,
// queues it and returns at once. A worker then marks it processing, cuts
// its content with the [Chunker], asks the [Summarizer] for a summary of
// every chunk (several at once, see Config.Concurrency) and combines the
// chunk summaries into the document's summary (map-reduce, in rounds for
// long documents), and stores summary and chunks in one step that marks
// the document ready. Any failure marks it failed with an error naming the
// stage ("summarize chunk 3 of 12: ..."); nothing is dropped silently, and
// [Processor.Process] runs a failed document again. A full queue refuses
// an upload with [ErrQueueFull] before storing anything. [Processor.Close]
// drains the queue or, when its context ends first, marks what it cut
// short failed. [Processor.Wait] waits for a document to finish, and
// Config.OnChange reports every status change, for events or metrics.
//
// # Chunks
//
// Sizes are estimated tokens of four bytes each ([EstimateTokens], the
// same rule as the memory package), so a chunk of 1000 tokens holds at
// most 4000 bytes. A chunk ends at a paragraph break if it can, else at a
// line break, a sentence end or a space, never inside a character, and the
// next chunk repeats about Overlap tokens of its end, so that a sentence
// cut at a boundary is whole in one of them. Chunk offsets are given in
// bytes and in runes, and chunk i's Text is content[Start:End].
//
// # Context for a model
//
// [Overview] and [Describe] render a conversation's documents as one line
// each, with status and summary: what a model reads to decide which
// document to load. [Load] returns a ready document's chunks, all or those
// most relevant to a query (a word-overlap ranking, no embeddings), within
// a token budget. [ContextSource] serves both to a memory.Assembler as
// documents.summaries and documents.load(ID).
//
// # Storage
//
// [MemoryStore] keeps documents in memory, document/sqlite in an SQLite
// file, document/postgres in PostgreSQL. Package documenttest checks any
// [Store] against the contract.
//
// # Not supported
//
// Only text formats are accepted (see [DefaultContentTypes]): PDF, Word,
// HTML and images need an extractor and must be converted to text before
// upload; package document/pdf converts a PDF upload (pdf.Extractor.Upload). Relevance ranking is lexical, without embeddings. Documents a
// crash left pending or processing are not picked up by themselves: call
// [Processor.Resume] when the service starts.
package document
