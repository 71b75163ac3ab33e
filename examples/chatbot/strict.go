package chatbot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/agentgraph/agentgraph/memory/jsonnum"
)

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// maxQuoted bounds the client input an error message quotes.
const maxQuoted = 64

// maxDepth bounds how deeply a request body's arrays and objects nest:
// the depth encoding/json decodes, so that no body it would decode is
// refused here, while a body of nothing but "[" is refused at once,
// before its nesting costs memory or stack.
const maxDepth = 10000

// checkKeys checks JSON body data before it is decoded into a value of
// type t, for what encoding/json lets through silently: a key sent twice
// in one object (encoding/json keeps the last), a key of a struct spelled
// in another case than documented (encoding/json matches keys without
// regard to case), and a number that not every client and store holds
// alike ([jsonnum.Bad]: beyond a float64's range, rounded to zero, or
// too long). The error names the key by its path ("context.n") and quotes
// no more than maxQuoted bytes of the value. A body nested more than
// maxDepth levels deep is refused. Syntax errors are left to the decoder,
// which reports them.
func checkKeys(data []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	w := keyWalker{dec: dec}
	err := w.walk(t)
	if _, ok := err.(*RequestError); ok {
		return err
	}
	return nil
}

// keyWalker walks one JSON value for checkKeys. The path of the value
// it is at is held as segments, written out only for an error, so that
// memory grows with the depth, not with its square.
type keyWalker struct {
	dec  *json.Decoder
	path []pathSegment
}

// pathSegment is one step of a path: an object's key, or an array's
// index when key is not set.
type pathSegment struct {
	key   string
	isKey bool
	index int
}

// field writes out the path of the value the walker is at, as an error's
// field: "body" for the whole body, then keys joined by "." and indexes
// in brackets ("context.a[2].b"), clipped to maxQuoted bytes.
func (w *keyWalker) field() string {
	if len(w.path) == 0 {
		return "body"
	}
	var b strings.Builder
	for i, s := range w.path {
		if b.Len() > maxQuoted {
			break
		}
		switch {
		case !s.isKey:
			fmt.Fprintf(&b, "[%d]", s.index)
		case i > 0:
			b.WriteString(".")
			b.WriteString(clip(s.key, maxQuoted))
		default:
			b.WriteString(clip(s.key, maxQuoted))
		}
	}
	return clip(b.String(), maxQuoted)
}

// walk reads one JSON value from the walker's decoder, expected to
// decode into type t (nil when it is not known).
func (w *keyWalker) walk(t reflect.Type) error {
	tok, err := w.dec.Token()
	if err != nil {
		return err
	}
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t != nil && reflect.PointerTo(t).Implements(unmarshalerType) {
		t = nil // its own decoding decides its keys
	}
	switch tok := tok.(type) {
	case json.Delim:
		if len(w.path) >= maxDepth {
			return &RequestError{Field: "body", Reason: fmt.Sprintf("nests arrays and objects more than %d levels deep; send a flatter JSON value", maxDepth)}
		}
		if tok == '[' {
			var elem reflect.Type
			if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
				elem = t.Elem()
			}
			for i := 0; w.dec.More(); i++ {
				w.path = append(w.path, pathSegment{index: i})
				err := w.walk(elem)
				w.path = w.path[:len(w.path)-1]
				if err != nil {
					return err
				}
			}
			_, err := w.dec.Token()
			return err
		}
		var fields map[string]reflect.Type
		var elem reflect.Type
		if t != nil && t.Kind() == reflect.Struct {
			fields = map[string]reflect.Type{}
			jsonFields(t, fields)
		} else if t != nil && t.Kind() == reflect.Map {
			elem = t.Elem()
		}
		seen := map[string]bool{}
		for w.dec.More() {
			ktok, err := w.dec.Token()
			if err != nil {
				return err
			}
			k, _ := ktok.(string)
			w.path = append(w.path, pathSegment{key: k, isKey: true})
			err = w.member(k, seen, fields, elem)
			w.path = w.path[:len(w.path)-1]
			if err != nil {
				return err
			}
		}
		_, err := w.dec.Token()
		return err
	case json.Number:
		if t != nil && !numeric(t.Kind()) {
			return nil // the decoder says it is of the wrong type
		}
		if why, bad := jsonnum.Bad(string(tok)); bad {
			return &RequestError{Field: w.field(), Reason: fmt.Sprintf("the number %s %s; send a number a float64 holds, or the value as a string", clip(string(tok), maxQuoted), why)}
		}
	}
	return nil
}

// member checks the value of key k of an object whose keys so far are
// seen, whose struct's known fields are fields (nil when it is not a
// struct) and whose values are of type elem otherwise. The walker's path
// ends with k.
func (w *keyWalker) member(k string, seen map[string]bool, fields map[string]reflect.Type, elem reflect.Type) error {
	if seen[k] {
		return &RequestError{Field: w.field(), Reason: "is sent twice; send each key once"}
	}
	seen[k] = true
	vt := elem
	if fields != nil {
		ft, ok := fields[k]
		if !ok {
			return unknownKey(w.field(), k, fields)
		}
		vt = ft
	}
	return w.walk(vt)
}

// unknownKey is the error of key k, at path p, which the struct of known
// fields does not have, with the spelling to use when k differs from a
// known key only in case.
func unknownKey(p, k string, fields map[string]reflect.Type) error {
	for name := range fields {
		if strings.EqualFold(name, k) {
			return &RequestError{Field: p, Reason: fmt.Sprintf("is not a known field; keys are case-sensitive: write %q", name)}
		}
	}
	return &RequestError{Field: p, Reason: "is not a known field"}
}

// jsonFields adds the JSON keys of struct t to fields, with their types,
// as encoding/json names them (the fields of embedded structs without a
// key of their own are t's).
func jsonFields(t reflect.Type, fields map[string]reflect.Type) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		ft := f.Type
		if f.Anonymous && name == "" {
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				jsonFields(ft, fields)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields[name] = ft
	}
}

// numeric reports whether a value of kind k may hold a JSON number.
func numeric(k reflect.Kind) bool {
	switch k {
	case reflect.Interface, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return true
	}
	return false
}
