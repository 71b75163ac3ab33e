// Package calculator is an MCP server that does arithmetic and runs small
// programs in a sandbox, and draws charts, so a chatbot can compute instead
// of guessing.
//
// [New] returns a configured *server.MCPServer from
// github.com/mark3labs/mcp-go, ready to be served over stdio or connected
// in-process. Tools:
//
//   - calculate(expression): evaluates an arithmetic expression with [Eval]
//     (operators, parentheses, constants and common functions).
//   - run_code(code, max_steps, timeout_ms): runs a Starlark program, a
//     small deterministic dialect of Python, with [Run] and returns what it
//     printed and the global named result.
//   - chart(labels, values, title): returns a text table, a PNG bar chart
//     ([BarChart]) and a data_table widget ([DataTable]) embedded as a text
//     resource of MIME type [WidgetMIMEType].
//
// # The sandbox
//
// Programs get Starlark's built-ins, a Python-like sum, and the math, json
// and struct modules, nothing else: no load statements, no files, no
// network, no clock, no environment. Recursion is disabled (the step limit could not stop it
// before it exhausted the stack). Each run is bounded by a step limit
// (starlark.Thread.SetMaxExecutionSteps), a wall-clock limit (the thread is
// cancelled when its context ends) and an output limit; a call may lower
// these limits but not raise them above Config's. Starlark does not bound
// memory: a single value is capped at 1 GiB by the interpreter, but a
// program can build several, and a built-in call such as sorted over a
// huge list runs to its end before the limits are checked again (sum is
// the exception: it counts its iterations as steps). Run the server as a subprocess with an OS
// memory limit when it executes code from untrusted users.
//
// Failures (syntax errors, runtime errors, limits) are tool errors (isError)
// that say what went wrong and include the output printed before the failure;
// bad arguments are tool errors that name the argument.
package calculator
