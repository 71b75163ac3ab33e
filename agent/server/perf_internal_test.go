package server

import (
	"encoding/json"
	"mime"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestJSONMediaType checks that the types read without parsing answer as
// mime.ParseMediaType does, and that they allocate nothing.
func TestJSONMediaType(t *testing.T) {
	for _, ct := range []string{
		"application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8",
		"text/plain", "text/plain;charset=UTF-8", "Application/JSON", "application/json ; charset=utf-8",
		"application/jsonx", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "", "text/html",
		"application/json; charset", "text/plain;",
	} {
		mt, _, err := mime.ParseMediaType(ct)
		want := err == nil && (mt == "application/json" || mt == "text/plain")
		if got := jsonMediaType(ct); got != want {
			t.Errorf("jsonMediaType(%q) = %v, want %v", ct, got, want)
		}
	}
	for _, ct := range []string{"application/json", "application/json; charset=utf-8", "text/plain;charset=UTF-8"} {
		if n := testing.AllocsPerRun(100, func() { jsonMediaType(ct) }); n != 0 {
			t.Errorf("jsonMediaType(%q) allocates %v times, want 0", ct, n)
		}
	}
}

// deadlineWriter records the write deadlines a ResponseController sets.
type deadlineWriter struct {
	http.ResponseWriter
	set []time.Time
}

func (w *deadlineWriter) SetWriteDeadline(d time.Time) error {
	w.set = append(w.set, d)
	return nil
}

// TestWriteDeadlineRenew checks that a stream's write deadline is set
// before its first write, left alone while at least the timeout is left,
// and renewed once less is left, always leaving a write at least the
// timeout.
func TestWriteDeadlineRenew(t *testing.T) {
	const d = time.Minute
	w := &deadlineWriter{ResponseWriter: httptest.NewRecorder()}
	wd := writeDeadline{w: w, d: d}
	before := time.Now()
	wd.renew()
	if len(w.set) != 1 || w.set[0].Before(before.Add(d)) {
		t.Fatalf("first renew set %v, want one deadline at least %v from %v", w.set, d, before)
	}
	for range 100 {
		wd.renew()
	}
	if len(w.set) != 1 {
		t.Fatalf("renew with more than the timeout left set the deadline again: %v", w.set)
	}
	// Less than the timeout left (as after a quarter of it has passed).
	wd.until = time.Now().Add(d - time.Second)
	before = time.Now()
	wd.renew()
	if len(w.set) != 2 || w.set[1].Before(before.Add(d)) {
		t.Fatalf("renew with less than the timeout left set %v, want a second deadline at least %v from %v", w.set, d, before)
	}
	// No bound: nothing set.
	w2 := &deadlineWriter{ResponseWriter: httptest.NewRecorder()}
	(&writeDeadline{w: w2, d: -1}).renew()
	if len(w2.set) != 0 {
		t.Fatalf("a negative timeout set a deadline: %v", w2.set)
	}
}

// TestCheckNUL checks that a NUL is found at any depth, and named by its
// path, and that metadata without one passes without allocating.
func TestCheckNUL(t *testing.T) {
	md := map[string]any{"a": []any{"x", map[string]any{"b": "c\x00"}}}
	err := checkNUL("metadata", md)
	if err == nil || !strings.Contains(err.Error(), "metadata.a[1].b") {
		t.Fatalf("checkNUL = %v, want an error naming metadata.a[1].b", err)
	}
	if err := checkNUL("metadata", map[string]any{"k\x00": 1}); err == nil {
		t.Fatal("a NUL in a key passed")
	}
	ok := map[string]any{"a": []any{"x", map[string]any{"b": "c", "n": 1.0}}, "graph_id": "g"}
	if err := checkNUL("metadata", ok); err != nil {
		t.Fatal(err)
	}
	if n := testing.AllocsPerRun(100, func() { _ = checkNUL("metadata", ok) }); n != 0 {
		t.Errorf("checkNUL of metadata without NUL allocates %v times, want 0", n)
	}
}

// TestGrowStack checks that growStack runs on a fresh goroutine.
func TestGrowStack(t *testing.T) {
	done := make(chan struct{})
	go func() { defer close(done); growStack() }()
	<-done
}

// TestAssistantIDRegistered checks that a registered graph carries its
// assistant id, computed at Register, and reads it without hashing again.
func TestAssistantIDRegistered(t *testing.T) {
	const graphID = "perf-internal-test-graph"
	a := &adapter[int]{id: graphID, asst: AssistantID(graphID)}
	var r runner = a
	if got, want := r.assistantID(), AssistantID(graphID); got != want {
		t.Fatalf("assistantID() = %s, want %s", got, want)
	}
	if n := testing.AllocsPerRun(100, func() { _ = r.assistantID() }); n != 0 {
		t.Errorf("assistantID of a registered graph allocates %v times, want 0", n)
	}
}

// TestStringOrList checks the forms of a string-or-list field.
func TestStringOrList(t *testing.T) {
	for _, c := range []struct {
		raw  string
		want []string
	}{{"", nil}, {"null", nil}, {"[]", nil}, {`"a"`, []string{"a"}}, {` "a"`, []string{"a"}}, {`["a","b"]`, []string{"a", "b"}}} {
		got, err := stringOrList("f", json.RawMessage(c.raw))
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("stringOrList(%q) = %q, %v; want %q", c.raw, got, err, c.want)
		}
	}
	if _, err := stringOrList("interrupt_before", json.RawMessage(`1`)); err == nil || !strings.Contains(err.Error(), "interrupt_before") {
		t.Errorf("stringOrList(1) = %v, want an error naming the field", err)
	}
}

// TestCheckNULDeep: a NUL at the bottom of metadata 10,000 levels deep
// is found and named at the cost of the value's size. Each level built
// its own path and walked its subtree again: about 150 MB for 20 KB of
// JSON.
func TestCheckNULDeep(t *testing.T) {
	var v any = "x\x00"
	for range 10000 {
		v = []any{v}
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	err := checkNUL("metadata", map[string]any{"a": v})
	runtime.ReadMemStats(&after)
	if err == nil || !strings.Contains(err.Error(), "metadata.a[0][0]") || len(err.Error()) > 400 {
		t.Fatalf("checkNUL = %.300v; want an error naming metadata.a[0][0]..., clipped", err)
	}
	if n := after.TotalAlloc - before.TotalAlloc; n > 8<<20 {
		t.Errorf("checkNUL of a 10,000-deep value allocated %d bytes; want under 8 MiB", n)
	}
}
