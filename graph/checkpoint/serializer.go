package checkpoint

import (
	"encoding"
	"encoding/json"
	"fmt"
	"reflect"
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

func (jsonSerializer) Marshal(v any) ([]byte, error)      { return json.Marshal(v) }
func (jsonSerializer) Unmarshal(data []byte, v any) error { return json.Unmarshal(data, v) }

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
