package operator

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator/toolresult"
)

// Local is a tool that runs in-process.
type Local interface {
	// LocalInfo describes the tool. It must return the same value every time.
	Info() LocalInfo
	// Execute runs the tool. It must honour ctx.
	Execute(ctx context.Context, call LocalCall) (*toolresult.Result, error)
}

// LocalInfo describes a tool.
type LocalInfo struct {
	// Name is the tool's unique name. Required: letters, digits, '_', '-'.
	Name string
	// Description says in a sentence what the tool does. Required.
	Description string
	// InputSchema is the JSON Schema of the arguments. Nil means the tool
	// takes none.
	InputSchema json.RawMessage
	// Capabilities declares the tool's messaging, as for operators.
	Capabilities Capabilities
}

// LocalCall is one invocation of a local tool.
type LocalCall struct {
	// Args are the call's arguments; nil means none.
	Args map[string]any
	// Provider is the catalogue the tool was called through, for tools
	// that describe it (list_tools, list_operators); nil when the tool is
	// called directly.
	Provider *Provider
	// Messenger sends the tool's messages to the user; nil discards them.
	Messenger *Messenger
	// Turn is the turn the tool is called in (Env.Turn of
	// [Provider.Execute]): its conversation, query, history and actions.
	// Nil when the caller gave none or the tool is called directly.
	Turn *memory.Turn
}

// LocalFunc makes a [Local] tool of info and fn.
func LocalFunc(info LocalInfo, fn func(ctx context.Context, call LocalCall) (*toolresult.Result, error)) Local {
	return localFunc{info, fn}
}

type localFunc struct {
	info LocalInfo
	fn   func(ctx context.Context, call LocalCall) (*toolresult.Result, error)
}

func (l localFunc) Info() LocalInfo { return l.info }
func (l localFunc) Execute(ctx context.Context, call LocalCall) (*toolresult.Result, error) {
	return l.fn(ctx, call)
}

// LocalRegistry holds local tools by name. It is safe for concurrent use; the
// zero value is not usable, call [NewLocalRegistry].
type LocalRegistry struct {
	mu    sync.RWMutex
	tools map[string]Local
}

// NewLocalRegistry returns an empty registry.
func NewLocalRegistry() *LocalRegistry { return &LocalRegistry{tools: map[string]Local{}} }

// Register adds tools. A tool with an invalid LocalInfo or a taken name is an
// error naming it; the tools before it stay registered.
func (r *LocalRegistry) Register(tools ...Local) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, t := range tools {
		info := t.Info()
		switch {
		case len(info.Name) > MaxToolNameLen:
			return fmt.Errorf("operator: LocalInfo.Name %q is %d bytes long; providers accept at most %d", info.Name, len(info.Name), MaxToolNameLen)
		case CheckToolName(info.Name) != nil:
			return fmt.Errorf("operator: LocalInfo.Name %q must be non-empty letters, digits, '_' or '-'", info.Name)
		case info.Description == "":
			return fmt.Errorf("operator: %q: LocalInfo.Description is empty; say in a sentence what the tool does", info.Name)
		case info.InputSchema != nil && !json.Valid(info.InputSchema):
			return fmt.Errorf("operator: %q: LocalInfo.InputSchema is not valid JSON", info.Name)
		}
		if _, dup := r.tools[info.Name]; dup {
			return fmt.Errorf("%w: %q", ErrDuplicate, info.Name)
		}
		r.tools[info.Name] = t
	}
	return nil
}

// Lookup returns the named tool.
func (r *LocalRegistry) Lookup(name string) (Local, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	t, ok := r.tools[name]
	return t, ok
}

// Infos returns every tool's LocalInfo, sorted by name.
func (r *LocalRegistry) Infos() []LocalInfo {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]LocalInfo, 0, len(r.tools))
	for _, t := range r.tools {
		out = append(out, t.Info())
	}
	slices.SortFunc(out, func(a, b LocalInfo) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// TextResult returns a successful result with a text item and, when structured
// is not nil, structured output.
func TextResult(name, text string, structured any) *toolresult.Result {
	return &toolresult.Result{Tool: name, Contents: []toolresult.Content{toolresult.TextContent(text)}, Structured: structured}
}
