package checkpoint_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

type point struct{ X, Y int }

func (p point) MarshalText() ([]byte, error) { return nil, nil }
func (p *point) UnmarshalText([]byte) error  { return nil }

type custom struct{ f func() }

func (custom) MarshalJSON() ([]byte, error) { return []byte(`1`), nil }
func (*custom) UnmarshalJSON([]byte) error  { return nil }

type node struct {
	Name     string
	Children []*node // recursive types are fine
}

func TestJSONCheckType(t *testing.T) {
	tests := []struct {
		name string
		v    any
		want string // "" for no error, else a fragment of the error
	}{
		{"plain struct", struct {
			Messages []string
			Count    int
			When     time.Time
			Tags     map[string]bool
			Any      any
		}{}, ""},
		{"recursive", node{}, ""},
		{"unexported and skipped fields", struct {
			f    func()
			Skip chan int `json:"-"`
		}{}, ""},
		{"text map keys", map[point]int{}, ""},
		{"int map keys", map[int64][]byte{}, ""},
		{"custom marshaler", struct{ C custom }{}, ""},
		{"func field", struct{ OnDone func() }{}, ".OnDone is a func"},
		{"chan in slice", struct{ Jobs []chan int }{}, ".Jobs[] is a chan"},
		{"complex", struct{ Z complex128 }{}, ".Z is a complex128"},
		{"struct map keys", struct{ M map[struct{ A int }]int }{}, "map keys"},
		{"interface with methods", struct{ E error }{}, ".E is the interface error"},
		{"nested pointer", struct{ P *struct{ F func() } }{}, ".P[].F is a func"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := checkpoint.CheckType(checkpoint.JSON, reflect.TypeOf(tc.v))
			switch {
			case tc.want == "" && err != nil:
				t.Errorf("CheckType: %v; want no error", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("CheckType: %v; want an error containing %q", err, tc.want)
			}
		})
	}
}

// roundTrip is a Serializer without CheckType: CheckType falls back to a
// round trip of the zero value.
type roundTrip struct{ checkpoint.Serializer }

func TestCheckTypeFallback(t *testing.T) {
	s := roundTrip{checkpoint.JSON}
	if err := checkpoint.CheckType(s, reflect.TypeFor[struct{ A []string }]()); err != nil {
		t.Errorf("CheckType: %v", err)
	}
	err := checkpoint.CheckType(s, reflect.TypeFor[struct{ F func() }]())
	if err == nil || !strings.Contains(err.Error(), "cannot encode") {
		t.Errorf("CheckType of a func field: %v; want a cannot-encode error", err)
	}
}

func TestEncodeDecode(t *testing.T) {
	type state struct {
		Messages []string
		N        int
	}
	in := state{Messages: []string{"a", "b"}, N: 2}
	data, err := checkpoint.Encode(checkpoint.JSON, in)
	if err != nil {
		t.Fatal(err)
	}
	out, err := checkpoint.Decode[state](checkpoint.JSON, data)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, out); diff != "" {
		t.Errorf("round trip mismatch (-want +got):\n%s", diff)
	}
	// Stored bytes cannot choose the type: a payload naming another type
	// still decodes into the caller's type, or fails.
	if _, err := checkpoint.Decode[state](checkpoint.JSON, []byte(`{"@type":"os/exec.Cmd","Path":"/bin/sh"}`)); err != nil {
		t.Errorf("unknown fields: %v", err)
	}
	_, err = checkpoint.Decode[state](checkpoint.JSON, []byte(`{"N":"x"}`))
	if err == nil || !strings.Contains(err.Error(), "decode checkpoint_test.state") {
		t.Errorf("bad payload: %v; want an error naming the type", err)
	}
	if _, err := checkpoint.Encode(checkpoint.JSON, func() {}); err == nil || !strings.Contains(err.Error(), "encode func()") {
		t.Errorf("Encode(func): %v; want an error naming the type", err)
	}
}

func TestChainStats(t *testing.T) {
	tests := []struct {
		name  string
		stats checkpoint.ChainStats
		want  bool
	}{
		{"empty", checkpoint.ChainStats{}, false},
		{"full only", checkpoint.ChainStats{FullBytes: 100}, false},
		{"deltas smaller than full", checkpoint.ChainStats{FullBytes: 100, DeltaBytes: 99, Deltas: 9}, false},
		{"deltas as big as full", checkpoint.ChainStats{FullBytes: 100, DeltaBytes: 100, Deltas: 10}, true},
		{"deltas on empty value", checkpoint.ChainStats{DeltaBytes: 1, Deltas: 1}, true},
		{"many small deltas", checkpoint.ChainStats{FullBytes: 1 << 20, DeltaBytes: 1<<20 - 1, Deltas: 100_000}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.stats.NeedsFull(); got != tc.want {
				t.Errorf("NeedsFull() = %v; want %v", got, tc.want)
			}
		})
	}
	c := checkpoint.Channel{Base: []byte("12345"), Deltas: [][]byte{[]byte("ab"), []byte("c")}}
	if diff := cmp.Diff(checkpoint.ChainStats{FullBytes: 5, DeltaBytes: 3, Deltas: 2}, c.Stats()); diff != "" {
		t.Errorf("Stats mismatch (-want +got):\n%s", diff)
	}
}

func TestConflictError(t *testing.T) {
	var err error = &checkpoint.ConflictError{ThreadID: "t", Expected: "a", Actual: "b"}
	if !errors.Is(err, checkpoint.ErrConflict) || errors.Is(err, checkpoint.ErrNotFound) {
		t.Errorf("errors.Is mismatch for %v", err)
	}
	for _, want := range []string{`"t"`, `"a"`, `"b"`, "retry"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%q does not contain %s", err, want)
		}
	}
	if got := checkpoint.Kind(7).String(); got != "Kind(7)" {
		t.Errorf("Kind(7).String() = %q", got)
	}
}

// TestJSONMarshalMatchesEncodingJSON checks that the JSON serializer's
// direct encodings give exactly the bytes encoding/json gives.
func TestJSONMarshalMatchesEncodingJSON(t *testing.T) {
	i, i64, yes, str := -42, int64(1)<<62, true, `plain text 123`
	var nilInt *int
	var nilStrings []string
	strs := []string{"a", "", "with space", "x"}
	tests := []any{
		0, 7, -1, i, &i, nilInt, int64(-5), &i64, false, yes, &yes,
		"", str, &str, "quote\"", `back\slash`, "<html>", "a&b", "tab\t", "nl\n", "é", "\x7f", "\u2028",
		[]string{}, nilStrings, strs, &strs, []string{"ok", "<no>"}, []string{"ünï"}, &nilStrings,
		map[string]int{"b": 1}, struct{ A int }{1},
	}
	for _, v := range tests {
		t.Run(fmt.Sprintf("%T %v", v, v), func(t *testing.T) {
			want, wantErr := json.Marshal(v)
			got, err := checkpoint.JSON.Marshal(v)
			if (err != nil) != (wantErr != nil) {
				t.Fatalf("err = %v; want %v", err, wantErr)
			}
			if string(got) != string(want) {
				t.Errorf("Marshal = %s; want %s", got, want)
			}
		})
	}
}
