package event_test

import (
	"testing"

	"github.com/agentgraph/agentgraph/event"
)

// TestDecodeKeepsBreakingType: an event whose type holds CR, LF or NUL
// (one an older version stored in a journal, say) still decodes, for
// every reader; only the SSE encoder refuses to put such a type on an
// event: line.
func TestDecodeKeepsBreakingType(t *testing.T) {
	for _, ty := range []string{`a\nid: 999999\ndata: {}\n\nevent: x`, `a\rb`, `a\u0000b`} {
		data := []byte(`{"type":"` + ty + `","request_id":"r","seq":3}`)
		ev, err := event.NewDecoder().Decode(data)
		if err != nil {
			t.Errorf("type %s: %v, want it decoded", ty, err)
			continue
		}
		if ev.Seq != 3 || ev.Type == "" || ev.Payload == nil {
			t.Errorf("type %s: decoded %+v", ty, ev)
		}
		var u event.Event
		if err := u.UnmarshalJSON(data); err != nil {
			t.Errorf("type %s: UnmarshalJSON: %v", ty, err)
		}
	}
}
