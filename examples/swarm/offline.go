package swarm

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"regexp"
	"slices"
	"strings"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/examples/supervisor/supervisortest"
)

// NewOfflineModel returns the swarm's DEMO language model: a small
// rule-based model.Model that reads the swarm's prompts (recognised by
// MarkerSupervisor, MarkerAgent and MarkerArchitect, and the critique and
// writer steps of package supervisor through package supervisortest) and
// makes real decisions from them, so the swarm runs with no API
// key and no network. It is not a language model; it never invents facts.
//
//   - Supervisor: splits the request at "then", ";" and "and what/how/..."
//     into steps, one agent each (arithmetic to the agent with a calculate
//     tool, company questions to the one with search_knowledge, the rest to
//     the one with web_search); a calculation that needs a value from an
//     earlier step depends on it and is rewritten with the value once that
//     step's result arrives; results mark steps done or failed; a failed
//     search is planned again on the other search agent; it selects the
//     agents of the ready steps and none when nothing is left.
//   - Agent: picks the tool of its kind and its arguments from the task;
//     an expression is passed as written ("15% of 240"), and rewritten as
//     arithmetic ("15/100*240") once feedback or a retrieved skill's lesson
//     says so.
//   - Reflection: REJECTED with the error when the tool failed, or when the
//     output misses the task's words; FIXED, keeping only the best
//     sentences, when a search returned more than it needs; else APPROVED.
//   - Writer: returns the draft it is given.
//
// It answers a forced tool choice with its JSON as the function's
// arguments, as agent.Call may ask of a provider.
func NewOfflineModel() model.Model { return offlineModel{} }

type offlineModel struct{}

// Generate answers the last user message; the usage is estimated at four
// bytes a token.
func (offlineModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	var human string
	size := 0
	for _, m := range req.Messages {
		t := m.Text()
		size += len(t)
		if m.Role == model.RoleUser {
			human = t
		}
	}
	if human == "" {
		return nil, errors.New("swarm: offline model: no user message; send the prompt as a user message")
	}
	text := offlineAnswer(human)
	resp := &model.Response{Message: model.Assistant(text), FinishReason: model.FinishStop,
		Usage: model.Usage{InputTokens: (size + 3) / 4, OutputTokens: (len(text) + 3) / 4}}
	if req.ToolChoice.Mode == model.ToolNamed && json.Valid([]byte(text)) {
		resp.Message = model.Message{Role: model.RoleAssistant, Parts: []model.Part{model.ToolCallPart(
			model.ToolCall{ID: "call_offline_1", Name: req.ToolChoice.Name, Arguments: json.RawMessage(text)})}}
		resp.FinishReason = model.FinishToolCalls
	}
	return resp, nil
}

// Stream yields the answer of Generate as one text chunk (or one tool-call
// chunk), then the complete response.
func (o offlineModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		resp, err := o.Generate(ctx, req)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		if t := resp.Text(); t != "" && !yield(model.Chunk{Kind: model.ChunkText, Text: t}, nil) {
			return
		}
		for i, c := range resp.ToolCalls() {
			if !yield(model.Chunk{Kind: model.ChunkToolCall, ToolCall: &model.ToolCallDelta{Index: i, ID: c.ID, Name: c.Name,
				Arguments: string(c.Arguments)}}, nil) {
				return
			}
		}
		yield(model.Chunk{Kind: model.ChunkDone, Response: resp}, nil)
	}
}

func offlineAnswer(prompt string) string {
	if r, ok := supervisortest.Parse(prompt); ok {
		switch r.Step {
		case supervisortest.Critique:
			return mustJSON(offlineReview(r))
		case supervisortest.Write:
			if r.Draft != "" {
				return r.Draft
			}
			return "I have no results to answer from."
		}
		return "I only answer the swarm's prompts."
	}
	sec := sections(prompt)
	switch {
	case strings.HasPrefix(prompt, MarkerSupervisor):
		return mustJSON(offlineSupervise(sec))
	case strings.HasPrefix(prompt, MarkerAgent):
		return mustJSON(offlineAct(sec))
	case strings.HasPrefix(prompt, MarkerArchitect):
		return mustJSON(offlineDesign(sec))
	}
	return "I only answer the swarm's prompts."
}

// ---- supervisor ----

type offlineAgent struct{ name, tools, description string }

func parseAgents(s string) []offlineAgent {
	var out []offlineAgent
	for _, line := range strings.Split(s, "\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "- "), ":")
		if !ok {
			continue
		}
		desc, tools, _ := strings.Cut(rest, "Tools:")
		out = append(out, offlineAgent{name: strings.TrimSpace(name), tools: tools, description: strings.TrimSpace(desc)})
	}
	return out
}

// agentWith returns the agent offering tool, or "".
func agentWith(agents []offlineAgent, tool string) string {
	for _, a := range agents {
		if slices.Contains(strings.Fields(strings.ReplaceAll(a.tools, ",", " ")), tool) {
			return a.name
		}
	}
	return ""
}

var (
	splitThen = regexp.MustCompile(`(?i)\s*(?:;|,?\s+and then\s+|,?\s+then\s+|\.\s+)\s*`)
	splitAnd  = regexp.MustCompile(`(?i)\s+and\s+(what|how|find|calculate|compute|look|search|get|tell)\b`)
	numberRe  = regexp.MustCompile(`\d[\d,]*(?:\.\d+)?`)
	mathRe    = regexp.MustCompile(`(?i)\d\s*(?:[-+*/^×x%]|percent)|\b(?:calculate|compute|multiply|times|sum|total|yearly|annual)\b`)
	companyRe = regexp.MustCompile(`(?i)\b(?:acme|our|plans?|pricing|price|product|policy|policies|support|sla|security|refunds?|trial|onboarding|api|editors?|seats?)\b`)
	amountRe  = regexp.MustCompile(`\$\s?(\d[\d,]*(?:\.\d+)?)`)
	useRe     = regexp.MustCompile(`\(use the value from (step_\d+)\)`)
)

var buildTeamRe = regexp.MustCompile(`(?i)\b(?:build|create|assemble|design|make|set up)\b.*\b(?:team|crew|workflow)\b`)

// teamStep plans a request for a team on a registered team whose name's
// words the request all mentions (the team as one node), else on the
// Architect when the request asks for a team to be built.
func teamStep(request string, agents []offlineAgent) (*Step, string) {
	req := wordSet(request)
	for _, a := range agents {
		name, ok := strings.CutPrefix(a.name, TeamPrefix)
		if !ok {
			continue
		}
		if _, n, owned := strings.Cut(name, "."); owned {
			name = n // TeamPrefix+Owner+"."+Name
		}
		all := true
		for _, w := range strings.Split(strings.TrimSuffix(name, "_team"), "_") {
			all = all && (req[w] || req[w+"s"])
		}
		if all && strings.Contains(strings.ToLower(request), "team") {
			return &Step{ID: "step_1", Agent: a.name, Task: request, Status: StepPending}, "The registered team " + a.name + " fits the request; it runs it as one node."
		}
	}
	if buildTeamRe.MatchString(request) {
		for _, a := range agents {
			if a.name == Architect {
				return &Step{ID: "step_1", Agent: Architect, Task: request, Status: StepPending}, "The request asks for a team; the architect designs, registers and runs it."
			}
		}
	}
	return nil, ""
}

func decompose(request string) []string {
	request = splitAnd.ReplaceAllString(request, "; $1")
	var parts []string
	for _, p := range splitThen.Split(request, -1) {
		if p = strings.Trim(strings.TrimSpace(p), ".?!,"); p != "" {
			parts = append(parts, p)
		}
	}
	return parts
}

func offlineSupervise(sec map[string]string) Decision {
	agents := parseAgents(sec["Agents"])
	calc, kb, web := agentWith(agents, "calculate"), agentWith(agents, "search_knowledge"), agentWith(agents, "web_search")
	var plan []Step
	if sec["Plan"] != "" {
		if err := json.Unmarshal([]byte(sec["Plan"]), &plan); err != nil {
			plan = nil
		}
	}
	var thought []string
	if plan == nil {
		plan = []Step{}
	}
	if len(plan) == 0 {
		if st, why := teamStep(sec["Request"], agents); st != nil {
			plan = append(plan, *st)
			thought = append(thought, why)
		}
	}
	if len(plan) == 0 {
		for i, part := range decompose(sec["Request"]) {
			st := Step{ID: fmt.Sprintf("step_%d", i+1), Task: part, Status: StepPending}
			switch {
			case mathRe.MatchString(part) && calc != "":
				st.Agent = calc
				if len(numberRe.FindAllString(part, -1)) < 2 && i > 0 {
					prev := plan[i-1].ID
					st.DependsOn = []string{prev}
					st.Task = part + " (use the value from " + prev + ")"
				}
			case specialist(agents, part, calc, kb, web) != "":
				st.Agent = specialist(agents, part, calc, kb, web)
			case companyRe.MatchString(part) && kb != "":
				st.Agent = kb
			case web != "":
				st.Agent = web
			case kb != "":
				st.Agent = kb
			case len(agents) > 0:
				st.Agent = agents[0].name
			}
			plan = append(plan, st)
		}
		thought = append(thought, fmt.Sprintf("The request has %d part(s); one step each.", len(plan)))
	}
	results := parseResults(sec["Results"])
	// Mark steps from their latest results; plan around failures.
	for i := 0; i < len(plan); i++ {
		st := &plan[i]
		r, ok := results[st.ID]
		if st.Status != StepPending || !ok {
			continue
		}
		if r.ok {
			st.Status = StepDone
			thought = append(thought, st.ID+" is done.")
			continue
		}
		st.Status = StepFailed
		thought = append(thought, st.ID+" failed: "+firstLine(r.text)+".")
		alt := ""
		switch st.Agent {
		case kb:
			alt = web
		case web:
			alt = kb
		}
		if alt == "" || triedBy(plan, st.Task, alt) {
			continue
		}
		re := Step{ID: fmt.Sprintf("step_%d", len(plan)+1), Agent: alt, Task: st.Task, Status: StepPending}
		for j := range plan {
			for k, d := range plan[j].DependsOn {
				if d == st.ID {
					plan[j].DependsOn[k] = re.ID
					plan[j].Task = strings.ReplaceAll(plan[j].Task, "(use the value from "+st.ID+")", "(use the value from "+re.ID+")")
				}
			}
		}
		plan = append(plan, re)
		st = &plan[i]
		thought = append(thought, "Planned "+re.ID+" on "+alt+" instead.")
	}
	status := map[string]string{}
	for _, st := range plan {
		status[st.ID] = st.Status
	}
	selected := []string{}
	for i := range plan {
		st := &plan[i]
		if st.Status != StepPending {
			continue
		}
		ready := true
		for _, d := range st.DependsOn {
			switch status[d] {
			case StepFailed:
				st.Status, ready = StepFailed, false
				status[st.ID] = StepFailed
				thought = append(thought, st.ID+" cannot run: "+d+" failed.")
			case StepPending:
				ready = false
			}
		}
		if !ready || slices.Contains(selected, st.Agent) {
			continue
		}
		// Write the values of earlier steps into the task.
		if m := useRe.FindStringSubmatch(st.Task); m != nil {
			task, ok := rewriteWithValue(strings.Replace(st.Task, m[0], "", 1), results[m[1]].text, taskOf(plan, m[1]))
			if !ok {
				st.Status = StepFailed
				status[st.ID] = StepFailed
				thought = append(thought, st.ID+": "+m[1]+" gave no amount to calculate with.")
				continue
			}
			thought = append(thought, fmt.Sprintf("Rewrote %s with the value from %s: %q.", st.ID, m[1], task))
			st.Task = task
		}
		selected = append(selected, st.Agent)
	}
	if len(selected) == 0 {
		thought = append(thought, "Nothing is left to run; hand over to QA.")
	} else {
		thought = append(thought, "Running "+strings.Join(selected, ", ")+".")
	}
	return Decision{Thought: strings.Join(thought, " "), Plan: plan, SelectedAgents: selected}
}

type offlineResult struct {
	ok   bool
	text string
}

// parseResults reads "### step agent (ok|failed)" blocks; a later block of
// one step wins.
func parseResults(s string) map[string]offlineResult {
	out := map[string]offlineResult{}
	var id string
	var cur offlineResult
	var body []string
	flush := func() {
		if id != "" {
			cur.text = strings.TrimPrefix(strings.TrimSpace(strings.Join(body, "\n")), "Error: ")
			out[id] = cur
		}
	}
	for _, line := range strings.Split(s, "\n") {
		if h, ok := strings.CutPrefix(line, "### "); ok {
			flush()
			f := strings.Fields(h)
			id, cur, body = f[0], offlineResult{ok: strings.HasSuffix(h, "(ok)")}, nil
			continue
		}
		body = append(body, line)
	}
	flush()
	return out
}

func triedBy(plan []Step, task, agent string) bool {
	for _, st := range plan {
		if st.Agent == agent && st.Task == task {
			return true
		}
	}
	return false
}

func taskOf(plan []Step, id string) string {
	for _, s := range plan {
		if s.ID == id {
			return s.Task
		}
	}
	return ""
}

var properRe = regexp.MustCompile(`\b[A-Z][a-z]+`)

// rewriteWithValue turns "calculate the yearly cost for 10 editors" and a
// result quoting "Team costs $49" for the task "Find what Acme's Team plan
// costs" into "calculate 49 * 12 * 10". The amount is the first one after
// a name of the earlier task ("Team") in a sentence, else the first.
func rewriteWithValue(task, result, earlier string) (string, bool) {
	amount := ""
	names := properRe.FindAllString(earlier, -1)
	if len(names) > 0 {
		names = names[1:] // the first word is capitalised anyway
	}
	for _, sent := range sentenceEnd.Split(result, -1) {
		for _, n := range names {
			if i := strings.Index(sent, n); i >= 0 {
				if m := amountRe.FindStringSubmatch(sent[i:]); m != nil && amount == "" {
					amount = m[1]
				}
			}
		}
	}
	if amount == "" {
		m := amountRe.FindStringSubmatch(result)
		if m == nil {
			return "", false
		}
		amount = m[1]
	}
	expr := []string{strings.ReplaceAll(amount, ",", "")}
	lower := strings.ToLower(task)
	if strings.Contains(lower, "year") || strings.Contains(lower, "annual") || strings.Contains(lower, "12 months") {
		expr = append(expr, "12")
	}
	for _, n := range numberRe.FindAllString(strings.ReplaceAll(lower, "12 months", ""), -1) {
		expr = append(expr, strings.ReplaceAll(n, ",", ""))
	}
	return "calculate " + strings.Join(expr, " * "), true
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// ---- agent ----

var (
	percentRe  = regexp.MustCompile(`(?i)(\d+(?:\.\d+)?)\s*(?:%|percent)\s*of\s*`)
	exprPrefix = regexp.MustCompile(`(?i)^(?:what\s+is|what's|calculate|compute|how\s+much\s+is|evaluate)\s+`)
)

func offlineAct(sec map[string]string) Choice {
	var tools []string
	for _, line := range strings.Split(sec["Tools"], "\n") {
		if name, _, ok := strings.Cut(strings.TrimPrefix(line, "- "), ":"); ok {
			tools = append(tools, strings.TrimSpace(name))
		}
	}
	task := sec["Task"]
	var skill *Skill
	for _, line := range strings.Split(sec["Skills"], "\n") {
		var s Skill
		if json.Unmarshal([]byte(strings.TrimPrefix(line, "- ")), &s) == nil && slices.Contains(tools, s.Tool) {
			skill = &s
			break
		}
	}
	feedback := sec["Feedback"]
	thought := ""
	if skill != nil {
		thought = fmt.Sprintf("Reusing the skill of %q (%s). ", skill.Task, skill.Tool)
	}
	switch {
	case slices.Contains(tools, "calculate"):
		expr := strings.TrimSpace(exprPrefix.ReplaceAllString(strings.Trim(task, " ?."), ""))
		if feedback != "" || (skill != nil && skill.Lesson != "") {
			expr = arithmetic(expr)
			thought += "Wrote the expression as plain arithmetic, as "
			if feedback != "" {
				thought += "the feedback asks."
			} else {
				thought += "the skill's lesson says: " + skill.Lesson
			}
		} else {
			thought += "Evaluate the expression as written."
		}
		return Choice{Thought: thought, Tool: "calculate", Arguments: map[string]any{"expression": expr}}
	case slices.Contains(tools, "search_knowledge"):
		return Choice{Thought: thought + "Search the knowledge base for the task's words.", Tool: "search_knowledge",
			Arguments: map[string]any{"query": query(task, feedback), "top_k": 3}}
	case slices.Contains(tools, "web_search"):
		return Choice{Thought: thought + "Search the web for the task's words.", Tool: "web_search",
			Arguments: map[string]any{"query": query(task, feedback), "max_results": 3}}
	case len(tools) > 0:
		return offlineGeneric(sec["Tools"], task, feedback, thought)
	}
	return Choice{Thought: "No tool is listed; I write the step's output from the context.", Answer: offlineWrite(task, sec["Context"])}
}

// arithmetic rewrites words into operators: "15% of 240" is "15/100*240".
func arithmetic(expr string) string {
	expr = percentRe.ReplaceAllString(expr, "$1/100*")
	expr = strings.NewReplacer("×", "*", " x ", " * ", " times ", " * ", ",", "").Replace(expr)
	return strings.TrimSpace(expr)
}

func query(task, feedback string) string {
	q := words(task)
	if _, missing, ok := strings.Cut(feedback, "does not mention:"); ok {
		q = append(q, words(missing)...)
	}
	return strings.Join(slices.Compact(q), " ")
}

// ---- reflection ----

func offlineReview(r supervisortest.Request) supervisor.Review {
	task, call, out, msg := r.Task, r.Call, r.Output, r.Error
	if msg != "" || out == "" {
		fb := "The step failed: " + msg
		if msg == "" {
			fb = "The step returned nothing."
		}
		if strings.HasPrefix(call, "calculate") {
			fb += " Write the expression with numbers and the operators + - * / ^ ( ) only; N% of M is N/100*M."
		}
		return supervisor.Review{Verdict: supervisor.VerdictRejected, Critique: "The output is an error, not an answer.", Feedback: fb}
	}
	if noResultsRe.MatchString(out) {
		return supervisor.Review{Verdict: supervisor.VerdictRejected, Critique: "The search found nothing.",
			Feedback: "The search found nothing for these words; try other words for the task."}
	}
	if strings.HasPrefix(call, "calculate") {
		if numberRe.MatchString(out) {
			return supervisor.Review{Verdict: supervisor.VerdictApproved, Critique: "The calculator evaluated the expression."}
		}
		return supervisor.Review{Verdict: supervisor.VerdictRejected, Critique: "No number came back.", Feedback: "Give the calculator an arithmetic expression."}
	}
	kw := words(task)
	// Judge the best block (a passage, a search result), not the whole
	// output, and not a header that echoes the query.
	var missing []string
	for i, block := range strings.Split(out, "\n\n") {
		if first, rest, _ := strings.Cut(block, "\n"); strings.Contains(first, ` for "`) && strings.HasSuffix(strings.TrimSpace(first), ":") {
			block = rest
		}
		var miss []string
		for _, w := range kw {
			if !mentions(block, w) && !mentions(callTarget(call), w) { // what the call listed or read counts
				miss = append(miss, w)
			}
		}
		if i == 0 || len(miss) < len(missing) {
			missing = miss
		}
	}
	// Relevant output mentions most of the task's words: at least half of
	// them (all but one of two, the one of one).
	if len(kw) > 0 && len(kw)-len(missing) < (len(kw)+1)/2 {
		return supervisor.Review{Verdict: supervisor.VerdictRejected, Critique: fmt.Sprintf("The output is about something else: it mentions %d of the task's %d words.", len(kw)-len(missing), len(kw)),
			Feedback: "The output does not mention: " + strings.Join(missing, " ")}
	}
	if best := bestSentences(out, kw, 2); call != "" && len(out) > 400 && best != "" {
		return supervisor.Review{Verdict: supervisor.VerdictFixed, Critique: "The output answers the task but carries passages it does not need; kept the best sentences.",
			FixedOutput: best}
	}
	return supervisor.Review{Verdict: supervisor.VerdictApproved, Critique: "The output covers the task."}
}

func mentions(text, word string) bool {
	text = strings.ToLower(text)
	if len(word) > 4 {
		word = word[:4] // "price" finds "pricing"
	}
	return strings.Contains(text, word)
}

var noResultsRe = regexp.MustCompile(`^(?:No web results for|No passages match) `)

var (
	sentenceEnd = regexp.MustCompile(`[.!?]\s+`)
	rankedRe    = regexp.MustCompile(`^\d+\. (.+)$`)
)

// bestSentences keeps the n sentences of text that mention most of kw, in
// their order, each after its source line ("[1] pricing § Team ...").
func bestSentences(text string, kw []string, n int) string {
	type sent struct {
		text, source string
		score, pos   int
	}
	var all []sent
	source := ""
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if strings.HasPrefix(line, "[") {
			if _, rest, ok := strings.Cut(line, "] "); ok {
				source, _, _ = strings.Cut(rest, " (score")
			}
			continue
		}
		if m := rankedRe.FindStringSubmatch(line); m != nil { // a web result's title
			source = m[1]
			continue
		}
		if strings.HasPrefix(line, "http://") || strings.HasPrefix(line, "https://") {
			source += ", " + line
			continue
		}
		if line == "" || strings.HasSuffix(line, ":") {
			continue
		}
		for _, s := range sentenceEnd.Split(line, -1) {
			score := 0
			for _, w := range kw {
				if mentions(s, w) {
					score++
				}
			}
			if strings.Contains(s, "$") || numberRe.MatchString(s) {
				score++ // figures answer questions
			}
			if _, sect, ok := strings.Cut(source, "§ "); ok {
				for _, w := range kw {
					if mentions(sect, w) {
						score += 2 // the passage is about the task's subject
					}
				}
			}
			all = append(all, sent{text: strings.TrimSuffix(s, "."), source: source, score: score, pos: len(all)})
		}
	}
	slices.SortStableFunc(all, func(a, b sent) int { return b.score - a.score })
	if len(all) > n {
		all = all[:n]
	}
	slices.SortFunc(all, func(a, b sent) int { return a.pos - b.pos })
	var parts []string
	for _, s := range all {
		if s.score == 0 {
			continue
		}
		p := s.text + "."
		if s.source != "" {
			p += " (" + s.source + ")"
		}
		parts = append(parts, p)
	}
	return strings.Join(parts, " ")
}

// ---- LLM-only steps ----

var pythonRe = regexp.MustCompile(`(?i)\bpython\b`)

// offlineWrite writes a step's output from the context alone: the findings
// of earlier steps (the agents' messages), as a Python program when the task
// asks for Python, else as a list.
func offlineWrite(task, context string) string {
	var findings []string
	for _, line := range strings.Split(context, "\n") {
		who, text, ok := strings.Cut(line, ": ")
		if !ok || who == "user" || who == "Available artifacts" || strings.TrimSpace(text) == "" {
			continue
		}
		findings = append(findings, clip(text, 300))
	}
	if pythonRe.MatchString(task) {
		var b strings.Builder
		fmt.Fprintf(&b, "# Python report: %s\n", clip(task, 200))
		b.WriteString("findings = [\n")
		for _, f := range findings {
			fmt.Fprintf(&b, "    %s,\n", mustJSON(f))
		}
		b.WriteString("]\n\n\ndef report():\n")
		fmt.Fprintf(&b, "    print(%s)\n", mustJSON("Report: "+clip(task, 200)))
		b.WriteString("    if not findings:\n        print(\"No findings.\")\n")
		b.WriteString("    for f in findings:\n        print(\"-\", f)\n\n\n")
		b.WriteString("if __name__ == \"__main__\":\n    report()\n")
		return b.String()
	}
	if len(findings) == 0 {
		return "Report on " + task + ": nothing was found to report."
	}
	return "Report on " + task + ":\n- " + strings.Join(findings, "\n- ")
}

// ---- architect ----

var (
	teamGoalRe  = regexp.MustCompile(`(?i)\b(?:team|crew|workflow)\b\s*(?:that|which|to|who|for)?\s*(.*)$`)
	teamSplitRe = regexp.MustCompile(`(?i)\s*(?:,\s*and\s+|,\s*then\s+|\s+and then\s+|\s+then\s+|\s+and\s+|;\s*|,\s*)`)
	writeVerbs  = map[string]string{"write": "Writer", "draft": "Writer", "compose": "Writer", "summarize": "Summarizer", "summarise": "Summarizer", "report": "Reporter"}
	agentNouns  = map[string]string{"research": "Researcher", "find": "Finder", "search": "Searcher", "look": "Finder", "analyze": "Analyst", "analyse": "Analyst",
		"calculate": "Calculator", "compute": "Calculator", "list": "Lister", "read": "Reader", "fetch": "Fetcher", "check": "Checker"}
)

// offlineDesign designs a team from a request such as "Build me a team that
// research stocks and writes a Python report": one agent per part of the
// goal, bound to the server whose name, tools and descriptions share most
// words with the part (or to none for writing), named after the part's
// object and verb (StockResearcher, ReportWriter), and a workflow in which
// each writing step uses the steps before it.
func offlineDesign(sec map[string]string) TeamSpec {
	goal := sec["Request"]
	if m := teamGoalRe.FindStringSubmatch(goal); m != nil && strings.TrimSpace(m[1]) != "" {
		goal = m[1]
	}
	type server struct {
		name  string
		words map[string]bool
	}
	var servers []server
	for _, line := range strings.Split(sec["Servers"], "\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "- "), ":")
		if !ok {
			continue
		}
		servers = append(servers, server{name: strings.TrimSpace(name), words: stemSet(name + " " + rest)})
	}
	spec := TeamSpec{}
	var objects []string
	for _, part := range teamSplitRe.Split(strings.Trim(goal, " .?!"), -1) {
		ws := strings.Fields(strings.ToLower(part))
		if len(ws) == 0 {
			continue
		}
		verb := strings.TrimSuffix(ws[0], "es")
		if _, ok := agentNouns[verb]; !ok {
			verb = strings.TrimSuffix(ws[0], "s")
		}
		object := ""
		for i := len(ws) - 1; i > 0; i-- {
			if w := strings.Trim(ws[i], ".,"); !stopWords[w] && w != "" {
				object = strings.TrimSuffix(w, "s")
				break
			}
		}
		if object == "" {
			object = "task"
		}
		role, writes := writeVerbs[verb]
		if !writes {
			if role = agentNouns[verb]; role == "" {
				role = strings.ToUpper(verb[:1]) + verb[1:] + "er"
			}
		}
		a := AgentSpec{Name: strings.ToUpper(object[:1]) + object[1:] + role, Role: capitalise(part) + "."}
		if !writes {
			best, score := "", 0
			pw := stemSet(part)
			for _, s := range servers {
				n := 0
				for w := range pw {
					if s.words[w] {
						n++
					}
				}
				if n > score {
					best, score = s.name, n
				}
			}
			for _, want := range []string{"web", "search"} { // research goes to the web
				for _, s := range servers {
					if best == "" && s.words[want] {
						best = s.name
					}
				}
			}
			a.Server = best
			a.Goal = "Use only the " + best + " server's tools."
		} else {
			a.Goal = "Write from the results of the steps before, with no tools."
		}
		if slices.ContainsFunc(spec.Agents, func(o AgentSpec) bool { return o.Name == a.Name }) {
			continue
		}
		step := Step{ID: fmt.Sprintf("step_%d", len(spec.Workflow)+1), Agent: a.Name, Task: part, Status: StepPending}
		if writes {
			for _, prev := range spec.Workflow {
				step.DependsOn = append(step.DependsOn, prev.ID)
			}
			if len(step.DependsOn) > 0 {
				step.Task += " from the results of " + strings.Join(step.DependsOn, ", ")
			}
		}
		spec.Agents = append(spec.Agents, a)
		spec.Workflow = append(spec.Workflow, step)
		objects = append(objects, object)
	}
	spec.Name = strings.Join(slices.Compact(objects), "_") + "_team"
	spec.Description = "A team that " + strings.Trim(goal, " .") + "."
	return spec
}

func capitalise(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// stemSet is the words of text with a trailing s removed.
func stemSet(text string) map[string]bool {
	out := map[string]bool{}
	for _, w := range words(strings.ReplaceAll(text, "_", " ")) {
		out[strings.TrimSuffix(w, "s")] = true
	}
	return out
}

// specialist returns the agent, other than the calculator, knowledge and
// web search ones, whose tools and description share at least two words
// with part (a filesystem agent for "List the files in /src"), or "".
func specialist(agents []offlineAgent, part, calc, kb, web string) string {
	pw := stemSet(part)
	best, score := "", 1
	for _, a := range agents {
		if a.name == calc || a.name == kb || a.name == web || a.tools == "" {
			continue
		}
		n := 0
		aw := stemSet(a.tools + " " + a.description)
		for w := range pw {
			if aw[w] {
				n++
			}
		}
		if n > score {
			best, score = a.name, n
		}
	}
	return best
}

var (
	pathRe    = regexp.MustCompile(`(?:^|\s)(/[\w./-]*)`)
	allowedRe = regexp.MustCompile(`not in (/[^\s,]+)`)
)

// offlineGeneric picks the listed tool whose name and description share
// most words with the task and fills its required arguments from its input
// schema: a path from the task (under the allowed folder a rejected
// attempt's error named), any other string the task itself.
func offlineGeneric(toolLines, task, feedback, thought string) Choice {
	tw := stemSet(task)
	var best struct {
		name   string
		schema map[string]any
		score  int
	}
	best.score = -1
	for _, line := range strings.Split(toolLines, "\n") {
		name, rest, ok := strings.Cut(strings.TrimPrefix(line, "- "), ":")
		if !ok {
			continue
		}
		desc, schema, _ := strings.Cut(rest, "Input schema:")
		n := 0
		nw := stemSet(name)
		for w := range tw {
			if nw[w] {
				n += 2 // the tool's name weighs more than its description
			}
		}
		dw := stemSet(desc)
		for w := range tw {
			if dw[w] {
				n++
			}
		}
		verb, _, _ := strings.Cut(strings.TrimSpace(name), "_")
		if first := strings.Fields(strings.ToLower(task)); len(first) > 0 && strings.TrimSuffix(first[0], "s") == strings.ToLower(verb) {
			n += 4 // tools are named verb_object: "List ..." is list_*
		}
		var sc map[string]any
		_ = json.Unmarshal([]byte(strings.TrimSpace(schema)), &sc)
		if pathRe.MatchString(task) && strings.Contains(fmt.Sprint(sc["required"]), "path") {
			n += 2 // the task names a path and the tool takes one
		}
		if n > best.score {
			best.name, best.score, best.schema = strings.TrimSpace(name), n, sc
		}
	}
	args := map[string]any{}
	props, _ := best.schema["properties"].(map[string]any)
	required, _ := best.schema["required"].([]any)
	for _, r := range required {
		key, _ := r.(string)
		prop, _ := props[key].(map[string]any)
		if t, _ := prop["type"].(string); t != "" && t != "string" {
			continue
		}
		if strings.Contains(strings.ToLower(key), "path") {
			p := "."
			if m := pathRe.FindStringSubmatch(task); m != nil {
				p = m[1]
			}
			if m := allowedRe.FindStringSubmatch(feedback); m != nil {
				p = strings.TrimRight(m[1], "/") + "/" + strings.TrimLeft(p, "/.")
				thought += "The error names the allowed folder; the path is under it. "
			}
			args[key] = p
			continue
		}
		args[key] = task
	}
	if len(required) == 0 {
		args["query"] = task
	}
	return Choice{Thought: thought + "The tool " + best.name + " fits the task best.", Tool: best.name, Arguments: args}
}

// callTarget is the tool's name and its path arguments from a call written
// as "tool {json}": what a listing or a file's content is about.
func callTarget(call string) string {
	name, args, _ := strings.Cut(call, " ")
	var m map[string]any
	_ = json.Unmarshal([]byte(args), &m)
	out := []string{strings.ReplaceAll(name, "_", " ")}
	for k, v := range m {
		if s, ok := v.(string); ok && strings.Contains(strings.ToLower(k), "path") {
			out = append(out, s)
		}
	}
	return strings.Join(out, " ")
}
