package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

// Names of the envelope fields in the JSON form. Payload fields must not use
// them.
const (
	fieldType      = "type"
	fieldRequestID = "request_id"
	fieldSeq       = "seq"
	fieldTimestamp = "timestamp"
	fieldCoalesced = "coalesced"
)

// fieldAppender is implemented by the payloads on the hot path. It appends
// ,"name":value for each field, byte for byte what encoding/json (without
// HTML escaping) would write for the struct.
type fieldAppender interface {
	appendFields(b []byte) []byte
}

// partialAppender is a fieldAppender for some values of a payload: ok is
// false (and b unchanged) when encoding/json must do the work.
type partialAppender interface {
	tryAppendFields(b []byte) (_ []byte, ok bool)
}

// AppendJSON appends the event's JSON form to b: the "type" field, the
// envelope (request_id, seq, timestamp and, when not zero, coalesced), then
// the payload's fields. Strings are escaped as encoding/json escapes them,
// except that <, > and & are left as they are.
//
// The common payloads (progress, chunks, thinking, tool and step start and
// complete) are encoded by hand without allocating; the rest go through
// encoding/json.
func (e Event) AppendJSON(b []byte) ([]byte, error) {
	if e.Payload == nil {
		return b, fmt.Errorf("event: %s event #%d has no payload; set Event.Payload", e.Type, e.Seq)
	}
	t := e.Type
	if pt := e.Payload.EventType(); t == "" {
		t = pt
	} else if t != pt {
		return b, fmt.Errorf("event: event #%d has Type %s but a %s payload (%T); leave Type empty or make them agree", e.Seq, t, pt, e.Payload)
	}
	b = append(b, `{"type":`...)
	b = appendString(b, string(t))
	b = append(b, `,"request_id":`...)
	b = appendString(b, e.RequestID)
	b = append(b, `,"seq":`...)
	b = strconv.AppendUint(b, e.Seq, 10)
	b = append(b, `,"timestamp":"`...)
	b = e.Time.UTC().AppendFormat(b, time.RFC3339Nano)
	b = append(b, '"')
	if e.Coalesced != 0 {
		b = append(b, `,"coalesced":`...)
		b = strconv.AppendInt(b, int64(e.Coalesced), 10)
	}
	switch fa := e.Payload.(type) {
	case fieldAppender:
		b = fa.appendFields(b)
		return append(b, '}'), nil
	case partialAppender:
		if out, ok := fa.tryAppendFields(b); ok {
			return append(out, '}'), nil
		}
	}
	return appendPayloadJSON(b, e.Payload)
}

// MarshalJSON returns the event's JSON form; see [Event.AppendJSON].
func (e Event) MarshalJSON() ([]byte, error) {
	return e.AppendJSON(make([]byte, 0, 256))
}

var encPool = sync.Pool{New: func() any { return new(encoder) }}

type encoder struct {
	buf bytes.Buffer
	enc *json.Encoder
}

// appendPayloadJSON encodes p with encoding/json and splices its fields after
// the envelope already in b.
func appendPayloadJSON(b []byte, p Payload) ([]byte, error) {
	var fields []byte
	if r, ok := p.(Raw); ok {
		fields = r.Fields
	} else {
		e := encPool.Get().(*encoder)
		defer encPool.Put(e)
		e.buf.Reset()
		if e.enc == nil {
			e.enc = json.NewEncoder(&e.buf)
			e.enc.SetEscapeHTML(false)
		}
		if err := e.enc.Encode(p); err != nil {
			return b, fmt.Errorf("event: encoding %s payload: %w", p.EventType(), err)
		}
		fields = bytes.TrimRight(e.buf.Bytes(), "\n")
	}
	if len(fields) < 2 || fields[0] != '{' || fields[len(fields)-1] != '}' {
		return b, fmt.Errorf("event: %s payload %T does not encode as a JSON object", p.EventType(), p)
	}
	if inner := bytes.TrimSpace(fields[1 : len(fields)-1]); len(inner) > 0 {
		b = append(b, ',')
		b = append(b, inner...)
	}
	return append(b, '}'), nil
}

// envelope is the decoded form of the envelope fields.
type envelope struct {
	Type      Type      `json:"type"`
	RequestID string    `json:"request_id"`
	Seq       uint64    `json:"seq"`
	Timestamp time.Time `json:"timestamp"`
	Coalesced int       `json:"coalesced"`
}

// UnmarshalJSON decodes the JSON form. The payload becomes the catalogue
// struct for the event's type, or a [Raw] holding the remaining fields when
// the type is not in the catalogue.
func (e *Event) UnmarshalJSON(data []byte) error {
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return fmt.Errorf("event: decoding envelope: %w", err)
	}
	if env.Type == "" {
		return errors.New(`event: decoding: the "type" field is missing or empty`)
	}
	var p Payload
	if dec, ok := catalogue[env.Type]; ok {
		var err error
		if p, err = dec(data); err != nil {
			return fmt.Errorf("event: decoding %s payload: %w", env.Type, err)
		}
	} else {
		fields, err := stripEnvelope(data)
		if err != nil {
			return fmt.Errorf("event: decoding %s payload: %w", env.Type, err)
		}
		p = Raw{Type: env.Type, Fields: fields}
	}
	*e = Event{Type: env.Type, RequestID: env.RequestID, Seq: env.Seq, Time: env.Timestamp, Coalesced: env.Coalesced, Payload: p}
	return nil
}

// stripEnvelope returns the JSON object data without the envelope fields,
// keys sorted.
func stripEnvelope(data []byte) ([]byte, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		return nil, err
	}
	for _, k := range []string{fieldType, fieldRequestID, fieldSeq, fieldTimestamp, fieldCoalesced} {
		delete(m, k)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	out := []byte{'{'}
	for i, k := range keys {
		if i > 0 {
			out = append(out, ',')
		}
		out = appendString(out, k)
		out = append(out, ':')
		var c bytes.Buffer
		if err := json.Compact(&c, m[k]); err != nil {
			return nil, err
		}
		out = append(out, c.Bytes()...)
	}
	return append(out, '}'), nil
}

// Hand-written encoders of the hot payloads. Each must stay byte-identical to
// encoding/json's output for the struct; TestFastPathMatchesEncodingJSON
// checks it.

func (p SupervisorThinking) appendFields(b []byte) []byte {
	b = append(b, `,"message":`...)
	return appendString(b, p.Message)
}

func (p ToolStart) appendFields(b []byte) []byte {
	b = append(b, `,"tool":`...)
	b = appendString(b, p.Tool)
	return appendOptString(b, `,"message":`, p.Message)
}

func (p ToolProgress) appendFields(b []byte) []byte {
	b = append(b, `,"tool":`...)
	b = appendString(b, p.Tool)
	b = append(b, `,"progress":`...)
	b = appendFloat(b, p.Progress)
	return appendOptString(b, `,"message":`, p.Message)
}

func (p ToolComplete) appendFields(b []byte) []byte {
	b = append(b, `,"tool":`...)
	b = appendString(b, p.Tool)
	b = append(b, `,"content_count":`...)
	return strconv.AppendInt(b, int64(p.ContentCount), 10)
}

func (p MCPProgress) appendFields(b []byte) []byte {
	b = append(b, `,"server":`...)
	b = appendString(b, p.Server)
	b = append(b, `,"tool":`...)
	b = appendString(b, p.Tool)
	b = append(b, `,"progress":`...)
	b = appendFloat(b, p.Progress)
	return appendOptString(b, `,"message":`, p.Message)
}

func (p WorkflowStepStart) appendFields(b []byte) []byte {
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, int64(p.Step), 10)
	b = append(b, `,"name":`...)
	return appendString(b, p.Name)
}

func (p WorkflowStepComplete) appendFields(b []byte) []byte {
	b = append(b, `,"step":`...)
	b = strconv.AppendInt(b, int64(p.Step), 10)
	b = appendOptString(b, `,"status":`, p.Status)
	return appendOptString(b, `,"error":`, p.Error)
}

func (p ResponseChunk) appendFields(b []byte) []byte {
	b = append(b, `,"content":`...)
	return appendString(b, p.Content)
}

func (ResponseDone) appendFields(b []byte) []byte { return b }

// tryAppendFields handles content without metadata whose data is a string
// (text, base64) or pre-encoded JSON (a widget as a json.RawMessage).
func (p ToolContent) tryAppendFields(b []byte) ([]byte, bool) {
	if len(p.Metadata) != 0 {
		return b, false
	}
	switch p.Data.(type) {
	case string, json.RawMessage:
	default:
		return b, false
	}
	start := len(b)
	b = appendOptString(b, `,"tool":`, p.Tool)
	b = append(b, `,"content_type":`...)
	b = appendString(b, p.ContentType)
	b = appendOptString(b, `,"encoding":`, p.Encoding)
	b = append(b, `,"data":`...)
	switch data := p.Data.(type) {
	case string:
		return appendString(b, data), true
	case json.RawMessage:
		// encoding/json writes a RawMessage compacted; so do we.
		buf := bytes.NewBuffer(b)
		if err := json.Compact(buf, data); err != nil {
			return b[:start], false // let encoding/json report it
		}
		return buf.Bytes(), true
	}
	return b[:start], false
}

func (p DirectResponseChunk) appendFields(b []byte) []byte {
	b = append(b, `,"content":`...)
	return appendString(b, p.Content)
}

func (DirectResponseDone) appendFields(b []byte) []byte { return b }

func appendOptString(b []byte, key, v string) []byte {
	if v == "" {
		return b
	}
	b = append(b, key...)
	return appendString(b, v)
}

// appendFloat formats f as encoding/json does. NaN and infinities, which JSON
// cannot hold, are written as 0 (Emit rejects them before they get here).
func appendFloat(b []byte, f float64) []byte {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return append(b, '0')
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

const hexDigits = "0123456789abcdef"

// appendString appends s as a JSON string the way encoding/json does with
// HTML escaping off: control characters, quote and backslash escaped,
// invalid UTF-8 replaced by U+FFFD, U+2028 and U+2029 escaped.
func appendString(b []byte, s string) []byte {
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
