package operator

// flatArgs checks the arguments of a tool whose schema is flat: an object
// with additionalProperties false whose properties are each of one
// primitive type (integer, number, string or boolean) with no other
// constraint, some of them required; the schema of most argument structs.
// It accepts only calls that the schema accepts, without building the
// generic JSON tree the schema validator needs; a call it does not accept
// goes through the validator, whose messages say what is wrong.
type flatArgs struct {
	index    map[string]int // property name -> bit
	kinds    []byte         // by bit: 'i' integer, 'n' number, 's' string, 'b' boolean
	required uint64         // bits of the required properties
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
func (f *flatArgs) accepts(raw []byte) bool {
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
			bit, ok := f.index[string(raw[i+1:j])]
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
			c := raw[i]
			switch f.kinds[bit] {
			case 'i', 'n':
				if c != '-' && (c < '0' || c > '9') {
					return false
				}
			case 's':
				if c != '"' {
					return false
				}
			case 'b':
				if c != 't' && c != 'f' {
					return false
				}
			}
			seen |= 1 << bit
			if c == '"' {
				j = i + 1
				for j < len(raw) && raw[j] != '"' {
					if raw[j] == '\\' {
						j++
					}
					j++
				}
				if j >= len(raw) {
					return false
				}
				i = j + 1
			} else {
				for i < len(raw) && raw[i] != ',' && raw[i] != '}' && !isSpace(raw[i]) {
					if f.kinds[bit] == 'i' && (raw[i] == '.' || raw[i] == 'e' || raw[i] == 'E') {
						return false
					}
					i++
				}
			}
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

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

func skipSpace(b []byte, i int) int {
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	return i
}
