package cortexr

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/tmc/langchaingo/llms"
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
// prompt's catalog, and ignores the strategy.
type OfflineModel struct{}

// NewOfflineModel returns the offline demo model.
func NewOfflineModel() *OfflineModel { return &OfflineModel{} }

// Call implements llms.Model.
func (m *OfflineModel) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, m, prompt, options...)
}

// GenerateContent implements llms.Model: it reads the text of every message
// and replies to the Cortex-R prompt it finds.
func (m *OfflineModel) GenerateContent(ctx context.Context, messages []llms.MessageContent, _ ...llms.CallOption) (*llms.ContentResponse, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var b strings.Builder
	for _, msg := range messages {
		for _, p := range msg.Parts {
			if t, ok := p.(llms.TextContent); ok {
				b.WriteString(t.Text)
				b.WriteByte('\n')
			}
		}
	}
	prompt := b.String()
	var reply string
	switch {
	case strings.Contains(prompt, "You are a perception engine"):
		reply = offlinePerception(prompt)
	case strings.Contains(prompt, "Write a Starlark function named solve()"):
		reply = offlinePlan(prompt)
	default:
		reply = "I am an offline demo model and only answer Cortex-R's perception and decision prompts."
	}
	return &llms.ContentResponse{Choices: []*llms.ContentChoice{{Content: reply, StopReason: "stop"}}}, nil
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

func offlinePlan(prompt string) string {
	input := ""
	if m := queryRE.FindStringSubmatch(prompt); m != nil {
		input = m[1]
	}
	task := input
	if m := taskRE.FindStringSubmatch(input); m != nil {
		task = m[1]
	}
	tools := catalog(prompt, "Tool catalog:")
	ops, judge := parseOps(task)

	// A later step: read the last result and make the judgement.
	if m := lastRE.FindStringSubmatch(input); m != nil {
		last := strings.TrimSpace(m[1])
		if urlRE.MatchString(task) {
			return planReturning(FinalAnswer + " " + summarise(last))
		}
		if judge == nil {
			return planReturning(FinalAnswer + " " + last)
		}
		v, err := strconv.ParseFloat(last, 64)
		if err != nil {
			return planReturning(fmt.Sprintf("%s %q is not a number, so I cannot compare it with %v", FinalAnswer, last, judge.than))
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
		return planReturning(FinalAnswer + " " + ans)
	}

	if len(ops) > 0 && (ops[0].prev == "" || len(ops) > 1) {
		var b strings.Builder
		b.WriteString("def solve():\n")
		for i, o := range ops {
			if !slices.Contains(tools, o.tool) {
				return planFailing(fmt.Sprintf("no plan: the step %s needs the tool %s, which is not among %s", o.tool, o.tool, strings.Join(tools, ", ")))
			}
			var args []string
			keys := make([]string, 0, len(o.args))
			for k := range o.args {
				keys = append(keys, k)
			}
			sort.Strings(keys)
			if o.prev != "" && i > 0 {
				args = append(args, fmt.Sprintf("%s=v%d", o.prev, i))
			}
			for _, k := range keys {
				args = append(args, fmt.Sprintf("%s=%s", k, starlarkLiteral(o.args[k])))
			}
			fmt.Fprintf(&b, "    # FUNCTION_CALL: %d\n    v%d = %s(%s)\n", i+1, i+1, o.tool, strings.Join(args, ", "))
		}
		prefix := FinalAnswer
		if judge != nil {
			prefix = FurtherRequired
		}
		fmt.Fprintf(&b, "    return %s + str(v%d)\n", strconv.Quote(prefix+" "), len(ops))
		return b.String()
	}
	if u := urlRE.FindString(task); u != "" && slices.Contains(tools, "convert_webpage_url_into_markdown") {
		return fmt.Sprintf(`def solve():
    # FUNCTION_CALL: 1
    page = convert_webpage_url_into_markdown(url=%s)
    return "FURTHER_PROCESSING_REQUIRED: " + page
`, strconv.Quote(strings.TrimRight(u, ".,;:!?)")))
	}
	if slices.Contains(tools, "search_stored_documents") {
		fallback := `    return "FINAL_ANSWER: the stored documents do not answer this (best score " + str(best) + ")"`
		if slices.Contains(tools, "web_search") {
			fallback = fmt.Sprintf(`    # FUNCTION_CALL: 2
    found = web_search(query=%s, max_results=1)
    if not found["results"]:
        return "FINAL_ANSWER: nothing found"
    top = found["results"][0]
    return "FINAL_ANSWER: " + top["title"] + ": " + top["snippet"] + " (" + top["url"] + ")"`, strconv.Quote(task))
		}
		return fmt.Sprintf(`def solve():
    # FUNCTION_CALL: 1
    hits = search_stored_documents(query=%s, k=3)
    best = hits[0]["score"] if hits else 0
    if best >= %v:
        top = hits[0]
        return "FINAL_ANSWER: " + top["text"] + " [Source: " + top["source"] + ", score " + str(top["score"])[:5] + "]"
%s
`, strconv.Quote(task), docScoreThreshold, fallback)
	}
	if slices.Contains(tools, "web_search") {
		return fmt.Sprintf(`def solve():
    # FUNCTION_CALL: 1
    found = web_search(query=%s, max_results=1)
    if not found["results"]:
        return "FINAL_ANSWER: nothing found"
    top = found["results"][0]
    return "FINAL_ANSWER: " + top["title"] + ": " + top["snippet"] + " (" + top["url"] + ")"
`, strconv.Quote(task))
	}
	return planFailing("no plan: the offline demo model does not recognise this query; configure a real model")
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

func planReturning(s string) string {
	return "def solve():\n    return " + strconv.Quote(s) + "\n"
}

func starlarkLiteral(v any) string {
	switch v := v.(type) {
	case string:
		return strconv.Quote(v)
	default:
		return fmt.Sprint(v)
	}
}
