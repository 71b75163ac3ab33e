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
	"github.com/go-playground/validator/v10"
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
	validate    = newTagValidator()
)

func newTagValidator() *validator.Validate {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch name {
		case "-":
			return ""
		case "":
			return f.Name
		}
		return name
	})
	return v
}

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
	doc, err := sjson.UnmarshalJSON(bytes.NewReader(js))
	if err != nil {
		return nil, fmt.Errorf("agent: JSON Schema of %s: %w", name, err)
	}
	c := sjson.NewCompiler()
	if err := c.AddResource("mem:///schema.json", doc); err != nil {
		return nil, fmt.Errorf("agent: JSON Schema of %s: %w", name, err)
	}
	compiled, err := c.Compile("mem:///schema.json")
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
		tagged:      hasValidateTags(t, map[reflect.Type]bool{}),
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

// hasValidateTags reports whether the tag validator has anything to check in
// a value of type t: a validate tag on a field of t or of a type inside it,
// or a type that hands the validator another value (validator.Valuer).
func hasValidateTags(t reflect.Type, seen map[reflect.Type]bool) bool {
	if seen[t] {
		return false
	}
	seen[t] = true
	valuer := reflect.TypeFor[validator.Valuer]()
	if t.Implements(valuer) || reflect.PointerTo(t).Implements(valuer) {
		return true
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return hasValidateTags(t.Elem(), seen)
	case reflect.Map:
		return hasValidateTags(t.Key(), seen) || hasValidateTags(t.Elem(), seen)
	case reflect.Interface:
		// Decoded JSON puts no struct in an interface; its methods cannot
		// be known here, so count it.
		return t.NumMethod() > 0
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Tag.Get("validate") != "" || hasValidateTags(f.Type, seen) {
				return true
			}
		}
	}
	return false
}

// toolName turns a Go type name into a tool name providers accept
// (^[a-zA-Z0-9_-]{1,64}$), e.g. SupervisorDecision -> supervisor_decision.
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
