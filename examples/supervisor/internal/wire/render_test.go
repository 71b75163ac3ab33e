package wire

import (
	"regexp"
	"strings"
	"testing"
	"text/template"
)

// headingLike matches the start of a line of data that would read as a
// heading: blanks, then '\'s and '#'.
var headingLike = regexp.MustCompile(`(?m)^([ \t]*)(\\*#)`)

// templatePrompts is the template Render replaced; Render must write the
// same bytes.
var templatePrompts = template.Must(template.New("prompts").Funcs(template.FuncMap{
	"orNone": func(s string) string {
		if strings.TrimSpace(s) == "" {
			return "(none)"
		}
		// Data's heading-like lines get a '\' before their first '\' or '#'.
		return headingLike.ReplaceAllString(strings.TrimSpace(s), `$1\$2`)
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

func templateRender(p Prompt) string {
	var b strings.Builder
	if err := templatePrompts.ExecuteTemplate(&b, string(p.Step), p); err != nil {
		panic(err)
	}
	return b.String()
}

func renderSamples() []Prompt {
	tools := []Tool{{"search_knowledge", "Search the  knowledge base.\n Returns passages."}, {"calculate", ""}, {"x", "  spaced\tout  "}}
	results := []Result{
		{Source: "search_knowledge", Content: "[1] pricing § Team\nThe Team plan costs $49."},
		{Source: "web  search\n", Err: "timeout after\n 5s"},
		{Source: "calc", Content: "42", Err: "partial"},
		{Source: "empty"},
		{Source: "", Content: "   "},
	}
	var out []Prompt
	for _, step := range []Step{Decide, Reflect, Plan, Write, Critique} {
		out = append(out,
			Prompt{Step: step},
			Prompt{Step: step, Query: "  What is 15% of 240?  ", Tools: tools, Context: "User: hi\nAssistant: hello", Results: results,
				Iteration: 2, MaxIterations: 5, Draft: "draft <b>&", Task: "t", Call: "calculate(1+1)", Output: "2", Error: "boom", Attempt: 1, MaxAttempts: 3},
			Prompt{Step: step, Query: "q", Tools: tools[:1], Results: results[:1], Iteration: 5, MaxIterations: 5, Attempt: 3, MaxAttempts: 3},
			Prompt{Step: step, Query: "\n\t", Context: " ", Results: results[1:2], Iteration: 7, MaxIterations: 5, Attempt: 4, MaxAttempts: 3},
		)
	}
	return out
}

func TestRenderWritesWhatTheTemplateWrote(t *testing.T) {
	for _, p := range renderSamples() {
		got, err := Render(p)
		if err != nil {
			t.Fatalf("Render(%+v): %v", p, err)
		}
		if want := templateRender(p); got != want {
			t.Errorf("Render(%+v) =\n%s\n---- want ----\n%s", p, got, want)
		}
		back, ok := Parse(got)
		if !ok || back.Step != p.Step {
			t.Errorf("Parse(Render(%+v)) = %+v, %v: want the step back", p, back, ok)
		}
	}
	if _, err := Render(Prompt{Step: "nope"}); err == nil || !strings.Contains(err.Error(), `unknown step "nope"`) {
		t.Errorf("Render of an unknown step: err = %v, want one naming the step", err)
	}
}

func FuzzRender(f *testing.F) {
	f.Add("decide", "q", "tool", "desc", "ctx", "src", "content", "err", 1, 5)
	f.Add("critique", "", "", "", "", "", "", "", 5, 5)
	f.Fuzz(func(t *testing.T, step, query, tool, desc, ctx, source, content, errText string, i, n int) {
		steps := []Step{Decide, Reflect, Plan, Write, Critique}
		p := Prompt{Step: steps[len(step)%len(steps)], Query: query, Tools: []Tool{{tool, desc}}, Context: ctx,
			Results: []Result{{source, content, errText}}, Iteration: i, MaxIterations: n, Draft: content,
			Task: query, Call: tool, Output: content, Error: errText, Attempt: i, MaxAttempts: n}
		if len(tool)%2 == 1 {
			p.Tools, p.Results = nil, nil
		}
		got, err := Render(p)
		if err != nil {
			t.Fatal(err)
		}
		if want := templateRender(p); got != want {
			t.Errorf("Render(%+v) =\n%q\nwant\n%q", p, got, want)
		}
	})
}

func BenchmarkRender(b *testing.B) {
	p := renderSamples()[1]
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Render(p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkRenderTemplate is BenchmarkRender through the template Render
// replaced, for comparison.
func BenchmarkRenderTemplate(b *testing.B) {
	p := renderSamples()[1]
	b.ReportAllocs()
	for b.Loop() {
		_ = templateRender(p)
	}
}
