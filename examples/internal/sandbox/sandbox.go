// Package sandbox runs untrusted Starlark programs under one policy, shared
// by the examples that execute code written by a model or a user: the
// chatbot's calculator MCP server (run_code) and the Cortex-R agent (plans
// with a solve() function that call MCP tools).
//
// # The language policy
//
// A program sees Starlark's built-ins, the [Module]s its caller offers, and
// the host functions in [Options.Funcs], nothing else. Load statements fail
// (with [Options.LoadError]), and there is no file, network, clock or
// environment access. Recursion is disabled; while loops, top-level
// statements, sets and reassigned globals are allowed. Each run is bounded
// by a step limit, a wall-clock limit, a limit on host function calls and
// its context; [Sum] counts its iterations as steps, so a sum over a huge
// range stops too.
//
// # The process model
//
// The interpreter does not bound memory or stack depth, and one built-in
// call (a sort, a string replace, json.decode) can run for seconds between
// two of its step checks. So no program runs in the host's process: each
// run goes to a worker process of a [Pool], and a program that exhausts a
// limit kills its worker, not the host. A worker is the host's own
// executable started again with the environment variable
// AGENTGRAPH_SANDBOX_WORKER set: this package's init function sees it and
// serves runs over the worker's standard input and output instead of
// letting the program start. Any program that imports this package can
// therefore serve as its own worker, test binaries included, with nothing
// to call from main or TestMain. Packages that the sandbox package does not
// depend on may initialise in the worker before it takes over: keep
// package initialisation free of side effects. [Config.Executable] names
// another binary that imports this package, for hosts that cannot re-run
// themselves.
//
// What is isolated, on Linux:
//
//   - Memory: the host sets the worker's RLIMIT_DATA (private writable
//     memory, which is what the Go heap and goroutine stacks use) to
//     [Config.Memory] above its footprint at start, and its GOMEMLIMIT
//     below that, so the collector works before the limit bites. During a
//     run the worker also checks its memory every few milliseconds and
//     exits when it comes within a sixteenth of the limit: the Go runtime,
//     refused memory for its own bookkeeping, may crash instead of
//     reporting it. RLIMIT_AS is not used: the Go runtime reserves address
//     space it never touches (a worker starts with gigabytes of it), and
//     the race detector reserves terabytes.
//   - Stack: the worker's goroutine stack is bounded by
//     [Config.MaxStack], so deep nesting (json.decode of a million
//     brackets, the string of a deeply nested list) fails quickly.
//   - CPU time: RLIMIT_CPU, set by the worker before each run to
//     [Config.CPUTime] more than it used so far, in whole seconds. Its
//     hard limit, which the worker cannot raise, is eight runs' worth
//     from its start; a worker with less than a run's worth left retires
//     after its run.
//   - Wall time: the host kills a worker that has not answered
//     [Options.Timeout] plus a grace period after it got the program, and
//     when the run's context ends.
//   - Output: printed output is cut at [Options.MaxOutput]; the result,
//     output and host-function arguments together are bounded by
//     [Config.MaxResult], and the host reads no frame longer than that. A
//     host function's value longer than that, encoded, is not sent: the
//     call fails with an error naming the limit.
//   - Rendering: the result (Result.Value, Result.Globals) is rendered to
//     text inside the worker, under the same limits.
//   - Descriptors and environment: a worker gets only its three standard
//     descriptors (pipes for input and output, a removed file bounded by
//     RLIMIT_FSIZE for errors; it closes any other it inherited) and an
//     environment holding only the variables it needs, none of the host's
//     secrets.
//
// A worker that dies makes its run fail with an [*Error] whose [Kind] names
// the limit when it is known ([KindMemoryLimit], [KindStackLimit],
// [KindCPULimit], [KindTimeLimit], [KindOutputLimit]) and [KindCrash]
// otherwise; the next run gets a fresh worker. A worker that finished a run
// serves the next one (each run gets a fresh interpreter: Starlark shares
// no mutable state between runs), up to [Config.MaxRuns].
// A worker found dead when a run takes it from the idle list (killed by
// someone) is replaced before the program is sent, and the run goes on.
//
//   - Privileges: the worker sets PR_SET_NO_NEW_PRIVS, so nothing it
//     executes gains privileges; opens at most 16 descriptors
//     (RLIMIT_NOFILE); and works in an empty directory it removed.
//   - Network: where the kernel allows this process to create user
//     namespaces, the worker starts in a new user namespace (mapping only
//     the host's user and group) and a new network namespace with no
//     interface up, so it reaches no network, not even the host's
//     loopback, and holds no capability outside its namespace, even when
//     the host runs as root. Where that is refused (user namespaces
//     disabled, or blocked by a container's seccomp profile), workers
//     start in the host's namespaces and the host says so once on its
//     standard error.
//
// What is not isolated: the worker runs as the host's user, with its file
// system reachable by the operating system (and, without namespaces, its
// network). Programs cannot reach them only because Starlark has no
// built-in that does. The worker can still create processes: RLIMIT_NPROC
// counts the Go runtime's threads for every process of the user and is
// not enforced for root, and there is no seccomp filter. Host functions
// run in the host with the host's rights. On other operating systems than
// Linux, the step, wall-time, output and stack limits apply; memory is
// bounded by GOMEMLIMIT and by the worker's own watch of the Go runtime's
// memory (runtime/metrics), which exits within a sixteenth of
// [Config.Memory] above its footprint at its first run, checked every few
// milliseconds (so an allocation that happens at once can pass it); CPU
// time is bounded only by the wall-time kill.
//
// [Run] uses a pool shared by the process, started on first use; [NewPool]
// makes one with other limits.
//
// The package is internal to the examples: it is no part of the SDK's API.
package sandbox

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// ErrLoadDisabled is what a load statement fails with when
// Options.LoadError is nil.
var ErrLoadDisabled = errors.New("load is disabled: programs run in a sandbox and cannot import modules or read files")

// A Module is a set of names a program can use besides Starlark's
// built-ins. Combine them with |.
type Module uint

// The modules a run can offer.
const (
	// Math is the math module (go.starlark.net/lib/math): math.sqrt,
	// math.pi and so on.
	Math Module = 1 << iota
	// JSON is the json module: json.encode, json.decode, json.indent.
	JSON
	// Struct is the struct(**kwargs) built-in.
	Struct
	// Sum is sum(iterable, start=0), which adds the items of iterable to
	// start with + as Python's sum does, counting each item as a step.
	Sum
	// Regexp is the re module over Go's RE2 syntax (no backreferences or
	// lookaround): re.findall, re.search, re.match, re.fullmatch, re.sub
	// and re.split, with Python's arguments, run in the worker under its
	// limits. Each match counts as an execution step; a call goes through
	// at most MaxRegexpMatches matches, and one that would produce more
	// than Config.MaxResult bytes fails with an error naming the limit.
	// The time a search itself takes is bounded by Config.CPUTime and
	// Options.Timeout, not by Options.MaxSteps. re.sub's count must not
	// be negative.
	Regexp
)

// Func is a host function offered to programs as a built-in. It runs in
// the host's process. The program calls it with keyword arguments only;
// they reach args converted through JSON (a Starlark dict becomes a
// map[string]any, a list a []any, a number a float64). The value returned
// goes back through JSON too, except a string, which the program gets as
// it is. An error stops the program with an [Error] of kind [KindFunc].
// ctx ends when the run does: at its Options.Timeout or when the run's
// context ends. A function still running some grace after that is left
// to finish on its own, its worker is stopped, and the run ends with
// [KindTimeLimit] or [KindCancelled]: a Func must return when ctx ends.
type Func func(ctx context.Context, args map[string]any) (any, error)

// Render says how the worker renders Result.Value.
type Render int

const (
	// RenderRepr renders a value in Starlark notation (its String method):
	// a string in quotes.
	RenderRepr Render = iota
	// RenderText renders a string as it is, a dict's "result" entry as
	// text, a list's items as text joined by spaces, and anything else in
	// Starlark notation.
	RenderText
)

// Options configure one run. The zero value runs a program with Starlark's
// built-ins only and no limits but its context and its pool's.
type Options struct {
	// Filename names the program in error messages and backtraces.
	// Empty means "code.star".
	Filename string
	// MaxSteps stops the program after this many execution steps. Zero
	// means no limit.
	MaxSteps uint64
	// Timeout stops the program after this much wall time, host function
	// calls included. Zero means no limit.
	Timeout time.Duration
	// Modules are offered to the program.
	Modules Module
	// Funcs are the host functions offered to the program, by the name it
	// calls them with. A name here hides a module's name.
	Funcs map[string]Func
	// MaxCalls bounds the calls of one run to Funcs, all together. Zero
	// means no limit.
	MaxCalls int
	// Entry names a function the program must define. Run executes the
	// program's top-level statements, then calls Entry with no arguments
	// and renders what it returns in Result.Value. Empty means only the
	// top-level statements run; read their results with Globals.
	Entry string
	// Render says how Result.Value is rendered.
	Render Render
	// Globals name the global variables to return, in Starlark notation,
	// in Result.Globals; those the program did not define are left out.
	Globals []string
	// MaxOutput bounds the printed output kept in Result.Output and
	// Error.Output, in bytes; the rest is dropped and Result.Truncated
	// says so. Zero keeps all of it, up to the pool's Config.MaxResult.
	MaxOutput int
	// DiscardOutput drops what the program prints.
	DiscardOutput bool
	// LoadError is what load statements fail with. Nil means
	// ErrLoadDisabled.
	LoadError error
}

// Result is what a program produced.
type Result struct {
	// Value is what the Entry function returned, rendered as
	// Options.Render says; empty without Entry.
	Value string
	// Globals are the global variables named by Options.Globals after the
	// program ran, in Starlark notation.
	Globals map[string]string
	// Output is what the program printed, one line per print call.
	Output string
	// Truncated reports that Output was cut at Options.MaxOutput bytes.
	Truncated bool
	// Steps is the number of execution steps the program took.
	Steps uint64
}

// Kind says what stopped a program.
type Kind int

// The kinds of Error.
const (
	// KindSyntax: the program did not parse or used an undefined name.
	KindSyntax Kind = iota + 1
	// KindRuntime: the program raised an error.
	KindRuntime
	// KindLoad: the program ran a load statement.
	KindLoad
	// KindNoEntry: the program did not define Options.Entry as a function.
	KindNoEntry
	// KindFunc: a host function returned an error.
	KindFunc
	// KindCallLimit: the program called host functions more than
	// Options.MaxCalls times.
	KindCallLimit
	// KindStepLimit: the program ran Options.MaxSteps steps.
	KindStepLimit
	// KindTimeLimit: the program ran longer than Options.Timeout.
	KindTimeLimit
	// KindCancelled: the run's context ended first.
	KindCancelled
	// KindMemoryLimit: the worker ran out of memory (Config.Memory).
	KindMemoryLimit
	// KindStackLimit: the worker's stack passed Config.MaxStack, from
	// nesting too deep.
	KindStackLimit
	// KindCPULimit: the worker used more than Config.CPUTime.
	KindCPULimit
	// KindOutputLimit: the result, the output or a host function's
	// arguments passed Config.MaxResult.
	KindOutputLimit
	// KindCrash: the worker died for another reason, or could not start.
	KindCrash
)

var kindNames = [...]string{
	KindSyntax:      "syntax",
	KindRuntime:     "runtime",
	KindLoad:        "load",
	KindNoEntry:     "no entry",
	KindFunc:        "host function",
	KindCallLimit:   "call limit",
	KindStepLimit:   "step limit",
	KindTimeLimit:   "time limit",
	KindCancelled:   "cancelled",
	KindMemoryLimit: "memory limit",
	KindStackLimit:  "stack limit",
	KindCPULimit:    "cpu limit",
	KindOutputLimit: "output limit",
	KindCrash:       "crash",
}

// String returns the kind's name, such as "step limit".
func (k Kind) String() string {
	if k > 0 && int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Error reports a program that did not run to its end.
type Error struct {
	// Kind says what stopped the program.
	Kind Kind
	// Msg explains it: the parser's message for KindSyntax, the Starlark
	// backtrace for KindRuntime and KindLoad, the host function's name
	// and error for KindFunc, and which limit for the limits.
	Msg string
	// Func names the host function of a KindFunc error.
	Func string
	// Output is what the program printed before it stopped; empty when
	// its worker died.
	Output string
	// Steps is how many execution steps ran; zero when its worker died.
	Steps uint64
	// Err is the underlying error: the host function's error for
	// KindFunc, Options.LoadError for KindLoad, the context's cause for
	// KindCancelled, context.DeadlineExceeded for KindTimeLimit; nil
	// otherwise.
	Err error
}

// Error says what stopped the program.
func (e *Error) Error() string { return "sandbox: " + e.Kind.String() + " error: " + e.Msg }

// Unwrap returns Err.
func (e *Error) Unwrap() error { return e.Err }

// SharedMaxAbandoned is the Config.MaxAbandoned of the pool Run uses: past
// that many host function calls left running after their runs ended, runs
// with host functions fail with ErrTooManyAbandoned until some return.
const SharedMaxAbandoned = 16

var (
	sharedOnce sync.Once
	shared     *Pool
)

// Run executes the Starlark program src under opts in a worker of the pool
// shared by the process (started on first use, with the default Config but
// for MaxAbandoned, SharedMaxAbandoned).
// It stops when ctx ends. A program that does not run to its end is an
// *Error.
func Run(ctx context.Context, src string, opts Options) (Result, error) {
	return sharedPool().Run(ctx, src, opts)
}

// Abandoned is [Pool.Abandoned] of the pool Run uses: the host function
// calls left running after their runs ended that have not returned yet.
func Abandoned() int { return sharedPool().Abandoned() }

// sharedPool returns the pool shared by the process.
func sharedPool() *Pool {
	sharedOnce.Do(func() { shared, _ = NewPool(Config{MaxAbandoned: SharedMaxAbandoned}) })
	return shared
}
