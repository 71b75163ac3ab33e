package chatbot

import (
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/agentgraph/agentgraph/agent/model"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/operator"
)

// Defaults of Config.
const (
	DefaultMaxIterations = supervisor.DefaultMaxIterations
	DefaultMaxBodyBytes  = 1 << 20
	DefaultMaxMessageLen = 8000
	DefaultTurnTimeout   = 5 * time.Minute
	// DefaultAnswerTimeout bounds how long a turn waits for a person to
	// answer a tool's question.
	DefaultAnswerTimeout = 2 * time.Minute
	// DefaultMaxPendingQuestions caps the questions waiting for one
	// principal's answers. It is below the default concurrency limit of an
	// MCP server (mcp.ManagerConfig.MaxConcurrent, 10).
	DefaultMaxPendingQuestions = 5
	// DefaultBodyTimeout bounds how long a client may take to send a
	// request's body.
	DefaultBodyTimeout = 30 * time.Second
	// DefaultMaxStreams caps the chat streams one principal holds open.
	DefaultMaxStreams = 64
	// DefaultMaxConversations caps the conversations one principal keeps:
	// as many as GET /api/v1/conversations lists, so that each is listed
	// and can be deleted.
	DefaultMaxConversations = maxListedConversations
	// DefaultMaxConversationTurns caps the turns one conversation keeps.
	// With DefaultMaxMessageLen, a conversation's questions take at most
	// about 4 MB, and its answers are as long as the writer model makes
	// them.
	DefaultMaxConversationTurns = 500
	// DefaultMaxResumableTurns, DefaultResumeLinger and DefaultResumeReplay
	// bound the streams kept for resumable turns.
	DefaultMaxResumableTurns = 1000
	DefaultResumeLinger      = time.Minute
	DefaultResumeReplay      = 1024
	// DefaultResumeWait is Config.ResumeWait when it is zero: as long as
	// a client has to fetch the rest of a turn that ended
	// (DefaultResumeLinger).
	DefaultResumeWait = time.Minute
	// DefaultWriteStall is Config.WriteStall when it is zero.
	DefaultWriteStall = 30 * time.Second
	// DefaultInstanceLease is Config.InstanceLease when it is zero.
	DefaultInstanceLease = 10 * time.Second
	// DefaultSupervisorModel, DefaultWriterModel and DefaultFastModel are
	// the model aliases of the supervisor (decisions and reflection), of the
	// final answer, and of quick jobs (query rewriting, summaries).
	DefaultSupervisorModel = "sonnet"
	DefaultWriterModel     = "sonnet"
	DefaultFastModel       = "haiku"
)

// Config configures a Bot. The zero value is a working demo: the offline
// model (or a real provider when OPENAI_API_KEY, ANTHROPIC_API_KEY or
// OLLAMA_HOST is set), the bundled MCP servers in-process, and
// conversations kept in memory.
type Config struct {
	// Agent configures the language models. Nil means agent.ConfigFromEnv,
	// and, when the environment names no provider, the offline demo model
	// served in-process behind the OpenAI wire protocol.
	Agent *agent.Config
	// Offline forces the offline demo model even when the environment
	// names a provider. Agent and Model are then ignored.
	Offline bool
	// Model, when set, serves every model alias (a model of your own, or a
	// scripted one in tests). It wins over Agent and the environment.
	Model model.Model
	// SupervisorModel, WriterModel and FastModel are model aliases. Empty
	// means DefaultSupervisorModel, DefaultWriterModel, DefaultFastModel.
	SupervisorModel, WriterModel, FastModel string

	// MCPServers are MCP servers added to the bundled ones.
	MCPServers []mcp.Server
	// MCPConfigPath, when set, is an mcpServers JSON file (the common
	// shape, see mcp.LoadConfig) whose servers are added too.
	MCPConfigPath string
	// NoBundledServers leaves out the bundled knowledge, calculator and
	// websearch servers.
	NoBundledServers bool
	// BundledServers names the bundled MCP servers to run, of
	// "knowledge", "calculator" and "websearch" (mcpservers.Bundled).
	// Nil means all of them; NoBundledServers wins. The built-in
	// operators call a running bundled server's tools by their qualified
	// names ("knowledge__search_knowledge"), so another server with a
	// tool of the same name does not break them; one whose bundled server
	// is left out calls the bare name, and is left out itself when no
	// server offers it.
	BundledServers []string
	// RegisterOperators, when set, is called with the operator registry
	// after the built-in operators are registered, to add or replace
	// operators.
	RegisterOperators func(*operator.Registry) error

	// DataDir holds the SQLite databases (conversations.db and
	// documents.db, of which the bot must be the only writer, and
	// cognition.db with Cognition); it is created if missing, with mode
	// 0700, an existing one loses its group's and others' permissions
	// (0755 becomes 0700), and the files are readable by their owner only
	// (0600); a directory or file the service's user may not change keeps
	// its mode, with a warning. Empty means everything is kept in memory
	// and lost on Close. Postgres, when set, wins over it.
	DataDir string
	// Postgres, when set, is a PostgreSQL connection string
	// ("postgres://user@host:5432/db?sslmode=disable"): every store is
	// kept there instead of in DataDir (conversations and each
	// principal's conversation list, documents, and
	// cognition with its durable learning queue), and any number of
	// instances may share it. A conversation's turns then run one at a
	// time across the instances (a lease row per conversation, renewed
	// while its turn runs and free InstanceLease after its instance
	// died), and, without NATS, resumable turns are journaled in
	// PostgreSQL so that a client resumes them on any instance, and a
	// question's answer or a stop sent to any instance is relayed with
	// LISTEN/NOTIFY to the one running the turn (an answer of at most
	// about 7900 bytes: NOTIFY's limit; a larger one is refused with a
	// RequestError on "content" unless sent to that instance).
	Postgres string
	// PostgresSchema is the schema that holds the tables (created if
	// missing). Empty means the connection's search_path ("public").
	PostgresSchema string
	// PostgresLocks is ignored: conversation locks hold no connection.
	//
	// Deprecated: remove it; any number of turns may hold their locks.
	PostgresLocks int
	// NATS, when set with Postgres, is a NATS server URL
	// ("nats://127.0.0.1:4222", JetStream enabled) through which the
	// instances that share Postgres serve one set of conversations: a
	// resumable turn's events are kept in a JetStream stream, so that its
	// client resumes it on any instance; a question asked by a turn on
	// one instance is answered, and a turn stopped, through any other
	// (answers and stops are relayed over PostgreSQL without NATS)
	// (but GET /api/v1/elicitation/pending and [Bot.Pending] list only the
	// questions of the instance asked: the page finds a question in its
	// turn's stream); and a turn whose instance stops sending heartbeats
	// is reported failed to the clients following it elsewhere,
	// InstanceLease later.
	NATS string
	// TurnJournal chooses where resumable turns' events are kept for the
	// other instances: "nats" (a JetStream stream; needs NATS) or
	// "postgres" (tables chatbot_turns_* in Postgres, followed with
	// LISTEN/NOTIFY; needs Postgres). Empty means "nats" when NATS is
	// set, else "postgres" when Postgres is.
	TurnJournal string
	// NATSPrefix names the bot's NATS subjects and JetStream stream
	// (letters, digits, '_' and '-'). Instances that serve the same
	// conversations use the same prefix. Empty means "chatbot".
	NATSPrefix string
	// InstanceLease is how long an instance may go without a heartbeat
	// or lease renewal (sent every third of it) before clients following
	// its turns through another instance get an error event with code
	// "instance_lost"; it is also the lease of the conversation locks
	// (with Postgres): a dead instance's conversations take turns again
	// this long after. Zero means DefaultInstanceLease.
	InstanceLease time.Duration

	// MaxIterations caps the supervisor's decisions per turn. Zero means
	// DefaultMaxIterations.
	MaxIterations int
	// MaxBodyBytes caps a request body of the HTTP API. Zero means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxMessageLen caps a chat message, in bytes. Zero means
	// DefaultMaxMessageLen.
	MaxMessageLen int
	// TurnTimeout bounds one chat turn. Zero means DefaultTurnTimeout.
	TurnTimeout time.Duration
	// MaxRunningTurns bounds how many turns run at once; the others wait
	// after their first event (which goes out at once). A free slot goes to
	// the principal ([WithPrincipal]) that waits for one and holds the
	// fewest, among those to the one that last had a slot (or, new to
	// the queue, came) the longest ago, and to each principal's turns in
	// arrival order: one principal's many turns delay
	// another's by at most a turn per slot, not by all of them. A turn
	// waiting for a person to answer a question does not count; one
	// waiting for a tool call does. Zero means no bound with a real model
	// or an MCP server that is not in-process, whose turns mostly wait,
	// and runtime.GOMAXPROCS(0)-1 (at least 1) with the offline demo model
	// and in-process MCP servers, whose turns only use the CPU: running
	// more of them at once gains no throughput, and while every CPU is
	// busy with turns the network (new requests, first events) waits for
	// the Go scheduler's periodic poll, tens of milliseconds. Negative
	// means no bound.
	MaxRunningTurns int
	// MaxResumableTurns caps the resumable turns whose streams are kept:
	// running, or ended less than ResumeLinger ago. When it is reached, the
	// stream of the turn that ended first makes room, the requesting
	// principal's own before another's; when every kept turn is running, a
	// new resumable turn gets 503. Zero means DefaultMaxResumableTurns.
	MaxResumableTurns int
	// ResumeLinger is how long a resumable turn's stream stays after the
	// turn ends, for a client to fetch what it missed. Zero means
	// DefaultResumeLinger.
	ResumeLinger time.Duration
	// ResumeReplay is how many of its latest events a resumable turn's
	// stream keeps for clients that reconnect (see sse.Config.Replay): a
	// client that fell further behind gets an events_lost error event.
	// While no client has read the oldest kept event, the turn waits, for
	// at most ResumeWait. Zero means DefaultResumeReplay.
	ResumeReplay int
	// ResumeWait bounds how long a resumable turn waits for a client to
	// read its events once ResumeReplay of them wait unread (its client
	// went away and has not resumed): past it the turn is stopped, which
	// frees its running slot (MaxRunningTurns) and its conversation, and a
	// client that resumes it later gets the kept events, then an error
	// event with code "no_reader" that says why. Zero means
	// DefaultResumeWait; negative means no bound but TurnTimeout. Events
	// written to the turn journal (with several instances) count as read:
	// a client may follow the turn on another instance.
	ResumeWait time.Duration
	// WriteStall bounds the progress of a chat stream (POST /api/v1/chat,
	// GET /api/v1/chat/stream/...) to its client: a client that reads
	// nothing for WriteStall (its connection's buffers are full) is
	// disconnected, which frees its share of MaxStreams. A long write
	// (a resumed stream's replay) goes out in pieces of 32 KiB, each
	// with WriteStall of its own, so a slow client that keeps reading
	// stays connected. A turn that is not resumable then ends, as when its client goes away; a resumable
	// one runs on, its events kept for a client that resumes (see
	// ResumeReplay). The turn's work does not wait for its writer while
	// its unwritten events fit its buffers (its queue of 256 events and
	// the stream's, ResumeReplay for a resumable turn), so its running
	// slot (MaxRunningTurns) and its conversation are free when the work
	// ends; beyond that it waits, a turn that is not resumable until its
	// writer is disconnected, a resumable one for ResumeWait at most. Zero means DefaultWriteStall; negative
	// means no bound but the response's (TurnTimeout and a minute).
	WriteStall time.Duration
	// Documents configures the documents users upload to a conversation.
	Documents DocumentConfig
	// Cognition, when set, turns on cognition: the bot learns about the
	// users named by requests' user_id, across conversations, and shows
	// what it learned to the supervisor and the writer. It costs a model
	// call per such turn, in the background. Nil (the default) means off.
	Cognition *CognitionConfig

	// Tokens maps bearer tokens to the principals they authenticate: a
	// request to the HTTP API with the header "Authorization: Bearer
	// TOKEN" acts as that principal. Each token has at least MinTokenLen
	// bytes; principals are ids like conversation ids, other than
	// LocalPrincipal. With Tokens or Authenticate set, every /api/ request
	// must authenticate (401 otherwise). With neither, every request is
	// LocalPrincipal's and the bot means to serve this machine only (the
	// open demo on 127.0.0.1): loopback Host names, and it refuses (403)
	// requests that show signs of coming from beyond: a peer address that
	// is not loopback, or a header a proxy adds (guard.ProxyHeaders) unless
	// every client address it names is loopback. A proxy on this machine
	// that adds no such header (nginx's plain proxy_pass) is not detected:
	// behind a proxy, turn on authentication.
	Tokens map[string]string
	// Authenticate, when set, authenticates a request that carries no
	// token of Tokens, with the host service's own scheme (a session
	// cookie, a proxy's header, mTLS): it returns the caller's principal,
	// or an error for a 401. Principals must be ids like conversation ids,
	// other than LocalPrincipal.
	Authenticate func(*http.Request) (principal string, err error)
	// AllowedHosts are the host names (Host header, port ignored) the HTTP
	// API serves besides the loopback names (localhost, 127.0.0.1, ::1),
	// which are always served; others get 421, which defeats DNS
	// rebinding. Empty means any host with authentication, and loopback
	// names only without. A name beyond loopback needs authentication
	// (Tokens or Authenticate): [New] refuses it otherwise.
	AllowedHosts []string
	// TrustLocalProxy, without authentication, serves requests through a
	// development proxy on this machine whose headers name loopback
	// clients only (X-Forwarded-For: 127.0.0.1); false (the default)
	// refuses every request that carries a proxy's header. The client can
	// forge these headers through a proxy that passes them on, so set it
	// only when the proxy in front is on this machine, serves it only, and
	// sets them itself (see guard.Config.TrustLocalProxy).
	TrustLocalProxy bool
	// Admins are the principals (of Tokens or Authenticate) who see every
	// principal's details in GET /health: the MCP servers' last errors,
	// which may quote any principal's tool arguments, and cognition's
	// patterns naming any principal's users and quoting failing tools'
	// errors. Other principals see the servers without their errors and
	// the patterns of their own users. Without authentication the one
	// principal, LocalPrincipal on this machine, sees everything.
	Admins []string
	// AllowedOrigins are the origins ("https://app.example.com") whose
	// pages may call the API from a browser besides the bot's own page;
	// other cross-origin requests get 403, which defeats CSRF.
	AllowedOrigins []string
	// Models are the model aliases a request's "model" may name. Empty
	// means SupervisorModel, WriterModel and FastModel. A request naming
	// another gets 400.
	Models []string
	// AnswerTimeout bounds how long a turn waits for a person to answer a
	// tool's question (holding its conversation meanwhile); the tool then
	// gets an error and the turn goes on without the answer. Zero means
	// DefaultAnswerTimeout.
	AnswerTimeout time.Duration
	// MaxPendingQuestions caps the tools' questions waiting for one
	// principal's answers at once (over all its turns on this instance).
	// A tool that asks one more gets an error naming this limit, which the
	// turn reports like any tool failure, and the turn goes on without the
	// answer.
	// Zero means DefaultMaxPendingQuestions; negative means no cap.
	MaxPendingQuestions int
	// BodyTimeout bounds how long a client may take to send a request
	// body to the HTTP API (408 after it). Zero means DefaultBodyTimeout.
	BodyTimeout time.Duration
	// MaxStreams caps the chat streams (POST /api/v1/chat and
	// /api/v1/chat/sync, GET /api/v1/chat/stream/...) one principal holds
	// open at once, and the resumable turns whose streams it holds
	// (running, connected or not, or ended less than ResumeLinger ago: its
	// turn that ended first makes room for a new one); more get 429. Zero
	// means DefaultMaxStreams. Without
	// authentication (one principal, the loopback demo) there is no such
	// limit.
	MaxStreams int

	// MaxConversations caps the conversations one principal keeps
	// (those with a turn, in its conversation list): a turn that would
	// start one more is refused (429 over HTTP, an error wrapping
	// ErrConversationLimit in Go) until the principal deletes one
	// (DELETE /api/v1/chat/{conversation_id}); nothing stored is dropped
	// to make room. A new conversation is counted and listed in one step,
	// under a lock of its principal's (shared by the instances of
	// Config.Postgres), as its turn is admitted, so that new
	// conversations started at once do not together pass the bound; a
	// turn that stops before it runs (no running slot, no tools) takes
	// its entry back. The count is of the principal's list entries: without
	// DataDir or Postgres, a list whose in-memory store is full (100,000
	// entries of all principals) forgets its least recently used entries
	// (see GET /api/v1/conversations), and deletes their conversations
	// with them (held in memory, they would stay there uncounted); a
	// list entry that could not be stored (logged) is missing too: such
	// a conversation stays stored but no longer counts, nor shows in the
	// list to be deleted, until its next turn lists it again. A list
	// that so grew past the 200 conversations it shows forgets, in every
	// store, its least recently used beyond 200, with their
	// conversations, but for those with a turn running or waiting on
	// the instance that prunes. Zero means DefaultMaxConversations;
	// it must be from 1 to 200, the conversations GET
	// /api/v1/conversations lists.
	MaxConversations int
	// MaxConversationTurns caps the turns one conversation keeps: a turn
	// of a conversation that holds that many is refused (429 over HTTP,
	// an error wrapping ErrConversationLimit in Go); start a new
	// conversation or delete this one. Zero means
	// DefaultMaxConversationTurns; it must not be negative.
	MaxConversationTurns int

	// Window is how many recent messages of a conversation the bot keeps
	// verbatim; older ones are summarised. Zero means memory.DefaultWindow.
	Window int

	// Logger receives the bot's logs. Nil means no logging.
	Logger *zap.Logger

	// Hooks observe the chat graph's runs, for tracing: pass
	// telemetry.Telemetry.Hooks (see cmd/chatbot, which sets them from the
	// OTEL_* variables).
	Hooks graph.Hooks
}

func (c Config) withDefaults() Config {
	if c.SupervisorModel == "" {
		c.SupervisorModel = DefaultSupervisorModel
	}
	if c.WriterModel == "" {
		c.WriterModel = DefaultWriterModel
	}
	if c.FastModel == "" {
		c.FastModel = DefaultFastModel
	}
	if c.MaxIterations == 0 {
		c.MaxIterations = DefaultMaxIterations
	}
	if c.MaxBodyBytes == 0 {
		c.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if c.MaxMessageLen == 0 {
		c.MaxMessageLen = DefaultMaxMessageLen
	}
	if c.TurnTimeout == 0 {
		c.TurnTimeout = DefaultTurnTimeout
	}
	if len(c.Models) == 0 {
		c.Models = []string{c.SupervisorModel, c.WriterModel, c.FastModel}
	}
	if c.AnswerTimeout == 0 {
		c.AnswerTimeout = DefaultAnswerTimeout
	}
	if c.MaxPendingQuestions == 0 {
		c.MaxPendingQuestions = DefaultMaxPendingQuestions
	}
	if c.BodyTimeout == 0 {
		c.BodyTimeout = DefaultBodyTimeout
	}
	if c.MaxStreams == 0 {
		c.MaxStreams = DefaultMaxStreams
	}
	if c.MaxConversations == 0 {
		c.MaxConversations = DefaultMaxConversations
	}
	if c.MaxConversationTurns == 0 {
		c.MaxConversationTurns = DefaultMaxConversationTurns
	}
	if c.MaxResumableTurns == 0 {
		c.MaxResumableTurns = DefaultMaxResumableTurns
	}
	if c.ResumeLinger == 0 {
		c.ResumeLinger = DefaultResumeLinger
	}
	if c.ResumeReplay == 0 {
		c.ResumeReplay = DefaultResumeReplay
	}
	if c.ResumeWait == 0 {
		c.ResumeWait = DefaultResumeWait
	}
	if c.WriteStall == 0 {
		c.WriteStall = DefaultWriteStall
	}
	if c.InstanceLease == 0 {
		c.InstanceLease = DefaultInstanceLease
	}
	if c.NATSPrefix == "" {
		c.NATSPrefix = "chatbot"
	}
	if c.Logger == nil {
		c.Logger = zap.NewNop()
	}
	return c
}

// checkBounds refuses the per-principal bounds of c (after withDefaults)
// that cannot hold.
func (c Config) checkBounds() error {
	var errs []error
	if c.MaxConversations < 1 || c.MaxConversations > maxListedConversations {
		errs = append(errs, fmt.Errorf("chatbot: Config.MaxConversations is %d; use 0 for the default (%d) or 1 to %d, the conversations a principal's list shows",
			c.MaxConversations, DefaultMaxConversations, maxListedConversations))
	}
	if c.MaxConversationTurns < 1 {
		errs = append(errs, fmt.Errorf("chatbot: Config.MaxConversationTurns is %d; use 0 for the default (%d) or a positive count",
			c.MaxConversationTurns, DefaultMaxConversationTurns))
	}
	return errors.Join(errs...)
}
