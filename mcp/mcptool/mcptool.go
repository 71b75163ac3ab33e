// Package mcptool makes the tools of MCP servers [operator.Tool]s, so that a
// model calls them with native tool calling beside local functions and
// operators.
//
// It lives apart from package operator so that a program whose tools are
// all local does not link the MCP client: only programs that import this
// package (or package mcp) do.
//
// [Tools] takes the tools an [mcp.Registry] lists and calls them through an
// [mcp.Session], one per request, whose callbacks receive the calls'
// progress and content and answer the servers' elicitations. A tool's
// answer reaches the model as toolresult.Result.ModelResult renders it:
// text as text, images and audio as binary parts, embedded resources by
// their text or data, resource links and widgets as text, the
// structuredContent as Structured, and isError as IsError.
//
// A program that calls a server's tools itself, in its own flow rather than
// a model's tool loop, takes them the same way: [New] with [WithServer]
// picks the tool of one server, and [Tool.CallResult] returns the server's
// whole result (contents, structured output, duration) as a
// toolresult.Result.
package mcptool

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/internal/schemacheck"
	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/toolresult"
	"go.uber.org/zap"
)

// Tool is one MCP tool as an [operator.Tool], bound to the session it
// calls through. [Tool.Call] gives the model's view of a result;
// [Tool.CallResult] gives the server's whole result, for programs that read
// its contents, structured output or duration themselves.
type Tool struct {
	def     model.ToolDef
	server  string
	name    string // the server's name for the tool
	session *mcp.Session
}

// Option adjusts how [New] picks a tool.
type Option func(*options)

type options struct {
	server string
}

// WithServer picks the tool of the named server: name is then the server's
// own name for the tool (as its tools/list gives it), and the tool keeps
// that name even when other servers offer a tool of the same name (which
// [mcp.Registry] lists qualified, "<server>__<tool>"). Without it, name is
// as the registry lists it, bare or qualified.
func WithServer(server string) Option { return func(o *options) { o.server = server } }

// New returns the tool reg lists as name (see [mcp.Registry.Tools]) as a
// [*Tool] that calls it through session. name may be qualified as
// "<server><Separator><tool>" ([mcp.RegistryConfig].Separator, "__" by
// default), or [WithServer] names the server and name the server's tool.
// Its definition has the tool's description and input schema (without
// $schema; one over [mcp.MaxInputSchemaBytes] is refused); its name is
// [ToolName](name). A name (listed, or the
// server's) that is not valid UTF-8, has control or bidirectional-text
// characters or is over [mcp.MaxToolNameBytes] bytes is refused. session may
// come from [mcp.Registry.NewSession] or [mcp.Manager.NewSession]: calls
// name the tool's server.
func New(ctx context.Context, reg *mcp.Registry, session *mcp.Session, name string, opts ...Option) (*Tool, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	t, _, err := newTool(ctx, reg, session, name, o)
	return t, err
}

// newTool is New; invalid reports that the error is about the tool itself
// (its name, its schema, or a server that does not describe it), not about
// reaching the server.
func newTool(ctx context.Context, reg *mcp.Registry, session *mcp.Session, name string, o options) (_ *Tool, invalid bool, _ error) {
	if reg == nil || session == nil {
		return nil, false, errors.New("mcptool: New needs a registry and a session (Registry.NewSession)")
	}
	if err := checkName(name); err != nil {
		return nil, true, err
	}
	t, err := reg.Tool(ctx, name)
	if o.server != "" && (err != nil || t.Server != o.server || t.Tool != name) {
		// The registry lists another server's tool by that name, or
		// several: look the server's tool up by where it lives.
		var listed string
		if listed, err = listedName(ctx, reg, o.server, name); err != nil {
			return nil, false, err
		}
		t, err = reg.Tool(ctx, listed)
	}
	if err != nil {
		var notFound *mcp.ToolNotFoundError
		return nil, errors.As(err, &notFound) || errors.Is(err, mcp.ErrToolRefused), err
	}
	if err := checkName(t.Tool); err != nil {
		return nil, true, fmt.Errorf("%w (server %q)", err, t.Server)
	}
	params, err := parameters(t.InputSchema)
	if err != nil {
		return nil, true, fmt.Errorf("mcptool: tool %q of server %q: %w", t.Tool, t.Server, err)
	}
	desc := t.Description
	if desc == "" {
		desc = t.Title
	}
	return &Tool{
		def:     model.ToolDef{Name: ToolName(name), Description: desc, Parameters: params},
		server:  t.Server,
		name:    t.Tool,
		session: session,
	}, false, nil
}

// listedName returns the name reg lists server's tool by.
func listedName(ctx context.Context, reg *mcp.Registry, server, tool string) (string, error) {
	sums, err := reg.Tools(ctx)
	if err != nil {
		return "", err
	}
	var offered []string
	for _, s := range sums {
		if s.Server != server {
			continue
		}
		if s.Tool == tool {
			return s.Name, nil
		}
		offered = append(offered, s.Tool)
	}
	if offered == nil {
		for _, h := range reg.Health() {
			if h.Server == server && h.LastError != "" && !h.Connected {
				return "", fmt.Errorf("mcptool: server %q lists no tools: it is not connected (last error: %s); the registry lists it again within seconds", server, h.LastError)
			}
		}
		return "", fmt.Errorf("mcptool: server %q lists no tools: check WithServer's name against the manager's servers (Manager.Health)", server)
	}
	return "", fmt.Errorf("mcptool: server %q has no tool %q; it offers %s", server, tool, strings.Join(offered, ", "))
}

// Tools returns the named tools (every tool reg lists when names is empty,
// in its order) as [operator.Tool]s calling through session; see [New].
//
// Named tools must all be found and valid. With no names, a tool that
// cannot be made (its name has control or bidirectional-text characters or
// is over [mcp.MaxToolNameBytes] bytes, its input schema is not an object
// or is over [mcp.MaxInputSchemaBytes], its server does not describe it) is left out with a warning through
// reg's logger ([mcp.Registry.Logger]), so that one server's bad tool does
// not cost the others theirs. Failing to reach a server (its tools/list
// failing, a disconnection, a timeout) is an error: its tools would be
// missing without one.
//
// A tool's name is [ToolName] of its listed name, which depends on that
// name only, not on the order or on the other tools: a name changed to be
// valid for providers has a suffix from its listed name, so "a.b" and
// "a_b" stay apart. A tool whose name another tool already has (a second
// listing of a name, or a listed name equal to another's suffixed one) is
// left out with a warning (or is an error, when named).
func Tools(ctx context.Context, reg *mcp.Registry, session *mcp.Session, names ...string) ([]operator.Tool, error) {
	if reg == nil {
		return nil, errors.New("mcptool: Tools needs a registry")
	}
	all := len(names) == 0
	if all {
		sums, err := reg.Tools(ctx)
		if err != nil {
			return nil, err
		}
		for _, s := range sums {
			names = append(names, s.Name)
		}
	}
	log := reg.Logger()
	tools := make([]*Tool, 0, len(names))
	listed := make([]string, 0, len(names))
	seen := make(map[string]bool, len(names))
	for _, n := range names {
		if seen[n] {
			if !all {
				return nil, fmt.Errorf("mcptool: Tools names %q twice; name each tool once", n)
			}
			log.Warn("mcptool: a tool is listed twice; left out its second listing", zap.String("tool", n))
			continue
		}
		seen[n] = true
		t, invalid, err := newTool(ctx, reg, session, n, options{})
		if err != nil {
			if !all || !invalid || ctx.Err() != nil {
				return nil, err
			}
			log.Warn("mcptool: left out a tool that cannot be made", zap.String("tool", n), zap.Error(err))
			continue
		}
		tools = append(tools, t)
		listed = append(listed, n)
	}
	tools, err := uniqueNames(tools, listed, all, log)
	if err != nil {
		return nil, err
	}
	out := make([]operator.Tool, len(tools))
	for i, t := range tools {
		out[i] = t
	}
	return out, nil
}

// uniqueNames checks that the tools' definition names are unique (see
// [Tools]); listed holds each tool's name as listed. A name taken by an
// earlier tool leaves its tool out when all is set, and is an error
// otherwise.
func uniqueNames(tools []*Tool, listed []string, all bool, log *zap.Logger) ([]*Tool, error) {
	taken := make(map[string]string, len(tools))
	out := tools[:0]
	for i, t := range tools {
		if first, dup := taken[t.def.Name]; dup {
			if !all {
				return nil, fmt.Errorf("mcptool: tools %q and %q are both named %q for the model; name one of them only", first, listed[i], t.def.Name)
			}
			log.Warn("mcptool: left out a tool whose name for the model another tool has", zap.String("tool", listed[i]), zap.String("other", first), zap.String("name", t.def.Name))
			continue
		}
		taken[t.def.Name] = listed[i]
		out = append(out, t)
	}
	return out, nil
}

// checkName refuses a tool name [mcp.CheckToolName] refuses.
func checkName(name string) error {
	if err := mcp.CheckToolName(name); err != nil {
		return fmt.Errorf("mcptool: %w", err)
	}
	return nil
}

// ToolName returns name as a tool name providers accept: a name of only
// letters, digits, '_' and '-', of at most [operator.MaxToolNameLen] bytes,
// is kept; in any other, each other byte becomes '_', and the name is cut
// to leave room for a suffix of "_" and the 8 hexadecimal digits of the
// 32-bit FNV-1a hash of name. The suffix depends on name only, and keeps
// apart names that the replacing would make one ("a.b" and "a_b").
func ToolName(name string) string {
	b := []byte(name)
	changed := len(b) > operator.MaxToolNameLen
	for i, c := range b {
		if !(c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			b[i] = '_'
			changed = true
		}
	}
	if !changed {
		return name
	}
	h := fnv.New32a()
	h.Write([]byte(name))
	suffix := fmt.Sprintf("_%08x", h.Sum32())
	return string(b[:min(len(b), operator.MaxToolNameLen-len(suffix))]) + suffix
}

// parameters cleans an MCP input schema for a model: no $schema, an object
// schema with properties.
func parameters(schema json.RawMessage) (json.RawMessage, error) {
	if len(schema) > mcp.MaxInputSchemaBytes { // the registry refuses it already: a backstop
		return nil, fmt.Errorf("its input schema has %d bytes, over the limit of %d (mcp.MaxInputSchemaBytes); the server should describe the arguments more briefly", len(schema), mcp.MaxInputSchemaBytes)
	}
	if len(bytes.TrimSpace(schema)) == 0 || bytes.Equal(bytes.TrimSpace(schema), []byte("null")) {
		return json.RawMessage(`{"type":"object","properties":{}}`), nil
	}
	var doc map[string]any
	if err := json.Unmarshal(schema, &doc); err != nil {
		return nil, fmt.Errorf("its input schema is not a JSON object: %w", err)
	}
	return schemacheck.ToolParameters(doc, "its input schema")
}

// Definition returns the tool's definition.
func (t *Tool) Definition() model.ToolDef {
	d := t.def
	d.Parameters = bytes.Clone(d.Parameters)
	return d
}

// Call calls the tool on its server and returns the result as the model
// reads it ([toolresult.Result.ModelResult]). Arguments that are not a JSON
// object are an IsError result; the server checks them against its schema
// and reports problems as a tool error. A call that fails (connection,
// timeout, cancellation) returns the session's *mcp.CallError.
func (t *Tool) Call(ctx context.Context, args json.RawMessage) (*model.ToolResult, error) {
	res, err := t.CallResult(ctx, args)
	if err != nil {
		return nil, err
	}
	return res.ModelResult(), nil
}

// CallResult calls the tool on its server and returns the server's whole
// result as the session gives it (see [mcp.Session.CallTool]): its contents,
// structured output, IsError and Error, and the call's duration. Arguments
// that are not a JSON object are an IsError result naming the fix; other
// failures are as for [Tool.Call].
func (t *Tool) CallResult(ctx context.Context, args json.RawMessage) (*toolresult.Result, error) {
	var m map[string]any
	if trimmed := bytes.TrimSpace(args); len(trimmed) > 0 && !bytes.Equal(trimmed, []byte("null")) {
		dec := json.NewDecoder(bytes.NewReader(trimmed))
		dec.UseNumber()
		if err := dec.Decode(&m); err != nil || m == nil || dec.More() {
			msg := fmt.Sprintf("Invalid arguments for tool %s:\n- the arguments must be one JSON object of named arguments\nCorrect the arguments and call the tool again.", t.def.Name)
			return &toolresult.Result{Tool: t.def.Name, Server: t.server, Contents: []toolresult.Content{toolresult.TextContent(msg)}, IsError: true, Error: msg}, nil
		}
	}
	return t.session.CallTool(ctx, mcp.ToolCall{Server: t.server, Name: t.name, Arguments: m})
}
