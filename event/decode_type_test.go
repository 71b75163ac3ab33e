package event_test

import (
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/event"
)

// TestDecodeRefusesBreakingType: a type holding CR, LF or NUL would break
// the SSE event: line it is relayed on; Decode refuses it.
func TestDecodeRefusesBreakingType(t *testing.T) {
	for _, ty := range []string{`a\nid: 999999\ndata: {}\n\nevent: x`, `a\rb`, `a\u0000b`} {
		_, err := event.NewDecoder().Decode([]byte(`{"type":"` + ty + `","request_id":"r","seq":3}`))
		if err == nil || !strings.Contains(err.Error(), "CR, LF or NUL") {
			t.Errorf("type %s: error = %v, want one naming CR, LF or NUL", ty, err)
		}
	}
}
