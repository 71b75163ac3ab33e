package cortexr

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/agentgraph/agentgraph/agent/model"
)

// OfflineModel is a DEMO language model: a few rules that read Cortex-R's
// perception and decision prompts, so the agent runs with no API key and no
// network. It is not a language model. It answers the perception prompt with
// JSON (the math server for arithmetic and ASCII queries, web search for
// others) and the decision prompt with a Starlark plan for the queries it
// recognises, chaining the steps it finds in the query in order:
//
//   - "ASCII values of (the) characters in WORD": strings_to_chars_to_int
//   - "exponentials": int_list_to_exponential_sum of the previous value
//   - "factorial of N", "first N Fibonacci numbers": factorial, fibonacci_numbers
//   - "add N", "multiply (it) by N": add, multiply with the previous value
//   - "whether it is greater (or less) than N": a judgement it makes itself
//     after reading the tool's result, so the plan before it returns
//     FURTHER_PROCESSING_REQUIRED and the next step answers.
//
// A query with a URL is read with convert_webpage_url_into_markdown and
// summarised (title and first sentences) in the next step. Other queries
// search the stored documents (search_stored_documents) and answer with
// the best passage and its source when its score reaches 0.25, else fall
// back to web_search when the prompt offers it. A query it cannot plan gets
// a plan that fails saying so. It only plans with tools listed in the
// prompt's catalog.
//
// Its plans follow the prompt's strategy:
//
//   - conservative: exactly one tool call per step; the intermediate
//     result lists the calls made ("tool(args) -> value", one a line) and
//     the next step makes the next call, so "ASCII values … exponentials"
//     takes two steps;
//   - exploratory parallel: independent steps ("the factorial of 5 and the
//     first 7 Fibonacci numbers") in one parallel() call, and a documents
//     question searches the documents and the web together;
//   - exploratory sequential (the default): the steps one after the other
//     in one plan, with try_call and a fallback where one exists (cbrt
//     falls back to power(a, 1/3)), and a documents search that falls
//     back to the web when it fails.
//
// It uses perception's tool hint: a math query with no step it recognises
// ("the cube root of 27") calls the hinted tool with the query's numbers.
// It follows the persona: verbosity high words the answer as a sentence
// naming the tools used, a friendly or warm tone greets.
type OfflineModel struct{}

// NewOfflineModel returns the offline demo model.
func NewOfflineModel() *OfflineModel { return &OfflineModel{} }

var _ model.Model = (*OfflineModel)(nil)

// Generate implements model.Model: it replies to the Cortex-R prompt in
// the request's messages.
func (m *OfflineModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, msg := range req.Messages {
		b.WriteString(msg.Text())
		b.WriteByte('\n')
	}
	return &model.Response{Message: model.Assistant(reply(b.String())), FinishReason: model.FinishStop, Model: "cortexr-offline"}, nil
}

// Stream implements model.Model: the whole reply as one text chunk, then
// the response.
func (m *OfflineModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		resp, err := m.Generate(ctx, req)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		if yield(model.Chunk{Kind: model.ChunkText, Text: resp.Text()}, nil) {
			yield(model.Chunk{Kind: model.ChunkDone, Response: resp}, nil)
		}
	}
}

// reply answers a Cortex-R prompt.
func reply(prompt string) string {
	switch {
	case strings.Contains(prompt, "You are a perception engine"):
		return offlinePerception(prompt)
	case strings.Contains(prompt, "Write a Starlark function named solve()"):
		return offlinePlan(prompt)
	}
	return "I am an offline demo model and only answer Cortex-R's perception and decision prompts."
}

var (
	queryRE   = regexp.MustCompile(`(?s)User query:\n<<<\n(.*?)\n>>>`)
	taskRE    = regexp.MustCompile(`(?m)^Original user task: (.*)$`)
	lastRE    = regexp.MustCompile(`(?s)Your last tool produced this result:\n\n(.*?)\n\nIf this fully answers`)
	mathyRE   = regexp.MustCompile(`(?i)ascii|exponential|factorial|fibonacci|\b(add|sum|multiply|divide|power|plus|times)\b|\d`)
	urlRE     = regexp.MustCompile(`https?://[^\s"'<>]+`)
	entityRE  = regexp.MustCompile(`\b([A-Z]{2,}|\d+(?:\.\d+)?)\b`)
	catalogRE = regexp.MustCompile(`(?m)^- ([A-Za-z0-9_.-]+)[:(]`)
)

func section(prompt, heading string) string {
	_, rest, ok := strings.Cut(prompt, heading+"\n")
	if !ok {
		return ""
	}
	end, _, _ := strings.Cut(rest, "\n\n")
	return end
}

func catalog(prompt, heading string) []string {
	var names []string
	for _, m := range catalogRE.FindAllStringSubmatch(section(prompt, heading), -1) {
		names = append(names, m[1])
	}
	return names
}

func offlinePerception(prompt string) string {
	query := ""
	if m := queryRE.FindStringSubmatch(prompt); m != nil {
		query = m[1]
	}
	if m := taskRE.FindStringSubmatch(query); m != nil {
		// A later step: route by the task, not by the numbers of the
		// last result.
		query = m[1]
	}
	servers := catalog(prompt, "MCP server catalog:")
	p := Perception{Intent: "look up information", Entities: []string{}}
	for _, e := range entityRE.FindAllString(query, -1) {
		if !slices.Contains(p.Entities, e) {
			p.Entities = append(p.Entities, e)
		}
	}
	switch {
	case urlRE.MatchString(query) && slices.Contains(servers, DocumentsServer):
		p.Intent, p.SelectedServers, p.ToolHint = "read and summarise a web page", []string{DocumentsServer}, "convert_webpage_url_into_markdown"
	case mathyRE.MatchString(query) && slices.Contains(servers, MathServerName):
		p.Intent, p.SelectedServers = "compute a value with math and string tools", []string{MathServerName}
		if ops, _ := parseOps(query); len(ops) > 0 {
			p.ToolHint = ops[0].tool
		} else {
			for _, h := range hintRules {
				if h.re.MatchString(query) {
					p.ToolHint = h.tool
					break
				}
			}
		}
	case slices.Contains(servers, DocumentsServer):
		// The stored documents first, the web as the fallback.
		p.SelectedServers, p.ToolHint = []string{DocumentsServer}, "search_stored_documents"
		if slices.Contains(servers, WebSearchServer) {
			p.SelectedServers = append(p.SelectedServers, WebSearchServer)
		}
	case slices.Contains(servers, WebSearchServer):
		p.SelectedServers, p.ToolHint = []string{WebSearchServer}, "web_search"
	default:
		p.SelectedServers = servers
	}
	b, _ := json.Marshal(p)
	return string(b)
}

// op is one tool call of a plan: tool with arguments; prev names the
// argument that takes the previous call's value.
type op struct {
	pos  int
	tool string
	args map[string]any
	prev string
}

// judgement is a comparison the model makes after reading a result.
type judgement struct {
	pos     int
	greater bool
	than    float64
}

var opRules = []struct {
	re   *regexp.Regexp
	make func(m []string) op
}{
	{regexp.MustCompile(`(?i)ascii values? of (?:the )?(?:characters|letters|chars) (?:in|of) "?([A-Za-z0-9]+)"?`),
		func(m []string) op { return op{tool: "strings_to_chars_to_int", args: map[string]any{"string": m[1]}} }},
	{regexp.MustCompile(`(?i)exponentials?`),
		func([]string) op { return op{tool: "int_list_to_exponential_sum", prev: "numbers"} }},
	{regexp.MustCompile(`(?i)factorial of (\d+)`),
		func(m []string) op { return op{tool: "factorial", args: map[string]any{"n": atoi(m[1])}} }},
	{regexp.MustCompile(`(?i)first (\d+) fibonacci`),
		func(m []string) op { return op{tool: "fibonacci_numbers", args: map[string]any{"n": atoi(m[1])}} }},
	{regexp.MustCompile(`(?i)\badd (\d+)`),
		func(m []string) op { return op{tool: "add", args: map[string]any{"b": atoi(m[1])}, prev: "a"} }},
	{regexp.MustCompile(`(?i)multiply (?:it |that |the result )?by (\d+)`),
		func(m []string) op { return op{tool: "multiply", args: map[string]any{"b": atoi(m[1])}, prev: "a"} }},
}

// hintRules give perception's tool hint for math queries with no step
// the planner recognises; the decision then calls the hinted tool with the
// query's numbers.
var hintRules = []struct {
	re   *regexp.Regexp
	tool string
}{
	{regexp.MustCompile(`(?i)cube root`), "cbrt"},
	{regexp.MustCompile(`(?i)remainder|modulo`), "remainder"},
	{regexp.MustCompile(`(?i)\bsine\b|\bsin\b`), "sin"},
	{regexp.MustCompile(`(?i)\bcosine\b|\bcos\b`), "cos"},
	{regexp.MustCompile(`(?i)\btangent\b|\btan\b`), "tan"},
	{regexp.MustCompile(`(?i)\bsubtract|\bminus\b`), "subtract"},
	{regexp.MustCompile(`(?i)\bdivide`), "divide"},
	{regexp.MustCompile(`(?i)\bpower\b|\braised to\b`), "power"},
}

var judgeRE = regexp.MustCompile(`(?i)(?:whether|if) (?:it|that|the result) is (greater|more|larger|bigger|less|smaller|lower) than (-?\d+(?:\.\d+)?)`)

func atoi(s string) int { n, _ := strconv.Atoi(s); return n }

// parseOps finds the tool steps of a query in the order they appear, up to
// the first judgement.
func parseOps(query string) ([]op, *judgement) {
	var ops []op
	for _, r := range opRules {
		for _, loc := range r.re.FindAllStringSubmatchIndex(query, -1) {
			m := make([]string, len(loc)/2)
			for i := range m {
				if loc[2*i] >= 0 {
					m[i] = query[loc[2*i]:loc[2*i+1]]
				}
			}
			o := r.make(m)
			o.pos = loc[0]
			ops = append(ops, o)
		}
	}
	sort.SliceStable(ops, func(i, j int) bool { return ops[i].pos < ops[j].pos })
	var j *judgement
	if loc := judgeRE.FindStringSubmatchIndex(query); loc != nil {
		than, _ := strconv.ParseFloat(query[loc[4]:loc[5]], 64)
		word := strings.ToLower(query[loc[2]:loc[3]])
		j = &judgement{pos: loc[0], than: than, greater: !slices.Contains([]string{"less", "smaller", "lower"}, word)}
		ops = slices.DeleteFunc(ops, func(o op) bool { return o.pos > j.pos })
	}
	return ops, j
}

// planning is what the offline model reads from a decision prompt besides
// the query: the strategy, the tools with their parameters, perception's
// tool hint and the persona.
type planning struct {
	strategy Strategy
	tools    []string
	params   map[string][]string
	hint     string
	verbose  bool // persona verbosity high
	friendly bool // persona tone friendly or warm
}

var (
	toolLineRE = regexp.MustCompile(`(?m)^- ([A-Za-z0-9_.-]+)\(([^)]*)\):`)
	hintRE     = regexp.MustCompile(`(?m)^Hint: the tool ([A-Za-z0-9_.-]+) is likely to help\.$`)
	personaRE  = regexp.MustCompile(`(?m)^Persona: (.*)$`)
	numberRE   = regexp.MustCompile(`-?\d+(?:\.\d+)?`)
	// doneRE is one line of a conservative plan's intermediate result:
	// "tool(args) -> value".
	doneRE = regexp.MustCompile(`(?m)^([A-Za-z0-9_.-]+)\(([^)]*)\) -> (.*)$`)
)

func readPlanning(prompt string) planning {
	p := planning{strategy: StrategySequential, params: map[string][]string{}}
	switch {
	case strings.Contains(prompt, "- Strategy: conservative."):
		p.strategy = StrategyConservative
	case strings.Contains(prompt, "- Strategy: exploratory parallel."):
		p.strategy = StrategyParallel
	}
	for _, m := range toolLineRE.FindAllStringSubmatch(section(prompt, "Tool catalog:"), -1) {
		p.tools = append(p.tools, m[1])
		var ps []string
		for _, f := range strings.Split(m[2], ",") {
			if f = strings.TrimSpace(f); f != "" {
				ps = append(ps, f)
			}
		}
		p.params[m[1]] = ps
	}
	if m := hintRE.FindStringSubmatch(prompt); m != nil {
		p.hint = m[1]
	}
	if m := personaRE.FindStringSubmatch(prompt); m != nil {
		p.verbose = strings.Contains(m[1], "verbosity high")
		p.friendly = strings.Contains(m[1], "tone friendly") || strings.Contains(m[1], "tone warm")
	}
	return p
}

// final is the Starlark expression of a final answer whose value is the
// expression expr, worded as the persona asks: the bare value by default,
// a sentence naming how it was found with verbosity high, a greeting with
// a friendly tone.
func (p planning) final(expr, how string) string {
	out := strconv.Quote(FinalAnswer+" ") + " + "
	if p.friendly {
		out += strconv.Quote("Happy to help! ") + " + "
	}
	if p.verbose && how != "" {
		return out + strconv.Quote("The answer is ") + " + " + expr + " + " + strconv.Quote(" (worked out with "+how+").")
	}
	return out + expr
}

// finalText is final for a value known when planning.
func (p planning) finalText(text, how string) string {
	return "def solve():\n    return " + p.final(strconv.Quote(text), how) + "\n"
}

// fallbacks are the offline model's fallback chains for the sequential
// strategy: a tool, and a call that computes the same with another tool.
var fallbacks = map[string]func(args map[string]any) (string, map[string]any){
	"cbrt": func(a map[string]any) (string, map[string]any) {
		return "power", map[string]any{"a": a["a"], "b": rawExpr("1.0 / 3")}
	},
}

// rawExpr is an argument written into a plan as Starlark code.
type rawExpr string

func offlinePlan(prompt string) string {
	input := ""
	if m := queryRE.FindStringSubmatch(prompt); m != nil {
		input = m[1]
	}
	task := input
	if m := taskRE.FindStringSubmatch(input); m != nil {
		task = m[1]
	}
	pl := readPlanning(prompt)
	tools := pl.tools
	ops, judge := parseOps(task)
	if len(ops) == 0 && judge == nil {
		ops = pl.hinted(task)
	}

	// A later step: read the last result.
	if m := lastRE.FindStringSubmatch(input); m != nil {
		last := strings.TrimSpace(m[1])
		if done := doneRE.FindAllStringSubmatch(last, -1); done != nil {
			return pl.continuePlan(task, ops, judge, done)
		}
		if urlRE.MatchString(task) {
			return pl.finalText(summarise(last), "convert_webpage_url_into_markdown")
		}
		if judge == nil {
			return pl.finalText(last, "")
		}
		return pl.judged(last, judge)
	}

	if len(ops) > 0 && (ops[0].prev == "" || len(ops) > 1) {
		for _, o := range ops {
			if !slices.Contains(tools, o.tool) {
				return planFailing(fmt.Sprintf("no plan: the step %s needs the tool %s, which is not among %s", o.tool, o.tool, strings.Join(tools, ", ")))
			}
		}
		if pl.strategy == StrategyConservative {
			return pl.continuePlan(task, ops, judge, nil)
		}
		return pl.opsPlan(ops, judge)
	}
	if u := urlRE.FindString(task); u != "" && slices.Contains(tools, "convert_webpage_url_into_markdown") {
		return fmt.Sprintf(`def solve():
    # FUNCTION_CALL: 1
    page = convert_webpage_url_into_markdown(url=%s)
    return "FURTHER_PROCESSING_REQUIRED: " + page
`, strconv.Quote(strings.TrimRight(u, ".,;:!?)")))
	}
	if slices.Contains(tools, "search_stored_documents") {
		return pl.documentsPlan(task, slices.Contains(tools, "web_search"))
	}
	if slices.Contains(tools, "web_search") {
		return fmt.Sprintf(`def solve():
    # FUNCTION_CALL: 1
    found = web_search(query=%s, max_results=1)
%s`, strconv.Quote(task), pl.webAnswer("found"))
	}
	return planFailing("no plan: the offline demo model does not recognise this query; configure a real model")
}

// hinted makes one tool call of perception's tool hint when the query
// holds as many numbers as the tool has parameters ("the cube root of 27"
// with the hint cbrt gives cbrt(a=27)).
func (p planning) hinted(task string) []op {
	params := p.params[p.hint]
	if p.hint == "" || len(params) == 0 {
		return nil
	}
	nums := numberRE.FindAllString(task, -1)
	if len(nums) != len(params) {
		return nil
	}
	o := op{tool: p.hint, args: map[string]any{}}
	for i, name := range params {
		v, _ := strconv.ParseFloat(nums[i], 64)
		o.args[name] = v
	}
	return []op{o}
}

// independent reports whether no op takes the previous one's value.
func independent(ops []op) bool {
	for i, o := range ops {
		if i > 0 && o.prev != "" {
			return false
		}
	}
	return true
}

// call is o as Starlark source, its previous value (if it takes one) being
// the expression prev.
func (o op) call(prev string) string {
	return o.tool + "(" + strings.Join(o.argList(prev), ", ") + ")"
}

func (o op) argList(prev string) []string {
	var args []string
	if o.prev != "" && prev != "" {
		args = append(args, fmt.Sprintf("%s=%s", o.prev, prev))
	}
	keys := make([]string, 0, len(o.args))
	for k := range o.args {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		args = append(args, fmt.Sprintf("%s=%s", k, starlarkLiteral(o.args[k])))
	}
	return args
}

// dict is o's arguments as a Starlark dict, for parallel() and try_call().
func (o op) dict(prev string) string {
	var kv []string
	for _, a := range o.argList(prev) {
		k, v, _ := strings.Cut(a, "=")
		kv = append(kv, strconv.Quote(k)+": "+v)
	}
	return "{" + strings.Join(kv, ", ") + "}"
}

// label names an op's call in answers: "factorial(n=5)".
func (o op) label() string { return o.call("") }

// opsPlan is a plan running all the query's steps in one step: in
// parallel with parallel() when they are independent and the strategy is
// exploratory parallel; one after the other otherwise, with try_call and a
// fallback for a tool that has one when the strategy is exploratory
// sequential.
func (p planning) opsPlan(ops []op, judge *judgement) string {
	var b strings.Builder
	b.WriteString("def solve():\n")
	vals := make([]string, len(ops))
	if p.strategy == StrategyParallel && len(ops) >= 2 && len(ops) <= MaxParallelCalls && independent(ops) {
		var calls []string
		for _, o := range ops {
			calls = append(calls, fmt.Sprintf("[%s, %s]", strconv.Quote(o.tool), o.dict("")))
		}
		fmt.Fprintf(&b, "    # FUNCTION_CALL: 1 to %d, independent, run together\n    results = parallel(calls=[%s])\n", len(ops), strings.Join(calls, ", "))
		for i := range ops {
			vals[i] = fmt.Sprintf("results[%d]", i)
		}
	} else {
		for i, o := range ops {
			prev := ""
			if i > 0 {
				prev = vals[i-1]
			}
			v := fmt.Sprintf("v%d", i+1)
			vals[i] = v
			fb, ok := fallbacks[o.tool]
			if p.strategy != StrategySequential || !ok || !slices.Contains(p.tools, "power") {
				fmt.Fprintf(&b, "    # FUNCTION_CALL: %d\n    %s = %s\n", i+1, v, o.call(prev))
				continue
			}
			alt, altArgs := fb(o.args)
			alto := op{tool: alt, args: altArgs}
			fmt.Fprintf(&b, `    # FUNCTION_CALL: %d, falling back to %s if %s fails
    r%d = try_call(tool=%q, args=%s)
    if not r%d["ok"]:
        r%d = try_call(tool=%q, args=%s)
    if not r%d["ok"]:
        fail(%q + r%d["error"])
    %s = r%d["result"]
`, i+1, alt, o.tool, i+1, o.tool, o.dict(prev), i+1, i+1, alt, alto.dict(""), i+1, o.tool+" and its fallback "+alt+" failed: ", i+1, v, i+1)
		}
	}
	if judge != nil {
		fmt.Fprintf(&b, "    return %s + str(%s)\n", strconv.Quote(FurtherRequired+" "), vals[len(vals)-1])
		return b.String()
	}
	fmt.Fprintf(&b, "    return %s\n", p.final(p.resultExpr(ops, vals), p.how(ops)))
	return b.String()
}

// resultExpr is the answer's value: the last step's for a chain, every
// step's, labelled, for independent steps.
func (p planning) resultExpr(ops []op, vals []string) string {
	if len(ops) == 1 || !independent(ops) {
		return "str(" + vals[len(vals)-1] + ")"
	}
	var parts []string
	for i, o := range ops {
		sep := "; "
		if i == 0 {
			sep = ""
		}
		parts = append(parts, strconv.Quote(sep+o.label()+" = ")+" + str("+vals[i]+")")
	}
	return strings.Join(parts, " + ")
}

func (p planning) how(ops []op) string {
	names := make([]string, len(ops))
	for i, o := range ops {
		names[i] = o.tool
	}
	return strings.Join(names, " then ")
}

// continuePlan is the conservative strategy's plan: exactly one tool call
// per step. done are the steps already made, each "tool(args) -> value"
// in the last result; the plan calls the next op and returns what is done
// so far for the next step, or the answer after the last op.
func (p planning) continuePlan(task string, ops []op, judge *judgement, done [][]string) string {
	if len(done) > 0 && done[len(done)-1][1] == "search_stored_documents" {
		// The documents did not answer: the web is the next (one) call.
		if slices.Contains(p.tools, "web_search") {
			return fmt.Sprintf(`def solve():
    # FUNCTION_CALL: 1
    found = web_search(query=%s, max_results=1)
%s`, strconv.Quote(task), p.webAnswer("found"))
		}
		return p.finalText("the stored documents do not answer this", "")
	}
	i := len(done)
	if i >= len(ops) {
		last := done[len(done)-1][3]
		if judge != nil {
			return p.judged(last, judge)
		}
		return p.finalText(last, "")
	}
	o := ops[i]
	if !slices.Contains(p.tools, o.tool) {
		return planFailing(fmt.Sprintf("no plan: the step %s needs the tool %s, which is not among %s", o.tool, o.tool, strings.Join(p.tools, ", ")))
	}
	prev := ""
	if i > 0 {
		prev = done[i-1][3] // the previous value, a Starlark literal
	}
	var sofar strings.Builder
	for _, d := range done {
		sofar.WriteString(d[0] + "\n")
	}
	var b strings.Builder
	fmt.Fprintf(&b, "def solve():\n    # FUNCTION_CALL: 1 (conservative: one call in this step)\n    v = %s\n", o.call(prev))
	if i == len(ops)-1 && judge == nil {
		vals := make([]string, len(ops))
		for j, d := range done {
			vals[j] = d[3]
		}
		vals[i] = "v"
		if independent(ops) && len(ops) > 1 {
			// Earlier values are literals in this plan.
			var parts []string
			for j, oj := range ops {
				sep := "; "
				if j == 0 {
					sep = ""
				}
				val := "str(v)"
				if j < i {
					val = strconv.Quote(vals[j])
				}
				parts = append(parts, strconv.Quote(sep+oj.label()+" = ")+" + "+val)
			}
			fmt.Fprintf(&b, "    return %s\n", p.final(strings.Join(parts, " + "), p.how(ops)))
		} else {
			fmt.Fprintf(&b, "    return %s\n", p.final("str(v)", p.how(ops)))
		}
		return b.String()
	}
	fmt.Fprintf(&b, "    return %s + str(v)\n", strconv.Quote(FurtherRequired+" "+sofar.String()+o.call(prev)+" -> "))
	return b.String()
}

// judged answers a comparison with a value read from the last result.
func (p planning) judged(last string, judge *judgement) string {
	v, err := strconv.ParseFloat(last, 64)
	if err != nil {
		return p.finalText(fmt.Sprintf("%q is not a number, so I cannot compare it with %v", last, judge.than), "")
	}
	yes := v > judge.than
	rel := "greater"
	if !judge.greater {
		yes, rel = v < judge.than, "less"
	}
	ans := "no, " + last + " is not " + rel + " than " + strconv.FormatFloat(judge.than, 'g', -1, 64)
	if yes {
		ans = "yes, " + last + " is " + rel + " than " + strconv.FormatFloat(judge.than, 'g', -1, 64)
	}
	return p.finalText(ans, "")
}

// webAnswer is the end of a plan answering with the top web result held
// in the variable found.
func (p planning) webAnswer(found string) string {
	return fmt.Sprintf(`    if not %[1]s["results"]:
        return "FINAL_ANSWER: nothing found"
    top = %[1]s["results"][0]
    return %[2]s
`, found, p.final(`top["title"] + ": " + top["snippet"] + " (" + top["url"] + ")"`, "web_search"))
}

// documentsPlan answers from the stored documents, with the web as the
// fallback when they do not answer (best score under docScoreThreshold):
// conservative searches the documents in this step and the web in the
// next; exploratory parallel searches both together and picks; exploratory
// sequential searches the documents with try_call and falls back to the web
// when the search fails or finds nothing good.
func (p planning) documentsPlan(task string, web bool) string {
	q := strconv.Quote(task)
	docAnswer := p.final(`top["text"] + " [Source: " + top["source"] + ", score " + str(top["score"])[:5] + "]"`, "search_stored_documents")
	noDocs := `    return "FINAL_ANSWER: the stored documents do not answer this (best score " + str(best) + ")"
`
	switch {
	case p.strategy == StrategyConservative && web:
		return fmt.Sprintf(`def solve():
    # FUNCTION_CALL: 1 (conservative: the web is searched in the next step if needed)
    hits = search_stored_documents(query=%s, k=3)
    best = hits[0]["score"] if hits else 0
    if best >= %v:
        top = hits[0]
        return %s
    return "FURTHER_PROCESSING_REQUIRED: search_stored_documents(k=3) -> no good match (best score " + str(best) + ")"
`, q, docScoreThreshold, docAnswer)
	case p.strategy == StrategyParallel && web:
		return fmt.Sprintf(`def solve():
    # FUNCTION_CALL: 1 and 2, independent, run together
    results = parallel(calls=[["search_stored_documents", {"query": %[1]s, "k": 3}], ["web_search", {"query": %[1]s, "max_results": 1}]])
    hits, found = results[0], results[1]
    best = hits[0]["score"] if hits else 0
    if best >= %[2]v:
        top = hits[0]
        return %[3]s
%[4]s`, q, docScoreThreshold, docAnswer, p.webAnswer("found"))
	case p.strategy == StrategySequential && web:
		return fmt.Sprintf(`def solve():
    # FUNCTION_CALL: 1, falling back to web_search
    r = try_call(tool="search_stored_documents", args={"query": %[1]s, "k": 3})
    hits = r["result"] if r["ok"] else []
    best = hits[0]["score"] if hits else 0
    if best >= %[2]v:
        top = hits[0]
        return %[3]s
    # FUNCTION_CALL: 2
    found = web_search(query=%[1]s, max_results=1)
%[4]s`, q, docScoreThreshold, docAnswer, p.webAnswer("found"))
	}
	return fmt.Sprintf(`def solve():
    # FUNCTION_CALL: 1
    hits = search_stored_documents(query=%s, k=3)
    best = hits[0]["score"] if hits else 0
    if best >= %v:
        top = hits[0]
        return %s
%s`, q, docScoreThreshold, docAnswer, noDocs)
}

// docScoreThreshold is the cosine score of the offline embedding below
// which the offline plans treat the stored documents as not answering.
const docScoreThreshold = 0.25

// summarise is the offline model's extractive summary of a page in
// Markdown: its title and first sentences, about 300 characters.
func summarise(md string) string {
	var title string
	var body []string
	for _, line := range strings.Split(md, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "#"):
			if title == "" {
				title = strings.TrimSpace(strings.TrimLeft(line, "#"))
			}
		case strings.HasPrefix(line, "[") || strings.Contains(line, "](") || strings.HasSuffix(line, ")") && strings.Contains(line, "(http"):
		default:
			body = append(body, line)
		}
	}
	text := strings.Join(body, " ")
	if len(text) > 300 {
		cut := strings.LastIndex(text[:300], ". ")
		if cut < 0 {
			cut = 299
		}
		text = text[:cut+1]
	}
	if title == "" {
		return text
	}
	return title + ": " + text
}

// planFailing is a plan that fails with msg: the offline model's honest
// "I cannot", which costs a lifeline instead of passing for an answer.
func planFailing(msg string) string {
	return "def solve():\n    fail(" + strconv.Quote(msg) + ")\n"
}

func starlarkLiteral(v any) string {
	switch v := v.(type) {
	case rawExpr:
		return string(v)
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64)
	case string:
		return strconv.Quote(v)
	default:
		return fmt.Sprint(v)
	}
}
