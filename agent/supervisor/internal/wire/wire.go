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
package wire

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"text/template"
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

var prompts = template.Must(template.New("prompts").Funcs(template.FuncMap{
	"orNone": func(s string) string {
		if strings.TrimSpace(s) == "" {
			return "(none)"
		}
		return strings.TrimSpace(s)
	},
	"oneLine": func(s string) string { return strings.Join(strings.Fields(s), " ") },
}).Parse(`
{{- define "tools"}}{{range .}}- {{.Name}}: {{oneLine .Description}}
{{else}}(none)
{{end}}{{end}}
{{- define "results"}}{{range .}}### {{oneLine .Source}}{{if .Err}} (failed)
Error: {{oneLine .Err}}{{end}}
{{if or .Content (not .Err)}}{{orNone .Content}}
{{end}}
{{else}}(none)

{{end}}{{end}}
{{- define "decide"}}` + "# Task: supervisor decision" + `

## Question
{{orNone .Query}}

## Tools
{{template "tools" .Tools}}
## Conversation
{{orNone .Context}}

## Results
{{template "results" .Results}}## Iteration
{{.Iteration}} of {{.MaxIterations}}{{if ge .Iteration .MaxIterations}} (last: ANSWER or CLARIFY){{end}}

Decide the next action.
{{- end}}
{{- define "reflect"}}` + "# Task: reflection" + `

## Question
{{orNone .Query}}

## Results
{{template "results" .Results}}## Iteration
{{.Iteration}} of {{.MaxIterations}}{{if ge .Iteration .MaxIterations}} (last: satisfied or blocked){{end}}

Assess the results.
{{- end}}
{{- define "plan"}}` + "# Task: workflow plan" + `

## Question
{{orNone .Query}}

## Operators
{{template "tools" .Tools}}
## Conversation
{{orNone .Context}}

Plan the workflow.
{{- end}}
{{- define "write"}}` + "# Task: write the answer" + `

## Question
{{orNone .Query}}

## Conversation
{{orNone .Context}}

## Results
{{template "results" .Results}}## Draft
{{orNone .Draft}}

Write the answer.
{{- end}}
{{- define "critique"}}` + "# Task: critique" + `

## Task
{{orNone .Task}}

## Call
{{orNone .Call}}

## Output
{{orNone .Output}}

## Error
{{orNone .Error}}

## Attempt
{{.Attempt}} of {{.MaxAttempts}}{{if ge .Attempt .MaxAttempts}} (last: REJECTED gives up){{end}}

Review the output.
{{- end}}`))

// Render returns the human prompt of p.Step.
func Render(p Prompt) (string, error) {
	if _, ok := layouts[p.Step]; !ok {
		return "", fmt.Errorf("supervisor: unknown step %q", p.Step)
	}
	var b strings.Builder
	if err := prompts.ExecuteTemplate(&b, string(p.Step), p); err != nil {
		return "", fmt.Errorf("supervisor: rendering the %s prompt: %w", p.Step, err)
	}
	return b.String(), nil
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

// text1 returns a section's text, "" for "(none)".
func text1(s string) string {
	s = strings.TrimSpace(s)
	if s == "(none)" {
		return ""
	}
	return s
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
