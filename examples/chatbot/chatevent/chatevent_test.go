package chatevent

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/operator/elicit"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata/golden")

var t0 = time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)

// samples holds one event of every type of the protocol, as the seeds show
// them.
func samples() []event.Event {
	ps := []event.Payload{
		SupervisorThinking{Message: "Analyzing your question..."},
		SupervisorDecided{Action: "workflow", Message: "Creating a plan..."},
		ToolStart{Tool: "data_analyzer", Message: "Analyzing dataset..."},
		ToolProgress{Tool: "data_analyzer", Progress: 0.5, Message: "Processing..."},
		ToolContent{Tool: "data_analyzer", ContentType: "image/png", Encoding: "base64", Data: "iVBORw0KGgo...", Metadata: map[string]any{"alt_text": "Revenue chart"}},
		ToolComplete{Tool: "data_analyzer", ContentCount: 3},
		ToolError{Tool: "web_search", Error: "deadline exceeded after 30s", ErrorType: ErrorTimeout},
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
		ElicitationRequest{Request: elicit.Request{ElicitationID: "eli-2", Tool: "exporter", Message: "Select format:", Options: []string{"JSON", "CSV", "XML"}}},
		ElicitationResponse{Response: elicit.Response{ElicitationID: "eli-2", Action: elicit.Accept, Content: map[string]any{"choice": "CSV"}}},
		ClarifyRequest{Question: "Which quarter do you mean?", Options: []string{"Q1", "Q2"}},
		event.Error{Message: "The model is unavailable; try again in a minute.", Code: "llm_unavailable"},
		TokenUsage{model.Usage{InputTokens: 1500, OutputTokens: 800, ThinkingTokens: 5000, CacheReadTokens: 200}},
	}
	evs := make([]event.Event, len(ps))
	for i, p := range ps {
		evs[i] = event.Event{Type: p.EventType(), RequestID: "req-456", Seq: uint64(i + 1), Time: t0.Add(time.Duration(i) * time.Millisecond), Payload: p}
	}
	return evs
}

func TestSamplesCoverDecoder(t *testing.T) {
	seen := map[event.Type]bool{}
	for _, ev := range samples() {
		seen[ev.Type] = true
	}
	types := NewDecoder().Types()
	for _, typ := range types {
		if !seen[typ] {
			t.Errorf("no sample of %s", typ)
		}
	}
	if len(types) != len(samples()) {
		t.Errorf("the decoder knows %d types, the samples have %d", len(types), len(samples()))
	}
}

// TestGolden pins the wire form of every event, and that the decoder gives
// back what was sent.
func TestGolden(t *testing.T) {
	dec := NewDecoder()
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
			back, err := dec.Decode(want)
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
	ev := event.Event{RequestID: "r", Seq: 2, Time: t0, Payload: ToolProgress{Tool: "data_analyzer", Progress: 0.5, Message: "Processing..."}}
	got, err := json.Marshal(ev)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"tool.progress","request_id":"r","seq":2,"timestamp":"2026-01-02T03:04:05.000006Z","tool":"data_analyzer","progress":0.5,"message":"Processing..."}`
	if diff := cmp.Diff(want, string(got)); diff != "" {
		t.Error(diff)
	}
}

func TestClasses(t *testing.T) {
	var coalescable, terminal []event.Type
	for _, ev := range samples() {
		if c, ok := ev.Payload.(event.Coalescer); ok && c.CoalesceKey() != "" {
			coalescable = append(coalescable, ev.Type)
		}
		if Terminal(ev.Type) {
			terminal = append(terminal, ev.Type)
		}
	}
	if diff := cmp.Diff([]event.Type{TypeToolProgress}, coalescable); diff != "" {
		t.Errorf("coalescable (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]event.Type{TypeResponseDone, TypeClarifyRequest}, terminal); diff != "" {
		t.Errorf("terminal (-want +got):\n%s", diff)
	}
}

func TestPayloadFieldsAvoidEnvelopeNames(t *testing.T) {
	reserved := map[string]bool{"type": true, "request_id": true, "seq": true, "timestamp": true, "coalesced": true}
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

// TestEmitValidates checks that an emitter rejects a bad payload of the
// protocol with an error naming the field.
func TestEmitValidates(t *testing.T) {
	em := event.NewEmitter(event.EmitterConfig{})
	defer em.Close()
	for _, tt := range []struct {
		p     event.Payload
		field string
	}{
		{ToolProgress{Tool: "t", Progress: 1.5}, "progress"},
		{ToolStart{}, "tool"},
		{WorkflowStepStart{Name: "x"}, "step"},
		{WorkflowStepComplete{Step: 1, Status: "weird"}, "status"},
		{ElicitationResponse{Response: elicit.Response{ElicitationID: "e", Action: "maybe"}}, "action"},
		{ClarifyRequest{}, "question"},
	} {
		var verr *event.ValidationError
		err := em.Emit(t.Context(), tt.p)
		if !errors.As(err, &verr) || verr.Field != tt.field {
			t.Errorf("Emit(%#v) = %v, want a ValidationError for field %s", tt.p, err, tt.field)
		}
	}
}

// ElicitationResponse embeds elicit.Response; its wire form is
// the one of the struct it replaced, which repeated the fields, and the
// old form decodes into it (the golden file pins the whole event).
func TestElicitationResponseWireUnchanged(t *testing.T) {
	type oldShape struct {
		ElicitationID string         `json:"elicitation_id"`
		Action        string         `json:"action"`
		Content       map[string]any `json:"content,omitempty"`
	}
	for _, tc := range []struct {
		old oldShape
		new ElicitationResponse
	}{
		{oldShape{"e1", "accept", map[string]any{"answer": "yes", "n": 2.0}},
			ElicitationResponse{elicit.Response{ElicitationID: "e1", Action: elicit.Accept, Content: map[string]any{"answer": "yes", "n": 2.0}}}},
		{oldShape{ElicitationID: "e2", Action: "decline"},
			ElicitationResponse{elicit.Response{ElicitationID: "e2", Action: elicit.Decline}}},
	} {
		oldJSON, err := json.Marshal(tc.old)
		if err != nil {
			t.Fatal(err)
		}
		newJSON, err := json.Marshal(tc.new)
		if err != nil {
			t.Fatal(err)
		}
		if string(oldJSON) != string(newJSON) {
			t.Errorf("wire form changed:\n old %s\n new %s", oldJSON, newJSON)
		}
		var back ElicitationResponse
		if err := json.Unmarshal(oldJSON, &back); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(tc.new, back); diff != "" {
			t.Errorf("old form decoded (-want +got):\n%s", diff)
		}
		ev := event.Event{Type: TypeElicitationResponse, RequestID: "r", Seq: 1, Time: t0, Payload: tc.new}
		wire, err := ev.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		// The payload's fields follow the envelope's in the event object.
		if !bytes.HasSuffix(wire, append([]byte(","), oldJSON[1:]...)) {
			t.Errorf("event %s does not end with the old payload's fields %s", wire, oldJSON)
		}
		dec, err := NewDecoder().Decode(wire)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := dec.Payload.(ElicitationResponse); !ok || !reflect.DeepEqual(got, tc.new) {
			t.Errorf("decoded payload %#v, want %#v", dec.Payload, tc.new)
		}
	}
}
