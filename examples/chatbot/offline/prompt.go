package offline

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/examples/supervisor/supervisortest"
	"github.com/agentgraph/agentgraph/operator"
)

// kind is the task a prompt asks for.
type kind int

const (
	kindText kind = iota // free text: writer, synthesizer, anything else
	kindSupervisor
	kindReflection
	kindPlan
	kindWrite
	kindRewrite // an operator's query rewriter: JSON with internal_query and external_query
	kindCode    // an operator's coder: one fenced code block
	// kindChunkSummary and kindCombine are package document's
	// LLMSummarizer: a chunk's summary, a document's from its chunks'.
	kindChunkSummary
	kindCombine
)

// tool is one line of a prompt's tool or operator list.
type tool struct{ name, description string }

// result is one "### source" block of a prompt's results.
type result struct {
	source string
	text   string
	err    string
}

// usable reports whether the result succeeded with content that is not a
// "no results" message nor a query rewrite (search queries are a means to
// an answer, not facts to quote).
func (r result) usable() bool {
	if r.err != "" || isRewrite(r.text) {
		return false
	}
	t := strings.ToLower(strings.TrimSpace(r.text))
	return t != "" && t != "(none)" && !strings.HasPrefix(t, "no passages match") && !strings.HasPrefix(t, "no web results")
}

// prompt is what the model understood of a request.
type prompt struct {
	kind         kind
	question     string
	tools        []tool
	results      []result
	iteration    int
	max          int
	draft        string
	conversation string
	language     string // kindCode
}

// rewriteOutput is query_rewriter's output.
type rewriteOutput struct {
	Internal string `json:"internal_query"`
	External string `json:"external_query"`
}

// isRewrite reports whether a result's text is a query rewrite: a JSON
// object with internal_query, possibly after a "(source) " label as the
// chatbot's synthesis sources have.
func isRewrite(text string) bool {
	_, ok := rewriteOf(text)
	return ok
}

// rewriteOf decodes a query rewrite result (see isRewrite).
func rewriteOf(text string) (rewriteOutput, bool) {
	t := strings.TrimSpace(text)
	if strings.HasPrefix(t, "(") {
		if i := strings.Index(t, ") {"); i >= 0 {
			t = t[i+2:]
		}
	}
	var out rewriteOutput
	if !strings.HasPrefix(t, "{") || !strings.Contains(t, `"internal_query"`) || json.Unmarshal([]byte(t), &out) != nil {
		return out, false
	}
	return out, out.Internal != "" || out.External != ""
}

// operatorPrompts are the prompt templates of package operator's built-in
// LLM operators, split at their %s verbs. A prompt made from one is read
// by the template: its fixed text says what is asked, and the values
// between (the question, the sources, the assembled context) are data, so
// what they quote (another operator's JSON output, a tool's text) cannot
// change the kind of answer.
var operatorPrompts = []struct {
	kind   kind
	fields []string // the value of each %s, in order
	parts  []string
}{
	{kindRewrite, []string{"Question", "Context"}, strings.Split(operator.QueryRewriterPrompt, "%s")},
	{kindText, []string{"Question", "Sources", "Context"}, strings.Split(operator.SynthesizerPrompt, "%s")},
	{kindText, []string{"Question", "Content", "Context"}, strings.Split(operator.WriterPrompt, "%s")},
	{kindText, []string{"Question", "Data", "Context"}, strings.Split(operator.AnalyzerPrompt, "%s")},
	{kindCode, []string{"Language", "Task", "Context"}, strings.Split(operator.CoderPrompt, "%s")},
}

// fillTemplate returns the values of parts' verbs in text, or false when
// text is not made from parts.
func fillTemplate(parts []string, text string) (map[int]string, bool) {
	last := strings.TrimRight(parts[len(parts)-1], " \n")
	text = strings.TrimRight(text, " \n")
	if !strings.HasPrefix(text, parts[0]) || !strings.HasSuffix(text[len(parts[0]):], last) {
		return nil, false
	}
	rest := text[len(parts[0]) : len(text)-len(last)]
	out := map[int]string{}
	for i, sep := range parts[1 : len(parts)-1] {
		j := strings.Index(rest, sep)
		if j < 0 {
			return nil, false
		}
		out[i], rest = strings.TrimSpace(rest[:j]), rest[j+len(sep):]
	}
	out[len(parts)-2] = strings.TrimSpace(rest)
	return out, true
}

// fromTemplate reads a built-in operator's prompt, or reports false.
func fromTemplate(human string) (prompt, bool) {
	text := strings.TrimSpace(human)
	for _, t := range operatorPrompts {
		vals, ok := fillTemplate(t.parts, text)
		if !ok {
			continue
		}
		p := prompt{kind: t.kind, iteration: 1, max: supervisor.DefaultMaxIterations}
		for i, f := range t.fields {
			v := vals[i]
			switch f {
			case "Question", "Task":
				p.question = v
			case "Language":
				p.language = v
			case "Context":
				p.conversation = withSummaryTurns(contextParts(v, "conversation."))
			default: // the material: Sources, Content, Data
				if v != "" && v != "(none)" {
					p.results = append(p.results, numbered(strings.ToLower(f), v)...)
				}
			}
		}
		return p, true
	}
	return prompt{}, false
}

// contextParts returns the items of an assembled context's parts whose
// requirement starts with prefix ("## conversation.recent(3)" and the
// lines under it), one per line.
func contextParts(assembled, prefix string) string {
	var out []string
	in := false
	for _, line := range strings.Split(assembled, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			in = strings.HasPrefix(strings.TrimSpace(h), prefix)
			continue
		}
		if in && strings.TrimSpace(line) != "" {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n")
}

// classify reads the system and human text of a request. The supervisor
// steps' requests are read through package supervisortest; a request whose
// system prompt carries a step's schema (a caller that replaced the step's
// prompt) is recognised by it.
func classify(system, human string) prompt {
	p := prompt{iteration: 1, max: supervisor.DefaultMaxIterations}
	if r, ok := supervisortest.Parse(human); ok {
		return fromStep(r)
	}
	switch {
	case strings.Contains(system, `"CREATE_WORKFLOW"`):
		p.kind = kindSupervisor
	case strings.Contains(system, `"need_more"`):
		p.kind = kindReflection
	case strings.Contains(system, `"depends_on"`) && !strings.Contains(system, `"action"`):
		p.kind = kindPlan
	}
	if p.kind != kindText {
		p.question = strings.TrimSpace(human)
		return p
	}
	if op, ok := fromTemplate(human); ok {
		return op
	}
	// Other operators' prompts: "Question: ..." (or "Task: ...") then
	// labelled blocks.
	text := system + "\n" + human
	p.question = labelled(text, "Question")
	switch {
	case strings.Contains(text, `"internal_query"`) && strings.Contains(text, `"external_query"`):
		p.kind = kindRewrite
	case strings.Contains(text, "fenced code block"):
		p.kind = kindCode
		p.question = labelled(text, "Task")
		if m := languageRE.FindStringSubmatch(text); m != nil {
			p.language = m[1]
		}
	}
	for _, label := range []string{"Sources", "Content", "Data"} {
		if b := block(text, label); b != "" && b != "(none)" {
			p.results = append(p.results, numbered(strings.ToLower(label), b)...)
		}
	}
	if p.question == "" {
		p.question = strings.TrimSpace(human)
	}
	return p
}

var languageRE = regexp.MustCompile(`runnable (\w+) program`)

// fromStep is what the model understands of a supervisor step's request.
func fromStep(r supervisortest.Request) prompt {
	p := prompt{question: r.Query, conversation: withSummaryTurns(r.Context), draft: r.Draft, iteration: r.Iteration, max: r.MaxIterations}
	switch r.Step {
	case supervisortest.Decide:
		p.kind = kindSupervisor
	case supervisortest.Reflect:
		p.kind = kindReflection
	case supervisortest.Plan:
		p.kind = kindPlan
	case supervisortest.Write:
		p.kind = kindWrite
	}
	for _, t := range r.Tools {
		p.tools = append(p.tools, tool{name: t.Name, description: t.Description})
	}
	for _, o := range r.Observations {
		p.results = append(p.results, result{source: o.Source, text: o.Content, err: o.Err})
	}
	if p.iteration == 0 {
		p.iteration, p.max = 1, supervisor.DefaultMaxIterations
	}
	return p
}

// labelled returns the rest of the first line starting with "label: ".
func labelled(text, label string) string {
	for _, line := range strings.Split(text, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), label+":"); ok && strings.TrimSpace(v) != "" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// block returns the lines after a line "label:" up to the next blank line
// followed by another "Word:" label line, or the end.
func block(text, label string) string {
	lines := strings.Split(text, "\n")
	for i, line := range lines {
		if strings.TrimSpace(line) != label+":" {
			continue
		}
		var body []string
		for _, l := range lines[i+1:] {
			if labelLineRE.MatchString(l) {
				break
			}
			body = append(body, l)
		}
		return strings.TrimSpace(strings.Join(body, "\n"))
	}
	return ""
}

var labelLineRE = regexp.MustCompile(`^(Question|Sources|Content|Data|Context|Task):\s*$`)

// numbered splits a list of sources rendered "[1] ...", "[2] ..." into one
// result each; a line "[n] ... (score x)" is a search passage inside a
// source, not a new source.
func numbered(label, text string) []result {
	var out []result
	var cur []string
	next := 1
	flush := func() {
		if t := strings.TrimSpace(strings.Join(cur, "\n")); t != "" {
			src := label
			if len(out) > 0 || next > 1 {
				src = fmt.Sprintf("%s [%d]", label, next-1)
			}
			out = append(out, result{source: src, text: t})
		}
		cur = nil
	}
	for _, line := range strings.Split(text, "\n") {
		if m := sourceStartRE.FindStringSubmatch(line); m != nil && m[1] == strconv.Itoa(next) && !scoreSuffixRE.MatchString(line) {
			flush()
			next++
			cur = append(cur, m[2])
			continue
		}
		cur = append(cur, line)
	}
	flush()
	return out
}

var (
	sourceStartRE = regexp.MustCompile(`^\[(\d+)\] (.*)$`)
	scoreSuffixRE = regexp.MustCompile(`\(score [\d.]+\)\s*$`)
)
