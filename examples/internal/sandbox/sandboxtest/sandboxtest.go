// Package sandboxtest holds what the tests of the sandbox's users share:
// programs a model could write that exhaust a host, and a measure of the
// host's heap.
package sandboxtest

import (
	"runtime"
	"strings"

	"github.com/agentgraph/agentgraph/examples/internal/sandbox"
)

// Program is a Starlark program that exhausts a limit.
type Program struct {
	// Name says what it does.
	Name string
	// Src is the program, top-level statements; it assigns the global
	// result when its harm is in rendering it.
	Src string
	// Kinds are the limits it may stop at: which comes first depends on
	// the machine's speed.
	Kinds []sandbox.Kind
}

// limits are the kinds of every limit a worker dies of.
var limits = []sandbox.Kind{sandbox.KindMemoryLimit, sandbox.KindStackLimit, sandbox.KindCPULimit, sandbox.KindTimeLimit}

// Hostile are the programs that brought down the process that ran them
// before programs ran in workers, each with the limits it stops at.
var Hostile = []Program{
	{Name: "json.decode of deep nesting", Src: `x = json.decode("[" * 3000000 + "]" * 3000000)`,
		Kinds: limits},
	{Name: "3 GB in one replace", Src: "s = \"a\" * 1000000\ns = s.replace(\"a\", \"a\" * 3000)",
		Kinds: []sandbox.Kind{sandbox.KindMemoryLimit}},
	{Name: "join of 2 GB", Src: `s = "".join(["a" * 1000000] * 2000)`, Kinds: limits},
	{Name: "list of 500 million", Src: `x = [0] * 500000000`, Kinds: []sandbox.Kind{sandbox.KindMemoryLimit}},
	{Name: "34 doublings", Src: "s = 'ab'\nfor i in range(34):\n    s = s + s", Kinds: limits},
	{Name: "sort of 60 million", Src: `n = len(sorted(range(60000000), reverse=True))`, Kinds: limits},
	{Name: "rendering a deeply nested result", Src: "x = []\nfor i in range(300000):\n    x = [x]\nresult = x", Kinds: limits},
}

// Wants reports whether k is one of p's limits.
func (p Program) Wants(k sandbox.Kind) bool {
	for _, w := range p.Kinds {
		if w == k {
			return true
		}
	}
	return false
}

// Plan returns p as a Cortex-R plan: its statements in solve(), which
// returns a final answer with result in Starlark notation when p defines
// it.
func (p Program) Plan() string {
	var b strings.Builder
	b.WriteString("def solve():\n")
	for line := range strings.SplitSeq(p.Src, "\n") {
		b.WriteString("    " + line + "\n")
	}
	if strings.Contains(p.Src, "result =") {
		b.WriteString("    return \"FINAL_ANSWER: \" + str(result)\n")
	} else {
		b.WriteString("    return \"FINAL_ANSWER: done\"\n")
	}
	return b.String()
}

// HeapAlloc returns the bytes of live heap objects after a collection.
func HeapAlloc() uint64 {
	runtime.GC()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return ms.HeapAlloc
}
