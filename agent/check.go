package agent

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"

	"github.com/agentgraph/agentgraph/internal/schemacheck"
	"github.com/go-playground/validator/v10"
	sjson "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// rejection is why a reply was not accepted, in the words fed back to the model.
type rejection struct {
	kind    FailureKind
	message string
}

// check extracts, parses, validates and decodes raw into dst (a *T). It
// returns nil when dst holds a valid value.
func (s *typeSchema) check(raw string, dst any) *rejection {
	if strings.TrimSpace(raw) == "" {
		return &rejection{FailureJSONParse, "Invalid JSON: the reply was empty"}
	}
	start, end, _ := extractJSON(raw, s.want, false)
	candidate := raw[start:end]
	if s.want != 0 && !strings.ContainsAny(candidate, "{[") {
		what := "object"
		if s.want == '[' {
			what = "array"
		}
		return &rejection{FailureJSONParse, "Invalid JSON: no JSON " + what + " found in the reply"}
	}

	doc, err := jsonTree(candidate)
	if err != nil {
		return &rejection{FailureJSONParse, "Invalid JSON: " + syntaxMessage(err, start, len(raw))}
	}
	if err := s.compiled.Validate(doc); err != nil {
		var ve *sjson.ValidationError
		if errors.As(err, &ve) {
			return &rejection{FailureSchemaValidation, schemaMessage(ve)}
		}
		return &rejection{FailureSchemaValidation, "- " + err.Error()}
	}

	// The schema has passed; decode strictly into T. A null decodes as the
	// zero value, matching the schema check, where null meant absent.
	strict := json.NewDecoder(strings.NewReader(candidate))
	strict.DisallowUnknownFields()
	if err := strict.Decode(dst); err != nil {
		return &rejection{FailureSchemaValidation, decodeMessage(err)}
	}

	if s.isStruct && s.tagged {
		if err := validate.Struct(structOf(dst)); err != nil {
			var ves validator.ValidationErrors
			if errors.As(err, &ves) {
				return &rejection{FailureSchemaValidation, tagMessage(ves)}
			}
			return &rejection{FailureSchemaValidation, "- " + err.Error()}
		}
	}
	if err := runValidate(dst); err != nil {
		return &rejection{FailureSchemaValidation, validateMessage(err)}
	}
	return nil
}

// jsonTree parses candidate with encoding/json into the tree the schema
// validator reads (numbers as json.Number, null members dropped).
func jsonTree(candidate string) (any, error) {
	dec := json.NewDecoder(strings.NewReader(candidate))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil {
		return nil, err
	}
	return dropNulls(doc), nil
}

// dropNulls removes null object members: an optional field given as null is
// treated as absent (and a required one as missing).
func dropNulls(v any) any {
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if e == nil {
				delete(x, k)
				continue
			}
			x[k] = dropNulls(e)
		}
	case []any:
		for i, e := range x {
			x[i] = dropNulls(e)
		}
	}
	return v
}

// structOf returns what the tag validator takes for dst, a *T: dst itself
// when T is a struct, the *S it holds when T is a *S.
func structOf(dst any) any {
	if v := reflect.ValueOf(dst).Elem(); v.Kind() == reflect.Pointer {
		return v.Interface()
	}
	return dst
}

func runValidate(dst any) error {
	if v, ok := dst.(Validator); ok {
		return v.Validate()
	}
	if v, ok := reflect.ValueOf(dst).Elem().Interface().(Validator); ok {
		return v.Validate()
	}
	return nil
}

// syntaxMessage words a JSON syntax error the way the model best understands
// it, with the position of the offending byte in the whole reply.
func syntaxMessage(err error, start, rawLen int) string {
	var se *json.SyntaxError
	if !errors.As(err, &se) {
		if errors.Is(err, io.ErrUnexpectedEOF) {
			return fmt.Sprintf("Unexpected end of input (the JSON is cut off or a bracket is not closed) at position %d", rawLen)
		}
		return err.Error()
	}
	pos := start + int(se.Offset) - 1
	if pos < start {
		pos = start
	}
	msg := se.Error()
	switch {
	case strings.Contains(msg, "looking for beginning of object key string"):
		msg = "Expecting property name enclosed in double quotes"
	case strings.Contains(msg, "after object key:value pair"), strings.Contains(msg, "after array element"):
		msg = "Expecting ',' delimiter"
	case strings.Contains(msg, "after object key"):
		msg = "Expecting ':' delimiter"
	case strings.Contains(msg, "looking for beginning of value"):
		msg = "Expecting value"
	case strings.Contains(msg, "in string literal"):
		msg = "Invalid control character in string"
	case strings.Contains(msg, "unexpected end of JSON input"):
		msg = "Unexpected end of input (the JSON is cut off or a bracket is not closed)"
		pos = rawLen
	}
	return fmt.Sprintf("%s at position %d", msg, pos)
}

// schemaMessage lists the schema violations, one "- Field 'path': problem"
// line each, in path order.
func schemaMessage(ve *sjson.ValidationError) string {
	var b strings.Builder
	for i, v := range schemacheck.Violations(ve) {
		if i > 0 {
			b.WriteByte('\n')
		}
		var text string
		switch k := v.Kind.(type) {
		case *kind.Required:
			text = "Field required"
		case *kind.AdditionalProperties:
			text = "Extra inputs are not permitted"
		case *kind.Enum:
			text = "Input should be " + alternatives(k.Want)
		case *kind.Const:
			text = "Input should be " + literal(k.Want)
		case *kind.Type:
			text = "Input should be a valid " + strings.Join(k.Want, " or ") + ", got " + k.Got
		default:
			text = k.LocalizedString(schemacheck.English)
		}
		if v.Path == "" {
			b.WriteString("- " + text)
		} else {
			fmt.Fprintf(&b, "- Field '%s': %s", v.Path, text)
		}
	}
	return b.String()
}

// alternatives renders ["A","B","C"] as "'A', 'B' or 'C'".
func alternatives(want []any) string {
	parts := make([]string, len(want))
	for i, w := range want {
		parts[i] = literal(w)
	}
	if len(parts) == 1 {
		return parts[0]
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " or " + parts[len(parts)-1]
}

func literal(v any) string {
	if s, ok := v.(string); ok {
		return "'" + s + "'"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// decodeMessage words a strict-decoding error (unknown field, wrong type).
func decodeMessage(err error) string {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		return fmt.Sprintf("- Field '%s': Input should be a valid %s, got %s", ute.Field, jsonKind(ute.Type), ute.Value)
	}
	msg := err.Error()
	if f, ok := strings.CutPrefix(msg, "json: unknown field "); ok {
		return fmt.Sprintf("- Field '%s': Extra inputs are not permitted", strings.Trim(f, `"`))
	}
	return "- " + msg
}

func jsonKind(t reflect.Type) string {
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Float32, reflect.Float64:
		return "number"
	case reflect.Slice, reflect.Array:
		return "array"
	case reflect.Map, reflect.Struct:
		return "object"
	}
	return t.String()
}

// tagMessage words validate-tag failures with JSON field paths.
func tagMessage(ves validator.ValidationErrors) string {
	var b strings.Builder
	for i, fe := range ves {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "- Field '%s': %s", schemacheck.TagPath(fe), tagText(fe))
	}
	return b.String()
}

func tagText(fe validator.FieldError) string {
	switch fe.Tag() {
	case "required", "required_if", "required_unless", "required_with", "required_without":
		return "Field required"
	case "oneof":
		opts := strings.Fields(fe.Param())
		want := make([]any, len(opts))
		for i, o := range opts {
			want[i] = o
		}
		return "Input should be " + alternatives(want)
	case "min", "gte":
		return "Input should be at least " + fe.Param()
	case "max", "lte":
		return "Input should be at most " + fe.Param()
	case "gt":
		return "Input should be greater than " + fe.Param()
	case "lt":
		return "Input should be less than " + fe.Param()
	case "len":
		return "Input should have length " + fe.Param()
	}
	if fe.Param() != "" {
		return fmt.Sprintf("failed the '%s=%s' check", fe.Tag(), fe.Param())
	}
	return fmt.Sprintf("failed the '%s' check", fe.Tag())
}

// validateMessage words the error of a Validate method.
func validateMessage(err error) string {
	var errs []error
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		errs = j.Unwrap()
	} else {
		errs = []error{err}
	}
	var b strings.Builder
	for i, e := range errs {
		if i > 0 {
			b.WriteByte('\n')
		}
		var fe *FieldError
		if errors.As(e, &fe) {
			fmt.Fprintf(&b, "- Field '%s': %s", fe.Field, fe.Message)
		} else {
			b.WriteString("- " + e.Error())
		}
	}
	return b.String()
}
