// Package record encodes the parts of a checkpoint that the SQL backends
// store as JSON columns.
package record

import (
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
