package server

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"go.uber.org/zap"
	"golang.org/x/sync/singleflight"

	"github.com/agentgraph/agentgraph/agent/server/guard"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/internal/utf8clip"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/memory/jsonnum"
)

const timeFormat = "2006-01-02T15:04:05.000000Z07:00"

// Defaults of [Config].
const (
	DefaultMaxBodyBytes = 1 << 20
	DefaultMaxRunEvents = 10000
	DefaultRunTimeout   = 30 * time.Minute
	DefaultHeartbeat    = 5 * time.Second
	DefaultLease        = 30 * time.Second
	// DefaultSweepInterval is how often an instance looks for runs no
	// instance executes.
	DefaultSweepInterval = time.Second
	// DefaultRunRetention is how long an ended run keeps its event log
	// and kwargs.
	DefaultRunRetention  = 24 * time.Hour
	DefaultMaxQueuedRuns = 100
	// DefaultMaxRunRecords is the default of Config.MaxRunRecords.
	DefaultMaxRunRecords = 1000
	DefaultMaxThreads    = 10000
	// DefaultMaxAssistants is the default of Config.MaxAssistants.
	DefaultMaxAssistants = 1000
	// DefaultMaxAssistantBytes is the default of Config.MaxAssistantBytes.
	DefaultMaxAssistantBytes = 64 << 20
	// DefaultMaxActiveRuns is the default of Config.MaxActiveRuns.
	DefaultMaxActiveRuns = 128
	// DefaultMaxItems is the default of Config.MaxItems when
	// Config.Authenticate is set: a tenth of memory.DefaultMaxRecords, the
	// bound of memory.NewInMemoryItems' store.
	DefaultMaxItems = 10_000
	// DefaultMaxCopyCheckpoints is the default of Config.MaxCopyCheckpoints.
	DefaultMaxCopyCheckpoints = 10000
	// DefaultMaxSweptRuns is the default of Config.MaxSweptRuns.
	DefaultMaxSweptRuns = 64
	// DefaultBodyTimeout is the default of Config.BodyTimeout.
	DefaultBodyTimeout = guard.DefaultBodyTimeout
	// DefaultMaxStreams is the default of Config.MaxStreams.
	DefaultMaxStreams = guard.DefaultMaxStreams
	// DefaultStreamWriteTimeout is the default of Config.StreamWriteTimeout.
	DefaultStreamWriteTimeout = 30 * time.Second
	// DefaultWriteTimeout is the default of Config.WriteTimeout.
	DefaultWriteTimeout = 30 * time.Second
	// DefaultMaxReads is the default of Config.MaxReads.
	DefaultMaxReads = 8
	// DefaultMaxResponseBytes is the default of Config.MaxResponseBytes.
	DefaultMaxResponseBytes = 16 << 20
	// DefaultMaxCopyBytes is the default of Config.MaxCopyBytes.
	DefaultMaxCopyBytes = 64 << 20
	// DefaultMaxItemBytes is the default of Config.MaxItemBytes when
	// Config.Authenticate is set.
	DefaultMaxItemBytes = 100 << 20
	// DefaultMaxThreadBytes is the default of Config.MaxThreadBytes: 1
	// GiB, far more than a principal's conversations take, few enough
	// that one principal cannot fill a disk.
	DefaultMaxThreadBytes = 1 << 30
)

// Version is reported by GET /info.
const Version = "0.1.0"

// Config configures a [Server]. The zero Config serves loopback clients
// only, keeps threads in memory and checkpoints in memory.
type Config struct {
	// Store keeps threads, runs and run event logs. Nil means a new
	// [MemoryStore]; [OpenSQLite] gives a durable one.
	Store Store
	// Checkpointer is the saver the registered graphs are compiled with
	// (see [Server.Checkpointer]); deleting a thread deletes its
	// checkpoints from it. Nil means checkpoint.NewMemory().
	Checkpointer checkpoint.Saver
	// Authenticate identifies the principal of a request, typically from
	// its x-api-key header (see [APIKeys]). An error answers 401 with the
	// error's text. Threads belong to the principal that created them:
	// another principal gets 404. Nil serves every request as the
	// anonymous principal "", and then only requests from loopback
	// addresses, to a loopback Host, that carry no proxy header (see
	// guard.ProxyHeaders: a reverse proxy on this machine would otherwise
	// pass every client it serves): set Authenticate before listening on
	// a network or behind a proxy.
	Authenticate func(r *http.Request) (principal string, err error)
	// AllowedOrigins lists the browser origins (scheme://host[:port]) that
	// may call the API, for CORS, compared as origins (scheme, host and
	// port, the scheme's default port when one names none), as package
	// guard compares them; a page of the origin a request is sent to is
	// allowed too. With Authenticate, pages served from loopback hosts
	// (http or https, any port) are allowed when the server is reached on
	// a loopback host (a development UI, which sends its key), their
	// requests reaching Authenticate without their Cookie header, as
	// those "*" alone allows do (below); without it, every page on this
	// machine could act as its local user, so only the API's own origin
	// and the listed ones are allowed.
	//
	// "*" allows any origin, and needs Authenticate (New refuses it
	// without: any site its user visits could drive the server): a page
	// of any site may then call the API with credentials it sends itself
	// (x-api-key, Authorization), as the preflighted request of a page
	// that sets them does. A request from an origin that only "*"
	// allows reaches Authenticate without its Cookie header, so that an
	// Authenticate that reads cookies (which the browser adds by itself)
	// does not let another site act as its visitor; an Authenticate that
	// trusts other credentials a browser adds by itself (HTTP
	// authentication it caches, TLS client certificates) must not be
	// combined with "*". A request carrying another Origin is refused
	// with 403, as is, whatever is listed, a request without Origin that
	// a browser marks Sec-Fetch-Site: cross-site (an <img>, a no-cors
	// GET: not a call of the API, which a page makes with fetch and its
	// Origin) and, without Authenticate, one it marks same-site (a page
	// of another port of this machine); with Authenticate, such a
	// same-site request reaches it without its Cookie header. Cookies
	// reach Authenticate only from the API's own and the listed origins.
	AllowedOrigins []string
	// MaxBodyBytes bounds request bodies; zero means DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// BodyTimeout bounds how long a request body may take to arrive, so
	// that a client sending it byte by byte does not hold a connection
	// and its goroutine for ever; past it the request is answered 408 and
	// its connection closed. Zero means DefaultBodyTimeout; negative
	// means no bound.
	BodyTimeout time.Duration
	// MaxStreams bounds the requests of one principal that wait on runs
	// at once: runs created with /runs/stream or /runs/wait, joined with
	// .../join or .../stream. One more is answered 429. Zero means
	// DefaultMaxStreams.
	MaxStreams int
	// StreamWriteTimeout bounds each write of an SSE stream (/runs/stream,
	// .../runs/{run_id}/stream): an event, a heartbeat. A client that
	// stops reading fills the connection's buffers, and the write that
	// then waits longer than this (by at most a quarter of it: the
	// deadline is renewed, to 5/4 of this from then, only when less than
	// this is left, not before each write) ends the stream, closing its connection
	// and giving back its slot of MaxStreams; the run goes on, and the
	// client can rejoin it with Last-Event-ID. (A stateless run whose
	// thread goes at its end, on_completion delete, cannot be rejoined:
	// it is cancelled, unless its on_disconnect is continue.) Zero means
	// DefaultStreamWriteTimeout; negative means no bound.
	StreamWriteTimeout time.Duration
	// WriteTimeout bounds each write of every other answer (a JSON
	// answer; the newlines and the result of /runs/wait): the server
	// writes an answer in pieces of at most 64 KiB, and the write of a
	// piece that then waits longer than this (by at most a quarter of it,
	// the deadline being renewed as for StreamWriteTimeout) ends the
	// answer and closes its connection. A client that stops reading a
	// large answer (a history of large states) so gives back, within
	// this, its slot of MaxReads or MaxStreams and the answer's bytes,
	// which it would otherwise hold until it reads or goes; a client
	// reading slower than 64 KiB per WriteTimeout loses its answer too.
	// Zero means DefaultWriteTimeout; negative means no bound.
	WriteTimeout time.Duration
	// MaxRunEvents bounds each run's event log; older events are dropped,
	// and a replay that asks for them is told so with an error event.
	// Zero means DefaultMaxRunEvents.
	MaxRunEvents int
	// RunTimeout bounds each run; a run that exceeds it ends with status
	// timeout. Zero means DefaultRunTimeout.
	RunTimeout time.Duration
	// Heartbeat is the interval of SSE comment heartbeats and of the
	// newlines /wait writes while it waits. Zero means DefaultHeartbeat.
	// Keep it well below the idle timeout of the clients and proxies
	// between (sse.FollowConfig.IdleTimeout is 1 minute by default): a
	// client drops a stream quiet for that long as dead and reconnects.
	Heartbeat time.Duration
	// Lease is how long a worker's claim on a run holds before it must be
	// renewed (the worker renews it at a third of that). Zero means
	// DefaultLease.
	Lease time.Duration
	// Items, when set, is served by the Store endpoints (/store/items,
	// /store/items/search, /store/namespaces): LangGraph's long-term
	// memory. With Authenticate set, each principal sees only the items it
	// put. There is no semantic index: a put's index false is accepted, a
	// list of fields to index refused with 422, and search's query is
	// memory.ItemQuery's plain text match.
	Items memory.Items
	// MaxItems bounds the items of one principal in Items (all its
	// namespaces, expired items not counted): putting a new item past it
	// answers 429, so that one principal cannot fill the store for the
	// others (a full store answers 507). Puts are counted under a lock
	// of this instance; instances that share an Items store may pass it
	// together, by one each. Without Authenticate every request is one
	// principal's: a bound set then bounds the whole store. Zero means
	// DefaultMaxItems with Authenticate and no bound without it;
	// negative means no bound.
	MaxItems int
	// MaxItemBytes bounds the bytes of the items of one principal in
	// Items (their values', keys' and namespaces', expired items not
	// counted): a put that would pass it answers 429. Each instance
	// counts a principal's bytes once, by reading its items, then adds
	// and subtracts what its own puts and deletes change; it counts
	// again, at most once a minute, when a put would pass the bound.
	// Instances that share an Items store each keep their own count, and
	// may together pass the bound until they count again. Without
	// Authenticate every request is one principal's. Zero means
	// DefaultMaxItemBytes with Authenticate and no bound without it;
	// negative means no bound.
	MaxItemBytes int64
	// WebhookTimeout bounds each attempt to POST a run's outcome to the
	// webhook URL its request gave. Zero means DefaultWebhookTimeout.
	WebhookTimeout time.Duration
	// WebhookAllowPrivate lets webhooks reach addresses that are not
	// public internet ones (loopback, private, link-local, reserved: see
	// publicnet.Public). Off by default, so that a client cannot make
	// the server call services of the network it runs in (SSRF); every
	// address a webhook's host resolves to is checked when it connects.
	WebhookAllowPrivate bool
	// WebhookHandler receives the webhooks given as a path ("/hooks/done")
	// rather than a URL: LangGraph sends those to the server itself, for
	// its custom routes. They are served in-process, never over the
	// network (so WebhookAllowPrivate does not apply): a POST of the path
	// with Host "localhost", RemoteAddr "127.0.0.1:0" and a context
	// bounded by WebhookTimeout, which the handler must honour. The path is
	// chosen by the client that created the run, so the request looks
	// local but is not trusted: its context carries the run's principal
	// (guard.Principal reads it; "" when Authenticate is nil), and the
	// handler must authorize the request by that principal, never by its
	// loopback address. The server's own routes serve it as the run's
	// principal. Nil means the server itself; set it to the mux that
	// mounts the server and the custom routes. Only the paths that
	// WebhookPaths allows are sent.
	WebhookHandler http.Handler
	// WebhookPaths lists the paths a webhook given as a path may take: an
	// entry ending in "/" allows the paths under it ("/hooks/"), another
	// entry that path alone ("/hooks/done"). Empty refuses every webhook
	// given as a path (422 at the run's creation); webhooks given as a
	// URL are not affected.
	WebhookPaths []string
	// Worker names this instance in run claims. Empty means a random name.
	Worker string
	// SweepInterval is how often the server claims the runs that no
	// instance executes: runs queued before a restart, delayed runs
	// (after_seconds) created on another instance, and runs whose
	// instance died (their lease expired). Zero means
	// DefaultSweepInterval.
	SweepInterval time.Duration
	// RunRetention is how long an ended run keeps its event log and
	// kwargs; after it, the run's record stays (GET .../runs/{run_id}
	// answers) but its stream cannot be replayed. Zero means
	// DefaultRunRetention; negative keeps them until the thread is
	// deleted.
	RunRetention time.Duration
	// MaxRunRecords bounds the ended runs whose records a thread keeps:
	// the sweeper deletes the oldest ended runs of a thread past it, with
	// their event logs (GET .../runs/{run_id} then answers 404). It runs
	// with the pruning of Config.RunRetention, at most an hour apart, so
	// a thread may hold the runs that ended since the last prune on top.
	// Zero means DefaultMaxRunRecords; negative keeps every record until
	// the thread is deleted.
	MaxRunRecords int
	// MaxQueuedRuns bounds the pending runs of a thread: enqueuing
	// another answers 429. Zero means DefaultMaxQueuedRuns.
	MaxQueuedRuns int
	// MaxThreads bounds the threads of one principal: creating another
	// answers 429. Zero means DefaultMaxThreads.
	MaxThreads int
	// MaxAssistants bounds the assistants one principal creates (POST
	// /assistants, with an [AssistantStore]): creating another answers
	// 429. Zero means DefaultMaxAssistants.
	MaxAssistants int
	// MaxAssistantBytes bounds the bytes of all the versions of one
	// principal's assistants, each counted as its JSON: creating or
	// updating (a new version) past it answers 429. Zero means
	// DefaultMaxAssistantBytes.
	MaxAssistantBytes int64
	// MaxActiveRuns bounds the runs of one principal that are pending or
	// running at once, on all its threads (stateless runs included):
	// creating another answers 429. A run whose multitask_strategy
	// interrupt or rollback cancels its thread's active runs replaces
	// them, and is accepted where they make room (they end once their
	// graph stops); a thread's own refusals (reject on a busy thread:
	// 409) are answered before the bound. With a store that is an
	// [OwnerCounter] (the memory, SQLite and PostgreSQL stores) the runs
	// are counted in the store, so the bound holds across the instances
	// that share it. On one instance no number of creations at once
	// passes it: they count and create within a gate of the principal's,
	// and a creation that might pass the bound counts again alone. The
	// runs an interrupt or rollback cancels count as freed at once,
	// although they stay running in the store until their graph stops:
	// until then the principal's active runs may exceed the bound by
	// those cancelled runs. Across instances, a count sees the runs the others stored,
	// not those they are creating at that moment: a principal may pass
	// the bound by at most 16 runs per other instance (an instance
	// creates at most 16 runs of one principal at once; more wait their
	// turn), in practice by the few creations that race near the bound.
	// Other stores are not bounded. Zero means DefaultMaxActiveRuns;
	// negative means no bound.
	MaxActiveRuns int
	// MaxCopyCheckpoints bounds the checkpoints POST /threads/{id}/copy
	// copies (the thread's and its durable subgraphs'): a thread with
	// more is refused with 422. Zero means DefaultMaxCopyCheckpoints.
	MaxCopyCheckpoints int
	// MaxCopyBytes bounds the stored bytes of the checkpoints POST
	// /threads/{id}/copy copies (the thread's and its durable subgraphs',
	// as the checkpointer reports them: with one that is a
	// checkpoint.UsageReporter, as the memory, SQLite and PostgreSQL
	// savers are; others are not bounded): a thread with more is refused
	// with 422, so that copies do not multiply a thread's storage
	// unbounded. The bound is approximate: it counts the channel blobs
	// and pending writes the checkpointer reports (checkpoint.Usage), not
	// the checkpoints' own inline payloads, and a checkpoint written
	// while the copy is being made is copied uncounted. Zero means
	// DefaultMaxCopyBytes; negative means no bound.
	MaxCopyBytes int64
	// MaxThreadBytes bounds the bytes of checkpoints all the threads of
	// one principal keep in the checkpointer (their durable subgraph
	// threads' included), as a checkpointer that is a
	// checkpoint.UsageReporter reports them (the channel blobs and
	// pending writes of checkpoint.Usage, as MaxCopyBytes counts them):
	// once a principal's threads keep more, what would write more
	// checkpoints (creating a run, streamed, waited for or in the
	// background; updating a thread's state; copying a thread) is
	// answered 429 naming this setting, until the principal deletes
	// threads (DELETE /threads/{id}) or prunes them (POST /threads/prune)
	// below it, or the setting is raised. The check is of what is
	// stored already, not a prediction: a run is never stopped by the
	// bound, so a principal may pass it by what its running runs write.
	// A thread's bytes are counted when its run ends, when its state is
	// updated, when it is copied or pruned, and kept on its record in
	// the Store; the Store sums them. Each instance reads a principal's
	// sum at most once a second, so a principal may pass the bound by
	// what it writes in that second, and another instance sees a
	// deletion up to a second late. The bound is off with a
	// checkpointer that is no UsageReporter (the memory, SQLite and
	// PostgreSQL savers are ones), or a Store that is no [ByteCounter]
	// (the memory, SQLite and PostgreSQL stores are ones). A
	// thread's durable subgraph threads are counted again at the end of
	// a run that saved checkpoints of one (found as a copy finds them,
	// through the thread's first MaxCopyCheckpoints checkpoints); its
	// own checkpoints, at every run's end. Runs accepted before the
	// principal passed the bound (up to MaxActiveRuns of them, pending
	// or running) still run and add to it. Zero means
	// DefaultMaxThreadBytes with Authenticate and no bound without it
	// (every request is then the one principal "", and a default bound
	// would cap the whole server); negative means no bound.
	MaxThreadBytes int64
	// MaxResponseBytes bounds the bytes of a list answer (POST
	// /threads/search, the history, GET /threads/{id}/runs, POST
	// /store/items/search), as estimated from its items before they are
	// encoded: an answer stops at the item that would take it past the
	// bound, before its limit, and carries the header TruncatedHeader
	// (X-Pagination-Truncated: true); the client pages on from its last
	// item. An answer holds at least one item, however large. Zero means
	// DefaultMaxResponseBytes; negative means no bound.
	MaxResponseBytes int
	// MaxReads bounds the reads of one principal served at once: the
	// list reads (POST /threads/search, the history, GET
	// /threads/{id}/runs, POST /store/items/search), each of which may
	// hold up to MaxResponseBytes and one item (with Config.Items and a
	// Store that stop their pages at the bound, as this module's do),
	// and the reads of one large state or run (GET
	// /threads/{id}/state[/{checkpoint_id}], POST
	// /threads/{id}/state/checkpoint, GET /threads/{id}, whose values
	// it holds, GET /threads/{id}/runs/{run_id}, whose kwargs hold its
	// input), and the writes that answer a thread's values (PATCH
	// /threads/{id}, POST /threads/{id}/copy, POST /threads of an
	// existing thread with if_exists do_nothing); HEAD counts as GET:
	// one more is answered 429 with Retry-After, so
	// that parallel requests do not multiply the bytes one principal
	// makes the server hold. Zero means DefaultMaxReads.
	MaxReads int
	// MaxSweptRuns bounds the runs this instance executes at once for the
	// sweeper to claim more (see SweepInterval): while the instance
	// executes that many runs or more, whichever way it took them, the
	// sweeper leaves due runs to other instances or to a later sweep, so
	// that an instance that comes back to a long queue, or outlives the
	// others, does not start more runs than it can execute. Runs created
	// through this instance are not bounded by it (MaxQueuedRuns bounds
	// them per thread). Zero means DefaultMaxSweptRuns.
	MaxSweptRuns int
	// Logger receives run failures. Nil means no logging.
	Logger *zap.Logger
}

// Server serves registered graphs over LangGraph's Agent Server HTTP API:
// assistants, threads, thread state and history, runs (streamed, waited
// for, in the background, joined, cancelled) with the double-texting
// strategies, and resumable streams. It is an http.Handler; mount it where
// the API should live. Make one with New, register graphs with [Register],
// and Close it on shutdown.
type Server struct {
	cfg    Config
	store  Store
	saver  checkpoint.Saver
	log    *zap.Logger
	mux    *http.ServeMux
	gmu    sync.RWMutex      // guards graphs, byAsst and order: Register may run while the sweeper executes runs
	graphs map[string]runner // by graph id
	byAsst map[string]string // assistant id -> graph id
	order  []string
	start  time.Time

	locks threadLocks // per thread: run creation and status changes
	hub   hub
	hooks *http.Client // sends webhooks

	base     context.Context
	bg       context.Context // base without its cancellation
	stop     context.CancelFunc
	wg       sync.WaitGroup
	mu       sync.Mutex
	work     map[string]bool        // threads with a worker goroutine
	again    map[string]bool        // threads kicked while their worker ran
	cancel   map[string]*runCancel  // running runs
	timers   map[string]*time.Timer // delayed runs, by run id
	released map[string]int         // releases of runs whose graph is not registered here, by run id
	drops    int                    // dropTemporary's deletions going on in the background

	amu    sync.Mutex             // guards gates
	gates  map[string]*activeGate // by principal: its run creations under way (Config.MaxActiveRuns)
	closed bool
	shut   atomic.Bool // closed, read without mu by ServeHTTP

	// creating, when set (by tests), is called by newRun between its
	// check that the server is not closed and the run's creation.
	creating func()
	// rollbackLogEvery is rollbackLogEvery; tests lower it.
	rollbackLogEvery int

	smu     sync.Mutex
	streams map[string]int // open streams by principal; a principal without one has no entry
	reads   map[string]int // reads served by principal (Config.MaxReads); likewise

	imu         sync.Mutex
	itemTallies map[string]itemTally // item bytes by principal (Config.MaxItemBytes), at most maxItemTallies

	bmu           sync.Mutex
	threadTallies map[string]threadTally // threads' checkpoint bytes by principal (Config.MaxThreadBytes), at most maxThreadTallies
	bforgets      uint64                 // forgetThreadBytes calls, under bmu: a sum read from the store before the last is not kept
	bflight       singleflight.Group     // one CountBytes per principal at a time

	// origins is Config.AllowedOrigins but "*", compared as package guard
	// compares origins; anyOrigin is whether it has "*".
	origins   guard.Origins
	anyOrigin bool
}

// New returns a server configured by cfg, with no graph registered yet.
func New(cfg Config) (*Server, error) {
	if cfg.MaxBodyBytes < 0 || cfg.MaxRunEvents < 0 || cfg.RunTimeout < 0 || cfg.Heartbeat < 0 || cfg.Lease < 0 ||
		cfg.SweepInterval < 0 || cfg.MaxQueuedRuns < 0 || cfg.MaxThreads < 0 || cfg.MaxAssistants < 0 || cfg.MaxAssistantBytes < 0 || cfg.MaxCopyCheckpoints < 0 || cfg.WebhookTimeout < 0 || cfg.MaxSweptRuns < 0 || cfg.MaxStreams < 0 || cfg.MaxReads < 0 {
		return nil, errors.New("server: Config.MaxBodyBytes, MaxRunEvents, RunTimeout, Heartbeat, Lease, SweepInterval, MaxQueuedRuns, MaxThreads, MaxAssistants, MaxAssistantBytes, MaxCopyCheckpoints, MaxSweptRuns, MaxStreams, MaxReads and WebhookTimeout must not be negative; use 0 for the defaults")
	}
	for i, p := range cfg.WebhookPaths {
		if !selfWebhook(p) || path.Clean(p) != strings.TrimSuffix(p, "/") && p != "/" {
			return nil, fmt.Errorf("server: Config.WebhookPaths[%d] %q is not a clean absolute path; give one such as /hooks/ or /hooks/done", i, p)
		}
	}
	cfg.WebhookPaths = slices.Clone(cfg.WebhookPaths)
	if cfg.MaxCopyCheckpoints == 0 {
		cfg.MaxCopyCheckpoints = DefaultMaxCopyCheckpoints
	}
	if cfg.MaxSweptRuns == 0 {
		cfg.MaxSweptRuns = DefaultMaxSweptRuns
	}
	if cfg.MaxStreams == 0 {
		cfg.MaxStreams = DefaultMaxStreams
	}
	if cfg.BodyTimeout == 0 {
		cfg.BodyTimeout = DefaultBodyTimeout
	}
	if cfg.StreamWriteTimeout == 0 {
		cfg.StreamWriteTimeout = DefaultStreamWriteTimeout
	}
	if cfg.WriteTimeout == 0 {
		cfg.WriteTimeout = DefaultWriteTimeout
	}
	if cfg.SweepInterval == 0 {
		cfg.SweepInterval = DefaultSweepInterval
	}
	if cfg.RunRetention == 0 {
		cfg.RunRetention = DefaultRunRetention
	}
	if cfg.MaxQueuedRuns == 0 {
		cfg.MaxQueuedRuns = DefaultMaxQueuedRuns
	}
	if cfg.MaxRunRecords == 0 {
		cfg.MaxRunRecords = DefaultMaxRunRecords
	}
	if cfg.MaxThreads == 0 {
		cfg.MaxThreads = DefaultMaxThreads
	}
	if cfg.MaxAssistants == 0 {
		cfg.MaxAssistants = DefaultMaxAssistants
	}
	if cfg.MaxAssistantBytes == 0 {
		cfg.MaxAssistantBytes = DefaultMaxAssistantBytes
	}
	if cfg.MaxActiveRuns == 0 {
		cfg.MaxActiveRuns = DefaultMaxActiveRuns
	}
	if cfg.MaxReads == 0 {
		cfg.MaxReads = DefaultMaxReads
	}
	if cfg.MaxResponseBytes == 0 {
		cfg.MaxResponseBytes = DefaultMaxResponseBytes
	}
	if cfg.MaxCopyBytes == 0 {
		cfg.MaxCopyBytes = DefaultMaxCopyBytes
	}
	if cfg.MaxThreadBytes == 0 {
		cfg.MaxThreadBytes = DefaultMaxThreadBytes
		if cfg.Authenticate == nil {
			// Every request is the one principal "": a default bound
			// would cap the whole server's checkpoints.
			cfg.MaxThreadBytes = -1
		}
	}
	if cfg.MaxItemBytes == 0 {
		cfg.MaxItemBytes = DefaultMaxItemBytes
		if cfg.Authenticate == nil {
			cfg.MaxItemBytes = -1
		}
	}
	if cfg.MaxItems == 0 {
		cfg.MaxItems = DefaultMaxItems
		if cfg.Authenticate == nil {
			// One principal: a default bound would only shrink the store.
			cfg.MaxItems = -1
		}
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.MaxRunEvents == 0 {
		cfg.MaxRunEvents = DefaultMaxRunEvents
	}
	if cfg.RunTimeout == 0 {
		cfg.RunTimeout = DefaultRunTimeout
	}
	if cfg.Heartbeat == 0 {
		cfg.Heartbeat = DefaultHeartbeat
	}
	if cfg.Lease == 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.WebhookTimeout == 0 {
		cfg.WebhookTimeout = DefaultWebhookTimeout
	}
	if cfg.Worker == "" {
		cfg.Worker = newID()
	}
	var listed []string
	anyOrigin := false
	for _, o := range cfg.AllowedOrigins {
		if o == "*" {
			anyOrigin = true
			continue
		}
		listed = append(listed, o)
	}
	origins, err := guard.ParseOrigins(listed)
	if err != nil {
		return nil, fmt.Errorf("server: %w, or \"*\" for any origin", err)
	}
	if anyOrigin && cfg.Authenticate == nil {
		return nil, errors.New(`server: Config.AllowedOrigins lists "*" but Config.Authenticate is nil: a page of any site its user visits ` +
			`could then drive this server, which serves every local request without credentials; set Config.Authenticate ` +
			`(such as server.APIKeys), or list the origins of your pages instead of "*"`)
	}
	s := &Server{cfg: cfg, origins: origins, anyOrigin: anyOrigin, store: cfg.Store, saver: cfg.Checkpointer, log: cfg.Logger,
		graphs: map[string]runner{}, byAsst: map[string]string{}, start: time.Now(),
		work: map[string]bool{}, again: map[string]bool{}, cancel: map[string]*runCancel{}, timers: map[string]*time.Timer{}, released: map[string]int{},
		streams: map[string]int{}, reads: map[string]int{}, itemTallies: map[string]itemTally{}, threadTallies: map[string]threadTally{}, rollbackLogEvery: rollbackLogEvery}
	if s.store == nil {
		s.store = NewMemoryStore()
	}
	if s.saver == nil {
		s.saver = checkpoint.NewMemory()
	}
	if s.log == nil {
		s.log = zap.NewNop()
	}
	s.base, s.stop = context.WithCancel(context.Background())
	s.bg = context.WithoutCancel(s.base)
	s.hub.runs = map[string]*runHub{}
	s.locks.store, _ = s.store.(ThreadLocker)
	s.hooks = newWebhookClient(cfg.WebhookTimeout, cfg.WebhookAllowPrivate)
	s.routes()
	s.startBackground()
	return s, nil
}

// Checkpointer returns the saver graphs served by s are to be compiled with
// (graph.WithCheckpointer(s.Checkpointer())).
func (s *Server) Checkpointer() checkpoint.Saver { return s.saver }

// Store returns the server's store.
func (s *Server) Store() Store { return s.store }

func (s *Server) addGraph(id string, r runner) error {
	s.gmu.Lock()
	defer s.gmu.Unlock()
	if _, dup := s.graphs[id]; dup {
		return fmt.Errorf("server: graph %q is already registered", id)
	}
	s.graphs[id] = r
	s.byAsst[AssistantID(id)] = id
	s.order = append(s.order, id)
	return nil
}

// graph returns the graph registered under id, or nil.
func (s *Server) graph(id string) runner {
	s.gmu.RLock()
	defer s.gmu.RUnlock()
	return s.graphs[id]
}

// graphIDs returns the registered graph ids in registration order.
func (s *Server) graphIDs() []string {
	s.gmu.RLock()
	defer s.gmu.RUnlock()
	return slices.Clone(s.order)
}

// Close cancels the runs in progress (they end with status interrupted) and
// waits for them, or for ctx. It does not close the store or checkpointer.
// From Close on, the requests that create a run (POST .../runs,
// /runs/stream, /runs/wait) or wait on one that has not ended (join, join
// stream) are answered 503 with Retry-After, as the server executes no
// more runs; the others are served. A request creating a run that Close
// overtakes before the run is registered to start here is answered 503
// too, its run cancelled, when it would wait on the run (/runs/stream,
// /runs/wait); a background run so created stays pending, for another
// instance or the next start.
func (s *Server) Close(ctx context.Context) error {
	s.mu.Lock()
	s.closed = true
	s.shut.Store(true)
	for _, t := range s.timers {
		t.Stop()
	}
	s.timers = map[string]*time.Timer{}
	s.mu.Unlock()
	s.stop()
	done := make(chan struct{})
	go func() { s.wg.Wait(); s.hooks.CloseIdleConnections(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// APIKeys returns an Authenticate function for [Config] that accepts the
// x-api-key header (or "Authorization: Bearer <key>", the scheme in any
// case, see guard.BearerToken) when it is one of
// keys, and names the request's principal by keys[key]. Each key must
// have at least guard.MinTokenLen (16) bytes, as random as a password
// generator makes them, and keys must hold at least one: otherwise
// APIKeys returns an error naming the principal of the short key (never
// the key), and no function.
func APIKeys(keys map[string]string) (func(*http.Request) (string, error), error) {
	if len(keys) == 0 {
		return nil, errors.New("server: APIKeys: no keys; give each principal a key of at least 16 random bytes, or leave Config.Authenticate nil to serve loopback clients only")
	}
	type entry struct{ key, who string }
	list := make([]entry, 0, len(keys))
	var short []string
	for k, who := range keys {
		if len(k) < guard.MinTokenLen {
			short = append(short, fmt.Sprintf("the key of principal %q has %d bytes", clip(who), len(k)))
		}
		list = append(list, entry{k, who})
	}
	if len(short) > 0 {
		slices.Sort(short)
		return nil, fmt.Errorf("server: APIKeys: %s; use keys of at least %d random bytes", strings.Join(short, ", "), guard.MinTokenLen)
	}
	return func(r *http.Request) (string, error) {
		got := r.Header.Get("X-Api-Key")
		if got == "" {
			got, _ = guard.BearerToken(r)
		}
		if got == "" {
			return "", errors.New("missing x-api-key header; send the API key in x-api-key")
		}
		for _, e := range list {
			if subtle.ConstantTimeCompare([]byte(got), []byte(e.key)) == 1 {
				return e.who, nil
			}
		}
		return "", errors.New("the x-api-key header holds an unknown key")
	}, nil
}

// errClosing answers the requests that create a run, or wait on one that
// has not ended, once Close has been called (with Retry-After, as
// writeError sets it for every 503).
var errClosing = &requestError{status: http.StatusServiceUnavailable, name: "ServiceUnavailable",
	msg: "server: closing (Server.Close was called): it creates and serves no more runs; retry on another instance, or after the restart"}

// requestError is an error answered with its status and message. name,
// when set, is the error's name where a body already sent names it (the
// __error__ of a wait, the error event of a stream): the reference
// server's exception class.
type requestError struct {
	status int
	msg    string
	name   string
}

func (e *requestError) Error() string { return e.msg }

func errorf(status int, format string, args ...any) error {
	return &requestError{status: status, msg: fmt.Sprintf(format, args...)}
}

type principalKey struct{}

func principal(r *http.Request) string {
	p, _ := r.Context().Value(principalKey{}).(string)
	return p
}

// ServeHTTP implements http.Handler: CORS, authentication and body limits,
// then the API's routes.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	hasBody := r.ContentLength != 0 || len(r.TransferEncoding) > 0
	if hasBody {
		// Before any check, so that a request refused or served without
		// credentials cannot hold its connection with a body that never
		// arrives. A request without a body gets no read deadline:
		// net/http reads its connection in the background to notice a
		// client going away, and a deadline would end that read and the
		// request.
		guard.BoundBody(w, r, s.cfg.MaxBodyBytes, s.cfg.BodyTimeout)
	} else {
		r.Body = http.MaxBytesReader(w, r.Body, s.cfg.MaxBodyBytes)
	}
	// refuse answers a request refused before its body is read: what the
	// client sent of the body is discarded within guard.RefuseGrace (a
	// body that stalls closes the connection after the answer).
	refuse := func(err error) {
		guard.RefuseBody(w, r)
		writeError(w, err)
	}
	if origin := r.Header.Get("Origin"); origin != "" {
		if !s.origins.Allowed(r, origin) {
			if s.anyOrigin || s.loopbackPage(r, origin) {
				// Allowed by "*" or the loopback rule alone: the page's
				// own credentials only, not the cookies its browser adds
				// (see AllowedOrigins).
				r.Header.Del("Cookie")
			} else {
				refuse(errorf(http.StatusForbidden, "origin %s is not allowed; list it among the server's allowed origins (Config.AllowedOrigins, or the option of the program that sets it)", origin))
				return
			}
		}
		h := w.Header()
		h.Set("Access-Control-Allow-Origin", origin)
		h.Add("Vary", "Origin")
		h.Set("Access-Control-Expose-Headers", "Content-Location, Location, X-Pagination-Total, X-Pagination-Next, "+TruncatedHeader)
		if r.Method == http.MethodOptions && r.Header.Get("Access-Control-Request-Method") != "" {
			h.Set("Access-Control-Allow-Methods", "GET, POST, PUT, PATCH, DELETE, OPTIONS")
			h.Set("Access-Control-Allow-Headers", "Content-Type, X-Api-Key, Authorization, Last-Event-ID")
			h.Set("Access-Control-Max-Age", "600")
			w.WriteHeader(http.StatusNoContent)
			return
		}
	}
	if site := r.Header.Get("Sec-Fetch-Site"); r.Header.Get("Origin") == "" && site == "same-site" && s.cfg.Authenticate != nil {
		// A page of another origin of the same site, without Origin (an
		// <img>): Authenticate judges it without the cookies its browser
		// adds, as it judges a loopback page's (see AllowedOrigins).
		r.Header.Del("Cookie")
	} else if r.Header.Get("Origin") == "" &&
		(site == "cross-site" || s.cfg.Authenticate == nil && site != "" && site != "same-origin" && site != "none") {
		// A request a page of another site made without Origin: an
		// <img>, a <script>, a no-cors GET, which need not read the
		// answer to act (a join with cancel_on_disconnect cancels a run).
		// Without Authenticate, a page of another origin of the same
		// site too (same-site: another port of this machine), as such a
		// page may not call the API (see Config.AllowedOrigins).
		refuse(errorf(http.StatusForbidden, "a request without Origin from a page of another origin (Sec-Fetch-Site: %s: an <img>, a <script>, "+
			"a no-cors fetch) is refused; call the API with fetch from an allowed origin (Config.AllowedOrigins)", site))
		return
	}
	who := ""
	if owner, ok := r.Context().Value(webhookKey{}).(string); ok {
		who = owner // a webhook sent in-process (Config.WebhookHandler): the run's principal
	} else if s.cfg.Authenticate != nil {
		if !healthCheck(r) {
			p, err := s.cfg.Authenticate(r)
			if err != nil {
				refuse(errorf(http.StatusUnauthorized, "%v", err))
				return
			}
			who = p
		}
	} else if !guard.LoopbackAddr(r.RemoteAddr) {
		refuse(errorf(http.StatusForbidden, "this server accepts requests from loopback addresses only; set Config.Authenticate to serve other clients"))
		return
	} else if !guard.LoopbackHost(r.Host) {
		// A page whose name was rebound to 127.0.0.1 sends its own name.
		refuse(errorf(http.StatusForbidden, "Host %q is not a loopback name; use localhost or 127.0.0.1, or set Config.Authenticate", r.Host))
		return
	} else if h := guard.Proxied(r); h != "" {
		// A reverse proxy on this machine (TLS in front, Host rewritten to
		// 127.0.0.1) would pass the checks above for every client it
		// serves, and the headers naming those clients are theirs to forge.
		refuse(errorf(http.StatusForbidden, "the request came through a proxy (it carries %s); without Config.Authenticate this server serves loopback clients only, so set Config.Authenticate to serve clients through a proxy", h))
		return
	}
	if hasBody && !jsonMediaType(r.Header.Get("Content-Type")) {
		// Form-encoded and multipart bodies, and bodies without a type
		// or of another type, are not JSON. A text/plain body is read
		// as JSON, as the LangGraph JS server reads it (a page's fetch
		// of a string sends that type): a page of another site sends
		// it without a CORS preflight, but with an Origin, which the
		// check above refuses unless Config.AllowedOrigins lists it.
		refuse(errorf(http.StatusUnsupportedMediaType, "Content-Type %q: request bodies are JSON in UTF-8; send them with Content-Type: application/json (or text/plain), with no charset or charset=utf-8", r.Header.Get("Content-Type")))
		return
	}
	if s.shut.Load() && (createsRun(r) || streaming(r) && r.Method == http.MethodPost) {
		// A closed server executes no run: a run created now would wait
		// for another instance or a restart, and a request waiting on a
		// run here would wait for ever (it holds a stream slot meanwhile).
		// A join is refused by its handler, only when its run has not
		// ended: the join of an ended run answers at once.
		refuse(errClosing)
		return
	}
	if streaming(r) {
		if !s.takeStream(who) {
			w.Header().Set("Retry-After", "1")
			refuse(errorf(http.StatusTooManyRequests, "%d streams of yours wait on runs (Config.MaxStreams); close one, or poll GET .../runs/{run_id} instead", s.cfg.MaxStreams))
			return
		}
		defer s.giveStream(who)
	}
	if listRead(r) {
		if !s.take(s.reads, who, s.cfg.MaxReads) {
			w.Header().Set("Retry-After", "1")
			refuse(errorf(http.StatusTooManyRequests, "%d reads of yours are served at once (Config.MaxReads); wait for one to end", s.cfg.MaxReads))
			return
		}
		defer s.give(s.reads, who)
	}
	r = r.WithContext(context.WithValue(r.Context(), principalKey{}, who))
	lw := &logWriter{ResponseWriter: w, log: s.log, r: r, wd: writeDeadline{w: w, d: s.cfg.WriteTimeout}}
	s.mux.ServeHTTP(lw, r)
	// net/http writes the answer's end (a chunked answer's last chunk)
	// once the handler returns: bounded as its other writes are, also
	// after a handler that cleared the deadline to wait (a stream or a
	// wait whose client left), which a full send buffer would otherwise
	// hold forever.
	lw.wd.renew()
}

// logWriter is the ResponseWriter of the API's routes: writeError logs
// to it the cause of an internal error, which it does not answer; its
// writes renew the connection's write deadline (Config.WriteTimeout, or
// a stream's Config.StreamWriteTimeout: see responseDeadline).
type logWriter struct {
	http.ResponseWriter
	log *zap.Logger
	r   *http.Request
	wd  writeDeadline
}

// writePiece is the most a write of an answer sends under one renewal
// of its deadline (Config.WriteTimeout).
const writePiece = 64 << 10

// WriteHeader renews the write deadline, under which net/http sends the
// headers, and the body of an answer without one, once the handler
// returns.
func (w *logWriter) WriteHeader(code int) {
	w.wd.renew()
	w.ResponseWriter.WriteHeader(code)
}

// Write writes b in pieces of at most writePiece bytes, renewing the
// write deadline before each, so that the deadline bounds how long a
// client may leave a piece unread, not how long a large answer takes.
func (w *logWriter) Write(b []byte) (int, error) {
	n := 0
	for {
		w.wd.renew()
		k, err := w.ResponseWriter.Write(b[:min(len(b), writePiece)])
		n += k
		if b = b[k:]; err != nil || len(b) == 0 {
			return n, err
		}
	}
}

// Unwrap returns the connection's ResponseWriter, for
// http.ResponseController.
func (w *logWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// healthCheck reports whether r is GET (or HEAD) /ok, the health check
// load balancers make without credentials: it is served without
// Config.Authenticate, as the anonymous principal, since its answer
// reveals nothing. Without Authenticate it stays a loopback route as the
// others are.
func healthCheck(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.URL.Path == "/ok"
}

// streaming reports whether r waits on a run for as long as it runs: a
// run created with /runs/stream or /runs/wait, or joined with .../join
// or .../stream (GET, or HEAD, which the routes serve as GET). It
// matches path suffixes, so that it holds wherever the server is mounted.
func streaming(r *http.Request) bool {
	p := r.URL.Path
	switch r.Method {
	case http.MethodPost:
		return strings.HasSuffix(p, "/runs/stream") || strings.HasSuffix(p, "/runs/wait")
	case http.MethodGet, http.MethodHead:
		return strings.Contains(p, "/runs/") && (strings.HasSuffix(p, "/join") || strings.HasSuffix(p, "/stream"))
	}
	return false
}

// createsRun reports whether r creates a run in the background: POST
// .../runs (a thread's run, or a stateless one).
func createsRun(r *http.Request) bool {
	return r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/runs")
}

func (s *Server) takeStream(who string) bool { return s.take(s.streams, who, s.cfg.MaxStreams) }

func (s *Server) giveStream(who string) { s.give(s.streams, who) }

// take counts one more request of who in slots (streams, reads), unless
// who has max already.
func (s *Server) take(slots map[string]int, who string, max int) bool {
	s.smu.Lock()
	defer s.smu.Unlock()
	if slots[who] >= max {
		return false
	}
	slots[who]++
	return true
}

// give ends a request take counted.
func (s *Server) give(slots map[string]int, who string) {
	s.smu.Lock()
	defer s.smu.Unlock()
	if slots[who] <= 1 {
		delete(slots, who)
		return
	}
	slots[who]--
}

// listRead reports whether r is a read that Config.MaxReads bounds:
// one that may answer many items (POST .../threads/search, GET or POST
// .../history, GET .../threads/{id}/runs, POST .../store/items/search)
// or a large state (GET .../threads/{id}/state[/{checkpoint_id}], POST
// .../threads/{id}/state/checkpoint, GET .../threads/{id}, whose values
// it holds, and GET .../threads/{id}/runs/{run_id}, whose kwargs hold
// the run's input), or a write that answers a thread's values (PATCH
// .../threads/{id}, POST .../threads/{id}/copy). A HEAD request counts
// as its GET, which the routes serve (and compute) in full. POST
// .../threads with if_exists do_nothing counts in its handler, since
// only an existing thread's answer holds values. It matches path
// suffixes, so that it holds wherever the server is mounted.
func listRead(r *http.Request) bool {
	p := r.URL.Path
	segs := strings.Split(p, "/")
	n := len(segs)
	// at reports whether the segment i places before the last is name.
	at := func(i int, name string) bool { return n > i && segs[n-1-i] == name }
	switch r.Method {
	case http.MethodPost:
		return strings.HasSuffix(p, "/threads/search") || strings.HasSuffix(p, "/history") || strings.HasSuffix(p, "/store/items/search") ||
			at(0, "checkpoint") && at(1, "state") && at(3, "threads") ||
			at(0, "copy") && at(2, "threads") // a thread's copy
	case http.MethodPatch:
		return at(1, "threads") && segs[n-1] != "" // a thread's metadata
	case http.MethodGet, http.MethodHead:
		return at(0, "history") || at(0, "runs") && strings.Contains(p, "/threads/") ||
			at(0, "state") && at(2, "threads") || // a thread's state
			at(1, "state") && at(3, "threads") || // its state at a checkpoint
			at(1, "threads") && segs[n-1] != "" || // a thread
			at(1, "runs") && at(3, "threads") // a run
	}
	return false
}

// loopbackPage reports whether a page of origin (r's Origin header),
// which is neither r's own nor one of Config.AllowedOrigins, may call the
// API by the loopback rule: with Config.Authenticate, the server is
// reached on a loopback host and origin is a loopback http or https page
// (a development UI on another port, which sends its key).
func (s *Server) loopbackPage(r *http.Request, origin string) bool {
	return s.cfg.Authenticate != nil && guard.LoopbackHost(r.Host) && guard.LoopbackOrigin(origin)
}

// writeJSON answers v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		writeError(w, err)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// writeError answers err: a requestError with its status, a missing record
// with 404, a too large body with 413, anything else with 500 and a
// generic message, its cause logged (see logWriter) under an id the
// message gives.
func writeError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	var re *requestError
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &re):
		status = re.status
	case errors.As(err, &mbe):
		status = http.StatusRequestEntityTooLarge
		err = fmt.Errorf("request body exceeds %d bytes (Config.MaxBodyBytes)", mbe.Limit)
	case errors.Is(err, ErrNotFound):
		status = http.StatusNotFound
	case errors.Is(err, ErrExists):
		status = http.StatusConflict
	}
	if re == nil && mbe == nil && status == http.StatusInternalServerError {
		// A store's or a saver's error: its text (SQL, a file's path) is
		// the server's to read, not the client's.
		id := internalErrorID()
		if lw, ok := w.(*logWriter); ok {
			lw.log.Error("answering an internal error", zapString("error_id", id), zapString("method", lw.r.Method), zapString("path", lw.r.URL.Path), zapError(err))
		}
		err = errors.New(internalText(id))
	}
	if status == http.StatusServiceUnavailable && w.Header().Get("Retry-After") == "" {
		w.Header().Set("Retry-After", "1")
	}
	b, _ := json.Marshal(map[string]string{"detail": clipDetail(err.Error())})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}

// internalMessage logs err, a store's or a checkpointer's met while
// doing what doing says, under a new error_id with fields, and returns
// the generic message a client is sent in its place (in a stream's error
// event, in a run's error), as writeError answers it.
func (s *Server) internalMessage(doing string, err error, fields ...zap.Field) string {
	id := internalErrorID()
	s.log.Error(doing, append([]zap.Field{zapString("error_id", id), zapError(err)}, fields...)...)
	return internalText(id)
}

// internalText is the generic message of an internal error logged under
// error_id id.
func internalText(id string) string {
	return "internal error; the server's log has its cause under error_id " + id
}

// internalErrorID returns a new id for an internal error, which its
// answer and its log line both give.
func internalErrorID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// maxDetail bounds an error's detail: a message that quotes a client's
// value it did not clip (a store's or a saver's error naming an id) is cut
// there rather than answered whole.
const maxDetail = 2048

// clipDetail returns msg, or its first maxDetail bytes (at a rune
// boundary) and "...".
func clipDetail(msg string) string {
	if len(msg) <= maxDetail {
		return msg
	}
	return utf8clip.Clip(msg, maxDetail) + "..."
}

// jsonMediaType reports whether a Content-Type header names a body read
// as JSON: application/json or text/plain, with or without parameters,
// and with no charset but UTF-8's or one UTF-8 holds unchanged (ASCII's).
func jsonMediaType(contentType string) bool {
	// The types clients send, as they send them, without parsing (which
	// allocates the parameters' map).
	switch contentType {
	case "application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8", "text/plain", "text/plain;charset=UTF-8":
		return true
	}
	mt, params, err := mime.ParseMediaType(contentType)
	if cs, ok := params["charset"]; ok && !utf8Charset(cs) {
		return false // read as UTF-8, a body in UTF-16 or Latin-1 would be garbled
	}
	return err == nil && (mt == "application/json" || mt == "text/plain")
}

// utf8Charset reports whether charset cs names UTF-8 or ASCII, whose
// text is the same in UTF-8.
func utf8Charset(cs string) bool {
	for _, name := range []string{"utf-8", "utf8", "us-ascii", "ascii"} {
		if strings.EqualFold(cs, name) {
			return true
		}
	}
	return false
}

// decodeBody decodes a JSON body (ServeHTTP has checked that it is sent
// as application/json or text/plain) into v. An empty body leaves v as
// it is.
func decodeBody(r *http.Request, v any) error {
	b, err := io.ReadAll(r.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		if guard.BodyTimedOut(err) {
			return errorf(http.StatusRequestTimeout, "the body did not arrive in time (Config.BodyTimeout); send the whole body at once")
		}
		return errorf(http.StatusBadRequest, "reading the body: %v", err)
	}
	if len(strings.TrimSpace(string(b))) == 0 {
		return nil
	}
	if !utf8.Valid(b) {
		return errorf(http.StatusUnprocessableEntity, "the body is not valid UTF-8 (at byte %d); send JSON text in UTF-8", invalidUTF8At(b))
	}
	if at, esc := loneSurrogate(b); at >= 0 {
		return errorf(http.StatusUnprocessableEntity, "the body holds the escape %s (at byte %d), half of a surrogate pair, which is not a character; escape a character beyond U+FFFF as a pair (\\ud83d\\ude00)", esc, at)
	}
	if err := checkDepth(b); err != nil {
		return err
	}
	if err := unmarshalWhole(b, v); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			if num, ok := strings.CutPrefix(te.Value, "number "); ok {
				return numberError(b, te, num, "")
			}
		}
		if errors.As(err, &te) && te.Field != "" {
			return errorf(http.StatusUnprocessableEntity, "%s: must be %s, not a JSON %s", te.Field, jsonKind(te.Type.Kind().String()), te.Value)
		}
		if errors.As(err, &te) {
			// The body itself has the wrong type: name the kind expected,
			// not the Go type it would decode into.
			return errorf(http.StatusUnprocessableEntity, "the body must be %s, not a JSON %s", jsonKind(te.Type.Kind().String()), te.Value)
		}
		return errorf(http.StatusUnprocessableEntity, "the body is not valid JSON: %v", err)
	}
	return nil
}

// maxWholeRewrites bounds the whole numbers written with a fraction or
// an exponent (10.0, 1e3) unmarshalWhole accepts in one body, each of
// which costs one more decoding of it.
const maxWholeRewrites = 16

// unmarshalWhole is json.Unmarshal(b, v), but accepts a whole number
// written with a fraction or an exponent (10.0, 1e3, as Python's
// json.dumps writes a float) for an integer field when the integer holds
// it: the number is rewritten as an integer and b decoded again.
func unmarshalWhole(b []byte, v any) error {
	for range maxWholeRewrites {
		err := json.Unmarshal(b, v)
		var te *json.UnmarshalTypeError
		if err == nil || !errors.As(err, &te) {
			return err
		}
		num, ok := strings.CutPrefix(te.Value, "number ")
		if !ok {
			return err
		}
		end := int(te.Offset)
		if end < len(num) || end > len(b) || string(b[end-len(num):end]) != num {
			return err
		}
		n, ok := wholeNumber(num, te.Type)
		if !ok {
			return err
		}
		b = slices.Concat(b[:end-len(num)], []byte(n), b[end:])
	}
	return json.Unmarshal(b, v)
}

// wholeNumber returns JSON number num as the decimal integer text of an
// integer of type t, when num is a whole number t holds.
func wholeNumber(num string, t reflect.Type) (string, bool) {
	var bits int
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		bits = t.Bits()
	default:
		return "", false
	}
	c, ok := canonNumber(num)
	if !ok {
		return "", false
	}
	text := "0"
	if c != "0" {
		mant, e, _ := strings.Cut(c, "e")
		exp, err := strconv.Atoi(e)
		if err != nil || exp < 0 || len(mant)+exp > 40 {
			return "", false // a fraction, or beyond every integer type
		}
		text = mant + strings.Repeat("0", exp)
	}
	if t.Kind() >= reflect.Uint && t.Kind() <= reflect.Uint64 {
		_, err := strconv.ParseUint(text, 10, bits)
		return text, err == nil
	}
	_, err := strconv.ParseInt(text, 10, bits)
	return text, err == nil
}

// numberError is the error of JSON text b whose number num (te's value)
// does not decode into te's type: a fraction or a number beyond the
// integers' range where a whole number is expected, or a number beyond a
// float64's range anywhere (in a value of any shape: config.configurable,
// input), named by its path. at is the path of b in the request: "" for
// the body, "input" for a run's input.
func numberError(b []byte, te *json.UnmarshalTypeError, num, at string) error {
	where := joinPath(at, te.Field)
	if where == "" {
		where = "the body"
	}
	switch te.Type.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		if _, ok := wholeNumber(num, te.Type); ok {
			return errorf(http.StatusUnprocessableEntity, "%s: must be a whole number written without a fraction or exponent, not %s", where, clip(num))
		}
		if c, ok := canonNumber(num); ok && c != "0" {
			if _, e, _ := strings.Cut(c, "e"); strings.HasPrefix(e, "-") {
				return errorf(http.StatusUnprocessableEntity, "%s: must be a whole number, not %s", where, clip(num))
			}
		}
		return errorf(http.StatusUnprocessableEntity, "%s: the whole number %s is out of range", where, clip(num))
	}
	// A float64 (of a field, or of a value of any shape) the number
	// overflows: the field names the value that holds it, not the number;
	// the number's path is found in that value, read again with its
	// numbers as text: the first number written as num.
	var v any
	if decodeNumbers(b, &v) == nil {
		sub, prefix := subtree(v, te.Field)
		same := func(s string) (string, bool) {
			if s != num {
				return "", false
			}
			return jsonnum.Overflows(s)
		}
		if rev, _, why, found := jsonnum.Find(sub, same); found {
			if p := joinPath(at, strings.TrimPrefix(prefix+jsonnum.Path(rev), ".")); p != "" {
				where = p
			}
			return errorf(http.StatusUnprocessableEntity, "%s: the number %s %s; send a number a float64 holds, or the value as a string", clip(where), clip(num), why)
		}
	}
	return errorf(http.StatusUnprocessableEntity, "%s: the number %s is beyond a float64's range; send a smaller number, or the value as a string", clip(where), clip(num))
}

// joinPath joins the dotted paths a and b, either of which may be empty.
func joinPath(a, b string) string {
	if a == "" || b == "" || strings.HasPrefix(b, "[") {
		return a + b
	}
	return a + "." + b
}

// subtree returns the value in v, a JSON value, that field (an
// UnmarshalTypeError's dotted path of object members) names, and field;
// v and "" when field does not name one (a member's name holds a dot).
func subtree(v any, field string) (any, string) {
	if field == "" {
		return v, ""
	}
	cur := v
	for name := range strings.SplitSeq(field, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return v, ""
		}
		if cur, ok = m[name]; !ok {
			return v, ""
		}
	}
	return cur, field
}

// invalidUTF8At returns the offset of the first byte of b that is not
// part of a valid UTF-8 encoding (len(b) when there is none).
func invalidUTF8At(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n <= 1 {
			return i
		}
		i += n
	}
	return len(b)
}

// loneSurrogate returns the offset and the text of the first \u escape
// in JSON text b of a surrogate (U+D800 to U+DFFF) that is not half of a
// high-low pair, which encoding/json decodes as U+FFFD; -1 when there is
// none. A backslash in valid JSON is within a string, so b is scanned
// for escapes without following its strings.
func loneSurrogate(b []byte) (int, string) {
	for i := 0; i < len(b); {
		j := bytes.IndexByte(b[i:], '\\')
		if j < 0 {
			return -1, ""
		}
		i += j
		if i+1 >= len(b) {
			return -1, ""
		}
		if b[i+1] != 'u' {
			i += 2 // \\, \" and the others
			continue
		}
		r, ok := hex4(b, i+2)
		switch {
		case !ok || r < 0xD800 || r > 0xDFFF:
		case r >= 0xDC00:
			return i, string(b[i : i+6])
		default:
			if lo, ok := hex4(b, i+8); !ok || i+7 >= len(b) || b[i+6] != '\\' || b[i+7] != 'u' || lo < 0xDC00 || lo > 0xDFFF {
				return i, string(b[i : i+6])
			}
			i += 6 // the low half, checked, is skipped with the high
		}
		i += 6
	}
	return -1, ""
}

// hex4 returns the value of the four hexadecimal digits of b at i.
func hex4(b []byte, i int) (rune, bool) {
	if i+4 > len(b) {
		return 0, false
	}
	var r rune
	for _, c := range b[i : i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	return r, true
}

func jsonKind(k string) string {
	switch k {
	case "map", "struct":
		return "an object"
	case "slice", "array":
		return "an array"
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return "a whole number"
	case "float64", "float32":
		return "a number"
	case "bool":
		return "a boolean"
	}
	return "a " + k
}

// queryBool parses 1/0/true/false/yes/no.
func queryBool(r *http.Request, key string, def bool) (bool, error) {
	v := r.URL.Query().Get(key)
	if v == "" {
		return def, nil
	}
	switch strings.ToLower(v) {
	case "1", "true", "yes":
		return true, nil
	case "0", "false", "no":
		return false, nil
	}
	return false, errorf(http.StatusUnprocessableEntity, "%s: %q is not a boolean; use true or false", key, v)
}

func now() time.Time { return time.Now().UTC() }

func stamp(t time.Time) string { return t.UTC().Format(timeFormat) }
