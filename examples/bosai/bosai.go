package bosai

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"iter"
	"net/http"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/calculator"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/knowledge"
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
	ErrEmptyQuestion = errors.New("bosai: Request.Question is empty; ask something")
)

// DemoAPIBase is the base URL the API agent calls when Config.HTTPClient is
// nil: the in-process DemoAPI answers it.
const DemoAPIBase = "http://acme-api.example"

// Config configures a Bot. The zero Config runs on the model configured in
// the environment (agent.ConfigFromEnv), or offline when there is none.
type Config struct {
	// Client is the language-model client of the planner, the agents and
	// the composer. Nil means a client from agent.ConfigFromEnv, or one on
	// NewOfflineModel when the environment configures no provider.
	Client *agent.Client
	// Offline forces the offline model when Client is nil, whatever the
	// environment says.
	Offline bool
	// HTTPClient is the API agent's HTTP client. Nil means a client whose
	// transport serves DemoAPI in this process.
	HTTPClient *http.Client
	// APIBaseURL is the base URL of the API agent's calls. Empty means
	// DemoAPIBase.
	APIBaseURL string
	// HTTPPolicy is the resilience policy of the API agent's HTTP calls.
	// Nil means 3 attempts with backoff from 200 ms to 2 s for 5xx, 429 and
	// network errors, and 10 s per attempt.
	HTTPPolicy *resilience.Config
	// MCP is the manager of the MCP servers the agents call: "knowledge"
	// (search_knowledge) and "calculator" (run_code). Nil means a manager,
	// owned and shut down by the Bot, with the chatbot's bundled servers
	// in this process.
	MCP *mcp.Manager
	// Checkpointer saves every run's steps, one thread per run. Nil means
	// checkpoint.NewMemory().
	Checkpointer checkpoint.Saver
	// MaxConcurrency bounds the agents running at once. Zero means no bound.
	MaxConcurrency int
	// Logger receives the graph's, the model client's and the MCP
	// manager's logs. Nil means no logging.
	Logger *zap.Logger
}

// Bot is Bos-AI: a planner, specialist agents run in parallel and a
// composer, as one graph. It is safe for concurrent use.
type Bot struct {
	client     *agent.Client
	manager    *mcp.Manager
	ownsMCP    bool
	http       *http.Client
	apiBase    string
	httpPolicy *resilience.Policy[[]byte]
	graph      *graph.Compiled[State]

	mu     sync.Mutex
	closed bool
	runs   sync.WaitGroup
}

// New builds a Bot. It connects to nothing yet: MCP servers are started on
// first use.
func New(cfg Config) (*Bot, error) {
	log := cfg.Logger
	if log == nil {
		log = zap.NewNop()
	}
	b := &Bot{client: cfg.Client, http: cfg.HTTPClient, apiBase: cmp.Or(cfg.APIBaseURL, DemoAPIBase)}
	if b.client == nil {
		c, err := defaultClient(cfg.Offline, log)
		if err != nil {
			return nil, err
		}
		b.client = c
	}
	if b.http == nil {
		b.http = &http.Client{Transport: handlerTransport{DemoAPI()}}
	}
	pc := resilience.Config{Name: "http:api", Timeout: 10 * time.Second,
		Retry: resilience.RetryConfig{MaxAttempts: 3, BaseDelay: 200 * time.Millisecond, MaxDelay: 2 * time.Second, Jitter: 0.2}}
	if cfg.HTTPPolicy != nil {
		pc = *cfg.HTTPPolicy
	}
	p, err := resilience.New[[]byte](pc, resilience.WithLogger(log))
	if err != nil {
		return nil, fmt.Errorf("bosai: Config.HTTPPolicy: %w", err)
	}
	b.httpPolicy = p

	b.manager = cfg.MCP
	if b.manager == nil {
		if b.manager, err = bundledMCP(log); err != nil {
			return nil, err
		}
		b.ownsMCP = true
	}
	saver := cfg.Checkpointer
	if saver == nil {
		saver = checkpoint.NewMemory()
	}
	opts := []graph.CompileOption{graph.WithCheckpointer(saver), graph.WithLogger(log)}
	if cfg.MaxConcurrency > 0 {
		opts = append(opts, graph.WithMaxConcurrency(cfg.MaxConcurrency))
	}
	if b.graph, err = b.build(opts...); err != nil {
		b.closeMCP(context.Background())
		return nil, err
	}
	return b, nil
}

func defaultClient(offline bool, log *zap.Logger) (*agent.Client, error) {
	cfg, err := agent.ConfigFromEnv()
	if err != nil {
		return nil, fmt.Errorf("bosai: model configuration: %w", err)
	}
	cfg.Logger = log
	if offline || (cfg.OpenAI == nil && cfg.Anthropic == nil && cfg.Ollama == nil) {
		cfg = agent.Config{Model: NewOfflineModel(), Logger: log}
	}
	return agent.New(cfg)
}

func bundledMCP(log *zap.Logger) (*mcp.Manager, error) {
	kb, err := knowledge.New(knowledge.Config{})
	if err != nil {
		return nil, err
	}
	calc, err := calculator.New(calculator.Config{})
	if err != nil {
		return nil, err
	}
	m, err := mcp.NewManager(mcp.ManagerConfig{Logger: log, ClientName: "bosai"})
	if err != nil {
		return nil, err
	}
	if err := m.Add(mcp.Server{Name: "knowledge", InProcess: kb}, mcp.Server{Name: "calculator", InProcess: calc}); err != nil {
		m.Shutdown(context.Background())
		return nil, err
	}
	return m, nil
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
// the loop when the caller breaks out of it.
func (b *Bot) Run(ctx context.Context, req Request) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		if strings.TrimSpace(req.Question) == "" {
			yield(Event{}, ErrEmptyQuestion)
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
		thread := checkpoint.NewID()
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
		yield(Event{Response: &resp}, nil)
	}
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
// (Response.Thread).
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

func (b *Bot) closeMCP(ctx context.Context) error {
	if !b.ownsMCP {
		return nil
	}
	if err := b.manager.Shutdown(ctx); err != nil && !errors.Is(err, mcp.ErrShutdown) {
		return err
	}
	return nil
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
