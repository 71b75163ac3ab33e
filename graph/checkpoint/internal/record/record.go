// Package record encodes the parts of a checkpoint that the SQL backends
// store as JSON columns.
package record

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/internal/chain"
)

// Corrupt returns err as a *checkpoint.CorruptError of the checkpoint when
// it describes damaged data (a *chain.Corruption), and unchanged otherwise.
func Corrupt(threadID, checkpointID string, err error) error {
	var c *chain.Corruption
	if errors.As(err, &c) {
		return &checkpoint.CorruptError{ThreadID: threadID, CheckpointID: checkpointID, Err: err}
	}
	return err
}

// Damaged returns a *checkpoint.CorruptError of the checkpoint saying that
// what (a column) does not decode.
func Damaged(threadID, checkpointID, what string, err error) error {
	return &checkpoint.CorruptError{ThreadID: threadID, CheckpointID: checkpointID,
		Err: &chain.Corruption{Reason: fmt.Sprintf("the %s do not decode: %v", what, err)}}
}

type body struct {
	Ran        []string    `json:"ran,omitempty"`
	Next       []task      `json:"next,omitempty"`
	Interrupts []interrupt `json:"interrupts,omitempty"`
}

type task struct {
	ID    string `json:"id"`
	Node  string `json:"node"`
	Input []byte `json:"input,omitempty"`
}

type interrupt struct {
	ID      string `json:"id"`
	Node    string `json:"node"`
	TaskID  string `json:"task,omitempty"`
	Payload []byte `json:"payload,omitempty"`
}

// EncodeBody encodes the nodes that ran, the next tasks and the interrupts
// of cp.
func EncodeBody(cp *checkpoint.Checkpoint) ([]byte, error) {
	b := body{Ran: cp.Ran}
	for _, t := range cp.Next {
		b.Next = append(b.Next, task(t))
	}
	for _, i := range cp.Interrupts {
		b.Interrupts = append(b.Interrupts, interrupt(i))
	}
	data, err := json.Marshal(b)
	if err != nil {
		return nil, fmt.Errorf("checkpoint: encode checkpoint %q: %w", cp.ID, err)
	}
	return data, nil
}

// DecodeBody fills the nodes that ran, the next tasks and the interrupts of
// cp from data. Data that does not decode is reported as a
// *checkpoint.CorruptError of cp.
func DecodeBody(data []byte, cp *checkpoint.Checkpoint) error {
	var b body
	if err := json.Unmarshal(data, &b); err != nil {
		return Damaged(cp.ThreadID, cp.ID, "nodes, tasks and interrupts", err)
	}
	cp.Ran = b.Ran
	cp.Next, cp.Interrupts = nil, nil
	for _, t := range b.Next {
		cp.Next = append(cp.Next, checkpoint.Task(t))
	}
	for _, i := range b.Interrupts {
		cp.Interrupts = append(cp.Interrupts, checkpoint.Interrupt(i))
	}
	return nil
}

// Put is what a backend's Put stores of a checkpoint besides its blobs
// and writes, encoded.
type Put struct {
	// ID is the checkpoint's ID: Checkpoint.ID, or a new one when empty.
	ID string
	// Body is the nodes that ran, the next tasks and the interrupts
	// ([EncodeBody]).
	Body []byte
	// Metadata is the metadata ([EncodeMetadata]).
	Metadata []byte
	// Pieces are the blobs' channels, and whether each is a delta, for
	// [chain.Next].
	Pieces []chain.Piece
}

// EncodePut checks the arguments of a Put (checkpoint.ValidatePut) and
// returns what it stores of cp.
func EncodePut(expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) (Put, error) {
	if err := checkpoint.ValidatePut(expect, cp, blobs, writes); err != nil {
		return Put{}, err
	}
	body, err := EncodeBody(cp)
	if err != nil {
		return Put{}, err
	}
	md, err := EncodeMetadata(cp.Metadata)
	if err != nil {
		return Put{}, err
	}
	p := Put{ID: cp.ID, Body: body, Metadata: md, Pieces: make([]chain.Piece, len(blobs))}
	for i, b := range blobs {
		p.Pieces[i] = chain.Piece{Channel: b.Channel, Delta: b.Kind == checkpoint.Delta}
	}
	if p.ID == "" {
		p.ID = checkpoint.NewID()
	}
	return p, nil
}

// EncodeMetadata encodes metadata as a JSON object ({} when empty).
func EncodeMetadata(md map[string]string) ([]byte, error) {
	if len(md) == 0 {
		return []byte("{}"), nil
	}
	return json.Marshal(md)
}

// DecodeMetadata decodes the output of EncodeMetadata, stored with
// checkpoint checkpointID of the thread; an empty object gives nil. Data
// that does not decode is reported as a *checkpoint.CorruptError.
func DecodeMetadata(data []byte, threadID, checkpointID string) (map[string]string, error) {
	var md map[string]string
	if err := json.Unmarshal(data, &md); err != nil {
		return nil, Damaged(threadID, checkpointID, "metadata", err)
	}
	if len(md) == 0 {
		return nil, nil
	}
	return md, nil
}

// Snapshot returns the snapshot of cp, of sequence number seq in thread
// threadID, with writes and the channels refs names, their delta chains
// resolved from blobs (chain.Resolve). A chain that does not resolve is a
// *checkpoint.CorruptError of cp.
func Snapshot(ctx context.Context, threadID string, cp checkpoint.Checkpoint, seq int64, refs chain.Refs, blobs map[chain.Key]chain.Blob, writes []checkpoint.Write) (*checkpoint.Snapshot, error) {
	snap := &checkpoint.Snapshot{Checkpoint: cp, Channels: make(map[string]checkpoint.Channel, len(refs)), Writes: writes}
	err := chain.Resolve(ctx, seq, refs, func(k chain.Key) (chain.Blob, bool) {
		b, ok := blobs[k]
		return b, ok
	}, func(ch string, base []byte, deltas [][]byte) {
		snap.Channels[ch] = checkpoint.Channel{Base: base, Deltas: deltas}
	})
	if err != nil {
		return nil, Corrupt(threadID, cp.ID, err)
	}
	return snap, nil
}
