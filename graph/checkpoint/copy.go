package checkpoint

import (
	"context"
	"fmt"
	"slices"
)

// CopyThread copies every checkpoint of thread from, with its channel
// values and pending writes, to thread to, which must have no checkpoint
// yet: the copy keeps the checkpoints' ids, parents, metadata and order,
// so to's history and state are from's, and the two threads then go on
// apart. It returns how many checkpoints it copied (0 for a thread
// without checkpoints).
//
// A Saver that is a [Copier] copies the stored form as it is, in one
// atomic operation. Any other Saver is read and written through the Saver
// methods alone, oldest checkpoint first, one Get and one Put each. A
// checkpoint whose parent is no longer stored (a Prune deleted it) is then
// copied without a parent; its channels must each be stored as one piece
// (a full value, or one delta on the empty value), or the copy fails with
// an error wrapping ErrInvalid and to is left with the checkpoints copied
// so far (delete it with DeleteThread). A write to from during the copy
// may or may not be copied.
func CopyThread(ctx context.Context, s Saver, from, to string) (int, error) {
	if err := validateCopy(from, to); err != nil {
		return 0, err
	}
	if c, ok := s.(Copier); ok {
		return c.CopyThread(ctx, from, to)
	}
	var cps []Checkpoint
	for cp, err := range All(ctx, s, from, ListOptions{}) {
		if err != nil {
			return 0, err
		}
		cps = append(cps, cp)
	}
	slices.Reverse(cps)                      // oldest first
	copied := map[string]map[string]uint64{} // id -> versions, of the checkpoints copied
	latest := ""
	for i, cp := range cps {
		snap, err := s.Get(ctx, from, cp.ID)
		if err != nil {
			return i, err
		}
		parent, ok := copied[snap.ParentID]
		out := snap.Checkpoint
		out.ThreadID = to
		if !ok {
			out.ParentID = ""
		}
		var blobs []Blob
		for ch, v := range snap.Versions {
			if ok && parent[ch] == v {
				continue // shared with the parent
			}
			c := snap.Channels[ch]
			switch {
			case len(c.Deltas) > 0 && (ok || c.Base == nil && len(c.Deltas) == 1):
				blobs = append(blobs, Blob{Channel: ch, Kind: Delta, Data: c.Deltas[len(c.Deltas)-1]})
			case len(c.Deltas) == 0:
				blobs = append(blobs, Blob{Channel: ch, Kind: Full, Data: c.Base})
			default:
				return i, invalid("CopyThread: checkpoint %s of thread %s lost its parent %s (pruned), and channel %q is stored in %d pieces, which one copied checkpoint cannot hold; copy the thread before pruning it, or use a Saver that is a checkpoint.Copier",
					cp.ID, from, snap.ParentID, ch, len(c.Deltas)+1)
			}
		}
		if err := s.Put(ctx, latest, &out, blobs, slices.Clone(snap.Writes)); err != nil {
			return i, fmt.Errorf("checkpoint: CopyThread: saving checkpoint %s to thread %s: %w", cp.ID, to, err)
		}
		copied[out.ID], latest = snap.Versions, out.ID
	}
	return len(cps), nil
}
