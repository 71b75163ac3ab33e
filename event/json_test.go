package event

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)

// samples holds one event of every catalogue type, as the seeds show them.
func samples() []Event {
	ps := []Payload{
		SupervisorThinking{Message: "Analyzing your question..."},
		SupervisorDecided{Action: "workflow", Message: "Creating a plan..."},
		ToolStart{Tool: "data_analyzer", Message: "Analyzing dataset..."},
		ToolProgress{Tool: "data_analyzer", Progress: 0.5, Message: "Processing..."},
		ToolContent{Tool: "data_analyzer", ContentType: "image/png", Encoding: "base64", Data: "iVBORw0KGgo...", Metadata: map[string]any{"alt_text": "Revenue chart"}},
		ToolComplete{Tool: "data_analyzer", ContentCount: 3},
		ToolError{Tool: "web_search", Error: "deadline exceeded after 30s", ErrorType: ErrorTimeout},
		MCPProgress{Server: "analytics", Tool: "data_analyzer", Progress: 0.25, Message: "Loading rows"},
		MCPContent{Server: "analytics", Tool: "data_analyzer", ContentType: "application/vnd.mcp.widget+json", Data: map[string]any{"widget_type": "data_table", "columns": []any{"region", "revenue"}, "rows": []any{[]any{"EU", 12.5}}}},
		MCPElicitation{Server: "files", Tool: "delete_file", ElicitationID: "eli-1", Message: "Delete report.pdf?", Schema: json.RawMessage(`{"type":"object","properties":{"confirm":{"type":"boolean"}}}`)},
		MCPError{Server: "files", Tool: "delete_file", Error: "connection refused", ErrorType: ErrorConnection},
		WorkflowCreated{Steps: 4},
		WorkflowStepStart{Step: 1, Name: "Rewrite Query"},
		WorkflowStepComplete{Step: 1},
		WorkflowComplete{Steps: 4},
		ResponseChunk{Content: "here's the comparison:\n\n"},
		ResponseDone{},
		DirectResponse{Operator: "chart_maker", ContentType: "text/html", Content: "<div>chart</div>"},
		DirectResponseStart{Operator: "coder", ContentType: "text/markdown"},
		DirectResponseChunk{Content: "```go\nfmt.Println(\"hi\")\n```"},
		DirectResponseDone{},
		ElicitationRequest{ElicitationID: "eli-2", Tool: "exporter", Message: "Select format:", Options: []string{"JSON", "CSV", "XML"}},
		ElicitationResponse{ElicitationID: "eli-2", Action: ActionAccept, Content: map[string]any{"choice": "CSV"}},
		ClarifyRequest{Question: "Which quarter do you mean?", Options: []string{"Q1", "Q2"}},
		Error{Message: "The model is unavailable; try again in a minute.", Code: "llm_unavailable"},
		TokenUsage{Model: "sonnet", InputTokens: 1500, OutputTokens: 800, ThinkingTokens: 5000, CacheReadTokens: 200, TotalTokens: 7300},
	}
	evs := make([]Event, len(ps))
	for i, p := range ps {
		evs[i] = Event{Type: p.EventType(), RequestID: "req-456", Seq: uint64(i + 1), Time: t0.Add(time.Duration(i) * time.Millisecond), Payload: p}
	}
	return evs
}

func TestSamplesCoverCatalogue(t *testing.T) {
	seen := map[Type]bool{}
	for _, ev := range samples() {
		seen[ev.Type] = true
	}
	for _, typ := range (*Decoder)(nil).Types() {
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
			var back Event
			if err := json.Unmarshal(want, &back); err != nil {
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
	ev := Event{RequestID: "r", Seq: 2, Time: t0, Payload: ToolProgress{Tool: "data_analyzer", Progress: 0.5, Message: "Processing..."}}
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
	var coalescable []Type
	for _, ev := range samples() {
		if c, ok := ev.Payload.(Coalescer); ok && c.CoalesceKey() != "" {
			coalescable = append(coalescable, ev.Type)
		}
	}
	if diff := cmp.Diff([]Type{TypeToolProgress, TypeMCPProgress}, coalescable); diff != "" {
		t.Errorf("coalescable (-want +got):\n%s", diff)
	}
}

func TestPayloadFieldsAvoidEnvelopeNames(t *testing.T) {
	reserved := map[string]bool{fieldType: true, fieldRequestID: true, fieldSeq: true, fieldTimestamp: true, fieldCoalesced: true}
	for _, ev := range samples() {
		rt := reflect.TypeOf(ev.Payload)
		for i := range rt.NumField() {
			name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
			if reserved[name] {
				t.Errorf("%s: field %s uses the envelope name %q", ev.Type, rt.Field(i).Name, name)
			}
		}
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
	if got := string(appendString(nil, s)); got != want {
		t.Errorf("appendString(%q) = %s, encoding/json = %s", s, got, want)
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

func (custom) EventType() Type { return "custom.thing" }

func TestUnknownTypeDecodesAsRaw(t *testing.T) {
	ev := Event{RequestID: "r", Seq: 1, Time: t0, Payload: custom{Name: "n", Count: 2}}
	data, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	var back Event
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	want := Event{Type: "custom.thing", RequestID: "r", Seq: 1, Time: t0, Payload: Raw{Type: "custom.thing", Fields: []byte(`{"count":2,"name":"n"}`)}}
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
		{"bad timestamp", `{"type":"response.done","timestamp":"yesterday"}`, "event: decoding envelope"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var ev Event
			err := ev.UnmarshalJSON([]byte(tt.in))
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error = %v, want one containing %q", err, tt.want)
			}
		})
	}
}

func TestEncodeErrors(t *testing.T) {
	if _, err := (Event{Type: TypeToolStart}).AppendJSON(nil); err == nil || !strings.Contains(err.Error(), "no payload") {
		t.Errorf("nil payload: %v", err)
	}
	if _, err := (Event{Type: TypeToolStart, Payload: ToolComplete{Tool: "x"}}).AppendJSON(nil); err == nil || !strings.Contains(err.Error(), "make them agree") {
		t.Errorf("mismatched type: %v", err)
	}
	bad := ToolContent{ContentType: "x", Data: func() {}}
	if _, err := (Event{Payload: bad}).AppendJSON(nil); err == nil || !strings.Contains(err.Error(), "encoding tool.content payload") {
		t.Errorf("unencodable payload: %v", err)
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	for _, c := range []struct {
		name string
		ev   Event
	}{
		{"tool.progress", Event{RequestID: "req-456", Seq: 1234, Time: t0, Payload: ToolProgress{Tool: "data_analyzer", Progress: 0.5, Message: "Processing..."}}},
		{"response.chunk", Event{RequestID: "req-456", Seq: 1234, Time: t0, Payload: ResponseChunk{Content: "Based on my research, here's the comparison:\n\n"}}},
		{"tool.content/text", Event{RequestID: "req-456", Seq: 1234, Time: t0, Payload: ToolContent{Tool: "data_analyzer", ContentType: "text/markdown", Data: "## Analysis"}}},
		{"tool.content/widget-raw", Event{RequestID: "req-456", Seq: 1234, Time: t0, Payload: ToolContent{Tool: "data_analyzer", ContentType: "application/vnd.mcp.widget+json",
			Data: json.RawMessage(`{"widget_type":"data_table","columns":["region","revenue"],"rows":[["EU",12.5],["US",20.1]]}`)}}},
		{"tool.content/widget", Event{RequestID: "req-456", Seq: 1234, Time: t0, Payload: ToolContent{Tool: "data_analyzer", ContentType: "application/vnd.mcp.widget+json",
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
		var ev Event
		if ev.UnmarshalJSON(data) != nil {
			return
		}
		first, err := ev.AppendJSON(nil)
		if err != nil {
			return // e.g. a Raw whose fields are not an object
		}
		var again Event
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
