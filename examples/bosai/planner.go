package bosai

import (
	"context"
	"errors"
	"fmt"
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
	MarkerKnowledge   = "# Task: bosai knowledge query"
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

// specialists are the agents the planner may choose, in their default
// order (the seed's: api before data before computation when tied).
var specialists = []spec{
	{AgentAPI, "calls Acme's HTTP service API (status, incidents, regions)",
		[]string{"api", "endpoint", "status", "incident", "incidents", "outage", "region", "regions", "uptime", "operational"}},
	{AgentKnowledge, "searches the Acme Analytics knowledge base through MCP and returns a table of passages",
		[]string{"plan", "plans", "pricing", "price", "cost", "costs", "product", "products", "feature", "features", "retention",
			"security", "sla", "support", "policy", "integration", "integrations", "onboarding", "competitor", "competitors", "acme", "editor"}},
	{AgentComputation, "writes a Starlark program and runs it in a sandbox",
		[]string{"compute", "calculate", "calculation", "sum", "total", "average", "percent", "%", "multiply", "divide", "times", "*", "+", "/"}},
}

func specOf(name AgentName) (spec, bool) {
	for _, s := range specialists {
		if s.name == name {
			return s, true
		}
	}
	return spec{}, false
}

// heuristic scores the question against each agent's keywords and returns
// every agent with a match, highest score first (ties in the default
// order), or the knowledge agent when nothing matches: the seed's
// heuristic candidates.
func heuristic(question string) []AgentName {
	words := tokens(question)
	type scored struct {
		name  AgentName
		score int
	}
	var out []scored
	for _, s := range specialists {
		n := 0
		for _, k := range s.keywords {
			if slices.Contains(words, k) || (len(k) == 1 && strings.Contains(question, k)) {
				n++
			}
		}
		if n > 0 {
			out = append(out, scored{s.name, n})
		}
	}
	slices.SortStableFunc(out, func(a, b scored) int { return b.score - a.score })
	names := make([]AgentName, 0, len(out))
	for _, s := range out {
		names = append(names, s.name)
	}
	if len(names) == 0 {
		names = []AgentName{AgentKnowledge}
	}
	return names
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
			errs = append(errs, fmt.Errorf("agents: %q is not an agent; choose from knowledge, api, computation", a))
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
	order := applyPreferences([]AgentName{AgentAPI, AgentKnowledge, AgentComputation}, req.Prefer, req.Disable)
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

func writeContext(b *strings.Builder, ctx map[string]string) {
	if len(ctx) == 0 {
		return
	}
	b.WriteString("\n## Context\n")
	keys := make([]string, 0, len(ctx))
	for k := range ctx {
		keys = append(keys, k)
	}
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
	if len(applyPreferences([]AgentName{AgentAPI, AgentKnowledge, AgentComputation}, nil, req.Disable)) == 0 {
		d := Decision{Rationale: "every agent is disabled", Confidence: 1}
		return d, []TraceEvent{newTrace(TraceDecision, AgentPlanner, "planner chose no agent", map[string]any{"agents": []string{}, "confidence": 1.0, "rationale": d.Rationale})}, nil
	}
	res, err := agent.Call[plannerReply](ctx, b.client, plannerPrompt(req, candidates))
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
	trace = append(trace, newTrace(TraceDecision, AgentPlanner, "planner chose "+strings.Join(names, ", "),
		map[string]any{"agents": names, "confidence": d.Confidence, "rationale": d.Rationale}))
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
