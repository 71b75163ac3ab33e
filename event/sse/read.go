package sse

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"iter"
	"strconv"
	"time"

	"github.com/agentgraph/agentgraph/event"
)

// Message is one event of an SSE stream as the WHATWG HTML standard parses
// it.
type Message struct {
	// ID is the stream's last event id when the message was dispatched (it
	// carries over from earlier messages, as in browsers).
	ID string
	// Event is the event type; "message" when the stream named none.
	Event string
	// Data is the message's data lines joined with "\n".
	Data string
	// Retry is the reconnection delay the stream last asked for, or 0.
	Retry time.Duration
}

// ErrTooLong is returned when a line or a message's data exceeds
// Reader.MaxBytes.
var ErrTooLong = errors.New("sse: message too long")

// Reader parses SSE streams. The zero value is usable.
type Reader struct {
	// MaxBytes bounds a line and a message's data. Zero means 8 MiB.
	MaxBytes int
	// Decoder decodes each message's data in ReadEvents and Follow. Nil
	// means payloads come as event.Raw (and event.Error).
	Decoder *event.Decoder
}

// Read parses an SSE stream with a default [Reader].
func Read(r io.Reader) iter.Seq2[Message, error] { return Reader{}.Read(r) }

// ReadEvents parses an SSE stream of this package's events with a default
// [Reader]; see [Reader.ReadEvents].
func ReadEvents(r io.Reader) iter.Seq2[event.Event, error] { return Reader{}.ReadEvents(r) }

// Read returns the messages of the stream r, following the WHATWG parsing
// rules: lines end with CRLF, LF or CR; a leading byte order mark is
// skipped; lines starting with ':' are comments; a blank line dispatches the
// message, unless it has no data; an id containing NUL is ignored; retry
// takes only digits; a message cut off by the end of the stream is dropped.
// The sequence ends at the end of r; a read error or an over-long line is
// yielded as the last element.
func (rd Reader) Read(r io.Reader) iter.Seq2[Message, error] {
	max := rd.MaxBytes
	if max <= 0 {
		max = 8 << 20
	}
	return func(yield func(Message, error) bool) {
		br := bufio.NewReader(r)
		var (
			line      []byte
			data      []byte
			hasData   bool
			eventType string
			lastID    string
			retry     time.Duration
			first     = true
			skipLF    bool
		)
		for {
			c, err := br.ReadByte()
			if err != nil {
				if err != io.EOF {
					yield(Message{}, fmt.Errorf("sse: reading: %w", err))
				}
				return
			}
			if skipLF {
				skipLF = false
				if c == '\n' {
					continue
				}
			}
			if c != '\r' && c != '\n' {
				if len(line) >= max {
					yield(Message{}, fmt.Errorf("%w: a line exceeds %d bytes", ErrTooLong, max))
					return
				}
				line = append(line, c)
				continue
			}
			skipLF = c == '\r'
			if first {
				first = false
				line = bytes.TrimPrefix(line, []byte("\xef\xbb\xbf"))
			}
			// A complete line.
			if len(line) == 0 {
				if hasData {
					msg := Message{ID: lastID, Event: eventType, Data: string(data[:len(data)-1]), Retry: retry}
					if msg.Event == "" {
						msg.Event = "message"
					}
					if !yield(msg, nil) {
						return
					}
				}
				data, hasData, eventType = data[:0], false, ""
				continue
			}
			if line[0] == ':' {
				line = line[:0]
				continue
			}
			field, value := line, []byte(nil)
			if i := bytes.IndexByte(line, ':'); i >= 0 {
				field, value = line[:i], line[i+1:]
				if len(value) > 0 && value[0] == ' ' {
					value = value[1:]
				}
			}
			switch string(field) {
			case "event":
				eventType = string(value)
			case "data":
				if len(data)+len(value)+1 > max {
					yield(Message{}, fmt.Errorf("%w: a message's data exceeds %d bytes", ErrTooLong, max))
					return
				}
				data = append(append(data, value...), '\n')
				hasData = true
			case "id":
				if bytes.IndexByte(value, 0) < 0 {
					lastID = string(value)
				}
			case "retry":
				if ms, ok := digits(value); ok {
					retry = time.Duration(ms) * time.Millisecond
				}
			}
			line = line[:0]
		}
	}
}

// digits parses a non-empty run of ASCII digits.
func digits(b []byte) (int64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil || n > int64(time.Duration(1<<63-1)/time.Millisecond) {
		return 0, false
	}
	return n, true
}

// ReadEvents parses an SSE stream written by [Stream] or [Writer] and decodes
// each message's data as an event.Event. A message that does not decode is
// yielded as an error naming its id; the sequence goes on after it.
func (rd Reader) ReadEvents(r io.Reader) iter.Seq2[event.Event, error] {
	return func(yield func(event.Event, error) bool) {
		for msg, err := range rd.Read(r) {
			if err != nil {
				yield(event.Event{}, err)
				return
			}
			ev, err := rd.Decoder.Decode([]byte(msg.Data))
			if err != nil {
				if !yield(event.Event{}, fmt.Errorf("sse: message id %q (event %q): %w", msg.ID, msg.Event, err)) {
					return
				}
				continue
			}
			if !yield(ev, nil) {
				return
			}
		}
	}
}
