package offline

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/agentgraph/agentgraph/agent"
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
		p := prompt{kind: t.kind, iteration: 1, max: agent.DefaultMaxIterations}
		for i, f := range t.fields {
			v := vals[i]
			switch f {
			case "Question", "Task":
				p.question = v
			case "Language":
				p.language = v
			case "Context":
				p.conversation = contextParts(v, "conversation.")
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

// classify reads the system and human text of a request.
func classify(system, human string) prompt {
	p := prompt{iteration: 1, max: agent.DefaultMaxIterations}
	first, _, _ := strings.Cut(strings.TrimSpace(human), "\n")
	switch first = strings.TrimSpace(first); {
	case first == agent.MarkerSupervisor || strings.Contains(system, `"CREATE_WORKFLOW"`):
		p.kind = kindSupervisor
	case first == agent.MarkerReflection || strings.Contains(system, `"need_more"`):
		p.kind = kindReflection
	case first == agent.MarkerPlan || (strings.Contains(system, `"depends_on"`) && !strings.Contains(system, `"action"`)):
		p.kind = kindPlan
	case first == agent.MarkerWrite:
		p.kind = kindWrite
	}
	if p.kind != kindText {
		s := sections(human)
		p.question = s["Question"]
		p.conversation = s["Conversation"]
		p.draft = s["Draft"]
		p.tools = toolsOf(s["Tools"] + "\n" + s["Operators"])
		p.results = resultsOf(s["Results"])
		if m := iterationRE.FindStringSubmatch(s["Iteration"]); m != nil {
			p.iteration, _ = strconv.Atoi(m[1])
			p.max, _ = strconv.Atoi(m[2])
		}
		if p.question == "(none)" {
			p.question = ""
		}
		p.draft = strings.TrimSpace(strings.TrimSuffix(p.draft, "Write the answer."))
		if p.draft == "(none)" {
			p.draft = ""
		}
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

var (
	iterationRE = regexp.MustCompile(`(\d+) of (\d+)`)
	languageRE  = regexp.MustCompile(`runnable (\w+) program`)
)

// knownSections are the section headings of agent's prompts; other "## "
// lines (a markdown document among the results) are content.
var knownSections = map[string]bool{"Question": true, "Tools": true, "Operators": true, "Conversation": true,
	"Results": true, "Iteration": true, "Draft": true}

// sections splits a prompt into its "## " sections, by heading.
func sections(text string) map[string]string {
	out := map[string]string{}
	var name string
	var body []string
	flush := func() {
		if name != "" {
			out[name] = strings.TrimSpace(strings.Join(body, "\n"))
		}
	}
	for _, line := range strings.Split(text, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok && knownSections[strings.TrimSpace(h)] {
			flush()
			name, body = strings.TrimSpace(h), nil
			continue
		}
		body = append(body, line)
	}
	flush()
	return out
}

// toolsOf reads "- name: description" lines.
func toolsOf(s string) []tool {
	var out []tool
	for _, line := range strings.Split(s, "\n") {
		line, ok := strings.CutPrefix(strings.TrimSpace(line), "- ")
		if !ok {
			continue
		}
		name, desc, _ := strings.Cut(line, ":")
		if name = strings.TrimSpace(name); name != "" {
			out = append(out, tool{name: name, description: strings.TrimSpace(desc)})
		}
	}
	return out
}

// resultsOf reads "### source" blocks; a "(failed)" block's first line is
// "Error: ...".
func resultsOf(s string) []result {
	var out []result
	for _, blk := range strings.Split("\n"+s, "\n### ")[1:] {
		head, body, _ := strings.Cut(blk, "\n")
		r := result{source: strings.TrimSpace(head)}
		if src, failed := strings.CutSuffix(r.source, " (failed)"); failed {
			r.source = src
			e, rest, _ := strings.Cut(body, "\n")
			r.err = strings.TrimPrefix(strings.TrimSpace(e), "Error: ")
			body = rest
		}
		r.text = strings.TrimSpace(body)
		out = append(out, r)
	}
	return out
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
