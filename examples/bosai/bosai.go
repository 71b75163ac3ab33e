package bosai

import (
	"cmp"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
	"github.com/agentgraph/agentgraph/examples/bosai/dbserver"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/calculator"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/resilience"
)

// Errors of Bot.
var (
	// ErrClosed is returned by a Bot after Close.
	ErrClosed = errors.New("bosai: bot is closed; create a new one with New")
	// ErrEmptyQuestion is returned for a Request without a question.
	ErrEmptyQuestion = fmt.Errorf("%w: question is empty; ask something", ErrInvalidRequest)
)

// DemoAPIBase is the base URL the API agent calls when Config.HTTPClient is
// nil: the in-process DemoAPI answers it.
const DemoAPIBase = "http://acme-api.example"

// DefaultKeepRuns is how many finished runs the Bot's own saver keeps when
// Config.KeepRuns is zero.
const DefaultKeepRuns = 32

// Config configures a Bot. The zero Config runs on the model configured in
// the environment (provider.FromEnv), or offline when there is none.
type Config struct {
	// Model is the language model of the planner, the agents and the
	// composer: a provider model (package agent/provider), an
	// *agent.Client (with its registry and resilience policy), or any
	// model.Model. Nil means provider.FromEnv when the environment
	// configures a provider (OPENAI_API_KEY alone is enough: OpenAI's
	// default model), else NewOfflineModel.
	Model model.Model
	// Offline forces the offline model when Model is nil, whatever the
	// environment says.
	Offline bool
	// HTTPClient is the API agent's HTTP client. Nil means a client whose
	// transport serves DemoAPI in this process. The Bot uses a copy that
	// follows redirects on the called API's origin only.
	HTTPClient *http.Client
	// APIBaseURL is the base URL of the API agent's calls (an absolute
	// http or https URL) when the environment (EnvAPIBaseURL) gives none.
	// Empty means APIDocs' base_url, else DemoAPIBase. Token refresh
	// (TokenRefresher) happens against this base only.
	APIBaseURL string
	// AllowedAPIBases are other base URLs a request may choose with its
	// context's CtxAPIBaseURL. Empty means none: every call goes to the
	// configured base, and a request naming another fails with
	// ErrInvalidRequest (400 over HTTP).
	AllowedAPIBases []string
	// APIDocs is the API agent's endpoint catalogue. Nil means
	// DemoAPIDocs. New checks it as ParseAPIDocs does (an error names
	// the endpoint and the rule).
	APIDocs *APIDocs
	// APITopK is how many endpoints, best scored first, the planning
	// prompt shows. Zero means 3.
	APITopK int
	// TokenRefresher obtains a new bearer token after a 401. Nil means
	// DemoTokenRefresher when HTTPClient is nil and the configured base is
	// DemoAPIBase, and no refresh otherwise (the demo's credentials go to
	// the demo API only).
	TokenRefresher TokenRefresher
	// HTTPPolicy is the resilience policy of the API agent's HTTP calls.
	// Nil means 3 attempts with backoff from 200 ms to 2 s for 5xx, 429 and
	// network errors, and 10 s per attempt.
	HTTPPolicy *resilience.Config
	// MCP is the manager of the MCP servers the agents call: the SQL
	// agent's database server (see SQLTools) and "calculator" (run_code).
	// Nil means a manager, owned and shut down by the Bot, with the
	// bundled servers in this process: the database server of package
	// dbserver on Database, and the chatbot's calculator.
	MCP *mcp.Manager
	// Database is the bundled database server's configuration when MCP is
	// nil. The zero value serves the sample shop database (SQLite, built
	// in a temporary directory and removed by Close); set Driver and DSN
	// for your own SQLite file or PostgreSQL database (as a role that can
	// only read its tables: see dbserver.ReaderRoleStatements).
	Database dbserver.Config
	// SQLTools names the SQL agent's MCP tools. The zero value calls the
	// bundled server's tools on the server "database".
	SQLTools SQLTools
	// Checkpointer saves every run's steps, one thread per run
	// (Response.Thread, Bot.State). The Bot deletes nothing from a saver it
	// is given: a long-lived process passes one it prunes (checkpoint.Prune)
	// or deletes threads from (DeleteThread). Nil means a
	// checkpoint.NewMemory() of the Bot's own, bounded by KeepRuns.
	Checkpointer checkpoint.Saver
	// KeepRuns bounds the threads the Bot's own saver (Checkpointer nil)
	// keeps: the KeepRuns latest finished runs, for Bot.State; the thread of
	// an older run is deleted when a newer one finishes. A run that fails
	// or is stopped is deleted when it ends: its thread is never returned,
	// so nothing can read or resume it. Zero means DefaultKeepRuns; a
	// negative value keeps no run. It is ignored when Checkpointer is set.
	KeepRuns int
	// MaxConcurrency bounds the agents running at once. Zero means no bound.
	MaxConcurrency int
	// Logger receives the graph's, the model client's and the MCP
	// manager's logs. Nil means no logging.
	Logger *zap.Logger
	// Hooks observe the runs of the Bot's graphs (the main graph and the
	// SQL agent's, which runs inside an agent's node and so nests under
	// it), for example telemetry.Telemetry.Hooks() to trace them with
	// OpenTelemetry. The zero value observes nothing.
	Hooks graph.Hooks
}

// Bot is Bos-AI: a planner, specialist agents run in parallel and a
// composer, as one graph. It is safe for concurrent use.
type Bot struct {
	model        model.Model
	manager      *mcp.Manager
	reg          *mcp.Registry // the manager's tools, as the agents call them (mcptool)
	ownsMCP      bool
	http         *http.Client
	apiBase      string          // the configured base URL, normalized
	allowedBases map[string]bool // Config.AllowedAPIBases, normalized
	docs         *APIDocs
	topK         int
	refresh      TokenRefresher
	httpPolicy   *resilience.Policy[httpResult]
	graph        *graph.Compiled[State]
	sqlGraph     *graph.Compiled[sqlState]
	sqlTools     SQLTools
	db           *dbserver.Server
	tmpDir       string

	// saver is the Bot's own checkpoint.Memory (Config.Checkpointer nil),
	// whose threads it deletes beyond keep finished runs; nil otherwise.
	saver checkpoint.Saver
	keep  int

	mu     sync.Mutex
	closed bool
	runs   sync.WaitGroup
	kept   []string // the threads of the finished runs saver keeps, oldest first; at most keep
}

// New builds a Bot. It connects to nothing yet: MCP servers are started on
// first use.
func New(cfg Config) (*Bot, error) {
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	b := &Bot{model: cfg.Model, docs: cfg.APIDocs, topK: cmp.Or(cfg.APITopK, 3), refresh: cfg.TokenRefresher}
	if b.docs == nil {
		b.docs = DemoAPIDocs()
	} else {
		// A copy: check upper-cases the methods, and the caller's value
		// stays the caller's.
		d := *b.docs
		d.Endpoints = slices.Clone(d.Endpoints)
		if err := d.check(); err != nil {
			return nil, fmt.Errorf("bosai: Config.APIDocs: %w", err)
		}
		b.docs = &d
	}
	var err error
	if b.apiBase, err = configuredAPIBase(cfg, b.docs); err != nil {
		return nil, err
	}
	b.allowedBases = make(map[string]bool, len(cfg.AllowedAPIBases))
	for i, s := range cfg.AllowedAPIBases {
		base, err := normalizeAPIBase(s)
		if err != nil {
			return nil, fmt.Errorf("bosai: Config.AllowedAPIBases[%d]: %w", i, err)
		}
		b.allowedBases[base] = true
	}
	if b.model == nil {
		m, err := defaultModel(cfg.Offline)
		if err != nil {
			return nil, err
		}
		b.model = m
	}
	if cfg.HTTPClient == nil {
		u, _ := url.Parse(DemoAPIBase)
		b.http = sameOriginClient(&http.Client{Transport: handlerTransport{u.Host, DemoAPI()}})
		if b.refresh == nil && b.apiBase == DemoAPIBase {
			// Only the demo API knows the demo's credentials: a real
			// API's 401 is not answered by sending them there.
			b.refresh = DemoTokenRefresher(b.http)
		}
	} else {
		b.http = sameOriginClient(cfg.HTTPClient)
	}
	pc := resilience.Config{Name: "http:api", Timeout: 10 * time.Second,
		Retry: resilience.RetryConfig{MaxAttempts: 3, BaseDelay: 200 * time.Millisecond, MaxDelay: 2 * time.Second, Jitter: 0.2}}
	if cfg.HTTPPolicy != nil {
		pc = *cfg.HTTPPolicy
	}
	p, err := resilience.New[httpResult](pc, resilience.WithLogger(log))
	if err != nil {
		return nil, fmt.Errorf("bosai: Config.HTTPPolicy: %w", err)
	}
	b.httpPolicy = p

	b.sqlTools = cfg.SQLTools.withDefaults()
	if b.sqlGraph, err = b.buildSQLGraph(graph.WithHooks(cfg.Hooks)); err != nil {
		return nil, err
	}
	b.manager = cfg.MCP
	if b.manager == nil {
		if err := b.bundledMCP(cfg.Database, log); err != nil {
			b.closeMCP(context.Background())
			return nil, err
		}
		b.ownsMCP = true
	}
	if b.reg, err = mcp.NewRegistry(mcp.RegistryConfig{Manager: b.manager}); err != nil {
		b.closeMCP(context.Background())
		return nil, err
	}
	saver := cfg.Checkpointer
	if saver == nil {
		saver = checkpoint.NewMemory()
		b.saver = saver
		b.keep = max(cmp.Or(cfg.KeepRuns, DefaultKeepRuns), 0)
	}
	opts := []graph.CompileOption{graph.WithCheckpointer(saver), graph.WithLogger(log), graph.WithHooks(cfg.Hooks)}
	if cfg.MaxConcurrency > 0 {
		opts = append(opts, graph.WithMaxConcurrency(cfg.MaxConcurrency))
	}
	if b.graph, err = b.build(opts...); err != nil {
		b.closeMCP(context.Background())
		return nil, err
	}
	return b, nil
}

// defaultModel is the model a Config without one runs on: the offline
// model when asked or when the environment configures no provider, else
// provider.FromEnv's.
func defaultModel(offline bool) (model.Model, error) {
	if offline || len(provider.Configured()) == 0 && strings.TrimSpace(os.Getenv(provider.EnvModel)) == "" {
		return NewOfflineModel(), nil
	}
	m, err := provider.FromEnv()
	if err != nil {
		return nil, fmt.Errorf("bosai: model configuration: %w", err)
	}
	return m, nil
}

// bundledMCP starts the database server (on the sample database unless
// dc names one) and the calculator, in process.
func (b *Bot) bundledMCP(dc dbserver.Config, log *zap.Logger) error {
	ctx := context.Background()
	if dc.Driver == "" && dc.DSN == "" {
		dir, err := os.MkdirTemp("", "bosai-sample-")
		if err != nil {
			return fmt.Errorf("bosai: sample database: %w", err)
		}
		b.tmpDir = dir
		path := filepath.Join(dir, "shop.db")
		if err := writeSample(ctx, path); err != nil {
			return err
		}
		dc.Driver, dc.DSN = "sqlite", path
	}
	if dc.Logger == nil {
		dc.Logger = log
	}
	db, err := dbserver.Open(ctx, dc)
	if err != nil {
		return fmt.Errorf("bosai: Config.Database: %w", err)
	}
	b.db = db
	calc, err := calculator.New(calculator.Config{})
	if err != nil {
		return err
	}
	m, err := mcp.NewManager(mcp.ManagerConfig{Logger: log, ClientName: "bosai"})
	if err != nil {
		return err
	}
	b.manager = m
	return m.Add(mcp.Server{Name: b.sqlTools.Server, InProcess: db.MCP()}, mcp.Server{Name: "calculator", InProcess: calc})
}

// writeSample creates the sample shop database at path.
func writeSample(ctx context.Context, path string) error {
	rw, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		return fmt.Errorf("bosai: sample database: %w", err)
	}
	defer rw.Close()
	return dbserver.CreateSample(ctx, rw, "sqlite")
}

// task is the input of one agent task: which agent, and the request.
type task struct {
	Agent   AgentName `json:"agent"`
	Request Request   `json:"request"`
}

// build assembles the graph:
//
//	START → plan ─(one Send per chosen agent)→ agent ×N → compose → END
//	          └──────────(no agent chosen)──────────────↗
func (b *Bot) build(opts ...graph.CompileOption) (*graph.Compiled[State], error) {
	g := graph.New[State]()
	g.AddNode("plan", b.planNode)
	agents := graph.AddTask(g, "agent", func(ctx context.Context, t task) (graph.Update[State], error) {
		// The plan's Sends carry the run's request, checked at Run; a
		// task made otherwise (an update routing to this node) has its
		// limits checked here (the API agent checks its context itself).
		if err := t.Request.Normalize().Validate(); err != nil {
			return graph.Update[State]{}, fmt.Errorf("bosai: agent task: %w", err)
		}
		res, trace, err := b.runAgent(ctx, t.Agent, t.Request)
		if err != nil {
			return graph.Update[State]{}, err
		}
		return graph.Updates(fPending.Set(-1), fResults.Set([]AgentResult{res}), fTrace.Set(trace)), nil
	})
	g.AddNode("compose", b.composeNode)
	g.AddEdge(graph.START, "plan")
	g.AddConditionalEdges("plan", func(ctx context.Context, s State) (graph.Route, error) {
		if len(s.Plan.Agents) == 0 {
			return graph.To("compose"), nil
		}
		sends := make([]graph.Send, len(s.Plan.Agents))
		for i, a := range s.Plan.Agents {
			sends[i] = agents.Send(task{Agent: a, Request: s.Request})
		}
		return graph.Dispatch(sends...), nil
	}, "agent", "compose")
	g.Label("plan", "agent", "Send per chosen agent")
	g.AddEdge("agent", "compose")
	g.AddEdge("compose", graph.END)
	return g.Compile(opts...)
}

func (b *Bot) planNode(ctx context.Context, s State) (graph.Update[State], error) {
	d, trace, err := b.plan(ctx, s.Request)
	if err != nil {
		return graph.Update[State]{}, err
	}
	// The seed's lifecycle: each chosen agent is pending until it runs
	// (then running, succeeded or failed); those beyond max_turns are
	// skipped.
	for _, a := range d.Agents {
		trace = append(trace, newTrace(TraceMessage, a, string(a)+" agent pending", map[string]any{"status": string(StatusPending)}))
	}
	for _, a := range d.Skipped {
		trace = append(trace, newTrace(TraceMessage, a, string(a)+" agent skipped: beyond max_turns", map[string]any{"status": string(StatusSkipped)}))
	}
	for _, ev := range trace {
		_ = graph.Emit(ctx, ev)
	}
	return graph.Updates(fPlan.Set(d), fPending.Set(len(d.Agents)), fTrace.Set(trace)), nil
}

// Graph returns the compiled graph, for Mermaid and for inspecting saved
// runs.
func (b *Bot) Graph() *graph.Compiled[State] { return b.graph }

// Event is one item of a run's stream: a trace event as it happens or,
// last, the response. Exactly one field is set.
type Event struct {
	Trace    *TraceEvent
	Response *Response
}

// Run answers req. It yields each trace event as it happens (events of
// agents running in parallel interleave) and, last, the Response, whose
// Trace holds the same events in plan order. An agent's failure is not an
// error: it is in its AgentResult and the trace, and the answer is
// partial. The run stops with ctx's error when ctx is cancelled, and with
// the loop when the caller breaks out of it. A request that is not valid
// (Request.Validate), or whose context names an API base URL the Bot may
// not call (CtxAPIBaseURL), yields an error wrapping ErrInvalidRequest.
func (b *Bot) Run(ctx context.Context, req Request) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		req = req.Normalize()
		if err := b.validate(req); err != nil {
			yield(Event{}, err)
			return
		}
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			yield(Event{}, ErrClosed)
			return
		}
		b.runs.Add(1)
		b.mu.Unlock()
		defer b.runs.Done()

		req = withTemporalContext(req, time.Now().UTC())
		ctx, req := withSecrets(ctx, req)
		thread := checkpoint.NewID()
		finished := false
		defer func() { b.retire(ctx, thread, finished) }()
		var last State
		for ev, err := range b.graph.Thread(thread).Stream(ctx, State{Request: req}, graph.WithModes(graph.StreamCustom, graph.StreamValues)) {
			if err != nil {
				yield(Event{}, err)
				return
			}
			switch ev.Mode {
			case graph.StreamCustom:
				te, ok := ev.Payload.(TraceEvent)
				if !ok {
					continue
				}
				if !yield(Event{Trace: &te}, nil) {
					return
				}
			case graph.StreamValues:
				last = ev.State
			}
		}
		resp := last.Response
		resp.Thread = thread
		finished = true
		yield(Event{Response: &resp}, nil)
	}
}

// retire bounds the Bot's own saver once the run on thread is over: the
// thread of a finished run joins the kept ones (the oldest beyond b.keep is
// deleted), that of a run which failed or was stopped, whose thread nobody
// was told, is deleted at once. It does nothing with a Config.Checkpointer.
func (b *Bot) retire(ctx context.Context, thread string, finished bool) {
	if b.saver == nil {
		return
	}
	drop := []string{thread}
	if finished {
		b.mu.Lock()
		b.kept = append(b.kept, thread)
		n := max(len(b.kept)-b.keep, 0)
		drop = slices.Clone(b.kept[:n])
		b.kept = slices.Delete(b.kept, 0, n)
		b.mu.Unlock()
	}
	// The run's ctx may be over (a client gone): the deletion is not the
	// run's, and the in-memory saver does not block.
	ctx = context.WithoutCancel(ctx)
	for _, t := range drop {
		_ = b.saver.DeleteThread(ctx, t) // a Memory fails only for a done ctx
	}
}

// validate checks a normalized request as Request.Validate does, and its
// context's API base URL against the Bot's configuration.
func (b *Bot) validate(req Request) error {
	return errors.Join(req.Validate(), b.checkAPIContext(req))
}

// Ask runs req and returns the response.
func (b *Bot) Ask(ctx context.Context, req Request) (*Response, error) {
	for ev, err := range b.Run(ctx, req) {
		if err != nil {
			return nil, err
		}
		if ev.Response != nil {
			return ev.Response, nil
		}
	}
	return nil, errors.New("bosai: run ended without a response")
}

// State returns the saved final state of the run saved under thread
// (Response.Thread). With the Bot's own saver only the Config.KeepRuns
// latest finished runs are kept: an older one's is checkpoint.ErrNotFound.
func (b *Bot) State(ctx context.Context, thread string) (State, error) {
	snap, err := b.graph.Thread(thread).State(ctx)
	if err != nil {
		return State{}, err
	}
	return snap.Values, nil
}

// Close refuses new runs, waits for the runs in flight until ctx is done,
// and shuts down the MCP manager if the Bot made it.
func (b *Bot) Close(ctx context.Context) error {
	b.mu.Lock()
	already := b.closed
	b.closed = true
	b.mu.Unlock()
	if already {
		return nil
	}
	done := make(chan struct{})
	go func() { b.runs.Wait(); close(done) }()
	var err error
	select {
	case <-done:
	case <-ctx.Done():
		err = fmt.Errorf("bosai: close: runs still in flight: %w", ctx.Err())
	}
	return errors.Join(err, b.closeMCP(ctx))
}

// mcpCleanupWait bounds how long Close waits, after its ctx ended, for the
// MCP manager's cleanup left to the background: reaping killed
// subprocesses (1 s each) and closing HTTP clients (5 s each), in parallel.
const mcpCleanupWait = 10 * time.Second

func (b *Bot) closeMCP(ctx context.Context) error {
	if b.reg != nil {
		b.reg.Close() // a Config.MCP manager outlives the bot: drop the registry's hook on it
	}
	var errs []error
	if b.manager != nil && (b.ownsMCP || b.db != nil) {
		if err := b.manager.Shutdown(ctx); err != nil && !errors.Is(err, mcp.ErrShutdown) {
			errs = append(errs, err)
			if ctx.Err() != nil {
				// Shutdown killed the servers' subprocesses; the database and
				// the tmp dir they use are released below, once they are
				// reaped: wait a bounded while for the rest of the cleanup.
				wait, cancel := context.WithTimeout(context.WithoutCancel(ctx), mcpCleanupWait)
				if err := b.manager.Shutdown(wait); err != nil {
					errs = append(errs, fmt.Errorf("bosai: MCP servers still closing after a further %v: %w", mcpCleanupWait, err))
				}
				cancel()
			}
		}
	}
	if b.db != nil {
		errs = append(errs, b.db.Close())
	}
	if b.tmpDir != "" {
		errs = append(errs, os.RemoveAll(b.tmpDir))
	}
	return errors.Join(errs...)
}

// withTemporalContext adds the current date and time to the request's
// context unless it has them (the seed's temporal context injection).
func withTemporalContext(req Request, now time.Time) Request {
	c := make(map[string]string, len(req.Context)+4)
	for k, v := range req.Context {
		c[k] = v
	}
	if _, ok := c["current_datetime_utc"]; !ok {
		c["current_datetime_utc"] = now.Format(time.RFC3339)
	}
	if _, ok := c["current_date"]; !ok {
		d := now.Format(time.DateOnly)
		c["current_date"] = d
		c["current_date_start_hour"] = d + " 00"
		c["current_date_end_hour"] = d + " 23"
	}
	req.Context = c
	return req
}
