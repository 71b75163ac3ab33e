// Package cognition gives an agent a memory of its users and of itself
// across conversations: a profile of each user, episodic memories, the
// agent's own identity and metrics, and a meta-monitor of recent turns.
//
// # Two paths
//
// A [Service] has a fast read path and a slow learning path, so that
// learning never delays an answer.
//
// Before a turn, [Service.Context] loads a [CognitiveContext] for the user
// and the query from the [Store]: the user's [Profile], the [Episode]
// values most relevant to the query, and the agent's [Identity]. It makes
// no model call, is bounded by Config.ContextTimeout (100 ms by default),
// and on failure still returns what it loaded, so a turn can go on without
// cognition. [CognitiveContext.Render] formats it for a prompt, and
// [Service.Source] serves it to a memory.Assembler as the requirements
// cognition.profile, cognition.memories(N) and cognition.identity.
//
// After a turn, [Service.Observe] records the [Interaction] with the
// [Monitor] and queues its learning on a bounded background [Queue], then
// returns. A worker asks the [Learner] (usually an [LLMLearner], which
// calls a model through agent.Call and validates the reply) for a
// [Learning]: an update to the user's profile (expertise, style,
// interests, stated preferences), new episodes, and knowledge gaps. It
// then updates the profile, merges the episodes into the stored ones and
// updates the identity's metrics, each step atomically in the store. A
// failed task is retried (3 attempts by default) from the step that failed;
// a task that fails for good is logged, counted in [QueueStats] and handed
// to Config.OnFailure. A full queue refuses the turn with [ErrQueueFull]
// instead of blocking the request. [Service.Flush] waits until the turns
// observed so far have been learned from (tests, command-line tools);
// [Service.Close] stops accepting turns and waits for the queued ones.
//
// In an agent graph, the first node calls Context (a failure only logs and
// leaves the context empty) and keeps the result in the state; the
// node that prompts the model puts its Render, or the Source requirements, into its prompt;
// after the answer has been sent, the last node calls Observe with the
// turn's messages, outcome, latency, token usage and tool calls. The
// service is built once at start-up and closed on shutdown.
//
// # Episodes
//
// An episode is one or two sentences worth remembering about a user, with
// topics, an outcome, an importance from 0 to 1, and timestamps and an
// access count. A new episode whose [Similarity] to a stored one (of the
// same user) reaches Retention.DedupThreshold is merged into it rather than
// stored twice: the newer summary wins, topics are joined and importance
// rises a little. The default similarity, [TokenJaccard], compares
// normalised word sets and needs no service; any function, an embedding
// comparison for instance, can replace it.
//
// Retrieval ranks a user's episodes by 0.6 × lexical relevance (BM25 over
// summary and topics) + 0.2 × recency (halving every Retention.HalfLife
// since the episode was last learned or retrieved) + 0.2 × importance, and
// keeps only episodes sharing a word with the query unless the query has
// none. The first [MaxQueryTerms] distinct words of a query count, so that
// a long query costs time linear in its length. Each learning step also prunes: episodes unseen for Retention.TTL
// (90 days) go, and beyond Retention.MaxPerUser (100) those with the
// lowest importance weighed by recency.
//
// Episodes and profiles are stored per user ID, and nothing of one user is
// ever read for another: isolation is part of the [Store] contract.
//
// # Identity and the meta-monitor
//
// The [Identity] of an agent (named by Config.Agent) holds its goals and
// core values (Config.Goals and Config.Values), the
// topics it failed users on, and [Metrics] over every learned turn; it is
// persisted with the rest. The [Monitor] is in-process: it keeps counters
// and a window of recent turns (success rate, latency percentiles, token
// usage, per-tool failures) and flags a [Pattern] when a tool fails
// repeatedly, a user's turns keep failing, the failure rate is high or
// turns are slow. [Monitor.Confidence] scores from 0 to 1 how likely the
// next turn (with a given user) is to succeed.
//
// Config.Disabled turns components off one by one: all of cognition, the
// user profiles (theory of mind), episodic memory, or the identity.
//
// # Stores
//
// [NewInMemoryStore] keeps everything in memory. Packages
// [github.com/agentgraph/agentgraph/cognition/sqlite] (pure-Go SQLite) and
// [github.com/agentgraph/agentgraph/cognition/postgres] (PostgreSQL through
// pgx) persist it; package
// [github.com/agentgraph/agentgraph/cognition/cognitiontest] checks any
// [Store] against the contract. Updates are atomic read-modify-write
// operations, so several processes may share one database.
//
// # Background learning
//
// By default turns are learned from an in-process [Queue]: turns still
// queued when a process dies are not learned from (call Close on
// shutdown). Set Config.Tasks to a durable [TaskQueue] (the SQLite and
// PostgreSQL stores are ones, in table cognition_tasks) and each turn is a
// row that a worker claims with a lease: a task claimed by a process that
// died is claimed again when its lease ends, several processes share the
// work without taking one task twice, and a task that failed
// Config.TaskAttempts times is kept in a dead state, counted by
// [Service.TaskCounts]. Delivery is at least once: a process that dies
// after learning a turn but before completing its task has it learned
// again.
package cognition
