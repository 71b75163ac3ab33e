// Package tool gives an agent one catalogue of everything it can call:
// local tools running in-process, operators, and MCP tools on remote
// servers.
//
// # Local tools
//
// A [Local] tool is Go code in the same process: no network, no session,
// zero latency. It is the right place for introspection, answering "what
// can you do?" from the registries themselves. A [Registry] holds local
// tools by name; [RegisterBuiltins] adds self_info (name, version,
// release notes), list_capabilities (what the agent can and cannot do),
// list_tools (the whole catalogue) and list_operators (the registered
// operators). A local tool receives its arguments, the provider, a
// messenger to the user and the current turn (conversation, query,
// history) in a [Call].
//
// # The provider
//
// A [Provider] merges three sources into one catalogue: its local tool
// registry, an operator registry and an MCP [Catalog] (the MCP server
// registry). Names resolve in that order, so a local tool shadows an
// operator of the same name, which shadows an MCP tool. The provider
// serves:
//
//   - [Provider.Summaries]: every tool with its description and source;
//     [Provider.Text] renders them for a supervisor's prompt;
//   - [Provider.ToolSummaries] and [Provider.ToolSchema]: the memory
//     package's Tools interface, behind tools.summaries and
//     tools.schema(NAME) in context requirements;
//   - [Provider.IsLocal]: whether a call needs no network;
//   - [Provider.Execute]: one path that runs a local tool, an operator (with
//     its retries and fallback) or an MCP tool (through the request's
//     session) and returns the same [operator.ToolResult] for all three,
//     reporting tool.start and tool.complete (or tool.error) events for
//     each call;
//   - [Provider.Assemble]: the focused context an operator's
//     ContextRequirements ask for, from Config.Assembler. A tool subflow
//     that builds the context as a step of its own (prepare → build
//     context → execute) passes it to Execute in Env.Assembled, so it is
//     assembled once; without it, Execute assembles the context itself.
//
// # Native tool calling
//
// [AsTool] and [Registry.Tools] give local tools to a model's native tool
// calling as operator.Tools: the definition comes from [Info], a call's
// JSON arguments are checked against Info.InputSchema and decoded into
// Call.Args, and the result is converted to the model's tool result.
package tool
