package sse

import (
	"errors"
	"io"
	"strconv"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/google/go-cmp/cmp"
)

func readAll(t *testing.T, in string) ([]Message, error) {
	t.Helper()
	var msgs []Message
	for m, err := range Read(strings.NewReader(in)) {
		if err != nil {
			return msgs, err
		}
		msgs = append(msgs, m)
	}
	return msgs, nil
}

func TestRead(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []Message
	}{
		{"seed format", "data: {\"type\": \"text.done\"}\n\n", []Message{{Event: "message", Data: `{"type": "text.done"}`}}},
		{"full frame", "id: 7\nevent: tool.progress\ndata: {}\n\n", []Message{{ID: "7", Event: "tool.progress", Data: "{}"}}},
		{"multi-line data", "data: a\ndata:b\ndata:  c\n\n", []Message{{Event: "message", Data: "a\nb\n c"}}},
		{"CRLF and CR", "data: a\r\n\r\ndata: b\r\rdata: c\n\r\n", []Message{{Event: "message", Data: "a"}, {Event: "message", Data: "b"}, {Event: "message", Data: "c"}}},
		{"comments and heartbeats", ": heartbeat\n\n:x\ndata: a\n\n", []Message{{Event: "message", Data: "a"}}},
		{"BOM skipped once", "\xef\xbb\xbfdata: a\n\n", []Message{{Event: "message", Data: "a"}}},
		{"id carries over", "id: 1\ndata: a\n\ndata: b\n\nid\ndata: c\n\n", []Message{{ID: "1", Event: "message", Data: "a"}, {ID: "1", Event: "message", Data: "b"}, {Event: "message", Data: "c"}}},
		{"id with NUL ignored", "id: 1\ndata: a\n\nid: 2\x003\ndata: b\n\n", []Message{{ID: "1", Event: "message", Data: "a"}, {ID: "1", Event: "message", Data: "b"}}},
		{"retry", "retry: 1500\ndata: a\n\nretry: 1x\ndata: b\n\n", []Message{{Event: "message", Data: "a", Retry: 1500 * time.Millisecond}, {Event: "message", Data: "b", Retry: 1500 * time.Millisecond}}},
		{"no data, no dispatch", "event: x\n\ndata: a\n\n", []Message{{Event: "message", Data: "a"}}},
		{"empty data dispatches", "data\n\n", []Message{{Event: "message", Data: ""}}},
		{"unknown fields ignored", "foo: bar\ndata: a\nbaz\n\n", []Message{{Event: "message", Data: "a"}}},
		{"cut off at end", "data: a\n\ndata: b\n", []Message{{Event: "message", Data: "a"}}},
		{"empty", "", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := readAll(t, tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			// The same bytes one at a time parse the same way.
			var slow []Message
			for m, err := range Read(iotest.OneByteReader(strings.NewReader(tt.in))) {
				if err != nil {
					t.Fatal(err)
				}
				slow = append(slow, m)
			}
			if diff := cmp.Diff(tt.want, slow); diff != "" {
				t.Errorf("byte by byte (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReadErrors(t *testing.T) {
	rd := Reader{MaxBytes: 8}
	for _, in := range []string{"data: 123456789\n\n", "data: 1234\ndata: 1234\n\n"} {
		var got error
		for _, err := range rd.Read(strings.NewReader(in)) {
			got = err
		}
		if !errors.Is(got, ErrTooLong) {
			t.Errorf("%q: error %v, want ErrTooLong", in, got)
		}
	}
	boom := errors.New("connection reset")
	var got error
	for _, err := range Read(io.MultiReader(strings.NewReader("data: a\n\n"), iotest.ErrReader(boom))) {
		got = err
	}
	if !errors.Is(got, boom) {
		t.Errorf("read error: %v, want %v", got, boom)
	}
	var msgs, errs int
	for _, err := range ReadEvents(strings.NewReader("id: 1\ndata: not json\n\nid: 2\ndata: {\"type\":\"text.done\"}\n\n")) {
		if err != nil {
			errs++
			if !strings.Contains(err.Error(), `message id "1"`) {
				t.Errorf("decode error %v does not name the message", err)
			}
			continue
		}
		msgs++
	}
	if msgs != 1 || errs != 1 {
		t.Errorf("got %d events and %d errors, want 1 and 1", msgs, errs)
	}
}

// encodeMessages writes msgs back in SSE form.
func encodeMessages(msgs []Message) string {
	var b strings.Builder
	for _, m := range msgs {
		b.WriteString("retry: " + strconv.FormatInt(m.Retry.Milliseconds(), 10) + "\n")
		b.WriteString("id: " + m.ID + "\nevent: " + m.Event + "\n")
		for line := range strings.SplitSeq(m.Data, "\n") {
			b.WriteString("data: " + line + "\n")
		}
		b.WriteString("\n")
	}
	return b.String()
}

// FuzzRead checks that the reader never panics, yields only well-formed
// messages, and that what it yields survives being written and read again.
func FuzzRead(f *testing.F) {
	for _, s := range []string{
		"data: a\n\n", "id: 7\nevent: tool.progress\ndata: {}\n\n", "data: a\r\n\r\ndata: b\r\r",
		": c\n\n", "\xef\xbb\xbfdata: x\n\n", "retry: 10\nid: 1\x00\ndata\n\n", "data:  lead\ndata:\n\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		var msgs []Message
		for m, err := range (Reader{MaxBytes: 1 << 16}).Read(strings.NewReader(string(in))) {
			if err != nil {
				if !errors.Is(err, ErrTooLong) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if m.Event == "" || strings.ContainsAny(m.ID+m.Event, "\r\n") || strings.ContainsRune(m.ID, 0) || strings.Contains(m.Data, "\r") {
				t.Fatalf("malformed message %+v", m)
			}
			msgs = append(msgs, m)
		}
		again, err := readAll(t, encodeMessages(msgs))
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(msgs, again); diff != "" {
			t.Fatalf("re-read differs (-first +second):\n%s", diff)
		}
	})
}
