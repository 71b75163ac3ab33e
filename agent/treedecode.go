package agent

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
)

// treeDecoder stores a parsed tree (see parseTree) in a Go value the way
// encoding/json would store the text it came from, with DisallowUnknownFields,
// so that a reply is parsed once. It is built per type and only for types
// whose decoding encoding/json does by plain rules: no json.Unmarshaler or
// encoding.TextUnmarshaler, no embedded structs, no ",string" fields, no
// []byte (base64), string map keys. decode returns false, leaving dst in an
// unspecified state, whenever a value needs anything else (a number that
// does not fit, a member naming no field, a type mismatch); the caller then
// zeroes dst and lets encoding/json decode the text, which also words the
// error.
type treeDecoder struct {
	decode func(v any, dst reflect.Value) bool
}

var (
	jsonUnmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
	emptyInterfaceType  = reflect.TypeFor[any]()
	numberType          = reflect.TypeFor[json.Number]()
)

// newTreeDecoder returns the decoder for t, or nil when encoding/json must
// decode t.
func newTreeDecoder(t reflect.Type) *treeDecoder {
	return buildTreeDecoder(t, map[reflect.Type]*treeDecoder{})
}

func buildTreeDecoder(t reflect.Type, building map[reflect.Type]*treeDecoder) *treeDecoder {
	if d, ok := building[t]; ok {
		return d // a recursive type: filled in when its build returns
	}
	if t == numberType || unmarshals(t) {
		return nil
	}
	d := &treeDecoder{}
	building[t] = d
	defer delete(building, t)
	switch t.Kind() {
	case reflect.Bool:
		d.decode = decodeBool
	case reflect.String:
		d.decode = decodeString
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		d.decode = decodeInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		d.decode = decodeUint
	case reflect.Float32, reflect.Float64:
		bits := t.Bits()
		d.decode = func(v any, dst reflect.Value) bool { return decodeFloat(v, dst, bits) }
	case reflect.Interface:
		if t != emptyInterfaceType {
			return nil
		}
		d.decode = func(v any, dst reflect.Value) bool {
			x, ok := interfaceValue(v)
			if !ok {
				return false
			}
			if x == nil {
				dst.SetZero()
			} else {
				dst.Set(reflect.ValueOf(x))
			}
			return true
		}
	case reflect.Pointer:
		elem := buildTreeDecoder(t.Elem(), building)
		if elem == nil {
			return nil
		}
		et := t.Elem()
		d.decode = func(v any, dst reflect.Value) bool {
			p := reflect.New(et)
			if !elem.decode(v, p.Elem()) {
				return false
			}
			dst.Set(p)
			return true
		}
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return nil // []byte is base64 text
		}
		elem := buildTreeDecoder(t.Elem(), building)
		if elem == nil {
			return nil
		}
		d.decode = func(v any, dst reflect.Value) bool {
			a, ok := v.([]any)
			if !ok {
				return false
			}
			s := reflect.MakeSlice(dst.Type(), len(a), len(a))
			for i, e := range a {
				if !elem.decode(e, s.Index(i)) {
					return false
				}
			}
			dst.Set(s)
			return true
		}
	case reflect.Array:
		elem := buildTreeDecoder(t.Elem(), building)
		if elem == nil {
			return nil
		}
		d.decode = func(v any, dst reflect.Value) bool {
			a, ok := v.([]any)
			if !ok {
				return false
			}
			// encoding/json skips elements beyond the array's length.
			for i := 0; i < len(a) && i < dst.Len(); i++ {
				if !elem.decode(a[i], dst.Index(i)) {
					return false
				}
			}
			return true
		}
	case reflect.Map:
		if t.Key().Kind() != reflect.String || unmarshals(t.Key()) {
			return nil
		}
		if t == reflect.TypeFor[map[string]any]() {
			d.decode = func(v any, dst reflect.Value) bool {
				m, ok := v.(map[string]any)
				if ok && convertTree(m) {
					dst.Set(reflect.ValueOf(m))
					return true
				}
				return false
			}
			break
		}
		elem := buildTreeDecoder(t.Elem(), building)
		if elem == nil {
			return nil
		}
		kt, et := t.Key(), t.Elem()
		d.decode = func(v any, dst reflect.Value) bool {
			m, ok := v.(map[string]any)
			if !ok {
				return false
			}
			out := reflect.MakeMapWithSize(dst.Type(), len(m))
			ev := reflect.New(et).Elem()
			for k, e := range m {
				ev.SetZero()
				if !elem.decode(e, ev) {
					return false
				}
				out.SetMapIndex(reflect.ValueOf(k).Convert(kt), ev)
			}
			dst.Set(out)
			return true
		}
	case reflect.Struct:
		fields := make(map[string]structField, t.NumField())
		for i := range t.NumField() {
			f := t.Field(i)
			if f.Anonymous {
				return nil
			}
			if !f.IsExported() {
				continue
			}
			tag := f.Tag.Get("json")
			if tag == "-" {
				continue
			}
			name, opts, _ := strings.Cut(tag, ",")
			if hasOption(opts, "string") {
				return nil
			}
			if name == "" {
				name = f.Name
			} else if !plainFieldName(name) {
				return nil
			}
			if _, dup := fields[name]; dup {
				return nil
			}
			fd := buildTreeDecoder(f.Type, building)
			if fd == nil {
				return nil
			}
			fields[name] = structField{index: i, dec: fd}
		}
		d.decode = func(v any, dst reflect.Value) bool {
			m, ok := v.(map[string]any)
			if !ok {
				return false
			}
			for k, e := range m {
				f, ok := fields[k]
				if !ok || !f.dec.decode(e, dst.Field(f.index)) {
					return false
				}
			}
			return true
		}
	default:
		return nil
	}
	return d
}

// unmarshals reports whether encoding/json hands t's values to their own
// UnmarshalJSON or UnmarshalText.
func unmarshals(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return t.Implements(jsonUnmarshalerType) || t.Implements(textUnmarshalerType) ||
		pt.Implements(jsonUnmarshalerType) || pt.Implements(textUnmarshalerType)
}

type structField struct {
	index int
	dec   *treeDecoder
}

func hasOption(opts, want string) bool {
	for opts != "" {
		var o string
		o, opts, _ = strings.Cut(opts, ",")
		if o == want {
			return true
		}
	}
	return false
}

// plainFieldName reports whether a json tag name is one encoding/json takes
// as it is (it ignores some names with unusual characters).
func plainFieldName(name string) bool {
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

func decodeBool(v any, dst reflect.Value) bool {
	b, ok := v.(bool)
	if ok {
		dst.SetBool(b)
	}
	return ok
}

func decodeString(v any, dst reflect.Value) bool {
	s, ok := v.(string)
	if ok {
		dst.SetString(s)
	}
	return ok
}

func decodeInt(v any, dst reflect.Value) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	i, err := strconv.ParseInt(string(n), 10, 64)
	if err != nil || dst.OverflowInt(i) {
		return false
	}
	dst.SetInt(i)
	return true
}

func decodeUint(v any, dst reflect.Value) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	u, err := strconv.ParseUint(string(n), 10, 64)
	if err != nil || dst.OverflowUint(u) {
		return false
	}
	dst.SetUint(u)
	return true
}

func decodeFloat(v any, dst reflect.Value, bits int) bool {
	n, ok := v.(json.Number)
	if !ok {
		return false
	}
	f, err := strconv.ParseFloat(string(n), bits)
	if err != nil || dst.OverflowFloat(f) {
		return false
	}
	dst.SetFloat(f)
	return true
}

// interfaceValue turns a tree value into what encoding/json stores in an
// interface{}: numbers become float64. Maps and slices are converted in
// place.
func interfaceValue(v any) (any, bool) {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		return f, err == nil
	case map[string]any:
		return x, convertTree(x)
	case []any:
		for i, e := range x {
			c, ok := interfaceValue(e)
			if !ok {
				return nil, false
			}
			x[i] = c
		}
		return x, true
	}
	return v, true
}

func convertTree(m map[string]any) bool {
	for k, e := range m {
		switch e.(type) {
		case json.Number, map[string]any, []any:
			c, ok := interfaceValue(e)
			if !ok {
				return false
			}
			m[k] = c
		}
	}
	return true
}
