package server

import (
	"encoding/json"
	"net/http"
)

// MaxJSONDepth bounds how deep a request body's JSON nests (objects and
// arrays, the body itself counting as one level). What a client sends is
// kept in a store, or matched against what is (metadata, values, config,
// the store's items), and a store cannot always query what nests too
// deep: SQLite's JSON functions stop at 1000 levels, counted from the
// stored record's root, so that a thread whose metadata nested 999 levels
// would break every filtered search of its principal. A body that nests
// deeper is refused with 422 naming its top-level field.
//
// It bounds request bodies only: the values a graph's nodes write (a
// run's state, the store's items they put) are not checked and can nest
// deeper, with the same consequences for the store's queries.
const MaxJSONDepth = 256

// checkDepth refuses a body b (valid UTF-8; its JSON not yet checked)
// that nests deeper than MaxJSONDepth, naming the top-level field where
// it does. It reads b once, without decoding it.
func checkDepth(b []byte) error {
	depth := 0
	inString, escaped := false, false
	// The last top-level string and the field's name, as offsets into
	// b: a string is made only for the error.
	strStart, lastStart, lastEnd := 0, 0, 0
	fieldStart, fieldEnd := 0, 0
	for i, c := range b {
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
				if depth == 1 {
					lastStart, lastEnd = strStart, i
				}
			}
			continue
		}
		switch c {
		case '"':
			inString, strStart = true, i+1
		case ':':
			if depth == 1 {
				fieldStart, fieldEnd = lastStart, lastEnd
			}
		case '{', '[':
			depth++
			if depth > MaxJSONDepth {
				name := "the body"
				if fieldEnd > fieldStart {
					q, _ := json.Marshal(clip(string(b[fieldStart:fieldEnd])))
					name = string(q[1 : len(q)-1])
				}
				return errorf(http.StatusUnprocessableEntity, "%s: nests objects and arrays deeper than %d levels (MaxJSONDepth; at byte %d), more than the server's stores query alike; flatten it", name, MaxJSONDepth, i)
			}
		case '}', ']':
			depth--
		}
	}
	return nil
}
