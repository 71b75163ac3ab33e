package cortexr

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
)

var (
	anyFenceRE = regexp.MustCompile("(?s)```[a-zA-Z0-9_+-]*[ \t]*\n(.*?)```")
	importRE   = regexp.MustCompile(`(?m)^[ \t]*(?:import[ \t]+([A-Za-z_][\w.]*)(?:[ \t]+as[ \t]+\w+)?|from[ \t]+([A-Za-z_][\w.]*)[ \t]+import[ \t]+.*)[ \t]*$`)
	asyncDefRE = regexp.MustCompile(`(?m)^([ \t]*)async[ \t]+def[ \t]+`)
	awaitRE    = regexp.MustCompile(`\bawait[ \t]+`)
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
	return code, nil
}
