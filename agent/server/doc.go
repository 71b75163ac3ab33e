// Package server serves compiled graphs over LangGraph's Agent Server HTTP
// API, so that the official clients (the @langchain/langgraph-sdk JS and
// Python SDKs, and useStream in a browser) drive agentgraph graphs: threads,
// thread state and history, human-in-the-loop through interrupts, runs that
// stream, wait or run in the background, double-texting rules and streams
// that survive a dropped connection.
//
// A [Server] is an http.Handler to mount in the user's own server. Each
// graph registered with [Register] is served as one assistant, whose id is
// [AssistantID] of the graph id; clients may name it by either. Clients
// also create assistants of their own (POST /assistants, with a Store
// that is an [AssistantStore]): configured variants of a registered
// graph, with their own config, context, metadata and name, changed in
// versions; a run of one runs its graph with its config.configurable and
// context merged under the run's own (the run's keys win). Such an
// assistant belongs to the principal that created it, as a thread does,
// and a principal's are bounded by Config.MaxAssistants and
// Config.MaxAssistantBytes, each one's versions by
// [MaxAssistantVersions]. A client-given assistant_id must not be a
// version-5 UUID, the form of [AssistantID], so that no graph registered
// later, or on another instance, has a system assistant of the same id. Graphs are
// compiled with the server's checkpointer ([Server.Checkpointer]; Register
// refuses another) so that a thread's state lives in its checkpoints:
//
//	auth, err := server.APIKeys(keys) // principal by key; keys of 16 random bytes or more
//	if err != nil { ... }
//	srv, _ := server.New(server.Config{Authenticate: auth})
//	app, _ := g.Compile(graph.WithCheckpointer(srv.Checkpointer()))
//	_ = server.Register(srv, "agent", app)
//	http.Handle("/", srv)
//
// # What is served
//
// GET /ok and /info; POST /assistants (graph_id, assistant_id, config,
// context, metadata, name, description, if_exists), PATCH
// /assistants/{id} (a new version, metadata merged), DELETE
// /assistants/{id}?delete_threads= (the graphs' own cannot be deleted),
// POST /assistants/{id}/versions and /assistants/{id}/latest; POST
// /assistants/search (with sort_by, created_at
// when only sort_order is given, sort_order and select) and
// /assistants/count, GET
// /assistants/{id}, /assistants/{id}/graph?xray= (the graph's nodes and
// edges in LangGraph's graph JSON, from graph.Compiled.Topology: a
// node's declared routes, graph.Targets, are conditional edges; xray,
// true or a number of levels, draws subgraphs expanded, their nodes
// named subgraph:node), /assistants/{id}/schemas (JSON Schemas, by
// invopop/jsonschema, of the state type's JSON: input, of the fields
// clients may write, output and state; config and context are free
// objects) and /assistants/{id}/subgraphs[/{namespace}]?recurse= (the
// schemas of subgraphs by namespace, subgraph node names joined by
// "|"); POST /threads, /threads/search, /threads/count,
// /threads/prune (delete or keep_latest) and /threads/{id}/copy, GET,
// PATCH and DELETE /threads/{id}; GET /threads/{id}/state[/{checkpoint_id}], POST
// /threads/{id}/state (update, with as_node and checkpoint_id), PATCH
// /threads/{id}/state (labels in the metadata of the latest checkpoint,
// or of the one a rollback returned the thread to, with a checkpointer
// that is a checkpoint.MetadataPatcher; a label's value is a string, since
// a checkpoint's metadata holds string labels: another JSON value, or
// step, source, parents or __json_labels__, is refused with 422, and a
// thread with a run pending or running with 409; a label set over run
// metadata that held another JSON value reads back as the string), POST
// and GET
// /threads/{id}/history (newest first from the thread's current
// checkpoint: its latest, or the one a rollback returned it to); POST
// /threads/{id}/runs, /runs/stream and
// /runs/wait (and their stateless forms under /runs); GET
// /threads/{id}/runs, /runs/{run_id}, /runs/{run_id}/join and
// /runs/{run_id}/stream; DELETE /threads/{id}/runs/{run_id}; POST
// /threads/{id}/runs/{run_id}/cancel?action=interrupt|rollback&wait=0|1
// (a run that ended is left as it is, and the answer is the same); POST
// /runs/cancel?action=, with {thread_id, run_ids} or {status:
// pending|running|all}, cancels several of the caller's runs; GET
// /runs/{run_id}/stream joins a stateless run's stream.
//
// Runs follow the reference (Python) server rather than the JS dev server
// where they differ: multitask_strategy defaults to enqueue and reject
// answers 409; on_disconnect defaults to cancel; an unknown thread is 404;
// validation errors are 422 with a JSON body {"detail": ...} naming the
// field; streams send a Location header, heartbeats and a final end (or
// error) event; rollback deletes the run and returns the thread to the
// checkpoint the run started from. A run that resumes a paused step of
// several tasks first copies the checkpoint it resumes (an update
// checkpoint in the thread's history), so that the writes of the tasks it
// finishes are not saved against a checkpoint a rollback returns to. A
// rollback does not return a durable subgraph's own checkpoints
// (graph.SubgraphThread names them by the parent thread, the step and
// the task, not by the parent's checkpoint): a run that resumes, after a
// rollback, a step whose task was inside a subgraph the rolled-back run
// went on with finds the subgraph where that run left it.
//
// # Run requests
//
// New input on a thread paused at an interrupt (or a breakpoint), rather
// than a command.resume, does what LangGraph's Agent Server does: the
// pending step and its interrupts are dropped (the steps completed before
// it stay in the state) and the run starts from START with the input
// merged into the thread's state. Input for a checkpoint the request
// names (checkpoint_id, or checkpoint) that has pending tasks, a paused
// step or the next step of a past checkpoint a client branches from (as
// useStream does to edit or regenerate a message), supersedes them the
// same way: the tasks are dropped on a new branch from that checkpoint,
// which becomes the thread's latest, and the run starts from START with
// the input. A graph that must not lose an
// answer-awaiting step (an assistant message whose tool calls have no
// results yet) should be resumed, or have its state repaired, before new
// input. on_completion applies to stateless runs only (their thread is
// deleted at the end with delete, the default); a run on a thread keeps
// its thread, and its kwargs do not hold on_completion.
//
// A run's command may carry, besides resume, update and goto (LangGraph's
// Command given as a run's input, instead of input): update (an object of
// state fields, or a list of [field, value] pairs) merges into the state
// the run starts from through the fields' reducers, written by no node,
// so the next tasks and pending interrupts stay; goto (a node name, a Send
// {"node", "input"} to a task node of graph.AddTask, whose input decodes
// into the task's input type, or a list of them) adds tasks to the next
// step, beside the paused step a resume goes on with. goto is opt-in: a
// graph registered without [WithGoto] refuses it with 422, and one with it
// takes only the nodes it lists (a goto runs a node, a task node with the
// client's input, skipping what leads to it in the graph), and at most
// its MaxSends items. Both are saved as one update checkpoint before the graph runs; a
// command that leaves no next task takes no step. A node the graph does
// not have, or a field its state does not have, is refused with 422
// naming it and the valid ones.
//
// Besides input, command.resume, stream modes and the double-texting
// fields, a run request may carry context (LangGraph's runtime context,
// which the graph's nodes read with [RunContext], with the pairs of
// config.configurable under it), config.recursion_limit (the run's step
// limit, at most [MaxRecursionLimit]), config.max_concurrency (how many
// tasks of one step run at once, at most [MaxConcurrencyLimit]),
// config.run_name (kept in the run's kwargs, and given to the nodes as
// run_name in graph.ConfigFrom(ctx).Metadata), strict_resume (a
// command.resume that answers no interrupt of the checkpoint the run
// starts from, the one the request names, or the one a rollback returned
// the thread to, else the latest, is refused with 422, or, for a run queued behind others, fails with
// UnknownInterruptError when it starts, instead of being passed on as a
// value; an object is then read as answers by interrupt id; without
// strict_resume, a resume on a state that waits on no interrupt is
// ignored, as LangGraph ignores it: the run goes on with the pending step,
// or, on a finished thread, takes no step and returns its values; the
// graph package's graph.Resume stays strict), durability
// (sync, async
// or exit: the graph.Durability the run saves checkpoints with) and
// webhook, an http(s) URL POSTed the run, its status, times and values
// when the run ends. Webhooks are refused loopback and private addresses,
// checked when they connect, unless Config.WebhookAllowPrivate is set. A
// webhook given as a path ("/hooks/done") is sent to the server itself,
// for its custom routes: served in-process by Config.WebhookHandler (the
// mux that mounts the server beside them), never over the network, with
// the run's principal in its context (guard.Principal), by which the
// handler must authorize it. Only the paths Config.WebhookPaths lists are
// accepted; without it, webhooks given as a path are refused.
//
// The server checks the requests it serves: without Config.Authenticate
// it serves loopback clients and Host names only (DNS rebinding), browser
// origins other than the API's own need Config.AllowedOrigins (CORS;
// with Config.Authenticate, loopback pages need not when the server is
// reached on a loopback host; "*" needs Config.Authenticate), and bodies
// are bounded by Config.MaxBodyBytes. Its loopback rules are
// those of package guard, which guards the other APIs that listen.
//
// # Streams
//
// Stream modes values, updates, messages-tuple (SSE event "messages": the
// chunks of model replies, under the id the reply has in the state when
// the node calls its model through graph.Generate, as the react agent
// does, so that useStream merges the two, and each message a step adds
// to the state's "messages" list without streaming a reply, such as a
// tool result, as one whole chunk with its id in the state),
// the legacy messages (events messages/metadata, messages/partial with a
// model reply so far, and messages/complete with the messages a step adds
// to the state's "messages" list) and custom are served; events, debug, tasks, checkpoints and tools, which
// LangGraph's servers also know, are refused (422) rather than streamed
// without their events; with stream_subgraphs, events of subgraphs are named
// mode|node:id. Every event of a run is kept in the run's event log (at most
// Config.MaxRunEvents) with increasing ids, 0, 1, 2... (a log the
// PostgreSQL store lost in a database crash, or never created because the
// run's first attempt died before it started, is numbered by the run's next
// attempt from a multiple of 2^40, below 2^53, and one lost while the
// run's attempt goes on, by that attempt from the next multiple of 2^32
// above both the ids it gave and its attempt's multiple of 2^40, so that
// a client joining from the log's start is told of the events lost): a
// client that lost its
// connection joins again with GET .../runs/{run_id}/stream and
// Last-Event-ID (N: events after N; -1: the whole log; absent: live
// events only), on any request, resumable or not. A client told of events
// it can no longer get receives an error event EventsDropped first.
// A stream always ends with an event saying why: end (with the run's
// status), or error (the run failed, or was deleted: RunDeleted). A join
// of a run that ended with nothing past the client's position (it saw
// the end, or the run was cancelled before it started) gets that event
// again, without an id. /wait and .../join of a run cancelled before it
// started answer, as for any interrupted run, the thread's values, which
// it left as they were.
//
// Each checkpoint a run saves holds, in its metadata, the run's metadata
// (the thread's metadata and the run's own, with run_name), run_id,
// thread_id, graph_id and assistant_id, beside source and step, as
// LangGraph's servers put them there: GET .../state and .../history show
// them (with parents, {}), and history filters on them. A checkpoint's
// metadata holds string labels: a metadata value that is not a string is
// kept as its JSON text (and its key in the label __json_labels__), read
// back as the value. Run metadata beyond MaxCheckpointMetadataBytes (16
// KiB) is not copied into each checkpoint: they hold only run_id,
// thread_id, graph_id, assistant_id and run_name, and the server logs a
// warning naming the run.
//
// # Threads and statuses
//
// A thread is busy from the moment a run is accepted until its runs end;
// then it is interrupted when its state has next tasks (an interrupt or a
// breakpoint), error when its last run failed, and idle otherwise. A run
// ends success (also when it paused), error, timeout (Config.RunTimeout)
// or interrupted (cancelled); a rolled-back run is deleted. Runs of a
// thread run one at a time in the order they were created.
//
// # Security
//
// Config.Authenticate names each request's principal (see [APIKeys] for
// x-api-key keys), on every route but GET /ok, the health check load
// balancers make without credentials (it reveals nothing); threads and
// assistants belong to the principal that created them and are invisible
// (404) to others. Thread and assistant ids are one space shared by all
// principals, as in LangGraph's servers: creating a thread (POST /threads,
// or a run with if_not_exists create) or an assistant (POST /assistants)
// under an id another principal's holds is refused with 409, which tells
// the caller that the id is taken, though nothing more; use random ids
// (UUIDs, the server's default), and delete what a graph keeps by thread
// with the thread ([WithThreadDeleted]), so that an id freed and taken
// again starts anew. A run's context carries its principal
// (guard.Principal, see [RunContext]). Without it the server answers loopback
// clients only. Browser origins other than the API's own must be listed
// in Config.AllowedOrigins (CORS), but, with Config.Authenticate, for
// loopback pages calling a server reached on a loopback host: without
// it, any page on this machine could act as its user, and "*" (any
// site) is refused. Bodies are JSON, sent as
// application/json or, as the LangGraph JS server reads them, text/plain
// (what a page's fetch of a string sends); a body of another type (a
// form, multipart, no type) or in a charset other than UTF-8 (or ASCII) is refused
// with 415, and one that is not valid UTF-8 (or escapes half of a
// surrogate pair), or that nests deeper than [MaxJSONDepth], with 422. Numbers in metadata, and in the filters on
// metadata and values, and in store items and their search filters, must be ones a float64 holds
// (magnitude at most 1.7976931348623157e308, and zero or above 2.5e-324,
// which a float64 would round to zero), written in at most 1000
// characters, and a zero's exponent within ±400, which every store keeps
// alike; others are refused with 422 naming their path. A field of whole
// numbers takes one written with a fraction or an exponent (10.0, 1e3)
// that it holds. An error of a store or a checkpointer is answered 500
// (in a stream, an error event; in a run, its error) with a generic
// message and an error_id, under which Config.Logger has its cause. A page of another site
// sends text/plain without a CORS preflight, but with an Origin header,
// which is refused (403) unless Config.AllowedOrigins lists it or, with
// Config.Authenticate, lists "*" (the request then reaches Authenticate
// without its cookies); a request without Origin that a browser marks as
// another site's (Sec-Fetch-Site: cross-site; without Authenticate,
// same-site too) is refused whatever is listed. Bodies are bounded by
// Config.MaxBodyBytes. Long requests (streams, waits) are kept alive by
// heartbeats; set ReadHeaderTimeout and IdleTimeout on the http.Server, but
// no WriteTimeout shorter than the longest run. Each write of a stream is
// bounded instead by Config.StreamWriteTimeout: a client that stops
// reading loses its stream (its run goes on, but for a stateless run
// with on_completion delete and on_disconnect cancel, which no one can
// rejoin: that one is cancelled), which gives back its slot of
// Config.MaxStreams. Every other answer is written in pieces of 64 KiB,
// each bounded by Config.WriteTimeout: a client that stops reading a
// large answer loses it, and gives back its slot of Config.MaxReads.
// These bound writes only: while a stream or a wait has nothing to
// write, no deadline is set (over HTTP/2 one would reset it when it
// passes), so either may be shorter than Config.Heartbeat.
//
// # Storage
//
// Threads, runs and event logs are kept by a [Store]: [MemoryStore] in one
// process, [OpenSQLite] in a file, or the store of package
// agent/server/postgres for several instances on one database. Graph state
// is in the checkpointer, which several instances share the same way (for
// example graph/checkpoint/postgres on the same database). With both on
// one PostgreSQL server, the store's Config.SharedCheckpoints and the
// saver's Config.AsyncCommit let a run wait for two WAL flushes only (its
// creation's and its end's): a recorded end still implies that the run's
// checkpoints are on disk unless PostgreSQL crashed in between, and a
// crash of PostgreSQL itself during a run may make the run repeat the
// steps of its last fraction of a second, in its next attempt or, when
// PostgreSQL is back within the run's lease, in the same one: a run whose
// save finds its last save gone and its thread back at the run's start
// or at a checkpoint the run saved since resumes from the thread's latest
// checkpoint, with a store that is an AttemptRenewer, three times per
// attempt at most. The resumed execution is not a new attempt: its events
// start with a metadata event of the same attempt and go on in the
// attempt's log (see "Shared checkpoints that do not wait for their
// flush" in agent/server/postgres for what that does not cover).
//
// A run is claimed by a worker with a lease it renews (Config.Lease). Each
// instance's sweeper (every Config.SweepInterval) claims the runs no
// instance executes: queued before a restart, delayed (after_seconds), or
// left by an instance that died, whose lease expired; it claims none
// while its instance executes Config.MaxSweptRuns runs. A run taken over
// resumes from its thread's latest checkpoint when its graph saved steps
// of it (the step that was running runs again), and starts over from its
// input otherwise; its event log goes on where it stopped, with a second
// metadata event. An instance that finds its run taken over (its lease
// renewal fails) stops it.
//
// With a store that is a [RunWatcher], streams and waits on one instance
// are woken by runs executing on another, and a cancel asked on one
// instance reaches the run on another (it is recorded on the run; the
// executing instance also checks at each lease renewal); with a
// [ThreadLocker], run creation and run ends are serialised across
// instances, so the double-texting strategies hold across them. Clients
// need no sticky sessions. A store that is a [RunRecorder] makes each
// read and write of a run's path (its creation, claim, start and end)
// in one round trip; one that is a [LockingRecorder] also takes and
// releases the thread's lock inside the transactions of a run's
// creation, claim and end, and the server takes the lock apart (waiting
// for it) only when another holder has it; one that is a [RunStarter]
// records a run's start and its metadata event in one call; one that is
// a [RunClaimer] creates a run this instance will execute at once (its
// thread has no other active run, it is not delayed, and no worker of
// the thread is running here) already claimed, in its creation's
// transaction, so the run needs no claim of its own. A stream on the instance that executes its run
// takes the events that instance appends from memory (the last 64 of each
// run someone streams, once stored) and reads the store only to catch up
// and for the events of other instances; a run's own stream
// (/runs/stream) starts watching before the run can start, so it reads
// the store only when another instance wakes it or, while the run is
// pending or runs on another instance, at a heartbeat.
//
// Bounds: a run's event log keeps its last Config.MaxRunEvents events; an
// ended run keeps its event log and kwargs for Config.RunRetention, then
// only its record, and a thread keeps the records of its newest
// Config.MaxRunRecords ended runs (older ones are deleted); a thread queues at most Config.MaxQueuedRuns pending
// runs and a principal owns at most Config.MaxThreads threads (429 past
// either; the count and the creation are made under a lock of the
// principal's, across instances with a ThreadLocker); a principal has at
// most Config.MaxActiveRuns runs pending or running, counted in the store
// (across instances with one they share; 429 past it; a run whose
// multitask_strategy interrupt or rollback cancels its thread's runs
// replaces them, and may be accepted before they stop: until then the
// principal's active runs exceed the bound by those cancelled runs). The
// active runs are counted and the run created within a gate of the
// principal's on each instance: on one instance concurrent creations do
// not pass the bound, however many (those that might pass it together
// count again one at a time), cancelled runs that have not stopped yet
// aside; across instances a count
// does not see the runs other instances are creating at that moment,
// and a principal may pass the bound by at most 16 per other instance
// (each creates at most 16 runs of a principal at once). The count reads
// an index of the active runs by owner (PostgreSQL and SQLite). A
// principal holds at most Config.MaxItems items of Config.Items, of at most
// Config.MaxItemBytes bytes (429 past either; a full item store answers
// 507). A thread or assistant search or count, or a
// history, filters on at most [MaxFilterKeys] metadata keys, and a select lists at
// most 100 fields (422 past either).
//
// Bytes: a list answer (a thread search, a history, a thread's runs, a
// store search) holds at most Config.MaxResponseBytes (16 MiB by
// default), as estimated from its items: past it the answer stops before
// its limit, with the header X-Pagination-Truncated: true ([TruncatedHeader];
// a thread search, and a thread's runs while more follow, also set
// X-Pagination-Next), and the client pages on
// from its last item (offset, or before for a history); an answer holds
// at least one item, however large. Without the header, an answer with
// fewer items than its limit has no more. A history is read in pages
// sized to what is left of the bound (the first, to the size of the
// thread's latest values); a checkpointer keeps no size of a state, so
// the state an answer stops before is read to find that it does not
// fit, but once less than the least a state takes is left, the answer
// stops without reading another. A thread's runs are read a page
// at a time up to it (RunQuery.MaxBytes), and a store may stop a thread
// search there (ThreadQuery.MaxBytes); a store search is one read of the
// store for its page (so that a put or a delete between reads cannot
// repeat or skip an item in one answer), which the item store stops at
// the bound (memory.ItemQuery.MaxBytes). A client that
// pages until an answer holds fewer items than its limit and does not
// read the header (a loop over the official LangGraph SDK's search
// calls, which answer the items and not the headers, is one) takes a cut
// answer for the last, and stops paging early. For such clients
// raise Config.MaxResponseBytes above the largest page they ask for (at
// most their limit times their largest item), or set it negative for no
// bound (MaxReads then bounds how many such answers a principal has
// served at once). A principal has at
// most Config.MaxReads such reads served at once (429 past it), these
// and the reads of one state, a thread (which holds its values) or a
// run (whose kwargs hold its input), however large. A copy
// (POST /threads/{id}/copy) is refused (422) past Config.MaxCopyBytes of
// stored checkpoints, with a checkpointer that reports them
// (checkpoint.UsageReporter). A principal's threads keep at most
// Config.MaxThreadBytes (1 GiB by default with Config.Authenticate, no
// bound without it) of checkpoints, their durable
// subgraphs' included: past it, its runs, state updates and copies are
// refused (429) until it deletes or prunes threads. Each thread's bytes
// are counted from the checkpointer (checkpoint.UsageReporter) when its
// run ends (one more statement of the checkpointer's per run; a run that
// saved checkpoints of a durable subgraph also walks the thread's
// checkpoints for its subgraph threads, as a copy does), and when its
// state is updated, it is copied or pruned; they are kept on its record
// in the store ([ByteCounter]: with PostgreSQL, in the statement that
// records the run's end), which sums them by principal, read by each
// instance at most once a second per principal. The check is of what is
// stored: a running run is never stopped by it, and a principal may
// pass the bound by what its running runs write (and by what it writes
// within the second its sum is kept). Without a UsageReporter or a
// ByteCounter the bound is off. A join of a run's stream without
// Last-Event-ID reads the id of the log's last event alone from a store
// that is a [LastEventIDReader].
package server
