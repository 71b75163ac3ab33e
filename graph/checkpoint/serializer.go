package checkpoint

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
)

// Serializer turns values into bytes for storage and back. Unmarshal fills
// the value v points to, so decoding builds only the caller's own Go type:
// no type name is ever read from storage.
type Serializer interface {
	// Marshal encodes v.
	Marshal(v any) ([]byte, error)
	// Unmarshal decodes data into the value v points to.
	Unmarshal(data []byte, v any) error
}

// TypeChecker is implemented by Serializers that can tell, before any value
// is encoded, whether they can encode and decode every value of a type.
// CheckType uses it.
type TypeChecker interface {
	// CheckType returns an error naming the first part of t that cannot be
	// encoded or decoded.
	CheckType(t reflect.Type) error
}

// JSON is the default Serializer: encoding/json.
var JSON Serializer = jsonSerializer{}

type jsonSerializer struct{}

// Marshal encodes v as encoding/json does. Integers, booleans, strings and
// string slices (also behind a pointer), the commonest state fields, are
// encoded directly when that gives the same bytes, which is several times
// faster than encoding/json's reflection.
func (jsonSerializer) Marshal(v any) ([]byte, error) {
	switch x := v.(type) {
	case *int:
		if x != nil {
			return strconv.AppendInt(nil, int64(*x), 10), nil
		}
	case int:
		return strconv.AppendInt(nil, int64(x), 10), nil
	case *int64:
		if x != nil {
			return strconv.AppendInt(nil, *x, 10), nil
		}
	case int64:
		return strconv.AppendInt(nil, x, 10), nil
	case *bool:
		if x != nil {
			return strconv.AppendBool(nil, *x), nil
		}
	case bool:
		return strconv.AppendBool(nil, x), nil
	case *string:
		if x != nil && plainJSON(*x) {
			return appendPlain(make([]byte, 0, len(*x)+2), *x), nil
		}
	case string:
		if plainJSON(x) {
			return appendPlain(make([]byte, 0, len(x)+2), x), nil
		}
	case *[]string:
		if x != nil {
			if b, ok := marshalStrings(*x); ok {
				return b, nil
			}
		}
	case []string:
		if b, ok := marshalStrings(x); ok {
			return b, nil
		}
	}
	return json.Marshal(v)
}

func (jsonSerializer) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

// plainJSON reports whether encoding/json writes s as itself between
// quotes: printable ASCII without the characters it escapes.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c > 0x7e, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

func appendPlain(b []byte, s string) []byte {
	b = append(b, '"')
	b = append(b, s...)
	return append(b, '"')
}

// marshalStrings encodes ss as encoding/json does, if every string is
// plain.
func marshalStrings(ss []string) ([]byte, bool) {
	if ss == nil {
		return []byte("null"), true
	}
	n := 2
	for _, s := range ss {
		if !plainJSON(s) {
			return nil, false
		}
		n += len(s) + 3
	}
	b := make([]byte, 0, n)
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendPlain(b, s)
	}
	return append(b, ']'), true
}

// CheckType reports a type encoding/json cannot round-trip: functions,
// channels, complex numbers, unsafe pointers, and maps whose keys are not
// strings, integers or encoding.TextMarshalers. Unexported fields and fields
// tagged `json:"-"` are skipped, as encoding/json skips them; types that
// implement json.Marshaler and json.Unmarshaler are trusted.
func (jsonSerializer) CheckType(t reflect.Type) error {
	return checkJSON(t, t.String(), map[reflect.Type]bool{})
}

var (
	jsonMarshaler   = reflect.TypeFor[json.Marshaler]()
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textMarshaler   = reflect.TypeFor[encoding.TextMarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func custom(t reflect.Type, m, u reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return (t.Implements(m) || pt.Implements(m)) && (t.Implements(u) || pt.Implements(u))
}

func checkJSON(t reflect.Type, path string, seen map[reflect.Type]bool) error {
	if seen[t] {
		return nil
	}
	seen[t] = true
	if custom(t, jsonMarshaler, jsonUnmarshaler) || custom(t, textMarshaler, textUnmarshaler) {
		return nil
	}
	switch t.Kind() {
	case reflect.Func, reflect.Chan, reflect.Complex64, reflect.Complex128, reflect.UnsafePointer:
		return fmt.Errorf("checkpoint: %s is a %s, which JSON cannot encode; tag the field `json:\"-\"` or give it a json.Marshaler and json.Unmarshaler", path, t.Kind())
	case reflect.Interface:
		if t.NumMethod() > 0 {
			return fmt.Errorf("checkpoint: %s is the interface %s, which JSON cannot decode into; use a concrete type or give the containing type a json.Unmarshaler", path, t)
		}
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return checkJSON(t.Elem(), path+"[]", seen)
	case reflect.Map:
		k := t.Key()
		switch k.Kind() {
		case reflect.String, reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
			reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		default:
			if !custom(k, textMarshaler, textUnmarshaler) {
				return fmt.Errorf("checkpoint: %s has map keys of type %s, which JSON cannot encode; use string or integer keys, or keys that implement encoding.TextMarshaler and TextUnmarshaler", path, k)
			}
		}
		return checkJSON(t.Elem(), path+"[key]", seen)
	case reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			if !f.IsExported() && !f.Anonymous {
				continue
			}
			if f.Tag.Get("json") == "-" {
				continue
			}
			if err := checkJSON(f.Type, path+"."+f.Name, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

// CheckType reports whether s can encode and decode values of type t. It
// asks s when s implements TypeChecker; otherwise it encodes t's zero value
// and decodes the result into a new t.
func CheckType(s Serializer, t reflect.Type) error {
	if tc, ok := s.(TypeChecker); ok {
		return tc.CheckType(t)
	}
	data, err := s.Marshal(reflect.Zero(t).Interface())
	if err != nil {
		return fmt.Errorf("checkpoint: cannot encode %s: %w", t, err)
	}
	if err := s.Unmarshal(data, reflect.New(t).Interface()); err != nil {
		return fmt.Errorf("checkpoint: cannot decode %s: %w", t, err)
	}
	return nil
}

// Encode encodes v with s, saying which type failed.
func Encode[T any](s Serializer, v T) ([]byte, error) {
	data, err := s.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: encode %s: %w", reflect.TypeFor[T](), err)
	}
	return data, nil
}

// Decode decodes data with s into a new value of type T. The result is
// always a T: the stored bytes cannot choose another type.
func Decode[T any](s Serializer, data []byte) (T, error) {
	var v T
	if err := s.Unmarshal(data, &v); err != nil {
		return v, fmt.Errorf("checkpoint: decode %s: %w", reflect.TypeFor[T](), err)
	}
	return v, nil
}
