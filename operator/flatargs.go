package operator

import (
	"cmp"
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// flatArgs checks the arguments of a tool whose schema is flat: an object
// with additionalProperties false whose properties are each of one
// primitive type (integer, number, string or boolean) with no other
// constraint, some of them required; the schema of most argument structs.
// It accepts only calls that the schema accepts, without building the
// generic JSON tree the schema validator needs; a call it does not accept
// goes through the validator, whose messages say what is wrong.
type flatArgs struct {
	index    map[string]int // property name -> bit
	names    []string       // by bit: the property's name
	kinds    []byte         // by bit: 'i' integer, 'n' number, 's' string, 'b' boolean
	required uint64         // bits of the required properties
	// fields, by bit, says where each property's value goes in the
	// argument struct, so that fill decodes a call without
	// encoding/json; nil when the struct's fields do not map one to one
	// onto the properties as encoding/json would fill them (see
	// flatFields).
	fields []flatField
	// keys lists the properties in the order of their fields in the
	// argument struct, as encoding/json writes them and models mostly
	// do; set with fields (see orderedKeys).
	keys []flatKey
}

// flatKey is a property as fillOrdered expects it: its bit, and its key
// with the colon after it, as JSON without spaces writes it: "name":.
type flatKey struct {
	bit int
	key string
	// int64 says that the property's field is a 64-bit signed integer
	// (int on 64-bit platforms, int64), which storeInt64 decodes.
	int64 bool
}

// flatField is the field of the argument struct that a flat property
// decodes into.
type flatField struct {
	offset uintptr
	kind   reflect.Kind
	bits   uint8 // the size of a number kind, in bits
}

// flatAnnotations are the keywords of a property schema that constrain
// nothing.
var flatAnnotations = map[string]bool{"description": true, "title": true, "examples": true, "default": true,
	"deprecated": true, "readOnly": true, "writeOnly": true, "$comment": true}

// newFlatArgs returns the flat check of doc, a tool's argument schema, or
// nil if doc is not flat.
func newFlatArgs(doc map[string]any) *flatArgs {
	for k := range doc {
		switch k {
		case "type", "properties", "required", "additionalProperties", "description", "title", "$comment":
		default:
			return nil
		}
	}
	if doc["type"] != "object" || doc["additionalProperties"] != false {
		return nil
	}
	props, ok := doc["properties"].(map[string]any)
	if !ok || len(props) > 64 {
		return nil
	}
	f := &flatArgs{index: make(map[string]int, len(props))}
	for name, p := range props {
		ps, ok := p.(map[string]any)
		if !ok {
			return nil
		}
		var kind byte
		for k, v := range ps {
			if k == "type" {
				switch v {
				case "integer":
					kind = 'i'
				case "number":
					kind = 'n'
				case "string":
					kind = 's'
				case "boolean":
					kind = 'b'
				default:
					return nil
				}
			} else if !flatAnnotations[k] {
				return nil
			}
		}
		if kind == 0 {
			return nil
		}
		f.index[name] = len(f.kinds)
		f.names = append(f.names, name)
		f.kinds = append(f.kinds, kind)
	}
	if req, ok := doc["required"]; ok {
		list, ok := req.([]any)
		if !ok {
			return nil
		}
		for _, r := range list {
			name, ok := r.(string)
			if !ok {
				return nil
			}
			i, ok := f.index[name]
			if !ok {
				return nil // required but not a property: never satisfiable here
			}
			f.required |= 1 << i
		}
	}
	return f
}

// accepts reports whether raw, trimmed of spaces, is a JSON object whose
// keys are all properties, written without escapes, each with a value of
// its property's type (an integer written without fraction or exponent),
// and that holds every required property. It reads only the top level and
// the first byte of each value; JSON that is not well formed is left to
// the decoder, which rejects it.
func (f *flatArgs) accepts(raw []byte) bool { return f.scan(raw, nil) }

// isSpace reports whether c is JSON white space. Most bytes are above
// ' ', which one comparison tells.
func isSpace(c byte) bool { return c <= ' ' && (c == ' ' || c == '\t' || c == '\n' || c == '\r') }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}

// flatFields returns, by bit of f, the fields of st that encoding/json
// fills from f's properties, or nil when fill cannot stand in for
// encoding/json: a struct that decodes itself (json.Unmarshaler,
// encoding.TextUnmarshaler, on st or *st), an embedded field (whose
// fields json promotes), two fields of one name, a property without a
// field, a field whose type decodes itself or is json.Number, is not of
// its property's kind, or has the ",string" option, or a name in a tag
// that json might read otherwise.
func flatFields(st reflect.Type, f *flatArgs) []flatField {
	if st.Kind() != reflect.Struct || decodesItself(st) {
		return nil
	}
	byName := make(map[string]int, st.NumField())
	for i := range st.NumField() {
		sf := st.Field(i)
		if sf.Anonymous {
			return nil
		}
		if !sf.IsExported() {
			continue
		}
		tag := sf.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		for _, o := range strings.Split(opts, ",") {
			if o == "string" {
				return nil
			}
		}
		if name == "" {
			name = sf.Name
		} else if !plainName(name) {
			return nil
		}
		if _, dup := byName[name]; dup {
			return nil
		}
		byName[name] = i
	}
	fields := make([]flatField, len(f.kinds))
	for name, bit := range f.index {
		i, ok := byName[name]
		if !ok {
			return nil
		}
		sf := st.Field(i)
		if !flatKindFits(f.kinds[bit], sf.Type) {
			return nil
		}
		fields[bit] = flatField{offset: sf.Offset, kind: sf.Type.Kind(), bits: uint8(sf.Type.Size() * 8)}
	}
	return fields
}

// orderedKeys returns the properties of f, whose fields are set, in the
// order of their fields in the argument struct, or nil when f has no
// fields or no property, or a name that JSON writes with an escape.
func orderedKeys(f *flatArgs) []flatKey {
	if f.fields == nil || len(f.names) == 0 {
		return nil
	}
	keys := make([]flatKey, len(f.names))
	for bit, name := range f.names {
		if strings.ContainsFunc(name, func(r rune) bool { return r == '"' || r == '\\' || r < 0x20 }) {
			return nil
		}
		fd := f.fields[bit]
		keys[bit] = flatKey{bit: bit, key: `"` + name + `":`, int64: (fd.kind == reflect.Int || fd.kind == reflect.Int64) && fd.bits == 64}
	}
	slices.SortFunc(keys, func(a, b flatKey) int { return cmp.Compare(f.fields[a.bit].offset, f.fields[b.bit].offset) })
	return keys
}

// plainName reports whether a json tag's name is made of letters, digits,
// '_' and '-' only: such a name is the key encoding/json matches.
func plainName(name string) bool {
	for _, r := range name {
		if !(r == '_' || r == '-' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return false
		}
	}
	return true
}

var (
	jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()
	jsonNumber      = reflect.TypeFor[json.Number]()
)

// decodesItself reports whether encoding/json decodes a value of type t
// with t's own method, UnmarshalJSON or UnmarshalText, declared on t or
// *t.
func decodesItself(t reflect.Type) bool {
	pt := reflect.PointerTo(t)
	return pt.Implements(jsonUnmarshaler) || pt.Implements(textUnmarshaler)
}

// flatKindFits reports whether fill decodes a value of property kind k
// into a field of type t as encoding/json does. A json.Number never
// fits: encoding/json accepts only a string that is a valid number.
func flatKindFits(k byte, t reflect.Type) bool {
	if decodesItself(t) || t == jsonNumber {
		return false
	}
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return k == 'i'
	case reflect.Float32, reflect.Float64:
		return k == 'n'
	case reflect.String:
		return k == 's'
	case reflect.Bool:
		return k == 'b'
	}
	return false
}

// fill decodes raw, trimmed of spaces, into the struct at dst as
// encoding/json would, and reports whether it did. It does only when
// accepts would accept raw and every value is one that fill decodes
// exactly as encoding/json does: a string without escapes, of valid
// UTF-8; a number written as JSON writes numbers, in range of its field
// (an integer field's without fraction or exponent). When it reports
// false, dst may be partly written: the caller zeroes it and goes the
// way of encoding/json, whose errors say what is wrong. f.fields must not
// be nil.
func (f *flatArgs) fill(raw []byte, dst unsafe.Pointer) bool {
	// A call written as encoding/json writes the struct is decoded
	// without looking keys up; any other goes through scan, which
	// writes every field fillOrdered may have written.
	return f.fillOrdered(raw, dst) || f.scan(raw, dst)
}

// fillOrdered decodes raw into the struct at dst, as fill does, when raw
// holds every property in the order of f.keys, without spaces: the
// object encoding/json writes, and the one models mostly write. It reports
// false for any other raw (having written the fields of the properties
// raw starts with, with the values scan writes for them), and for a
// value that fill does not decode.
func (f *flatArgs) fillOrdered(raw []byte, dst unsafe.Pointer) bool {
	if len(f.keys) == 0 || len(raw) < 2 || raw[0] != '{' {
		return false
	}
	i := 1
	for k := range f.keys {
		key := f.keys[k].key
		if len(raw)-i <= len(key) || string(raw[i:i+len(key)]) != key {
			return false
		}
		i += len(key)
		fd := &f.fields[f.keys[k].bit]
		p := unsafe.Add(dst, fd.offset)
		j, ok := i, false
		if f.keys[k].int64 {
			j, ok = storeInt64(raw, i, p)
		}
		if !ok {
			j, ok = fd.store(raw, i, p)
		}
		if i = j; !ok || i >= len(raw) {
			return false
		}
		// A comma after each value but the last, which the object's
		// end follows.
		if end := k == len(f.keys)-1; end && raw[i] != '}' || !end && raw[i] != ',' {
			return false
		}
		i++
	}
	return i == len(raw)
}

// scan reads raw's object: with dst nil it checks what accepts does,
// otherwise it also decodes each value into the struct at dst (fill).
func (f *flatArgs) scan(raw []byte, dst unsafe.Pointer) bool {
	i := skipSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return false
	}
	i = skipSpace(raw, i+1)
	var seen uint64
	if i < len(raw) && raw[i] == '}' {
		i++
	} else {
		for {
			if i >= len(raw) || raw[i] != '"' {
				return false
			}
			j := i + 1
			for j < len(raw) && raw[j] != '"' {
				if raw[j] == '\\' || raw[j] < 0x20 {
					return false
				}
				j++
			}
			if j >= len(raw) {
				return false
			}
			bit, ok := f.bit(raw[i+1 : j])
			if !ok {
				return false
			}
			i = skipSpace(raw, j+1)
			if i >= len(raw) || raw[i] != ':' {
				return false
			}
			i = skipSpace(raw, i+1)
			if i >= len(raw) {
				return false
			}
			if dst == nil {
				i, ok = f.skipValue(raw, i, bit)
			} else {
				i, ok = f.fields[bit].store(raw, i, unsafe.Add(dst, f.fields[bit].offset))
			}
			if !ok {
				return false
			}
			seen |= 1 << (bit & 63) // bit < 64: the mask spares the check of a wider shift
			i = skipSpace(raw, i)
			if i >= len(raw) {
				return false
			}
			if raw[i] == ',' {
				i = skipSpace(raw, i+1)
				continue
			}
			if raw[i] != '}' {
				return false
			}
			i++
			break
		}
	}
	return skipSpace(raw, i) == len(raw) && seen&f.required == f.required
}

// skipValue checks that the value at raw[i:] starts as a value of the
// property bit's type (an integer without fraction or exponent), and
// returns the index after it.
func (f *flatArgs) skipValue(raw []byte, i, bit int) (int, bool) {
	c := raw[i]
	switch f.kinds[bit] {
	case 'i', 'n':
		if c != '-' && (c < '0' || c > '9') {
			return i, false
		}
	case 's':
		if c != '"' {
			return i, false
		}
	case 'b':
		if c != 't' && c != 'f' {
			return i, false
		}
	}
	if c == '"' {
		j := i + 1
		for j < len(raw) && raw[j] != '"' {
			if raw[j] == '\\' {
				j++
			}
			j++
		}
		if j >= len(raw) {
			return i, false
		}
		i = j + 1
	} else {
		for i < len(raw) && raw[i] != ',' && raw[i] != '}' && !isSpace(raw[i]) {
			if f.kinds[bit] == 'i' && (raw[i] == '.' || raw[i] == 'e' || raw[i] == 'E') {
				return i, false
			}
			i++
		}
	}
	return i, true
}

// scanNames is the number of properties up to which bit finds a
// property by comparing names, which costs less than hashing the name.
const scanNames = 8

// bit returns the bit of the property named name.
func (f *flatArgs) bit(name []byte) (int, bool) {
	if len(f.names) > scanNames {
		bit, ok := f.index[string(name)]
		return bit, ok
	}
	for bit, n := range f.names {
		if sameName(n, name) {
			return bit, true
		}
	}
	return 0, false
}

// sameName reports whether name is n. A short name, the usual one, is
// compared here byte by byte, which costs less than the call to compare
// memory.
func sameName(n string, name []byte) bool {
	if len(n) != len(name) {
		return false
	}
	if len(n) > 16 {
		return n == string(name)
	}
	for i := range len(name) {
		if n[i] != name[i] {
			return false
		}
	}
	return true
}

// store decodes the value at raw[i:] into the field at p, and returns the
// index after the value; false when the value is not one fill decodes
// exactly as encoding/json does.
func (fd *flatField) store(raw []byte, i int, p unsafe.Pointer) (int, bool) {
	switch fd.kind {
	case reflect.String:
		if raw[i] != '"' {
			return i, false
		}
		j := i + 1
		for j < len(raw) && raw[j] != '"' {
			if raw[j] == '\\' || raw[j] < 0x20 {
				return i, false // escapes: encoding/json unquotes them
			}
			j++
		}
		if j >= len(raw) || !utf8.Valid(raw[i+1:j]) {
			return i, false // invalid UTF-8: encoding/json replaces it
		}
		*(*string)(p) = string(raw[i+1 : j])
		return j + 1, true
	case reflect.Bool:
		var v bool
		switch {
		case hasWord(raw[i:], "true"):
			v, i = true, i+4
		case hasWord(raw[i:], "false"):
			i += 5
		default:
			return i, false
		}
		*(*bool)(p) = v
		return i, true
	case reflect.Int, reflect.Int64, reflect.Int32, reflect.Int16, reflect.Int8:
		if j, ok, sure := fd.storeInt(raw, i, p); sure {
			return j, ok
		}
	}
	start := i
	neg := raw[i] == '-'
	if neg {
		i++
	}
	digits := i
	switch {
	case i < len(raw) && raw[i] == '0':
		i++
	case i < len(raw) && raw[i] >= '1' && raw[i] <= '9':
		for i < len(raw) && raw[i] >= '0' && raw[i] <= '9' {
			i++
		}
	default:
		return i, false
	}
	end := i
	whole := true
	if i < len(raw) && raw[i] == '.' {
		whole = false
		i++
		if i = skipDigits(raw, i); i < 0 {
			return start, false
		}
	}
	if i < len(raw) && (raw[i] == 'e' || raw[i] == 'E') {
		whole = false
		i++
		if i < len(raw) && (raw[i] == '+' || raw[i] == '-') {
			i++
		}
		if i = skipDigits(raw, i); i < 0 {
			return start, false
		}
	}
	if i < len(raw) && !isSpace(raw[i]) && raw[i] != ',' && raw[i] != '}' {
		return start, false
	}
	switch fd.kind {
	case reflect.Float32, reflect.Float64:
		// The bytes are not modified while the string is in use.
		v, err := strconv.ParseFloat(unsafe.String(&raw[start], i-start), int(fd.bits))
		if err != nil {
			return start, false
		}
		if fd.kind == reflect.Float32 {
			*(*float32)(p) = float32(v)
		} else {
			*(*float64)(p) = v
		}
		return i, true
	}
	if !whole {
		return start, false // encoding/json refuses a fraction or exponent for an integer field
	}
	var u uint64
	for _, c := range raw[digits:end] {
		d := uint64(c - '0')
		if u > (^uint64(0)-d)/10 {
			return start, false
		}
		u = u*10 + d
	}
	switch fd.kind {
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		if neg || (fd.bits < 64 && u >= 1<<fd.bits) {
			return start, false
		}
		switch fd.bits {
		case 8:
			*(*uint8)(p) = uint8(u)
		case 16:
			*(*uint16)(p) = uint16(u)
		case 32:
			*(*uint32)(p) = uint32(u)
		default:
			*(*uint64)(p) = u
		}
		return i, true
	}
	if !fd.putInt(p, u, neg) {
		return start, false
	}
	return i, true
}

// storeInt64 decodes the value at raw[i:] into the int64 at p, as store
// does, when it is an integer of at most 18 digits (in range whatever
// they are) followed by ',' or '}', and returns the index after it. For
// any other value it returns false, having written nothing: store then
// decodes it, or says why not.
func storeInt64(raw []byte, i int, p unsafe.Pointer) (int, bool) {
	j := i
	neg := raw[j] == '-'
	if neg {
		j++
	}
	digits := j
	var u uint64
	for j < len(raw) && j-digits < 18 {
		d := raw[j] - '0'
		if d > 9 {
			break
		}
		u = u*10 + uint64(d)
		j++
	}
	if n := j - digits; n == 0 || n > 1 && raw[digits] == '0' || j >= len(raw) || raw[j] != ',' && raw[j] != '}' {
		return i, false
	}
	v := int64(u)
	if neg {
		v = -v
	}
	*(*int64)(p) = v
	return j, true
}

// maxSureDigits is the number of decimal digits that any uint64 holds.
const maxSureDigits = 19

// storeInt decodes the value at raw[i:] into the signed integer field at
// p, as store does, for the usual integer: at most maxSureDigits digits.
// sure is false for a value it leaves to store (more digits), having
// written nothing; otherwise it returns what store would.
func (fd *flatField) storeInt(raw []byte, i int, p unsafe.Pointer) (end int, ok, sure bool) {
	start := i
	neg := raw[i] == '-'
	if neg {
		i++
	}
	digits := i
	var u uint64
	for i < len(raw) {
		d := raw[i] - '0'
		if d > 9 {
			break
		}
		u = u*10 + uint64(d)
		i++
	}
	switch n := i - digits; {
	case n > maxSureDigits:
		return start, false, false
	case n == 0 || n > 1 && raw[digits] == '0':
		return start, false, true // not a JSON number
	}
	// A fraction or an exponent, which encoding/json refuses for an
	// integer field, or anything else but the value's end.
	if i < len(raw) && !isSpace(raw[i]) && raw[i] != ',' && raw[i] != '}' {
		return start, false, true
	}
	if !fd.putInt(p, u, neg) {
		return start, false, true
	}
	return i, true, true
}

// putInt writes the integer of magnitude u, negative when neg, to the
// signed integer field at p, and reports whether it is in the field's
// range; it writes nothing when it is not.
func (fd *flatField) putInt(p unsafe.Pointer, u uint64, neg bool) bool {
	limit := uint64(1) << (fd.bits - 1) // the magnitude of the most negative value
	if (neg && u > limit) || (!neg && u >= limit) {
		return false
	}
	v := int64(u)
	if neg {
		v = -v
	}
	switch fd.bits {
	case 8:
		*(*int8)(p) = int8(v)
	case 16:
		*(*int16)(p) = int16(v)
	case 32:
		*(*int32)(p) = int32(v)
	default:
		*(*int64)(p) = v
	}
	return true
}

// skipDigits returns the index after the digits at b[i:], or -1 when
// there is none.
func skipDigits(b []byte, i int) int {
	j := i
	for j < len(b) && b[j] >= '0' && b[j] <= '9' {
		j++
	}
	if j == i {
		return -1
	}
	return j
}

// hasWord reports whether b starts with the literal w followed by the end
// of a JSON value.
func hasWord(b []byte, w string) bool {
	if len(b) < len(w) || string(b[:len(w)]) != w {
		return false
	}
	return len(b) == len(w) || isSpace(b[len(w)]) || b[len(w)] == ',' || b[len(w)] == '}'
}
