package agent

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/internal/schemacheck"
	"github.com/invopop/jsonschema"
	sjson "github.com/santhosh-tekuri/jsonschema/v6"
)

// Validator is implemented by result types with rules that tags cannot say,
// such as "operator is required when action is CALL_TOOL". Call runs
// Validate (on a value or pointer receiver) after the schema and tag checks;
// a non-nil error rejects the reply and its text is fed back to the model.
// Return *FieldError values (joined with errors.Join for several) to name the
// fields.
type Validator interface {
	Validate() error
}

// typeSchema is everything Call needs about a result type, built once per
// type and cached.
type typeSchema struct {
	name        string
	json        []byte // indented JSON Schema
	instruction string // the system-prompt schema instruction
	compiled    *sjson.Schema
	want        byte // '{' or '[' or 0
	isStruct    bool
	tool        model.ToolDef // the tool of OutputTool
	tagged      bool          // T has validate tags for the tag validator

	system atomic.Pointer[systemPrompt] // the last system message built
}

// systemPrompt is the system message of Call for T and one caller's system
// prompt.
type systemPrompt struct {
	caller string
	msg    model.Message
}

// systemMessage returns the system message of a Call whose WithSystem prompt
// is caller: that prompt, a blank line and the schema instruction. The last
// one built is kept, since calls for a type tend to share their prompt; it
// is shared by those calls and never changed.
func (s *typeSchema) systemMessage(caller string) model.Message {
	if p := s.system.Load(); p != nil && p.caller == caller {
		return p.msg
	}
	p := &systemPrompt{caller: caller,
		msg: model.System(strings.TrimSpace(caller + "\n\n" + s.instruction))}
	s.system.Store(p)
	return p.msg
}

var (
	schemaCache sync.Map // reflect.Type -> *typeSchema or error
	validate    = schemacheck.NewTagValidator()
)

// SchemaOf returns the JSON Schema (draft 2020-12) that Call sends for T,
// indented. It is reflected by invopop/jsonschema: field names from json
// tags; fields without omitempty are required; objects allow no other
// properties; enums, descriptions, defaults and bounds come from jsonschema
// tags (`jsonschema:"enum=A,enum=B,description=..."`).
func SchemaOf[T any]() ([]byte, error) {
	s, err := schemaFor(reflect.TypeFor[T]())
	if err != nil {
		return nil, err
	}
	return bytes.Clone(s.json), nil
}

func schemaFor(t reflect.Type) (*typeSchema, error) {
	if v, ok := schemaCache.Load(t); ok {
		if err, bad := v.(error); bad {
			return nil, err
		}
		return v.(*typeSchema), nil
	}
	s, err := buildSchema(t)
	if err != nil {
		schemaCache.Store(t, err)
		return nil, err
	}
	v, _ := schemaCache.LoadOrStore(t, s)
	if err, bad := v.(error); bad {
		return nil, err
	}
	return v.(*typeSchema), nil
}

func buildSchema(t reflect.Type) (*typeSchema, error) {
	name := t.Name()
	if name == "" {
		name = t.String()
	}
	r := jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true, Anonymous: true}
	js, err := json.MarshalIndent(r.ReflectFromType(t), "", "  ")
	if err != nil {
		return nil, fmt.Errorf("agent: JSON Schema of %s: %w", name, err)
	}
	compiled, err := schemacheck.Compile(js)
	if err != nil {
		return nil, fmt.Errorf("agent: JSON Schema of %s does not compile: %w", name, err)
	}
	var params map[string]any
	if err := json.Unmarshal(js, &params); err != nil {
		return nil, fmt.Errorf("agent: JSON Schema of %s: %w", name, err)
	}
	delete(params, "$schema")
	tool, err := json.Marshal(params)
	if err != nil {
		return nil, fmt.Errorf("agent: JSON Schema of %s: %w", name, err)
	}
	s := &typeSchema{
		name:        name,
		json:        js,
		instruction: schemaInstruction(js),
		compiled:    compiled,
		tagged:      schemacheck.HasValidateTags(t),
		isStruct:    t.Kind() == reflect.Struct || (t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct),
	}
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		s.want = '{'
	case reflect.Pointer:
		if k := t.Elem().Kind(); k == reflect.Struct || k == reflect.Map {
			s.want = '{'
		}
	case reflect.Slice, reflect.Array:
		s.want = '['
	}
	s.tool = model.ToolDef{
		Name:        toolName(name),
		Description: "Give the answer as a " + name + " matching the parameters schema.",
		Parameters:  tool,
	}
	return s, nil
}

// toolName turns a Go type name into a tool name providers accept
// (^[a-zA-Z0-9_-]{1,64}$), e.g. RouteDecision -> route_decision.
func toolName(typeName string) string {
	var b strings.Builder
	for i, r := range typeName {
		switch {
		case unicode.IsUpper(r):
			if i > 0 {
				b.WriteByte('_')
			}
			b.WriteRune(unicode.ToLower(r))
		case r < 128 && (unicode.IsLetter(r) || unicode.IsDigit(r)) || r == '_' || r == '-':
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	n := strings.Trim(b.String(), "_")
	if n == "" {
		n = "respond"
	}
	if len(n) > 64 {
		n = n[:64]
	}
	return n
}

// schemaInstruction is appended to the system prompt of every structured call.
func schemaInstruction(schema []byte) string {
	return "You MUST respond with valid JSON matching this schema:\n\n```json\n" + string(schema) + "\n```\n\n" +
		"Rules:\n" +
		"1. Output ONLY valid JSON, no explanations before or after\n" +
		"2. All required fields must be present\n" +
		"3. Field types must match the schema exactly\n" +
		"4. Use null for optional fields if not applicable"
}
