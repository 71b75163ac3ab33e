// Package react is the prebuilt tool-calling agent: a model that calls
// tools, reads their results and calls them again until it can answer (the
// ReAct loop), as a compiled graph.
//
//	ag, err := react.New(react.Config{
//		Model:        m,
//		Tools:        []operator.Tool{weather, calculator},
//		Instructions: "Answer questions about the weather.",
//	})
//	s, err := ag.Invoke(ctx, react.Input("Is it warmer in Paris or Rome?"))
//	fmt.Println(s.Reply())
//
// [New] returns a [graph.Compiled] over [State], so the agent is used like
// any graph: invoked, streamed, run on a thread with a checkpointer, or
// added to a bigger graph as a subgraph with [graph.AddSubgraph].
//
// # The loop
//
// The graph has a "model" node and a "tools" task node (and an "approve"
// node when some tools need approval). The model node sends the
// conversation, with the instructions as a system message, to the model
// and appends its reply. If the reply calls tools, every call of that turn
// runs as a task of one super-step, in parallel, and their results are
// appended in the order of the calls; then the model is called again. A
// reply without tool calls ends the run with [OutcomeAnswered] (unless
// [Config.Answer] is set: see below).
//
// A tool that fails, a call to an unknown tool and arguments a tool
// rejects become a tool result with IsError set, which the model reads and
// can act on; they do not fail the run. A tool panic is reported the same
// way. Only the model's own errors and the cancellation of the run's
// context end the run with an error; the context of a cancelled run reaches
// the running tools.
//
// A turn's calls are bounded: at most [Config.MaxParallelTools] run at a
// time, and the calls after the first [Config.MaxCallsPerTurn], and calls
// whose arguments are over [Config.MaxArgumentBytes], are not run but
// answered with error results saying why. Calls without an id, or with the
// id of an earlier call of the turn, get fresh ids before they run, in the
// conversation too, so each result answers its call. A result's text (its
// text parts, URLs and Structured JSON) over [Config.MaxResultBytes] (64
// KiB by default) is cut, and its binary parts (images, audio) over
// [Config.MaxResultBinaryBytes] (16 MiB by default) are left out, with a
// note saying how much, before the model reads it. A call of an unknown tool is answered with its name
// (clipped) and up to three of the agent's tools with close names.
//
// [Config.MaxIterations] bounds the model calls of one run. A model that
// still calls tools at the limit ends the run with [OutcomeIterationLimit]:
// its last calls are answered with error results saying they were not run,
// so the conversation stays valid for the next run, and the run returns the
// state with no error.
//
// # Conversation memory, usage and streaming
//
// [State.Messages] is a [model.Messages], whose Merge adds, replaces and
// removes messages by id. With [Config.Checkpointer] each thread is a
// conversation: a run's input messages are merged into the thread's saved
// ones, and the model sees them all. [State.Usage] counts every token of the
// thread; [State.RunUsage] and [State.Iterations] count those of the last
// run only (a run starts when the conversation does not end with tool
// results or with the agent's reminder to call the answer tool).
//
// The model is called through [graph.Generate]: in a run streamed with
// [graph.StreamMessages] its reply streams, chunk by chunk, with the node
// "model" and the agent's namespace in each event.
//
// Streamed chunks are the model's own: their tool calls (the
// ChunkToolCall deltas and the ChunkDone chunk's response) have the ids
// the model gave, before the agent gives fresh ids to calls without one or
// with a repeated one. Identify a call by the id in the conversation: the
// model node's update ([graph.StreamUpdates]) and [State.Messages] hold the
// reply as kept, and the results' CallID, a [Review]'s calls and a
// [Decision]'s CallID use those ids. A delta's Index is the call's position
// among the reply's calls, in the reply as streamed and as kept.
//
// Every message the agent adds to the conversation gets a new id of its
// own: a reply's id is never the model's (a provider's reply id is no
// conversation id, and a server may repeat it), so a reply never replaces
// an earlier message, in one run or across the runs of a thread.
//
// # Approval and structured answers
//
// [Config.Approve] names tools whose calls a person approves first: the
// run pauses with a [graph.Interrupt] whose payload is a [Review] of the
// proposed calls, each a [Proposal] with its fingerprint (a hash of the
// call's turn, id, tool name and arguments), and resumes with [graph.Resume]
// and a []Decision, one per call, made with [Approve], [Edit] or [Reject]
// from the Proposal: approve, edit the arguments, or reject with a message
// the model reads. A decision applies only to the call whose fingerprint
// it carries. Decisions that do not fit the review (a call id the review
// does not propose, no fingerprint or one of no call of the review, two
// decisions about one call, a resume value that is not a []Decision) fail
// the resumed run with an error naming them and the proposed calls,
// before any tool runs; the thread stays paused, and a resume with right
// decisions goes on.
//
// Pausing needs a checkpointer that keeps the agent's steps, so that a
// resume goes on from the approve node with the calls the reviewer saw:
// set [Config.Checkpointer] and run the agent on a thread, or, as a
// subgraph, set Config.Checkpointer too (the parent's saver will do) and
// run the parent, compiled with [graph.WithCheckpointer], on a thread; the
// graph then keeps the agent's steps on a thread of their own (see
// "Durable subgraphs" in package graph). An agent without a checkpointer
// of its own run inside a checkpointed run (as a subgraph, or with Invoke
// inside a node) is one task of that run, which a resume runs again from
// its input: the model would be called again on every resume and propose
// its calls anew, under new ids, so that no decision would ever apply. A
// run of an agent with Config.Approve that cannot pause, or cannot resume
// where it paused, fails before its first model call with an error naming
// the fix (see [graph.CanInterrupt] and [graph.ResumesInPlace]).
//
// A decision whose fingerprint matches no proposed call fails the resume
// with an error naming it, as other decisions that do not fit do, unless
// the turn was proposed anew since the review (the proposed calls are not
// those of the pause): the run then pauses again with a [Review] of the
// calls proposed now, whose Stale field lists the decisions that no longer
// apply.
//
// A conversation whose last assistant message has calls without results,
// as a thread paused for approval that was given a new message, reaches
// the model with an error result for each such call ("not run: ...")
// after the results the calls have, so that the conversation is one a
// provider takes; the thread keeps those results.
//
// [Config.Answer] makes the final answer typed: the model must end by
// calling a tool with the answer's schema (see [AnswerTool]), and the run
// keeps the call's arguments in [State.Answer], decoded with
// [DecodeAnswer]. The arguments are checked as an [operator.FuncTool]
// checks its arguments: against the schema (required fields, types,
// fields it does not allow), then decoded strictly; arguments that do not
// fit go back to the model as the call's error result, listing the
// problems. A reply in text, from a server that does not enforce the
// required tool choice, goes back to the model too, with a user message
// reminding it to call the answer tool. Both count as model calls of the
// run: at [Config.MaxIterations], an answer that does not fit ends the run
// with [OutcomeIterationLimit], a reply in text with [OutcomeNoAnswer].
package react
