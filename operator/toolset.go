package operator

import (
	"context"
	"fmt"
	"runtime/debug"
	"slices"
	"strings"
	"sync"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/internal/utf8clip"
)

// MaxTools is the most tools a [Toolset] holds. Providers refuse requests
// with many more tools than this (OpenAI accepts 128), and a model chooses
// poorly among a few hundred.
const MaxTools = 512

// ErrToolsetFull is returned when adding a tool would make a [Toolset] hold
// more than [MaxTools] tools.
var ErrToolsetFull = fmt.Errorf("operator: a toolset holds at most %d tools; split the tools among agents or select the ones a task needs", MaxTools)

// Toolset is the tools a model may call, by name. It yields their
// definitions for a model request in the order they were added, and runs a
// model's tool call by name. It is safe for concurrent use; the zero value
// is an empty toolset ready to use.
type Toolset struct {
	mu     sync.RWMutex
	tools  []Tool
	defs   []model.ToolDef
	byName map[string]int
}

// NewToolset returns a toolset holding tools, in order; see [Toolset.Add].
func NewToolset(tools ...Tool) (*Toolset, error) {
	s := &Toolset{}
	if err := s.Add(tools...); err != nil {
		return nil, err
	}
	return s, nil
}

// Add adds tools in order. It fails, adding none of them, when a tool is
// nil, has an invalid name (see [CheckToolName]), has a name already in the
// toolset or earlier in tools (an error wrapping [ErrDuplicate]), or would
// take the toolset beyond [MaxTools] ([ErrToolsetFull]).
func (s *Toolset) Add(tools ...Tool) error {
	defs := make([]model.ToolDef, len(tools))
	for i, t := range tools {
		if t == nil {
			return fmt.Errorf("operator: tool %d of %d added to the toolset is nil", i+1, len(tools))
		}
		defs[i] = t.Definition()
		if err := CheckToolName(defs[i].Name); err != nil {
			return err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.tools)+len(tools) > MaxTools {
		return ErrToolsetFull
	}
	seen := make(map[string]bool, len(tools))
	for _, d := range defs {
		_, taken := s.byName[d.Name]
		if taken || seen[d.Name] {
			return fmt.Errorf("%w: two tools are named %q; rename one (each tool of a toolset needs its own name)", ErrDuplicate, d.Name)
		}
		seen[d.Name] = true
	}
	if s.byName == nil {
		s.byName = make(map[string]int, len(tools))
	}
	for i, t := range tools {
		s.byName[defs[i].Name] = len(s.tools)
		s.tools = append(s.tools, t)
		s.defs = append(s.defs, defs[i])
	}
	return nil
}

// Len returns the number of tools.
func (s *Toolset) Len() int {
	if s == nil {
		return 0
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.tools)
}

// Definitions returns the tools' definitions in the order the tools were
// added, for [model.Request].Tools. The slice is the caller's own; the
// definitions' Parameters are shared and must not be modified.
func (s *Toolset) Definitions() []model.ToolDef {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.defs)
}

// Names returns the tools' names in the order the tools were added.
func (s *Toolset) Names() []string {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	names := make([]string, len(s.defs))
	for i, d := range s.defs {
		names[i] = d.Name
	}
	return names
}

// Tools returns the tools in the order they were added. The slice is the
// caller's own.
func (s *Toolset) Tools() []Tool {
	if s == nil {
		return nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return slices.Clone(s.tools)
}

// Lookup returns the named tool.
func (s *Toolset) Lookup(name string) (Tool, bool) {
	if s == nil {
		return nil, false
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	i, ok := s.byName[name]
	if !ok {
		return nil, false
	}
	return s.tools[i], true
}

// Call runs the tool that call names and returns its result, with CallID and
// Name set from call. The result is never nil:
//
//   - an unknown tool is a result with IsError set that lists the
//     available tools, and a nil error; the result's text and Name echo
//     the unknown name cut to [MaxToolNameLen] bytes, the longest name a
//     tool can have;
//   - bad arguments are the tool's own IsError result, and a nil error;
//   - when the tool fails to run (its Call returns an error, or panics),
//     Call returns that error and a result with IsError set that reports
//     it to the model. A caller running tools for a model sends that result
//     back, unless ctx is done or the error is one the run must stop for
//     (a graph interrupt), in which case it returns the error.
func (s *Toolset) Call(ctx context.Context, call model.ToolCall) (*model.ToolResult, error) {
	t, ok := s.Lookup(call.Name)
	if !ok {
		res := ErrorResult(s.unknown(call.Name))
		// The model wrote the name, of any length: echoed clipped.
		res.CallID, res.Name = call.ID, utf8clip.Clip(call.Name, MaxToolNameLen)
		return res, nil
	}
	res, err := runTool(ctx, t, call)
	if err != nil {
		res = ErrorResult(fmt.Sprintf("Tool %s failed: %v", call.Name, err))
	} else if res == nil {
		res = &model.ToolResult{}
	}
	res.CallID, res.Name = call.ID, call.Name
	return res, err
}

// PanicError is a tool's panic, recovered by [Toolset.Call].
type PanicError struct {
	// Tool is the tool's name.
	Tool string
	// Value is what the tool panicked with.
	Value any
	// Stack is the goroutine's stack at the panic.
	Stack []byte
}

// Error describes the panic.
func (e *PanicError) Error() string {
	return fmt.Sprintf("operator: tool %s panicked: %v", e.Tool, e.Value)
}

// runTool runs t, turning a panic into a *PanicError.
func runTool(ctx context.Context, t Tool, call model.ToolCall) (res *model.ToolResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			res, err = nil, &PanicError{Tool: call.Name, Value: v, Stack: debug.Stack()}
		}
	}()
	res, err = t.Call(ctx, call.Arguments)
	if err != nil {
		return nil, err
	}
	if res != nil {
		r := *res
		res = &r
	}
	return res, nil
}

// unknown returns the error text of a call of name, which is no tool of
// s. It quotes name clipped (see quoteName).
func (s *Toolset) unknown(name string) string {
	names := s.Names()
	if len(names) == 0 {
		return fmt.Sprintf("There is no tool named %s, and no tools are available: answer without tools.", quoteName(name))
	}
	return fmt.Sprintf("There is no tool named %s. The available tools are: %s. Call one of them by its exact name.", quoteName(name), strings.Join(names, ", "))
}
