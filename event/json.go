package event

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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

// AppendJSON appends the event's JSON form to b: the "type" field, the
// envelope (request_id, seq, timestamp and, when not zero, coalesced), then
// the payload's fields as encoding/json writes them. Strings are escaped as
// encoding/json escapes them, except that <, > and & are left as they are.
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

// UnmarshalJSON decodes the JSON form with a [Decoder] that knows only
// [Error]: other payloads become a [Raw]. Use a Decoder with the
// application's types registered to get its structs back.
func (e *Event) UnmarshalJSON(data []byte) error {
	ev, err := (*Decoder)(nil).Decode(data)
	if err != nil {
		return err
	}
	*e = ev
	return nil
}

// Decoder decodes the JSON form of events, giving back the payload struct
// registered for each type and a [Raw] for the others. Build one with
// [NewDecoder] and [Register] when the program starts; it is then safe for
// concurrent use. A nil *Decoder knows only [Error].
type Decoder struct {
	types map[Type]func([]byte) (Payload, error)
}

// errorOnly is the nil *Decoder's behaviour: it knows only [Error].
var errorOnly = NewDecoder()

// NewDecoder returns a decoder that knows [Error].
func NewDecoder() *Decoder {
	d := &Decoder{types: map[Type]func([]byte) (Payload, error){}}
	Register[Error](d)
	return d
}

// Register makes d decode events of P's type (the EventType of P's zero
// value) into a P with encoding/json. A later registration of the same type
// replaces an earlier one.
func Register[P Payload](d *Decoder) {
	var zero P
	d.types[zero.EventType()] = decodeAs[P]
}

func decodeAs[P Payload](data []byte) (Payload, error) {
	var p P
	if err := json.Unmarshal(data, &p); err != nil {
		return nil, err
	}
	return p, nil
}

// Types returns the types d decodes into structs, sorted.
func (d *Decoder) Types() []Type {
	if d == nil {
		d = errorOnly
	}
	ts := make([]Type, 0, len(d.types))
	for t := range d.types {
		ts = append(ts, t)
	}
	slices.Sort(ts)
	return ts
}

// Decode decodes one event's JSON form. It refuses an event whose type is
// empty. A type holding CR, LF or NUL decodes (events stored by any version
// stay readable); the SSE encoder refuses to put one on an event: line.
func (d *Decoder) Decode(data []byte) (Event, error) {
	var env envelope
	if err := json.Unmarshal(data, &env); err != nil {
		return Event{}, fmt.Errorf("event: decoding envelope: %w", err)
	}
	if env.Type == "" {
		return Event{}, errors.New(`event: decoding: the "type" field is missing or empty`)
	}
	if d == nil {
		d = errorOnly
	}
	dec := d.types[env.Type]
	var p Payload
	if dec != nil {
		var err error
		if p, err = dec(data); err != nil {
			return Event{}, fmt.Errorf("event: decoding %s payload: %w", env.Type, err)
		}
	} else {
		fields, err := stripEnvelope(data)
		if err != nil {
			return Event{}, fmt.Errorf("event: decoding %s payload: %w", env.Type, err)
		}
		p = Raw{Type: env.Type, Fields: fields}
	}
	return Event{Type: env.Type, RequestID: env.RequestID, Seq: env.Seq, Time: env.Timestamp, Coalesced: env.Coalesced, Payload: p}, nil
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
