package server

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// TestMaxThreadBytesDefault: without Authenticate every request is the
// one principal "", so Config.MaxThreadBytes zero means no bound (a
// default would cap the whole server); with Authenticate it means
// DefaultMaxThreadBytes.
func TestMaxThreadBytesDefault(t *testing.T) {
	open, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer open.Close(context.Background())
	if open.cfg.MaxThreadBytes >= 0 {
		t.Errorf("MaxThreadBytes without Authenticate: %d; want no bound (negative)", open.cfg.MaxThreadBytes)
	}
	if _, _, on := open.byteCounting(); on {
		t.Error("the thread bytes bound is on without Authenticate")
	}
	authed, err := New(Config{Authenticate: mustAPIKeys(t, map[string]string{"k-0123456789abcdef": "alice"})})
	if err != nil {
		t.Fatal(err)
	}
	defer authed.Close(context.Background())
	if authed.cfg.MaxThreadBytes != DefaultMaxThreadBytes {
		t.Errorf("MaxThreadBytes with Authenticate: %d; want %d", authed.cfg.MaxThreadBytes, DefaultMaxThreadBytes)
	}
}

// bytesServer is a server with the memory store and saver bounded by
// Config.MaxThreadBytes, and a thread "t1" of alice's whose checkpoint
// keeps a 500-byte blob.
func bytesServer(t *testing.T) *Server {
	t.Helper()
	s, err := New(Config{MaxThreadBytes: 1000, Authenticate: mustAPIKeys(t, map[string]string{"k-0123456789abcdef": "alice"})})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close(context.Background()) })
	ctx := t.Context()
	at := time.Now()
	if err := s.store.CreateThread(ctx, &Thread{ID: "t1", Owner: "alice", CreatedAt: at, UpdatedAt: at, Status: ThreadIdle, Metadata: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	cp := &checkpoint.Checkpoint{ThreadID: "t1", Versions: map[string]uint64{"data": 1}, Metadata: map[string]string{"source": "update"}}
	if err := s.saver.Put(ctx, "", cp, []checkpoint.Blob{{Channel: "data", Kind: checkpoint.Full, Data: []byte(strings.Repeat("x", 500))}}, nil); err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRecordThreadBytesRequestGone: the count after a committed copy,
// prune or state update is recorded though the request's context is
// cancelled (its client gone): a stale count would stay on the thread
// until its next run's end.
func TestRecordThreadBytesRequestGone(t *testing.T) {
	s := bytesServer(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	s.recordThreadBytes(ctx, "t1", false)
	n, err := s.store.(ByteCounter).CountBytes(t.Context(), "alice")
	if err != nil {
		t.Fatal(err)
	}
	if n < 500 {
		t.Fatalf("alice's bytes recorded with the request gone: %d; want the checkpoint's (at least 500)", n)
	}
}

// stallCounter is a store whose CountBytes, once armed, waits for
// release after it has read the sum: a read that a deletion overtakes.
type stallCounter struct {
	*MemoryStore
	armed   chan struct{}
	release chan struct{}
	calls   chan struct{}
}

func (c *stallCounter) CountBytes(ctx context.Context, owner string) (int64, error) {
	n, err := c.MemoryStore.CountBytes(ctx, owner)
	c.calls <- struct{}{}
	select {
	case <-c.armed:
		<-c.release
	default:
	}
	return n, err
}

// TestThreadBytesStaleSumNotKept: a sum read from the store before a
// deletion (forgetThreadBytes) is not kept past it.
func TestThreadBytesStaleSumNotKept(t *testing.T) {
	mem := NewMemoryStore()
	st := &stallCounter{MemoryStore: mem, armed: make(chan struct{}), release: make(chan struct{}), calls: make(chan struct{}, 16)}
	s, err := New(Config{Store: st, MaxThreadBytes: 1000, Authenticate: mustAPIKeys(t, map[string]string{"k-0123456789abcdef": "alice"})})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	ctx := t.Context()
	at := time.Now()
	if err := mem.CreateThread(ctx, &Thread{ID: "t1", Owner: "alice", CreatedAt: at, UpdatedAt: at, Status: ThreadIdle, Metadata: map[string]any{}}); err != nil {
		t.Fatal(err)
	}
	if err := mem.SetThreadBytes(ctx, "t1", 5000, 0); err != nil {
		t.Fatal(err)
	}
	close(st.armed)
	errs := make(chan error, 1)
	go func() { errs <- s.checkThreadBytes(ctx, "alice") }()
	<-st.calls // the read has the stale sum, 5000
	// The thread goes (as a DELETE does) while the read is under way.
	if err := mem.DeleteThread(ctx, "t1"); err != nil {
		t.Fatal(err)
	}
	s.forgetThreadBytes("alice")
	close(st.release)
	if err := <-errs; err == nil {
		t.Error("the check whose read began before the deletion passed; want it refused with that read's sum")
	}
	// The stale read was not kept: the next check reads the store again
	// and passes.
	if err := s.checkThreadBytes(ctx, "alice"); err != nil {
		t.Fatalf("check after the deletion: %v; want it to pass", err)
	}
	if got := len(st.calls); got != 1 {
		t.Errorf("%d reads of the store for the check after the deletion; want 1", got)
	}
}
