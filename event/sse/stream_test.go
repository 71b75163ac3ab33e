package sse

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"github.com/agentgraph/agentgraph/event/internal/eventtest"
	"io"
	"iter"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/event"
)

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

func TestAppendEvent(t *testing.T) {
	ev := event.Event{RequestID: "req-1", Seq: 7, Time: t0, Payload: eventtest.ToolProgress{Tool: "search", Progress: 0.5, Message: "Processing..."}}
	data := `{"type":"tool.progress","request_id":"req-1","seq":7,"timestamp":"2026-01-02T03:04:05Z","tool":"search","progress":0.5,"message":"Processing..."}`
	tests := []struct {
		name  string
		ev    event.Event
		named bool
		want  string
	}{
		{"named", ev, true, "id: 7\nevent: tool.progress\ndata: " + data + "\n\n"},
		{"unnamed", ev, false, "id: 7\ndata: " + data + "\n\n"},
		{"raw with line breaks", event.Event{Seq: 1, Time: t0, Payload: event.Raw{Type: "x.y", Fields: []byte("{\"a\":\n1,\r\"b\":2}")}}, true,
			"id: 1\nevent: x.y\ndata: {\"type\":\"x.y\",\"request_id\":\"\",\"seq\":1,\"timestamp\":\"2026-01-02T03:04:05Z\",\"a\":\ndata: 1,\ndata: \"b\":2}\n\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := AppendEvent([]byte("prefix|"), tt.ev, tt.named)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff("prefix|"+tt.want, string(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
	if got, err := AppendEvent([]byte("keep"), event.Event{Seq: 1}, true); err == nil || string(got) != "keep" {
		t.Errorf("AppendEvent of an event without payload = %q, %v; want the input back and an error", got, err)
	}
}

// catalogue has one event of each of a representative set of types.
func catalogue() []event.Payload {
	return []event.Payload{
		eventtest.Note{Message: "Analyzing..."},
		eventtest.ToolStart{Tool: "web_search"},
		eventtest.ToolProgress{Tool: "web_search", Progress: 0.5, Message: "half"},
		eventtest.ToolContent{Tool: "web_search", ContentType: "application/vnd.mcp.widget+json", Data: map[string]any{"widget_type": "chart", "series": []any{1.5, 2.0}}},
		eventtest.ToolComplete{Tool: "web_search", ContentCount: 1},
		eventtest.StepStart{Step: 2, Name: "Compare"},
		eventtest.Question{ID: "e", Text: "Format?", Options: []string{"a", "b"}},
		eventtest.Usage{InputTokens: 3, OutputTokens: 4, TotalTokens: 7},
		eventtest.Chunk{Content: "multi\nline\r\ncontent: with \"quotes\" and \u2028"},
		eventtest.Done{},
	}
}

func TestEventsSurviveTheWire(t *testing.T) {
	var wire []byte
	var want []event.Event
	for i, p := range catalogue() {
		ev := event.Event{Type: p.EventType(), RequestID: "r", Seq: uint64(i + 1), Time: t0, Payload: p}
		want = append(want, ev)
		var err error
		if wire, err = AppendEvent(wire, ev, i%2 == 0); err != nil {
			t.Fatal(err)
		}
	}
	var got []event.Event
	for ev, err := range testReader.ReadEvents(strings.NewReader(string(wire))) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-sent +read):\n%s", diff)
	}
}

// server serves st and returns its URL; everything is closed at cleanup.
func server(t *testing.T, h http.Handler) string {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv.URL
}

// connect opens the stream, optionally resuming after lastID.
func connect(t *testing.T, ctx context.Context, url, lastID string) *http.Response {
	t.Helper()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		t.Fatal(err)
	}
	if lastID != "" {
		req.Header.Set("Last-Event-ID", lastID)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	return resp
}

// run starts a producer emitting n response chunks and a done event into an
// emitter, and a stream fed by it. Before chunk i it calls gate(i), if set.
func run(t *testing.T, cfg Config, n int, gate func(i int)) *Stream {
	t.Helper()
	em := event.NewEmitter(event.EmitterConfig{RequestID: "req-1", Buffer: 4})
	st := NewStream(cfg)
	ctx, cancel := context.WithCancel(context.Background())
	produced := make(chan struct{})
	go func() {
		defer close(produced)
		defer em.Close()
		for i := range n {
			if gate != nil {
				gate(i)
			}
			if err := em.Emit(ctx, eventtest.Chunk{Content: strconv.Itoa(i)}); err != nil {
				t.Errorf("emit %d: %v", i, err)
				return
			}
		}
		if err := em.Emit(ctx, eventtest.Done{}); err != nil {
			t.Errorf("emit done: %v", err)
		}
	}()
	go func() { _ = st.Run(ctx, em.Events(ctx)) }()
	t.Cleanup(func() {
		cancel()
		<-produced
		<-st.Done()
	})
	return st
}

func TestStreamServesEverything(t *testing.T) {
	st := run(t, Config{Retry: 3 * time.Second}, 50, nil)
	url := server(t, st)
	resp := connect(t, context.Background(), url, "")
	defer resp.Body.Close()
	if got := resp.Header.Get("Content-Type"); got != "text/event-stream" {
		t.Errorf("Content-Type = %q", got)
	}
	var chunks int
	var retry time.Duration
	var lastType event.Type
	for msg, err := range Read(resp.Body) {
		if err != nil {
			t.Fatal(err)
		}
		ev, err := testReader.Decoder.Decode([]byte(msg.Data))
		if err != nil {
			t.Fatal(err)
		}
		if msg.ID != strconv.FormatUint(ev.Seq, 10) || msg.Event != string(ev.Type) {
			t.Errorf("frame id %q event %q for seq %d type %s", msg.ID, msg.Event, ev.Seq, ev.Type)
		}
		retry, lastType = msg.Retry, ev.Type
		if ev.Type == eventtest.TypeChunk {
			if got := ev.Payload.(eventtest.Chunk).Content; got != strconv.Itoa(chunks) {
				t.Fatalf("chunk %d has content %q", chunks, got)
			}
			chunks++
		}
	}
	if chunks != 50 || lastType != eventtest.TypeDone || retry != 3*time.Second {
		t.Errorf("read %d chunks, last %s, retry %v; want 50, text.done, 3s", chunks, lastType, retry)
	}
}

// readUntil connects (resuming after lastID) and reads events until the
// stream ends or stop returns true; then it disconnects and waits until the
// handler has returned. It returns the sequence numbers read.
func readUntil(t *testing.T, url string, returned <-chan struct{}, lastID string, stop func(seq uint64) bool) (seqs []uint64, done bool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	resp := connect(t, ctx, url, lastID)
	for msg, err := range Read(resp.Body) {
		if err != nil {
			t.Fatal(err)
		}
		ev, err := testReader.Decoder.Decode([]byte(msg.Data))
		if err != nil {
			t.Fatal(err)
		}
		if msg.ID != strconv.FormatUint(ev.Seq, 10) {
			t.Fatalf("frame id %s carries seq %d", msg.ID, ev.Seq)
		}
		seqs = append(seqs, ev.Seq)
		if ev.Type == eventtest.TypeDone {
			done = true
		}
		if stop(ev.Seq) {
			break
		}
	}
	cancel() // the client goes away
	resp.Body.Close()
	select {
	case <-returned:
	case <-time.After(30 * time.Second):
		t.Fatal("ServeHTTP did not return after the client went away")
	}
	return seqs, done
}

// TestStreamResume drops the connection in the middle of a run and
// reconnects with Last-Event-ID: the client sees every event exactly once.
func TestStreamResume(t *testing.T) {
	const total = 300
	t.Run("run continues while disconnected", func(t *testing.T) {
		// The replay buffer is far smaller than the run. The client reads in
		// step with the producer (as with a model streaming tokens), drops
		// the connection after event 37, and the run goes on without it.
		ack, away := make(chan struct{}, 1), make(chan struct{})
		st := run(t, Config{Replay: 16}, total, func(i int) {
			switch {
			case i > 0 && i < 37:
				<-ack
			case i == 37:
				<-away
			}
		})
		returned := make(chan struct{}, 10)
		url := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() { returned <- struct{}{} }()
			st.ServeHTTP(w, r)
		}))
		first, _ := readUntil(t, url, returned, "", func(seq uint64) bool {
			if seq < 37 {
				ack <- struct{}{}
			}
			return seq == 37
		})
		close(away)
		rest, done := readUntil(t, url, returned, "37", func(uint64) bool { return false })
		checkSeqs(t, append(first, rest...), total+1, done)
	})
	t.Run("events in flight are resent", func(t *testing.T) {
		// The producer runs ahead: the broken connection had events in flight
		// that the client never read. They are within Replay, so a resume
		// gets them again.
		st := run(t, Config{Replay: total + 1}, total, nil)
		returned := make(chan struct{}, 100)
		url := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			defer func() { returned <- struct{}{} }()
			st.ServeHTTP(w, r)
		}))
		var seqs []uint64
		lastID := ""
		for attempt := 0; attempt < 50; attempt++ {
			n := 0
			got, done := readUntil(t, url, returned, lastID, func(uint64) bool { n++; return n == 37 })
			seqs = append(seqs, got...)
			if done {
				checkSeqs(t, seqs, total+1, true)
				return
			}
			lastID = strconv.FormatUint(got[len(got)-1], 10)
		}
		t.Fatal("too many reconnects")
	})
}

// readLabels connects (resuming after lastID) and reads the stream to its
// end. It labels each chunk "seq chunk content" and each error "seq error
// code", and returns the labels and the errors' messages.
func readLabels(t *testing.T, url, lastID string) (labels, messages []string) {
	t.Helper()
	resp := connect(t, context.Background(), url, lastID)
	defer resp.Body.Close()
	for ev, err := range testReader.ReadEvents(resp.Body) {
		if err != nil {
			t.Fatal(err)
		}
		switch p := ev.Payload.(type) {
		case event.Error:
			labels = append(labels, fmt.Sprintf("%d error %s", ev.Seq, p.Code))
			messages = append(messages, p.Message)
		case eventtest.Chunk:
			labels = append(labels, fmt.Sprintf("%d chunk %s", ev.Seq, p.Content))
		}
	}
	return labels, messages
}

// chunks yields n chunk events numbered from 1, calling after (if set) once
// each has been taken.
func chunks(n int, after func()) iter.Seq2[event.Event, error] {
	return func(yield func(event.Event, error) bool) {
		for i := range n {
			if !yield(event.Event{RequestID: "r", Seq: uint64(i + 1), Time: t0, Payload: eventtest.Chunk{Content: strconv.Itoa(i)}}, nil) {
				return
			}
			if after != nil {
				after()
			}
		}
	}
}

func checkSeqs(t *testing.T, seqs []uint64, want int, done bool) {
	t.Helper()
	for i, s := range seqs {
		if s != uint64(i+1) {
			t.Fatalf("event %d has seq %d: lost or repeated (ids %v)", i, s, seqs)
		}
	}
	if len(seqs) != want || !done {
		t.Errorf("read %d events (done %v), want %d and text.done", len(seqs), done, want)
	}
}

func TestStreamReportsLostEvents(t *testing.T) {
	st := NewStream(Config{Replay: 2})
	url := server(t, st)
	em := event.NewEmitter(event.EmitterConfig{RequestID: "r"})
	for i := range 5 {
		if err := em.Emit(context.Background(), eventtest.Chunk{Content: strconv.Itoa(i)}); err != nil {
			t.Fatal(err)
		}
	}
	em.Close()
	// A first client reads as the stream goes, so old events can be evicted.
	fed := make(chan error, 1)
	go func() { fed <- st.Run(context.Background(), em.Events(context.Background())) }()
	resp := connect(t, context.Background(), url, "")
	var first int
	for _, err := range testReader.ReadEvents(resp.Body) {
		if err != nil {
			t.Fatal(err)
		}
		first++
	}
	resp.Body.Close()
	if err := <-fed; err != nil || first != 5 {
		t.Fatalf("first client read %d events, Run = %v", first, err)
	}
	// A client that last saw event 1 has missed 2 and 3, which are gone.
	got, _ := readLabels(t, url, "1")
	if diff := cmp.Diff([]string{"3 error events_lost", "4 chunk 3", "5 chunk 4"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestStreamHeartbeatAndClientGone(t *testing.T) {
	st := NewStream(Config{Heartbeat: time.Millisecond})
	returned := make(chan struct{})
	url := server(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer close(returned)
		st.ServeHTTP(w, r)
	}))
	ctx, cancel := context.WithCancel(context.Background())
	resp := connect(t, ctx, url, "")
	br := bufio.NewReader(resp.Body)
	for {
		line, err := br.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		if line == ": heartbeat\n" {
			break
		}
	}
	cancel()
	resp.Body.Close()
	select {
	case <-returned:
	case <-time.After(30 * time.Second):
		t.Fatal("ServeHTTP did not return after the client went away")
	}
	// Ending the stream lets the feeding side finish too.
	em := event.NewEmitter(event.EmitterConfig{})
	em.Close()
	if err := st.Run(context.Background(), em.Events(context.Background())); err != nil {
		t.Fatal(err)
	}
}

func TestStreamBadLastEventID(t *testing.T) {
	st := NewStream(Config{})
	url := server(t, st)
	resp := connect(t, context.Background(), url, "seven")
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "Last-Event-ID") {
		t.Errorf("status %d body %q, want 400 naming Last-Event-ID", resp.StatusCode, body)
	}
}

type discard struct{ h http.Header }

func (d *discard) Header() http.Header         { return d.h }
func (d *discard) Write(b []byte) (int, error) { return len(b), nil }
func (d *discard) WriteHeader(int)             {}
func (d *discard) Flush()                      {}

var benchEvents = []struct {
	name string
	ev   event.Event
}{
	{"tool.progress", event.Event{RequestID: "req-456", Seq: 1234, Time: t0, Payload: eventtest.ToolProgress{Tool: "data_analyzer", Progress: 0.5, Message: "Processing..."}}},
	{"text.chunk", event.Event{RequestID: "req-456", Seq: 1234, Time: t0, Payload: eventtest.Chunk{Content: "Based on my research, here's the comparison:\n\n"}}},
	{"tool.content/text", event.Event{RequestID: "req-456", Seq: 1234, Time: t0, Payload: eventtest.ToolContent{Tool: "data_analyzer", ContentType: "text/markdown", Data: "## Analysis"}}},
	{"tool.content/widget", event.Event{RequestID: "req-456", Seq: 1234, Time: t0, Payload: eventtest.ToolContent{Tool: "data_analyzer", ContentType: "application/vnd.mcp.widget+json",
		Data: map[string]any{"widget_type": "data_table", "columns": []string{"region", "revenue"}, "rows": [][]any{{"EU", 12.5}, {"US", 20.1}}}}}},
}

// BenchmarkAppendEvent measures SSE encoding: one event to its framed bytes.
func BenchmarkAppendEvent(b *testing.B) {
	for _, c := range benchEvents {
		ev := c.ev
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 1024)
			for b.Loop() {
				var err error
				if buf, err = AppendEvent(buf[:0], ev, true); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkWriteEvent measures encoding, writing and flushing one event
// through a Writer.
func BenchmarkWriteEvent(b *testing.B) {
	for _, c := range benchEvents {
		ev := c.ev
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			w := NewWriter(&discard{h: http.Header{}}, Config{})
			for b.Loop() {
				if err := w.WriteEvent(ev); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func TestStreamEnd(t *testing.T) {
	feed := func(st *Stream, err error) {
		t.Helper()
		em := event.NewEmitter(event.EmitterConfig{RequestID: "r"})
		if e := em.Emit(context.Background(), eventtest.Chunk{Content: "a"}); e != nil {
			t.Fatal(e)
		}
		em.CloseWithError(err)
		if got := st.Run(context.Background(), em.Events(context.Background())); got != err {
			t.Fatalf("Run = %v, want %v", got, err)
		}
		<-st.Done()
		if st.Err() != err {
			t.Fatalf("Err = %v, want %v", st.Err(), err)
		}
	}
	t.Run("caught up gets 204", func(t *testing.T) {
		st := NewStream(Config{})
		feed(st, nil)
		url := server(t, st)
		resp := connect(t, context.Background(), url, "1")
		resp.Body.Close()
		if resp.StatusCode != http.StatusNoContent {
			t.Errorf("status %d, want 204", resp.StatusCode)
		}
		resp = connect(t, context.Background(), url, "0")
		defer resp.Body.Close()
		var n int
		for _, err := range testReader.ReadEvents(resp.Body) {
			if err != nil {
				t.Fatal(err)
			}
			n++
		}
		if resp.StatusCode != http.StatusOK || n != 1 {
			t.Errorf("resume after 0: status %d, %d events; want 200 and 1", resp.StatusCode, n)
		}
	})
	t.Run("failed run is reported", func(t *testing.T) {
		st := NewStream(Config{})
		feed(st, context.DeadlineExceeded)
		url := server(t, st)
		resp := connect(t, context.Background(), url, "")
		defer resp.Body.Close()
		var got []string
		for ev, err := range testReader.ReadEvents(resp.Body) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fmt.Sprintf("%d %s", ev.Seq, ev.Type))
			if p, ok := ev.Payload.(event.Error); ok && p.Code != "stream_failed" {
				t.Errorf("error code %q", p.Code)
			}
		}
		if diff := cmp.Diff([]string{"1 text.chunk", "2 error"}, got); diff != "" {
			t.Errorf("(-want +got):\n%s", diff)
		}
		// Resuming after the chunk gets the failure; after the failure, 204.
		for lastID, want := range map[string]int{"1": http.StatusOK, "2": http.StatusNoContent} {
			resp := connect(t, context.Background(), url, lastID)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != want || (want == http.StatusOK && !strings.Contains(string(body), "stream_failed")) {
				t.Errorf("resume after %s: status %d body %q", lastID, resp.StatusCode, body)
			}
		}
	})
}

func TestStreamReplacesUnencodableEvent(t *testing.T) {
	st := NewStream(Config{})
	em := event.NewEmitter(event.EmitterConfig{RequestID: "r"})
	ctx := context.Background()
	for _, p := range []event.Payload{
		eventtest.ToolContent{ContentType: "application/json", Data: func() {}}, // not JSON
		eventtest.Done{},
	} {
		if err := em.Emit(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	em.Close()
	if err := st.Run(ctx, em.Events(ctx)); err != nil {
		t.Fatal(err)
	}
	resp := connect(t, ctx, server(t, st), "")
	defer resp.Body.Close()
	var got []string
	for ev, err := range testReader.ReadEvents(resp.Body) {
		if err != nil {
			t.Fatal(err)
		}
		s := fmt.Sprintf("%d %s", ev.Seq, ev.Type)
		if p, ok := ev.Payload.(event.Error); ok {
			s += " " + p.Code
		}
		got = append(got, s)
	}
	if diff := cmp.Diff([]string{"1 error unencodable_event", "2 text.done"}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}

func TestStreamSeveralClients(t *testing.T) {
	// The replay window holds the whole run, so clients that connect late or
	// read slowly still get everything.
	st := run(t, Config{Replay: 128}, 100, nil)
	url := server(t, st)
	results := make(chan []uint64, 3)
	for range 3 {
		go func() {
			var seqs []uint64
			for ev, err := range Follow(context.Background(), url, FollowConfig{Retry: time.Millisecond}) {
				if err != nil {
					t.Error(err)
					break
				}
				seqs = append(seqs, ev.Seq)
			}
			results <- seqs
		}()
	}
	for range 3 {
		checkSeqs(t, <-results, 101, true)
	}
}

// flushLog records what each Flush sent.
type flushLog struct {
	*httptest.ResponseRecorder
	flushed []string
	at      int
	first   chan struct{} // closed by the first Flush, when not nil
}

func (f *flushLog) Flush() {
	body := f.Body.String()
	f.flushed = append(f.flushed, body[f.at:])
	f.at = len(body)
	f.ResponseRecorder.Flush()
	if f.first != nil && len(f.flushed) == 1 {
		close(f.first)
	}
}

// TestStreamFirstFramesGoWithTheHeaders checks that a client joining a
// stream whose first event is ready gets the headers and that event in one
// flush (one packet, one wake-up of the client), and that a client of a
// stream with nothing ready yet gets the headers at once.
func TestStreamFirstFramesGoWithTheHeaders(t *testing.T) {
	s := NewStream(Config{})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	first := make(chan struct{})
	more := make(chan struct{})
	go s.Run(ctx, func(yield func(event.Event, error) bool) {
		if !yield(event.Event{RequestID: "r", Seq: 1, Time: t0, Payload: eventtest.Note{Message: "hi"}}, nil) {
			return
		}
		close(first)
		<-more
		yield(event.Event{RequestID: "r", Seq: 2, Time: t0, Payload: eventtest.Done{}}, nil)
	})
	<-first
	w := &flushLog{ResponseRecorder: httptest.NewRecorder(), first: make(chan struct{})}
	served := make(chan struct{})
	go func() {
		defer close(served)
		s.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
	}()
	<-w.first
	close(more)
	<-served
	if len(w.flushed) != 2 || !strings.Contains(w.flushed[0], "note") || !strings.Contains(w.flushed[1], "text.done") {
		t.Fatalf("flushes %q, want the first event with the headers, then the second", w.flushed)
	}

	// Nothing ready: the headers go out before the wait.
	empty := NewStream(Config{})
	w = &flushLog{ResponseRecorder: httptest.NewRecorder(), first: make(chan struct{})}
	rctx, rcancel := context.WithCancel(context.Background())
	served = make(chan struct{})
	go func() {
		defer close(served)
		empty.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil).WithContext(rctx))
	}()
	select {
	case <-w.first:
	case <-time.After(10 * time.Second):
	}
	rcancel()
	<-served
	if len(w.flushed) != 1 || w.flushed[0] != "" || w.Header().Get("Content-Type") != "text/event-stream" {
		t.Fatalf("flushes %q, headers %v: want the headers alone", w.flushed, w.Header())
	}
}

// testReader decodes the test catalogue.
var testReader = Reader{Decoder: eventtest.Decoder()}

// TestStreamReaderWait: a run whose Replay events wait for a client that
// never comes stops once they have waited ReaderWait, with ErrNoReader,
// instead of waiting as long as its context lasts; a client that comes
// later gets the kept events, then a no_reader error saying why. Without
// ReaderWait the run waits until its context ends.
func TestStreamReaderWait(t *testing.T) {
	events := chunks(5, nil)
	st := NewStream(Config{Replay: 2, ReaderWait: time.Millisecond})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // bounds a broken test only
	defer cancel()
	err := st.Run(ctx, events)
	if !errors.Is(err, ErrNoReader) || ctx.Err() != nil {
		t.Fatalf("Run with no client = %v (context %v); want ErrNoReader before the context ends", err, ctx.Err())
	}
	got, messages := readLabels(t, server(t, st), "")
	for _, m := range messages {
		if !strings.Contains(m, "waited unread") {
			t.Errorf("no_reader message %q does not say why", m)
		}
	}
	if diff := cmp.Diff([]string{"1 chunk 0", "2 chunk 1", "3 error no_reader"}, got); diff != "" {
		t.Errorf("late client (-want +got):\n%s", diff)
	}

	st = NewStream(Config{Replay: 2})
	short, cancelShort := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancelShort()
	if err := st.Run(short, events); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Run without ReaderWait = %v; want it to wait until its context ends", err)
	}
}

// TestStreamMarkSent: events counted as delivered another way (a journal
// read on other instances) hold nothing back: a run with no client goes
// on past Replay and ReaderWait, and a client that comes later gets the
// kept events after an events_lost notice for the dropped ones.
func TestStreamMarkSent(t *testing.T) {
	st := NewStream(Config{Replay: 2, ReaderWait: time.Nanosecond})
	events := chunks(5, st.MarkSent)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute) // bounds a broken test only
	defer cancel()
	if err := st.Run(ctx, events); err != nil {
		t.Fatalf("Run with its events marked sent = %v; want nil, no wait for a client", err)
	}
	got, _ := readLabels(t, server(t, st), "")
	if diff := cmp.Diff([]string{"3 error events_lost", "4 chunk 3", "5 chunk 4"}, got); diff != "" {
		t.Errorf("late client (-want +got):\n%s", diff)
	}
}
