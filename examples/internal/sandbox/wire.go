package sandbox

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The host and a worker exchange frames over the worker's standard input
// and output: a 4-byte big-endian length, then a JSON message.
//
//	worker -> host: ready, once at start
//	host -> worker: run
//	worker -> host: call (a host function), answered by host -> worker: return
//	worker -> host: done, which ends the run

// Message types.
const (
	msgReady  = "ready"
	msgRun    = "run"
	msgCall   = "call"
	msgReturn = "return"
	msgDone   = "done"
)

// message is one frame.
type message struct {
	Type string `json:"t"`

	// run
	Src  string       `json:"src,omitempty"`
	Opts *wireOptions `json:"opts,omitempty"`

	// call: Name and Args, a JSON object; return: Str for a string, else
	// Value, JSON, or Err when the host function failed.
	Name  string          `json:"name,omitempty"`
	Args  json.RawMessage `json:"args,omitempty"`
	Str   *string         `json:"str,omitempty"`
	Value json.RawMessage `json:"value,omitempty"`
	Err   string          `json:"err,omitempty"`

	// done; Retire says the worker exits after it (its CPU time for life
	// is spent).
	Result *wireResult `json:"result,omitempty"`
	Error  *wireError  `json:"error,omitempty"`
	Retire bool        `json:"retire,omitempty"`
}

// wireOptions are the Options of one run as the worker needs them.
type wireOptions struct {
	Filename      string   `json:"filename"`
	MaxSteps      uint64   `json:"max_steps,omitempty"`
	Timeout       int64    `json:"timeout,omitempty"` // nanoseconds
	Modules       Module   `json:"modules,omitempty"`
	Funcs         []string `json:"funcs,omitempty"`
	MaxCalls      int      `json:"max_calls,omitempty"`
	Entry         string   `json:"entry,omitempty"`
	Render        Render   `json:"render,omitempty"`
	Globals       []string `json:"globals,omitempty"`
	MaxOutput     int      `json:"max_output,omitempty"`
	DiscardOutput bool     `json:"discard_output,omitempty"`
	LoadError     string   `json:"load_error"`
	// MaxResult bounds output and rendered values together, in bytes.
	MaxResult int `json:"max_result,omitempty"`
	// CPUSeconds is the CPU time the run may use.
	CPUSeconds int64 `json:"cpu_seconds,omitempty"`
	// MaxStack bounds the goroutine stack, in bytes.
	MaxStack int `json:"max_stack,omitempty"`
}

// wireResult is what a program produced, rendered.
type wireResult struct {
	Value     string            `json:"value,omitempty"`
	Globals   map[string]string `json:"globals,omitempty"`
	Output    string            `json:"output,omitempty"`
	Truncated bool              `json:"truncated,omitempty"`
	Steps     uint64            `json:"steps"`
}

// wireError is an Error without its Go error.
type wireError struct {
	Kind   Kind   `json:"kind"`
	Msg    string `json:"msg"`
	Func   string `json:"func,omitempty"`
	Output string `json:"output,omitempty"`
	Steps  uint64 `json:"steps"`
}

// errFrameTooLarge reports a frame longer than the reader accepts.
var errFrameTooLarge = errors.New("frame too large")

// writeFrame writes m as one frame.
func writeFrame(w io.Writer, m *message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	buf := make([]byte, 4, 4+len(b))
	binary.BigEndian.PutUint32(buf, uint32(len(b)))
	_, err = w.Write(append(buf, b...))
	return err
}

// readFrame reads one frame of at most maxLen bytes into m.
func readFrame(r io.Reader, maxLen int, m *message) error {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return err
	}
	n := binary.BigEndian.Uint32(hdr[:])
	if int64(n) > int64(maxLen) {
		return fmt.Errorf("%w: %d bytes, more than %d", errFrameTooLarge, n, maxLen)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return err
	}
	*m = message{}
	return json.Unmarshal(b, m)
}
