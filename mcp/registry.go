package mcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/internal/utf8clip"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"
	"golang.org/x/sync/singleflight"
)

// RegistryConfig configures a [Registry].
type RegistryConfig struct {
	// Manager connects to the servers. Required.
	Manager *Manager
	// TTL is how long tool summaries stay fresh. Zero means 5 minutes.
	TTL time.Duration
	// DiscoveryURL, when set, is fetched on every refresh for the server list
	// (mcpServers JSON, see [FetchServers]); servers it stops listing are
	// removed. Servers added in code or from a config file are never
	// removed by discovery.
	DiscoveryURL string
	// HTTPClient fetches DiscoveryURL. Nil means http.DefaultClient.
	HTTPClient *http.Client
	// Separator joins server and tool in a qualified name. Zero means "__"
	// (qualified names stay valid tool names for every LLM provider).
	Separator string
	// Logger reports refresh failures. Nil means the manager's logger.
	Logger *zap.Logger
}

// Tool is a tool's full definition (stage 2), kept from its server's
// listing. Its summary is what stage 1 keeps of it: Name is the name to call the tool
// by (the server's name for the tool when no other server offers that
// name, else Server+Separator+Tool), Server and Tool say where it lives,
// Available is false while the server is unhealthy or its breaker is open
// (the tool is listed but calls are expected to fail), and ReadOnly and
// Idempotent are the tool's hints.
type Tool struct {
	model.ToolSummary
	// InputSchema and OutputSchema are JSON Schemas; OutputSchema is empty
	// when the tool declares none.
	InputSchema  json.RawMessage `json:"input_schema"`
	OutputSchema json.RawMessage `json:"output_schema,omitempty"`
	Annotations  map[string]any  `json:"annotations,omitempty"`

	refused error // why the registry refuses the tool (MaxInputSchemaBytes)
}

// Registry is the catalogue of the manager's servers and their tools, loaded
// lazily in two stages: summaries of every tool (refreshed every TTL, or
// when a server reports its list changed), and full definitions, with
// their schemas, of the tools looked up ([Registry.Tool]). A listing
// fills both, its schemas encoded once; a lookup lists the server again
// only when its definitions were dropped since (the server announced a
// changed list). It is safe for concurrent use.
//
// Name collisions: a tool name offered by one server is listed as is. A name
// offered by several servers is listed once per server as
// "<server><Separator><tool>" (for example "search__lookup"), and calling the
// bare name returns an [*AmbiguousToolError] naming the qualified ones.
// Qualified names always work, also for unique tools.
type Registry struct {
	cfg RegistryConfig
	m   *Manager
	log *zap.Logger
	sf  singleflight.Group

	unhook    func() // removes invalidate from the manager's hooks
	closeOnce sync.Once

	mu        sync.Mutex
	refreshed time.Time
	// staleHook, when set by a test, runs after a caller found the
	// index old and before it refreshes.
	staleHook  func()
	servers    map[string]*serverTools
	discovered map[string]bool // servers added by discovery
	schemas    map[string]map[string]*Tool
	// changes counts each server's tools list_changed notices, so that a
	// listing a notice overtook stays stale; one entry per server the
	// manager has named in a notice.
	changes   map[string]uint64
	byName    map[string]model.ToolSummary
	ambiguous map[string][]string
	// names lists every name a lookup may suggest (byName's and
	// ambiguous's keys), replaced as a whole by rebuild and never changed
	// in place, so that suggestions are computed outside mu; longest is
	// the length of the longest.
	names   []string
	longest int
}

// serverTools is stage 1 of one server.
type serverTools struct {
	tools []model.ToolSummary
	// refused says why a listed tool is refused (its input schema over
	// MaxInputSchemaBytes), by the server's name for it.
	refused map[string]string
	stale   bool
	err     error
	// retryAt is when a lookup may list the server again after a failed
	// listing (stale is then true): a server that was down when listed is
	// tried again within failedListRetry, not only after the TTL.
	retryAt time.Time
}

// failedListRetry is how long a registry waits before listing again the
// tools of a server whose listing failed.
const failedListRetry = 2 * time.Second

// NewRegistry returns a registry over cfg.Manager's servers. It loads
// nothing until first asked.
func NewRegistry(cfg RegistryConfig) (*Registry, error) {
	if cfg.Manager == nil {
		return nil, errors.New("mcp: RegistryConfig.Manager is nil; create one with NewManager")
	}
	if cfg.TTL <= 0 {
		cfg.TTL = 5 * time.Minute
	}
	if cfg.Separator == "" {
		cfg.Separator = "__"
	}
	if cfg.Logger == nil {
		cfg.Logger = cfg.Manager.log
	}
	r := &Registry{cfg: cfg, m: cfg.Manager, log: cfg.Logger, servers: map[string]*serverTools{},
		discovered: map[string]bool{}, schemas: map[string]map[string]*Tool{}, changes: map[string]uint64{}}
	r.unhook = cfg.Manager.onToolsChanged(r.invalidate)
	return r, nil
}

// Close stops the registry following the servers' announcements that
// their tool lists changed, and releases what [NewRegistry] registered on
// the manager, so that many registries over one manager (one per tenant or
// per test) do not accumulate there. A closed registry still answers from
// its cache and refreshes it every TTL. A registry that lives as long as
// its manager needs no Close. Close may be called more than once.
func (r *Registry) Close() {
	r.closeOnce.Do(r.unhook)
}

// invalidate marks a server's tools stale; it runs on the transport's reader
// goroutine and must not block.
func (r *Registry) invalidate(server string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changes[server]++
	if st, ok := r.servers[server]; ok {
		st.stale = true
	}
	delete(r.schemas, server)
}

// Tools returns the summaries of every tool, refreshing first when they are
// older than the TTL or a server changed its list. A server that cannot be
// listed keeps its last known tools, marked unavailable; its error is in
// [Manager.Health]. Summaries are sorted by name.
func (r *Registry) Tools(ctx context.Context) ([]model.ToolSummary, error) {
	if err := r.ensureFresh(ctx); err != nil {
		return nil, err
	}
	health := map[string]bool{}
	for _, h := range r.m.Health() {
		health[h.Server] = h.Available()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]model.ToolSummary, 0, len(r.byName))
	for _, t := range r.byName {
		st := r.servers[t.Server]
		t.Available = health[t.Server] && st != nil && st.err == nil && st.refused[t.Tool] == ""
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b model.ToolSummary) int { return cmp.Compare(a.Name, b.Name) })
	return out, nil
}

// Refresh reloads the server list (when discovery is configured) and every
// server's tools now. Concurrent refreshes share one run.
func (r *Registry) Refresh(ctx context.Context) error {
	_, err, _ := r.sf.Do("all", func() (any, error) { return nil, r.refreshAll(ctx) })
	return err
}

func (r *Registry) ensureFresh(ctx context.Context) error {
	r.mu.Lock()
	expired := time.Since(r.refreshed) > r.cfg.TTL
	var stale []string
	now := time.Now()
	for name, st := range r.servers {
		if st.stale && !now.Before(st.retryAt) {
			stale = append(stale, name)
		}
	}
	known := len(r.servers) == r.m.count()
	r.mu.Unlock()
	if expired || !known {
		if r.staleHook != nil {
			r.staleHook()
		}
		// A caller that found the index old may reach here after another
		// caller's refresh ended: the refresh it joins (or starts) looks
		// again, so that concurrent first loads list each server once.
		_, err, _ := r.sf.Do("all", func() (any, error) {
			if r.fresh() {
				return nil, nil
			}
			return nil, r.refreshAll(ctx)
		})
		return err
	}
	if len(stale) == 0 {
		return nil // the index is as the last refresh left it
	}
	var wg sync.WaitGroup
	for _, name := range stale {
		wg.Go(func() {
			_, _, _ = r.sf.Do("server:"+name, func() (any, error) { r.refreshServer(ctx, name); return nil, nil })
		})
	}
	wg.Wait()
	r.rebuild()
	return nil
}

// fresh reports whether the last full refresh is within the TTL and
// knew every server of the manager.
func (r *Registry) fresh() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	return !r.refreshed.IsZero() && time.Since(r.refreshed) <= r.cfg.TTL && len(r.servers) == r.m.count()
}

func (r *Registry) refreshAll(ctx context.Context) error {
	if r.cfg.DiscoveryURL != "" {
		if err := r.discover(ctx); err != nil {
			r.log.Warn("mcp discovery failed; keeping the known servers", zap.Error(err))
			r.mu.Lock()
			empty := len(r.servers) == 0
			r.mu.Unlock()
			if empty && len(r.m.Servers()) == 0 {
				return err
			}
		}
	}
	servers := r.m.Servers()
	var wg sync.WaitGroup
	for _, s := range servers {
		wg.Go(func() {
			_, _, _ = r.sf.Do("server:"+s.Name, func() (any, error) { r.refreshServer(ctx, s.Name); return nil, nil })
		})
	}
	wg.Wait()
	if ctx.Err() != nil {
		return ctx.Err()
	}
	r.mu.Lock()
	for name := range r.servers {
		if !slices.ContainsFunc(servers, func(s Server) bool { return s.Name == name }) {
			delete(r.servers, name)
			delete(r.schemas, name)
		}
	}
	for name := range r.changes {
		if !slices.ContainsFunc(servers, func(s Server) bool { return s.Name == name }) {
			delete(r.changes, name)
		}
	}
	r.refreshed = time.Now()
	r.mu.Unlock()
	r.rebuild()
	return nil
}

func (r *Registry) discover(ctx context.Context) error {
	servers, err := FetchServers(ctx, r.cfg.HTTPClient, r.cfg.DiscoveryURL)
	if err != nil {
		return err
	}
	existing := map[string]bool{}
	for _, s := range r.m.Servers() {
		existing[s.Name] = true
	}
	r.mu.Lock()
	discovered := maps.Clone(r.discovered)
	r.mu.Unlock()
	listed := map[string]bool{}
	for _, s := range servers {
		listed[s.Name] = true
		if existing[s.Name] && !discovered[s.Name] {
			continue // a server added in code or from a file wins
		}
		if err := r.m.Add(s); err != nil {
			if discovered[s.Name] { // its settings changed: replace it
				_ = r.m.Remove(s.Name)
				err = r.m.Add(s)
			}
			if err != nil {
				r.log.Warn("mcp discovery: server not added", zap.String("server", s.Name), zap.Error(err))
				continue
			}
		}
		discovered[s.Name] = true
	}
	for name := range discovered {
		if !listed[name] {
			delete(discovered, name)
			_ = r.m.Remove(name)
		}
	}
	r.mu.Lock()
	r.discovered = discovered
	r.mu.Unlock()
	return nil
}

// refreshServer lists one server's tools into stage 1.
//
// A tools list_changed notice that arrives while the listing runs leaves
// the server stale: the listing may predate the change.
func (r *Registry) refreshServer(ctx context.Context, name string) {
	r.mu.Lock()
	gen := r.changes[name]
	r.mu.Unlock()
	tools, err := r.m.listTools(ctx, name)
	r.mu.Lock()
	defer r.mu.Unlock()
	overtaken := r.changes[name] != gen
	st := r.servers[name]
	if st == nil {
		st = &serverTools{}
		r.servers[name] = st
	}
	st.err = err
	if err != nil {
		r.log.Warn("mcp tools not listed; keeping the last known ones as unavailable", zap.String("server", name), zap.Error(err))
		st.stale, st.retryAt = true, time.Now().Add(failedListRetry)
		return
	}
	st.stale, st.retryAt = false, time.Time{}
	st.tools = st.tools[:0]
	st.refused = nil
	// The listing's full definitions are stage 2 too: its schemas are
	// encoded here, once, and a lookup does not list the server again.
	full := make(map[string]*Tool, len(tools))
	for _, mt := range tools {
		t := fullTool(name, mt)
		full[mt.Name] = t
		st.tools = append(st.tools, t.ToolSummary)
		if t.refused != nil {
			if st.refused == nil {
				st.refused = map[string]string{}
			}
			st.refused[mt.Name] = t.refused.Error()
			r.log.Warn("mcp tool refused", zap.String("server", name), zap.String("tool", mt.Name), zap.Error(t.refused))
		}
	}
	if overtaken {
		st.stale = true
		return
	}
	r.schemas[name] = full
}

// MaxInputSchemaBytes is the largest input schema of a server's tool, in
// bytes, that a [Registry] accepts: the schema goes to the model with every
// request that offers the tool. [Registry.Tools] lists a tool over it as
// unavailable (the reason is in [Registry.Health]'s RefusedTools) and
// [Registry.Tool] refuses it.
const MaxInputSchemaBytes = 256 << 10

// MaxDescriptionBytes and MaxTitleBytes are the largest description and
// title of a server's tool, in bytes, that a [Registry] accepts: like the
// input schema, they go to the model with every request that offers the
// tool. A tool over either is refused as one over MaxInputSchemaBytes is
// (unavailable in [Registry.Tools], the reason in [Registry.Health]'s
// RefusedTools, refused by [Registry.Tool]); the listing carries its
// description and title clipped to the bound, ending in
// [ClippedMarker].
const (
	MaxDescriptionBytes = 8 << 10
	MaxTitleBytes       = 1 << 10
)

// MaxToolNameBytes is the longest name of a server's tool, in bytes, that
// a [Registry] accepts. A tool whose name is empty, longer, not valid
// UTF-8 or holds control or bidirectional-text characters (which show
// other text than the name in logs, interfaces and a model's prompt) is
// refused as one over MaxInputSchemaBytes is; see [CheckToolName].
const MaxToolNameBytes = 256

// CheckToolName returns an error saying what is wrong with a server's tool
// name that a [Registry] refuses: empty, over [MaxToolNameBytes] bytes,
// not valid UTF-8, or holding a control or bidirectional-text character.
// The error quotes the name cut to 64 bytes and escaped.
func CheckToolName(name string) error {
	shown := name
	if len(shown) > 64 {
		shown = shown[:64]
	}
	switch {
	case name == "":
		return errors.New("the tool name is empty; the server must name the tool")
	case len(name) > MaxToolNameBytes:
		return fmt.Errorf("the tool name %+q... is %d bytes, over %d (MaxToolNameBytes); the server must name it shorter", shown, len(name), MaxToolNameBytes)
	case !utf8.ValidString(name):
		return fmt.Errorf("the tool name %+q is not valid UTF-8; the server must rename it", shown)
	}
	for _, r := range name {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) {
			return fmt.Errorf("the tool name %+q has the character %U; the server must rename it", shown, r)
		}
	}
	return nil
}

// ClippedMarker ends a refused tool's description or title that the
// registry clipped to MaxDescriptionBytes or MaxTitleBytes.
const ClippedMarker = " [clipped]"

// ErrToolRefused is wrapped by the error of a lookup of a tool the registry
// refuses (its input schema, description or title is over
// MaxInputSchemaBytes, MaxDescriptionBytes or MaxTitleBytes).
var ErrToolRefused = errors.New("mcp: tool refused")

// inputSchema returns the input schema of server's tool mt, or an error if
// the tool is refused: its name fails CheckToolName, or its input schema,
// description or title is over its bound (MaxInputSchemaBytes,
// MaxDescriptionBytes, MaxTitleBytes).
func inputSchema(server string, mt mcpgo.Tool) (json.RawMessage, error) {
	if err := CheckToolName(mt.Name); err != nil {
		return nil, fmt.Errorf("%w: a tool of server %q: %v", ErrToolRefused, server, err)
	}
	for _, f := range []struct {
		field, text, bound string
		max                int
	}{
		{"description", mt.Description, "MaxDescriptionBytes", MaxDescriptionBytes},
		{"title", mt.Title, "MaxTitleBytes", MaxTitleBytes},
		{"annotations title", mt.Annotations.Title, "MaxTitleBytes", MaxTitleBytes},
	} {
		if len(f.text) > f.max {
			return nil, fmt.Errorf("%w: tool %q of server %q has a %s of %d bytes, over the limit of %d (%s); the server should describe the tool more briefly", ErrToolRefused, mt.Name, server, f.field, len(f.text), f.max, f.bound)
		}
	}
	schema := mt.RawInputSchema
	if schema == nil {
		schema, _ = json.Marshal(mt.InputSchema)
	}
	if len(schema) > MaxInputSchemaBytes {
		return nil, fmt.Errorf("%w: tool %q of server %q has an input schema of %d bytes, over the limit of %d (MaxInputSchemaBytes); the server should describe the arguments more briefly", ErrToolRefused, mt.Name, server, len(schema), MaxInputSchemaBytes)
	}
	return schema, nil
}

// summary returns the stage-1 summary of server's tool t, its description
// and title clipped to their bounds (a tool over them is refused: see
// inputSchema).
func summary(server string, t mcpgo.Tool) model.ToolSummary {
	a := t.Annotations
	title := t.Title
	if title == "" {
		title = a.Title
	}
	return model.ToolSummary{
		Name: t.Name, Server: server, Tool: t.Name, Title: clipText(title, MaxTitleBytes), Description: clipText(t.Description, MaxDescriptionBytes),
		ReadOnly:   a.ReadOnlyHint != nil && *a.ReadOnlyHint,
		Idempotent: a.IdempotentHint != nil && *a.IdempotentHint,
	}
}

// clipText returns s cut to at most n bytes, ending in ClippedMarker when
// it was cut.
func clipText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return utf8clip.Clip(s, n-len(ClippedMarker)) + ClippedMarker
}

// rebuild recomputes the name index from stage 1.
func (r *Registry) rebuild() {
	r.mu.Lock()
	defer r.mu.Unlock()
	owners := map[string][]model.ToolSummary{}
	for _, st := range r.servers {
		for _, t := range st.tools {
			owners[t.Tool] = append(owners[t.Tool], t)
		}
	}
	r.byName = map[string]model.ToolSummary{}
	r.ambiguous = map[string][]string{}
	for tool, ts := range owners {
		if len(ts) == 1 {
			r.byName[tool] = ts[0]
			continue
		}
		slices.SortFunc(ts, func(a, b model.ToolSummary) int { return cmp.Compare(a.Server, b.Server) })
		for _, t := range ts {
			t.Name = t.Server + r.cfg.Separator + t.Tool
			r.byName[t.Name] = t
			r.ambiguous[tool] = append(r.ambiguous[tool], t.Name)
		}
	}
	names := make([]string, 0, len(r.byName)+len(r.ambiguous))
	longest := 0
	for n := range r.byName {
		names = append(names, n)
		longest = max(longest, len(n))
	}
	for n := range r.ambiguous {
		names = append(names, n)
		longest = max(longest, len(n))
	}
	slices.Sort(names)
	r.names, r.longest = names, longest
}

// Resolve maps a tool name as [Registry.Tools] lists it (or a qualified
// "<server><Separator><tool>") to its server and the server's tool name.
//
// A name already in the index resolves without waiting for an expired TTL
// refresh; other names refresh first. A tool the registry refuses (see
// [MaxInputSchemaBytes]) does not resolve: its error wraps [ErrToolRefused].
func (r *Registry) Resolve(ctx context.Context, name string) (server, tool string, err error) {
	r.mu.Lock()
	t, ok := r.byName[name]
	var refused error
	if ok {
		refused = r.refusedLocked(t.Server, t.Tool)
	}
	r.mu.Unlock()
	if ok {
		if refused != nil {
			return "", "", refused
		}
		return t.Server, t.Tool, nil
	}
	if err := r.ensureFresh(ctx); err != nil {
		return "", "", err
	}
	server, tool, err = r.lookup(name)
	var nf *ToolNotFoundError
	if errors.As(err, &nf) {
		nf.Similar = r.suggest(ctx, name)
	}
	return server, tool, err
}

// refusedLocked returns an error wrapping ErrToolRefused, saying why,
// when the registry refuses tool of server (see [MaxInputSchemaBytes]), or
// nil. r.mu is held.
func (r *Registry) refusedLocked(server, tool string) error {
	st := r.servers[server]
	if st == nil || st.refused[tool] == "" {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrToolRefused, strings.TrimPrefix(st.refused[tool], ErrToolRefused.Error()+": "))
}

// lookup resolves name in the index; a name it does not know is a
// *ToolNotFoundError without suggestions, and a tool the registry refuses
// an error wrapping ErrToolRefused.
func (r *Registry) lookup(name string) (server, tool string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if t, ok := r.byName[name]; ok {
		if err := r.refusedLocked(t.Server, t.Tool); err != nil {
			return "", "", err
		}
		return t.Server, t.Tool, nil
	}
	if q, ok := r.ambiguous[name]; ok {
		return "", "", &AmbiguousToolError{Name: name, Qualified: slices.Clone(q)}
	}
	if srv, tl, ok := strings.Cut(name, r.cfg.Separator); ok {
		if st, ok := r.servers[srv]; ok && slices.ContainsFunc(st.tools, func(t model.ToolSummary) bool { return t.Tool == tl }) {
			if err := r.refusedLocked(srv, tl); err != nil {
				return "", "", err
			}
			return srv, tl, nil
		}
	}
	return "", "", &ToolNotFoundError{Name: name}
}

// suggest returns the known names close to name, computed outside the
// registry's lock (see similar for its bounds).
func (r *Registry) suggest(ctx context.Context, name string) []string {
	r.mu.Lock()
	names, longest := r.names, r.longest
	r.mu.Unlock()
	out, _ := similar(ctx, name, names, longest)
	return out
}

// Tool returns a tool's full definition (stage 2), as the registry's
// last listing of its server gave it; when the server announced a changed
// list since, its tools are listed again first. name is as
// [Registry.Tools] lists it.
func (r *Registry) Tool(ctx context.Context, name string) (*Tool, error) {
	server, tool, err := r.Resolve(ctx, name)
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	t := r.schemas[server][tool]
	r.mu.Unlock()
	if t != nil {
		return named(t, name)
	}
	_, err, _ = r.sf.Do("schema:"+server, func() (any, error) {
		tools, err := r.m.listTools(ctx, server)
		if err != nil {
			return nil, err
		}
		full := make(map[string]*Tool, len(tools))
		for _, mt := range tools {
			full[mt.Name] = fullTool(server, mt)
		}
		r.mu.Lock()
		r.schemas[server] = full
		r.mu.Unlock()
		return nil, nil
	})
	if err != nil {
		return nil, err
	}
	r.mu.Lock()
	t = r.schemas[server][tool]
	if t == nil {
		// The server dropped the tool since stage 1.
		if st := r.servers[server]; st != nil {
			st.stale = true
		}
	}
	r.mu.Unlock()
	if t == nil {
		return nil, &ToolNotFoundError{Name: name, Similar: r.suggest(ctx, name)}
	}
	return named(t, name)
}

// named returns a copy of the cached t named name (the cache is shared by
// every lookup, under its bare and its qualified name), or why the tool is
// refused.
func named(t *Tool, name string) (*Tool, error) {
	if t.refused != nil {
		return nil, t.refused
	}
	c := *t
	c.Name = name
	return &c, nil
}

func fullTool(server string, mt mcpgo.Tool) *Tool {
	t := &Tool{ToolSummary: summary(server, mt)}
	t.InputSchema, t.refused = inputSchema(server, mt)
	if t.refused != nil {
		return t // its schemas are not kept
	}
	if mt.RawOutputSchema != nil {
		t.OutputSchema = mt.RawOutputSchema
	} else if mt.OutputSchema.Type != "" {
		t.OutputSchema, _ = json.Marshal(mt.OutputSchema)
	}
	t.Annotations = annotations(mt.Annotations)
	return t
}

// annotations returns a's fields that are set, by their JSON names, or
// nil when none is: the map a round trip through JSON would give,
// without it.
func annotations(a mcpgo.ToolAnnotation) map[string]any {
	var out map[string]any
	set := func(key string, v any) {
		if out == nil {
			out = make(map[string]any, 5)
		}
		out[key] = v
	}
	if a.Title != "" {
		set("title", a.Title)
	}
	for _, h := range []struct {
		key string
		v   *bool
	}{{"readOnlyHint", a.ReadOnlyHint}, {"destructiveHint", a.DestructiveHint}, {"idempotentHint", a.IdempotentHint}, {"openWorldHint", a.OpenWorldHint}} {
		if h.v != nil {
			set(h.key, *h.v)
		}
	}
	return out
}

// Health returns the health of every server; see [Manager.Health]. It
// adds the tools the registry refuses (RefusedTools).
func (r *Registry) Health() []Health {
	hs := r.m.Health()
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := range hs {
		if st := r.servers[hs[i].Server]; st != nil && len(st.refused) > 0 {
			hs[i].RefusedTools = maps.Clone(st.refused)
		}
	}
	return hs
}

// Logger returns the registry's logger (RegistryConfig.Logger, or the
// manager's), for packages that report on the registry's tools, such as
// mcptool's warnings about tools it leaves out.
func (r *Registry) Logger() *zap.Logger { return r.log }

// NewSession returns a session whose calls may name tools as the registry
// lists them (ToolCall.Server empty).
func (r *Registry) NewSession(cb Callbacks) *Session {
	s := r.m.NewSession(cb)
	s.resolve = r.Resolve
	s.refused = func(server, tool string) error {
		r.mu.Lock()
		defer r.mu.Unlock()
		return r.refusedLocked(server, tool)
	}
	return s
}

// Bounds on the search for names close to an unknown one.
const (
	// suggestMargin: a name longer than the longest known name by more
	// than this gets no suggestions.
	suggestMargin = 8
	// suggestMaxLen: names (asked for or known) longer than this take no
	// part in the search.
	suggestMaxLen = 256
	// suggestWork bounds the cells of edit-distance tables one search
	// fills; the search stops there with what it found.
	suggestWork = 1 << 24
)

// similar returns up to three of names close to name: those containing it
// or contained in it first, then by edit distance. longest is the length
// of the longest of names. The search is bounded: a name longer than
// longest+suggestMargin or suggestMaxLen gets none, known names longer than
// suggestMaxLen are skipped, names whose length alone puts them too far are
// not compared, the comparisons stop after suggestWork cells and when ctx
// ends. It also returns the cells it filled.
func similar(ctx context.Context, name string, names []string, longest int) (out []string, work int) {
	out = []string{}
	if len(name) > longest+suggestMargin || len(name) > suggestMaxLen {
		return out, 0
	}
	type scored struct {
		n string
		d int
	}
	var best []scored // the three closest so far, sorted
	names3 := func() []string {
		for _, b := range best {
			out = append(out, b.n)
		}
		return out
	}
	lname := strings.ToLower(name)
	rname := []rune(lname)
	limit := max(2, len(name)/3)
	for i, n := range names {
		if i%256 == 255 && ctx.Err() != nil {
			break
		}
		if len(n) > suggestMaxLen {
			continue
		}
		ln := strings.ToLower(n)
		var d int
		switch {
		case strings.Contains(ln, lname) || strings.Contains(lname, ln):
			d = 1
			if ln == lname {
				d = 0
			}
		default:
			rn := []rune(ln)
			if abs(len(rn)-len(rname)) > limit {
				continue // the distance is at least the difference in length
			}
			if work += len(rn) * len(rname); work > suggestWork {
				return names3(), work
			}
			if d = levenshtein(rname, rn); d > limit {
				continue
			}
		}
		c := scored{n, d}
		at, _ := slices.BinarySearchFunc(best, c, func(a, b scored) int { return cmp.Or(cmp.Compare(a.d, b.d), cmp.Compare(a.n, b.n)) })
		if at < 3 {
			best = slices.Insert(best, at, c)
			best = best[:min(len(best), 3)]
		}
	}
	return names3(), work
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

func levenshtein(ra, rb []rune) int {
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(rb)]
}
