// Package operator defines operators, the units of work an agent's
// agent can invoke by name, the registry that creates them, and the
// tools a model calls natively.
//
// # Operators
//
// An [Operator] does one job: rewrite a query, search a knowledge base,
// write the answer. It is a small interface, Execute over an operator
// [*Context], and comes with [Metadata] that tells the agent and the
// runtime what it is: its name and description, its [Type] (pure LLM,
// MCP-backed or hybrid), the model alias it uses, the MCP tools it may call,
// the context requirements the context assembler fills in for it (see
// package memory), the operator to fall back to when it fails, how often it
// may be retried, and its messaging [Capabilities] (the output types it
// produces, whether it reports progress, asks the user, answers the user
// directly or streams).
//
// # Registry
//
// A [Registry] maps names to a [Factory] and the operator's metadata.
// Register rejects duplicate names; New creates a fresh operator for each
// use and fails with an [*UnknownError] listing the registered names when
// the name is not there. Registries are independent values: tests and
// processes serving several bots build their own with [NewRegistry]. An
// explicit process-wide [Default] registry exists for operators that join
// from an init function with [MustRegister].
//
// # Execution and fallback
//
// [Registry.Execute] runs an operator by name: it creates the operator,
// runs it (re-running it up to Metadata.MaxRetries times after a failure
// that is not [Permanent]), and when it still fails and the metadata names a
// Fallback, runs the fallback once with the same context. If the fallback
// fails too, the returned [*FallbackError] keeps both errors.
//
// # The operator context and messaging
//
// A [Context] carries what an operator works on: the query, its parameters,
// the context assembled for its requirements, the [ToolCaller] (an MCP
// session) for operators that call tools, the current memory turn and a
// [Messenger]. The Messenger turns an operator's messages into reports to
// the request's [Reporter]: progress ([ToolProgress]), content
// ([ToolOutput], or a [DirectResponse] when the operator answers the user
// itself, or one streamed in chunks with Stream), widgets, and questions
// (confirm and choose) asked through an [elicit.Elicitor]. Each message needs the
// matching capability in the operator's metadata.
//
// # Reports
//
// What happens during a call is reported to the [Reporter] of the call's
// [Env]: [Provider.Execute] reports each call's start and end, whatever
// its source; an operator's messages and the tools it calls come in
// between; the workflow package reports its plan and steps with its own
// types, and mcptool.Callbacks reports an MCP server's progress and
// content. The reports are plain values of this package and of those that
// run operators; an application maps them to what its users see (an event
// stream, a log, metrics).
//
// # Questions in durable runs
//
// An [elicit.Elicitor] such as [Elicitations] blocks the operator until the
// answer arrives, which suits a request that stays open. In a graph
// compiled with a checkpointer, where the user may answer hours later or
// to another process, graph.Interrupt is the natural way to wait: the
// workflow package's InterruptElicitor asks that way, and the question
// returns an error matching [ErrPaused] while the run is paused; the
// operator and the node running it return it unchanged, and
// [Registry.Execute] neither retries it nor runs the fallback.
//
// # Tools
//
// A [Tool] is what a model calls with native tool calling: a definition
// (name, description, JSON Schema of the arguments) and a Call that takes
// the model's JSON arguments. Local Go functions, MCP tools and operators
// are all tools:
//
//   - [FuncTool] makes a tool of a typed function func(ctx, In) (Out,
//     error): the schema is inferred from In, and a call's arguments are
//     checked against it, decoded strictly and validated (validate tags)
//     before the function runs. A bad call comes back to the model as a
//     result with IsError set that names each bad field, so the model can
//     correct it. Out becomes the result's text, images and structured JSON.
//   - [Registry.Tool] and [Registry.Tools] make registered operators tools
//     (query and params in, the operator's output back).
//   - [Local] tools become tools with [AsTool] (or [LocalRegistry.Tools]),
//     and MCP tools with package mcp/mcptool, which is kept apart so that a
//     program whose tools are all local does not link the MCP client.
//
// To add a tool a model calls, such as a calculator, write a typed Go
// function and make it a tool with [FuncTool]. Write a [Local] tool when
// it needs the request (the provider, the user's messenger, the turn), and
// an [Operator] when it needs retries, a fallback or assembled context.
//
// A [Toolset] holds the tools one model may call: it rejects duplicate
// names, yields their definitions in a stable order for the model's
// request, and runs a model's tool call by name, setting the result's call
// id and name, and answering an unknown name with the list of the tools
// that exist.
//
// # Local tools and the provider
//
// A [Local] tool is Go code in the same process: no network, no session.
// It is the right place for introspection, answering "what can you do?"
// from the registries themselves. A [LocalRegistry] holds local tools by
// name. A local tool receives its arguments, the provider (to list the
// catalogue), a messenger to the user and the current turn in a
// [LocalCall].
//
// A [Provider] merges three sources into one catalogue: its local tools,
// an operator [Registry] and a [memory.Tools] catalogue of MCP tools
// (mcptool.Catalog adapts the mcp package's server registry). Names resolve
// in that order. [Provider.ToolSummaries] and [Provider.Text] list the
// catalogue (as model.ToolSummary values, the module's one summary type)
// for an agent's prompt; with [Provider.ToolSchema] they also serve
// memory's tools.* context requirements; [Provider.Execute] runs a
// local tool, an operator or an MCP tool with the request's [Env] and
// returns the same [toolresult.Result] for all three, reporting each call to
// [Env].Reporter as a [ToolStart], then a [ToolComplete] or [ToolFailed];
// [Provider.Assemble]
// builds the context an operator's requirements ask for.
//
// # Built-in operators
//
// [RegisterBuiltins] adds the standard operators, each with its prompt:
// query_rewriter, synthesizer, writer and analyzer (pure LLM), rag_retriever
// and web_searcher (MCP-backed, with configurable tool names) and coder
// (hybrid: the model writes code, an MCP tool runs it).
package operator
