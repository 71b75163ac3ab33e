package chatbot

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"

	"github.com/agentgraph/agentgraph/internal/jsonnum"
)

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// maxQuoted bounds the client input an error message quotes.
const maxQuoted = 64

// checkKeys checks JSON body data before it is decoded into a value of
// type t, for what encoding/json lets through silently: a key sent twice
// in one object (encoding/json keeps the last), a key of a struct spelled
// in another case than documented (encoding/json matches keys without
// regard to case), and a number that not every client and store holds
// alike ([jsonnum.Bad]: beyond a float64's range, rounded to zero, or
// too long). The error names the key by its path ("context.n") and quotes
// no more than maxQuoted bytes of the value. Syntax errors are left to
// the decoder, which reports them.
func checkKeys(data []byte, t reflect.Type) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	err := walkKeys(dec, t, "")
	if _, ok := err.(*RequestError); ok {
		return err
	}
	return nil
}

// walkKeys reads one JSON value from dec, expected to decode into type t
// (nil when it is not known), whose path is path.
func walkKeys(dec *json.Decoder, t reflect.Type, path string) error {
	tok, err := dec.Token()
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
		if tok == '[' {
			var elem reflect.Type
			if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
				elem = t.Elem()
			}
			for i := 0; dec.More(); i++ {
				if err := walkKeys(dec, elem, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
			_, err := dec.Token()
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
		for dec.More() {
			ktok, err := dec.Token()
			if err != nil {
				return err
			}
			k, _ := ktok.(string)
			p := k
			if path != "" {
				p = path + "." + k
			}
			if seen[k] {
				return &RequestError{Field: clip(p, maxQuoted), Reason: "is sent twice; send each key once"}
			}
			seen[k] = true
			vt := elem
			if fields != nil {
				ft, ok := fields[k]
				if !ok {
					return unknownKey(clip(p, maxQuoted), k, fields)
				}
				vt = ft
			}
			if err := walkKeys(dec, vt, p); err != nil {
				return err
			}
		}
		_, err := dec.Token()
		return err
	case json.Number:
		if t != nil && !numeric(t.Kind()) {
			return nil // the decoder says it is of the wrong type
		}
		if why, bad := jsonnum.Bad(string(tok)); bad {
			field := path
			if field == "" {
				field = "body"
			}
			return &RequestError{Field: clip(field, maxQuoted), Reason: fmt.Sprintf("the number %s %s; send a number a float64 holds, or the value as a string", clip(string(tok), maxQuoted), why)}
		}
	}
	return nil
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
