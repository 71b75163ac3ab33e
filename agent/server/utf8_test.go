package server_test

import (
	"encoding/json"
	"strings"
	"testing"
)

// TestBodyNotUTF8Refused: a body that is not valid UTF-8, or whose JSON
// strings hold half of a surrogate pair, is refused with 422 saying where
// (encoding/json read both as U+FFFD, which was stored), and a body
// declared in another charset is refused with 415 (it was read as
// UTF-8), on every store; nothing is created. A pair, an escaped
// backslash before "u", and charset=utf-8 are accepted.
func TestBodyNotUTF8Refused(t *testing.T) {
	for name, config := range backendConfigs {
		t.Run(name, func(t *testing.T) {
			ts := newTestServer(t, config(t))
			for _, tc := range []struct {
				body, ctype string
				code        int
				want        string
			}{
				{`{"metadata":{"k":"a` + "\xff" + `b"}}`, "", 422, "not valid UTF-8 (at byte 19)"},
				{`{"metadata":{"k":"` + "\xed\xa0\x80" + `"}}`, "", 422, "not valid UTF-8"},
				{`{"metadata":{"k":"\ud800"}}`, "", 422, `\\ud800 (at byte 18)`},
				{`{"metadata":{"k":"\udc00x"}}`, "", 422, `\\udc00`},
				{`{"metadata":{"k":"\uD83D\u0041"}}`, "", 422, `\\uD83D`},
				{`{"metadata":{"k":"x\ud83d"}}`, "", 422, `\\ud83d`},
				{`{"metadata":{"k":"x"}}`, "application/json; charset=utf-16", 415, "UTF-8"},
				{`{"metadata":{"k":"x"}}`, "text/plain; charset=iso-8859-1", 415, "UTF-8"},
			} {
				h := map[string]string{}
				if tc.ctype != "" {
					h["Content-Type"] = tc.ctype
				}
				code, body := raw(t, "POST", ts.URL+"/threads", tc.body, h)
				if code != tc.code || !strings.Contains(body, tc.want) {
					t.Errorf("POST /threads %q (%s): %d %s; want %d with %s", tc.body, tc.ctype, code, body, tc.code, tc.want)
				}
			}
			if n := threadCount(t, ts.URL, nil); n != 0 {
				t.Errorf("%d threads after the refusals; want 0", n)
			}
			for _, tc := range []struct{ body, ctype, want string }{
				{`{"metadata":{"k":"\ud83d\ude00"}}`, "", "\U0001F600"},
				{`{"metadata":{"k":"\\ud800"}}`, "", `\ud800`},
				{`{"metadata":{"k":"é"}}`, "application/json; charset=UTF-8", "é"},
				{`{"metadata":{"k":"é"}}`, `application/json; charset="utf-8"`, "é"},
				{`{"metadata":{"k":"x"}}`, "application/json; charset=us-ascii", "x"},
				{`{"metadata":{"k":"x"}}`, "text/plain; charset=ASCII", "x"},
			} {
				h := map[string]string{}
				if tc.ctype != "" {
					h["Content-Type"] = tc.ctype
				}
				code, body := raw(t, "POST", ts.URL+"/threads", tc.body, h)
				var th struct {
					Metadata map[string]string `json:"metadata"`
				}
				if code != 200 || json.Unmarshal([]byte(body), &th) != nil || th.Metadata["k"] != tc.want {
					t.Errorf("POST /threads %q (%s): %d %s; want 200 with k = %q", tc.body, tc.ctype, code, body, tc.want)
				}
			}
		})
	}
}
