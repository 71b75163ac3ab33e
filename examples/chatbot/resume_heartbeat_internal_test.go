package chatbot

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
)

// TestServeResumeHeartbeatsAndUnencodable: a turn's stream served from
// the journal (on an instance that does not run it) sends heartbeat
// comments while the turn is quiet, so a client's idle timeout does not
// drop it; and a journaled event that cannot be encoded (a type with a
// line break, stored by an older version) goes out as an
// unencodable_event error event with its id, and the events after it
// follow, rather than the stream ending before it on every resume.
func TestServeResumeHeartbeatsAndUnencodable(t *testing.T) {
	dsn, schema := internalPostgres(t)
	b, err := openTestBot(t, Config{Postgres: dsn, PostgresSchema: schema, InstanceLease: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	c := b.cluster
	c.heartbeat = 10 * time.Millisecond
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute) // bounds a broken test only
	defer cancel()
	key := journalKey("alice", "quiet")
	for _, ev := range []event.Event{
		{Type: chatevent.TypeResponseChunk, RequestID: "quiet", Seq: 1, Payload: chatevent.ResponseChunk{Content: "a"}},
		{Type: "bad\nid: 99", RequestID: "quiet", Seq: 2, Payload: event.Raw{Type: "bad\nid: 99", Fields: []byte(`{}`)}},
		{Type: chatevent.TypeResponseChunk, RequestID: "quiet", Seq: 3, Payload: chatevent.ResponseChunk{Content: "b"}},
	} {
		ev.Time = time.Unix(1e9, 0)
		if err := c.journal.Append(ctx, key, ev); err != nil {
			t.Fatal(err)
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c.serveResume(w, r, "alice", "quiet")
	}))
	defer srv.Close()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var got []string // the id, event and data lines, and a heartbeat after the last event
	ended := false
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, ":"):
			if len(got) > 0 && strings.HasPrefix(got[len(got)-1], "data: ") && strings.Contains(got[len(got)-1], `"seq":3`) {
				got = append(got, "heartbeat")
				c.end(key) // the turn ends: the stream does too
				ended = true
			}
		case strings.HasPrefix(line, "id: "), strings.HasPrefix(line, "event: "):
			got = append(got, line)
		case strings.HasPrefix(line, "data: "):
			got = append(got, line)
		}
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("reading the stream: %v (read %q)", err, got)
	}
	if !ended {
		t.Fatalf("the stream ended, or sent no heartbeat, after %q; want events 1 to 3 and a heartbeat while the turn is quiet", got)
	}
	want := []string{"id: 1", "event: " + string(chatevent.TypeResponseChunk), "id: 2", "event: error", "id: 3", "event: " + string(chatevent.TypeResponseChunk), "heartbeat"}
	var heads []string
	for _, l := range got {
		if !strings.HasPrefix(l, "data: ") {
			heads = append(heads, l)
		} else if strings.Contains(l, `"seq":2`) && !strings.Contains(l, "unencodable_event") {
			t.Errorf("event 2 data %s, want an unencodable_event error", l)
		}
	}
	if strings.Join(heads, "|") != strings.Join(want, "|") {
		t.Errorf("stream %q, want %q", heads, want)
	}
}
