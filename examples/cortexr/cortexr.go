package cortexr

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/websearch"
	"github.com/agentgraph/agentgraph/examples/cortexr/rag"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/mcp/mcptool"
)

// Defaults of Config.
const (
	DefaultMaxSteps  = 3
	DefaultLifelines = 3
)

// Prefixes a plan's result starts with: FinalAnswer ends the run,
// FurtherRequired starts the next step with the result in its input.
const (
	FinalAnswer     = "FINAL_ANSWER:"
	FurtherRequired = "FURTHER_PROCESSING_REQUIRED:"
)

// WebSearchServer is the name of the chatbot's offline web search server in
// the default Config.Servers.
const WebSearchServer = "websearch"

const (
	webSearchSummary = "Web search over a bundled offline corpus of web pages (competitors' pricing, industry articles, general reference): web_search(query), fetch_page(url)."
)

// ErrEmptyQuery is the error of Run with an empty query.
var ErrEmptyQuery = errors.New("cortexr: empty query: give Run the question to answer")

// Server is an MCP server the agent may use, with the description perception
// chooses servers by.
type Server struct {
	mcp.Server
	// Description says what the server's tools do, in a line.
	Description string
}

// Config configures an Agent. The zero value runs offline with the math and
// web search servers in process and memory kept in this process only.
type Config struct {
	// Model is the language model of perception and decision: a provider
	// model (package agent/provider; provider.FromEnv reads the
	// environment), an *agent.Client, or any model.Model. Nil means the
	// offline model (NewOfflineModel).
	Model model.Model
	// ModelName names the model of perception and decision calls
	// (model.Request.Model; for an *agent.Client a registry name or
	// alias). Empty means the model's default.
	ModelName string
	// Servers are the MCP servers. Empty means the math server
	// (NewMathServer), the chatbot's offline web search server and the
	// document server (rag.NewServer over Documents), all in process.
	Servers []Server
	// Documents configures the default document server. Nil means
	// DemoDocuments(), the bundled offline set.
	Documents *rag.Config
	// ImageDir is the directory the math server's create_thumbnail reads
	// images from: image_path is relative to it, or absolute under it, and
	// cannot leave it through ".." or symbolic links. Empty means
	// create_thumbnail reads no file. It is read where the default math
	// server is built: by New when Servers is empty, and by Profile.Apply
	// for a profile's built-in math server, so set it before calling
	// Apply. With Servers set by the caller it has no effect.
	ImageDir string
	// MemoryDir is where session memory files are written, one JSON file
	// per session under YYYY/MM/DD. Empty means memory is not persisted and
	// no earlier session's memory is read.
	MemoryDir string
	// SessionID names the session; runs of one Agent share it. Empty means
	// NewSessionID(time.Now()). Reusing an id continues that session's
	// memory.
	SessionID string
	// MaxSteps bounds the perception → decision → action steps of one run;
	// a run that still needs more processing after it ends with
	// OutcomeStepLimit. Zero means DefaultMaxSteps.
	MaxSteps int
	// Lifelines is how many failed attempts each step may retry. Zero means
	// DefaultLifelines; negative means none.
	Lifelines int
	// Limits bound each plan in the sandbox.
	Limits Limits
	// MemoryFallback is the seed's memory_fallback_enabled: after a failed
	// attempt, the decision is offered the tools that succeeded recently in
	// this session (Memory.RecentSuccesses) instead of perception's. Off by
	// default.
	MemoryFallback bool
	// MemoryFallbackAcrossSessions extends the fallback to the tools that
	// succeeded in earlier sessions in MemoryDir.
	MemoryFallbackAcrossSessions bool
	// Persona is the seed's persona: the tone and style answers are
	// written in.
	Persona Persona
	// Strategy is how plans are made (the seed's planning_mode and
	// exploration_mode). Empty means StrategySequential.
	Strategy Strategy
	// Checkpointer saves every run's steps on the thread
	// "<session id>#<run number>". Nil means an in-memory saver.
	Checkpointer checkpoint.Saver
	// Logger receives debug lines. Nil means no logging.
	Logger *zap.Logger
	// Hooks observe the agent's graph runs, for example
	// telemetry.Telemetry.Hooks() to trace them with OpenTelemetry. The
	// zero value observes nothing.
	Hooks graph.Hooks
	// Clock returns the time for performance metrics. Nil means time.Now.
	Clock func() time.Time
}

// Agent is a Cortex-R agent: a perception → decision → action loop over MCP
// tools with session memory. It is safe for concurrent use.
type Agent struct {
	cfg     Config
	log     *zap.Logger
	model   model.Model
	servers []Server
	manager *mcp.Manager
	reg     *mcp.Registry
	mem     *Memory
	graph   *graph.Compiled[State]
	runs    atomic.Int64
}

// New builds an agent: it connects the MCP servers (lazily, on first use),
// opens the session's memory and compiles the loop's graph.
func New(cfg Config) (*Agent, error) {
	if cfg.MaxSteps < 0 {
		return nil, fmt.Errorf("cortexr: Config.MaxSteps is %d; use a positive number or 0 for %d", cfg.MaxSteps, DefaultMaxSteps)
	}
	if cfg.MaxSteps == 0 {
		cfg.MaxSteps = DefaultMaxSteps
	}
	if cfg.Limits.Timeout < 0 || cfg.Limits.MaxToolCalls < 0 {
		return nil, fmt.Errorf("cortexr: Config.Limits has a negative Timeout (%v) or MaxToolCalls (%d); use 0 for the defaults", cfg.Limits.Timeout, cfg.Limits.MaxToolCalls)
	}
	if cfg.Strategy == "" {
		cfg.Strategy = StrategySequential
	}
	if _, err := ParseStrategy(string(cfg.Strategy), ""); err != nil {
		return nil, fmt.Errorf("cortexr: Config.Strategy: %w", err)
	}
	switch {
	case cfg.Lifelines == 0:
		cfg.Lifelines = DefaultLifelines
	case cfg.Lifelines < 0:
		cfg.Lifelines = 0
	}
	a := &Agent{cfg: cfg, log: cfg.Logger, model: cfg.Model, servers: cfg.Servers}
	if a.log == nil {
		a.log = zap.NewNop()
	}
	if a.model == nil {
		a.model = NewOfflineModel()
	}
	if len(a.servers) == 0 {
		var err error
		if a.servers, err = DefaultServers(cfg); err != nil {
			return nil, err
		}
	}
	if cfg.SessionID == "" {
		cfg.SessionID = NewSessionID(time.Now())
	}
	mem, err := openMemory(cfg.MemoryDir, cfg.SessionID, a.log)
	if err != nil {
		return nil, err
	}
	a.mem = mem
	a.manager, err = mcp.NewManager(mcp.ManagerConfig{Logger: cfg.Logger})
	if err != nil {
		return nil, err
	}
	for _, s := range a.servers {
		if err := a.manager.Add(s.Server); err != nil {
			a.manager.Shutdown(context.Background())
			return nil, err
		}
	}
	a.reg, err = mcp.NewRegistry(mcp.RegistryConfig{Manager: a.manager})
	if err != nil {
		a.manager.Shutdown(context.Background())
		return nil, err
	}
	saver := cfg.Checkpointer
	if saver == nil {
		saver = checkpoint.NewMemory()
	}
	a.cfg = cfg
	// Every attempt is three super-steps; one more for slack.
	limit := 3*cfg.MaxSteps*(cfg.Lifelines+1) + 1
	a.graph, err = a.build().Compile(graph.WithCheckpointer(saver), graph.WithStepLimit(limit), graph.WithLogger(a.log), graph.WithHooks(cfg.Hooks))
	if err != nil {
		a.manager.Shutdown(context.Background())
		return nil, err
	}
	return a, nil
}

func (a *Agent) now() time.Time {
	if a.cfg.Clock != nil {
		return a.cfg.Clock()
	}
	return time.Now()
}

// Close shuts the MCP servers down, waiting for calls in flight until ctx
// ends.
func (a *Agent) Close(ctx context.Context) error { return a.manager.Shutdown(ctx) }

// Graph returns the compiled loop, for its Mermaid diagram and its
// checkpointed state by thread (Thread(id).State, History).
func (a *Agent) Graph() *graph.Compiled[State] { return a.graph }

// Memory returns the session's memory.
func (a *Agent) Memory() *Memory { return a.mem }

// Run answers query. It yields the loop's events as they happen, then an
// EventAnswer event with the Answer, which is the last event of a run that
// did not fail. A failure (the model unreachable, ctx cancelled) is yielded
// as an error and ends the sequence. Breaking out of the loop stops the run.
func (a *Agent) Run(ctx context.Context, query string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		query = strings.TrimSpace(query)
		if query == "" {
			yield(Event{}, ErrEmptyQuery)
			return
		}
		n := a.runs.Add(1)
		thread := fmt.Sprintf("%s#%d", a.mem.ID(), n)
		if err := a.mem.Add(MemoryItem{Type: ItemRunStart, Text: "Started run with input: " + query, Tags: []string{"run_start"}}); err != nil {
			yield(Event{}, err)
			return
		}
		in := State{Query: query, Input: query, Step: 1, Attempt: 1}
		var last State
		var metrics Metrics
		for ev, err := range a.graph.Thread(thread).Stream(ctx, in, graph.WithModes(graph.StreamValues, graph.StreamCustom)) {
			if err != nil {
				yield(Event{}, err)
				return
			}
			switch ev.Mode {
			case graph.StreamCustom:
				e, ok := ev.Payload.(Event)
				if !ok {
					continue
				}
				metrics.add(e)
				if !yield(e, nil) {
					return
				}
			case graph.StreamValues:
				last = ev.State
			}
		}
		ans := &Answer{Text: last.Answer, Outcome: last.Outcome, Steps: last.Step, SessionID: a.mem.ID(), Thread: thread, Metrics: metrics}
		if last.Outcome == OutcomeAnswered {
			if err := a.mem.Add(MemoryItem{Type: ItemFinalAnswer, Text: "Final answer: " + last.Answer, FinalAnswer: last.Answer}); err != nil {
				yield(Event{}, err)
				return
			}
		}
		yield(Event{Kind: EventAnswer, Step: last.Step, Attempt: last.Attempt, Answer: ans}, nil)
	}
}

// Answer is how a run ended.
type Answer struct {
	// Text is the final answer without its FINAL_ANSWER: prefix; with
	// OutcomeStepLimit, the last intermediate result; with OutcomeFailed,
	// the last error.
	Text string
	// Outcome says which.
	Outcome Outcome
	// Steps is how many loop steps ran.
	Steps int
	// SessionID is the session's id, Thread the run's checkpoint thread.
	SessionID, Thread string
	// Metrics are the run's performance metrics.
	Metrics Metrics
}

// Outcome is how a run ended.
type Outcome string

// Outcomes.
const (
	// OutcomeAnswered: a plan returned FINAL_ANSWER.
	OutcomeAnswered Outcome = "answered"
	// OutcomeStepLimit: the steps ran out while the plan still asked for
	// further processing.
	OutcomeStepLimit Outcome = "step limit"
	// OutcomeFailed: a step failed on every lifeline.
	OutcomeFailed Outcome = "failed"
)

// EventKind says what an Event reports.
type EventKind string

// Event kinds, in the order a step yields them.
const (
	EventPerception EventKind = "perception"
	EventPlan       EventKind = "plan"
	EventToolCall   EventKind = "tool_call"
	EventAction     EventKind = "action"
	EventAnswer     EventKind = "answer"
)

// Event is one thing the loop did. Step and Attempt (1-based) say where in
// the loop; the other fields are set by Kind.
type Event struct {
	Kind          EventKind
	Step, Attempt int
	// Perception (EventPerception) is what perception made of the input.
	Perception *Perception
	// Plan (EventPlan) is the Starlark plan; Tools the tools it was given.
	Plan  string
	Tools []string
	// Tool (EventToolCall) is one tool call the plan made.
	Tool *ToolRecord
	// Result (EventAction) is the plan's result; Error the reason the
	// attempt failed.
	Result, Error string
	// Answer (EventAnswer) is how the run ended.
	Answer *Answer
	// Duration is how long the event's work took: the perception and
	// decision model calls (EventPerception, EventPlan) and the plan's run
	// with its tool calls (EventAction).
	Duration time.Duration
}

// ToolRecord is one tool call of a plan.
type ToolRecord struct {
	Name   string
	Args   map[string]any
	Result any
	Error  string
	// Duration is the call's latency.
	Duration time.Duration
}

// Perception is what the perception step makes of the input: the seed's
// PerceptionResult.
type Perception struct {
	Intent          string   `json:"intent" jsonschema:"description=the user's goal in a few words"`
	Entities        []string `json:"entities" jsonschema:"description=important names, numbers and concepts of the query"`
	ToolHint        string   `json:"tool_hint,omitempty" jsonschema:"description=a tool likely to help, if you can guess one"`
	SelectedServers []string `json:"selected_servers" jsonschema:"description=ids of the relevant MCP servers from the catalog; all of them if unsure"`
	// Fallback is set when the model's perception was unusable and every
	// server was selected.
	Fallback bool `json:"-"`
}

// State is the loop's graph state. Every field is written whole (Replace).
type State struct {
	// Query is the user's query; Input what perception and decision read:
	// the query, or from step 2 on the query with the last result.
	Query, Input string
	// Step is the loop step and Attempt the attempt within it, from 1.
	Step, Attempt int
	// Perception is the current attempt's perception.
	Perception Perception
	// Plan is the current attempt's plan and Tools the tools it may call.
	Plan  string
	Tools []string
	// Result is the last plan's result; Error why the last attempt failed.
	Result, Error string
	// Outcome is set when the run ends, with Answer.
	Outcome Outcome
	Answer  string
}

var (
	fInput      = graph.Replace(func(s *State) *string { return &s.Input })
	fStep       = graph.Replace(func(s *State) *int { return &s.Step })
	fAttempt    = graph.Replace(func(s *State) *int { return &s.Attempt })
	fPerception = graph.Replace(func(s *State) *Perception { return &s.Perception })
	fPlan       = graph.Replace(func(s *State) *string { return &s.Plan })
	fTools      = graph.Replace(func(s *State) *[]string { return &s.Tools })
	fResult     = graph.Replace(func(s *State) *string { return &s.Result })
	fError      = graph.Replace(func(s *State) *string { return &s.Error })
	fOutcome    = graph.Replace(func(s *State) *Outcome { return &s.Outcome })
	fAnswer     = graph.Replace(func(s *State) *string { return &s.Answer })
)

func (a *Agent) build() *graph.Graph[State] {
	g := graph.New[State]()
	g.AddNode("perceive", a.perceive)
	g.AddNode("decide", a.decide)
	g.AddNode("act", a.act)
	g.AddEdge(graph.START, "perceive")
	g.AddEdge("perceive", "decide")
	g.AddEdge("decide", "act")
	g.AddConditionalEdges("act", func(_ context.Context, s State) (graph.Route, error) {
		if s.Outcome != "" {
			return graph.To(graph.END), nil
		}
		return graph.To("perceive"), nil
	}, "perceive", graph.END)
	g.Label("act", "perceive", "further processing or lifeline")
	g.Label("act", graph.END, "final answer, step limit or no lifeline")
	return g
}

func (a *Agent) opts() []agent.Option {
	if a.cfg.ModelName == "" {
		return nil
	}
	return []agent.Option{agent.WithModel(a.cfg.ModelName)}
}

// perceive asks the model which servers fit the input, falling back to all
// of them when its answer is unusable.
func (a *Agent) perceive(ctx context.Context, s State) (graph.Update[State], error) {
	var b strings.Builder
	b.WriteString("You are a perception engine helping an AI agent decide which MCP servers are most relevant to a user's query.\n\nMCP server catalog:\n")
	names := make([]string, len(a.servers))
	for i, sv := range a.servers {
		names[i] = sv.Name
		fmt.Fprintf(&b, "- %s: %s\n", sv.Name, sv.Description)
	}
	fmt.Fprintf(&b, "\nUser query:\n<<<\n%s\n>>>\n\n", s.Input)
	b.WriteString("Your tasks:\n- Identify the INTENT of the query\n- Extract important ENTITIES (names, numbers, concepts)\n- Suggest a TOOL_HINT if you can guess a useful tool (optional)\n- Pick the most relevant MCP server ids from the catalog above (all of them if unsure)\n")
	start := a.now()
	res, err := agent.Call[Perception](ctx, a.model, b.String(), a.opts()...)
	took := a.now().Sub(start)
	if ctx.Err() != nil {
		return graph.Update[State]{}, ctx.Err()
	}
	p := res.Value
	if err == nil {
		p.SelectedServers = slices.DeleteFunc(slices.Clone(p.SelectedServers), func(n string) bool { return !slices.Contains(names, n) })
	}
	if err != nil || len(p.SelectedServers) == 0 {
		a.log.Debug("cortexr: perception unusable; selecting every server", zap.Error(err))
		p = Perception{Intent: p.Intent, Entities: p.Entities, SelectedServers: names, Fallback: true}
	}
	if err := graph.Emit(ctx, Event{Kind: EventPerception, Step: s.Step, Attempt: s.Attempt, Perception: &p, Duration: took}); err != nil {
		return graph.Update[State]{}, err
	}
	return graph.Updates(fPerception.Set(p)), nil
}

// decide asks the model for a Starlark plan over the perceived servers'
// tools; after a failed attempt, over the tools memory says worked before.
func (a *Agent) decide(ctx context.Context, s State) (graph.Update[State], error) {
	all, err := a.reg.Tools(ctx)
	if err != nil {
		return graph.Update[State]{}, err
	}
	var tools []model.ToolSummary
	source := "perception"
	if s.Attempt > 1 && a.cfg.MemoryFallback {
		ok := a.mem.RecentSuccesses(0)
		if a.cfg.MemoryFallbackAcrossSessions {
			// An unreadable earlier session is skipped, not fatal.
			if ok, err = a.mem.RecentSuccessesAcrossSessions(0); err != nil {
				a.log.Warn("cortexr: earlier session memory skipped", zap.Error(err))
			}
		}
		if len(ok) > 0 {
			for _, t := range all {
				if slices.Contains(ok, t.Name) {
					tools = append(tools, t)
				}
			}
			source = "memory"
		}
	}
	if len(tools) == 0 {
		source = "perception"
		for _, t := range all {
			if slices.Contains(s.Perception.SelectedServers, t.Server) {
				tools = append(tools, t)
			}
		}
	}
	if len(tools) == 0 {
		tools, source = all, "all"
	}
	var b strings.Builder
	b.WriteString("You are a reasoning-driven AI agent that solves the user's query with a short Starlark plan using ONLY the tools below.\n\nTool catalog:\n")
	var names []string
	for _, t := range tools {
		if !isIdent(t.Name) {
			continue
		}
		names = append(names, t.Name)
		params := ""
		if full, err := a.reg.Tool(ctx, t.Name); err == nil {
			params = strings.Join(paramNames(full.InputSchema), ", ")
		}
		fmt.Fprintf(&b, "- %s(%s): %s\n", t.Name, params, t.Description)
	}
	if source == "memory" {
		b.WriteString("(A previous attempt failed: these are the tools that worked before, from memory.)\n")
	}
	b.WriteString("\nMemory of this session:\n")
	items := a.mem.Items()
	if len(items) == 0 {
		b.WriteString("- None\n")
	}
	for _, it := range items[max(0, len(items)-10):] {
		fmt.Fprintf(&b, "- %s\n", truncate(it.Text, 300))
	}
	if len(items) > 10 {
		if hits := a.mem.Search(s.Query, 3); len(hits) > 0 {
			b.WriteString("\nEarlier memory relevant to the query:\n")
			for _, h := range hits {
				fmt.Fprintf(&b, "- %s\n", truncate(h.Item.Text, 300))
			}
		}
	}
	if s.Perception.ToolHint != "" && slices.Contains(names, s.Perception.ToolHint) {
		fmt.Fprintf(&b, "\nHint: the tool %s is likely to help.\n", s.Perception.ToolHint)
	}
	if p := a.cfg.Persona.line(); p != "" {
		fmt.Fprintf(&b, "\nPersona: %s\n", p)
	}
	if s.Error != "" {
		fmt.Fprintf(&b, "\nThe previous attempt failed: %s\n", truncate(s.Error, 500))
	}
	fmt.Fprintf(&b, "\nUser query:\n<<<\n%s\n>>>\n\nStep %d of %d, attempt %d.\n\n", s.Input, s.Step, a.cfg.MaxSteps, s.Attempt)
	b.WriteString(`Write a Starlark function named solve() that solves the query.
Rules:
- Define exactly one function: def solve():
- Call tools as functions with keyword arguments, e.g. numbers = strings_to_chars_to_int(string="INDIA"); a call returns the tool's result value.
- Starlark is a small Python dialect: no imports, no classes, no recursion, no try/except, no files or network. The json, math and re modules (re over Go's RE2 syntax) and sum() are available without import.
- Return "FINAL_ANSWER: <answer>" when the result answers the query, or "FURTHER_PROCESSING_REQUIRED: <result>" when you need to read the result before answering.
- Reply with the code only.
`)
	b.WriteString(a.cfg.Strategy.rules())
	start := a.now()
	resp, err := agent.Complete(ctx, a.model, b.String(), a.opts()...)
	took := a.now().Sub(start)
	if err != nil {
		if ctx.Err() != nil {
			return graph.Update[State]{}, ctx.Err()
		}
		// The seed's decision never fails the loop: an unusable plan costs a
		// lifeline.
		a.log.Debug("cortexr: decision failed", zap.Error(err))
		return graph.Updates(fPlan.Set(""), fTools.Set(names), fError.Set("decision: "+err.Error())), nil
	}
	plan := extractPlan(resp.Text)
	if err := graph.Emit(ctx, Event{Kind: EventPlan, Step: s.Step, Attempt: s.Attempt, Plan: plan, Tools: names, Duration: took}); err != nil {
		return graph.Update[State]{}, err
	}
	return graph.Updates(fPlan.Set(plan), fTools.Set(names)), nil
}

// errAbandonedCall is what a tool call returns when the plan it belongs to
// has ended or its context is done; nothing of it is recorded.
var errAbandonedCall = errors.New("cortexr: the plan ended before this tool call returned; its result is dropped")

// act runs the plan and decides what comes next.
func (a *Agent) act(ctx context.Context, s State) (graph.Update[State], error) {
	actStart := a.now()
	// One MCP session for the plan's calls. A failure to record a call
	// (memory, the stream) fails the run instead of costing a lifeline.
	sess := a.reg.NewSession(mcp.Callbacks{})
	defer sess.Close()
	// Calls may run concurrently (parallel()); mu guards fatal, calls,
	// done and the order of their records.
	var (
		mu    sync.Mutex
		fatal error
		calls int
		// done is set once runPlan has returned: a call the sandbox
		// abandoned (past its timeout) that returns later records nothing,
		// so a failed plan leaves no late tool output in memory.
		done  bool
		tools = map[string]*mcptool.Tool{} // the plan's tools, as it called them
	)
	lim := a.cfg.Strategy.limits(a.cfg.Limits).withDefaults()
	call := func(ctx context.Context, name string, args map[string]any) (any, error) {
		mu.Lock()
		defer mu.Unlock()
		if done || ctx.Err() != nil {
			return nil, errAbandonedCall
		}
		if calls++; calls > lim.MaxToolCalls {
			return nil, &PlanError{Kind: "tool call limit", Msg: fmt.Sprintf("the plan made more than %d tool calls", lim.MaxToolCalls)}
		}
		rec := &ToolRecord{Name: name, Args: args}
		if err := a.mem.Add(MemoryItem{Type: ItemToolCall, Text: fmt.Sprintf("Called %s with %v", name, args), ToolName: name, ToolArgs: args}); err != nil {
			fatal = err
			return nil, err
		}
		tool, err := tools[name], error(nil)
		if tool == nil {
			if tool, err = mcptool.New(ctx, a.reg, sess, name); err == nil {
				tools[name] = tool
			}
		}
		mu.Unlock()
		start := a.now()
		var v any
		if err == nil {
			v, err = callTool(ctx, tool, args)
		}
		rec.Duration = a.now().Sub(start)
		mu.Lock()
		if done || ctx.Err() != nil {
			return nil, errAbandonedCall
		}
		ok := err == nil
		out := MemoryItem{Type: ItemToolOutput, ToolName: name, ToolArgs: args, Success: &ok}
		if ok {
			rec.Result, out.ToolResult = v, v
			out.Text = fmt.Sprintf("Output of %s: %v", name, v)
		} else {
			rec.Error = err.Error()
			out.Text = fmt.Sprintf("%s failed: %v", name, err)
		}
		if merr := a.mem.Add(out); merr != nil {
			fatal = merr
			return nil, merr
		}
		if eerr := graph.Emit(ctx, Event{Kind: EventToolCall, Step: s.Step, Attempt: s.Attempt, Tool: rec}); eerr != nil {
			fatal = eerr
			return nil, eerr
		}
		return v, err
	}
	var result string
	var err error
	switch {
	case s.Plan == "" && s.Error != "":
		err = errors.New(s.Error)
	case strings.HasPrefix(strings.TrimSpace(s.Plan), FinalAnswer):
		result = strings.TrimSpace(s.Plan)
	default:
		var code string
		if code, err = normalizePlan(s.Plan); err != nil {
			break
		}
		if err = a.cfg.Strategy.checkPlan(code, s.Tools); err != nil {
			break
		}
		result, err = runPlan(ctx, code, s.Tools, call, lim, a.cfg.Strategy.builtins(s.Tools, call))
		mu.Lock()
		done = true
		mu.Unlock()
		if err == nil && !strings.HasPrefix(result, FinalAnswer) && !strings.HasPrefix(result, FurtherRequired) {
			err = &PlanError{Kind: "invalid result", Msg: fmt.Sprintf("solve() returned %q; it must start with %s or %s", truncate(result, 200), FinalAnswer, FurtherRequired)}
		}
	}
	if ctx.Err() != nil {
		return graph.Update[State]{}, ctx.Err()
	}
	mu.Lock()
	f := fatal
	mu.Unlock()
	if f != nil {
		return graph.Update[State]{}, f
	}
	ok := err == nil
	item := MemoryItem{Type: ItemPlanOutput, ToolName: "solve_sandbox", ToolArgs: map[string]any{"plan": s.Plan}, Success: &ok, Tags: []string{"sandbox"}}
	ev := Event{Kind: EventAction, Step: s.Step, Attempt: s.Attempt, Result: result, Duration: a.now().Sub(actStart)}
	if ok {
		item.Text, item.ToolResult = "Output of solve_sandbox: "+truncate(result, 500), map[string]any{"result": result}
	} else {
		item.Text, ev.Error = "solve_sandbox failed: "+err.Error(), err.Error()
	}
	if merr := a.mem.Add(item); merr != nil {
		return graph.Update[State]{}, merr
	}
	if err := graph.Emit(ctx, ev); err != nil {
		return graph.Update[State]{}, err
	}

	switch {
	case err != nil && s.Attempt <= a.cfg.Lifelines:
		return graph.Updates(fAttempt.Set(s.Attempt+1), fError.Set(err.Error()), fResult.Set("")), nil
	case err != nil:
		return graph.Updates(fError.Set(err.Error()), fOutcome.Set(OutcomeFailed), fAnswer.Set(err.Error())), nil
	case strings.HasPrefix(result, FinalAnswer):
		return graph.Updates(fResult.Set(result), fError.Set(""), fOutcome.Set(OutcomeAnswered),
			fAnswer.Set(strings.TrimSpace(strings.TrimPrefix(result, FinalAnswer)))), nil
	}
	further := strings.TrimSpace(strings.TrimPrefix(result, FurtherRequired))
	if s.Step >= a.cfg.MaxSteps {
		return graph.Updates(fResult.Set(result), fError.Set(""), fOutcome.Set(OutcomeStepLimit), fAnswer.Set(further)), nil
	}
	next := fmt.Sprintf("Original user task: %s\n\nSteps completed: %d\n\nYour last tool produced this result:\n\n%s\n\nIf this fully answers the task, return:\nFINAL_ANSWER: your answer\n\nOtherwise, return the next FUNCTION_CALL.", s.Query, s.Step, further)
	return graph.Updates(fResult.Set(result), fError.Set(""), fStep.Set(s.Step+1), fAttempt.Set(1), fInput.Set(next)), nil
}

// callTool calls an MCP tool with args as its JSON arguments and returns
// its value: its structured content's "result", else the structured
// content, else its text.
func callTool(ctx context.Context, tool *mcptool.Tool, args map[string]any) (any, error) {
	raw, err := json.Marshal(args)
	if err != nil {
		return nil, fmt.Errorf("arguments of %s: %w", tool.Definition().Name, err)
	}
	res, err := tool.CallResult(ctx, raw)
	if err != nil {
		return nil, err
	}
	if res.IsError {
		return nil, fmt.Errorf("%s", res.Error)
	}
	if m, ok := res.Structured.(map[string]any); ok {
		if v, ok := m["result"]; ok {
			return v, nil
		}
	}
	if res.Structured != nil {
		return res.Structured, nil
	}
	return res.Text(), nil
}

var identRE = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

func isIdent(s string) bool { return identRE.MatchString(s) }

var fenceRE = regexp.MustCompile("(?s)^```[a-zA-Z]*\\s*\n(.*?)\n?```\\s*$")

// stripFences removes a Markdown code fence around a plan.
func stripFences(s string) string {
	s = strings.TrimSpace(s)
	if m := fenceRE.FindStringSubmatch(s); m != nil {
		return m[1]
	}
	return s
}

// truncate cuts s to at most n bytes at a UTF-8 boundary, marking the cut.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return clipUTF8(s, n) + "…"
}

// clipUTF8 returns the longest prefix of s of at most n bytes that does
// not split a UTF-8 sequence.
func clipUTF8(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// paramNames lists a JSON Schema's properties, required ones first.
func paramNames(schema []byte) []string {
	var s struct {
		Properties map[string]json.RawMessage `json:"properties"`
		Required   []string                   `json:"required"`
	}
	if json.Unmarshal(schema, &s) != nil {
		return nil
	}
	names := slices.Clone(s.Required)
	var rest []string
	for k := range s.Properties {
		if !slices.Contains(names, k) {
			rest = append(rest, k)
		}
	}
	slices.Sort(rest)
	return append(names, rest...)
}

// DefaultServers returns the in-process servers an empty Config.Servers
// means: math (NewMathServer over cfg.ImageDir), the chatbot's offline web
// search, and the document server over cfg.Documents (nil:
// DemoDocuments()), its documents indexed before DefaultServers returns.
func DefaultServers(cfg Config) ([]Server, error) {
	docs := cfg.Documents
	web, err := websearch.New(websearch.Config{})
	if err != nil {
		return nil, err
	}
	dc := DemoDocuments()
	if docs != nil {
		dc = *docs
	}
	store, err := rag.NewStore(dc)
	if err != nil {
		return nil, err
	}
	// Index now, as the seed's document server does at start, so that the
	// first search does not spend a plan's time limit on it (preparing the
	// PDF reader alone takes seconds on a loaded machine). An error here
	// (an embedding endpoint down) is not fatal: the first search syncs
	// again and reports it.
	_, _ = store.Sync(context.Background())
	return []Server{
		{Server: mcp.Server{Name: MathServerName, InProcess: NewMathServer(cfg.ImageDir)}, Description: MathServerDescription},
		{Server: mcp.Server{Name: WebSearchServer, InProcess: web}, Description: webSearchSummary},
		{Server: mcp.Server{Name: DocumentsServer, InProcess: rag.NewServer(store)}, Description: rag.ServerDescription},
	}, nil
}
