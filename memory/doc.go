// Package memory holds what an agent knows during a conversation turn: the
// conversation so far, the results and actions of the current turn, and the
// context assembler that turns them into the focused context each component
// asks for.
//
// # Conversations
//
// [Conversations] keeps, for each conversation id, the last Window messages
// verbatim (5 by default) and a running summary of everything older. The
// messages themselves live in a [Store]: an append-only log per conversation
// in which every message gets a sequence number, plus the summary and the
// sequence number of the last message it covers. Nothing is ever deleted from
// the log by summarizing, so [Conversations.History] can always show the
// whole conversation.
//
// When an append pushes messages out of the window, the [Summarizer] folds
// all of them, in one call, into the previous summary; it does not run on
// turns where nothing left the window, and ConversationConfig.MinBatch can
// make it wait for a larger batch. [LLMSummarizer] asks any
// [github.com/agentgraph/agentgraph/agent/model.Model] to do it. If the summarizer fails,
// nothing is lost: the append has already been stored, Append reports a
// [*SummarizeError] saying so, the messages wait in [View.Pending] (and
// appear verbatim in the assembled summary), and the next append tries
// again. Messages are never folded twice: within a process, summarizing a
// conversation is serialized, and across processes the store saves a summary
// only if no one else saved one since it was read ([ErrSummaryConflict]).
//
// Stores: [NewInMemoryStore] here; the packages
// [github.com/agentgraph/agentgraph/memory/sqlite] (pure-Go SQLite) and
// [github.com/agentgraph/agentgraph/memory/postgres] (PostgreSQL through pgx)
// persist conversations; [github.com/agentgraph/agentgraph/memory/memorytest]
// checks any Store, your own included, against the contract.
//
// # Long-term memory
//
// [Items] keeps what outlives a conversation: JSON objects filed under a
// namespace, a path of labels such as ["users", "u42", "prefs"], and a key.
// It is the store behind LangGraph's Store API. A [Record] may carry a TTL
// after which it is no longer visible; reads can refresh it. [Items.Search]
// finds records under a namespace prefix whose value passes a filter on its
// top-level fields (equality, or $eq, $ne, $gt, $gte, $lt, $lte on strings,
// numbers, booleans and null) and, optionally, a plain text match; results
// are ordered by namespace then key and paged with Limit and Offset.
// [Items.Namespaces] lists the namespaces in use. Arguments are checked the
// same way by every store, and a bad one is a [*ValidationError] naming the
// field.
//
// Stores: [NewInMemoryItems] here (bounded by InMemoryItemsConfig.MaxRecords);
// NewItems in the sqlite and postgres packages; memorytest.RunItems checks any
// implementation.
//
// # The current turn
//
// A [Turn] carries the user's query, a [Results] store for the outputs of
// workflow steps and tool calls by id, and an [Actions] history of what the
// agent did (kind, name, status, timing). Both are safe for concurrent use by
// steps running in parallel.
//
// # Context assembly
//
// Components declare what they need as requirement strings; an [Assembler]
// fetches each from the source registered under its name and returns an
// [Assembled] context that fits a token budget. The built-in requirements:
//
//	query                    the user's query for this turn (never trimmed)
//	conversation.recent(N)   the last N messages (N omitted: the window)
//	conversation.summary     the summary of older messages, then any not yet summarized
//	tools.summaries          every tool with its short description
//	tools.schema(NAME)       the full schema of tool NAME
//	results.step(ID)         the output of workflow step or tool call ID this turn
//	results.all              every result this turn
//	actions.this_turn        every action this turn, with status and timing
//
// "conversation" needs AssemblerConfig.Conversations and "tools" needs
// AssemblerConfig.Tools, an interface the tool catalogue implements. Any other
// source is registered by name with [Assembler.Register]; a [Source] checks the
// requirements it is given ([Assembler.Check] validates requirement lists
// up front) and fetches their content.
//
// The grammar, with optional spaces or tabs around the whole requirement and
// inside the parentheses:
//
//	requirement = source [ "." method [ "(" argument ")" ] ]
//	source      = identifier
//	method      = identifier
//	identifier  = ( letter | "_" ) { letter | digit | "_" }
//	argument    = 1*( letter | digit | "_" | "." | "-" | ":" | "/" | "@" )
//
// A string that does not match is a [*SyntaxError] giving the byte offset of
// the problem and what the parser expected there.
//
// # Token budget and trimming
//
// Sizes are estimates: [EstimateTokens] counts four bytes of UTF-8 per token,
// which is close for English and code and needs no tokenizer files (set
// AssemblerConfig.Estimate to use a real tokenizer). The default budget is
// 4000 tokens. When the context is larger, whole items (a message, a result,
// an action, a tool line) are removed, oldest first, from the least important
// parts first, in this order:
//
//  1. conversation.summary ([PriorityHistory])
//  2. conversation.recent(N) ([PriorityRecent])
//  3. tools.summaries ([PriorityCatalog])
//  4. actions.this_turn and results.all ([PriorityTurn])
//  5. results.step(ID) and tools.schema(NAME) ([PriorityRequested])
//
// Among parts of equal priority, the one requested last goes first. The query
// ([PriorityPinned]) is never trimmed. [Assembled.Trimmed] reports every
// removal.
package memory
