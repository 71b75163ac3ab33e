package agent

import (
	"encoding/json"
	"math/big"
	"strings"
	"unicode/utf8"

	sjson "github.com/santhosh-tekuri/jsonschema/v6"
)

// quickSchema is a compiled schema reduced to the keywords the reflected
// schemas of Go types use (type, enum of strings, properties, required,
// additionalProperties, items, the size and numeric bounds). It answers one
// question fast: is a tree certainly valid? A "no" means "ask the full
// validator", which then also words the errors; so quickSchema only has to be
// right when it says yes.
type quickSchema struct {
	always   bool // the schema true: anything is valid
	types    uint8
	enum     []string // nil: no enum
	props    map[string]*quickSchema
	required []string
	extra    *quickSchema // nil with noExtra false: any extra member is valid
	noExtra  bool         // additionalProperties: false
	items    *quickSchema // nil: any item is valid

	minProps, maxProps   int // -1: no bound
	minItems, maxItems   int
	minLength, maxLength int
	min, max             *big.Rat // inclusive bounds
	exclMin, exclMax     *big.Rat
}

const (
	qtNull uint8 = 1 << iota
	qtBool
	qtNumber
	qtInteger
	qtString
	qtArray
	qtObject
)

var qtNames = map[string]uint8{"null": qtNull, "boolean": qtBool, "number": qtNumber, "integer": qtInteger,
	"string": qtString, "array": qtArray, "object": qtObject}

// newQuickSchema reduces s, or returns nil when s uses a keyword quickSchema
// does not know (the full validator then checks every tree).
func newQuickSchema(s *sjson.Schema) *quickSchema {
	return reduceSchema(s, 0)
}

func reduceSchema(s *sjson.Schema, depth int) *quickSchema {
	if s == nil || depth > 64 {
		return nil
	}
	if s.Bool != nil {
		if *s.Bool {
			return &quickSchema{always: true}
		}
		return nil
	}
	if s.Ref != nil || s.RecursiveRef != nil || s.DynamicRef != nil || s.Const != nil || s.Not != nil ||
		s.AllOf != nil || s.AnyOf != nil || s.OneOf != nil || s.If != nil || s.Then != nil || s.Else != nil ||
		s.Format != nil || s.PropertyNames != nil || len(s.PatternProperties) > 0 || len(s.Dependencies) > 0 ||
		len(s.DependentRequired) > 0 || len(s.DependentSchemas) > 0 || s.UnevaluatedProperties != nil ||
		s.UniqueItems || s.Contains != nil || s.MinContains != nil || s.MaxContains != nil ||
		s.Items != nil || s.AdditionalItems != nil || len(s.PrefixItems) > 0 || s.UnevaluatedItems != nil ||
		s.Pattern != nil || s.ContentEncoding != nil || s.ContentMediaType != nil || s.ContentSchema != nil ||
		s.MultipleOf != nil || len(s.Extensions) > 0 || s.DraftVersion < 2019 {
		return nil
	}
	q := &quickSchema{minProps: -1, maxProps: -1, minItems: -1, maxItems: -1, minLength: -1, maxLength: -1}
	if s.Types != nil {
		for _, name := range s.Types.ToStrings() {
			t, ok := qtNames[name]
			if !ok {
				return nil
			}
			q.types |= t
		}
	}
	if s.Enum != nil {
		q.enum = make([]string, 0, len(s.Enum.Values))
		for _, v := range s.Enum.Values {
			str, ok := v.(string)
			if !ok {
				return nil
			}
			q.enum = append(q.enum, str)
		}
	}
	if len(s.Properties) > 0 {
		q.props = make(map[string]*quickSchema, len(s.Properties))
		for name, ps := range s.Properties {
			if q.props[name] = reduceSchema(ps, depth+1); q.props[name] == nil {
				return nil
			}
		}
	}
	q.required = s.Required
	switch a := s.AdditionalProperties.(type) {
	case nil:
	case bool:
		q.noExtra = !a
	case *sjson.Schema:
		if q.extra = reduceSchema(a, depth+1); q.extra == nil {
			return nil
		}
	default:
		return nil
	}
	if s.Items2020 != nil {
		if q.items = reduceSchema(s.Items2020, depth+1); q.items == nil {
			return nil
		}
	}
	q.minProps, q.maxProps = intOr(s.MinProperties), intOr(s.MaxProperties)
	q.minItems, q.maxItems = intOr(s.MinItems), intOr(s.MaxItems)
	q.minLength, q.maxLength = intOr(s.MinLength), intOr(s.MaxLength)
	q.min, q.max, q.exclMin, q.exclMax = s.Minimum, s.Maximum, s.ExclusiveMinimum, s.ExclusiveMaximum
	return q
}

func intOr(p *int) int {
	if p == nil {
		return -1
	}
	return *p
}

// valid reports whether v is certainly valid; false means "not known".
func (q *quickSchema) valid(v any) bool {
	if q.always {
		return true
	}
	switch x := v.(type) {
	case map[string]any:
		return q.hasType(qtObject) && q.object(x)
	case []any:
		return q.hasType(qtArray) && q.array(x)
	case string:
		return q.hasType(qtString) && q.str(x)
	case json.Number:
		if !q.hasType(qtNumber) && !(q.types&qtInteger != 0 && isIntegerLiteral(x)) {
			return false
		}
		return q.enum == nil && q.number(x)
	case bool:
		return q.hasType(qtBool) && q.enum == nil
	case nil:
		return q.hasType(qtNull) && q.enum == nil
	}
	return false
}

func (q *quickSchema) hasType(t uint8) bool { return q.types == 0 || q.types&t != 0 }

func (q *quickSchema) object(m map[string]any) bool {
	if q.enum != nil || q.minProps >= 0 && len(m) < q.minProps || q.maxProps >= 0 && len(m) > q.maxProps {
		return false
	}
	for _, r := range q.required {
		if _, ok := m[r]; !ok {
			return false
		}
	}
	for k, v := range m {
		if ps, ok := q.props[k]; ok {
			if !ps.valid(v) {
				return false
			}
			continue
		}
		if q.noExtra || q.extra != nil && !q.extra.valid(v) {
			return false
		}
	}
	return true
}

func (q *quickSchema) array(a []any) bool {
	if q.enum != nil || q.minItems >= 0 && len(a) < q.minItems || q.maxItems >= 0 && len(a) > q.maxItems {
		return false
	}
	if q.items != nil {
		for _, v := range a {
			if !q.items.valid(v) {
				return false
			}
		}
	}
	return true
}

func (q *quickSchema) str(s string) bool {
	if q.minLength >= 0 || q.maxLength >= 0 {
		n := utf8.RuneCountInString(s)
		if q.minLength >= 0 && n < q.minLength || q.maxLength >= 0 && n > q.maxLength {
			return false
		}
	}
	if q.enum == nil {
		return true
	}
	for _, e := range q.enum {
		if s == e {
			return true
		}
	}
	return false
}

func (q *quickSchema) number(n json.Number) bool {
	if q.min == nil && q.max == nil && q.exclMin == nil && q.exclMax == nil {
		return true
	}
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		return false
	}
	return (q.min == nil || r.Cmp(q.min) >= 0) && (q.max == nil || r.Cmp(q.max) <= 0) &&
		(q.exclMin == nil || r.Cmp(q.exclMin) > 0) && (q.exclMax == nil || r.Cmp(q.exclMax) < 0)
}

// isIntegerLiteral reports whether a JSON number is written as an integer.
// Others (1.0, 1e2) may be integers too; the full validator decides those.
func isIntegerLiteral(n json.Number) bool {
	return !strings.ContainsAny(string(n), ".eE")
}
