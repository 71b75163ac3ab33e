package chain

import (
	"context"
	"errors"
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
		err := Resolve(context.Background(), 5, refs, func(k Key) (Blob, bool) { b, ok := blobs[k]; return b, ok }, func(ch string, base []byte, deltas [][]byte) {
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
	var c *Corruption
	if err := Resolve(context.Background(), 4, r4, func(k Key) (Blob, bool) { b, ok := blobs[k]; return b, ok }, func(string, []byte, [][]byte) {}); !errors.As(err, &c) {
		t.Errorf("Resolve with a missing blob: %v; want a *Corruption", err)
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

// TestResolveCorrupt checks that Resolve reports every kind of damaged
// chain as a *Corruption, after a number of look-ups bounded by the sound
// part of the chain, and that it stops when its context ends.
func TestResolveCorrupt(t *testing.T) {
	// A sound chain of "m": full at 1, deltas at 2, 3 and 4.
	sound := func() map[Key]Blob {
		return map[Key]Blob{
			{"m", 1}: {Kind: Full, Data: []byte("A")},
			{"m", 2}: {Kind: Delta, Base: 1, Data: []byte("b")},
			{"m", 3}: {Kind: Delta, Base: 2, Data: []byte("c")},
			{"m", 4}: {Kind: Delta, Base: 3, Data: []byte("d")},
		}
	}
	refs := Refs{{Channel: "m", Ref: Ref{Version: 4, Writer: 4}}}
	tests := []struct {
		name   string
		seq    int64
		refs   Refs
		damage func(map[Key]Blob)
		want   string
	}{
		{"cycle", 4, refs, func(b map[Key]Blob) { x := b[Key{"m", 2}]; x.Base = 4; b[Key{"m", 2}] = x }, "loops"},
		{"newer base", 4, refs, func(b map[Key]Blob) {
			x := b[Key{"m", 2}]
			x.Base = 9
			b[Key{"m", 2}] = x
			b[Key{"m", 9}] = Blob{Kind: Delta, Base: 2}
		}, "newer"},
		{"self-reference", 4, refs, func(b map[Key]Blob) { x := b[Key{"m", 3}]; x.Base = 3; b[Key{"m", 3}] = x }, "applies to itself"},
		{"negative base", 4, refs, func(b map[Key]Blob) { x := b[Key{"m", 3}]; x.Base = -1 << 63; b[Key{"m", 3}] = x }, "cannot exist"},
		{"unknown kind", 4, refs, func(b map[Key]Blob) { x := b[Key{"m", 3}]; x.Kind = 7; b[Key{"m", 3}] = x }, "unknown kind 7"},
		{"missing blob", 4, refs, func(b map[Key]Blob) { delete(b, Key{"m", 2}) }, "missing"},
		{"reference to a newer blob", 4, Refs{{Channel: "m", Ref: Ref{Version: 4, Writer: 1<<63 - 1}}}, func(map[Key]Blob) {}, "not at or before it"},
		{"reference below 1", 4, Refs{{Channel: "m", Ref: Ref{Version: 4, Writer: -1}}}, func(map[Key]Blob) {}, "not at or before it"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			blobs := sound()
			tc.damage(blobs)
			lookups := 0
			err := Resolve(context.Background(), tc.seq, tc.refs, func(k Key) (Blob, bool) {
				lookups++
				b, ok := blobs[k]
				return b, ok
			}, func(string, []byte, [][]byte) { t.Error("emitted a damaged channel") })
			var c *Corruption
			if !errors.As(err, &c) || c.Channel != "m" || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("got %v; want a *Corruption of channel m saying %q", err, tc.want)
			}
			if lookups > 2*len(blobs) {
				t.Errorf("%d look-ups for %d blobs", lookups, len(blobs))
			}
		})
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := Resolve(ctx, 4, refs, func(k Key) (Blob, bool) { b, ok := sound()[k]; return b, ok }, func(string, []byte, [][]byte) {}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: got %v; want context.Canceled", err)
	}
	// A long sound chain checks the context as it goes.
	long := map[Key]Blob{{"m", 1}: {Kind: Full}}
	const n = 5000
	for w := int64(2); w <= n; w++ {
		long[Key{"m", w}] = Blob{Kind: Delta, Base: w - 1}
	}
	ctx, cancel = context.WithCancel(context.Background())
	lookups := 0
	err := Resolve(ctx, n, Refs{{Channel: "m", Ref: Ref{Version: n, Writer: n}}}, func(k Key) (Blob, bool) {
		if lookups++; lookups == 10 {
			cancel()
		}
		b, ok := long[k]
		return b, ok
	}, func(string, []byte, [][]byte) {})
	if !errors.Is(err, context.Canceled) || lookups > ctxEvery+1 {
		t.Errorf("cancelled during a walk: got %v after %d look-ups; want context.Canceled within %d", err, lookups, ctxEvery+1)
	}
}
