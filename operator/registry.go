package operator

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"slices"
	"sync"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/operator/elicit"
	"go.uber.org/zap"
)

// Models resolves a model alias ("fast", "smart") to a model. The agent
// package's model registry, or a map in a test, implements it.
type Models interface {
	Model(alias string) (model.Model, error)
}

// ModelFunc adapts a function to the [Models] interface.
type ModelFunc func(alias string) (model.Model, error)

// Model calls f.
func (f ModelFunc) Model(alias string) (model.Model, error) { return f(alias) }

// OneModel returns Models that answer every alias with m.
func OneModel(m model.Model) Models {
	return ModelFunc(func(string) (model.Model, error) { return m, nil })
}

// AliasModels returns Models that answer every alias with m and pass the
// alias to it as the Request.Model of each call: the way to use one client
// that resolves aliases itself, such as the agent package's *agent.Client,
// for every operator.
func AliasModels(m model.Model) Models {
	return ModelFunc(func(alias string) (model.Model, error) { return aliasModel{m, alias}, nil })
}

type aliasModel struct {
	m     model.Model
	alias string
}

func (a aliasModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	return a.m.Generate(ctx, a.request(req))
}

func (a aliasModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return a.m.Stream(ctx, a.request(req))
}

// request returns req with the alias as its model, unless it names one.
func (a aliasModel) request(req *model.Request) *model.Request {
	if req == nil || req.Model != "" {
		return req
	}
	r := *req
	r.Model = a.alias
	return &r
}

// Deps is what a factory may need to build an operator.
type Deps struct {
	// Models resolves model aliases for LLM operators. Nil makes creating
	// an LLM operator fail with ErrNoModel.
	Models Models
	// Logger receives the operator's logs. Nil means no logging.
	Logger *zap.Logger
}

// Model resolves alias through d.Models.
func (d Deps) Model(alias string) (model.Model, error) {
	if d.Models == nil {
		return nil, ErrNoModel
	}
	m, err := d.Models.Model(alias)
	if err != nil {
		return nil, fmt.Errorf("operator: model %q: %w", alias, err)
	}
	if m == nil {
		return nil, fmt.Errorf("%w for alias %q", ErrNoModel, alias)
	}
	return m, nil
}

// Factory builds an operator, once per use.
type Factory func(d Deps) (Operator, error)

type entry struct {
	meta    Metadata
	factory Factory
}

// Registry maps operator names to their metadata and factories. It is safe
// for concurrent use; the zero value is not usable, call [NewRegistry].
type Registry struct {
	mu      sync.RWMutex
	entries map[string]entry
	deps    Deps
}

// NewRegistry returns an empty registry whose operators are built with d.
func NewRegistry(d Deps) *Registry {
	if d.Logger == nil {
		d.Logger = zap.NewNop()
	}
	return &Registry{entries: map[string]entry{}, deps: d}
}

var defaultRegistry = NewRegistry(Deps{})

// Default returns the process-wide registry operators join from init with
// [MustRegister]. Its Deps are empty: create operators that need models from
// a registry of your own, or use [Registry.WithDeps].
func Default() *Registry { return defaultRegistry }

// MustRegister registers an operator in the [Default] registry and panics
// if that fails; it is meant for init functions.
func MustRegister(m Metadata, f Factory) {
	if err := defaultRegistry.Register(m, f); err != nil {
		panic(err)
	}
}

// Register adds an operator. It fails with a [*MetadataError] for invalid
// metadata and with an error wrapping [ErrDuplicate] when the name is taken.
func (r *Registry) Register(m Metadata, f Factory) error {
	if err := m.Validate(); err != nil {
		return err
	}
	if f == nil {
		return &MetadataError{Operator: m.Name, Field: "Factory", Reason: "is nil"}
	}
	m.MCPTools = slices.Clone(m.MCPTools)
	m.ContextRequirements = slices.Clone(m.ContextRequirements)
	m.Capabilities.OutputTypes = slices.Clone(m.Capabilities.OutputTypes)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.entries[m.Name]; ok {
		return fmt.Errorf("%w: %q; pick another name or use a separate Registry", ErrDuplicate, m.Name)
	}
	r.entries[m.Name] = entry{meta: m, factory: f}
	return nil
}

// WithDeps returns a registry with the same operators (registered now)
// whose operators are built with d: one catalogue, one set of models per
// bot.
func (r *Registry) WithDeps(d Deps) *Registry {
	out := NewRegistry(d)
	r.mu.RLock()
	defer r.mu.RUnlock()
	for k, v := range r.entries {
		out.entries[k] = v
	}
	return out
}

// Lookup returns the metadata of the named operator.
func (r *Registry) Lookup(name string) (Metadata, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	e, ok := r.entries[name]
	return e.meta, ok
}

// Has reports whether name is registered.
func (r *Registry) Has(name string) bool {
	_, ok := r.Lookup(name)
	return ok
}

// Names returns the registered names, sorted.
func (r *Registry) Names() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	names := make([]string, 0, len(r.entries))
	for n := range r.entries {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// All returns the metadata of every operator, sorted by name.
func (r *Registry) All() []Metadata {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]Metadata, 0, len(r.entries))
	for _, e := range r.entries {
		out = append(out, e.meta)
	}
	slices.SortFunc(out, func(a, b Metadata) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}

// Check reports every operator whose Fallback is not registered, as one
// error naming them; nil when all fallbacks resolve. Call it once the
// registry is complete (Register cannot, since operators may be registered
// in any order).
func (r *Registry) Check() error {
	var errs []error
	for _, m := range r.All() {
		if m.Fallback != "" && !r.Has(m.Fallback) {
			errs = append(errs, &MetadataError{Operator: m.Name, Field: "Fallback", Reason: fmt.Sprintf("names %q, which is not registered", m.Fallback)})
		}
	}
	return errors.Join(errs...)
}

// New creates the named operator. An unknown name is an [*UnknownError].
func (r *Registry) New(name string) (Operator, Metadata, error) {
	r.mu.RLock()
	e, ok := r.entries[name]
	deps := r.deps
	r.mu.RUnlock()
	if !ok {
		return nil, Metadata{}, &UnknownError{Name: name, Registered: r.Names()}
	}
	op, err := e.factory(deps)
	if err != nil {
		return nil, e.meta, fmt.Errorf("operator: creating %s: %w", name, err)
	}
	if op == nil {
		return nil, e.meta, fmt.Errorf("operator: the factory of %s returned nil", name)
	}
	return op, e.meta, nil
}

// Execute runs the named operator on oc: it retries a failure up to the
// operator's MaxRetries times (not for [Permanent] errors, a cancelled
// ctx or a pause, [ErrPaused]), then, if it still failed and names a
// Fallback, runs the fallback once with the same context (not after a
// pause). When both fail, the error is a
// [*FallbackError] holding both. The operator gets a copy of oc whose
// Messenger speaks for it, with its capabilities, through oc.Messenger's
// reporter and elicitor (none when oc.Messenger is nil). With a reporter,
// each call of oc.Tools is reported as a tool of its own (a [ToolStart],
// then a [ToolComplete] or [ToolFailed]).
//
// The returned metadata is the operator's that produced the result (the
// fallback's, after a fallback). The result's Direct is set when the
// attempt that succeeded sent a direct response through its Messenger to
// a reporter.
func (r *Registry) Execute(ctx context.Context, name string, oc *Context) (*Result, Metadata, error) {
	res, meta, err := r.run(ctx, name, oc)
	if err == nil || meta.Fallback == "" || ctx.Err() != nil || errors.Is(err, ErrPaused) {
		return res, meta, err
	}
	var unknown *UnknownError
	if errors.As(err, &unknown) && unknown.Name == name {
		return nil, meta, err
	}
	r.deps.Logger.Warn("operator failed; running its fallback", zap.String("operator", name), zap.String("fallback", meta.Fallback), zap.Error(err))
	fres, fmeta, ferr := r.run(ctx, meta.Fallback, oc)
	if ferr != nil {
		return nil, fmeta, &FallbackError{Operator: name, Err: err, Fallback: meta.Fallback, FallbackErr: ferr}
	}
	return fres, fmeta, nil
}

func (r *Registry) run(ctx context.Context, name string, oc *Context) (*Result, Metadata, error) {
	op, meta, err := r.New(name)
	if err != nil {
		return nil, meta, err
	}
	if oc == nil {
		oc = &Context{}
	}
	if meta.Type.NeedsMCP() && oc.Tools == nil {
		return nil, meta, &ExecError{Operator: name, Attempts: 0, Err: ErrNeedsMCP}
	}
	local := *oc
	// The messenger speaks for the operator that runs, with its
	// capabilities: a fallback gets its own.
	var rep Reporter
	var el elicit.Elicitor
	if oc.Messenger != nil {
		rep, el = oc.Messenger.reporter, oc.Messenger.elicitor
	}
	if _, wrapped := local.Tools.(reportingCaller); rep != nil && local.Tools != nil && !wrapped {
		local.Tools = reportingCaller{tc: local.Tools, r: rep}
	}
	attempts := 0
	for {
		attempts++
		// A fresh messenger per attempt: a direct response of a failed
		// attempt does not mark the result of the next.
		local.Messenger = NewMessenger(meta, rep, el)
		res, err := op.Execute(ctx, &local)
		if err == nil {
			if res == nil {
				res = &Result{}
			}
			if local.Messenger.SentDirect() {
				res.Direct = true
			}
			return res, meta, nil
		}
		if attempts > meta.MaxRetries || IsPermanent(err) || ctx.Err() != nil || errors.Is(err, ErrPaused) {
			return nil, meta, &ExecError{Operator: name, Attempts: attempts, Err: err}
		}
		r.deps.Logger.Debug("operator failed; retrying", zap.String("operator", name), zap.Int("attempt", attempts), zap.Error(err))
	}
}
