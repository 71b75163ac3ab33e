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
const MaxJSONDepth = 256

// checkDepth refuses a body b (valid UTF-8; its JSON not yet checked)
// that nests deeper than MaxJSONDepth, naming the top-level field where
// it does. It reads b once, without decoding it.
func checkDepth(b []byte) error {
	depth := 0
	inString, escaped := false, false
	strStart, lastStr := 0, ""
	field := ""
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
					lastStr = string(b[strStart:i])
				}
			}
			continue
		}
		switch c {
		case '"':
			inString, strStart = true, i+1
		case ':':
			if depth == 1 {
				field = lastStr
			}
		case '{', '[':
			depth++
			if depth > MaxJSONDepth {
				name := "the body"
				if field != "" {
					q, _ := json.Marshal(clip(field))
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
