package operator

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"math/big"
	"reflect"
	"slices"
	"strings"
	"unsafe"

	"github.com/agentgraph/agentgraph/internal/schemacheck"
	"github.com/agentgraph/agentgraph/internal/utf8clip"

	"github.com/go-playground/validator/v10"
	"github.com/invopop/jsonschema"
	sjson "github.com/santhosh-tekuri/jsonschema/v6"
	"github.com/santhosh-tekuri/jsonschema/v6/kind"
)

// argSchema is what a FuncTool knows about its argument type: the schema the
// model sees, compiled to check calls, and whether the tag validator has
// anything to check.
type argSchema struct {
	json     json.RawMessage
	compiled *sjson.Schema
	ptr      bool         // In is *S: decode into a new S
	typ      reflect.Type // S, the struct or map decoded into
	tagged   bool
	fast     *flatArgs // non-nil when calls can be checked without the schema validator
}

// The validator caches struct metadata per type; it is safe for concurrent
// use and holds no state that depends on input beyond the types it sees.
var tagValidator = schemacheck.NewTagValidator()

// newArgSchema reflects the schema of t, a struct or a pointer to one, or
// takes override when it is set.
func newArgSchema(t reflect.Type, override json.RawMessage) (*argSchema, error) {
	s := &argSchema{}
	st := t
	if st.Kind() == reflect.Pointer {
		st, s.ptr = st.Elem(), true
	}
	s.typ = st
	isMap := st.Kind() == reflect.Map && st.Key().Kind() == reflect.String
	if st.Kind() != reflect.Struct && !isMap {
		return nil, fmt.Errorf("the argument type %s is not a struct; tools take a JSON object, so use a struct (struct{} for none)", t)
	}
	raw := override
	recursive := raw == nil && isRecursive(st, map[reflect.Type]bool{})
	if raw == nil {
		// Definitions are inlined, except in a recursive type, which cannot
		// be: its schema keeps them in $defs.
		r := jsonschema.Reflector{DoNotReference: !recursive, ExpandedStruct: !recursive, Anonymous: true}
		var err error
		if raw, err = json.Marshal(r.ReflectFromType(st)); err != nil {
			return nil, fmt.Errorf("JSON Schema of %s: %w", t, err)
		}
	}
	var doc map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		return nil, fmt.Errorf("the JSON Schema is not a JSON object: %w", err)
	}
	if recursive {
		// The root is a reference to its own definition: hoist it, keeping
		// the definitions its references resolve to.
		defs, _ := doc["$defs"].(map[string]any)
		ref, _ := doc["$ref"].(string)
		root, ok := defs[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		if !ok {
			return nil, fmt.Errorf("JSON Schema of %s: the recursive type's root definition %q is missing", t, ref)
		}
		doc = maps.Clone(root)
		doc["$defs"] = defs
	}
	delete(doc, "$id")
	openSchemas(doc)
	var err error
	if s.json, err = schemacheck.ToolParameters(doc, "the JSON Schema"); err != nil {
		return nil, err
	}
	if s.compiled, err = schemacheck.Compile(s.json); err != nil {
		return nil, fmt.Errorf("the JSON Schema does not compile: %w", err)
	}
	s.tagged = !isMap && schemacheck.HasValidateTags(st)
	s.fast = newFlatArgs(doc)
	if s.fast != nil && !isMap {
		s.fast.fields = flatFields(st, s.fast)
		s.fast.keys = orderedKeys(s.fast)
	}
	return s, nil
}

// decode checks raw and decodes it into dst, a *In. It returns "" on
// success, else the problems as lines for the model: at most
// maxProblemLines of them, each at most maxProblemLine bytes, so that
// the text stays small whatever the arguments hold (a problem may quote
// an argument's value).
func (s *argSchema) decode(raw json.RawMessage, dst any) string {
	msg := s.problems(raw, dst)
	if msg != "" {
		msg = boundLines(msg)
	}
	return msg
}

// The bounds of the problems decode reports.
const (
	// maxProblemLines is the most problem lines reported; a last line
	// counts the others.
	maxProblemLines = 20
	// maxProblemLine is the longest problem line, in bytes.
	maxProblemLine = 1024
)

// boundLines returns msg with at most maxProblemLines lines, each cut to
// maxProblemLine bytes (not within a UTF-8 sequence) and saying so.
func boundLines(msg string) string {
	n := strings.Count(msg, "\n") + 1
	if n <= maxProblemLines && len(msg) <= maxProblemLine {
		return msg
	}
	var b strings.Builder
	k := 0
	for line := range strings.SplitSeq(msg, "\n") {
		if k == maxProblemLines {
			fmt.Fprintf(&b, "\n- and %d more problems", n-k)
			break
		}
		if k > 0 {
			b.WriteByte('\n')
		}
		k++
		if len(line) <= maxProblemLine {
			b.WriteString(line)
			continue
		}
		b.WriteString(utf8clip.Clip(line, maxProblemLine))
		fmt.Fprintf(&b, "… (cut from %d bytes)", len(line))
	}
	return b.String()
}

// problems checks raw and decodes it into dst, a *In. It returns "" on
// success, else the problems as lines for the model.
func (s *argSchema) problems(raw json.RawMessage, dst any) string {
	raw = orEmptyObject(raw)
	if s.fast != nil && s.fast.fields != nil {
		if msg, ok := s.fillFlat(raw, dst); ok {
			return msg
		}
	}
	if s.fast != nil && s.fast.accepts(raw) {
		if msg, ok := s.decodeFlat(raw, dst); ok {
			return msg
		}
	}
	tree, err := sjson.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return "- the arguments are not valid JSON (" + err.Error() + "); send one JSON object"
	}
	if _, ok := tree.(map[string]any); !ok {
		return "- the arguments must be a JSON object of named arguments, not " + jsonKind(tree)
	}
	if err := s.compiled.Validate(tree); err != nil {
		var ve *sjson.ValidationError
		if errors.As(err, &ve) {
			return schemaLines(ve)
		}
		return "- " + err.Error()
	}
	_, into := s.target(dst)
	if err := decodeStrict(raw, into); err != nil {
		return decodeLine(err)
	}
	return s.checkTags(into)
}

// orEmptyObject returns raw without surrounding white space, or the empty
// object when raw is empty or null: the arguments of a call that sends
// none.
func orEmptyObject(raw json.RawMessage) json.RawMessage {
	if len(raw) > 1 && raw[0] == '{' && raw[len(raw)-1] == '}' {
		return raw // the usual call: an object, without spaces around it
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return emptyObject
	}
	return raw
}

// target returns the value at dst, a *In, and where to decode the
// arguments: dst itself, or, when In is a pointer, a new argument struct
// that the value at dst now points to.
func (s *argSchema) target(dst any) (target reflect.Value, into any) {
	target = reflect.ValueOf(dst).Elem()
	into = dst
	if s.ptr {
		target.Set(reflect.New(target.Type().Elem()))
		into = target.Interface()
	}
	return target, into
}

// decodeStrict decodes the JSON object raw into into, refusing fields
// that into does not have.
func decodeStrict(raw json.RawMessage, into any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	return dec.Decode(into)
}

// emptyObject is the arguments of a call that sends none.
var emptyObject = []byte("{}")

// fillPlain decodes raw into the argument struct at dst, of the tool's
// argument type, when the flat fill takes raw and nothing else is to be
// checked (the argument type is the struct itself, without validate
// tags), and reports whether it did. dst is left zero when it did not:
// decode then decodes the call.
func (s *argSchema) fillPlain(raw json.RawMessage, dst unsafe.Pointer) bool {
	if s.fast == nil || s.fast.fields == nil || s.ptr || s.tagged {
		return false
	}
	if s.fast.fill(orEmptyObject(raw), dst) {
		return true
	}
	reflect.NewAt(s.typ, dst).Elem().SetZero()
	return false
}

// decodeFlat decodes raw, which the flat check accepted, into dst,
// refusing unknown fields as the full check does: a property of a schema
// given with WithSchema that no field of the argument type takes. ok is
// false when decoding fails: dst is then reset for the full check, whose
// messages say what is wrong.
func (s *argSchema) decodeFlat(raw json.RawMessage, dst any) (msg string, ok bool) {
	target, into := s.target(dst)
	if err := decodeStrict(raw, into); err != nil {
		target.SetZero()
		return "", false
	}
	return s.checkTags(into), true
}

// fillFlat decodes raw into dst with the flat check's fill, which
// decodes the usual calls (no escapes in strings, numbers in range of
// their fields) as encoding/json does, without reflection. ok is false
// when fill does not take raw: dst is then as it was, zero, for
// decodeFlat or the full check.
func (s *argSchema) fillFlat(raw json.RawMessage, dst any) (msg string, ok bool) {
	target, into := s.target(dst)
	if !s.fast.fill(raw, reflect.ValueOf(into).UnsafePointer()) {
		target.SetZero()
		return "", false
	}
	return s.checkTags(into), true
}

// checkTags checks the validate tags of the decoded arguments into, a
// pointer to the argument struct, and returns the problems as lines for
// the model, or "".
func (s *argSchema) checkTags(into any) string {
	if !s.tagged {
		return ""
	}
	if err := tagValidator.Struct(into); err != nil {
		var ves validator.ValidationErrors
		if errors.As(err, &ves) {
			return tagLines(ves)
		}
		return "- " + err.Error()
	}
	return ""
}

func jsonKind(v any) string {
	switch v.(type) {
	case []any:
		return "an array"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case nil:
		return "null"
	}
	return "a number"
}

// schemaLines lists the schema violations as "- field: problem" lines in
// field order, the arguments object itself named "(arguments)".
func schemaLines(ve *sjson.ValidationError) string {
	var lines []string
	for _, v := range schemacheck.Violations(ve) {
		var text string
		switch k := v.Kind.(type) {
		case *kind.Required:
			text = "is required but missing"
		case *kind.AdditionalProperties:
			text = "is not a known argument; remove it"
		case *kind.Minimum:
			text = "is " + numText(k.Got) + "; must be at least " + numText(k.Want)
		case *kind.Maximum:
			text = "is " + numText(k.Got) + "; must be at most " + numText(k.Want)
		default:
			text = k.LocalizedString(schemacheck.English)
		}
		path := v.Path
		if path == "" {
			path = "(arguments)"
		}
		lines = append(lines, "- "+path+": "+text)
	}
	return strings.Join(slices.Compact(lines), "\n")
}

// numText returns r in decimal for a problem line: exactly when it is
// short (numerator and denominator of at most exactBits bits together),
// else rounded to six significant digits with its exponent, as "about
// 1e+1000000". A number written with a large exponent (1e1000000 is nine
// bytes of JSON) would otherwise be written out in full, at a cost in
// time and bytes growing with the exponent.
func numText(r *big.Rat) string {
	if r.Num().BitLen()+r.Denom().BitLen() <= exactBits {
		return r.RatString()
	}
	l := log10Abs(r.Num()) - log10Abs(r.Denom())
	e := math.Floor(l)
	m := math.Pow(10, l-e)
	if m >= 9.999995 { // %.6g would round it to 10
		m, e = 1, e+1
	}
	sign := ""
	if r.Sign() < 0 {
		sign = "-"
	}
	return fmt.Sprintf("about %s%.6ge%+d", sign, m, int64(e))
}

// exactBits is the number of bits of a fraction's numerator and
// denominator together up to which numText writes it exactly: about 38
// decimal digits.
const exactBits = 128

// log10Abs returns the decimal logarithm of |x|, x not zero, from its 64
// leading bits: its cost is linear in x's length.
func log10Abs(x *big.Int) float64 {
	f := new(big.Float).SetPrec(64).SetInt(x)
	var mant big.Float
	exp := f.Abs(f).MantExp(&mant) // |x| = mant × 2^exp, mant in [0.5, 1)
	m, _ := mant.Float64()
	return math.Log10(m) + float64(exp)*math.Log10(2)
}

// decodeLine words a decoding error that the schema did not catch.
func decodeLine(err error) string {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		return fmt.Sprintf("- %s: got a JSON %s, want %s", te.Field, te.Value, te.Type)
	}
	if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return "- " + strings.Trim(msg, `"`) + ": is not a known argument; remove it"
	}
	if errors.Is(err, io.ErrUnexpectedEOF) {
		return "- the arguments are cut off; send one complete JSON object"
	}
	return "- " + err.Error()
}

// tagLines lists the validate-tag failures as "- field: problem" lines.
func tagLines(ves validator.ValidationErrors) string {
	var b strings.Builder
	for i, fe := range ves {
		if i > 0 {
			b.WriteByte('\n')
		}
		b.WriteString("- " + schemacheck.TagPath(fe) + ": " + tagProblem(fe))
	}
	return b.String()
}

func tagProblem(fe validator.FieldError) string {
	p := fe.Param()
	count := ""
	switch fe.Kind() {
	case reflect.String:
		count = "characters"
	case reflect.Slice, reflect.Array, reflect.Map:
		count = "items"
	}
	switch fe.Tag() {
	case "required", "required_if", "required_unless", "required_with", "required_without":
		return "is required"
	case "oneof":
		return fmt.Sprintf("is %v; must be one of: %s", fe.Value(), strings.Join(strings.Fields(p), ", "))
	case "min", "gte":
		if count != "" {
			return fmt.Sprintf("must have at least %s %s", p, count)
		}
		return fmt.Sprintf("is %v; must be at least %s", fe.Value(), p)
	case "max", "lte":
		if count != "" {
			return fmt.Sprintf("must have at most %s %s", p, count)
		}
		return fmt.Sprintf("is %v; must be at most %s", fe.Value(), p)
	case "len":
		if count != "" {
			return fmt.Sprintf("must have exactly %s %s", p, count)
		}
		return fmt.Sprintf("is %v; must be %s", fe.Value(), p)
	case "gt":
		return fmt.Sprintf("is %v; must be greater than %s", fe.Value(), p)
	case "lt":
		return fmt.Sprintf("is %v; must be less than %s", fe.Value(), p)
	case "email":
		return fmt.Sprintf("%q is not an email address", fe.Value())
	case "url", "http_url", "uri":
		return fmt.Sprintf("%q is not a URL", fe.Value())
	}
	if p != "" {
		return fmt.Sprintf("is %v; fails the %q rule (%s)", fe.Value(), fe.Tag(), p)
	}
	return fmt.Sprintf("is %v; fails the %q rule", fe.Value(), fe.Tag())
}

// openSchemas replaces the boolean schema true (any value), which invopop
// writes for an interface field and some providers refuse, by the
// equivalent {} wherever a property or array item is described.
func openSchemas(v any) {
	m, ok := v.(map[string]any)
	if !ok {
		return
	}
	if props, ok := m["properties"].(map[string]any); ok {
		for k, p := range props {
			if p == true {
				props[k] = map[string]any{}
			}
			openSchemas(props[k])
		}
	}
	if m["items"] == true {
		m["items"] = map[string]any{}
	}
	openSchemas(m["items"])
	openSchemas(m["additionalProperties"])
	if defs, ok := m["$defs"].(map[string]any); ok {
		for _, d := range defs {
			openSchemas(d)
		}
	}
	for _, k := range []string{"anyOf", "oneOf", "allOf"} {
		if list, ok := m[k].([]any); ok {
			for _, e := range list {
				openSchemas(e)
			}
		}
	}
}

// isRecursive reports whether a value of type t can hold a value of a
// struct type that holds it, which a schema can only describe by reference.
func isRecursive(t reflect.Type, path map[reflect.Type]bool) bool {
	switch t.Kind() {
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return isRecursive(t.Elem(), path)
	case reflect.Map:
		return isRecursive(t.Elem(), path)
	case reflect.Struct:
		if path[t] {
			return true
		}
		path[t] = true
		defer delete(path, t)
		for i := range t.NumField() {
			if isRecursive(t.Field(i).Type, path) {
				return true
			}
		}
	}
	return false
}
