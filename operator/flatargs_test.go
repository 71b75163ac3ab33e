package operator

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"unsafe"
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
	for _, c := range kindCases {
		f.Add(c)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		checkFlat[flatPair](t, raw)
		checkFlat[flatMixed](t, raw)
		checkFlat[flatKinds](t, raw)
	})
}

type celsius int16

type flatKinds struct {
	I     int     `json:"i"`
	I8    int8    `json:"i8,omitempty"`
	I16   celsius `json:"i16,omitempty"`
	I32   int32   `json:"i32,omitempty"`
	I64   int64   `json:"i64,omitempty"`
	U     uint    `json:"u,omitempty"`
	U8    uint8   `json:"u8,omitempty"`
	U16   uint16  `json:"u16,omitempty"`
	U32   uint32  `json:"u32,omitempty"`
	U64   uint64  `json:"u64,omitempty"`
	F32   float32 `json:"f32,omitempty"`
	F64   float64 `json:"f64,omitempty"`
	S     string  `json:"s,omitempty"`
	B     bool    `json:"b,omitempty"`
	NoTag string  `json:",omitempty"`
	skip  int
}

var kindCases = []string{
	`{"i":1}`, `{"i":-9223372036854775808}`, `{"i":-9223372036854775809}`, `{"i":9223372036854775807}`,
	`{"i":9223372036854775808}`, `{"i":18446744073709551616}`, `{"i":1,"i8":-128,"i16":32767,"i32":-2147483648}`,
	`{"i":1,"i8":128}`, `{"i":1,"i8":-129}`, `{"i":1,"i16":-32769}`, `{"i":1,"i32":2147483648}`,
	`{"i":1,"u":18446744073709551615,"u8":255,"u16":65535,"u32":4294967295,"u64":1}`,
	`{"i":1,"u":18446744073709551616}`, `{"i":1,"u8":256}`, `{"i":1,"u16":65536}`, `{"i":1,"u32":4294967296}`,
	`{"i":1,"u":-0}`, `{"i":-0}`, `{"i":0}`, `{"i":00}`, `{"i":1.0}`, `{"i":1e0}`, `{"i":1E+2}`, `{"i":+1}`,
	`{"i":1,"f32":3.4028235e38}`, `{"i":1,"f32":3.5e38}`, `{"i":1,"f32":1e-50}`, `{"i":1,"f64":-0}`,
	`{"i":1,"f64":1.5e-3}`, `{"i":1,"f64":1.}`, `{"i":1,"f64":.5}`, `{"i":1,"f64":1e}`, `{"i":1,"f64":1e+}`,
	`{"i":1,"f64":-}`, `{"i":1,"f64":0x10}`, `{"i":1,"f64":1_0}`, `{"i":1,"f64":Infinity}`, `{"i":1,"f64":12}`,
	`{"i":1,"s":""}`, `{"i":1,"s":"héllo"}`, `{"i":1,"s":"a\"b"}`, `{"i":1,"s":"\u00e9"}`, "{\"i\":1,\"s\":\"\xff\"}",
	"{\"i\":1,\"s\":\"a\tb\"}", `{"i":1,"s":"a}`, `{"i":1,"b":true}`, `{"i":1,"b":false}`, `{"i":1,"b":truex}`,
	`{"i":1,"b":tru}`, `{"i":1,"b":null}`, `{"i":1,"NoTag":"x"}`, `{"i":1,"notag":"x"}`, `{"i":1,"skip":2}`,
	`{"i":1,"i":2}`, `{"i":1,"s":"x","s":5}`, `{"i":1}  `, "\n{\"i\":1}\t", `{"i":1}}`, `{"i":1,}`, `{"i" 1}`,
	`{"i":1 2}`, `{"i":12,"u8":7,"s":"b","b":true}`, `{"i":-}`, `{"i":-a}`, `{"i":01}`, `{"i":-01}`, `{"i":1x}`,
	`{"i":99999999999999999999}`, `{"i":-9999999999999999999}`, `{"i":1,"i64":-10000000000000000000}`,
	`{"i":1,"i8":-0}`, `{"i":1,"i32":2147483647 }`, `{"i":1,"i16":-32768}`,
	// Every property, in the struct's order (fillOrdered's way), and
	// near misses.
	kindsInOrder, strings.Replace(kindsInOrder, ",", ", ", 1), strings.TrimSuffix(kindsInOrder, "}"),
	kindsInOrder + " ", kindsInOrder + "x", strings.Replace(kindsInOrder, `"i8":-128`, `"i8":128`, 1),
	strings.Replace(kindsInOrder, `"i8":-128`, `"i8":-128,"i8":5`, 1), strings.Replace(kindsInOrder, `"x"}`, `"x","i":2}`, 1),
	strings.Replace(kindsInOrder, `"s":"héllo"`, `"s":"h\u00e9llo"`, 1), strings.Replace(kindsInOrder, `"b":true`, `"b":1`, 1),
	strings.Replace(kindsInOrder, `"i":1,`, ``, 1), strings.Replace(kindsInOrder, `"u":1,`, ``, 1),
}

// kindsInOrder is a flatKinds call holding every property in the order
// of its fields.
const kindsInOrder = `{"i":1,"i8":-128,"i16":32767,"i32":-2147483648,"i64":5,"u":1,"u8":255,"u16":65535,"u32":4294967295,` +
	`"u64":1,"f32":1.5,"f64":-0,"s":"héllo","b":true,"NoTag":"x"}`

// TestFlatArgsFillOrdered: a call holding every property in the order
// of the struct's fields, without spaces, is decoded without looking its
// keys up; a call in another order is decoded by the general fill.
func TestFlatArgsFillOrdered(t *testing.T) {
	s, err := newArgSchema(reflect.TypeFor[flatPair](), nil)
	if err != nil {
		t.Fatal(err)
	}
	f := s.fast
	if len(f.keys) != 2 || f.keys[0].key != `"a":` || f.keys[1].key != `"b":` {
		t.Fatalf("keys %+v, want a then b", f.keys)
	}
	var in flatPair
	if !f.fillOrdered([]byte(`{"a":2,"b":-3}`), unsafe.Pointer(&in)) || in != (flatPair{2, -3}) {
		t.Fatalf("in order: %+v", in)
	}
	for _, raw := range []string{`{"b":3,"a":2}`, `{"a":2, "b":3}`, `{"a":2}`, `{"a":2,"b":3} `, `{"a":2,"b":3,"b":4}`} {
		in = flatPair{}
		if f.fillOrdered([]byte(raw), unsafe.Pointer(&in)) {
			t.Errorf("%s: decoded in order", raw)
		}
	}
	in = flatPair{}
	if !f.fill([]byte(`{"b":3,"a":2}`), unsafe.Pointer(&in)) || in != (flatPair{2, 3}) {
		t.Fatalf("out of order: %+v", in)
	}
	var k flatKinds
	ks, err := newArgSchema(reflect.TypeFor[flatKinds](), nil)
	if err != nil {
		t.Fatal(err)
	}
	if !ks.fast.fillOrdered([]byte(kindsInOrder), unsafe.Pointer(&k)) || k.I8 != -128 || k.NoTag != "x" || k.S != "héllo" {
		t.Fatalf("every kind in order: %+v", k)
	}
}

// TestFlatArgsFill: argument types whose fields map onto their flat
// schema are decoded by fill, and decode to what encoding/json decodes,
// with the same messages, for every case.
func TestFlatArgsFill(t *testing.T) {
	for _, typ := range []reflect.Type{reflect.TypeFor[flatPair](), reflect.TypeFor[*flatPair](), reflect.TypeFor[flatKinds]()} {
		s, err := newArgSchema(typ, nil)
		if err != nil {
			t.Fatal(err)
		}
		if s.fast == nil || s.fast.fields == nil {
			t.Errorf("%s: no fill for the flat schema %s", typ, s.json)
		}
	}
	s, err := newArgSchema(reflect.TypeFor[flatKinds](), nil)
	if err != nil {
		t.Fatal(err)
	}
	filled := 0
	for _, raw := range append(kindCases, flatCases...) {
		checkFlat[flatKinds](t, raw)
		var in flatKinds
		if s.fast.fill([]byte(raw), unsafe.Pointer(&in)) {
			filled++
		}
	}
	if filled < 20 {
		t.Errorf("fill decoded %d of the cases; want most of the valid ones", filled)
	}
	for _, raw := range flatCases {
		checkFlat[flatPair](t, raw)
		checkFlat[*flatPair](t, raw)
	}
}

// TestFlatArgsFillAllocates: decoding a usual call allocates nothing but
// its strings (encoding/json allocated its decoder state and more).
func TestFlatArgsFillAllocates(t *testing.T) {
	s, err := newArgSchema(reflect.TypeFor[flatPair](), nil)
	if err != nil {
		t.Fatal(err)
	}
	var in flatPair
	raw := json.RawMessage(`{"a":2,"b":3}`)
	allocs := testing.AllocsPerRun(100, func() {
		in = flatPair{}
		if msg := s.decode(raw, &in); msg != "" {
			t.Fatal(msg)
		}
	})
	if allocs != 0 || in != (flatPair{2, 3}) {
		t.Errorf("decoding %s: %v allocations, %+v; want none, {A:2 B:3}", raw, allocs, in)
	}
}

type textField string

func (t *textField) UnmarshalText(b []byte) error { *t = textField("text:" + string(b)); return nil }

type jsonField int

func (j *jsonField) UnmarshalJSON(b []byte) error { *j = 7; return nil }

// defaulted sets a default before encoding/json decodes into it, the
// usual way to give an argument a default.
type defaulted struct {
	Q     string `json:"q"`
	Limit int    `json:"limit,omitempty"`
}

func (d *defaulted) UnmarshalJSON(b []byte) error {
	type plain defaulted
	p := plain{Limit: 10}
	if err := json.Unmarshal(b, &p); err != nil {
		return err
	}
	*d = defaulted(p)
	return nil
}

// textual decodes itself from a JSON string, so encoding/json refuses an
// object for it.
type textual struct {
	T string `json:"t"`
}

func (t *textual) UnmarshalText(b []byte) error { t.T = string(b); return nil }

// TestFlatArgsNoFill: types whose fields encoding/json fills otherwise
// than fill would are decoded by encoding/json, with the same results.
func TestFlatArgsNoFill(t *testing.T) {
	type embedded struct {
		flatPair
	}
	type text struct {
		T textField `json:"t"`
	}
	type custom struct {
		J jsonField `json:"j"`
	}
	type quoted struct {
		N int `json:"n,string"`
	}
	type mismatched struct {
		N float64 `json:"n" jsonschema:"type=integer"`
	}
	type dup struct {
		A int
		B int `json:"A"`
	}
	type number struct {
		N json.Number `json:"n"`
	}
	// decode decodes raw into a new typ with the flat check, which must
	// not fill it, and returns the message and the value.
	decode := func(typ reflect.Type, override string, raw string) (string, any) {
		t.Helper()
		s, err := newArgSchema(typ, json.RawMessage(override))
		if err != nil {
			t.Fatal(err)
		}
		if s.fast == nil {
			t.Fatalf("%s: no flat check for %s", typ, s.json)
		}
		if s.fast.fields != nil {
			t.Errorf("%s: fill would decode %s", typ, s.json)
		}
		got := reflect.New(typ)
		msg := s.decode(json.RawMessage(raw), got.Interface())
		return msg, got.Elem().Interface()
	}
	check := func(typ reflect.Type, override string, raw string, want any) {
		t.Helper()
		if msg, got := decode(typ, override, raw); msg != "" {
			t.Errorf("%s %s: %s", typ, raw, msg)
		} else if !reflect.DeepEqual(got, want) {
			t.Errorf("%s %s: decoded %+v, want %+v", typ, raw, got, want)
		}
	}
	refuse := func(typ reflect.Type, override string, raw string, want string) {
		t.Helper()
		if msg, got := decode(typ, override, raw); msg != want {
			t.Errorf("%s %s: message %q (decoded %+v), want %q", typ, raw, msg, got, want)
		}
	}
	flat := func(prop, typ string) string {
		return `{"type":"object","additionalProperties":false,"properties":{"` + prop + `":{"type":"` + typ + `"}}}`
	}
	check(reflect.TypeFor[embedded](), flat("a", "integer"), `{"a":2}`, embedded{flatPair{A: 2}})
	check(reflect.TypeFor[text](), flat("t", "string"), `{"t":"x"}`, text{T: "text:x"})
	check(reflect.TypeFor[custom](), flat("j", "integer"), `{"j":1}`, custom{J: 7})
	check(reflect.TypeFor[quoted](), flat("n", "string"), `{"n":"5"}`, quoted{N: 5})
	check(reflect.TypeFor[mismatched](), flat("n", "integer"), `{"n":5}`, mismatched{N: 5})
	check(reflect.TypeFor[dup](), flat("A", "integer"), `{"A":5}`, dup{B: 5})
	check(reflect.TypeFor[defaulted](), flat("q", "string"), `{"q":"x"}`, defaulted{Q: "x", Limit: 10})
	check(reflect.TypeFor[*defaulted](), flat("q", "string"), `{"q":"x"}`, &defaulted{Q: "x", Limit: 10})
	refuse(reflect.TypeFor[textual](), flat("t", "string"), `{"t":"x"}`, "- : got a JSON object, want *operator.textual")
	check(reflect.TypeFor[number](), flat("n", "string"), `{"n":"12.5"}`, number{N: "12.5"})
	refuse(reflect.TypeFor[number](), flat("n", "string"), `{"n":"abc"}`,
		`- json: invalid number literal, trying to unmarshal "\"abc\"" into Number`)
	// A property of the given schema that no field takes is refused as
	// encoding/json refuses an unknown field, however its key is written.
	refuse(reflect.TypeFor[flatPair](), flat("c", "integer"), `{"c":5}`, "- c: is not a known argument; remove it")
	refuse(reflect.TypeFor[flatPair](), flat("c", "integer"), `{"\u0063":5}`, "- c: is not a known argument; remove it")
	refuse(reflect.TypeFor[*flatPair](), flat("c", "integer"), `{"c":5}`, "- c: is not a known argument; remove it")
}

// TestStoreInt64: what storeInt64 decodes, store decodes alike; what it
// leaves, it leaves unwritten.
func TestStoreInt64(t *testing.T) {
	fd := flatField{kind: reflect.Int64, bits: 64}
	for _, v := range []string{"0", "-0", "7", "-7", "12", "01", "-01", "-", "", "a", "1.5", "1e3", "123456789012345678",
		"-123456789012345678", "1234567890123456789", "9223372036854775807", "-9223372036854775808", "9223372036854775808",
		"99999999999999999999", "5 ", "5x", "5]"} {
		for _, end := range []string{",", "}", ""} {
			raw := []byte(v + end)
			if len(raw) == 0 {
				continue
			}
			fast, slow := int64(-42), int64(-42)
			j, ok := storeInt64(raw, 0, unsafe.Pointer(&fast))
			if !ok {
				if fast != -42 || j != 0 {
					t.Errorf("%q: refused, but wrote %d or moved to %d", raw, fast, j)
				}
				continue
			}
			k, sok := fd.store(raw, 0, unsafe.Pointer(&slow))
			if !sok || k != j || slow != fast {
				t.Errorf("%q: storeInt64 %d to %d; store %v %d to %d", raw, fast, j, sok, slow, k)
			}
		}
	}
}
