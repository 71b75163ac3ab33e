package operator

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strconv"
	"strings"
	"unsafe"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/internal/toolcall"
)

// MaxToolNameLen is the longest tool name providers accept.
const MaxToolNameLen = 64

// CheckToolName reports whether name is a tool name every provider accepts:
// 1 to [MaxToolNameLen] letters, digits, '_' and '-'. The error says what is
// wrong and how to fix it.
func CheckToolName(name string) error {
	switch {
	case name == "":
		return errors.New("operator: the tool name is empty; name the tool with letters, digits, '_' or '-'")
	case len(name) > MaxToolNameLen:
		return fmt.Errorf("operator: the tool name %q is %d bytes long; providers accept at most %d", name, len(name), MaxToolNameLen)
	}
	for i, r := range name {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return fmt.Errorf("operator: the tool name %q holds %q at byte %d; use only letters, digits, '_' and '-'", name, r, i)
		}
	}
	return nil
}

// ToolContent is implemented by a [FuncTool] result type that says itself
// what the model reads: text and images. The value is still encoded to JSON
// as the result's Structured value; implement json.Marshaler returning null
// to leave it out.
type ToolContent interface {
	ToolContent() []model.Part
}

// FuncOption configures a tool made by [FuncTool].
type FuncOption func(*funcConfig)

type funcConfig struct {
	schema json.RawMessage
}

// WithSchema replaces the JSON Schema inferred from the argument type with
// schema, an object schema. Arguments are still checked against it and
// decoded strictly into the argument type: a call that sends a property of
// schema that no field of the argument type takes is refused, as an
// unknown argument, however its key is written.
func WithSchema(schema json.RawMessage) FuncOption {
	return func(c *funcConfig) { c.schema = schema }
}

// funcTool is a Tool made from a typed function.
type funcTool[In, Out any] struct {
	def  model.ToolDef
	args *argSchema
	fn   func(ctx context.Context, in In) (Out, error)
}

// plainFuncTool is a funcTool whose Out is a predeclared integer type or
// bool (plainResultOf), whose results fit a toolcall.Room: it writes them
// into its caller's storage (toolcall.Into). A funcTool of any other Out
// does not implement toolcall.Into, so that its caller gives it no room,
// which its results would leave unused.
type plainFuncTool[In, Out any] struct {
	funcTool[In, Out]
}

var _ toolcall.Into = (*plainFuncTool[struct{}, int])(nil)

// FuncTool makes a [Tool] of a typed Go function. In is the type of the
// arguments, a struct (or a pointer to one), or a map with string keys for
// arguments described by a schema given with [WithSchema]; Out is the
// result.
//
// The tool's definition carries the JSON Schema of In, reflected by
// github.com/invopop/jsonschema: property names from json tags, every field
// without omitempty required, no other properties allowed, descriptions,
// enums, bounds and examples from jsonschema tags
// (`jsonschema:"description=City name,enum=c,enum=f"`; a comma inside a
// value must be escaped as \\, in the tag), and nested types inlined, with no $schema
// or $id, as model providers want it. A recursive type, which cannot be
// inlined, keeps its definitions in $defs.
//
// When the model calls the tool, its arguments are checked before fn runs:
// they must be a JSON object satisfying the schema, they are decoded into In
// rejecting unknown fields, and In's `validate` tags are checked with
// github.com/go-playground/validator/v10. A call that fails any check does
// not run fn: Call returns a result with IsError set that names each bad
// field and what is wrong with it, so that the model can correct its
// arguments, and a nil error. The text is bounded whatever the arguments:
// it names at most 20 problems (and counts the others), a problem quoting
// a long value is cut at 1 KiB, and a number out of a bound is written
// exactly up to about 38 digits, else rounded ("about 1e+1000000").
//
// The result depends on Out:
//   - a *model.ToolResult (or model.ToolResult) is returned as is;
//   - a string is the result's text;
//   - []model.Part is the result's content;
//   - a type implementing [ToolContent] gives the content, and its JSON
//     encoding is the Structured value;
//   - any other value is encoded to JSON as Structured and rendered as text
//     by its String method when it has one, else as that JSON.
//
// An error returned by fn is returned by Call unchanged (so a cancellation
// or a graph interrupt reaches the caller); a caller running tools for a
// model reports other errors to the model (see [Tool]). A function that
// wants the model to see a failure in its own words returns a
// *model.ToolResult with IsError set.
//
// FuncTool returns an error for an invalid name (see [CheckToolName]), an
// empty description, a nil fn, an In that is not a struct, or a schema that
// does not compile. The tool is safe for concurrent use when fn is.
func FuncTool[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error), opts ...FuncOption) (Tool, error) {
	if err := CheckToolName(name); err != nil {
		return nil, err
	}
	if strings.TrimSpace(description) == "" {
		return nil, fmt.Errorf("operator: tool %q has no description; say in a sentence what it does and when to use it", name)
	}
	if fn == nil {
		return nil, fmt.Errorf("operator: tool %q has a nil function", name)
	}
	var cfg funcConfig
	for _, o := range opts {
		o(&cfg)
	}
	args, err := newArgSchema(reflect.TypeFor[In](), cfg.schema)
	if err != nil {
		return nil, fmt.Errorf("operator: tool %q: %w", name, err)
	}
	t := funcTool[In, Out]{
		def:  model.ToolDef{Name: name, Description: description, Parameters: args.json},
		args: args,
		fn:   fn,
	}
	var zero Out
	var buf [toolcall.TextLen]byte
	if appendPlain(buf[:0], any(zero)) != nil {
		return &plainFuncTool[In, Out]{t}, nil
	}
	return &t, nil
}

// MustFuncTool is [FuncTool] for tools defined at package level or in
// tests: it panics where FuncTool returns an error.
func MustFuncTool[In, Out any](name, description string, fn func(ctx context.Context, in In) (Out, error), opts ...FuncOption) Tool {
	t, err := FuncTool(name, description, fn, opts...)
	if err != nil {
		panic(err)
	}
	return t
}

// Definition returns the tool's definition.
func (t *funcTool[In, Out]) Definition() model.ToolDef {
	d := t.def
	d.Parameters = bytes.Clone(d.Parameters)
	return d
}

// Call checks args, decodes them into In and runs the function.
func (t *funcTool[In, Out]) Call(ctx context.Context, args json.RawMessage) (*model.ToolResult, error) {
	out, bad, err := t.run(ctx, args)
	switch {
	case err != nil:
		return nil, err
	case bad != "":
		return ErrorResult(bad), nil
	}
	// A plain value is looked at before it is boxed for resultOf, whose
	// box escapes: any(out) stays on the stack here.
	if r := plainResultOf(any(out)); r != nil {
		return r, nil
	}
	res, err := resultOf(out)
	if err != nil {
		return nil, fmt.Errorf("operator: tool %s: %w", t.def.Name, err)
	}
	return res, nil
}

// CallInto runs the tool as Call does, writing the result to *res, and a
// result of a predeclared integer type or bool to room, where Call
// allocates it (see [toolcall.Into]).
func (t *plainFuncTool[In, Out]) CallInto(ctx context.Context, args json.RawMessage, res *model.ToolResult, room *toolcall.Room) error {
	out, bad, err := t.run(ctx, args)
	switch {
	case err != nil:
		return err
	case bad != "":
		*res = *ErrorResult(bad)
		return nil
	}
	if plainInto(any(out), res, room) {
		return nil
	}
	r, err := resultOf(out)
	if err != nil {
		return fmt.Errorf("operator: tool %s: %w", t.def.Name, err)
	}
	*res = *r
	return nil
}

// run decodes and checks args and calls the function. It returns the
// function's result; or the text of the error result telling the model
// that its arguments are not valid; or the function's error, or the
// context's.
func (t *funcTool[In, Out]) run(ctx context.Context, args json.RawMessage) (out Out, bad string, err error) {
	// The arguments are decoded in place when the flat fill takes them
	// (in then stays on the stack); the other ways need a pointer that
	// escapes.
	var in In
	if !t.args.fillPlain(args, unsafe.Pointer(&in)) {
		p := new(In)
		if msg := t.args.decode(args, p); msg != "" {
			return out, fmt.Sprintf("Invalid arguments for tool %s:\n%s\nCorrect the arguments and call the tool again.", t.def.Name, msg), nil
		}
		in = *p
	}
	if err := ctx.Err(); err != nil {
		return out, "", err
	}
	out, err = t.fn(ctx, in)
	return out, "", err
}

// ErrorResult returns a failed tool result whose text, msg, tells the model
// what went wrong.
func ErrorResult(msg string) *model.ToolResult {
	return &model.ToolResult{Content: []model.Part{model.TextPart(msg)}, IsError: true}
}

// resultOf turns a function's result into a tool result. Its argument
// escapes: a caller holding a value of a static type looks for a plain
// one first (plainResultOf, plainInto), with a box on its stack.
func resultOf(out any) (*model.ToolResult, error) {
	switch v := out.(type) {
	case *model.ToolResult:
		if v == nil {
			return &model.ToolResult{}, nil
		}
		r := *v
		return &r, nil
	case model.ToolResult:
		return &v, nil
	case string:
		return &model.ToolResult{Content: []model.Part{model.TextPart(v)}}, nil
	case []model.Part:
		return &model.ToolResult{Content: v}, nil
	}
	if r := plainResultOf(out); r != nil {
		return r, nil
	}
	raw, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("encoding the result as JSON: %w", err)
	}
	res := &model.ToolResult{}
	if !bytes.Equal(raw, []byte("null")) {
		res.Structured = raw
	}
	switch v := out.(type) {
	case ToolContent:
		res.Content = v.ToolContent()
	case fmt.Stringer:
		res.Content = []model.Part{model.TextPart(v.String())}
	default:
		res.Content = []model.Part{model.TextPart(string(raw))}
	}
	return res, nil
}

// plainResult is the result of a function whose result is a value of a
// predeclared integer type or bool, in one allocation: the result and the
// room holding its content (see plainInto).
type plainResult struct {
	res  model.ToolResult
	room toolcall.Room
}

// plainResultOf returns the result of out when it is a value of a
// predeclared integer type or bool, which encoding/json writes as strconv
// does and which have no methods: the text is the JSON. It returns nil for
// any other value.
func plainResultOf(out any) *model.ToolResult {
	var buf [toolcall.TextLen]byte
	raw := appendPlain(buf[:0], out)
	if raw == nil || len(raw) > toolcall.TextLen {
		return nil
	}
	p := new(plainResult)
	writePlain(raw, &p.res, &p.room)
	return &p.res
}

// plainInto writes to *res the result of out when it is a value of a
// predeclared integer type or bool (see plainResultOf), its content in
// room, and reports whether it did. A room already written (its text
// never starts with a zero byte) is left as it is: its text may be an
// earlier result's, which must not change.
func plainInto(out any, res *model.ToolResult, room *toolcall.Room) bool {
	if room == nil || room.Text[0] != 0 {
		return false
	}
	var buf [toolcall.TextLen]byte
	raw := appendPlain(buf[:0], out)
	if raw == nil || len(raw) > toolcall.TextLen {
		return false
	}
	writePlain(raw, res, room)
	return true
}

// writePlain sets *res to the result whose JSON and text are raw, at most
// toolcall.TextLen bytes, with its content in room, which must be zero.
func writePlain(raw []byte, res *model.ToolResult, room *toolcall.Room) {
	n := copy(room.Raw[:], raw)
	copy(room.Text[:], raw)
	// room.Text is written only here, once: the string's bytes never
	// change.
	room.Parts[0] = model.TextPart(unsafe.String(&room.Text[0], n))
	*res = model.ToolResult{Content: room.Parts[:], Structured: room.Raw[:n:n]}
}

// appendPlain appends to b the JSON of out when it is a value of a
// predeclared integer type or bool, which encoding/json writes as
// strconv does, and returns nil for any other value (a named type may
// have methods of its own).
func appendPlain(b []byte, out any) []byte {
	switch v := out.(type) {
	case int:
		return strconv.AppendInt(b, int64(v), 10)
	case int8:
		return strconv.AppendInt(b, int64(v), 10)
	case int16:
		return strconv.AppendInt(b, int64(v), 10)
	case int32:
		return strconv.AppendInt(b, int64(v), 10)
	case int64:
		return strconv.AppendInt(b, v, 10)
	case uint:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint8:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint16:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint32:
		return strconv.AppendUint(b, uint64(v), 10)
	case uint64:
		return strconv.AppendUint(b, v, 10)
	case uintptr:
		return strconv.AppendUint(b, uint64(v), 10)
	case bool:
		return strconv.AppendBool(b, v)
	}
	return nil
}
