package server

import (
	"fmt"
	"strings"
	"testing"
)

// TestRefusedAfterCancelWording: the 503 of a run Close refused after its
// multitask_strategy cancelled the thread's runs lists at most
// maxListedRuns of them and gives the count (a long list was clipped at
// maxDetail, the count lost), says a rollback is asked, not done (a
// running run is rolled back once it stops, maybe by a takeover), and
// says the new run was created and interrupted when it could not be
// removed (it said "not created") (issue #21).
func TestRefusedAfterCancelWording(t *testing.T) {
	var ids []string
	for i := range 100 {
		ids = append(ids, fmt.Sprintf("0000000-0000-0000-0000-%012d", i))
	}
	for _, kept := range []string{"", "new-run"} {
		err := refusedAfterCancel(&runCreate{cancelled: ids, MultitaskStrategy: "rollback"}, kept)
		msg := err.Error()
		if len(msg) > maxDetail || !strings.Contains(msg, ids[0]) || !strings.Contains(msg, ids[maxListedRuns-1]) ||
			strings.Contains(msg, ids[maxListedRuns]) || !strings.Contains(msg, "100 in all") {
			t.Errorf("kept %q: %d bytes %q; want at most %d, the first %d ids and the count 100", kept, len(msg), msg, maxDetail, maxListedRuns)
		}
		if !strings.Contains(msg, "rollback asked") || strings.Contains(msg, "rolled back (deleted") {
			t.Errorf("kept %q: %q; want the rollback said asked, not done", kept, msg)
		}
		created := strings.Contains(msg, "run new-run was created, then interrupted")
		if created != (kept != "") || strings.Contains(msg, "not created") == (kept != "") {
			t.Errorf("kept %q: %q; want it said created (and interrupted) exactly when the run was kept", kept, msg)
		}
	}
}
