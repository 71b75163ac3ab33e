package cortexr

import (
	"context"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/agentgraph/agentgraph/examples/internal/sandbox"
)

var (
	anyFenceRE = regexp.MustCompile("(?s)```[a-zA-Z0-9_+-]*[ \t]*\n(.*?)```")
	importRE   = regexp.MustCompile(`(?m)^[ \t]*(?:import[ \t]+([A-Za-z_][\w.]*)(?:[ \t]+as[ \t]+\w+)?|from[ \t]+([A-Za-z_][\w.]*)[ \t]+import[ \t]+.*)[ \t]*$`)
	asyncDefRE = regexp.MustCompile(`(?m)^([ \t]*)async[ \t]+def[ \t]+`)
	awaitRE    = regexp.MustCompile(`\bawait[ \t]+`)
	reUseRE    = regexp.MustCompile(`\bre\.(findall|search|match|sub|split|fullmatch)\b`)
)

// extractPlan returns the code of a model's reply: the first fenced block
// that defines solve (or the first fenced block), wherever it is in the
// reply, else the reply itself.
func extractPlan(reply string) string {
	reply = strings.TrimSpace(reply)
	blocks := anyFenceRE.FindAllStringSubmatch(reply, -1)
	for _, b := range blocks {
		if solveAnyDef.MatchString(b[1]) {
			return strings.TrimRight(b[1], "\n") + "\n"
		}
	}
	if len(blocks) > 0 && !solveAnyDef.MatchString(reply) {
		return strings.TrimRight(blocks[0][1], "\n") + "\n"
	}
	return stripFences(reply)
}

var solveAnyDef = regexp.MustCompile(`(?m)^\s*(async\s+)?def\s+solve\s*\(`)

// normalizePlan turns the Python a model writes into the Starlark the
// sandbox runs, keeping line numbers: `async def` becomes `def`, `await`
// goes, imports of json, math and re go (they are there without import);
// any other import is an error that says what is available.
func normalizePlan(code string) (string, error) {
	var bad []string
	code = importRE.ReplaceAllStringFunc(code, func(line string) string {
		m := importRE.FindStringSubmatch(line)
		mod := m[1] + m[2]
		if !slices.Contains([]string{"json", "math", "re"}, mod) {
			bad = append(bad, mod)
		}
		return ""
	})
	if len(bad) > 0 {
		return "", &PlanError{Kind: "invalid plan", Msg: fmt.Sprintf("the plan imports %s; plans cannot import modules: json, math and re are available without import, and tools are functions", strings.Join(bad, ", "))}
	}
	code = asyncDefRE.ReplaceAllString(code, "${1}def ")
	code = awaitRE.ReplaceAllString(code, "")
	if reUseRE.MatchString(code) {
		code += rePrelude
	}
	return code, nil
}

// rePrelude gives plans a subset of Python's re over Go's RE2 syntax (no
// backreferences or lookaround): findall, search, match, fullmatch, sub and
// split. search, match and fullmatch return None or an object with
// group(i) and groups().
const rePrelude = `

def _re_m(m):
    if m == None:
        return None
    return struct(group = lambda i = 0: m[i], groups = lambda: tuple(m[1:]))

re = struct(
    findall = lambda pattern, string: re_findall(pattern = pattern, string = string),
    search = lambda pattern, string: _re_m(re_search(pattern = pattern, string = string)),
    match = lambda pattern, string: _re_m(re_search(pattern = "^(?:" + pattern + ")", string = string)),
    fullmatch = lambda pattern, string: _re_m(re_search(pattern = "^(?:" + pattern + ")$", string = string)),
    sub = lambda pattern, repl, string: re_sub(pattern = pattern, repl = repl, string = string),
    split = lambda pattern, string: re_split(pattern = pattern, string = string),
)
`

// reBudget is how many re calls a plan may make beyond its tool calls.
const reBudget = 200

// reFuncs are the host side of rePrelude.
func reFuncs() map[string]sandbox.Func {
	compile := func(args map[string]any) (*regexp.Regexp, string, error) {
		p, _ := args["pattern"].(string)
		s, ok := args["string"].(string)
		if !ok {
			return nil, "", fmt.Errorf("re: string must be a string, not %T", args["string"])
		}
		if len(p) > 1000 {
			return nil, "", fmt.Errorf("re: pattern longer than 1000 bytes")
		}
		re, err := regexp.Compile(p)
		if err != nil {
			return nil, "", fmt.Errorf("re: pattern %q: %v (patterns use Go's RE2 syntax: no backreferences or lookaround)", p, err)
		}
		return re, s, nil
	}
	toAny := func(ss []string) []any {
		out := make([]any, len(ss))
		for i, s := range ss {
			out[i] = s
		}
		return out
	}
	return map[string]sandbox.Func{
		"re_findall": func(_ context.Context, args map[string]any) (any, error) {
			re, s, err := compile(args)
			if err != nil {
				return nil, err
			}
			var out []any
			for _, m := range re.FindAllStringSubmatch(s, 10000) {
				switch len(m) {
				case 1:
					out = append(out, m[0])
				case 2:
					out = append(out, m[1])
				default:
					out = append(out, toAny(m[1:]))
				}
			}
			if out == nil {
				out = []any{}
			}
			return out, nil
		},
		"re_search": func(_ context.Context, args map[string]any) (any, error) {
			re, s, err := compile(args)
			if err != nil {
				return nil, err
			}
			m := re.FindStringSubmatch(s)
			if m == nil {
				return nil, nil
			}
			return toAny(m), nil
		},
		"re_sub": func(_ context.Context, args map[string]any) (any, error) {
			re, s, err := compile(args)
			if err != nil {
				return nil, err
			}
			repl, _ := args["repl"].(string)
			// Python's \1 is Go's ${1}.
			repl = regexp.MustCompile(`\\(\d)`).ReplaceAllString(strings.ReplaceAll(repl, "$", "$$"), "$${$1}")
			return re.ReplaceAllString(s, repl), nil
		},
		"re_split": func(_ context.Context, args map[string]any) (any, error) {
			re, s, err := compile(args)
			if err != nil {
				return nil, err
			}
			return toAny(re.Split(s, 10000)), nil
		},
	}
}
