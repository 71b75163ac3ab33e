package bosai

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/agent"
)

// The marker lines that open the prompts of Bos-AI's model calls. Each
// prompt is cut into "## " sections after its marker, so an offline model
// (see NewOfflineModel) can read it and logs can be searched for it.
const (
	MarkerPlanner     = "# Task: bosai planner"
	MarkerSQL         = "# Task: bosai sql query"
	MarkerSQLCheck    = "# Task: bosai sql review"
	MarkerAPI         = "# Task: bosai api call"
	MarkerComputation = "# Task: bosai computation"
	MarkerCompose     = "# Task: bosai compose"
)

// spec describes a specialist agent to the planner.
type spec struct {
	name        AgentName
	description string
	keywords    []string
}

// arithmeticKeyword stands, in a keyword list, for an arithmetic
// expression such as "1200 - 350".
const arithmeticKeyword = "N op N"

// specialists are the agents the planner may choose, in their default
// order (the seed's: api before sql before computation when tied).
var specialists = []spec{
	{AgentAPI, "calls the Acme service HTTP API, planned from its API documentation (status, incidents, regions, tickets, endpoints)",
		[]string{"api", "endpoint", "endpoints", "api points", "http", "status", "service", "operational", "incident", "incidents", "outage", "region", "regions", "uptime", "ticket", "tickets"}},
	{AgentSQL, "writes SQL over the shop database (customers, products, orders, order items) and runs it read-only",
		[]string{"sql", "database", "db", "query", "table", "tables", "list", "rows", "records", "how many", "count", "customer", "customers",
			"order", "orders", "product", "products", "revenue", "sales", "spend", "category", "country", "top", "most", "per", "by month"}},
	{AgentComputation, "writes a Starlark program and runs it in a sandbox (arithmetic, averages, roots, percentages)",
		[]string{arithmeticKeyword, "compute", "calculate", "calculation", "subtract", "minus", "plus", "difference", "sum of", "average of", "mean of",
			"sqrt", "square root", "root", "percent", "%", "multiply", "multiplied", "divide", "divided", "times"}},
}

// validAgents lists the specialists' names, for errors.
func validAgents() string {
	names := make([]string, len(specialists))
	for i, s := range specialists {
		names[i] = string(s.name)
	}
	return strings.Join(names, ", ")
}

func specOf(name AgentName) (spec, bool) {
	for _, s := range specialists {
		if s.name == name {
			return s, true
		}
	}
	return spec{}, false
}

var arithmeticRe = regexp.MustCompile(`\d\s*[-+*/^]\s*\(?\s*\d`)

// keywordMatches returns the keywords the question uses: a word keyword
// as a word, a phrase or symbol anywhere, arithmeticKeyword for an
// arithmetic expression.
func keywordMatches(question string, keywords []string) []string {
	lowered := strings.ToLower(question)
	words := tokens(question)
	var out []string
	for _, k := range keywords {
		switch {
		case k == arithmeticKeyword:
			if arithmeticRe.MatchString(isoDay.ReplaceAllString(lowered, "")) {
				out = append(out, k)
			}
		case strings.ContainsAny(k, " %"):
			if strings.Contains(lowered, k) {
				out = append(out, k)
			}
		case slices.Contains(words, k):
			out = append(out, k)
		}
	}
	return out
}

// heuristic is the seed's heuristic candidate selection: keyword scores
// per agent; api_docs when its score is the highest (ties included), sql
// when it scores at least computation, computation when it scores at least
// sql; ["sql"] when nothing matches.
func heuristic(question string) []AgentName {
	score := map[AgentName]int{}
	for _, s := range specialists {
		score[s.name] = len(keywordMatches(question, s.keywords))
	}
	sqlS, comp, api := score[AgentSQL], score[AgentComputation], score[AgentAPI]
	var order []AgentName
	if api >= max(sqlS, comp) && api > 0 {
		order = append(order, AgentAPI)
	}
	if sqlS >= comp && sqlS > 0 {
		order = append(order, AgentSQL)
	}
	if comp >= sqlS && comp > 0 {
		order = append(order, AgentComputation)
	}
	if len(order) == 0 {
		order = []AgentName{AgentSQL}
	}
	return order
}

// applyPreferences drops disabled agents and moves preferred ones to the
// front, in the order preferred.
func applyPreferences(agents, prefer, disable []AgentName) []AgentName {
	var out []AgentName
	for _, p := range prefer {
		if slices.Contains(agents, p) && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	for _, a := range agents {
		if !slices.Contains(out, a) {
			out = append(out, a)
		}
	}
	return slices.DeleteFunc(out, func(a AgentName) bool { return slices.Contains(disable, a) })
}

// plannerReply is what the planner's model is asked for.
type plannerReply struct {
	Agents     []AgentName `json:"agents" validate:"required,min=1"`
	Rationale  string      `json:"rationale" validate:"required"`
	Confidence float64     `json:"confidence" validate:"gte=0,lte=1"`
}

// Validate rejects agents that were not offered (the prompt lists them).
func (r plannerReply) Validate() error {
	var errs []error
	for _, a := range r.Agents {
		if _, ok := specOf(a); !ok {
			errs = append(errs, fmt.Errorf("agents: %q is not an agent; choose from %s", a, validAgents()))
		}
	}
	return errors.Join(errs...)
}

// plannerPrompt renders the planner's prompt. Only the agents not
// disabled are listed, preferred ones first.
func plannerPrompt(req Request, candidates []AgentName) string {
	var b strings.Builder
	b.WriteString(MarkerPlanner + "\n\nChoose the specialist agents that together answer the question. Every agent runs at once; the composer combines their results.\n\n")
	b.WriteString("## Question\n" + req.Question + "\n\n## Agents\n")
	order := applyPreferences([]AgentName{AgentAPI, AgentSQL, AgentComputation}, req.Prefer, req.Disable)
	for _, name := range order {
		s, _ := specOf(name)
		fmt.Fprintf(&b, "- %s: %s (keywords: %s)\n", s.name, s.description, strings.Join(s.keywords, ", "))
	}
	b.WriteString("\n## Candidates\n")
	for _, c := range candidates {
		b.WriteString("- " + string(c) + "\n")
	}
	writeContext(&b, req.Context)
	return b.String()
}

// settingsKeys are the request context's keys that configure the API
// agent's calls rather than inform the question: the bearer token and
// headers are secrets, and the base URL is the program's to check, not the
// model's to read.
var settingsKeys = []string{CtxAPIBaseURL, CtxAPIBearerToken, CtxAPIHeaders}

// writeContext writes the request context into a prompt, every key but
// settingsKeys: every prompt's context goes through it.
func writeContext(b *strings.Builder, ctx map[string]string) {
	keys := make([]string, 0, len(ctx))
	for k := range ctx {
		if !slices.Contains(settingsKeys, k) {
			keys = append(keys, k)
		}
	}
	if len(keys) == 0 {
		return
	}
	b.WriteString("\n## Context\n")
	slices.Sort(keys)
	for _, k := range keys {
		fmt.Fprintf(b, "- %s: %s\n", k, ctx[k])
	}
}

// plan decides which agents run: heuristic candidates, preferences, then
// the model's refinement; if the model gives no usable answer, the
// candidates with confidence 0.4 (the seed's planner fallback). It returns
// the decision and its trace.
func (b *Bot) plan(ctx context.Context, req Request) (Decision, []TraceEvent, error) {
	candidates := applyPreferences(heuristic(req.Question), req.Prefer, req.Disable)
	var trace []TraceEvent
	if len(applyPreferences([]AgentName{AgentAPI, AgentSQL, AgentComputation}, nil, req.Disable)) == 0 {
		d := Decision{Rationale: "every agent is disabled", Confidence: 1}
		return d, []TraceEvent{newTrace(TraceDecision, AgentPlanner, "planner chose no agent", map[string]any{"agents": []string{}, "confidence": 1.0, "rationale": d.Rationale})}, nil
	}
	res, err := agent.Call[plannerReply](ctx, b.model, plannerPrompt(req, candidates))
	if ctx.Err() != nil {
		return Decision{}, nil, ctx.Err()
	}
	var d Decision
	if err == nil {
		chosen := applyPreferences(res.Value.Agents, req.Prefer, req.Disable)
		if len(chosen) > 0 {
			d = Decision{Agents: chosen, Rationale: res.Value.Rationale, Confidence: res.Value.Confidence}
		} else {
			err = errors.New("the model chose only disabled agents")
		}
	}
	if err != nil {
		trace = append(trace, newTrace(TraceError, AgentPlanner, "planner model failed; using the keyword heuristic", map[string]any{"error": err.Error()}))
		d = Decision{Agents: candidates, Rationale: "keyword heuristic (the model gave no usable plan)", Confidence: 0.4, Fallback: true}
	}
	names := make([]string, len(d.Agents))
	for i, a := range d.Agents {
		names[i] = string(a)
	}
	data := map[string]any{"agents": names, "confidence": d.Confidence, "rationale": d.Rationale}
	if req.MaxTurns > 0 && len(d.Agents) > req.MaxTurns {
		d.Skipped = d.Agents[req.MaxTurns:]
		d.Agents = d.Agents[:req.MaxTurns:req.MaxTurns]
		data["skipped"] = d.Skipped
	}
	trace = append(trace, newTrace(TraceDecision, AgentPlanner, "planner chose "+strings.Join(names, ", "), data))
	return d, trace, nil
}

func newTrace(kind TraceKind, a AgentName, msg string, data map[string]any) TraceEvent {
	return TraceEvent{Kind: kind, Agent: a, Message: msg, Data: data, Time: time.Now().UTC()}
}

// tokens splits s into lower-case words of letters and digits.
func tokens(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '%')
	})
}
