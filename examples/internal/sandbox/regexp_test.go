package sandbox_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/examples/internal/sandbox"
)

// The re module follows Python's re over Go's RE2 syntax.
func TestRegexpModule(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ src, want string }{
		{`re.findall(r"\d+", "a 12 b 345")`, `["12", "345"]`},
		{`re.findall(r"(\w)=(\d)?", "a=1 b=")`, `[("a", "1"), ("b", "")]`},
		{`re.findall(pattern = r"x(\d)", string = "x1 x2")`, `["1", "2"]`},
		{`re.search(r"costs (\d+)", "it costs 40").group(1)`, `"40"`},
		{`re.search(r"(a)(b)?", "xa").groups()`, `("a", None)`},
		{`re.search(r"(a)(b)?", "xa").groups("-")`, `("a", "-")`},
		{`re.search(r"(?P<n>\d+)", "ab 42").group("n", 0)`, `("42", "42")`},
		{`re.search(r"b+", "abbc").span()`, `(1, 3)`},
		{`[re.search(r"c", "ab"), re.match(r"b", "ab"), re.fullmatch(r"a|ab", "ab").group()]`, `[None, None, "ab"]`},
		{`re.match(r"a|b", "ba").start()`, `0`},
		{`re.sub(r"(\w+)@(\w+)", r"\2 at \1, \g<1>$1", "bob@example")`, `"example at bob, bob$1"`},
		{`re.sub(r"a", "b", "aaa", count = 2)`, `"bba"`},
		{`re.sub(r"\s", r"\n", "a b")`, `"a\nb"`},
		{`re.split(r"\s*;\s*", "a ; b;c")`, `["a", "b", "c"]`},
		{`re.split(r",", "a,b,c", maxsplit = 1)`, `["a", "b,c"]`},
		{`re.sub(r"a", r"[\0]", "xa")`, `"x[\x00]"`},
		{`re.sub(r"a", r"\012", "a")`, `"\n"`},
		// maxsplit bounds the matches looked for: past MaxRegexpMatches separators is fine.
		{`len(re.split(r",", "a" + "," * 100005, maxsplit = 2))`, `3`},
		{`re.split(r"x*", "ab", maxsplit = 1)`, `["a", "b"]`},
	} {
		res, err := sandbox.Run(context.Background(), "result = "+c.src, sandbox.Options{Modules: sandbox.Regexp, Globals: []string{"result"}})
		if err != nil || res.Globals["result"] != c.want {
			t.Errorf("%s = %s, %v; want %s", c.src, res.Globals["result"], err, c.want)
		}
	}
	for _, fn := range []string{"match", "fullmatch"} {
		// Valid only once wrapped in (?:…): refused as Python does.
		se := runErr(t, context.Background(), `re.`+fn+`("a)|(?:b", "b")`, sandbox.Options{Modules: sandbox.Regexp})
		if se.Kind != sandbox.KindRuntime || !strings.Contains(se.Msg, "pattern") {
			t.Errorf("re.%s of an unbalanced pattern: %v", fn, se)
		}
	}
	se := runErr(t, context.Background(), `re.findall(r"(?<=a)b", "ab")`, sandbox.Options{Modules: sandbox.Regexp})
	if se.Kind != sandbox.KindRuntime || !strings.Contains(se.Msg, "RE2 syntax") {
		t.Errorf("lookbehind: %v", se)
	}
	se = runErr(t, context.Background(), `re.search(r"(a)", "a").group(2)`, sandbox.Options{Modules: sandbox.Regexp})
	if !strings.Contains(se.Msg, "no such group: 2 (the pattern has 1 groups)") {
		t.Errorf("missing group: %v", se)
	}
}

// What one re call produces is bounded by Config.MaxResult and
// MaxRegexpMatches, with errors naming the limit, and its matches count as
// steps.
func TestRegexpLimits(t *testing.T) {
	t.Parallel()
	p := newPool(t, sandbox.Config{MaxResult: 64 << 10})
	opts := sandbox.Options{Modules: sandbox.Regexp}
	for _, c := range []struct{ name, src, want string }{
		{"sub", `re.sub("a", "b" * 300, "a" * 1000)`, "re.sub: the result comes to more than 65536 bytes"},
		{"sub of the tail", `re.sub("x", "", "a" * 70000)`, "re.sub: the result comes to more than 65536 bytes"},
		{"findall", `re.findall("(a)(a)", "a" * 60000)`, "re.findall: the matches come to more than 65536 bytes"},
		{"split", `re.split("b", "ab" * 30000)`, "re.split: the parts come to more than 65536 bytes"},
		{"matches", fmt.Sprintf(`re.sub("", "", "a" * %d)`, sandbox.MaxRegexpMatches), fmt.Sprintf("more than %d matches (MaxRegexpMatches)", sandbox.MaxRegexpMatches)},
		// Matches times groups indices would take about 480 MB: the
		// search stops at the matches the budget allows.
		{"findall of many groups", `re.findall("(a?)" * 300, "b" * 99999)`, "re.findall: the matches come to more than 65536 bytes"},
		{"negative count", `re.sub("a", "b", "aaa", count = -1)`, "re.sub: count is -1"},
	} {
		se := poolErr(t, p, c.src, opts)
		if se.Kind != sandbox.KindRuntime || !strings.Contains(se.Msg, c.want) {
			t.Errorf("%s: %v; want a runtime error with %q", c.name, se, c.want)
		}
	}
	se := poolErr(t, p, `re.findall("a", "a" * 5000)`, sandbox.Options{Modules: sandbox.Regexp, MaxSteps: 1000})
	if se.Kind != sandbox.KindStepLimit {
		t.Errorf("5000 matches in 1000 steps: %v; want a step limit", se)
	}
	stillRuns(t, p)
}

// A host function's value larger than Config.MaxResult is not sent to the
// worker: the call fails with an error naming the limit, which the program
// sees, and the worker serves the next run.
func TestFuncValueOverMaxResult(t *testing.T) {
	t.Parallel()
	p := newPool(t, sandbox.Config{MaxResult: 64 << 10})
	funcs := map[string]sandbox.Func{
		"text": func(context.Context, map[string]any) (any, error) { return strings.Repeat("a", 100<<10), nil },
		"list": func(context.Context, map[string]any) (any, error) { return make([]int, 50<<10), nil },
	}
	for _, name := range []string{"text", "list"} {
		se := poolErr(t, p, "r = "+name+"()\nresult = len(r)", sandbox.Options{Funcs: funcs})
		want := fmt.Sprintf("the host function %s returned ", name)
		if se.Kind != sandbox.KindFunc || se.Func != name || !strings.Contains(se.Msg, want) || !strings.Contains(se.Msg, "more than the sandbox's limit of 65536 (Config.MaxResult)") {
			t.Errorf("%s: %v; want a host function error naming the limit", name, se)
		}
	}
	stillRuns(t, p)
}
