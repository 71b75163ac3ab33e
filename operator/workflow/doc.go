// Package workflow runs multi-step plans: a [plan.Plan] lists steps, each
// calling an operator with inputs mapped from the user's query and earlier
// steps' outputs, and the steps it depends on. Steps whose dependencies are
// done run in parallel.
//
// # Plans
//
// An agent's model writes the plan as JSON, which [plan.Parse] decodes:
//
//	{"goal": "Compare our pricing to competitors", "steps": [
//	  {"id": "step_1", "name": "Rewrite Query", "operator": "query_rewriter",
//	   "input_mapping": {"query": "{{user_query}}"}, "depends_on": []},
//	  {"id": "step_2", "name": "Search Internal Docs", "operator": "rag_retriever",
//	   "input_mapping": {"query": "{{step_1.internal_query}}"}, "depends_on": ["step_1"]},
//	  ...]}
//
// [plan.Plan.Validate] (which [Compile] and the [Executor] call) rejects a plan
// with an error naming the step and the field: an unknown operator, a
// dependency on an unknown step, a dependency cycle (named, as in
// "step_2 -> step_3 -> step_2"), a malformed template, or a template that
// reads a step not among the step's dependencies. The error is meant to be
// shown to the model so it can fix its plan.
//
// # Templates
//
// An input mapping maps each parameter of the step's operator to a
// template string or a list of them. {{user_query}} is the user's query,
// {{step_1.output}} the whole output of step_1, and {{step_1.field}} (or
// {{step_1.a.b}}) a field inside it: the output may be a map, a struct, or
// a string holding a JSON object, as models answer. A string that is
// exactly one template passes the value itself (a map stays a map, shared
// with the output and any other input referencing it, so operators must
// not modify their params); a template inside other text is rendered as
// text, JSON for non-strings. The "query" parameter, when it resolves to
// a string, is the operator's query; otherwise the operator gets the
// user's query. An output held as a string of JSON is parsed once per step however many references read
// it. Config.MaxTemplateRefs bounds the references of one step, its
// inputs together (a plan with more is invalid), and Config.MaxInputBytes
// the size of a step's resolved inputs together, a non-string value
// passed whole counting its JSON size per reference (the step fails),
// so that a plan cannot copy a large output many times over.
//
// # Execution on the graph engine
//
// [Compile] turns a plan into a graph of the graph package over
// [State]: a node per step, an edge from each dependency to its dependent,
// a node before the steps that reports a [RunStart] and a join after them
// that reports a [RunEnd]. The engine's super-steps give the
// schedule: every step whose dependencies finished runs in the same step,
// in parallel up to Config.MaxConcurrency, and a step with several
// dependencies waits for all of them. Because it is a graph, a workflow
// streams like any graph and runs inside a parent graph with
// graph.AddSubgraph ([Workflow.Graph]). The request's reporter, MCP session
// and turn travel in the context ([WithEnv], or Config.EnvFrom for a host
// that keeps them in the context under a key of its own), so one compiled
// workflow serves concurrent requests.
//
// # Plans known at run time: the executor
//
// Compile makes one graph per plan. [NewExecutor] compiles one graph
// that runs whatever plan its state holds ([ExecState].Plan), for a
// host whose plans are written at run time, such as an agent model's
// in a chat graph: mounted once with graph.AddSubgraph, it runs each plan
// as tasks of the parent's run, streamed under the subgraph node's name.
// Its plan node validates the plan (an invalid plan ends the run with
// [ExecState].Error set, naming the step and the field, and nothing
// reported) and reports a [RunStart]; then a router sends, as tasks of
// one step node (graph.AddTask), every step whose dependencies have all
// finished; after each such wave the router runs again on the merged
// state, until every step has finished and the finish node reports a
// [RunEnd]. The schedule is the compiled graph's: one wave per
// super-step, a step starting in the super-step after its last
// dependency's, once the whole wave it waited on has finished (not the
// moment its own dependencies end), up to Config.MaxConcurrency steps at a
// time. Steps run through the same code as a compiled workflow's, with the
// same reports, templates, context assembly, retries, fallback, skipping and
// keeping of steps that already succeeded.
//
// Each step reports a [StepStart] (its number in the plan, from 1, its id,
// name and operator) and a [StepEnd] with its outcome, both to the Env's
// Reporter and to the graph's stream (custom mode); the tools its operator
// calls are reported in between. Its operator runs through
// operator.Registry.Execute, so retries and the operator's fallback apply,
// with the context assembled for the operator's requirements when
// Config.Assembler is set; its result goes into the Env's turn under the
// step's id, where results.step(ID) finds it, and the step is recorded as
// an action of the turn (actions.this_turn). [Workflow.Stream] streams a
// run.
//
// # Failure
//
// A step whose operator fails is recorded and reported as [Failed], with
// the operator's error; the steps that depend on it, directly or not, are
// [Skipped] with a [*SkipError] naming the dependency and its cause, and
// report only their StepEnd. Independent branches run
// to the end. The [Result] lists every step's outcome in plan order;
// [Result.Err] joins the failures. Cancelling the context stops the run
// after the running steps return.
//
// # Durable runs
//
// A workflow checkpoints like any graph, at the granularity of the graph
// that owns the checkpointer.
//
// Run on its own with Config.Checkpointer, the workflow's graph is durable
// (graph.WithCheckpointer): each run names a thread with graph.WithConfig,
// a checkpoint is saved at the start and after every super-step (the
// created node, each wave of steps, the complete node), and in a wave of
// parallel steps each step's outcome is saved as soon as it finishes.
// [Workflow.Resume] continues the thread after a crash or cancellation:
// the wave that was running runs again, except the steps whose outcome was
// saved, and the earlier waves do not run again. The state of any
// checkpoint is a [State]: Workflow.Graph().Thread(id).State and History decode it.
// An [Executor] with Config.Checkpointer is saved the same way, a
// checkpoint per wave ([Executor.Resume]); its checkpoints hold an
// [ExecState], the plan included, and a wave's saved tasks carry the
// outcomes of their steps' dependencies. Executor.Resume answers as
// Executor.Run does: a thread whose saved plan the executor rejects
// returns the plan's error, not the outcomes an earlier plan left on the
// thread. Resume on a thread with no checkpoint fails with
// [ErrNoSavedRun].
//
// As a subgraph (graph.AddSubgraph) of a parent compiled with a
// checkpointer, a workflow (compiled or executor) without
// Config.Checkpointer is one task of the parent: the parent saves a
// checkpoint before and after the node, and the workflow's own steps are
// not saved one by one. A parent step that stops inside the workflow (a
// crash, a cancellation, a pause) runs the whole workflow again on resume,
// its finished steps included. With Config.Checkpointer (usually the
// parent's saver), the workflow checkpoints each of its runs as a durable
// subgraph, on a thread of its own (graph.SubgraphThread): a parent step
// resumed part-way goes on inside the workflow, and the steps whose
// outcome was saved do not run again.
//
// A failed step does not fail the run, so a finished run's state holds
// every outcome, failures included. A run whose input state already holds
// a step's succeeded outcome, for the same operator, query and inputs,
// keeps it and does not run the step's operator again; a step that runs
// again replaces its outcome in [State].Steps. So running a finished
// thread again (Workflow.Resume, or a parent's thread run again whose
// subgraph input passes its saved Steps back to the workflow, as in
// func(p P) workflow.State { return workflow.State{Query: p.Query, Steps: p.Steps} })
// runs only the failed and skipped steps and those downstream of them. A
// new query changes the steps' inputs, so every step runs again.
//
// Step results are saved as JSON (see [StepResult.MarshalJSON]): an error
// comes back as a [*DecodedError] holding its message (matching
// [ErrSkipped] for a skipped step), and an output as its JSON form, maps
// of strings, float64 numbers and so on, which templates read as they
// read the original.
//
// An operator that asks the user (Messenger.Confirm and Choose) in a
// durable run does so with [InterruptElicitor] as the Env's Elicitor:
// the question pauses the run at its step (Run returns a
// *graph.InterruptError carrying the elicit.Request), and
// Resume with graph.Resume(elicit.Response{...}) runs the step
// again, from its beginning, with the answer. The step reports a
// [StepStart] each time it runs. In a workflow run as a subgraph
// without a checkpointer of its own the pause is the parent's subgraph
// node's, and on resume the whole workflow runs again (see above); two
// steps of one wave that both ask there share that node's interrupts,
// matched in the order they ask, which is not fixed, so let one step at a
// time ask, or give the workflow its own checkpointer, where each step
// pauses on its own and the parent pauses on each question in turn.
package workflow
