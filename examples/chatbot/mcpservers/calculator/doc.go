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
// these limits but not raise them above Config's. A built-in call such as
// sorted over a huge list runs to its end before the interpreter checks
// them again, and the interpreter does not bound memory or nesting, so each
// program runs in a worker process of the examples' sandbox package, under
// OS limits on memory, stack depth, CPU time, wall time and output: a
// program that exhausts one fails with a "sandbox ... limit" error, its
// worker is replaced, and the server carries on. The package documentation
// says what is isolated and what is not.
//
// Failures (syntax errors, runtime errors, limits) are tool errors (isError)
// that say what went wrong and include the output printed before the failure;
// bad arguments are tool errors that name the argument.
package calculator
