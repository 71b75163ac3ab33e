package server

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/agentgraph/agentgraph/agent/model"
)

// stateField is a top-level member of a state's JSON object, as
// encoding/json decodes it.
type stateField struct {
	key string
	// messages says that the field is a model.Messages (or
	// []model.Message), which the default codec reads with
	// decodeMessages.
	messages bool
}

// unknownKeyError is the default codec's error for the input keys that
// name no field of the state, which encoding/json would drop, or no field
// a client may write ([WithInputFields]).
type unknownKeyError struct {
	keys    []string // sorted
	known   []string // the keys a client may write
	limited bool     // known is the list of WithInputFields
}

func (e *unknownKeyError) Error() string {
	if e.limited {
		return fmt.Sprintf("%s: not a field clients may write; write only %s", strings.Join(e.keys, ", "), strings.Join(e.known, ", "))
	}
	return fmt.Sprintf("%s: not a field of the state; its fields are %s", strings.Join(e.keys, ", "), strings.Join(e.known, ", "))
}

// messagesError is the default codec's error for a messages field that
// does not decode (decodeMessages's error) under its key.
type messagesError struct {
	key string
	err error
}

func (e *messagesError) Error() string { return pathError(e.key, e.err).Error() }

func (e *messagesError) Unwrap() error { return e.err }

// defaultInput returns the default Codec.Input of a state of type S:
// encoding/json, but a top-level key that names no field of S is refused
// (unknownKeyError) instead of dropped, and a top-level field of type
// model.Messages is read with decodeMessages, which takes the LangChain
// messages of the official SDKs as well as model.Message's own form. A
// state that is not a struct, or decodes itself (json.Unmarshaler), is
// decoded by encoding/json alone. fields, when not nil, is the list of
// WithInputFields: the keys a client may write, all of them fields of S.
func defaultInput[S any](fields []stateField) func(json.RawMessage) (S, error) {
	limited := fields != nil
	if !limited {
		fields = inputFields(reflect.TypeFor[S]())
	}
	return func(data json.RawMessage) (S, error) {
		var v S
		if fields == nil {
			return v, json.Unmarshal(data, &v)
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(data, &obj) != nil || obj == nil {
			return v, json.Unmarshal(data, &v) // its error names what is wrong
		}
		var unknown []string
		for k := range obj {
			if _, ok := findField(fields, k); !ok {
				unknown = append(unknown, k)
			}
		}
		if unknown != nil {
			slices.Sort(unknown)
			known := make([]string, len(fields))
			for i, f := range fields {
				known[i] = f.key
			}
			return v, &unknownKeyError{keys: unknown, known: known, limited: limited}
		}
		changed := false
		for k, raw := range obj {
			f, _ := findField(fields, k)
			if !f.messages {
				continue
			}
			ms, err := decodeMessages(raw)
			if err != nil {
				return v, &messagesError{key: k, err: err}
			}
			b, err := json.Marshal(ms)
			if err != nil {
				return v, &messagesError{key: k, err: err}
			}
			obj[k], changed = b, true
		}
		if changed {
			b, err := json.Marshal(obj)
			if err != nil {
				return v, err
			}
			data = b
		}
		return v, json.Unmarshal(data, &v)
	}
}

// limitFields returns the fields of S named by keys (WithInputFields's),
// or an error naming a key that names no field of S.
func limitFields[S any](graphID string, keys []string, customInput bool) ([]stateField, error) {
	if customInput {
		return nil, fmt.Errorf("server: graph %q has both WithInputFields and a Codec.Input (WithCodec), which decides alone which keys it takes; limit the keys in that Input, or drop it", graphID)
	}
	all := inputFields(reflect.TypeFor[S]())
	if all == nil {
		return nil, fmt.Errorf("server: graph %q has WithInputFields, but its state %v is not a struct decoded by encoding/json; limit the keys in a Codec.Input (WithCodec) instead", graphID, reflect.TypeFor[S]())
	}
	fields := []stateField{}
	for _, k := range keys {
		i := slices.IndexFunc(all, func(f stateField) bool { return f.key == k })
		if i < 0 {
			known := make([]string, len(all))
			for i, f := range all {
				known[i] = f.key
			}
			return nil, fmt.Errorf("server: graph %q: WithInputFields key %q names no field of the state; its fields are %s", graphID, k, strings.Join(known, ", "))
		}
		if !slices.ContainsFunc(fields, func(f stateField) bool { return f.key == k }) {
			fields = append(fields, all[i])
		}
	}
	slices.SortFunc(fields, func(a, b stateField) int { return strings.Compare(a.key, b.key) })
	return fields, nil
}

// findField finds the field an object key sets, as encoding/json matches
// them: its exact key, else one equal regardless of case.
func findField(fields []stateField, key string) (stateField, bool) {
	for _, f := range fields {
		if f.key == key {
			return f, true
		}
	}
	for _, f := range fields {
		if strings.EqualFold(f.key, key) {
			return f, true
		}
	}
	return stateField{}, false
}

var (
	messagesType = reflect.TypeFor[model.Messages]()
	messageSlice = reflect.TypeFor[[]model.Message]()
	unmarshaler  = reflect.TypeFor[json.Unmarshaler]()
)

// inputFields lists the members of the JSON object of a struct type t,
// with the fields of embedded structs promoted as encoding/json promotes
// them; nil when t is not a struct, or decodes itself.
func inputFields(t reflect.Type) []stateField {
	if t.Kind() != reflect.Struct || reflect.PointerTo(t).Implements(unmarshaler) {
		return nil
	}
	fields := []stateField{}
	seen := map[string]bool{}
	var walk func(t reflect.Type, depth int)
	walk = func(t reflect.Type, depth int) {
		for i := range t.NumField() {
			f := t.Field(i)
			tag, hasTag := f.Tag.Lookup("json")
			name, _, _ := strings.Cut(tag, ",")
			if name == "-" && tag == "-" {
				continue
			}
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if f.Anonymous && (name == "" || !hasTag) && ft.Kind() == reflect.Struct && depth < 16 {
				walk(ft, depth+1) // promoted fields (an unexported embedded struct's too)
				continue
			}
			if !f.IsExported() {
				continue
			}
			if name == "" {
				name = f.Name
			}
			if seen[name] {
				continue
			}
			seen[name] = true
			fields = append(fields, stateField{key: name, messages: f.Type == messagesType || f.Type == messageSlice})
		}
	}
	walk(t, 0)
	slices.SortStableFunc(fields, func(a, b stateField) int { return strings.Compare(a.key, b.key) })
	return fields
}
