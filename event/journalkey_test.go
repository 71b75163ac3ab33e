package event_test

import (
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/event"
)

// TestCheckJournalKey accepts 1 to 128 letters, digits, '_' and '-' and
// names any other key in its error.
func TestCheckJournalKey(t *testing.T) {
	for _, k := range []string{"a", "run-1_X", strings.Repeat("z", 128)} {
		if err := event.CheckJournalKey(k); err != nil {
			t.Errorf("CheckJournalKey(%q) = %v; want nil", k, err)
		}
	}
	for _, k := range []string{"", strings.Repeat("z", 129), "a.b", "a b", "é", "a/b", "a*"} {
		if err := event.CheckJournalKey(k); err == nil || !strings.Contains(err.Error(), "journal key") {
			t.Errorf("CheckJournalKey(%q) = %v; want an error naming the key", k, err)
		}
	}
}
