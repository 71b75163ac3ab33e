// Package record encodes the parts of a checkpoint that the SQL backends
// store as JSON columns.
package record

import (
	"bytes"
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

// The body of a checkpoint record is a JSON object with the fields of body,
// each left out when empty. Every release so far wrote this shape, without a
// format version. "v" marks a breaking change: a release that changes the
// meaning of a field adds "v" with a version above 1, which DecodeBody
// refuses by name rather than reading the body as one without tasks. A
// compatible change (a new optional field) keeps the version: DecodeBody
// ignores fields it does not know, so that an earlier release still reads
// the body (after a rollback, say).
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

// bodyVersion is the format version of the bodies EncodeBody writes
// (without a "v" field) and the only one DecodeBody reads.
const bodyVersion = 1

// wireBody is what DecodeBody reads a body into, in one pass; "v" is read
// to refuse a newer format by name. Fields it does not have are ignored.
type wireBody struct {
	V          *int64          `json:"v"`
	Ran        []string        `json:"ran"`
	Next       []wireTask      `json:"next"`
	Interrupts []wireInterrupt `json:"interrupts"`
}

// wireTask and wireInterrupt read the fields that EncodeBody always writes
// as pointers, so that a missing or null one is seen.
type wireTask struct {
	ID    *string `json:"id"`
	Node  *string `json:"node"`
	Input []byte  `json:"input"`
}

type wireInterrupt struct {
	ID      *string `json:"id"`
	Node    *string `json:"node"`
	TaskID  string  `json:"task"`
	Payload []byte  `json:"payload"`
}

// nullLists reads, when a body holds a null, whether a list or a node name
// is null: json decodes those as absent and "".
type nullLists struct {
	Ran        []*string       `json:"ran"`
	Next       json.RawMessage `json:"next"`
	Interrupts json.RawMessage `json:"interrupts"`
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
// cp from data. Data that is not a JSON object, has a null list or node
// name, a task or interrupt without its ID or node, or a format version
// ("v") other than 1 (a missing "v" is 1) is reported as a *checkpoint.CorruptError of cp, as is data
// that does not decode. Reading such a body as best it could would turn a
// paused thread into a finished one. Fields EncodeBody does not write are
// ignored: a later release may add optional ones.
func DecodeBody(data []byte, cp *checkpoint.Checkpoint) error {
	if err := decodeBody(data, cp); err != nil {
		return Damaged(cp.ThreadID, cp.ID, "nodes, tasks and interrupts", err)
	}
	return nil
}

func decodeBody(data []byte, cp *checkpoint.Checkpoint) error {
	cp.Ran, cp.Next, cp.Interrupts = nil, nil, nil
	trimmed := bytes.TrimLeft(data, " \t\r\n")
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fmt.Errorf("the body is %s, not a JSON object", describe(trimmed))
	}
	var w wireBody
	err := json.Unmarshal(data, &w)
	// A newer format may not decode as this one: name the version rather
	// than the first field that does not.
	if w.V != nil && *w.V != bodyVersion {
		return fmt.Errorf("the body has format version %d and this release reads version %d: it was written by a newer release of agentgraph, which can read it", *w.V, bodyVersion)
	}
	if err != nil {
		return err
	}
	if bytes.Contains(data, []byte("null")) {
		if err := checkNulls(data); err != nil {
			return err
		}
	}
	cp.Ran = w.Ran
	if len(w.Next) > 0 {
		cp.Next = make([]checkpoint.Task, len(w.Next))
	}
	for i, t := range w.Next {
		if t.ID == nil || t.Node == nil {
			return fmt.Errorf("next[%d] has no %s", i, missing(t.ID, t.Node))
		}
		cp.Next[i] = checkpoint.Task{ID: *t.ID, Node: *t.Node, Input: t.Input}
	}
	if len(w.Interrupts) > 0 {
		cp.Interrupts = make([]checkpoint.Interrupt, len(w.Interrupts))
	}
	for i, in := range w.Interrupts {
		if in.ID == nil || in.Node == nil {
			return fmt.Errorf("interrupts[%d] has no %s", i, missing(in.ID, in.Node))
		}
		cp.Interrupts[i] = checkpoint.Interrupt{ID: *in.ID, Node: *in.Node, TaskID: in.TaskID, Payload: in.Payload}
	}
	return nil
}

// checkNulls refuses a body whose lists or node names are null, which
// json decodes as absent or "" and EncodeBody never writes. DecodeBody
// calls it only when the body holds "null" somewhere (in a string, most
// often), so that a sound body is read once.
func checkNulls(data []byte) error {
	var n nullLists
	if err := json.Unmarshal(data, &n); err != nil {
		return err
	}
	if string(n.Next) == "null" {
		return errors.New("next is null; a list was expected")
	}
	if string(n.Interrupts) == "null" {
		return errors.New("interrupts is null; a list was expected")
	}
	if n.Ran == nil && bytes.Contains(data, []byte(`"ran"`)) {
		// "ran" absent and "ran":null both leave it nil: look at the
		// raw field.
		var r struct {
			Ran json.RawMessage `json:"ran"`
		}
		if err := json.Unmarshal(data, &r); err == nil && string(r.Ran) == "null" {
			return errors.New("ran is null; a list was expected")
		}
	}
	for i, name := range n.Ran {
		if name == nil {
			return fmt.Errorf("ran[%d] is null; a node name was expected", i)
		}
	}
	return nil
}

// describe names the kind of JSON value data starts with, for an error.
func describe(data []byte) string {
	if len(data) == 0 {
		return "empty"
	}
	const most = 16
	if len(data) > most {
		return fmt.Sprintf("%q...", data[:most])
	}
	return fmt.Sprintf("%q", data)
}

// missing names which of a task's or interrupt's ID and node are missing.
func missing(id, node *string) string {
	switch {
	case id == nil && node == nil:
		return "id and node"
	case id == nil:
		return "id"
	}
	return "node"
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
