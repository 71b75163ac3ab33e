package offline

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/agentgraph/agentgraph/examples/chatbot/internal/lexicon"
	"github.com/agentgraph/agentgraph/operator/plan"
)

// This file holds the supervisor's rules over what a question asks, read
// from its verbs, its question form and what it contains (numbers and
// operators, code, dates, label-number pairs), rather than from whole
// sentences: recalling the conversation, describing the assistant,
// running code, charting numbers, comparing with competitors and
// answering general questions directly.

// directTools are the tools whose result is the answer itself: a good
// model reports it rather than searching further.
var directTools = []string{"calculate", "calculator", "run_code", "chart", "self_info", "list_capabilities",
	"list_tools", "list_operators", "book_demo"}

// isDirect reports whether source is one of directTools.
func isDirect(source string) bool {
	for _, t := range directTools {
		if source == t || strings.HasSuffix(source, "__"+t) {
			return true
		}
	}
	return false
}

// directAnswer answers from the latest result of a direct tool, or
// reports false. A failure is reported as such, in plain words.
func directAnswer(rs []result) (string, bool) {
	for i := len(rs) - 1; i >= 0; i-- {
		r := rs[i]
		if !isDirect(r.source) {
			continue
		}
		name := r.source
		if j := strings.LastIndex(name, "__"); j >= 0 {
			name = name[j+2:]
		}
		if r.err != "" {
			if !answerable(r.err) {
				return "", false // the call failed: another try or source may work
			}
			return failedTool(name, r.err), true
		}
		text := strings.TrimSpace(r.text)
		switch name {
		case "calculate", "calculator":
			return "The calculator gives " + text + ".", true
		case "run_code":
			return "I ran the program. Its output:\n\n```\n" + text + "\n```", true
		case "chart":
			return "Here is the chart you asked for" + chartCaption(text) + ".", true
		case "self_info":
			return "I am " + text + "\n\n(Running in demo mode: answers come from an offline rule-based model.)", true
		case "list_capabilities":
			return "Here is what I can and cannot do:\n" + text, true
		case "list_tools":
			return "These are the tools I can use:\n" + text, true
		case "list_operators":
			return "These are my operators:\n" + text, true
		case "book_demo":
			return text, true
		}
		return text, true
	}
	return "", false
}

// answerable reports whether a tool's error is about what it was asked
// (a division by zero, a bad argument, a program's own error), which is
// the answer, rather than about reaching the tool (a timeout, a server
// down), which another try may get past.
func answerable(err string) bool {
	e := strings.ToLower(err)
	for _, s := range []string{"argument", "by zero", "run_code:", "syntax error", "validation", "declined", "is required", "must be"} {
		if strings.Contains(e, s) {
			return true
		}
	}
	return false
}

// failedTool says in plain words why a direct tool failed.
func failedTool(name, err string) string {
	e := strings.ToLower(err)
	switch {
	case strings.Contains(e, "division by zero") || strings.Contains(e, "remainder by zero"):
		return "That cannot be computed: it is a division by zero, which has no defined result."
	case name == "calculate" || name == "calculator":
		return "The calculator could not evaluate that: " + err
	case name == "run_code":
		return "The program did not run to the end: " + err
	}
	return "The " + name + " tool failed: " + err
}

func chartCaption(text string) string {
	if line, _, _ := strings.Cut(text, "\n"); strings.TrimSpace(line) != "" && len(line) < 120 {
		return " (" + strings.TrimSpace(strings.TrimSuffix(line, ".")) + ")"
	}
	return ""
}

// asksAboutConversation reports whether the question is about the
// conversation itself: what the user asked or said earlier.
func asksAboutConversation(w []string) bool {
	s := " " + strings.Join(w, " ") + " "
	talk := hasAny(w, "ask", "asked", "asking", "say", "said", "told", "tell", "mention", "mentioned", "wrote", "write", "typed",
		"question", "questions", "message", "messages", "talk", "talked", "talking", "discuss", "discussed", "discussing", "cover",
		"covered", "conversation", "chat")
	self := hasAny(w, "i", "my", "we", "our", "me")
	when := hasAny(w, "first", "last", "previous", "earlier", "before", "initial", "start", "beginning", "just", "latest",
		"repeat", "remind", "recap") || strings.Contains(s, " so far ") || strings.Contains(s, " our conversation ") ||
		strings.Contains(s, " this conversation ") || strings.Contains(s, " this chat ")
	// "What did I tell you my favourite colour was?", "do you remember
	// what I said about the budget?": the past tense of the user's own
	// words points back into the conversation.
	back := strings.Contains(s, " did i ") || strings.Contains(s, " have i ") || strings.Contains(s, " have we ") || strings.Contains(s, " did we ") || strings.Contains(s, " i told ") ||
		strings.Contains(s, " i said ") || strings.Contains(s, " i mentioned ") || hasAny(w, "remember", "recall")
	return talk && self && (when || back)
}

// recallWords are the words of a question about the conversation that
// only shape it; the others say what the user wants recalled.
var recallWords = map[string]bool{"what": true, "did": true, "do": true, "does": true, "have": true, "has": true,
	"i": true, "my": true, "me": true, "we": true, "our": true, "you": true, "your": true, "tell": true, "told": true,
	"say": true, "said": true, "mention": true, "mentioned": true, "ask": true, "asked": true, "remember": true,
	"recall": true, "was": true, "were": true, "is": true, "are": true, "the": true, "a": true, "an": true, "about": true,
	"that": true, "which": true, "earlier": true, "before": true, "again": true, "can": true, "could": true, "please": true,
	"to": true, "of": true, "it": true, "wrote": true, "write": true, "typed": true, "just": true, "previously": true,
	"talk": true, "talked": true, "talking": true, "discuss": true, "discussed": true, "discussing": true, "cover": true,
	"covered": true}

// userMessages returns the user's messages in a transcript of "role: text"
// lines, oldest first, without the current question, each without the
// greeting it opens with (see withoutGreeting).
func userMessages(conversation, current string) []string {
	var out []string
	for _, line := range strings.Split(conversation, "\n") {
		if msg, ok := strings.CutPrefix(strings.TrimSpace(line), "user:"); ok {
			if msg = strings.TrimSpace(msg); msg != "" {
				out = append(out, msg)
			}
		}
	}
	if n := len(out); n > 0 && out[n-1] == strings.TrimSpace(current) {
		out = out[:n-1]
	}
	for i, m := range out {
		out[i] = withoutGreeting(m)
	}
	return out
}

// recall answers a question about the conversation from its transcript.
func recall(w []string, conversation, current string) string {
	msgs := userMessages(conversation, current)
	summary := ""
	for _, line := range strings.Split(conversation, "\n") {
		if s, ok := strings.CutPrefix(line, "Summary of earlier messages: "); ok {
			summary = strings.TrimSpace(s)
		}
	}
	if len(msgs) == 0 && summary == "" {
		return "This is the start of our conversation: you have not asked anything before this."
	}
	first := hasAny(w, "first", "initial", "start", "beginning")
	last := hasAny(w, "last", "previous", "just", "latest", "before") && !first
	// A question about something the user said ("my favourite colour")
	// is answered with the latest message of theirs that says it.
	var about []string
	for _, x := range w {
		if !recallWords[x] && len(x) > 2 && !hasAny([]string{x}, "first", "last", "previous", "latest", "question", "questions", "message", "messages", "conversation", "chat", "so", "far", "initial", "start", "beginning") {
			about = append(about, x)
		}
	}
	if len(about) > 0 && !first && !last {
		for i := len(msgs) - 1; i >= 0; i-- {
			mw := tokens(msgs[i])
			n := 0
			for _, a := range about {
				if matches(a, mw) {
					n++
				}
			}
			if n*2 >= len(about) {
				return fmt.Sprintf("You told me: %q", msgs[i])
			}
		}
		return fmt.Sprintf("I don't see anything about %s in what you have told me so far in this conversation.", strings.Join(about, " "))
	}
	switch {
	case first && summary != "":
		return "Earlier messages were summarised as: " + summary
	case first && len(msgs) > 0:
		return fmt.Sprintf("Your first question was: %q", msgs[0])
	case last && len(msgs) > 0:
		return fmt.Sprintf("Your previous message was: %q", msgs[len(msgs)-1])
	}
	var b strings.Builder
	if summary != "" {
		b.WriteString("Earlier: " + summary + "\n")
	}
	b.WriteString("So far you have asked:")
	for i, m := range msgs {
		fmt.Fprintf(&b, "\n%d. %s", i+1, m)
	}
	return b.String()
}

// selfTool returns the local tool that answers a question about the
// assistant itself, or "".
func selfTool(w []string, tools []tool) string {
	s := " " + strings.Join(w, " ") + " "
	you := hasAny(w, "you", "your", "yourself", "yours")
	if !you {
		return ""
	}
	switch {
	case hasAny(w, "tool", "tools", "functions") && !hasAny(w, "our"):
		return pick(tools, "list_tools")
	case strings.Contains(s, " who are you ") || hasAny(w, "version", "name", "release") ||
		strings.Contains(s, " are you a bot ") || strings.Contains(s, " are you an ai ") ||
		// "Who built you?", "what model are you?", "which LLM powers
		// you?": where the assistant comes from.
		hasAny(w, "who") && hasAny(w, "built", "made", "created", "developed", "designed", "trained", "wrote", "programmed") ||
		hasAny(w, "model", "llm", "engine") && (strings.Contains(s, " are you ") || hasAny(w, "your", "powers", "runs", "run", "running")):
		if t := pick(tools, "self_info"); t != "" {
			return t
		}
		return pick(tools, "list_capabilities")
	case hasAny(w, "capable", "capabilities", "abilities", "skills", "able", "limitations") ||
		strings.Contains(s, " can you do ") || strings.Contains(s, " can you help ") || strings.Contains(s, " do you do ") ||
		strings.Contains(s, " help me with ") || strings.Contains(s, " can't you ") || strings.Contains(s, " cannot you "):
		return pick(tools, "list_capabilities")
	case strings.Contains(s, " what are you ") || hasAny(w, "yourself"):
		return pick(tools, "self_info")
	}
	return ""
}

var (
	fenceRE    = regexp.MustCompile("(?s)```[a-zA-Z0-9]*\\n?(.*?)```")
	backtickRE = regexp.MustCompile("`([^`\n]+)`")
	// codeLineRE is text that reads as a program: a call, an assignment
	// or a loop header.
	codeLineRE = regexp.MustCompile(`(?m)(\b(print|len|sum|range|sorted|min|max|str|int)\s*\(|^\s*[a-z_]\w*\s*=[^=]|^\s*(for|if|def|while)\b.*:\s*$)`)
)

// programOf returns the program a message asks to run: a fenced block, an
// inline `code` span, or text after a run verb that reads as code; or
// a program printing an arithmetic expression the message asks code to
// compute. It returns "" when the message asks for no code to be run.
func programOf(q string, w []string) string {
	if !hasAny(w, "run", "execute", "exec", "eval", "evaluate", "program", "code", "script", "snippet", "starlark", "python") {
		return ""
	}
	if m := fenceRE.FindStringSubmatch(q); m != nil && strings.TrimSpace(m[1]) != "" {
		return starlarkPow(strings.TrimSpace(m[1]))
	}
	if m := backtickRE.FindStringSubmatch(q); m != nil && codeLineRE.MatchString(m[1]) {
		return starlarkPow(strings.TrimSpace(m[1]))
	}
	// "Run print(2 ** 10)", "run this code: x = 1; print(x)"
	if i := codeLineRE.FindStringIndex(q); i != nil {
		code := strings.TrimSpace(q[i[0]:])
		code = strings.TrimRight(code, " ?")
		if balanced(code) {
			return starlarkPow(code)
		}
	}
	// "Write code that prints 6 * 7 and run it": the expression is the
	// program's work.
	if hasAny(w, "code", "program", "script") || hasAny(w, "run", "execute") {
		if expr := arithmetic(q); expr != "" && !strings.Contains(expr, "sqrt") {
			return starlarkPow("print(" + strings.ReplaceAll(expr, "^", "**") + ")")
		}
	}
	return ""
}

// chartPairRE is a label and its number: "Team 49", "q1=100", "red: 3".
var chartPairRE = regexp.MustCompile(`([A-Za-z][\w'-]*|\d{4})\s*(?:[:=]\s*|\s+)\$?(-?\d+(?:\.\d+)?)\b`)

// chartArgs returns the chart tool's arguments for a request to chart
// labelled numbers, or nil when the message asks for no chart or gives no
// numbers.
func chartArgs(q string, w []string) map[string]any {
	if !hasPrefix(w, "chart", "plot", "graph", "visuali", "diagram", "histogram") {
		return nil
	}
	body := q
	if i := strings.Index(body, ":"); i >= 0 && chartPairRE.MatchString(body[i+1:]) && len(chartPairRE.FindAllString(body[i+1:], -1)) >= 2 {
		body = body[i+1:]
	}
	var labels []any
	var values []any
	for _, m := range chartPairRE.FindAllStringSubmatch(body, -1) {
		if stopwords[strings.ToLower(m[1])] || chartVerbs[strings.ToLower(m[1])] {
			continue
		}
		v, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			continue
		}
		labels = append(labels, m[1])
		values = append(values, v)
	}
	if len(labels) < 2 {
		return nil
	}
	// The title is the first word that is no verb, label or value ("a
	// chart of revenue: Q1 10, Q2 12" is "Revenue"), or else the labels:
	// "Starter 19, Team 49" is no chart of Starter alone.
	var names []string
	isLabel := map[string]bool{}
	for _, l := range labels {
		names = append(names, l.(string))
		isLabel[strings.ToLower(l.(string))] = true
	}
	title := joinAnd(names)
	for _, x := range contentWords(q) {
		if _, num := numberValue(x); !chartVerbs[x] && !isLabel[x] && !num {
			title = strings.ToUpper(x[:1]) + x[1:]
			break
		}
	}
	return map[string]any{"labels": labels, "values": values, "title": title}
}

// wantsChart reports whether the message asks for a chart to be made
// (not what a graph database is).
func wantsChart(q string, w []string) bool {
	if generalSubject(q, w) != "" {
		return false
	}
	return hasPrefix(w, "chart", "plot", "visuali", "histogram") ||
		hasAny(w, "graph", "diagram") && hasAny(w, "make", "draw", "show", "create", "give", "render", "build")
}

// proseFigureRE is a named figure in prose: "Team costs $49", "Business
// is $89", "Northwind: 70".
var proseFigureRE = regexp.MustCompile(`\b(\p{Lu}[\w'-]*(?:\s+\p{Lu}[\w'-]*)?)(?:'s\s+\w+)?\s+(?:costs?|is|are|was|were|has|had|charges|lists at|at|:|=)\s+(?:about\s+|around\s+|only\s+)?\$?(\d[\d,]*(?:\.\d+)?)`)

// chartFromConversation returns the chart tool's arguments for a chart of
// the figures the conversation already holds (the latest message with two
// or more named figures, answers and tool results included), or nil.
func chartFromConversation(q, conversation string) map[string]any {
	var msgs []string // one per message, its continuation lines included
	for _, line := range strings.Split(conversation, "\n") {
		if strings.HasPrefix(line, "assistant: ") || strings.HasPrefix(line, "user: ") || len(msgs) == 0 {
			msgs = append(msgs, line)
			continue
		}
		msgs[len(msgs)-1] += "\n" + line
	}
	for i := len(msgs) - 1; i >= 0; i-- {
		line := msgs[i]
		var labels, values []any
		seen := map[string]bool{}
		for _, m := range proseFigureRE.FindAllStringSubmatch(line, -1) {
			if seen[m[1]] || stopwords[strings.ToLower(m[1])] {
				continue
			}
			v, err := strconv.ParseFloat(strings.ReplaceAll(m[2], ",", ""), 64)
			if err != nil {
				continue
			}
			seen[m[1]] = true
			labels, values = append(labels, m[1]), append(values, v)
		}
		if len(labels) >= 2 {
			title := "Chart"
			for _, x := range contentWords(q) {
				if !chartVerbs[x] && !hasAny([]string{x}, "those", "them", "numbers", "figures", "prices", "it") {
					title = strings.ToUpper(x[:1]) + x[1:]
					break
				}
			}
			return map[string]any{"labels": labels, "values": values, "title": title}
		}
	}
	return nil
}

var chartVerbs = map[string]bool{"chart": true, "plot": true, "graph": true, "bar": true, "make": true, "draw": true,
	"visualise": true, "visualize": true, "these": true, "values": true, "numbers": true, "show": true, "create": true,
	// Kinds of chart.
	"pie": true, "line": true, "column": true, "histogram": true, "diagram": true, "scatter": true, "donut": true}

// competitorNames are the competitors the bundled web snapshot and
// knowledge base describe.
var competitorNames = []string{"northwind", "globex", "initech", "contoso", "fabrikam"}

// isComparison reports whether the question asks to compare us with
// someone else: a comparison word or form and another party.
func isComparison(w []string) bool {
	s := " " + strings.Join(w, " ") + " "
	compare := hasPrefix(w, "compar", "contrast", "differ", "benchmark") || hasAny(w, "vs", "versus", "against", "side") ||
		strings.Contains(s, " stack up ") || strings.Contains(s, " measure up ") || thanParty(w)
	other := hasPrefix(w, "competit", "rival", "alternative", "others") || hasPrefix(w, competitorNames...) ||
		strings.Contains(s, " the market ") || strings.Contains(s, " other vendors ")
	return compare && other
}

// thanParty reports whether a "than" in the question compares with a
// party: us ("more expensive than us") or others ("cheaper than the
// competition", "than Northwind"), not a quantity ("more than 10 users")
// or a thing ("better than the basics").
func thanParty(w []string) bool {
	for i, x := range w {
		if x != "than" {
			continue
		}
		j := i + 1
		for j < len(w) && hasAny(w[j:j+1], "the", "a", "an", "that", "those", "what", "any", "other", "most") {
			j++
		}
		if j == len(w) {
			continue
		}
		next := w[j]
		if next[0] >= '0' && next[0] <= '9' || next[0] == '$' {
			continue
		}
		if hasAny([]string{next}, "us", "we", "our", "ours", "acme", "you", "yours", "competition", "others", "anyone", "everyone") ||
			hasPrefix([]string{next}, "competit", "rival", "alternative", "vendor") || hasPrefix([]string{next}, competitorNames...) {
			return true
		}
	}
	return false
}

// comparisonWorkflow is the four-step plan for comparing us with
// competitors on any subject: rewrite, then internal and web search in
// parallel, then synthesise. Steps whose operator is not offered are left
// out; nil when either search is missing.
func comparisonWorkflow(p prompt, q string) *plan.Plan {
	if !isComparison(tokens(q)) {
		return nil
	}
	internal := pick(p.tools, "rag_retriever", "search_knowledge", "knowledge", "rag")
	web := pick(p.tools, "web_searcher", "web_search", "web")
	if internal == "" || web == "" {
		return nil
	}
	wf := &plan.Plan{Goal: strings.TrimSpace(q)}
	internalQ, externalQ := any("{{user_query}}"), any("{{user_query}}")
	var searchDeps []string
	if r := pick(p.tools, "query_rewriter", "rewrite"); r != "" {
		wf.Steps = append(wf.Steps, plan.Step{ID: "step_1", Name: "Rewrite Query", Operator: r,
			InputMapping: map[string]any{"query": "{{user_query}}"}})
		internalQ, externalQ = "{{step_1.internal_query}}", "{{step_1.external_query}}"
		searchDeps = []string{"step_1"}
	}
	wf.Steps = append(wf.Steps,
		plan.Step{ID: "step_2", Name: "Search Internal Docs", Operator: internal,
			InputMapping: map[string]any{"query": internalQ}, DependsOn: searchDeps},
		plan.Step{ID: "step_3", Name: "Search Web", Operator: web,
			InputMapping: map[string]any{"query": externalQ}, DependsOn: searchDeps})
	if s := pick(p.tools, "synthesizer", "synth"); s != "" {
		wf.Steps = append(wf.Steps, plan.Step{ID: "step_4", Name: "Synthesize", Operator: s,
			InputMapping: map[string]any{"sources": []any{"{{step_2.results}}", "{{step_3.results}}"}},
			DependsOn:    []string{"step_2", "step_3"}})
	}
	return wf
}

// definitionRE reads a general question's subject: "what is X", "explain
// X", "define X", "what does X stand for / mean", "who invented X".
var definitionRE = regexp.MustCompile(`^(?:(?:can|could) you |please )?(?:what(?: is|'s| are) (?:an? |the )?|explain (?:what (?:an? |the )?)?|define |describe (?:what )?|tell me what |who (?:invented|created|made) (?:the )?|what does )(.+?)(?: is| are| means?| stand for| do)?\s*[?.!]*$`)

// generalSubject returns the subject of a general-knowledge question: a
// definition or explanation of something that is not ours, not the user's,
// not the assistant's and not news; or "".
func generalSubject(q string, w []string) string {
	m := definitionRE.FindStringSubmatch(strings.ToLower(strings.TrimSpace(q)))
	if m == nil {
		return ""
	}
	if arithmetic(q) != "" {
		return "" // "what is seven times six?" is for the calculator
	}
	subj := strings.TrimSpace(m[1])
	sw := tokens(subj)
	if len(sw) == 0 || len(sw) > 4 || strings.ContainsAny(subj, "0123456789") || hasAny(sw, "called", "named", "name", "code", "number", "address", "date") {
		return ""
	}
	if hasAny(w, "our", "we", "us", "you", "your", "my", "i", "acme", "latest", "news", "today", "recent", "current", "price", "cost", "costs") ||
		hasPrefix(sw, competitorNames...) || hasPrefix(sw, "pric", "plan", "polic", "sla", "uptime", "refund", "trial", "discount",
		"insights", "pipelines", "forecast", "enterprise", "starter", "business", "team", "seat", "editor", "viewer", "retention") {
		return ""
	}
	// "What are support hours?": a term of the business that the
	// glossary does not define is for the documents; "data" alone is in
	// general terms too ("a graph database").
	if isCompany(sw) && !hasPrefix(sw, "data") && !inGlossary(subj) {
		return ""
	}
	return subj
}

// inGlossary reports whether the model's glossary defines a subject.
func inGlossary(subject string) bool {
	return !strings.HasPrefix(generalAnswer(subject), "I can't tell you what ")
}

// generalAnswer answers a general question from the model's small
// glossary, or says plainly that the demo model does not know.
func generalAnswer(subject string) string {
	key := strings.Trim(strings.ToLower(subject), " ?.!")
	for _, suffix := range []string{" programming language", " language", " protocol", " framework", " technology", " concept"} {
		if k, ok := strings.CutSuffix(key, suffix); ok && k != "" {
			key = k
			break
		}
	}
	key = strings.TrimPrefix(key, "the ")
	for _, g := range glossary {
		for _, n := range g.names {
			if key == n || strings.TrimPrefix(key, "a ") == n || strings.TrimPrefix(key, "an ") == n || strings.TrimSuffix(key, "s") == n {
				return g.text
			}
		}
	}
	return fmt.Sprintf("I can't tell you what %s is: as an offline demo model I only know a short glossary of common terms, and %s is not in it. "+
		"With a real model configured I would answer this directly; I can also search the web snapshot if you ask me to search for it.", subject, subject)
}

// glossary is the offline model's general knowledge: a few common terms.
var glossary = []struct {
	names []string
	text  string
}{
	{[]string{"python"}, "Python is a general-purpose, high-level programming language known for its readable syntax; it is widely used for scripting, web services, data analysis and machine learning."},
	{[]string{"go", "golang"}, "Go (Golang) is an open-source, statically typed, compiled programming language designed at Google, known for its simplicity, fast builds and built-in concurrency with goroutines and channels."},
	{[]string{"javascript", "js"}, "JavaScript is the programming language of the web: it runs in every browser to make pages interactive, and on servers through runtimes such as Node.js."},
	{[]string{"typescript"}, "TypeScript is JavaScript with static types: a superset of JavaScript that compiles to plain JavaScript."},
	{[]string{"java"}, "Java is a class-based, object-oriented programming language that compiles to bytecode run by the Java Virtual Machine."},
	{[]string{"rust"}, "Rust is a systems programming language focused on memory safety without a garbage collector, enforced by its ownership and borrowing rules."},
	{[]string{"sql"}, "SQL (Structured Query Language) is the standard language for defining, querying and changing data in relational databases."},
	{[]string{"api", "apis", "application programming interface"}, "An API (application programming interface) is a defined way for one program to use another: the requests it accepts, the responses it gives and the rules for both."},
	{[]string{"http", "https"}, "HTTP (Hypertext Transfer Protocol) is the request-response protocol of the web; HTTPS is HTTP over an encrypted TLS connection."},
	{[]string{"html"}, "HTML (HyperText Markup Language) is the markup language that structures web pages."},
	{[]string{"css"}, "CSS (Cascading Style Sheets) is the language that describes how HTML documents look: layout, colours and fonts."},
	{[]string{"json"}, "JSON (JavaScript Object Notation) is a lightweight text format for structured data built from objects, arrays, strings, numbers, booleans and null."},
	{[]string{"database"}, "A database is an organised collection of data stored so that it can be queried and updated efficiently, usually managed by a database management system such as PostgreSQL or SQLite."},
	{[]string{"recursion"}, "Recursion is when a function solves a problem by calling itself on smaller instances of the same problem, until it reaches a base case it can answer directly."},
	{[]string{"algorithm"}, "An algorithm is a finite, well-defined sequence of steps that solves a problem or computes a result."},
	{[]string{"machine learning", "ml"}, "Machine learning is a branch of artificial intelligence in which programs learn patterns from data to make predictions or decisions, instead of following hand-written rules."},
	{[]string{"artificial intelligence", "ai"}, "Artificial intelligence (AI) is the field of building computer systems that perform tasks that normally need human intelligence, such as understanding language, recognising images or making decisions."},
	{[]string{"llm", "large language model"}, "A large language model (LLM) is a neural network trained on large amounts of text to predict the next token, which lets it answer questions, summarise and write."},
	{[]string{"neural network"}, "A neural network is a model made of layers of simple connected units whose weights are learned from data; it is the basis of deep learning."},
	{[]string{"cloud computing", "the cloud", "cloud"}, "Cloud computing is renting computing resources (servers, storage, databases, software) over the internet on demand instead of owning them."},
	{[]string{"kubernetes", "k8s"}, "Kubernetes is an open-source system for deploying, scaling and managing containerised applications across a cluster of machines."},
	{[]string{"docker", "container"}, "A container (as run by Docker) packages an application with its dependencies into an isolated unit that runs the same way on any machine."},
	{[]string{"git"}, "Git is a distributed version control system that records the history of changes to files and lets many people work on them in parallel branches."},
	{[]string{"linux"}, "Linux is an open-source operating system kernel; with the software around it, it runs most servers, Android phones and many desktops."},
	{[]string{"encryption"}, "Encryption is turning data into a form that only holders of the right key can read, protecting it in transit and at rest."},
	{[]string{"blockchain"}, "A blockchain is a shared ledger of records linked by cryptographic hashes, kept consistent across many computers without a central authority."},
	{[]string{"dns", "domain name system"}, "DNS (Domain Name System) translates human-readable domain names such as example.com into the IP addresses computers use to connect."},
	{[]string{"tcp"}, "TCP (Transmission Control Protocol) is the internet protocol that delivers a reliable, ordered stream of bytes between two programs."},
	{[]string{"etl"}, "ETL (extract, transform, load) is the process of pulling data from sources, reshaping it and loading it into a target such as a data warehouse."},
	{[]string{"data warehouse"}, "A data warehouse is a database designed for analysis, collecting cleaned data from many sources for reporting and business intelligence."},
	{[]string{"business intelligence", "bi"}, "Business intelligence (BI) is the practice and tools for turning an organisation's data into reports, dashboards and insights for decisions."},
	{[]string{"gdpr"}, "The GDPR (General Data Protection Regulation) is the European Union's law on the protection of personal data and privacy."},
	{[]string{"soc 2", "soc2"}, "SOC 2 is an auditing standard for how service providers protect customer data, covering security, availability, processing integrity, confidentiality and privacy."},
	{[]string{"mcp", "model context protocol"}, "The Model Context Protocol (MCP) is an open protocol through which AI applications discover and call external tools and data sources."},
	{[]string{"photosynthesis"}, "Photosynthesis is how plants, algae and some bacteria turn light, water and carbon dioxide into sugar and oxygen."},
	{[]string{"gravity"}, "Gravity is the force by which masses attract each other; it keeps planets in orbit and gives objects weight."},
	{[]string{"inflation"}, "Inflation is the general rise of prices over time, which lowers what a unit of money can buy."},
	{[]string{"dna"}, "DNA (deoxyribonucleic acid) is the molecule that carries the genetic instructions of living organisms."},
	{[]string{"the internet", "internet"}, "The internet is the global network of interconnected computer networks that exchange data using the TCP/IP protocols."},
	{[]string{"open source"}, "Open source software is software whose source code is published under a licence that lets anyone use, study, change and share it."},
}

// questionForms are words that shape a question rather than name what it
// is about ("how long", "how many"); they do not count towards coverage.
var questionForms = map[string]bool{"long": true, "many": true, "often": true, "there": true, "exist": true,
	"exists": true, "available": true, "possible": true, "allowed": true,
	// How a thing is had, when the question is whether it is: "is there an
	// on-prem edition?", "do you support self-hosted installs?".
	"edition": true, "editions": true, "install": true, "installs": true, "installation": true, "installations": true,
	"deployment": true, "deployments": true, "deploy": true}

// relevanceWords are the question's words that a relevant passage must
// contain.
func relevanceWords(q string) []string {
	// A verb of capability after its subject ("do you support Snowflake?",
	// "does Acme offer SSO?") asks whether the thing is there: a passage
	// that names the thing answers it, in whatever words.
	skip := map[string]bool{}
	toks := tokens(q)
	for i := 1; i < len(toks); i++ {
		// "Does support reply fast?": right after "does" is the subject.
		// "Which tier offers SSO?" asks the same of each tier; in "what
		// is support like?" or "what about support?" it is the subject.
		// A negation or an auxiliary between them ("which tiers don't
		// include SSO?") changes neither: p is the word before the
		// verb that is no function word.
		p := i - 1
		for p > 0 && auxiliaries[toks[p]] {
			p--
		}
		which := p >= 1 && hasAny(toks[p-1:p], "which", "what") && !stopwords[toks[p]]
		if which && havingWords[toks[i]] && frameWords[toks[p]] {
			// "Which tiers include SSO?": the tier asked is named in
			// the passage by its name, and what it has in any words.
			skip[toks[i]], skip[toks[p]] = true, true
		}
		if capabilityVerbs[toks[i]] && (hasAny(toks[i-1:i], "you", "we", "acme", "analytics", "it", "they", "can") ||
			i >= 2 && hasAny(toks[i-2:i-1], "which", "what") && !stopwords[toks[i-1]] || which) {
			skip[toks[i]] = true
			// "Does Acme support Okta?" is "do you support Okta?": our
			// own name as the subject asks about us, and passages about
			// what we support need not repeat it.
			for j := i - 1; j >= 0 && hasAny(toks[j:j+1], "acme", "analytics"); j-- {
				skip[toks[j]] = true
			}
		}
	}
	// "The reply time": a duration asked is answered by one, whatever
	// the passage calls it.
	if asksDuration(toks) {
		skip["time"] = true
	}
	// "What kind of support", "which types of reports": the kind asks
	// for the thing, which a passage names without the word "kind".
	for i := 0; i+1 < len(toks); i++ {
		if kindNoun(toks[i]) && toks[i+1] == "of" {
			skip[toks[i]] = true
		}
	}
	// "What does Team cost in USD?": a currency asks an amount of money,
	// which a price gives ("$29"), whatever the passage calls it.
	if valueAsked(q) == valueMoney {
		for _, w := range toks {
			if currencyCodes[w] || hasAny([]string{w}, "dollar", "dollars", "euro", "euros") {
				skip[w] = true
			}
		}
	}
	// "Which countries host my data?", "where do you keep it?": a place
	// asked is answered by one ("stays in the region chosen at sign-up"),
	// whatever the passage calls it or the keeping.
	if asksPlace(q) {
		for i, w := range toks {
			// "data center" is a place word in two.
			if placeWord(w) || inGroup(w, placeVerbs) || isDataCentre(toks, i) {
				skip[w] = true
			}
		}
		// "Where r ur offices?", "where is your head office?": the
		// company's place is answered by a sentence naming a city,
		// whatever it calls the office.
		if asksCompanyPlace(q) {
			for i, w := range toks {
				if inGroup(w, placeNouns) || w == "based" || w == "head" && i+1 < len(toks) && inGroup(toks[i+1], placeNouns) {
					skip[w] = true
				}
			}
		}
	}
	// "Which packages can I buy?": the sentence that lists the plans
	// answers it, whatever it calls them, and buying is what a list of
	// plans is for.
	if listed := askedList(toks); listed != "" {
		i := slices.IndexFunc(listNouns, func(g []string) bool { return slices.Contains(g, listed) })
		for _, w := range toks {
			// "subscription tiers": both name the plans.
			if i >= 0 && (listVerbs[w] || slices.Contains(listNouns[i], strings.TrimSuffix(w, "s")) || choiceWords[strings.TrimSuffix(w, "s")]) {
				skip[w] = true
			}
		}
	}
	var out []string
	for _, w := range contentWords(q) {
		if !questionForms[w] && !taskWords[w] && !gradeWords[w] && !skip[w] {
			out = append(out, w)
		}
	}
	return out
}

// auxiliaries are the words that may stand between a subject and its
// verb without changing what is asked of it: "do", "can", a negation
// ("which plans do not include SSO?" asks of the same plans and SSO).
var auxiliaries = map[string]bool{"do": true, "does": true, "did": true, "can": true, "will": true, "would": true,
	"should": true, "not": true, "don't": true, "doesn't": true, "didn't": true, "can't": true, "cannot": true,
	"won't": true, "dont": true, "doesnt": true, "cant": true}

// gradeWords rank or hedge what a question asks without naming it ("your
// main competitors", "pay monthly instead of annually"): a passage need
// not repeat them.
var gradeWords = map[string]bool{"main": true, "primary": true, "major": true, "biggest": true, "top": true, "leading": true,
	"instead": true, "exactly": true, "currently": true, "really": true, "usually": true, "typically": true, "generally": true}

// capabilityVerbs ask whether something is offered, when they follow
// their subject.
var capabilityVerbs = map[string]bool{"support": true, "supports": true, "offer": true, "offers": true, "provide": true,
	"provides": true, "integrate": true, "integrates": true, "accept": true, "accepts": true, "allow": true, "allows": true,
	"have": true, "has": true, "use": true, "uses": true}

// taskWords say what to do with what is found ("summarize our pricing",
// "give me an overview of the plans"), not what it is about.
var taskWords = map[string]bool{"summarize": true, "summarise": true, "summary": true, "overview": true, "outline": true,
	"describe": true, "explain": true, "list": true, "details": true, "rundown": true, "info": true, "information": true,
	"briefly": true}

// topicPrepositions end a question's topic and start what qualifies it:
// "refund policy | for annual plans", "rate limit | on the Team plan".
var topicPrepositions = map[string]bool{"for": true, "of": true, "on": true, "in": true, "about": true, "with": true,
	"during": true, "under": true, "within": true, "regarding": true}

// frameWords name the kind of thing asked for without saying which
// ("the best plan for", "what options for"): they are no topic.
var frameWords = map[string]bool{"plan": true, "plans": true, "tier": true, "tiers": true, "option": true, "options": true,
	"best": true, "good": true, "right": true, "kind": true, "kinds": true, "type": true, "types": true, "level": true,
	"way": true, "ways": true, "much": true, "long": true, "quickly": true, "fast": true, "often": true,
	"soon": true, "quick": true, "promptly": true, "rapidly": true, "faster": true, "quicker": true, "sooner": true,
	"time": true, "times": true, "amount": true, "number": true, "details": true, "detail": true,
	// Where to look, not what for: "search the web for ...".
	"search": true, "searching": true, "web": true, "internet": true, "online": true, "look": true, "lookup": true,
	"knowledge": true, "base": true, "docs": true, "documentation": true, "documents": true,
	// When, not what: "the latest news about ...".
	"latest": true, "news": true, "recent": true, "current": true, "update": true, "updates": true, "today": true}

// topicWords returns the question's topic: its relevance words before the
// first preposition that has relevance words after it and such words
// before it ("refund policy" in "what is the refund policy for annual
// plans?"), without numbers, frame words and verbs; or nil when the
// question has no such preposition. A
// passage that matches only the qualifier after the preposition ("annual
// contracts") is about something else.
func topicWords(q string, words []string) []string {
	topic, _, _ := topicAt(q, words)
	return topic
}

// topicAt is topicWords with q's tokens and the index among them of the
// preposition that ends the topic.
func topicAt(q string, words []string) (topic, toks []string, at int) {
	toks = tokens(q)
	asked := -1 // whether q asks about connecting, once known
	connecting := func() bool {
		if asked < 0 {
			asked = 0
			if asksConnecting(q) {
				asked = 1
			}
		}
		return asked == 1
	}
	for i, t := range toks {
		if !topicPrepositions[t] || i == 0 {
			continue
		}
		if t == "for" && i+1 < len(toks) && hasAny(toks[i+1:i+2], "free", "nothing") {
			continue // "for free" says how, not of what: "can I test it for free?"
		}
		// The words on each side as contentWords reads them, so that a
		// word it rewrites ("crm" of "customer relationship management")
		// is found on its side.
		before := toks[:i]
		beforeW := contentWordsOf(strings.Join(before, " "), connecting)
		afterW := contentWordsOf(strings.Join(toks[i+1:], " "), connecting)
		topic = nil
		hasAfter := false
		for _, w := range words {
			switch {
			case slices.Contains(beforeW, w):
				if !frameWords[w] && strings.Trim(w, "0123456789.,$%") != "" && !verbIn(before, w) && !(kindNoun(w) && t == "of") {
					topic = append(topic, w)
				}
			case slices.Contains(afterW, w) && categoryOf[w] == nil:
				// A category after the preposition is what the question
				// asks to connect to ("sync tickets from our help
				// desk"), not a qualifier of the topic.
				hasAfter = true
			}
		}
		if hasAfter && len(topic) > 0 {
			return topic, toks, i
		}
		// Nothing but verbs or frame words before this preposition ("what
		// happens with my data after ..."): the topic may come before a
		// later one.
	}
	return nil, toks, -1
}

// ownerWords returns the words of what a question's topic is of, up to
// the next preposition: "blockchain" of "the price of your blockchain
// add-on?". The sources must name it somewhere, or they are about
// another thing's price; nil when the topic is not followed by "of".
// Verbs and quantifiers are left out (ownerModifier).
func ownerWords(q string, words []string) []string {
	return wordsAfterTopic(q, words, "of")
}

// placeQualifiers returns the words of where the question's topic is,
// after "in" or "at" up to the next preposition: "Singapore office" of
// "how many staff work in the Singapore office?". Like ownerWords, the
// sources must name them somewhere, or they are about the topic
// elsewhere; nil when the topic is not followed by "in" or "at".
func placeQualifiers(q string, words []string) []string {
	return wordsAfterTopic(q, words, "in", "at")
}

// wordsAfterTopic returns the words of q that follow the preposition
// ending its topic (topicAt), up to the next preposition, when that
// preposition is one of preps; nil otherwise. Only words of words are
// kept, and neither frame words, numbers nor ownerModifier words.
func wordsAfterTopic(q string, words []string, preps ...string) []string {
	topic, toks, i := topicAt(q, words)
	if len(topic) == 0 || !slices.Contains(preps, toks[i]) {
		return nil
	}
	var out []string
	for _, x := range toks[i+1:] {
		if topicPrepositions[x] {
			break
		}
		if slices.Contains(words, x) && !frameWords[x] && strings.Trim(x, "0123456789.,$%") != "" && !ownerModifier(x) {
			out = append(out, x)
		}
	}
	return out
}

// ownerModifier reports whether a word of what a topic is of says what is
// done with it or how much of it, not what it is: a verb ("the cost of
// adding viewers") or a quantifier ("the price of extra viewers"). The
// sources need not name it.
func ownerModifier(w string) bool {
	return len(w) > 5 && strings.HasSuffix(w, "ing") ||
		hasAny([]string{w}, "extra", "additional", "more", "another", "new", "further", "few", "many", "several", "each", "every")
}

// askedNoun returns the thing a "what", "which" or "how many" question
// asks for: the word after it, past fillers ("what languages does the UI
// support?" asks for languages, "which kind of reports" for reports); or
// "" when a verb, a frame word ("which plan") or nothing follows. A
// passage that never names it does not answer the question, however many
// of its other words it has.
func askedNoun(q string) string {
	w := tokens(q)
	for i, x := range w {
		switch {
		case x == "what" || x == "which":
		case x == "how" && i+1 < len(w) && w[i+1] == "many":
			i++
		default:
			continue
		}
		rest := w[i+1:]
		for j, y := range rest {
			switch {
			case nounFillers[y], kindNoun(y) && j+1 < len(rest) && rest[j+1] == "of":
				continue
			case frameWords[y] || stopwords[y] || plainVerbs[y] || questionForms[y] || taskWords[y] || len(y) < 3 ||
				strings.Trim(y, "0123456789.,$%") == "" || strings.HasSuffix(y, "ing") || strings.HasSuffix(y, "ed"):
				return ""
			}
			return y
		}
		return ""
	}
	return ""
}

// nounFillers may stand between "what" and the thing it asks for.
var nounFillers = map[string]bool{"kind": true, "kinds": true, "sort": true, "sorts": true, "type": true, "types": true,
	"of": true, "the": true, "your": true, "our": true, "other": true, "exact": true, "specific": true}

// kindNoun reports whether w, a noun before "of", asks for a kind of
// the thing after it, as "kind" does: a word of nounFillers, or one
// WordNet gives as a synonym of "kind" or "sort" ("forms of payment").
// What it asks for is that thing, which a passage names without it.
func kindNoun(w string) bool {
	if nounFillers[w] {
		return true
	}
	return !stopwords[w] && slices.ContainsFunc(lexicon.Synonyms(w), func(x string) bool { return x == "kind" || x == "sort" })
}

// verbLeads are the words after which a question's next word is its verb:
// a subject ("can I pay", "how do we sign in"), an auxiliary or "to".
var verbLeads = map[string]bool{"i": true, "we": true, "you": true, "they": true, "he": true, "she": true, "it": true,
	"do": true, "does": true, "did": true, "can": true, "could": true, "will": true, "would": true, "should": true,
	"may": true, "might": true, "must": true, "to": true, "i'd": true, "we'd": true, "i'll": true, "we'll": true}

// plainVerbs are verbs a question puts before its preposition with no
// subject: "what happens with my data after cancellation?".
var plainVerbs = map[string]bool{"happens": true, "happen": true, "happened": true, "applies": true, "apply": true,
	"occurs": true, "occur": true, "goes": true, "comes": true, "works": true, "work": true, "means": true, "counts": true}

// verbIn reports whether w is a verb in the words before: a plain verb,
// or a word right after a subject or an auxiliary. A verb is what the
// question does with its topic, not the topic: a passage about data
// retention answers "what happens with my data" without "happens".
func verbIn(before []string, w string) bool {
	if plainVerbs[w] {
		return true
	}
	for i := 1; i < len(before); i++ {
		if before[i] == w && verbLeads[before[i-1]] {
			return true
		}
	}
	return false
}

// passageCover returns the best share of the question's words that one
// passage (a section of a search result, a page, or one whole
// non-search result) contains, and how many words that passage matched.
// A word the passage matches only by a related word (see expanded)
// counts relatedCredit of a word in both. Words spread over unrelated
// passages do not make an answer.
func passageCover(q string, rs []result) (float64, float64) {
	words := relevanceWords(q)
	if len(words) == 0 {
		return 1, 0
	}
	topic := topicWords(q, words)
	toksQ := tokens(q)
	valueKind, duration := askedKind(toksQ), asksDuration(toksQ)
	// The noun asked ("year" of "in what year ...") is a topic, but
	// for a measure of the value asked, which says what kind of answer
	// is wanted, not what about.
	if n := askedNoun(q); n != "" && slices.Contains(words, n) && !slices.Contains(topic, n) && !(valueKind != kindNone && measureWord(n)) {
		topic = append(slices.Clip(topic), n)
	}
	// The words of what the topic is of, or where, are checked with it
	// (ownerWords, placeQualifiers).
	ofTopic := len(topic) > 0
	// "The length of a demo", "the size of the customer base": the noun
	// of a duration or a measure asked says what kind of answer is
	// wanted, which a passage gives in its own words ("Demos last 45
	// minutes", "2,300 customers").
	topic = slices.DeleteFunc(slices.Clone(topic), func(w string) bool {
		return duration && durationNoun(w) || valueKind != kindNone && measureWord(w)
	})
	all := resultWords(rs)
	// A question word no result holds counts by a synonym they hold,
	// but only beside a word of the question, not a name ("acme"),
	// that the results hold as asked: "clients" of "How many clients
	// use the platform?" is "customers", but "looker" alone is no
	// "viewer", nor "overcast" a "cloud". A synonym ranks passages; it
	// does not make a subject the sources lack covered.
	// A synonym in everyday use ("staff" is "employees") holds one
	// sense, and counts without such a word.
	syn := expandWords(q, words, all)
	if !slices.ContainsFunc(words, func(w string) bool { return guards().Anchors(w) && matches(w, all) }) {
		syn = expanded{usage: syn.usage}
	}
	if ofTopic {
		// A topic word that no result holds anywhere ("maternity" in
		// "maternity policy for Business customers") is a subject the
		// sources do not cover, whatever else they match.
		for _, w := range append(append(slices.Clip(topic), ownerWords(q, words)...), placeQualifiers(q, words)...) {
			if !matches(w, all) && !syn.sure(w, all) {
				return 0, 0
			}
		}
	}
	// A value of the kind asked ("how many": a count, "how long": a
	// duration, "what year": a year) beside the question's focus counts
	// as one of the question's words: "Demos last 45 minutes" answers
	// "how long is a product demo?" without the word "product".
	// Only where the results hold every word of the question's focus
	// somewhere:
	// a value beside "customers" does not answer how many customers are
	// in Japan when no result names Japan.
	focus, kindWords := focusAndKind(q, contentWords(q))
	noun := askedNoun(q)
	// A question whose only subject is the company's name ("when did
	// Acme begin?") has no focus but asks of the company, which every
	// document is about: a value of the kind asked answers it.
	ofCompany := len(focus) == 0 && slices.ContainsFunc(words, companyWord)
	if slices.ContainsFunc(focus, func(w string) bool { return !matches(w, all) && syn.credit(w, all) == 0 }) {
		valueKind, duration = kindNone, false
	}
	best, bestN := 0.0, 0.0
	for _, r := range rs {
		groups := map[string][]string{}
		kinds := map[string]bool{} // the passages with a sentence that gives the kind asked about the focus
		for _, s := range sentencesOf(r.text) {
			key := s.where
			if s.quoted {
				key = "" // a synthesis or write-up: one passage
			}
			groups[key] = append(groups[key], s.words...)
			if (valueKind != kindNone && givesKind(valueKind, s.text, focus, noun) || duration && namesDuration(s.text)) &&
				(len(focus) > 0 || ofCompany) && coversFocus(focus, expanded{usage: syn.usage}, s.toks, s.heading) {
				kinds[key] = true
			}
		}
		for key, toks := range groups {
			n, t := 0.0, 0
			for _, w := range words {
				if matches(w, toks) {
					n++
				} else {
					n += syn.credit(w, toks) // a related word counts less
				}
			}
			// The bonus stands for a word of the question the passage says
			// in other words or leaves unsaid, a modifier of a word it holds
			// ("product" of "a product demo"), but never lifts the passage
			// to a cover it would have with any other focus word it lacks:
			// "about 140 employees" does not answer how many employees are
			// in support.
			if kinds[key] {
				n = min(n+kindCredit(words, kindWords, toks, syn), float64(len(words)-missingFocus(focus, toksQ, toks, syn)))
			}
			for _, w := range topic {
				if matches(w, toks) || syn.sure(w, toks) { // a related word says no subject
					t++
				}
			}
			if t*2 < len(topic) {
				continue // about the qualifier, not the topic
			}
			if c := n / float64(len(words)); c > best {
				best, bestN = c, n
			}
		}
	}
	return best, bestN
}

// kindCredit returns what a passage that gives the kind of value asked
// adds to the question's words it holds (words, of which kind are those
// that only say what kind of value is asked, see focusAndKind; toks the
// passage's words): one, for a word of the question it says in other
// words or leaves unsaid, or, when more of the kind words than one are
// ones the passage does not hold, one for each of those: "in what year
// was the company formed?" is answered by "founded in 2019", which holds
// neither "year" nor "formed". Any other word the passage lacks (a plan's
// name, a frame word) is lacking.
func kindCredit(words, kind, toks []string, syn expanded) float64 {
	kindOnly := 0
	for _, w := range words {
		if slices.Contains(kind, w) && !matches(w, toks) && syn.credit(w, toks) == 0 {
			kindOnly++
		}
	}
	return float64(max(1, kindOnly))
}

// missingFocus returns how many of the question's focus words the words
// of a passage (toks) neither hold nor relate to, but for a modifier of
// one they hold: the focus word just before it in the question (qtoks),
// "product" of "product demo".
func missingFocus(focus, qtoks, toks []string, syn expanded) int {
	held := func(w string) bool { return matches(w, toks) || syn.credit(w, toks) > 0 }
	missing := 0
	for _, w := range focus {
		if held(w) {
			continue
		}
		if i := slices.Index(qtoks, w); i >= 0 && i+1 < len(qtoks) && slices.Contains(focus, qtoks[i+1]) && held(qtoks[i+1]) {
			continue // a modifier of a word the passage holds
		}
		missing++
	}
	return missing
}

// relevant reports whether one passage of the results answers the
// question: it holds at least half of the question's words, and at least
// two of them when the question has two or more; and a sentence gives the
// kind of value the question asks of what it names (see answersAsked).
func relevant(q string, rs []result) bool {
	c, n := passageCover(q, rs)
	words := relevanceWords(q)
	need := min(2, len(words)-phrasesHeld(q, words, rs))
	return c >= coverage && n >= float64(need) && holdsFocus(q, rs) && answersAsked(q, rs) && holdsInitialisms(q, rs)
}

// phrasesHeld returns how many pairs of consecutive question words
// (words, those relevance counts) make a phrase whose one-word synonym
// or usage synonym the results hold (see expanded.phrase: "bank cards"
// is "credit cards", "price cut" "discount"): each pair says one thing,
// so a question of two words that make one asks one word of a passage,
// as "Do you take Visa?" does.
func phrasesHeld(q string, words []string, rs []result) int {
	qt := tokens(q)
	var syn expanded
	n := 0
	for i := 0; i+1 < len(qt); i++ {
		a, b := qt[i], qt[i+1]
		if !slices.Contains(words, a) || !slices.Contains(words, b) {
			continue
		}
		if syn.phrase == nil {
			all := resultWords(rs)
			if syn = expandWords(q, words, all); syn.phrase == nil {
				return 0
			}
		}
		if len(syn.phrase[a]) > 0 && len(syn.phrase[b]) > 0 && slices.ContainsFunc(syn.phrase[a], func(p []string) bool {
			return slices.ContainsFunc(syn.phrase[b], func(x []string) bool { return slices.Equal(p, x) })
		}) {
			n++
			i++
		}
	}
	return n
}

// holdsInitialisms reports whether the results hold every initialism of
// three letters or more the question types in capitals ("CRM", "SSO"),
// as a word or by the initials of their words ("single sign-on"): an
// initialism names a thing, and one the results do not hold names a
// thing they are not about, however well its other words match ("what
// does the Acme CDP cost?" is not answered by the prices of the plans).
//
// A question typed mostly in capitals ("HOW MUCH DOES TEAM COST?") names
// nothing by its capitals, nor does a word that is an ordinary word in
// lower case ("NOT", see lexicon.Known), a chat wrapper ("ASAP", see
// chatInitialisms) or a currency code ("USD", see currencyCodes), which
// asks an amount of money, as "dollars" does, and is held by any price.
func holdsInitialisms(q string, rs []result) bool {
	if mostlyCapitals(q) {
		return true
	}
	var missing []string
	for _, f := range strings.FieldsFunc(q, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		w := strings.ToLower(f)
		if len(f) < 3 || !lexicon.Initialism(f) || stopwords[w] || lexicon.Known(w) || chatInitialisms[w] {
			continue
		}
		if currencyCodes[w] {
			w = "$"
		}
		missing = append(missing, w)
	}
	// An initialism that names a kind of product ("CRM") is held by a
	// product of that kind only where the question asks about connecting
	// one (see withCategories): in "what does the Acme CRM module cost?"
	// it names a thing of its own, which a passage listing Salesforce
	// among the sources is not about.
	connecting := len(missing) > 0 && slices.ContainsFunc(missing, func(w string) bool { return categoryOf[w] != nil }) && asksConnecting(q)
	held := func(w string, s sentence) bool {
		if w == "$" {
			return moneyRE.MatchString(s.text)
		}
		if c := categoryOf[w]; c != nil && !connecting {
			for i := range s.words {
				if cat, _ := categoryAt(s.words, i); cat == c {
					return true // its own words: "CRM", "customer relationship management"
				}
			}
			return slices.Contains(s.words, w)
		}
		return matches(w, s.words)
	}
	for _, r := range rs {
		if len(missing) == 0 {
			break
		}
		for _, s := range sentencesOf(r.text) {
			missing = slices.DeleteFunc(missing, func(w string) bool { return held(w, s) })
		}
	}
	return len(missing) == 0
}

// chatInitialisms are the initialisms chat wraps a question in ("Tell me
// ASAP", "FYI, ..."): they name no thing the question is about.
var chatInitialisms = map[string]bool{"asap": true, "fyi": true, "btw": true, "imo": true, "imho": true, "tbh": true,
	"afaik": true, "iirc": true, "pls": true, "plz": true, "thx": true, "eta": true}

// currencyCodes are the ISO 4217 codes of the currencies a question asks
// a price in ("What does Team cost in USD?").
var currencyCodes = map[string]bool{"usd": true, "eur": true, "gbp": true, "cad": true, "aud": true, "chf": true,
	"jpy": true, "cny": true, "inr": true, "sek": true, "nok": true, "dkk": true, "nzd": true, "sgd": true}

// mostlyCapitals reports whether most of the letters of q are capitals:
// a question typed with caps lock on, whose capitals mark no names.
func mostlyCapitals(q string) bool {
	upper, letters := 0, 0
	for _, r := range q {
		if unicode.IsLetter(r) {
			letters++
			if unicode.IsUpper(r) {
				upper++
			}
		}
	}
	return 2*upper > letters
}

// holdsFocus reports whether a sentence of the results holds the
// question's focus (see focusWords and coversFocus): one that shares only
// generic words with it ("large", "year", the company's name) answers
// nothing.
func holdsFocus(q string, rs []result) bool {
	words := contentWords(q)
	focus := focusWords(q, words)
	if len(focus) == 0 {
		return true
	}
	syn := expandWords(q, words, resultWords(rs))
	for _, r := range rs {
		for _, s := range sentencesOf(r.text) {
			if coversFocus(focus, syn, s.toks, s.heading) {
				return true
			}
		}
	}
	return false
}

// notFound says plainly that the sources tried hold nothing on the
// question, and what they do cover when a tool's description says so
// (coveredTopics).
func notFound(q string, rs []result, tools []tool) string {
	var where []string
	seen := map[string]bool{}
	for _, r := range rs {
		name := sourceName(r.source)
		if !seen[name] {
			seen[name] = true
			where = append(where, name)
		}
	}
	words := relevanceWords(q)
	for i, w := range words {
		words[i] = phraseOf(w)
	}
	about := strings.Join(words, " ")
	if about == "" {
		about = strings.TrimSpace(q)
	}
	s := fmt.Sprintf("I could not find anything about %q", about)
	if len(where) > 0 {
		s += " in " + joinOr(where)
	}
	s += ". The passages that came back are about other topics, so I won't guess. You could rephrase the question"
	if topics := coveredTopics(tools); len(topics) > 0 {
		return s + ", or ask about what my sources cover: " + joinOr(topics) + "."
	}
	return s + ", or ask about something more specific."
}

// coverCue is how a search tool's description lists the topics of its
// documents: `The documents cover: ["pricing and plans", "products"].`,
// a JSON list, so that a title may hold commas and full stops; or, from
// other servers, "The documents cover: pricing and plans, products.".
const coverCue = "documents cover: "

// coveredTopics returns the topics the tools' descriptions list after
// coverCue, in their order, each once.
func coveredTopics(tools []tool) []string {
	var topics []string
	add := func(topic string) {
		if topic = strings.TrimSpace(topic); topic != "" && !slices.Contains(topics, topic) {
			topics = append(topics, topic)
		}
	}
	for _, t := range tools {
		i := strings.Index(t.description, coverCue)
		if i < 0 {
			continue
		}
		list := t.description[i+len(coverCue):]
		if strings.HasPrefix(list, "[") {
			var quoted []string
			if json.NewDecoder(strings.NewReader(list)).Decode(&quoted) == nil {
				for _, topic := range quoted {
					add(topic)
				}
				continue
			}
		}
		if j := strings.Index(list, ". "); j >= 0 {
			list = list[:j]
		}
		for topic := range strings.SplitSeq(strings.TrimSuffix(strings.TrimSpace(list), "."), ", ") {
			add(topic)
		}
	}
	return topics
}

// sourceName names a result's source for a user.
func sourceName(source string) string {
	s := strings.ToLower(source)
	switch {
	case strings.Contains(s, "knowledge") || strings.Contains(s, "rag"):
		return "the knowledge base"
	case strings.Contains(s, "web"):
		return "the web snapshot"
	case strings.Contains(s, "document"):
		return "your documents"
	case strings.HasPrefix(s, "workflow"):
		return "the research workflow"
	}
	return source
}

func joinOr(s []string) string {
	if len(s) < 2 {
		return strings.Join(s, "")
	}
	return strings.Join(s[:len(s)-1], ", ") + " or " + s[len(s)-1]
}

// fromWorkflow reports whether a workflow's outcome is among the results:
// its plan already gathered what there is, so the model answers from it.
func fromWorkflow(rs []result) bool {
	for _, r := range rs {
		if strings.HasPrefix(r.source, "workflow") {
			return true
		}
	}
	return false
}

// starlarkPow rewrites Python's a ** b, which Starlark lacks, as
// math.pow(a, b).
var powRE = regexp.MustCompile(`(\w+(?:\.\w+)?|\([^()]*\))\s*\*\*\s*(\w+(?:\.\w+)?|\([^()]*\))`)

func starlarkPow(code string) string {
	for powRE.MatchString(code) {
		code = replaceAll(powRE, code, "math.pow($1, $2)")
	}
	return code
}
