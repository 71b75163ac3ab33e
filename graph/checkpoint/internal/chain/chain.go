// Package chain holds the storage model shared by the checkpoint backends:
// which blob holds each channel of a checkpoint, how a new checkpoint's
// references follow from its parent's, how a channel's delta chain is walked
// back to a whole value, and which blobs the kept checkpoints still need.
//
// A blob is identified by its channel and the sequence number of the
// checkpoint that wrote it (its writer). Every checkpoint records, per
// channel, the channel's version and the writer of the blob holding that
// version. An unchanged channel keeps its parent's reference, so its value is
// shared instead of stored again. A delta blob records the writer of the blob
// it applies to (its base), which makes forks safe: two branches that each
// write version 7 of a channel have different writers.
package chain

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// Kinds of stored blobs; the values match checkpoint.Kind.
const (
	Full  uint8 = 1
	Delta uint8 = 2
)

// Ref says where a checkpoint finds one channel.
type Ref struct {
	// Version is the channel's version at the checkpoint.
	Version uint64
	// Writer is the sequence number of the checkpoint whose blob holds the
	// channel at Version.
	Writer int64
}

// Entry is the reference of one channel.
type Entry struct {
	Channel string
	Ref
}

// Refs holds the references of a checkpoint's channels, sorted by channel
// name. A slice is cheaper to build than a map for the handful of channels a
// state has.
type Refs []Entry

// Lookup returns the reference of channel.
func (r Refs) Lookup(channel string) (Ref, bool) {
	if len(r) <= 8 { // a scan beats a binary search on the few channels of a state
		for _, e := range r {
			if e.Channel == channel {
				return e.Ref, true
			}
		}
		return Ref{}, false
	}
	i, ok := slices.BinarySearchFunc(r, channel, func(e Entry, ch string) int { return strings.Compare(e.Channel, ch) })
	if !ok {
		return Ref{}, false
	}
	return r[i].Ref, true
}

// Key identifies a blob within a thread.
type Key struct {
	Channel string
	Writer  int64
}

// Blob is a stored blob.
type Blob struct {
	Kind uint8
	// Base is the writer of the blob a delta applies to; 0 for a whole value
	// or for a delta on the channel's empty value.
	Base int64
	Data []byte
}

// Piece is one blob of a Put: its channel and whether it is a delta.
type Piece struct {
	Channel string
	Delta   bool
}

// Next computes the references of a new checkpoint with sequence number seq,
// made from parent (nil for the first checkpoint of a thread) by writing
// pieces, with versions as its channel versions. The base of a delta piece is
// the parent's writer of its channel (Base). The error explains an
// inconsistent request.
func Next(parent Refs, versions map[string]uint64, pieces []Piece, seq int64) (Refs, error) {
	return NextInto(make(Refs, 0, len(versions)), parent, versions, pieces, seq)
}

// NextInto is Next appending the references to dst, whose storage it reuses
// when it has room.
func NextInto(dst Refs, parent Refs, versions map[string]uint64, pieces []Piece, seq int64) (Refs, error) {
	refs := dst[:0]
	for ch, v := range versions {
		prev, had := parent.Lookup(ch)
		if written(pieces, ch) {
			if had && v <= prev.Version {
				return nil, fmt.Errorf("channel %q: version %d is not above the parent checkpoint's version %d; give a changed channel a higher version", ch, v, prev.Version)
			}
			refs = append(refs, Entry{Channel: ch, Ref: Ref{Version: v, Writer: seq}})
			continue
		}
		if !had {
			return nil, fmt.Errorf("channel %q: version %d has no blob and the parent checkpoint does not hold the channel; pass a Blob for every channel whose version changed", ch, v)
		}
		if prev.Version != v {
			return nil, fmt.Errorf("channel %q: version %d has no blob and the parent checkpoint holds version %d; pass a Blob for every channel whose version changed", ch, v, prev.Version)
		}
		refs = append(refs, Entry{Channel: ch, Ref: prev})
	}
	sortRefs(refs)
	return refs, nil
}

// sortRefs sorts refs by channel: by insertion for the few channels of a
// typical state, which spares the generic sort's overhead.
func sortRefs(refs Refs) {
	if len(refs) > 12 {
		slices.SortFunc(refs, func(a, b Entry) int { return strings.Compare(a.Channel, b.Channel) })
		return
	}
	for i := 1; i < len(refs); i++ {
		for j := i; j > 0 && refs[j].Channel < refs[j-1].Channel; j-- {
			refs[j], refs[j-1] = refs[j-1], refs[j]
		}
	}
}

func written(pieces []Piece, channel string) bool {
	for _, p := range pieces {
		if p.Channel == channel {
			return true
		}
	}
	return false
}

// Base returns the base to store with a blob on channel, given the parent's
// references: for a delta, the writer of the blob it applies to (0 when the
// parent does not hold the channel); for a whole value, 0.
func (r Refs) Base(channel string, delta bool) int64 {
	if !delta {
		return 0
	}
	ref, _ := r.Lookup(channel)
	return ref.Writer
}

// Corruption describes stored data that no Put could have written. The
// backends report it as a checkpoint.CorruptError naming the checkpoint.
type Corruption struct {
	// Channel is the channel whose data is damaged; "" when the damage is
	// not in one channel.
	Channel string
	// Reason says what is wrong.
	Reason string
}

func (e *Corruption) Error() string {
	if e.Channel == "" {
		return e.Reason
	}
	return fmt.Sprintf("channel %q: %s", e.Channel, e.Reason)
}

func corrupt(channel, format string, args ...any) error {
	return &Corruption{Channel: channel, Reason: fmt.Sprintf(format, args...)}
}

// ctxEvery is how many blobs Resolve walks between looks at its context.
const ctxEvery = 1024

// Resolve walks every channel of refs, the references of the checkpoint
// with sequence number seq, back to its latest whole value and calls emit
// with the channel's base (nil when its deltas apply to the empty value)
// and its deltas, oldest first. get looks a blob up.
//
// Every step of a walk goes to an older blob: a checkpoint refers only to
// blobs written by itself or before it, and a delta applies only to a blob
// written before it, so a walk takes at most seq steps and at most one step
// per stored blob of its channel, and cannot loop. Data that breaks these
// rules was not written by Put, and Resolve reports it as a *Corruption
// before following it: a reference to a blob newer than the checkpoint or
// numbered below 1, a blob of unknown kind, a delta that applies to itself,
// to a newer blob (which a loop of deltas must contain) or to a blob
// numbered below 1, and a missing blob. It returns ctx.Err() if ctx ends
// first.
func Resolve(ctx context.Context, seq int64, refs Refs, get func(Key) (Blob, bool), emit func(channel string, base []byte, deltas [][]byte)) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	walked := 0
	for _, e := range refs {
		ch, r := e.Channel, e.Ref
		if r.Writer < 1 || r.Writer > seq {
			return corrupt(ch, "the checkpoint (#%d) refers to the blob of checkpoint #%d, which is not at or before it", seq, r.Writer)
		}
		var (
			base   []byte
			deltas [][]byte
		)
		k := Key{Channel: ch, Writer: r.Writer}
		for {
			if walked++; walked%ctxEvery == 0 {
				if err := ctx.Err(); err != nil {
					return err
				}
			}
			b, ok := get(k)
			if !ok {
				return corrupt(ch, "the blob written by checkpoint #%d is missing from storage", k.Writer)
			}
			if b.Kind == Full {
				base = b.Data
				break
			}
			if b.Kind != Delta {
				return corrupt(ch, "the blob written by checkpoint #%d has unknown kind %d", k.Writer, b.Kind)
			}
			deltas = append(deltas, b.Data)
			if b.Base == 0 {
				break
			}
			if b.Base == k.Writer {
				return corrupt(ch, "the delta written by checkpoint #%d applies to itself", k.Writer)
			}
			if b.Base > k.Writer {
				if onChain(ch, r.Writer, b.Base, get) {
					return corrupt(ch, "the delta chain loops: the delta written by checkpoint #%d applies to the blob of checkpoint #%d, which leads back to it", k.Writer, b.Base)
				}
				return corrupt(ch, "the delta written by checkpoint #%d applies to the blob of checkpoint #%d, which is newer", k.Writer, b.Base)
			}
			if b.Base < 0 {
				return corrupt(ch, "the delta written by checkpoint #%d applies to the blob of checkpoint #%d, which cannot exist", k.Writer, b.Base)
			}
			k.Writer = b.Base
		}
		for i, j := 0, len(deltas)-1; i < j; i, j = i+1, j-1 {
			deltas[i], deltas[j] = deltas[j], deltas[i]
		}
		emit(ch, base, deltas)
	}
	return nil
}

// onChain reports whether the blob of writer is on the well-formed part of
// the chain of channel from start: the blobs Resolve walked, each older
// than the one before.
func onChain(channel string, start, writer int64, get func(Key) (Blob, bool)) bool {
	k := Key{Channel: channel, Writer: start}
	for {
		if k.Writer == writer {
			return true
		}
		b, ok := get(k)
		if !ok || b.Kind != Delta || b.Base <= 0 || b.Base >= k.Writer {
			return false
		}
		k.Writer = b.Base
	}
}

// Live returns the blobs the checkpoints with the given references need:
// the blobs they name and, transitively, the bases of delta blobs. base
// reports a blob's base writer (0 for none) and whether the blob exists.
func Live(kept []Refs, base func(Key) (int64, bool)) map[Key]bool {
	live := make(map[Key]bool)
	for _, refs := range kept {
		for _, e := range refs {
			k := Key{Channel: e.Channel, Writer: e.Writer}
			for !live[k] {
				live[k] = true
				b, ok := base(k)
				if !ok || b == 0 {
					break
				}
				k.Writer = b
			}
		}
	}
	return live
}

// Encode renders refs as compact JSON: {"channel":[version,writer]}.
func Encode(refs Refs) ([]byte, error) {
	b := make([]byte, 0, 16+24*len(refs))
	b = append(b, '{')
	for i, e := range refs {
		if i > 0 {
			b = append(b, ',')
		}
		name, err := json.Marshal(e.Channel)
		if err != nil {
			return nil, err
		}
		b = append(b, name...)
		b = append(b, ':', '[')
		b = strconv.AppendUint(b, e.Version, 10)
		b = append(b, ',')
		b = strconv.AppendInt(b, e.Writer, 10)
		b = append(b, ']')
	}
	return append(b, '}'), nil
}

// Decode parses the output of Encode. Data that does not parse is reported
// as a *Corruption.
func Decode(data []byte) (Refs, error) {
	var w map[string][2]uint64
	if err := json.Unmarshal(data, &w); err != nil {
		return nil, corrupt("", "the channel references do not decode: %v", err)
	}
	refs := make(Refs, 0, len(w))
	for ch, v := range w {
		if v[1] > math.MaxInt64 {
			return nil, corrupt(ch, "the reference names checkpoint #%d, beyond the largest checkpoint number", v[1])
		}
		refs = append(refs, Entry{Channel: ch, Ref: Ref{Version: v[0], Writer: int64(v[1])}})
	}
	slices.SortFunc(refs, func(a, b Entry) int { return strings.Compare(a.Channel, b.Channel) })
	return refs, nil
}

// Versions returns the channel versions of refs.
func (r Refs) Versions() map[string]uint64 {
	v := make(map[string]uint64, len(r))
	for _, e := range r {
		v[e.Channel] = e.Version
	}
	return v
}
