package swarm

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
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
	// ErrTaskTooLong is returned by Run for a task over MaxTaskLen bytes.
	ErrTaskTooLong = fmt.Errorf("swarm: the task is longer than %d bytes; shorten it", MaxTaskLen)
)

// MaxTaskLen bounds a task's length in bytes.
const MaxTaskLen = 8 << 10

// ModelError is a run's failure because a model call failed (the provider
// is unreachable, refused the key, or kept failing): the run stops with it
// rather than go on with no decisions. Resume the thread once the model is
// back.
type ModelError struct {
	// Node is where the call failed: the supervisor, an agent's execute or
	// reflect.
	Node string
	Err  error
}

func (e *ModelError) Error() string {
	return fmt.Sprintf("swarm: the model failed in %s: %v; check that the provider is reachable and its key (see agent.ConfigFromEnv), then resume the thread", e.Node, e.Err)
}

func (e *ModelError) Unwrap() error { return e.Err }

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

// TeamPrefix is prepended to a registered team's name to name its node, as
// "team_stock_report_team", or "team_alice.stock_report_team" for a team of
// the principal alice (TeamSpec.Owner).
const TeamPrefix = "team_"

// Config configures a Swarm. The zero Config runs offline on the chatbot's
// bundled MCP servers (knowledge, calculator, websearch) in this process,
// with the Architect, in memory.
type Config struct {
	// Client calls the models. Nil means a client whose every model is
	// NewOfflineModel; for real providers pass agent.New(agent.ConfigFromEnv()).
	Client *agent.Client
	// Model names the model of every call. Empty means the client's default.
	Model string
	// Servers are MCP servers given in code; each becomes one agent. Nil
	// with no ServersFile means the bundled ones, in process.
	Servers []mcp.Server
	// ServersFile is an mcpServers JSON file (see mcp.LoadConfig) whose
	// servers become agents too. Reload reads it again, and Watch does when
	// it changes: new servers become agents, removed ones stop being
	// offered to new tasks once running tasks are done with them (§7).
	ServersFile string
	// Descriptions describe servers to the supervisor by server name, in
	// front of their tool list. Missing entries are described by their tools
	// alone; the bundled servers have theirs.
	Descriptions map[string]string
	// Manager is the MCP configuration of the manager the swarm creates
	// (logger, resilience, limits). Its zero value is the default.
	Manager mcp.ManagerConfig
	// Skills is the skill memory. Nil means a new in-memory SkillLibrary;
	// OpenStorage's Memory keeps skills across processes.
	Skills SkillStore
	// Workflows keeps the teams the Architect designs, so that they are
	// registered again in the next process. Nil means in memory only.
	Workflows WorkflowStore
	// MaxTotalTeams bounds the teams registered, of all principals
	// together (each has at most MaxTeams): beyond it, Register drops the
	// least recently registered team of another principal. Zero means
	// DefaultMaxTotalTeams. Workflows keeps the teams registered, dropped
	// ones deleted; New deletes from it the saved teams it does not
	// register.
	MaxTotalTeams int
	// NoArchitect leaves the Architect out: the supervisor cannot have teams
	// designed.
	NoArchitect bool
	// Checkpointer makes runs durable: each run is a thread of its own.
	// Nil means checkpoint.NewMemory(). When a run finishes, its thread is
	// pruned to its latest checkpoint (which holds the Outcome) and its
	// agents' subgraph threads are deleted; the threads of tasks
	// beyond KeepTasks and KeepTotalTasks are deleted whole. A saver that
	// is not a checkpoint.Pruner keeps every checkpoint of the tasks it
	// keeps.
	Checkpointer checkpoint.Saver
	// Tasks records each principal's tasks, for KeepTasks and
	// KeepTotalTasks. Nil means in memory: the tasks run before a restart
	// are then never deleted, so with a persistent Checkpointer pass
	// OpenStorage's Memory.
	Tasks TaskLog
	// KeepTasks bounds the tasks of one principal (the thread id's prefix,
	// see Skill.Owner; runs without one count as one principal) whose
	// checkpoints are kept, finished or not (a task that failed, timed out
	// or lost its client counts until it is deleted): when a task starts,
	// is resumed or finishes, the principal's tasks least recently started,
	// resumed or finished beyond it are deleted, but for those running in
	// this process, and Resume or the web API no longer find them. A
	// start's deletions run in the background, one pass at a time, at
	// most MaxTaskDeletions tasks a pass. Zero means DefaultKeepTasks.
	KeepTasks int
	// KeepTotalTasks bounds the tasks of all principals together whose
	// checkpoints are kept, the number of principals being unbounded: the
	// least recent beyond it are deleted, whoever's, as for KeepTasks.
	// Zero means DefaultKeepTotalTasks.
	KeepTotalTasks int
	// MaxTurns bounds the supervisor's turns per run. Zero means
	// DefaultMaxTurns.
	MaxTurns int
	// MaxAttempts bounds each agent's executions per step (the reflection
	// loop). Zero means DefaultMaxAttempts.
	MaxAttempts int
	// SkillLimit is how many skills an agent is shown. Zero means
	// DefaultSkills.
	SkillLimit int
	// Tracing receives OpenTelemetry spans (see Tracing). Nil means none.
	Tracing *Tracing
	// Logger receives debug lines and warnings. Nil means no logging.
	Logger *zap.Logger
}

// Swarm is a supervisor-star swarm of MCP agents. It is safe for concurrent
// use: each Run is a run of one compiled graph on a thread of its own.
type Swarm struct {
	cfg       Config
	client    *agent.Client
	manager   *mcp.Manager
	registry  *mcp.Registry
	skills    SkillStore
	workflows WorkflowStore
	saver     checkpoint.Saver
	tasks     TaskLog
	log       *zap.Logger

	mu          sync.Mutex
	closed      bool
	runs        sync.WaitGroup
	running     map[string]int  // runs in flight by thread, spared by the retention
	retaining   atomic.Bool     // a retention pass deletes tasks
	passes      sync.WaitGroup  // retention passes in the background
	stop        context.Context // cancelled by Close: ends the passes
	cancelStop  context.CancelFunc
	gen         *generation           // the agents new runs see
	old         map[*generation]bool  // replaced generations with runs in flight
	code        []mcp.Server          // Config.Servers (and the bundled ones)
	file        map[string]mcp.Server // ServersFile's servers by name
	fileOrder   []string
	teams       map[string]TeamSpec // registered teams by TeamSpec.key
	teamOrder   []string
	fileVersion string // what Watch last loaded
}

// generation is one version of the swarm's agents and the graph over
// them. Reload makes a new one; runs keep the one they started with.
type generation struct {
	main    *team
	servers map[string]bool // MCP servers its agents use
	runs    int             // runs in flight on it
}

// team is a supervisor-star graph over some agents: the swarm itself, or a
// team the Architect designed, run as one node of it.
type team struct {
	w        *Swarm
	name     string
	agents   []*mcpAgent
	workflow []Step // a designed team's plan to start from
	compiled *graph.Compiled[State]
}

// New builds a swarm: one agent per MCP server, the Architect, the teams
// saved in Config.Workflows, the supervisor, QA, and the graph that joins
// them. It connects to no server; tools are listed on the first run.
func New(cfg Config) (*Swarm, error) {
	w := &Swarm{cfg: cfg, client: cfg.Client, skills: cfg.Skills, workflows: cfg.Workflows, log: cfg.Logger,
		file: map[string]mcp.Server{}, teams: map[string]TeamSpec{}, running: map[string]int{}}
	w.stop, w.cancelStop = context.WithCancel(context.Background())
	if w.log == nil {
		w.log = zap.NewNop()
	}
	if w.skills == nil {
		w.skills = &SkillLibrary{}
	}
	if w.cfg.MaxTotalTeams < 0 {
		return nil, fmt.Errorf("swarm: Config.MaxTotalTeams is negative (%d); use zero for DefaultMaxTotalTeams", w.cfg.MaxTotalTeams)
	}
	if w.cfg.MaxTotalTeams == 0 {
		w.cfg.MaxTotalTeams = DefaultMaxTotalTeams
	}
	if w.workflows == nil {
		w.workflows = &memoryWorkflows{}
	}
	switch {
	case w.cfg.KeepTasks < 0:
		return nil, fmt.Errorf("swarm: Config.KeepTasks is negative (%d); use zero for DefaultKeepTasks", w.cfg.KeepTasks)
	case w.cfg.KeepTasks == 0:
		w.cfg.KeepTasks = DefaultKeepTasks
	}
	switch {
	case w.cfg.KeepTotalTasks < 0:
		return nil, fmt.Errorf("swarm: Config.KeepTotalTasks is negative (%d); use zero for DefaultKeepTotalTasks", w.cfg.KeepTotalTasks)
	case w.cfg.KeepTotalTasks == 0:
		w.cfg.KeepTotalTasks = DefaultKeepTotalTasks
	}
	if w.tasks = cfg.Tasks; w.tasks == nil {
		w.tasks = &taskLog{}
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
	if servers == nil && cfg.ServersFile == "" {
		for _, b := range mcpservers.Bundled() {
			srv, err := b.New()
			if err != nil {
				return nil, fmt.Errorf("swarm: bundled server %s: %w", b.Name, err)
			}
			servers = append(servers, mcp.Server{Name: b.Name, InProcess: srv})
			descriptions[b.Name] = b.Description
		}
	}
	var fromFile []mcp.Server
	if cfg.ServersFile != "" {
		var err error
		if fromFile, w.fileVersion, err = loadServers(cfg.ServersFile); err != nil {
			return nil, err
		}
	}
	if len(servers) == 0 && len(fromFile) == 0 && cfg.ServersFile == "" {
		return nil, errors.New("swarm: Config.Servers is empty; leave it nil for the bundled servers, list some, or set Config.ServersFile")
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
	w.manager = m
	fail := func(err error) (*Swarm, error) {
		_ = m.Shutdown(context.Background())
		return nil, err
	}
	if err := m.Add(servers...); err != nil {
		return fail(fmt.Errorf("swarm: %w", err))
	}
	w.code = servers
	for _, s := range fromFile {
		if slices.ContainsFunc(servers, func(c mcp.Server) bool { return c.Name == s.Name }) {
			return fail(fmt.Errorf("swarm: server %q of %s is also in Config.Servers; rename one", s.Name, cfg.ServersFile))
		}
		if err := m.Add(s); err != nil {
			return fail(fmt.Errorf("swarm: %s: %w", cfg.ServersFile, err))
		}
		w.file[s.Name] = s
		w.fileOrder = append(w.fileOrder, s.Name)
	}
	if w.registry, err = mcp.NewRegistry(mcp.RegistryConfig{Manager: m}); err != nil {
		return fail(fmt.Errorf("swarm: %w", err))
	}
	w.saver = cfg.Checkpointer
	if w.saver == nil {
		w.saver = checkpoint.NewMemory()
	}
	saved, err := w.workflows.Teams(context.Background())
	if err != nil {
		return fail(fmt.Errorf("swarm: loading saved teams: %w", err))
	}
	// stale are the saved teams not registered, deleted from the store:
	// the swarm decides which teams are kept, and the next start finds
	// those it registered, no more (a team it skipped, kept in the store,
	// could come back, or make the store drop others than the swarm).
	var stale []TeamSpec
	for _, t := range saved {
		if err := t.Validate(); err != nil {
			w.log.Warn("swarm: a saved team is not valid; deleted", zap.String("team", t.Name), zap.Error(err))
			stale = append(stale, t)
			continue
		}
		if _, ok := w.teams[t.key()]; !ok && w.ownedTeams(t.Owner) >= MaxTeams {
			w.log.Warn("swarm: a saved team is over its owner's MaxTeams; deleted", zap.String("team", t.Name), zap.String("owner", t.Owner))
			stale = append(stale, t)
			continue
		}
		stale = append(stale, w.admit(t)...) // oldest first: beyond MaxTotalTeams, the newest stay
	}
	if len(stale) > 0 {
		if err := w.workflows.DeleteTeams(context.Background(), stale); err != nil {
			return fail(fmt.Errorf("swarm: deleting the %d saved teams not registered: %w", len(stale), err))
		}
	}
	if w.gen, err = w.newGeneration(); err != nil {
		return fail(err)
	}
	return w, nil
}

// serverNames lists the servers new runs may use, code ones first.
func (w *Swarm) serverNames() []string {
	var names []string
	for _, s := range w.code {
		names = append(names, s.Name)
	}
	return append(names, w.fileOrder...)
}

// newGeneration builds the agents and the graph from the current servers
// and teams. The caller holds w.mu, or is New.
func (w *Swarm) newGeneration() (*generation, error) {
	gen := &generation{servers: map[string]bool{}}
	main := &team{w: w, name: ""}
	for _, s := range w.serverNames() {
		gen.servers[s] = true
		main.agents = append(main.agents, &mcpAgent{w: w, name: AgentPrefix + s, server: s, description: w.cfg.Descriptions[s]})
	}
	for _, name := range w.teamOrder {
		spec := w.teams[name]
		sub, err := w.newTeam(spec, gen.servers)
		if err != nil {
			w.log.Warn("swarm: team not registered", zap.String("team", name), zap.Error(err))
			continue
		}
		main.agents = append(main.agents, &mcpAgent{w: w, name: spec.node(), owner: spec.Owner, description: spec.Description, team: sub})
	}
	if !w.cfg.NoArchitect {
		main.agents = append(main.agents, &mcpAgent{w: w, name: Architect, description: ArchitectDescription, architect: true})
	}
	c, err := main.build(w.saver)
	if err != nil {
		return nil, err
	}
	main.compiled = c
	return gen.with(main), nil
}

func (g *generation) with(t *team) *generation { g.main = t; return g }

// acquire returns the generation new runs use, counted as in use until
// release.
func (w *Swarm) acquire() (*generation, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.closed {
		return nil, ErrClosed
	}
	w.runs.Add(1)
	w.gen.runs++
	return w.gen, nil
}

// release ends a run on gen; the last run of a replaced generation removes
// the servers that no generation in use offers any more.
func (w *Swarm) release(gen *generation) {
	w.mu.Lock()
	gen.runs--
	if gen != w.gen && gen.runs == 0 {
		w.retire(gen)
	}
	w.mu.Unlock()
	w.runs.Done()
}

// retire forgets gen, whose runs have finished, and removes from the
// manager its servers that neither the current generation nor one with
// runs in flight uses. The caller holds w.mu.
func (w *Swarm) retire(gen *generation) {
	delete(w.old, gen)
	for s := range gen.servers {
		used := w.gen.servers[s]
		for g := range w.old {
			used = used || g.servers[s]
		}
		if !used {
			if err := w.manager.Remove(s); err == nil {
				w.log.Info("swarm: removed MCP server", zap.String("server", s))
			}
		}
	}
}

// Graph returns the compiled graph new runs use, for Mermaid and
// inspection. A run of it belongs to the principal named by its thread
// id's prefix (before the first "."; see Skill.Owner): never serve it
// where a client chooses the thread id, such as through agent/server, or
// a client takes any principal's skills and teams by naming a thread
// "principal.anything".
func (w *Swarm) Graph() *graph.Compiled[State] {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.gen.main.compiled
}

// Agents returns the agents' node names new runs see: one per MCP server,
// one per registered team, and the Architect.
func (w *Swarm) Agents() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	var names []string
	for _, a := range w.gen.main.agents {
		names = append(names, a.name)
	}
	return names
}

// Skills returns the skill memory.
func (w *Swarm) Skills() SkillStore { return w.skills }

// Close waits for the runs in flight until ctx ends, then cancels the
// retention pass in the background (its tasks stay recorded) and waits
// for it until ctx ends, then shuts the MCP servers down. Runs started
// after Close fail with ErrClosed.
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
	w.cancelStop()
	passed := make(chan struct{})
	go func() { w.passes.Wait(); close(passed) }()
	select {
	case <-passed:
	case <-ctx.Done():
	}
	return w.manager.Shutdown(ctx)
}

// Outcome is the end of a run.
type Outcome struct {
	// Thread is the run's checkpoint thread.
	Thread string `json:"thread"`
	// Request is the task.
	Request string `json:"request"`
	// Answer is the final answer.
	Answer string `json:"answer"`
	// Status is "complete" (every step done), "partial" (some) or "failed"
	// (none).
	Status string `json:"status"`
	// Plan is the final plan.
	Plan []Step `json:"plan"`
	// Citations are the sources the results used, with the steps that used
	// them; the answer ends with them.
	Citations []Citation `json:"citations,omitempty"`
	// Trace is the run's trace: transitions, thoughts, tool calls and
	// outputs, reflections.
	Trace []TraceEntry `json:"trace,omitempty"`
	// Messages is the run's chat history.
	Messages model.Messages `json:"messages,omitempty"`
	// Results are the agents' results, in order.
	Results []Result `json:"results"`
	// Turns counts the supervisor's turns.
	Turns int `json:"turns"`
	// Usage sums the tokens of every model call.
	Usage model.Usage `json:"usage"`
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
		switch {
		case task == "":
			yield(Event{}, ErrEmptyTask)
			return
		case len(task) > MaxTaskLen:
			yield(Event{}, ErrTaskTooLong)
			return
		}
		w.stream(ctx, checkpoint.NewID(), &State{Request: task}, yield)
	}
}

// Resume continues the run on thread from its last checkpoint: a run that
// was cancelled, failed or whose process died (with a persistent
// Checkpointer) goes on where it stopped; the steps it finished do not run
// again. Resuming a finished run yields its Outcome again. The run is the
// principal's named by thread's prefix (before the first "."; see
// Skill.Owner): never pass a thread id a client chose unchecked, or the
// client resumes as another principal.
func (w *Swarm) Resume(ctx context.Context, thread string) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		w.stream(ctx, thread, nil, yield)
	}
}

// stream runs the graph on thread and forwards its events. A nil input
// resumes the thread from the state it reads (a finished run yields its
// Outcome): the run continues from that very checkpoint, so that a thread
// another run moved on since (a concurrent resume that finished it, or
// the retention) fails with checkpoint.ErrConflict instead of running
// again from START.
func (w *Swarm) stream(ctx context.Context, thread string, input *State, yield func(Event, error) bool) {
	gen, err := w.acquire()
	if err != nil {
		yield(Event{Thread: thread}, err)
		return
	}
	defer w.release(gen)
	defer w.begin(thread)()

	opts := []graph.RunOption{graph.WithModes(graph.StreamCustom, graph.StreamValues)}
	var in State
	if input != nil {
		in = *input
	} else {
		snap, err := gen.main.compiled.Thread(thread).State(ctx)
		switch {
		case errors.Is(err, checkpoint.ErrNotFound):
			yield(Event{}, fmt.Errorf("swarm: no run on thread %q; pass the Thread of a run's Event or Outcome: %w", thread, err))
			return
		case err != nil:
			yield(Event{Thread: thread}, fmt.Errorf("swarm: loading thread %q: %w", thread, err))
			return
		case snap.Values.Request == "":
			yield(Event{}, fmt.Errorf("swarm: no run on thread %q; pass the Thread of a run's Event or Outcome", thread))
			return
		case len(snap.Next) == 0:
			w.retain(ctx, thread, true) // recorded, had it finished before the log was kept
			yield(done(thread, snap.Values), nil)
			return
		}
		opts = append(opts, graph.ContinueFrom(snap))
	}
	// Counted from its start: a task that never finishes is bounded too.
	w.retain(ctx, thread, true)

	ctx = graph.WithConfig(ctx, graph.RunConfig{RunID: checkpoint.NewID(), Tags: []string{"swarm"}})
	ctx, end := w.cfg.Tracing.startRun(ctx, thread, in.Request)
	var final State
	var runErr error
	defer func() { end(final, runErr) }()
	for ev, err := range gen.main.compiled.Thread(thread).Stream(ctx, in, opts...) {
		if err != nil {
			runErr = err
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
		runErr = err
		yield(Event{Thread: thread}, err)
		return
	}
	w.finished(ctx, thread)
	yield(done(thread, final), nil)
}

func done(thread string, s State) Event {
	out := &Outcome{Thread: thread, Request: s.Request, Answer: s.Answer, Status: s.Status,
		Plan: s.Plan, Results: s.Results, Turns: s.Turns, Usage: s.Usage, Citations: s.Citations, Trace: s.Trace,
		Messages: s.Messages}
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
