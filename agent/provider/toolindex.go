package provider

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"io"
	"mime"
	"net/http"

	"github.com/agentgraph/agentgraph/agent/internal/lcmodel"
)

// OpenAI's protocol streams each tool call in pieces that name their call
// by "index", and lets the pieces of several calls interleave. langchaingo
// drops the index and adds a piece's arguments to the call before it, which
// corrupts interleaved calls. So an OpenAI model's HTTP transport writes
// each piece's index in its id (lcmodel.MarkToolCallID), which langchaingo
// passes on, and the model's lcmodel.Splitter assembles the calls by index.

// maxMarkedLine is the longest line of a stream (its newline included)
// the transport marks: langchaingo's reader refuses longer lines (bufio's
// default token size), so a longer line, and a line that marking would make
// longer, is passed on as it is.
const maxMarkedLine = bufio.MaxScanTokenSize

type indexTransport struct{ base http.RoundTripper }

// indexClient returns a copy of base (an empty client when nil) whose
// transport marks the tool-call pieces of streamed responses.
func indexClient(base *http.Client) *http.Client {
	c := &http.Client{}
	if base != nil {
		*c = *base //nolint:govet // copying the exported configuration is intended
	}
	c.Transport = indexTransport{base: cmp.Or[http.RoundTripper](c.Transport, http.DefaultTransport)}
	return c
}

func (t indexTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(r)
	if err != nil || resp.StatusCode != http.StatusOK || resp.Body == nil {
		return resp, err
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "application/json" {
		return resp, nil
	}
	resp.Body = &indexBody{body: resp.Body, src: newIndexReader(resp.Body)}
	return resp, nil
}

// newIndexReader returns the reader of an indexBody's lines.
func newIndexReader(body io.Reader) *bufio.Reader { return bufio.NewReaderSize(body, maxMarkedLine) }

// indexBody is a response body whose "data:" lines with tool-call pieces
// are rewritten with their indexes in their ids.
type indexBody struct {
	body io.ReadCloser
	src  *bufio.Reader
	out  []byte // what is left to read of the current line
	long bool   // within a line longer than maxMarkedLine
	err  error
}

func (b *indexBody) Read(p []byte) (int, error) {
	for len(b.out) == 0 {
		if b.err != nil {
			return 0, b.err
		}
		line, err := b.src.ReadSlice('\n')
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			b.long, err = true, nil
		case b.long:
			b.long = false
		default:
			line = markLine(line)
		}
		b.out, b.err = line, err
	}
	n := copy(p, b.out)
	b.out = b.out[n:]
	return n, nil
}

func (b *indexBody) Close() error { return b.body.Close() }

// markLine returns line with the index of each of its tool-call pieces in
// the piece's id, or line itself when it has none or the marked line would
// be over maxMarkedLine.
func markLine(line []byte) []byte {
	payload, ok := bytes.CutPrefix(line, []byte("data:"))
	if !ok || !bytes.Contains(payload, []byte(`"tool_calls"`)) {
		return line
	}
	var chunk map[string]json.RawMessage
	if json.Unmarshal(payload, &chunk) != nil {
		return line
	}
	var choices []map[string]json.RawMessage
	if json.Unmarshal(chunk["choices"], &choices) != nil {
		return line
	}
	marked := false
	for _, choice := range choices {
		var delta map[string]json.RawMessage
		if json.Unmarshal(choice["delta"], &delta) != nil {
			continue
		}
		var calls []map[string]json.RawMessage
		if json.Unmarshal(delta["tool_calls"], &calls) != nil {
			continue
		}
		for _, c := range calls {
			var index *int
			var id string
			if json.Unmarshal(c["index"], &index) != nil || index == nil {
				continue
			}
			if raw, ok := c["id"]; ok && json.Unmarshal(raw, &id) != nil {
				continue
			}
			c["id"], _ = marshal(lcmodel.MarkToolCallID(*index, id))
			marked = true
		}
		if !marked {
			continue
		}
		delta["tool_calls"], _ = marshal(calls)
		choice["delta"], _ = marshal(delta)
	}
	if !marked {
		return line
	}
	chunk["choices"], _ = marshal(choices)
	out, err := marshal(chunk)
	if err != nil || len("data: ")+len(out)+1 > maxMarkedLine {
		return line
	}
	return append(append([]byte("data: "), out...), '\n')
}

// marshal returns the JSON of v without escaping '<', '>' and '&' (which
// json.Marshal writes as six bytes each, also within a RawMessage), so a
// marked line is longer than its original only by the marks.
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
