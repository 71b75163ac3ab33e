package operator

import (
	"encoding/json"
	"reflect"
	"testing"
)

type flatPair struct {
	A int `json:"a"`
	B int `json:"b"`
}

type flatMixed struct {
	N     float64  `json:"n"`
	S     string   `json:"s,omitempty" jsonschema:"description=a note"`
	OK    bool     `json:"ok"`
	P     *float64 `json:"p"`
	U     uint8    `json:"u,omitempty"`
	Small int      `json:"small,omitempty" validate:"omitempty,max=10"`
}

var flatCases = []string{
	``, `null`, `{}`, ` { "a" : 2 , "b" : 3 } `, `{"a":2,"b":3}`, `{"a":2}`, `{"a":2,"b":3,"c":4}`,
	`{"A":2,"b":3}`, `{"a":2.0,"b":3}`, `{"a":2.5,"b":3}`, `{"a":1e2,"b":3}`, `{"a":null,"b":3}`,
	`{"a":"2","b":3}`, `{"a":2,"b":3}x`, `{"a":2,"b":3`, `[1,2]`, `"a"`, `{"\u0061":2,"b":3}`,
	`{"a":2,"a":"x","b":3}`, `{"a":99999999999999999999,"b":3}`, `{"a":-0,"b":-7}`, `{"a":01,"b":3}`,
	`{"a":true,"b":3}`, `{"a":2,,"b":3}`, `{"a":2 "b":3}`, `{"a":-,"b":3}`,
	`{"n":1.5,"ok":true,"p":2}`, `{"n":1,"ok":false,"p":null}`, `{"n":1,"ok":"true","p":1}`,
	`{"n":1,"ok":true,"p":1,"s":"hi \"x\" }"}`, `{"n":1,"ok":true,"p":1,"s":"\ud800"}`,
	`{"n":1,"ok":true,"p":1,"u":300}`, `{"n":1,"ok":true,"p":1,"u":-1}`, `{"n":1,"ok":true,"p":1,"small":11}`,
	`{"n":1,"ok":true,"p":1,"s":"a` + "\n" + `"}`, `{"n":1e400,"ok":true,"p":1}`, `{"n":1,"ok":tru,"p":1}`,
}

// checkFlat asserts that the flat check decides raw as the schema
// validator does: the same message, the same decoded value.
func checkFlat[In any](t *testing.T, raw string) {
	t.Helper()
	s, err := newArgSchema(reflect.TypeFor[In](), nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.fast == nil {
		t.Fatalf("%T: the schema %s is flat, but no flat check was made", *new(In), s.json)
	}
	var fast, full In
	fmsg := s.decode(json.RawMessage(raw), &fast)
	slow := *s
	slow.fast = nil
	smsg := slow.decode(json.RawMessage(raw), &full)
	if fmsg != smsg || !reflect.DeepEqual(fast, full) {
		t.Errorf("%T %q: with the flat check %q %+v; with the validator only %q %+v", *new(In), raw, fmsg, fast, smsg, full)
	}
}

// TestFlatArgsAgreeWithValidator: for flat argument types, the fast check
// accepts and rejects exactly what the schema validator does, with the same
// messages and decoded values.
func TestFlatArgsAgreeWithValidator(t *testing.T) {
	for _, raw := range flatCases {
		checkFlat[flatPair](t, raw)
		checkFlat[*flatPair](t, raw)
		checkFlat[flatMixed](t, raw)
	}
}

// TestFlatArgsOnlyForFlatSchemas: schemas with constraints beyond types
// and required properties go through the validator.
func TestFlatArgsOnlyForFlatSchemas(t *testing.T) {
	type enum struct {
		Unit string `json:"unit" jsonschema:"enum=c,enum=f"`
	}
	type nested struct {
		P flatPair `json:"p"`
	}
	type list struct {
		X []int `json:"x"`
	}
	type bounded struct {
		N int `json:"n" jsonschema:"minimum=1"`
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[enum](), reflect.TypeFor[nested](), reflect.TypeFor[list](), reflect.TypeFor[bounded]()} {
		s, err := newArgSchema(typ, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.fast != nil {
			t.Errorf("%s: schema %s got a flat check", typ, s.json)
		}
	}
}

func FuzzFlatArgs(f *testing.F) {
	for _, c := range flatCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		checkFlat[flatPair](t, raw)
		checkFlat[flatMixed](t, raw)
	})
}
