package event_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/internal/eventtest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)

// samples holds one event of every catalogue type, as the seeds show them.
func samples() []event.Event {
	ps := []event.Payload{
		eventtest.Note{Message: "Analyzing your question..."},
		eventtest.ToolStart{Tool: "data_analyzer", Message: "Analyzing dataset..."},
		eventtest.ToolProgress{Tool: "data_analyzer", Progress: 0.5, Message: "Processing..."},
		eventtest.ToolContent{Tool: "data_analyzer", ContentType: "image/png", Encoding: "base64", Data: "iVBORw0KGgo...", Metadata: map[string]any{"alt_text": "Revenue chart"}},
		eventtest.ToolComplete{Tool: "data_analyzer", ContentCount: 3},
		eventtest.ToolError{Tool: "web_search", Error: "deadline exceeded after 30s", ErrorType: "timeout"},
		eventtest.ServerProgress{Server: "analytics", Tool: "data_analyzer", Progress: 0.25, Message: "Loading rows"},
		eventtest.ServerError{Server: "files", Tool: "delete_file", Error: "connection refused"},
		eventtest.StepStart{Step: 1, Name: "Rewrite Query"},
		eventtest.Chunk{Content: "here's the comparison:\n\n"},
		eventtest.Done{},
		eventtest.Question{ID: "q-2", Text: "Select format:", Options: []string{"JSON", "CSV", "XML"}},
		event.Error{Message: "The model is unavailable; try again in a minute.", Code: "llm_unavailable"},
		eventtest.Usage{InputTokens: 1500, OutputTokens: 800, TotalTokens: 2300},
	}
	evs := make([]event.Event, len(ps))
	for i, p := range ps {
		evs[i] = event.Event{Type: p.EventType(), RequestID: "req-456", Seq: uint64(i + 1), Time: t0.Add(time.Duration(i) * time.Millisecond), Payload: p}
	}
	return evs
}

func TestSamplesCoverCatalogue(t *testing.T) {
	seen := map[event.Type]bool{}
	for _, ev := range samples() {
		seen[ev.Type] = true
	}
	for _, typ := range eventtest.Decoder().Types() {
		if !seen[typ] {
			t.Errorf("no sample of %s", typ)
		}
	}
}

func TestGolden(t *testing.T) {
	for _, ev := range samples() {
		t.Run(string(ev.Type), func(t *testing.T) {
			got, err := ev.AppendJSON(nil)
			if err != nil {
				t.Fatal(err)
			}
			file := filepath.Join("testdata", "golden", string(ev.Type)+".json")
			if *update {
				if err := os.WriteFile(file, append(got, '\n'), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			want, err := os.ReadFile(file)
			if err != nil {
				t.Fatalf("%v (run go test -update to create it)", err)
			}
			if diff := cmp.Diff(string(bytes.TrimSuffix(want, []byte("\n"))), string(got)); diff != "" {
				t.Errorf("JSON differs from %s (-want +got):\n%s", file, diff)
			}
			back, err := eventtest.Decoder().Decode(want)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ev, back); diff != "" {
				t.Errorf("round trip (-sent +decoded):\n%s", diff)
			}
		})
	}
}

func TestSeedShape(t *testing.T) {
	// The seed's example line, with the envelope added after "type".
	ev := event.Event{RequestID: "r", Seq: 2, Time: t0, Payload: eventtest.ToolProgress{Tool: "data_analyzer", Progress: 0.5, Message: "Processing..."}}
	got, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"tool.progress","request_id":"r","seq":2,"timestamp":"2026-01-02T03:04:05.000006Z","tool":"data_analyzer","progress":0.5,"message":"Processing..."}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Error(diff)
	}
}

func TestPayloadClasses(t *testing.T) {
	var coalescable []event.Type
	for _, ev := range samples() {
		if c, ok := ev.Payload.(event.Coalescer); ok && c.CoalesceKey() != "" {
			coalescable = append(coalescable, ev.Type)
		}
	}
	if diff := cmp.Diff([]event.Type{eventtest.TypeToolProgress, eventtest.TypeServerProgress}, coalescable); diff != "" {
		t.Errorf("coalescable (-want +got):\n%s", diff)
	}
}

var trickyStrings = []string{
	"", "plain", `quote " and \ backslash`, "<html>&amp;</html>", "tab\tnl\ncr\rbs\bff\f",
	"\x00\x01\x1f\x7f", "caf\u00e9 \u65e5\u672c \U0001F600", "bad utf8 \xff\xfe end", "\u2028 and \u2029",
	"trunc \xe6\x97", strings.Repeat("x", 300),
}

func TestAppendStringMatchesEncodingJSON(t *testing.T) {
	var all []byte
	for c := range 256 {
		all = append(all, byte(c))
	}
	for _, s := range append(trickyStrings, string(all)) {
		checkString(t, s)
	}
}

func checkString(t *testing.T, s string) {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(s); err != nil {
		t.Fatal(err)
	}
	want := strings.TrimSuffix(buf.String(), "\n")
	if got := string(event.AppendString(nil, s)); got != want {
		t.Errorf("event.AppendString(%q) = %s, encoding/json = %s", s, got, want)
	}
}

func FuzzAppendString(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add(s)
	}
	f.Fuzz(checkString)
}

type custom struct {
	Name  string `json:"name"`
	Count int    `json:"count"`
}

func (custom) EventType() event.Type { return "custom.thing" }

func TestUnknownTypeDecodesAsRaw(t *testing.T) {
	ev := event.Event{RequestID: "r", Seq: 1, Time: t0, Payload: custom{Name: "n", Count: 2}}
	data, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	var back event.Event
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	want := event.Event{Type: "custom.thing", RequestID: "r", Seq: 1, Time: t0, Payload: event.Raw{Type: "custom.thing", Fields: []byte(`{"count":2,"name":"n"}`)}}
	if diff := cmp.Diff(want, back); diff != "" {
		t.Error(diff)
	}
	again, err := json.Marshal(back)
	if err != nil {
		t.Fatal(err)
	}
	if want := `{"type":"custom.thing","request_id":"r","seq":1,"timestamp":"2026-01-02T03:04:05.000006Z","count":2,"name":"n"}`; string(again) != want {
		t.Errorf("re-encoded Raw:\n got %s\nwant %s", again, want)
	}
}

func TestDecodeErrors(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"not json", `{`, "event: decoding envelope"},
		{"no type", `{"seq":1}`, `"type" field is missing`},
		{"bad payload", `{"type":"tool.progress","progress":"half"}`, "event: decoding tool.progress payload"},
		{"bad timestamp", `{"type":"text.done","timestamp":"yesterday"}`, "event: decoding envelope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := eventtest.Decoder().Decode([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestEncodeErrors(t *testing.T) {
	if _, err := (event.Event{Type: eventtest.TypeToolStart}).AppendJSON(nil); err == nil || !strings.Contains(err.Error(), "no payload") {
		t.Errorf("nil payload: %v", err)
	}
	if _, err := (event.Event{Type: eventtest.TypeToolStart, Payload: eventtest.ToolComplete{Tool: "x"}}).AppendJSON(nil); err == nil || !strings.Contains(err.Error(), "make them agree") {
		t.Errorf("mismatched type: %v", err)
	}
	bad := eventtest.ToolContent{ContentType: "x", Data: func() {}}
	if _, err := (event.Event{Payload: bad}).AppendJSON(nil); err == nil || !strings.Contains(err.Error(), "encoding tool.content payload") {
		t.Errorf("unencodable payload: %v", err)
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	for _, c := range []struct {
		name string
		ev   event.Event
	}{
		{"tool.progress", event.Event{RequestID: "req-456", Seq: 1234, Time: t0, Payload: eventtest.ToolProgress{Tool: "data_analyzer", Progress: 0.5, Message: "Processing..."}}},
		{"text.chunk", event.Event{RequestID: "req-456", Seq: 1234, Time: t0, Payload: eventtest.Chunk{Content: "Based on my research, here's the comparison:\n\n"}}},
		{"tool.content/text", event.Event{RequestID: "req-456", Seq: 1234, Time: t0, Payload: eventtest.ToolContent{Tool: "data_analyzer", ContentType: "text/markdown", Data: "## Analysis"}}},
		{"tool.content/widget-raw", event.Event{RequestID: "req-456", Seq: 1234, Time: t0, Payload: eventtest.ToolContent{Tool: "data_analyzer", ContentType: "application/vnd.mcp.widget+json",
			Data: json.RawMessage(`{"widget_type":"data_table","columns":["region","revenue"],"rows":[["EU",12.5],["US",20.1]]}`)}}},
		{"tool.content/widget", event.Event{RequestID: "req-456", Seq: 1234, Time: t0, Payload: eventtest.ToolContent{Tool: "data_analyzer", ContentType: "application/vnd.mcp.widget+json",
			Data: map[string]any{"widget_type": "data_table", "columns": []string{"region", "revenue"}, "rows": [][]any{{"EU", 12.5}, {"US", 20.1}}}}}},
	} {
		ev := c.ev
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			buf := make([]byte, 0, 512)
			for b.Loop() {
				var err error
				if buf, err = ev.AppendJSON(buf[:0]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// FuzzDecode checks that decoding never panics and that encoding what was
// decoded is stable: decode(encode(ev)) encodes to the same bytes again.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "golden", "*.json"))
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{"type":"x.y","seq":1,"z":{"a":[1,2]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var ev event.Event
		if ev.UnmarshalJSON(data) != nil {
			return
		}
		first, err := ev.AppendJSON(nil)
		if err != nil {
			return // e.g. a Raw whose fields are not an object
		}
		var again event.Event
		if err := again.UnmarshalJSON(first); err != nil {
			t.Fatalf("re-decoding %s: %v", first, err)
		}
		second, err := again.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first, second) {
			t.Fatalf("unstable encoding:\n%s\n%s", first, second)
		}
	})
}
