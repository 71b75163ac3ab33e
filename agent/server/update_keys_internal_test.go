package server

import (
	"encoding/json"
	"reflect"
	"testing"
)

// twoNotes has two fields whose names are equal regardless of case.
type twoNotes struct {
	Note     string
	NOTE     string
	Messages []string
}

// An update names the key a Codec's Values wrote regardless of case only
// when that key is the one such key and is not another field's own key:
// with two keys folding alike, or the one key belonging to another field,
// which field it holds is unknown and the update leaves it out.
func TestEncodeUpdateFoldsOnlyAnUnambiguousKey(t *testing.T) {
	keys := jsonKeys(reflect.TypeFor[twoNotes]())
	cases := []struct {
		name   string
		fields []string
		full   string
		want   string
	}{
		{"untagged field written in lower case", []string{"Messages"}, `{"messages":["hi"],"NOTE":"b"}`, `{"messages":["hi"]}`},
		{"exact keys", []string{"Note", "NOTE"}, `{"Note":"a","NOTE":"b"}`, `{"NOTE":"b","Note":"a"}`},
		{"two keys folding alike", []string{"Note"}, `{"note":"a","NOTE":"b"}`, `{}`},
		{"the one key is another field's", []string{"Note"}, `{"NOTE":"b"}`, `{}`},
		{"the other field's own key is exact", []string{"NOTE"}, `{"note":"a","NOTE":"b"}`, `{"NOTE":"b"}`},
	}
	for _, tc := range cases {
		// Map order varies from call to call: an answer that depends
		// on it shows in some of the calls.
		for range 20 {
			got := encodeUpdate(tc.fields, json.RawMessage(tc.full), keys)
			if string(got) != tc.want {
				t.Errorf("%s: encodeUpdate(%q, %s) = %s, want %s", tc.name, tc.fields, tc.full, got, tc.want)
				break
			}
		}
	}
}
