package chain

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNextAndResolve(t *testing.T) {
	blobs := map[Key]Blob{}
	put := func(parent Refs, versions map[string]uint64, seq int64, pieces map[string]Blob) Refs {
		t.Helper()
		var ps []Piece
		for ch, b := range pieces {
			ps = append(ps, Piece{Channel: ch, Delta: b.Kind == Delta})
		}
		refs, err := Next(parent, versions, ps, seq)
		if err != nil {
			t.Fatal(err)
		}
		for ch, b := range pieces {
			b.Base = parent.Base(ch, b.Kind == Delta)
			blobs[Key{Channel: ch, Writer: seq}] = b
		}
		return refs
	}
	r1 := put(nil, map[string]uint64{"m": 1, "p": 1}, 1, map[string]Blob{"m": {Kind: Delta, Data: []byte("a")}, "p": {Kind: Full, Data: []byte("P")}})
	r2 := put(r1, map[string]uint64{"m": 2, "p": 1}, 2, map[string]Blob{"m": {Kind: Delta, Data: []byte("b")}})
	r3 := put(r2, map[string]uint64{"m": 3, "p": 1}, 3, map[string]Blob{"m": {Kind: Full, Data: []byte("ABC")}})
	r4 := put(r3, map[string]uint64{"m": 4, "p": 1}, 4, map[string]Blob{"m": {Kind: Delta, Data: []byte("d")}})
	fork := put(r1, map[string]uint64{"m": 2, "p": 1}, 5, map[string]Blob{"m": {Kind: Delta, Data: []byte("x")}})

	type value struct {
		Base   string
		Deltas []string
	}
	resolve := func(refs Refs) map[string]value {
		out := map[string]value{}
		err := Resolve(refs, func(k Key) (Blob, bool) { b, ok := blobs[k]; return b, ok }, func(ch string, base []byte, deltas [][]byte) {
			v := value{Base: string(base)}
			for _, d := range deltas {
				v.Deltas = append(v.Deltas, string(d))
			}
			out[ch] = v
		})
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	tests := []struct {
		name string
		refs Refs
		want map[string]value
	}{
		{"deltas on empty", r2, map[string]value{"m": {Deltas: []string{"a", "b"}}, "p": {Base: "P"}}},
		{"full", r3, map[string]value{"m": {Base: "ABC"}, "p": {Base: "P"}}},
		{"delta on full", r4, map[string]value{"m": {Base: "ABC", Deltas: []string{"d"}}, "p": {Base: "P"}}},
		{"fork with the same version", fork, map[string]value{"m": {Deltas: []string{"a", "x"}}, "p": {Base: "P"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, resolve(tc.refs)); diff != "" {
				t.Errorf("mismatch (-want +got):\n%s", diff)
			}
		})
	}

	// Keeping r4 and the fork: the full at 3 ends r4's chain, so the deltas
	// at 1 and 2 are needed only by the fork (1) or nobody (2).
	live := Live([]Refs{r4, fork}, func(k Key) (int64, bool) { b, ok := blobs[k]; return b.Base, ok })
	want := map[Key]bool{{"m", 4}: true, {"m", 3}: true, {"p", 1}: true, {"m", 5}: true, {"m", 1}: true}
	if diff := cmp.Diff(want, live); diff != "" {
		t.Errorf("Live mismatch (-want +got):\n%s", diff)
	}

	raw, err := Encode(r4)
	if err != nil {
		t.Fatal(err)
	}
	back, err := Decode(raw)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(r4, back); diff != "" {
		t.Errorf("Encode/Decode mismatch (-want +got):\n%s", diff)
	}
	delete(blobs, Key{"m", 3})
	if err := Resolve(r4, func(k Key) (Blob, bool) { b, ok := blobs[k]; return b, ok }, func(string, []byte, [][]byte) {}); err == nil {
		t.Error("Resolve with a missing blob: no error")
	}
}

// TestManyChannels checks Next and Lookup on states with few and many
// channels (the small and large code paths).
func TestManyChannels(t *testing.T) {
	for _, n := range []int{1, 3, 8, 9, 12, 13, 40} {
		versions := map[string]uint64{}
		var pieces []Piece
		for i := range n {
			ch := fmt.Sprintf("ch%02d", (i*7)%n)
			versions[ch] = 1
			pieces = append(pieces, Piece{Channel: ch})
		}
		refs, err := Next(nil, versions, pieces, 1)
		if err != nil {
			t.Fatalf("%d channels: %v", n, err)
		}
		if !slices.IsSortedFunc(refs, func(a, b Entry) int { return strings.Compare(a.Channel, b.Channel) }) || len(refs) != n {
			t.Fatalf("%d channels: refs %v not sorted or incomplete", n, refs)
		}
		for ch := range versions {
			if r, ok := refs.Lookup(ch); !ok || r.Writer != 1 {
				t.Errorf("%d channels: Lookup(%q) = %v, %v", n, ch, r, ok)
			}
		}
		if _, ok := refs.Lookup("missing"); ok {
			t.Errorf("%d channels: Lookup(missing) found something", n)
		}
	}
}
