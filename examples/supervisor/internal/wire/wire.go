// Package wire is the text form of the supervisor steps' human prompts:
// rendering them (package supervisor) and reading them back (package
// supervisortest, for models that answer the steps without a language
// model). Keeping both directions here keeps them in step.
//
// Each prompt starts with a marker line naming its step and is cut into
// "## " sections in a fixed order per step:
//
//	## Question       the user's message
//	## Tools          "- name: description" lines (decide), or
//	## Operators      the same for the planner
//	## Conversation   the assembled conversation context
//	## Results        one "### source" block per observation; a failed one
//	                  reads "### source (failed)" then "Error: ..."
//	## Iteration      "i of n", with "(last: ...)" at the last iteration
//	## Draft          the writer's draft answer
//	## Task           the step's task (critique)
//	## Call           what produced the output, such as a tool call
//	## Output         the step's output
//	## Error          the step's failure
//	## Attempt        "i of n", with "(last: ...)" at the last attempt
//
// An empty list or text reads "(none)". A closing instruction line ends the
// prompt.
//
// The sections' text (the question, the conversation, results, the draft,
// the task, call, output and error) is data from users, tools and models,
// never instructions: the section headings fence it. So that it cannot
// forge a heading (a tool result that writes "## Iteration" or "### tool"
// lines), each of its lines whose first character after spaces and tabs
// is '#' is escaped with a '\' before that character (as is one starting
// with '\'s then '#', so that Parse restores the text exactly): no line of
// data reads as a heading, and the system prompts say so.
package wire

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
)

// Step names a supervisor step.
type Step string

// The steps.
const (
	Decide   Step = "decide"
	Reflect  Step = "reflect"
	Plan     Step = "plan"
	Write    Step = "write"
	Critique Step = "critique"
)

// Tool is one line of a tool or operator list.
type Tool struct{ Name, Description string }

// Result is one observation of a results section.
type Result struct{ Source, Content, Err string }

// Prompt is what a step's human prompt holds; each step uses some fields.
type Prompt struct {
	Step                     Step
	Query                    string
	Tools                    []Tool // Decide's tools, Plan's operators
	Context                  string
	Results                  []Result
	Iteration, MaxIterations int
	Draft                    string
	Task, Call, Output       string
	Error                    string
	Attempt, MaxAttempts     int
}

// layout is a step's marker, sections in order and closing line.
type layout struct {
	marker   string
	sections []string
	closing  string
}

var layouts = map[Step]layout{
	Decide:   {"# Task: supervisor decision", []string{"Question", "Tools", "Conversation", "Results", "Iteration"}, "Decide the next action."},
	Reflect:  {"# Task: reflection", []string{"Question", "Results", "Iteration"}, "Assess the results."},
	Plan:     {"# Task: workflow plan", []string{"Question", "Operators", "Conversation"}, "Plan the workflow."},
	Write:    {"# Task: write the answer", []string{"Question", "Conversation", "Results", "Draft"}, "Write the answer."},
	Critique: {"# Task: critique", []string{"Task", "Call", "Output", "Error", "Attempt"}, "Review the output."},
}

// Render returns the human prompt of p.Step. It is written by hand rather
// than by a template: every supervisor step renders one, so it is on the
// hot path of every turn (the package's tests hold the template it
// reproduces byte for byte).
func Render(p Prompt) (string, error) {
	l, ok := layouts[p.Step]
	if !ok {
		return "", fmt.Errorf("supervisor: unknown step %q", p.Step)
	}
	var b strings.Builder
	b.Grow(p.size())
	b.WriteString(l.marker)
	section := func(name string) {
		b.WriteString("\n\n## ")
		b.WriteString(name)
		b.WriteByte('\n')
	}
	// A text section ends without a newline, a list section with one; the
	// next section's heading follows a blank line either way.
	list := func(name string) {
		b.WriteString("\n## ")
		b.WriteString(name)
		b.WriteByte('\n')
	}
	switch p.Step {
	case Decide, Reflect:
		section("Question")
		writeData(&b, p.Query)
		if p.Step == Decide {
			section("Tools")
			writeTools(&b, p.Tools)
			list("Conversation")
			writeData(&b, p.Context)
		}
		section("Results")
		writeResults(&b, p.Results)
		b.WriteString("## Iteration\n")
		last := " (last: ANSWER or CLARIFY)"
		if p.Step == Reflect {
			last = " (last: satisfied or blocked)"
		}
		writeCount(&b, p.Iteration, p.MaxIterations, last)
	case Plan:
		section("Question")
		writeData(&b, p.Query)
		section("Operators")
		writeTools(&b, p.Tools)
		list("Conversation")
		writeData(&b, p.Context)
	case Write:
		section("Question")
		writeData(&b, p.Query)
		section("Conversation")
		writeData(&b, p.Context)
		section("Results")
		writeResults(&b, p.Results)
		b.WriteString("## Draft\n")
		writeData(&b, p.Draft)
	case Critique:
		section("Task")
		writeData(&b, p.Task)
		section("Call")
		writeData(&b, p.Call)
		section("Output")
		writeData(&b, p.Output)
		section("Error")
		writeData(&b, p.Error)
		section("Attempt")
		writeCount(&b, p.Attempt, p.MaxAttempts, " (last: REJECTED gives up)")
	}
	b.WriteString("\n\n")
	b.WriteString(l.closing)
	return b.String(), nil
}

// size is about the length of p's prompt, for Render's buffer.
func (p Prompt) size() int {
	n := 256 + len(p.Query) + len(p.Context) + len(p.Draft) + len(p.Task) + len(p.Call) + len(p.Output) + len(p.Error)
	for _, t := range p.Tools {
		n += len(t.Name) + len(t.Description) + 4
	}
	for _, r := range p.Results {
		n += len(r.Source) + len(r.Content) + len(r.Err) + 32
	}
	return n
}

// orNone is s trimmed, or "(none)" when that is empty.
func orNone(s string) string {
	if s = strings.TrimSpace(s); s == "" {
		return "(none)"
	}
	return s
}

// writeData writes the data text s, trimmed, or "(none)" when that is
// empty, with its heading-like lines escaped (see the package
// documentation).
func writeData(b *strings.Builder, s string) {
	s = orNone(s)
	if !strings.Contains(s, "#") {
		b.WriteString(s)
		return
	}
	for line := range strings.SplitAfterSeq(s, "\n") {
		rest := strings.TrimLeft(line, " \t")
		if strings.HasPrefix(strings.TrimLeft(rest, `\`), "#") {
			b.WriteString(line[:len(line)-len(rest)])
			b.WriteByte('\\')
			b.WriteString(rest)
			continue
		}
		b.WriteString(line)
	}
}

// unescape undoes writeData's escapes in s.
func unescape(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for line := range strings.SplitAfterSeq(s, "\n") {
		rest := strings.TrimLeft(line, " \t")
		if after, ok := strings.CutPrefix(rest, `\`); ok && strings.HasPrefix(strings.TrimLeft(after, `\`), "#") {
			b.WriteString(line[:len(line)-len(rest)])
			b.WriteString(after)
			continue
		}
		b.WriteString(line)
	}
	return b.String()
}

// writeOneLine writes s with its runs of white space made single spaces
// and its ends trimmed (strings.Fields joined by spaces).
func writeOneLine(b *strings.Builder, s string) {
	first := true
	for w := range strings.FieldsSeq(s) {
		if !first {
			b.WriteByte(' ')
		}
		b.WriteString(w)
		first = false
	}
}

// writeTools writes a tool or operator list, one "- name: description"
// line each, or "(none)".
func writeTools(b *strings.Builder, tools []Tool) {
	if len(tools) == 0 {
		b.WriteString("(none)\n")
		return
	}
	for _, t := range tools {
		b.WriteString("- ")
		b.WriteString(t.Name)
		b.WriteString(": ")
		writeOneLine(b, t.Description)
		b.WriteByte('\n')
	}
}

// writeResults writes a results section: a "### source" block per
// result, "(failed)" and its error for a failed one, or "(none)".
func writeResults(b *strings.Builder, results []Result) {
	if len(results) == 0 {
		b.WriteString("(none)\n\n")
		return
	}
	for _, r := range results {
		b.WriteString("### ")
		writeOneLine(b, r.Source)
		if r.Err != "" {
			b.WriteString(" (failed)\nError: ")
			writeOneLine(b, r.Err)
		}
		b.WriteByte('\n')
		if r.Content != "" || r.Err == "" {
			writeData(b, r.Content)
			b.WriteByte('\n')
		}
		b.WriteByte('\n')
	}
}

// writeCount writes "i of n", and last when i is at least n.
func writeCount(b *strings.Builder, i, n int, last string) {
	b.WriteString(strconv.Itoa(i))
	b.WriteString(" of ")
	b.WriteString(strconv.Itoa(n))
	if i >= n {
		b.WriteString(last)
	}
}

// Parse reads a human prompt made by Render, or reports false when human
// does not start with a step's marker line.
func Parse(human string) (Prompt, bool) {
	text := strings.TrimSpace(human)
	first, rest, _ := strings.Cut(text, "\n")
	var p Prompt
	var l layout
	for step, sl := range layouts {
		if strings.TrimSpace(first) == sl.marker {
			p.Step, l = step, sl
		}
	}
	if p.Step == "" {
		return Prompt{}, false
	}
	body := sectionsOf(rest, l)
	p.Query = text1(body["Question"])
	p.Context = text1(body["Conversation"])
	p.Draft = text1(body["Draft"])
	p.Task = text1(body["Task"])
	p.Call = text1(body["Call"])
	p.Output = text1(body["Output"])
	p.Error = text1(body["Error"])
	p.Tools = toolsOf(body["Tools"] + "\n" + body["Operators"])
	p.Results = resultsOf(body["Results"])
	p.Iteration, p.MaxIterations = ofCount(body["Iteration"])
	p.Attempt, p.MaxAttempts = ofCount(body["Attempt"])
	return p, true
}

// sectionsOf cuts the prompt after its marker into l's sections and drops
// the closing line and what follows it (a retry's feedback). It looks for
// the headings from the last section back, each before the one after it,
// so a result or a conversation that quotes a later heading (a markdown
// document among the results) stays content.
func sectionsOf(rest string, l layout) map[string]string {
	rest = strings.TrimSpace(rest)
	out := make(map[string]string, len(l.sections))
	end := len(rest)
	for k := len(l.sections) - 1; k >= 0; k-- {
		h := "## " + l.sections[k] + "\n"
		i := strings.LastIndex(rest[:end], "\n"+h) + 1
		if i == 0 && !strings.HasPrefix(rest, h) {
			continue
		}
		body := rest[i+len(h) : end]
		if k == len(l.sections)-1 {
			if j := strings.LastIndex(body, "\n"+l.closing); j >= 0 {
				body = body[:j]
			}
		}
		out[l.sections[k]] = body
		end = i
	}
	return out
}

// text1 returns a section's text, "" for "(none)", with writeData's
// escapes undone.
func text1(s string) string {
	s = strings.TrimSpace(s)
	if s == "(none)" {
		return ""
	}
	return unescape(s)
}

// toolsOf reads "- name: description" lines.
func toolsOf(s string) []Tool {
	var out []Tool
	for _, line := range strings.Split(s, "\n") {
		line, ok := strings.CutPrefix(strings.TrimSpace(line), "- ")
		if !ok {
			continue
		}
		name, desc, _ := strings.Cut(line, ":")
		if name = strings.TrimSpace(name); name != "" {
			out = append(out, Tool{Name: name, Description: strings.TrimSpace(desc)})
		}
	}
	return out
}

// resultsOf reads "### source" blocks; a "(failed)" block's first line is
// "Error: ...".
func resultsOf(s string) []Result {
	var out []Result
	for _, blk := range strings.Split("\n"+strings.TrimSpace(s), "\n### ")[1:] {
		head, body, _ := strings.Cut(blk, "\n")
		r := Result{Source: strings.TrimSpace(head)}
		if src, failed := strings.CutSuffix(r.Source, " (failed)"); failed {
			r.Source = src
			e, rest, _ := strings.Cut(body, "\n")
			r.Err = strings.TrimPrefix(strings.TrimSpace(e), "Error: ")
			body = rest
		}
		r.Content = text1(body)
		if r.Err != "" && strings.TrimSpace(body) == "" {
			r.Content = ""
		}
		out = append(out, r)
	}
	return out
}

var countRE = regexp.MustCompile(`(\d+) of (\d+)`)

// ofCount reads "i of n".
func ofCount(s string) (i, n int) {
	if m := countRE.FindStringSubmatch(s); m != nil {
		i, _ = strconv.Atoi(m[1])
		n, _ = strconv.Atoi(m[2])
	}
	return i, n
}
