package swarm

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"
	"sync"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/mcp"
)

// Errors.
var (
	// ErrEmptyTask is returned by Run for a task with no text.
	ErrEmptyTask = errors.New("swarm: the task is empty; pass what the swarm should do")
	// ErrClosed is returned by Run after Close.
	ErrClosed = errors.New("swarm: closed; create a new Swarm with New")
)

// Defaults of Config.
const (
	DefaultMaxTurns    = 8 // supervisor turns per run
	DefaultMaxAttempts = 3 // executions per step, the reflection loop included
	DefaultSkills      = 2 // skills shown to an agent
)

// QA is the node that writes the final answer.
const QA = "qa"

// AgentPrefix is prepended to a server's name to name its agent, as
// "mcp_agent_calculator".
const AgentPrefix = "mcp_agent_"

// Config configures a Swarm. The zero Config runs offline on the chatbot's
// bundled MCP servers (knowledge, calculator, websearch) in this process.
type Config struct {
	// Client calls the models. Nil means a client whose every model is
	// NewOfflineModel; for real providers pass agent.New(agent.ConfigFromEnv()).
	Client *agent.Client
	// Model names the model of every call. Empty means the client's default.
	Model string
	// Servers are the MCP servers; each becomes one agent. Nil means the
	// bundled ones, in process.
	Servers []mcp.Server
	// Descriptions describe servers to the supervisor by server name, in
	// front of their tool list. Missing entries are described by their tools
	// alone; the bundled servers have theirs.
	Descriptions map[string]string
	// Manager is the MCP configuration of the manager the swarm creates
	// (logger, resilience, limits). Its zero value is the default.
	Manager mcp.ManagerConfig
	// Skills is the skill memory. Nil means a new in-memory SkillLibrary.
	Skills SkillStore
	// Checkpointer makes runs durable: each run is a thread of its own.
	// Nil means checkpoint.NewMemory(), which keeps every run's thread for
	// the Swarm's life; a long-lived process should pass a saver it prunes
	// (checkpoint.Saver.Prune) or a persistent one.
	Checkpointer checkpoint.Saver
	// MaxTurns bounds the supervisor's turns per run. Zero means
	// DefaultMaxTurns.
	MaxTurns int
	// MaxAttempts bounds each agent's executions per step (the reflection
	// loop). Zero means DefaultMaxAttempts.
	MaxAttempts int
	// SkillLimit is how many skills an agent is shown. Zero means
	// DefaultSkills.
	SkillLimit int
	// Logger receives debug lines and warnings. Nil means no logging.
	Logger *zap.Logger
}

// Swarm is a supervisor-star swarm of MCP agents. It is safe for concurrent
// use: each Run is a run of one compiled graph on a thread of its own.
type Swarm struct {
	cfg      Config
	client   *agent.Client
	manager  *mcp.Manager
	registry *mcp.Registry
	skills   SkillStore
	agents   []string          // node names, in server order
	servers  map[string]string // agent name -> server name
	compiled *graph.Compiled[State]
	log      *zap.Logger

	mu     sync.Mutex
	closed bool
	runs   sync.WaitGroup
}

// New builds a swarm: one agent per MCP server, the supervisor, QA, and
// the graph that joins them. It connects to no server; tools are listed on
// the first run.
func New(cfg Config) (*Swarm, error) {
	w := &Swarm{cfg: cfg, client: cfg.Client, skills: cfg.Skills, log: cfg.Logger, servers: map[string]string{}}
	if w.log == nil {
		w.log = zap.NewNop()
	}
	if w.skills == nil {
		w.skills = &SkillLibrary{}
	}
	if w.cfg.MaxTurns <= 0 {
		w.cfg.MaxTurns = DefaultMaxTurns
	}
	if w.cfg.MaxAttempts <= 0 {
		w.cfg.MaxAttempts = DefaultMaxAttempts
	}
	if w.cfg.SkillLimit <= 0 {
		w.cfg.SkillLimit = DefaultSkills
	}
	if w.client == nil {
		c, err := agent.New(agent.Config{Model: NewOfflineModel(), Logger: cfg.Logger})
		if err != nil {
			return nil, fmt.Errorf("swarm: offline client: %w", err)
		}
		w.client = c
	}
	servers := cfg.Servers
	descriptions := map[string]string{}
	if servers == nil {
		for _, b := range mcpservers.Bundled() {
			srv, err := b.New()
			if err != nil {
				return nil, fmt.Errorf("swarm: bundled server %s: %w", b.Name, err)
			}
			servers = append(servers, mcp.Server{Name: b.Name, InProcess: srv})
			descriptions[b.Name] = b.Description
		}
	}
	if len(servers) == 0 {
		return nil, errors.New("swarm: Config.Servers is empty; leave it nil for the bundled servers or list some")
	}
	for k, v := range cfg.Descriptions {
		descriptions[k] = v
	}
	w.cfg.Descriptions = descriptions
	mcfg := cfg.Manager
	if mcfg.Logger == nil {
		mcfg.Logger = cfg.Logger
	}
	m, err := mcp.NewManager(mcfg)
	if err != nil {
		return nil, fmt.Errorf("swarm: %w", err)
	}
	if err := m.Add(servers...); err != nil {
		_ = m.Shutdown(context.Background())
		return nil, fmt.Errorf("swarm: %w", err)
	}
	w.manager = m
	if w.registry, err = mcp.NewRegistry(mcp.RegistryConfig{Manager: m}); err != nil {
		_ = m.Shutdown(context.Background())
		return nil, fmt.Errorf("swarm: %w", err)
	}
	for _, s := range servers {
		name := AgentPrefix + s.Name
		w.agents = append(w.agents, name)
		w.servers[name] = s.Name
	}
	saver := cfg.Checkpointer
	if saver == nil {
		saver = checkpoint.NewMemory()
	}
	if w.compiled, err = w.build(saver); err != nil {
		_ = m.Shutdown(context.Background())
		return nil, err
	}
	return w, nil
}

// Graph returns the compiled graph, for Mermaid and inspection.
func (w *Swarm) Graph() *graph.Compiled[State] { return w.compiled }

// Agents returns the agents' node names, one per MCP server.
func (w *Swarm) Agents() []string { return append([]string(nil), w.agents...) }

// Skills returns the skill memory.
func (w *Swarm) Skills() SkillStore { return w.skills }

// Close waits for the runs in flight until ctx ends, then shuts the MCP
// servers down. Runs started after Close fail with ErrClosed.
func (w *Swarm) Close(ctx context.Context) error {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		return nil
	}
	w.closed = true
	w.mu.Unlock()
	done := make(chan struct{})
	go func() { w.runs.Wait(); close(done) }()
	select {
	case <-done:
	case <-ctx.Done():
	}
	return w.manager.Shutdown(ctx)
}

// Outcome is the end of a run.
type Outcome struct {
	// Thread is the run's checkpoint thread.
	Thread string
	// Request is the task.
	Request string
	// Answer is the final answer.
	Answer string
	// Status is "complete" (every step done), "partial" (some) or "failed"
	// (none).
	Status string
	// Plan is the final plan.
	Plan []Step
	// Results are the agents' results, in order.
	Results []Result
	// Turns counts the supervisor's turns.
	Turns int
	// Usage sums the tokens of every model call.
	Usage agent.TokenUsage
}

// Run runs the swarm on task and yields its events as they happen: the
// supervisor's plans, each agent's skills, executions, reviews and result,
// and last an EventDone carrying the Outcome. A failure ends the sequence
// with the error (its Event names the run's Thread, for Resume); breaking
// out of the loop or cancelling ctx stops the run. A failing agent or MCP
// server does not fail the run: the supervisor plans around it and QA says
// what could not be done.
func (w *Swarm) Run(ctx context.Context, task string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		task = strings.Join(strings.Fields(task), " ")
		if task == "" {
			yield(Event{}, ErrEmptyTask)
			return
		}
		w.stream(ctx, checkpoint.NewID(), State{Request: task}, yield)
	}
}

// Resume continues the run on thread from its last checkpoint: a run that
// was cancelled, failed or whose process died (with a persistent
// Checkpointer) goes on where it stopped; the steps it finished do not run
// again. Resuming a finished run yields its Outcome again.
func (w *Swarm) Resume(ctx context.Context, thread string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		snap, err := w.compiled.Thread(thread).State(ctx)
		switch {
		case err != nil:
			yield(Event{Thread: thread}, fmt.Errorf("swarm: loading thread %q: %w", thread, err))
			return
		case snap.Values.Request == "":
			yield(Event{Thread: thread}, fmt.Errorf("swarm: no run on thread %q; pass the Thread of a run's Event or Outcome", thread))
			return
		case len(snap.Next) == 0:
			yield(done(thread, snap.Values), nil)
			return
		}
		w.stream(ctx, thread, State{}, yield)
	}
}

// stream runs the graph on thread and forwards its events.
func (w *Swarm) stream(ctx context.Context, thread string, input State, yield func(Event, error) bool) {
	w.mu.Lock()
	if w.closed {
		w.mu.Unlock()
		yield(Event{Thread: thread}, ErrClosed)
		return
	}
	w.runs.Add(1)
	w.mu.Unlock()
	defer w.runs.Done()

	ctx = graph.WithConfig(ctx, graph.RunConfig{RunID: checkpoint.NewID(), Tags: []string{"swarm"}})
	var final State
	for ev, err := range w.compiled.Thread(thread).Stream(ctx, input, graph.WithModes(graph.StreamCustom, graph.StreamValues)) {
		if err != nil {
			yield(Event{Thread: thread}, err)
			return
		}
		switch ev.Mode {
		case graph.StreamCustom:
			if e, ok := ev.Payload.(Event); ok {
				e.Thread = thread
				if !yield(e, nil) {
					return
				}
			}
		case graph.StreamValues:
			if len(ev.Namespace) == 0 {
				final = ev.State
			}
		}
	}
	if err := ctx.Err(); err != nil {
		yield(Event{Thread: thread}, err)
		return
	}
	yield(done(thread, final), nil)
}

func done(thread string, s State) Event {
	out := &Outcome{Thread: thread, Request: s.Request, Answer: s.Answer, Status: s.Status,
		Plan: s.Plan, Results: s.Results, Turns: s.Turns, Usage: s.Usage}
	return Event{Kind: EventDone, Thread: thread, Text: out.Answer, Outcome: out}
}

// Do runs task to the end and returns its Outcome, for callers that do not
// watch the events.
func (w *Swarm) Do(ctx context.Context, task string) (*Outcome, error) {
	for ev, err := range w.Run(ctx, task) {
		if err != nil {
			return nil, err
		}
		if ev.Kind == EventDone {
			return ev.Outcome, nil
		}
	}
	return nil, errors.New("swarm: the run ended without an outcome")
}
