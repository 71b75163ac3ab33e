package event

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestToUserFacing(t *testing.T) {
	env := func(p Payload) Event {
		return Event{Type: p.EventType(), RequestID: "r", Seq: 4, Time: t0, Coalesced: 1, Payload: p}
	}
	schema := json.RawMessage(`{"type":"object"}`)
	tests := []struct {
		in     Payload
		want   Payload
		wantOK bool
	}{
		{MCPProgress{Server: "s", Tool: "search", Progress: 0.4, Message: "m"}, ToolProgress{Tool: "search", Progress: 0.4, Message: "m"}, true},
		{MCPContent{Server: "s", Tool: "chart", ContentType: "image/png", Encoding: "base64", Data: "AAAA", Metadata: map[string]any{"alt_text": "a"}},
			ToolContent{Tool: "chart", ContentType: "image/png", Encoding: "base64", Data: "AAAA", Metadata: map[string]any{"alt_text": "a"}}, true},
		{MCPElicitation{Server: "s", Tool: "rm", ElicitationID: "e1", Message: "Sure?", Schema: schema},
			ElicitationRequest{ElicitationID: "e1", Tool: "rm", Message: "Sure?", Schema: schema}, true},
		{MCPError{Server: "s", Tool: "rm", Error: "boom", ErrorType: ErrorExecution}, ToolError{Tool: "rm", Error: "boom", ErrorType: ErrorExecution}, true},
		{ToolStart{Tool: "x"}, ToolStart{Tool: "x"}, true},
		{ResponseChunk{Content: "c"}, ResponseChunk{Content: "c"}, true},
		{Raw{Type: "mcp.log", Fields: []byte(`{}`)}, nil, false},
	}
	for _, tt := range tests {
		t.Run(string(tt.in.EventType()), func(t *testing.T) {
			got, ok := ToUserFacing(env(tt.in))
			if ok != tt.wantOK {
				t.Fatalf("ok = %v, want %v", ok, tt.wantOK)
			}
			if !ok {
				return
			}
			if diff := cmp.Diff(env(tt.want), got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestUserFacingStream(t *testing.T) {
	em := NewEmitter(EmitterConfig{RequestID: "r"})
	ctx := context.Background()
	for _, p := range []Payload{
		ToolStart{Tool: "t"},
		MCPProgress{Server: "s", Tool: "t", Progress: 0.5},
		MCPError{Server: "s", Tool: "t", Error: "x"},
	} {
		if err := em.Emit(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	em.Close()
	var got []Type
	for ev, err := range UserFacing(em.Events(ctx)) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, ev.Type)
	}
	if diff := cmp.Diff([]Type{TypeToolStart, TypeToolProgress, TypeToolError}, got); diff != "" {
		t.Error(diff)
	}
}
