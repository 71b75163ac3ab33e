// Package schemacheck holds what the module's two checkers of JSON a model
// wrote share: package agent's structured output, which checks a reply
// against the schema of a Go type, and package operator's FuncTool, which
// checks a tool call's arguments. Both compile a reflected JSON Schema,
// flatten its violations to field paths, and run the validate tags of the
// decoded value; each words the problems its own way, for its own reader.
//
// It also holds the shape of a tool's parameters schema ([ToolParameters]),
// which package operator's tools and package mcptool's MCP tools give the
// model alike.
package schemacheck

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/go-playground/validator/v10"
	sjson "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
	"golang.org/x/text/language"
	"golang.org/x/text/message"
)

// English prints the schema validator's own messages in English.
var English = message.NewPrinter(language.English)

// Compile compiles the JSON Schema doc. It loads nothing a $ref names
// outside doc (the validator's own loader reads files): such a $ref is a
// compile error, so that a schema from elsewhere, such as an MCP server's,
// cannot make the process read its files.
func Compile(doc []byte) (*sjson.Schema, error) {
	tree, err := sjson.UnmarshalJSON(bytes.NewReader(doc))
	if err != nil {
		return nil, err
	}
	c := NewCompiler()
	if err := c.AddResource("mem:///schema.json", tree); err != nil {
		return nil, err
	}
	return c.Compile("mem:///schema.json")
}

// NewCompiler returns a schema compiler that loads no $ref outside the
// documents added to it (the validator's default loader reads files).
func NewCompiler() *sjson.Compiler {
	c := sjson.NewCompiler()
	c.UseLoader(noLoader{})
	return c
}

// noLoader refuses every URL a schema refers to outside its documents.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("the schema refers to %q, outside itself; only references inside the schema (such as \"#/$defs/x\") are followed", url)
}

// Violation is one failed check of a validation.
type Violation struct {
	// Path is the field path of the value that failed, such as
	// "steps[0].tool"; "" is the document itself. For a missing required
	// property or a property the schema does not allow, it names that
	// property.
	Path string
	// Kind says what failed: *kind.Required, *kind.AdditionalProperties,
	// *kind.Enum, *kind.Type, *kind.Minimum and so on.
	Kind sjson.ErrorKind
}

// Violations flattens ve to its leaf failures, one per missing or extra
// property, sorted by path (failures at one path keep their order).
func Violations(ve *sjson.ValidationError) []Violation {
	var out []Violation
	var walk func(e *sjson.ValidationError)
	walk = func(e *sjson.ValidationError) {
		if len(e.Causes) > 0 {
			for _, c := range e.Causes {
				walk(c)
			}
			return
		}
		at := e.InstanceLocation
		switch k := e.ErrorKind.(type) {
		case *kind.Required:
			for _, m := range k.Missing {
				out = append(out, Violation{FieldPath(append(slices.Clip(at), m)), k})
			}
		case *kind.AdditionalProperties:
			for _, p := range k.Properties {
				out = append(out, Violation{FieldPath(append(slices.Clip(at), p)), k})
			}
		default:
			out = append(out, Violation{FieldPath(at), k})
		}
	}
	walk(ve)
	slices.SortStableFunc(out, func(a, b Violation) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// FieldPath renders a JSON pointer's tokens as a field path:
// ["steps","0","tool"] is "steps[0].tool"; no tokens is "".
func FieldPath(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		if _, err := strconv.Atoi(t); err == nil {
			b.WriteString("[" + t + "]")
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(t)
	}
	return b.String()
}

// NewTagValidator returns a validator of validate tags that names fields
// by their JSON names, as the model wrote them.
func NewTagValidator() *validator.Validate {
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

// TagPath returns the field path of a validate-tag failure without its
// root type's name: "Plan.steps[0].tool" is "steps[0].tool".
func TagPath(fe validator.FieldError) string {
	path := fe.Namespace()
	if _, rest, ok := strings.Cut(path, "."); ok {
		path = rest
	}
	return path
}

// HasValidateTags reports whether the tag validator has anything to check in
// a value of type t: a validate tag on a field of t or of a type inside it,
// or a type that hands the validator another value (validator.Valuer).
func HasValidateTags(t reflect.Type) bool { return hasValidateTags(t, map[reflect.Type]bool{}) }

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

// ToolParameters returns doc, a JSON Schema, as the parameters of a tool:
// without $schema, of type "object" and with properties (empty when doc
// has none), encoded without HTML escapes. It changes doc. A doc of
// another type is an error, which names doc by subject (for example "the
// JSON Schema").
func ToolParameters(doc map[string]any, subject string) ([]byte, error) {
	delete(doc, "$schema")
	if typ, ok := doc["type"]; ok && typ != "object" {
		return nil, fmt.Errorf("%s has type %v; a tool's arguments are an object", subject, typ)
	}
	doc["type"] = "object"
	if _, ok := doc["properties"]; !ok {
		doc["properties"] = map[string]any{}
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	return bytes.TrimSpace(buf.Bytes()), nil
}
