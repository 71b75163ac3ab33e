package testserver

import (
	"context"
	"net/http"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// A client's listening stream that reconnects while Close is ending the
// sessions (mcp-go's GET opens a session for any id it is given) must not
// leave the stream's pump goroutine behind.
func TestCloseEndsSessionOpenedDuringShutdown(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	srv := New("late").HTTP()
	srv.afterShutdown = func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Accept", "text/event-stream")
		req.Header.Set("Mcp-Session-Id", "late-session")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatalf("late GET: %v", err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("late GET: status %d, want 200 (the stream this test needs did not open)", resp.StatusCode)
		}
		cancel()
		resp.Body.Close()
	}
	srv.Close()
	if err := goleak.Find(ignore, goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"), goleak.IgnoreTopFunction("internal/poll.runtime_pollWait")); err != nil {
		t.Fatal(err)
	}
}
