package operator

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator/elicit"
	"github.com/agentgraph/agentgraph/operator/toolresult"
)

var notFound = memory.ErrNotFound

// Source says where a tool lives.
type Source string

// Sources, in lookup order.
const (
	SourceLocal    Source = "local"
	SourceOperator Source = "operator"
	SourceMCP      Source = "mcp"
)

// ProviderConfig configures a [Provider]. Every source is optional.
type ProviderConfig struct {
	// Local holds the local tools. Nil means none.
	Local *LocalRegistry
	// Operators holds the operators callable as tools. Nil means none.
	Operators *Registry
	// MCP lists the MCP tools and their schemas (mcptool.Catalog over the
	// MCP server registry). Nil means none.
	MCP memory.Tools
	// Assembler, if set, assembles the context an operator's
	// Metadata.ContextRequirements ask for before it runs (unless the
	// call brings it in Env.Assembled; see [Provider.Assemble]). An assembler
	// whose tools.* requirements are served by this provider is built
	// without AssemblerConfig.Tools and given the provider afterwards:
	// asm.Register("tools", memory.ToolSource(provider)).
	Assembler *memory.Assembler
}

// Provider is the unified catalogue. It is safe for concurrent use.
type Provider struct {
	cfg ProviderConfig
}

// New returns a provider over cfg's sources.
func NewProvider(cfg ProviderConfig) *Provider {
	if cfg.Local == nil {
		cfg.Local = NewLocalRegistry()
	}
	return &Provider{cfg: cfg}
}

// ToolSummaries lists every tool, local ones first, then operators, then
// MCP tools, each group sorted by name; a name already listed by an earlier
// source is left out, as lookup would never reach it. Each summary's Source
// says where the tool lives (SourceLocal, SourceOperator, SourceMCP). It
// implements [memory.Tools].
func (p *Provider) ToolSummaries(ctx context.Context) ([]model.ToolSummary, error) {
	var out []model.ToolSummary
	seen := map[string]bool{}
	add := func(s model.ToolSummary) {
		if !seen[s.Name] {
			seen[s.Name] = true
			out = append(out, s)
		}
	}
	for _, i := range p.cfg.Local.Infos() {
		add(model.ToolSummary{Name: i.Name, Description: i.Description, Source: string(SourceLocal), Available: true})
	}
	if p.cfg.Operators != nil {
		for _, m := range p.cfg.Operators.All() {
			add(model.ToolSummary{Name: m.Name, Description: m.Description, Source: string(SourceOperator), Available: true})
		}
	}
	if p.cfg.MCP != nil {
		sums, err := p.cfg.MCP.ToolSummaries(ctx)
		if err != nil {
			return out, fmt.Errorf("operator: listing MCP tools: %w", err)
		}
		sums = slices.Clone(sums)
		slices.SortFunc(sums, func(a, b model.ToolSummary) int { return strings.Compare(a.Name, b.Name) })
		for _, s := range sums {
			s.Source = string(SourceMCP)
			add(s)
		}
	}
	return out, nil
}

// Text renders the catalogue for a prompt, one line per tool, grouped by
// source:
//
//	Local tools (instant):
//	- list_tools: ...
//	Operators:
//	- query_rewriter: ...
//	MCP tools:
//	- web_search: ...
//
// A tool not available now (its server down, or the tool refused by the
// MCP registry: see [model.ToolSummary.Available]) is left out.
func (p *Provider) Text(ctx context.Context) (string, error) {
	sums, err := p.ToolSummaries(ctx)
	var b strings.Builder
	headers := map[string]string{string(SourceLocal): "Local tools (instant):", string(SourceOperator): "Operators:", string(SourceMCP): "MCP tools:"}
	var last string
	for _, s := range sums {
		if !s.Available {
			continue
		}
		if s.Source != last {
			if last != "" {
				b.WriteByte('\n')
			}
			b.WriteString(headers[s.Source])
			b.WriteByte('\n')
			last = s.Source
		}
		fmt.Fprintf(&b, "- %s: %s\n", s.Name, s.Description)
	}
	return b.String(), err
}

// Lookup reports which source serves name: local tools first, then
// operators, then MCP tools, listed or resolved by the catalog (a name
// qualified by its server).
func (p *Provider) Lookup(ctx context.Context, name string) (Source, error) {
	if _, ok := p.cfg.Local.Lookup(name); ok {
		return SourceLocal, nil
	}
	if p.cfg.Operators != nil && p.cfg.Operators.Has(name) {
		return SourceOperator, nil
	}
	if p.cfg.MCP != nil {
		sums, err := p.cfg.MCP.ToolSummaries(ctx)
		if err != nil {
			return "", fmt.Errorf("operator: listing MCP tools: %w", err)
		}
		for _, s := range sums {
			if s.Name == name {
				return SourceMCP, nil
			}
		}
		// A name the catalog resolves without listing it, such as an MCP
		// tool qualified by its server ("knowledge__search_knowledge"
		// while the listing shows "search_knowledge").
		if _, err := p.cfg.MCP.ToolSchema(ctx, name); err == nil {
			return SourceMCP, nil
		}
	}
	return "", p.unknown(ctx, name)
}

func (p *Provider) unknown(ctx context.Context, name string) error {
	sums, _ := p.ToolSummaries(ctx)
	known := make([]string, len(sums))
	for i, s := range sums {
		known[i] = s.Name
	}
	slices.Sort(known)
	return &UnknownError{Name: name, Kind: "tool", Registered: known}
}

// IsLocal reports whether name is a local tool: a call that needs no
// network and no session.
func (p *Provider) IsLocal(name string) bool {
	_, ok := p.cfg.Local.Lookup(name)
	return ok
}

// ToolSchema returns the named tool's input schema as JSON text (memory.Tools).
// An operator's schema takes a query string and any parameters it reads.
// An unknown name is an error matching memory.ErrNotFound.
func (p *Provider) ToolSchema(ctx context.Context, name string) (string, error) {
	src, err := p.Lookup(ctx, name)
	if err != nil {
		return "", err
	}
	switch src {
	case SourceLocal:
		t, _ := p.cfg.Local.Lookup(name)
		info := t.Info()
		schema := info.InputSchema
		if schema == nil {
			schema = json.RawMessage(`{"type":"object","properties":{}}`)
		}
		return SchemaText(name, info.Description, schema), nil
	case SourceOperator:
		m, _ := p.cfg.Operators.Lookup(name)
		return SchemaText(name, m.Description, json.RawMessage(`{"type":"object","properties":{"query":{"type":"string","description":"what the operator should work on"}},"additionalProperties":true}`)), nil
	}
	return p.cfg.MCP.ToolSchema(ctx, name)
}

// SchemaText renders a tool's name, description and input schema as the
// JSON object memory.Tools.ToolSchema returns: {"name", "description",
// "input_schema"}.
func SchemaText(name, desc string, schema json.RawMessage) string {
	b, _ := json.Marshal(struct {
		Name        string          `json:"name"`
		Description string          `json:"description"`
		InputSchema json.RawMessage `json:"input_schema"`
	}{name, desc, schema})
	return string(b)
}

// Env is what a call needs from its request.
type Env struct {
	// Query is the user's query, given to an operator when args has no
	// "query" string.
	Query string
	// Tools calls MCP tools for the request: its MCP session (see
	// mcptool.Session). Required to execute MCP tools and MCP-backed
	// operators.
	Tools ToolCaller
	// Reporter receives what the call reports (see [Provider.Execute]) and
	// the messages of operators and local tools; Elicitor asks their
	// questions. Nil discards reports and refuses questions.
	Reporter Reporter
	Elicitor elicit.Elicitor
	// Turn is the current turn, or nil. Operators receive it in
	// Context.Turn and local tools in LocalCall.Turn.
	Turn *memory.Turn
	// Assembled, if set, is the operator's context already assembled by
	// the caller (a "build context" step before the call, usually with
	// [Provider.Assemble]); Execute passes it on as is instead of
	// assembling it again. Nil means Execute assembles the context itself
	// when ProviderConfig.Assembler is set. Local and MCP tools ignore it.
	Assembled *memory.Assembled
}

// Assemble builds the context the named tool needs before it runs: for an
// operator with Metadata.ContextRequirements, ProviderConfig.Assembler's context
// for env.Turn (or, without a turn, for a turn of its own holding only the
// query: the "query" argument of args, else env.Query). It returns nil,
// nil for local and MCP tools, for operators without requirements and when
// the provider has no assembler. Give the result to [Provider.Execute] in
// Env.Assembled so it is not assembled twice. A requirement that cannot be
// served is an error naming the operator and the requirement.
func (p *Provider) Assemble(ctx context.Context, name string, args map[string]any, env Env) (*memory.Assembled, error) {
	if p.cfg.Assembler == nil || p.cfg.Operators == nil || p.IsLocal(name) {
		return nil, nil
	}
	meta, ok := p.cfg.Operators.Lookup(name)
	if !ok || len(meta.ContextRequirements) == 0 {
		return nil, nil
	}
	turn := env.Turn
	if turn == nil {
		turn = memory.NewTurn("", queryOf(args, env))
	}
	a, err := p.cfg.Assembler.Assemble(ctx, turn, meta.ContextRequirements...)
	if err != nil {
		return nil, fmt.Errorf("operator: assembling the context of %s: %w", name, err)
	}
	return a, nil
}

// queryOf is an operator's query: the "query" string of args, else the
// request's.
func queryOf(args map[string]any, env Env) string {
	if q, ok := args["query"].(string); ok {
		return q
	}
	return env.Query
}

// Execute runs the named tool with args wherever it lives and returns its
// result in one form. An operator's output becomes a text item (JSON for
// non-strings) and, when it is not a string, the Structured value; its
// contents follow. An unknown name is an [*UnknownError] (Kind "tool").
//
// An operator gets Env.Assembled as its assembled context or, when that is
// nil, the context [Provider.Assemble] builds.
//
// With Env.Reporter set, the call is reported the same way whatever its
// source: a [ToolStart] before it, then a [ToolComplete], or a
// [ToolFailed] (also for a result the tool marked as an error, and for a
// context that could not be assembled). ToolComplete's ContentCount is the
// number of content items the user receives: the result's Contents and,
// for an MCP tool, its structured content, which the MCP session reports
// as one more [ToolOutput] but the result keeps apart in Structured. (An
// operator's or local tool's Structured is the value of one of its text
// items, so it is not counted twice.) The MCP tools an operator calls are
// reported as tools of their own, between the operator's start and end.
func (p *Provider) Execute(ctx context.Context, name string, args map[string]any, env Env) (*toolresult.Result, error) {
	src, err := p.Lookup(ctx, name)
	if err != nil {
		return nil, err
	}
	r := env.Reporter
	if r == nil {
		r = discard
	}
	_ = r.Report(ctx, ToolStart{Tool: name, Source: src, Args: args})
	res, err := p.execute(ctx, src, name, args, env)
	reportEnd(ctx, r, name, src, res, err)
	return res, err
}

// discard is the Reporter of a call without one.
var discard = ReporterFunc(func(context.Context, Report) error { return nil })

func (p *Provider) execute(ctx context.Context, src Source, name string, args map[string]any, env Env) (*toolresult.Result, error) {
	switch src {
	case SourceLocal:
		t, _ := p.cfg.Local.Lookup(name)
		info := t.Info()
		msgr := NewMessenger(Metadata{Name: name, Capabilities: info.Capabilities}, env.Reporter, env.Elicitor)
		res, err := t.Execute(ctx, LocalCall{Args: args, Provider: p, Turn: env.Turn, Messenger: msgr})
		if err != nil {
			return nil, fmt.Errorf("operator: %s: %w", name, err)
		}
		if res.Tool == "" {
			res.Tool = name
		}
		if msgr.SentDirect() {
			res.Direct = true
		}
		return res, nil
	case SourceOperator:
		oc := &Context{Query: queryOf(args, env), Params: args, Tools: env.Tools, Turn: env.Turn,
			Assembled: env.Assembled,
			Messenger: NewMessenger(Metadata{Name: name}, env.Reporter, env.Elicitor)}
		if oc.Assembled == nil {
			a, err := p.Assemble(ctx, name, args, env)
			if err != nil {
				return nil, err
			}
			oc.Assembled = a
		}
		r, _, err := p.cfg.Operators.Execute(ctx, name, oc)
		if err != nil {
			return nil, err
		}
		out := &toolresult.Result{Tool: name, Metadata: r.Metadata, Direct: r.Direct}
		if s, ok := r.Output.(string); ok {
			out.Contents = append(out.Contents, toolresult.TextContent(s))
		} else if r.Output != nil {
			out.Contents = append(out.Contents, toolresult.TextContent(r.Text()))
			out.Structured = r.Output
		}
		out.Contents = append(out.Contents, r.Contents...)
		return out, nil
	}
	if env.Tools == nil {
		return nil, fmt.Errorf("operator: %s is an MCP tool; set Env.Tools to the request's MCP session", name)
	}
	res, err := env.Tools.CallTool(ctx, name, args)
	if err != nil {
		return nil, err
	}
	if res.Tool == "" {
		res.Tool = name
	}
	return res, nil
}

// CallTool executes name with args and an empty [Env], so a Provider is an
// [ToolCaller] for local tools and operators that need no MCP
// session.
func (p *Provider) CallTool(ctx context.Context, name string, args map[string]any) (*toolresult.Result, error) {
	return p.Execute(ctx, name, args, Env{})
}
