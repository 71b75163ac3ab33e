package chatbot

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/agentgraph/agentgraph/mcp/mcptool"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/provider"
	"github.com/agentgraph/agentgraph/agent/server/guard"
	"github.com/agentgraph/agentgraph/examples/chatbot/offline"
	"github.com/agentgraph/agentgraph/examples/internal/datadir"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/memory"
	memsqlite "github.com/agentgraph/agentgraph/memory/sqlite"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/jackc/pgx/v5/pgxpool"
)

// Version is the bot's version, reported by /health and self_info.
const Version = "0.1.0"

// Bot is the reference chatbot: a chat graph over a model client, an MCP
// manager, operators and conversation memory. It is safe
// for concurrent use. Close it to release its servers and stores.
type Bot struct {
	cfg       Config
	log       *zap.Logger
	demo      bool
	client    *agent.Client
	manager   *mcp.Manager
	mcpReg    *mcp.Registry
	bundled   []string // the bundled MCP servers that run
	ops       *operator.Registry
	provider  *operator.Provider
	convs     *memory.Conversations
	graph     *graph.Compiled[State]
	turnsRun  turnCancels        // running turns' cancel functions, for Close
	streams   streamRegistry     // resumable turns' SSE streams, by request id
	convIndex *conversationIndex // each principal's conversations, for the page
	pg        *pgxpool.Pool      // Config.Postgres: the pool every store shares; nil without
	cluster   *cluster           // Config.NATS: what instances share; nil without
	docs      *documents         // uploaded documents and their processing
	cog       *botCognition      // nil unless Config.Cognition is set

	// assembler builds the context operators ask for with their
	// ContextRequirements, for the tool subflow, the synthesizer and
	// workflow steps.
	assembler *memory.Assembler

	streamsRunning sync.WaitGroup // goroutines feeding SSE streams

	running *runSlots // a slot per running turn (Config.MaxRunningTurns); nil: no bound

	closers []func(ctx context.Context) error

	guard  *guard.Guard // the HTTP API's checks (newGuard)
	models []string     // the models a request may name (Config.Models)
	stores storeCheck   // the SQLite files' integrity, for /health

	mu     sync.Mutex
	closed bool
	active sync.WaitGroup
	turns  map[*turnEntry]struct{} // running turns, with their questions

	// background meters the model calls made outside a turn (meteredModel).
	background meter

	// roomChecked, set by tests only, is called by reserve once checkRoom
	// allowed principal's new conversation id, before the conversation is
	// listed: a test holds a turn there to show the lock of reserve.
	roomChecked func(id string)
	// lockWaiting, set by tests only, is called by reserve as it starts to
	// take the lock of principal's new conversations for conversation id.
	lockWaiting func(id string)
}

// turnEntry is a running turn: whose it is, its questions, and how Close
// stops it. Its fields but asking are set before it is registered; asking
// is guarded by Bot.mu.
type turnEntry struct {
	principal string
	elicit    *operator.Elicitations
	cancel    context.CancelCauseFunc
	asking    int // questions waiting for an answer
	// schemas holds the schema of each question waiting for a structured
	// answer, by elicitation id, to check answers before delivering them.
	schemas map[string]json.RawMessage
}

// New builds a bot from cfg: it starts the model (the offline demo model
// unless configured otherwise), registers the MCP servers (connected on
// first use), opens the stores and compiles the chat graph.
func New(ctx context.Context, cfg Config) (_ *Bot, err error) {
	cfg = cfg.withDefaults()
	if err := cfg.checkBounds(); err != nil {
		return nil, err
	}
	b := &Bot{cfg: cfg, log: cfg.Logger, turns: map[*turnEntry]struct{}{},
		streams: streamRegistry{max: cfg.MaxResumableTurns, linger: cfg.ResumeLinger}}
	defer func() {
		if err != nil {
			_ = b.shutdown(context.WithoutCancel(ctx))
		}
	}()
	if b.guard, err = b.newGuard(); err != nil {
		return nil, err
	}
	if err := b.startModels(); err != nil {
		return nil, err
	}
	if err := b.allowModels(); err != nil {
		return nil, err
	}
	b.stores.dir = cfg.DataDir
	if err := b.startMCP(); err != nil {
		return nil, err
	}
	b.ops = operator.NewRegistry(operator.Deps{Models: operator.AliasModels(b.turnModel()), Logger: cfg.Logger})
	if err := b.registerBuiltins(ctx); err != nil {
		return nil, err
	}
	if cfg.RegisterOperators != nil {
		if err := cfg.RegisterOperators(b.ops); err != nil {
			return nil, fmt.Errorf("chatbot: RegisterOperators: %w", err)
		}
	}
	local := operator.NewLocalRegistry()
	err = registerLocalTools(local, about{
		Name: "agentgraph chatbot", Version: Version,
		Description: "A reference chatbot built with agentgraph.",
		Capabilities: []string{"answer from the knowledge base", "search the web", "calculate", "run code", "draw charts",
			"book a product demo", "plan multi-step research"},
		Limitations: []string{"remember anything outside the conversations I keep", "write text of my own in demo mode: my answers follow rules and quote their sources"},
	}, b.ops)
	if err != nil {
		return nil, fmt.Errorf("chatbot: registering local tools: %w", err)
	}
	if err := b.openStores(ctx); err != nil {
		return nil, err
	}
	if err := b.openCluster(ctx); err != nil {
		return nil, err
	}
	b.assembler = newAssembler(b.convs, cfg)
	if err := b.openDocuments(ctx, local); err != nil {
		return nil, err
	}
	if err := b.openCognition(ctx); err != nil {
		return nil, err
	}
	b.provider = operator.NewProvider(operator.ProviderConfig{Local: local, Operators: b.ops, MCP: mcptool.Catalog(b.mcpReg), Assembler: b.assembler})
	if err := serveTools(b.assembler, b.provider); err != nil {
		return nil, err
	}
	if err := checkRequirements(b.ops, b.assembler); err != nil {
		return nil, err
	}
	if err := b.checkOperatorTools(ctx); err != nil {
		return nil, err
	}
	b.graph, err = buildGraph(b)
	if err != nil {
		return nil, err
	}
	if b.demo {
		b.log.Info("chatbot: DEMO MODE: answers come from the offline rule-based model; set OPENAI_API_KEY, ANTHROPIC_API_KEY or OLLAMA_HOST for a real one")
	}
	return b, nil
}

// Demo reports whether the bot runs on the offline demo model.
func (b *Bot) Demo() bool { return b.demo }

// Graph returns the compiled chat graph, for inspection (Mermaid, state).
func (b *Bot) Graph() *graph.Compiled[State] { return b.graph }

func (b *Bot) startModels() error {
	err := b.startModel()
	if n := b.cfg.MaxRunningTurns; n > 0 || (n == 0 && b.demo && b.localTools()) {
		if n == 0 {
			// One CPU is left to accepting requests and streaming events.
			n = max(1, runtime.GOMAXPROCS(0)-1)
		}
		b.running = newRunSlots(n)
	}
	return err
}

// localTools reports whether every MCP server runs in-process, so that a
// turn on the offline model only uses the CPU.
func (b *Bot) localTools() bool {
	if b.cfg.MCPConfigPath != "" {
		return false
	}
	for _, s := range b.cfg.MCPServers {
		if s.InProcess == nil {
			return false
		}
	}
	return true
}

func (b *Bot) startModel() error {
	cfg := b.cfg
	switch {
	case cfg.Model != nil && !cfg.Offline:
		c, err := agent.New(agent.Config{Model: cfg.Model, Logger: cfg.Logger})
		if err != nil {
			return fmt.Errorf("chatbot: model client: %w", err)
		}
		b.client = c
		return nil
	case cfg.Agent != nil && !cfg.Offline:
		ac := *cfg.Agent
		if ac.Logger == nil {
			ac.Logger = cfg.Logger
		}
		c, err := agent.New(ac)
		if err != nil {
			return fmt.Errorf("chatbot: model client: %w", err)
		}
		b.client = c
		return nil
	case !cfg.Offline:
		ac, err := agent.ConfigFromEnv()
		if err != nil {
			return fmt.Errorf("chatbot: reading the model configuration from the environment: %w", err)
		}
		if ac.OpenAI != nil || ac.Anthropic != nil || ac.Ollama != nil {
			ac.Logger = cfg.Logger
			c, err := agent.New(ac)
			if err != nil {
				return fmt.Errorf("chatbot: model client: %w", err)
			}
			b.client = c
			return nil
		}
	}
	return b.startOffline()
}

// startOffline calls the offline model directly as the model.Model of the
// provider "openai", which the aliases name: a demo model needs no wire,
// and JSON both ways through langchaingo's OpenAI client cost about a sixth
// of a demo turn's CPU. The client's registry, aliases, resilience policy
// and usage accounting run as with a real provider; the real providers'
// path (langchaingo's clients over HTTP) is the one Config.Agent or the
// environment selects.
func (b *Bot) startOffline() error {
	b.demo = true
	m := offline.New(offline.Config{})
	reg := agent.DefaultRegistry()
	aliases := fmt.Sprintf("haiku=openai:%[1]s,sonnet=openai:%[1]s,opus=openai:%[1]s,thinking=openai:%[1]s", offline.DefaultName)
	if err := agent.RegisterAliases(reg, aliases); err != nil {
		return fmt.Errorf("chatbot: offline aliases: %w", err)
	}
	c, err := agent.New(agent.Config{
		Registry:  reg,
		Providers: map[string]model.Model{provider.NameOpenAI: m},
		Logger:    b.log,
	})
	if err != nil {
		return fmt.Errorf("chatbot: offline model client: %w", err)
	}
	b.client = c
	return nil
}

func (b *Bot) startMCP() error {
	m, err := mcp.NewManager(mcp.ManagerConfig{Logger: b.log, ClientName: "agentgraph-chatbot", ClientVersion: Version})
	if err != nil {
		return fmt.Errorf("chatbot: MCP manager: %w", err)
	}
	b.manager = m
	var servers []mcp.Server
	bundled, err := b.bundledServers()
	if err != nil {
		return err
	}
	for _, s := range bundled {
		srv, err := s.New()
		if err != nil {
			return fmt.Errorf("chatbot: bundled MCP server %s: %w", s.Name, err)
		}
		servers = append(servers, mcp.Server{Name: s.Name, InProcess: srv})
		b.bundled = append(b.bundled, s.Name)
	}
	if b.cfg.MCPConfigPath != "" {
		extra, err := mcp.LoadConfig(b.cfg.MCPConfigPath)
		if err != nil {
			return fmt.Errorf("chatbot: MCPConfigPath: %w", err)
		}
		servers = append(servers, extra...)
	}
	servers = append(servers, b.cfg.MCPServers...)
	if err := m.Add(servers...); err != nil {
		return fmt.Errorf("chatbot: MCP servers: %w", err)
	}
	b.mcpReg, err = mcp.NewRegistry(mcp.RegistryConfig{Manager: m, Logger: b.log})
	if err != nil {
		return fmt.Errorf("chatbot: MCP registry: %w", err)
	}
	return nil
}

// ownFiles reports the files the bot keeps in DataDir: its SQLite
// databases with their journals.
var ownFiles = datadir.SQLiteFiles("conversations.db", "documents.db", "cognition.db")

// privateDir makes the data directory dir accessible by its owner only,
// since its files hold every principal's conversations and documents
// (datadir.Private, with the bot's own files). chmod is os.Chmod but in
// tests.
func privateDir(dir string, log *zap.Logger, chmod func(string, os.FileMode) error) error {
	return datadir.Private(dir, ownFiles, "chatbot: DataDir", log, chmod)
}

// privateFile makes the SQLite file at path readable by its owner only
// (datadir.PrivateFile). chmod is os.Chmod but in tests.
func privateFile(path string, log *zap.Logger, chmod func(string, os.FileMode) error) error {
	return datadir.PrivateFile(path, "chatbot: DataDir", log, chmod)
}

// openStores opens the conversation store and the conversation list.
// There is no checkpoint store: each turn is a run of its own that nothing
// resumes (see runTurn), so its checkpoints would be written and never read.
func (b *Bot) openStores(ctx context.Context) error {
	var store memory.Store
	if b.cfg.Postgres != "" {
		var err error
		if store, err = b.openPostgres(ctx); err != nil {
			return err
		}
	} else if dir := b.cfg.DataDir; dir != "" {
		// The stores hold every principal's conversations: for the
		// service's user only.
		if err := privateDir(dir, b.log, os.Chmod); err != nil {
			return err
		}
		if err := privateFile(filepath.Join(dir, "conversations.db"), b.log, os.Chmod); err != nil {
			return err
		}
		ms, err := memsqlite.New(ctx, memsqlite.Config{Path: filepath.Join(dir, "conversations.db"), Logger: b.log})
		if err != nil {
			return fmt.Errorf("chatbot: conversation store: %w", err)
		}
		b.closers = append(b.closers, func(context.Context) error { return ms.Close() })
		items, err := memsqlite.NewItems(ctx, memsqlite.Config{Path: filepath.Join(dir, "conversations.db"), Logger: b.log})
		if err != nil {
			return fmt.Errorf("chatbot: conversation list: %w", err)
		}
		b.closers = append(b.closers, func(context.Context) error { return items.Close() })
		store = ms
		b.convIndex = &conversationIndex{items: items, log: b.log}
	} else {
		store = memory.NewInMemoryStore()
		// The list forgets its least recently used entries when full.
		b.convIndex = &conversationIndex{items: memory.NewInMemoryItems(memory.InMemoryItemsConfig{}), log: b.log}
	}
	b.forgetWithList(store)
	convs, err := memory.NewConversations(memory.ConversationConfig{
		Store:      store,
		Window:     b.cfg.Window,
		Summarizer: &memory.LLMSummarizer{Model: b.turnModel(), ModelName: b.cfg.FastModel},
		Logger:     b.log,
	})
	if err != nil {
		return fmt.Errorf("chatbot: conversations: %w", err)
	}
	b.convs = convs
	return nil
}

// forgetWithList makes the conversation list delete from store the
// conversation of each entry it forgets, to prune a principal's list or
// to make room in a full in-memory list: kept, it would be neither
// listed, nor counted against Config.MaxConversations, nor deletable
// (DELETE names a listed conversation), and the store would grow
// without bound. Each delete is bounded (see
// conversationIndex.forgetTimeout), and goes on should the turn that
// prunes end meanwhile.
//
// A conversation with a turn running or waiting on this bot keeps its
// entry and its messages: the turn would go on with its history gone, on
// a conversation neither listed nor counted; a turn of a conversation
// being forgotten waits until it is, then starts it anew (see
// turnCancels.track). With Config.Postgres, a turn running on another
// instance is not seen: it refreshed its conversation's entry as it was
// admitted, under the conversation's lock, before it loads the
// conversation (see Bot.runTurn), and an entry used since the list read
// it is kept (see conversationIndex.drop). Should that turn refresh the
// entry after the list's check, the list forgets the conversation all
// the same: the turn goes on with the history it finds (none, unless it
// loaded it before the messages went) and stores its exchange, on a
// conversation listed again by the refresh if it came after the entry's
// delete, otherwise unlisted until its next turn.
func (b *Bot) forgetWithList(store memory.Store) {
	b.convIndex.forgotten = func(ctx context.Context, ns []string, id string) {
		// The entry is gone: its messages go too, even should the turn
		// that prunes end now.
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.convIndex.forgetTimeout())
		defer cancel()
		if err := store.Delete(ctx, scoped(principalOf(ns), id)); err != nil {
			b.log.Warn("chatbot: deleting a conversation the list forgot failed", zap.String("conversation_id", id), zap.Error(err))
		}
	}
	b.convIndex.exclusive = func(ns []string, id string, forget func()) bool {
		return b.turnsRun.unlessTracked(scoped(principalOf(ns), id), forget)
	}
}

// allowModels checks Config.Models against the model registry and keeps
// them, without repeats, as the models requests may name.
func (b *Bot) allowModels() error {
	for _, m := range b.cfg.Models {
		if slices.Contains(b.models, m) {
			continue
		}
		if _, ok := b.client.Registry().Lookup(m); !ok && !strings.Contains(m, ":") {
			return fmt.Errorf("chatbot: Config.Models: %q is not a model; use aliases of %s or provider:model", m, strings.Join(b.client.Registry().Names(), ", "))
		}
		b.models = append(b.models, m)
	}
	return nil
}

// errShutdown ends a turn that waits for an answer when Close begins: no
// one is expected to answer a server that is going away.
var errShutdown = fmt.Errorf("%w: the server is shutting down; the turn stopped while waiting for an answer to its question, ask again later", ErrClosed)

// Close stops accepting turns, ends at once the turns waiting for a
// person to answer a question (their streams get an error event), waits
// for the other turns in flight until ctx ends (then cancels them), shuts
// the MCP manager down and closes the stores.
func (b *Bot) Close(ctx context.Context) error {
	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil
	}
	b.closed = true
	for t := range b.turns {
		if t.asking > 0 {
			t.cancel(errShutdown)
		}
	}
	b.mu.Unlock()
	drained := make(chan struct{})
	go func() {
		b.active.Wait()
		close(drained)
	}()
	select {
	case <-drained:
	case <-ctx.Done():
		b.turnsRun.cancelAll(fmt.Errorf("%w: the server is shutting down and the turn did not finish in time", ErrClosed))
		<-drained
	}
	b.streamsRunning.Wait()
	b.streams.close()
	return b.shutdown(ctx)
}

// mcpCleanupWait bounds how long Close waits, after its ctx ended, for the
// MCP manager's cleanup left to the background: reaping killed
// subprocesses (1 s each) and closing HTTP clients (5 s each), in parallel.
const mcpCleanupWait = 10 * time.Second

// awaitMCP waits, for at most mcpCleanupWait, for the cleanup a Shutdown
// whose ctx ended left to the background.
func awaitMCP(ctx context.Context, m *mcp.Manager) error {
	wait, cancel := context.WithTimeout(context.WithoutCancel(ctx), mcpCleanupWait)
	defer cancel()
	if err := m.Shutdown(wait); err != nil {
		return fmt.Errorf("chatbot: MCP servers still closing after a further %v: %w", mcpCleanupWait, err)
	}
	return nil
}

func (b *Bot) shutdown(ctx context.Context) error {
	var errs []error
	if b.manager != nil {
		if err := b.manager.Shutdown(ctx); err != nil && !errors.Is(err, mcp.ErrShutdown) {
			errs = append(errs, fmt.Errorf("chatbot: MCP shutdown: %w", err))
			if ctx.Err() != nil {
				// Shutdown killed the servers' subprocesses: wait a bounded
				// while for them to be reaped, and for the clients to close,
				// so that the program does not exit before.
				if err := awaitMCP(ctx, b.manager); err != nil {
					errs = append(errs, err)
				}
			}
		}
	}
	for i := len(b.closers) - 1; i >= 0; i-- {
		if err := b.closers[i](ctx); err != nil {
			errs = append(errs, err)
		}
	}
	b.closers = nil
	return errors.Join(errs...)
}

// begin registers a turn; it fails after Close.
func (b *Bot) begin() error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.closed {
		return ErrClosed
	}
	b.active.Add(1)
	return nil
}

// turnCancels remembers the cancel functions of running turns, with the
// thread of each turn's conversation ("" for what belongs to none), for
// Close and for DeleteConversation; and the threads the conversation list
// is forgetting (see unlessTracked), whose turns wait in track.
type turnCancels struct {
	mu      sync.Mutex // guards cancels and forgetting
	cancels map[*context.CancelCauseFunc]string
	// forgetting holds, by thread, a channel closed once the list has
	// forgotten the thread's conversation: one entry per forget under
	// way, each held for a bounded time (see
	// conversationIndex.forgetTimeout).
	forgetting map[string]chan struct{}
}

// track remembers cancel, of a turn of thread whose context is ctx, until
// the returned function is called. Should the conversation list be
// forgetting thread's conversation (see unlessTracked), track waits until
// it has, so that the turn finds the conversation gone rather than losing
// its history part-way; it fails with ctx's cause, untracked, should ctx
// end first (cancel, tracked meanwhile, ends it for Close and
// DeleteConversation).
func (k *turnCancels) track(ctx context.Context, cancel *context.CancelCauseFunc, thread string) (func(), error) {
	k.mu.Lock()
	if k.cancels == nil {
		k.cancels = map[*context.CancelCauseFunc]string{}
	}
	k.cancels[cancel] = thread
	forgetting := k.forgetting[thread]
	k.mu.Unlock()
	untrack := func() {
		k.mu.Lock()
		delete(k.cancels, cancel)
		k.mu.Unlock()
	}
	if forgetting != nil {
		select {
		case <-forgetting:
		case <-ctx.Done():
			untrack()
			return nil, context.Cause(ctx)
		}
	}
	return untrack, nil
}

// cancelThread cancels, with cause, the tracked turns of thread (the one
// running and those waiting for its lock) and returns how many.
func (k *turnCancels) cancelThread(thread string, cause error) int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := 0
	for c, t := range k.cancels {
		if t == thread {
			(*c)(cause)
			n++
		}
	}
	return n
}

// unlessTracked runs f, unless a turn of thread is tracked or thread is
// being forgotten already, and reports whether it ran f. The turns of
// thread tracked while f runs wait in track until f returns; other turns
// are not held up, so f may take its time (a slow store), bounded by its
// own context.
func (k *turnCancels) unlessTracked(thread string, f func()) bool {
	k.mu.Lock()
	for _, t := range k.cancels {
		if t == thread {
			k.mu.Unlock()
			return false
		}
	}
	if _, ok := k.forgetting[thread]; ok {
		k.mu.Unlock()
		return false
	}
	if k.forgetting == nil {
		k.forgetting = map[string]chan struct{}{}
	}
	done := make(chan struct{})
	k.forgetting[thread] = done
	k.mu.Unlock()
	defer func() {
		k.mu.Lock()
		delete(k.forgetting, thread)
		k.mu.Unlock()
		close(done)
	}()
	f()
	return true
}

func (k *turnCancels) cancelAll(cause error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for c := range k.cancels {
		(*c)(cause)
	}
}
