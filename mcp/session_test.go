package mcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/mcp/internal/testserver"
	"github.com/agentgraph/agentgraph/operator/elicit"
	"github.com/agentgraph/agentgraph/operator/toolresult"
	"github.com/google/go-cmp/cmp"
	"github.com/mark3labs/mcp-go/server"
)

func TestProgressCallback(t *testing.T) {
	for _, tr := range transports(t, "demo") {
		// Over HTTP, a call's progress and its result share one stream only
		// without the GET stream (see TestLateProgressOverHTTP).
		tr.server.NoListen = true
		t.Run(tr.name, func(t *testing.T) {
			m := newManager(t, mcp.ManagerConfig{}, tr.server)
			var got []mcp.Progress // appended by the callback goroutine; read after CallTool returned
			s := m.NewSession(mcp.Callbacks{Progress: func(_ context.Context, p mcp.Progress) { got = append(got, p) }})
			defer s.Close()
			res, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "demo", Name: "progress", Arguments: map[string]any{"steps": 3}})
			if err != nil {
				t.Fatal(err)
			}
			if res.IsError || res.Text() != "done 3 steps" {
				t.Fatalf("result = %+v", res)
			}
			// The progress sent before the result has been delivered, in
			// order, when CallTool returns.
			want := []mcp.Progress{
				{Server: "demo", Tool: "progress", Call: "progress", Progress: 1, Total: 3, Message: "step 1 of 3"},
				{Server: "demo", Tool: "progress", Call: "progress", Progress: 2, Total: 3, Message: "step 2 of 3"},
				{Server: "demo", Tool: "progress", Call: "progress", Progress: 3, Total: 3, Message: "step 3 of 3"},
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Fatalf("progress (-want +got):\n%s", diff)
			}
			if f, ok := got[1].Fraction(); !ok || f < 0.66 || f > 0.67 {
				t.Errorf("Fraction = %v, %v; want 2/3", f, ok)
			}
		})
	}
}

func TestElicitation(t *testing.T) {
	tests := []struct {
		name     string
		answer   elicit.Response
		wait     bool // block until ctx ends
		want     string
		wantKind mcp.ErrorKind // reported to the error callback
	}{
		{name: "accept with defaults", answer: elicit.Response{Action: elicit.Accept, Content: map[string]any{"name": "ada"}}, want: "hello ada x3 in green"},
		{name: "accept full", answer: elicit.Response{Action: elicit.Accept, Content: map[string]any{"name": "bo", "count": 7, "color": "red"}}, want: "hello bo x7 in red"},
		{name: "decline", answer: elicit.Response{Action: elicit.Decline}, want: "no answer: decline"},
		{name: "invalid answer", answer: elicit.Response{Action: elicit.Accept, Content: map[string]any{"name": "cy", "color": "blue"}}, want: "elicitation failed", wantKind: mcp.KindValidation},
		{name: "timeout", wait: true, want: "no answer: cancel"},
	}
	for _, tr := range transports(t, "demo") {
		t.Run(tr.name, func(t *testing.T) {
			m := newManager(t, mcp.ManagerConfig{ElicitTimeout: 100 * time.Millisecond}, tr.server)
			for _, tt := range tests {
				t.Run(tt.name, func(t *testing.T) {
					var seen elicit.Request
					var kinds []mcp.ErrorKind
					s := m.NewSession(mcp.Callbacks{
						Elicit: func(ctx context.Context, req elicit.Request) (elicit.Response, error) {
							seen = req
							if tt.wait {
								<-ctx.Done()
								return elicit.Response{}, ctx.Err()
							}
							return tt.answer, nil
						},
						Error: func(_ context.Context, e *mcp.CallError) { kinds = append(kinds, e.Kind) },
					})
					defer s.Close()
					res, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "demo", Name: "ask"})
					if err != nil {
						t.Fatal(err)
					}
					if !strings.Contains(res.Text(), tt.want) {
						t.Fatalf("result %q, want it to contain %q", res.Text(), tt.want)
					}
					if seen.Server != "demo" || seen.Tool != "ask" || seen.Message != "Who are you?" || seen.Mode != "form" {
						t.Errorf("elicitation = %+v", seen)
					}
					var schema map[string]any
					if err := json.Unmarshal(seen.Schema, &schema); err != nil || schema["required"] == nil {
						t.Errorf("schema = %s (%v)", seen.Schema, err)
					}
					if tt.wantKind != "" && !containsKind(kinds, tt.wantKind) {
						t.Errorf("error kinds = %v, want %s", kinds, tt.wantKind)
					}
				})
			}
		})
	}
}

func containsKind(kinds []mcp.ErrorKind, k mcp.ErrorKind) bool {
	for _, x := range kinds {
		if x == k {
			return true
		}
	}
	return false
}

func TestElicitationFallsBackToManager(t *testing.T) {
	ts := testserver.New("demo")
	m := newManager(t, mcp.ManagerConfig{Elicit: func(ctx context.Context, req elicit.Request) (elicit.Response, error) {
		return elicit.Response{Action: elicit.Accept, Content: map[string]any{"name": "mgr"}}, nil
	}}, mcp.Server{Name: "demo", InProcess: ts.MCP})
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	res, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "demo", Name: "ask"})
	if err != nil || res.Text() != "hello mgr x3 in green" {
		t.Fatalf("got %v, %v", res.Text(), err)
	}
}

func TestContentNormalisation(t *testing.T) {
	for _, tr := range transports(t, "demo") {
		t.Run(tr.name, func(t *testing.T) {
			m := newManager(t, mcp.ManagerConfig{}, tr.server)
			var streamed []mcp.ContentEvent
			s := m.NewSession(mcp.Callbacks{Content: func(_ context.Context, e mcp.ContentEvent) { streamed = append(streamed, e) }})
			defer s.Close()
			res, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "demo", Name: "media"})
			if err != nil {
				t.Fatal(err)
			}
			var kinds []toolresult.Kind
			var types []string
			for _, c := range res.Contents {
				kinds = append(kinds, c.Kind)
				types = append(types, c.MIMEType)
			}
			wantKinds := []toolresult.Kind{toolresult.KindText, toolresult.KindImage, toolresult.KindAudio, toolresult.KindResource, toolresult.KindWidget, toolresult.KindResourceLink, toolresult.KindText, toolresult.KindStructured}
			wantTypes := []string{"text/plain", "image/png", "audio/wav", "text/markdown", toolresult.MIMEWidget, "text/csv", "text/plain", "application/json"}
			if diff := cmp.Diff(wantKinds, kinds); diff != "" {
				t.Errorf("kinds (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(wantTypes, types); diff != "" {
				t.Errorf("MIME types (-want +got):\n%s", diff)
			}
			if got, want := res.Text(), "## Report\nnotes\nthe data\nsecond line"; got != want {
				t.Errorf("Text = %q, want %q", got, want)
			}
			var images, widgets []toolresult.Content
			for _, c := range res.Contents {
				if c.IsImage() {
					images = append(images, c)
				}
				if c.IsWidget() {
					widgets = append(widgets, c)
				}
			}
			if len(images) != 1 || len(widgets) != 1 {
				t.Fatalf("images %d widgets %d, want 1 of each", len(images), len(widgets))
			}
			png, err := images[0].Bytes()
			if err != nil || !strings.HasPrefix(string(png), "\x89PNG") {
				t.Errorf("image bytes %q, %v", png[:min(4, len(png))], err)
			}
			var spec toolresult.Widget
			err = json.Unmarshal([]byte(res.Contents[4].Text), &spec)
			if err != nil || spec.Type != "data_table" || spec.Title != "Sales" {
				t.Errorf("widget = %+v, %v", spec, err)
			}
			if diff := cmp.Diff(map[string]any{"temperature": 21.5, "unit": "C"}, res.Structured); diff != "" {
				t.Errorf("structured (-want +got):\n%s", diff)
			}
			if len(streamed) != len(res.Contents) || streamed[1].Item.MIMEType != "image/png" || streamed[1].Index != 1 {
				t.Errorf("content callback saw %d items, want %d in order", len(streamed), len(res.Contents))
			}
		})
	}
}

func TestToolErrorIsAResult(t *testing.T) {
	ts := testserver.New("demo")
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "demo", InProcess: ts.MCP})
	var reported []*mcp.CallError
	s := m.NewSession(mcp.Callbacks{Error: func(_ context.Context, e *mcp.CallError) { reported = append(reported, e) }})
	defer s.Close()
	res, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "demo", Name: "fail"})
	if err != nil {
		t.Fatalf("isError result came back as error %v", err)
	}
	if !res.IsError || res.Error != "the tool failed on purpose" {
		t.Fatalf("result = %+v", res)
	}
	if len(reported) != 1 || reported[0].Kind != mcp.KindExecution {
		t.Fatalf("error callback saw %v", reported)
	}
	if got := ts.Calls.Load(); got != 1 {
		t.Errorf("server saw %d calls; a tool error must not be retried", got)
	}
}

func TestCancellation(t *testing.T) {
	for _, tr := range transports(t, "demo") {
		t.Run(tr.name, func(t *testing.T) {
			m := newManager(t, mcp.ManagerConfig{}, tr.server)
			s := m.NewSession(mcp.Callbacks{})
			defer s.Close()
			// Connect first so the measured time is the call's.
			if _, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "demo", Name: "echo", Arguments: map[string]any{"text": "x"}}); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			if tr.ts != nil {
				// Cancel once the server runs the call, however long the
				// request takes to get there on a loaded machine.
				go func() {
					for tr.ts.Active.Load() == 0 && ctx.Err() == nil {
						time.Sleep(time.Millisecond)
					}
					cancel()
				}()
			} else {
				time.AfterFunc(50*time.Millisecond, cancel)
			}
			start := time.Now()
			res, err := s.CallTool(ctx, mcp.ToolCall{Server: "demo", Name: "slow", Arguments: map[string]any{"ms": 600000}})
			var ce *mcp.CallError
			if !errors.As(err, &ce) || ce.Kind != mcp.KindCancelled || !errors.Is(err, context.Canceled) {
				t.Fatalf("err = %v, want a cancelled CallError", err)
			}
			if !res.IsError {
				t.Errorf("result %+v: IsError is false for a cancelled call", res)
			}
			// The call would take 10 minutes; a generous bound tells a
			// prompt return from a call that ran out.
			if d := time.Since(start); d > time.Minute {
				t.Errorf("cancelled call took %v", d)
			}
			if tr.ts != nil {
				deadline := time.Now().Add(60 * time.Second)
				for tr.ts.Cancelled.Load() == 0 && time.Now().Before(deadline) {
					time.Sleep(5 * time.Millisecond)
				}
				if tr.ts.Cancelled.Load() == 0 {
					t.Error("server never saw the cancellation")
				}
				if tr.name == "http" {
					waitFor(t, "notifications/cancelled over HTTP", func() bool { return tr.ts.CancelNotices.Load() == 1 })
				}
			}
		})
	}
}

func TestTimeoutIsClassified(t *testing.T) {
	ts := testserver.New("demo")
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "demo", InProcess: ts.MCP})
	var kinds []mcp.ErrorKind
	s := m.NewSession(mcp.Callbacks{Error: func(_ context.Context, e *mcp.CallError) { kinds = append(kinds, e.Kind) }})
	defer s.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancel()
	res, err := s.CallTool(ctx, mcp.ToolCall{Server: "demo", Name: "slow", Arguments: map[string]any{"ms": 5000}})
	var ce *mcp.CallError
	if !errors.As(err, &ce) || ce.Kind != mcp.KindTimeout || !res.IsError {
		t.Fatalf("got %v / %+v", err, res)
	}
	if diff := cmp.Diff([]mcp.ErrorKind{mcp.KindTimeout}, kinds); diff != "" {
		t.Errorf("error kinds (-want +got):\n%s", diff)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	ts := testserver.New("demo")
	srv := mcp.Server{Name: "demo", InProcess: ts.MCP, MaxConcurrent: 2}
	m := newManager(t, mcp.ManagerConfig{}, srv)
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	calls := make([]mcp.ToolCall, 6)
	for i := range calls {
		calls[i] = mcp.ToolCall{Server: "demo", Name: "slow", Arguments: map[string]any{"ms": 30}}
	}
	_, errs := s.CallToolsParallel(context.Background(), calls)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if got := ts.MaxActive.Load(); got != 2 {
		t.Errorf("server saw %d calls at once, want the limit 2", got)
	}
}

func TestCallToolsParallel(t *testing.T) {
	ts := testserver.New("demo")
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "demo", InProcess: ts.MCP})
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	results, errs := s.CallToolsParallel(context.Background(), []mcp.ToolCall{
		{Server: "demo", Name: "echo", Arguments: map[string]any{"text": "one"}},
		{Server: "nowhere", Name: "echo"},
		{Server: "demo", Name: "fail"},
		{Server: "demo", Name: "slow", Arguments: map[string]any{"ms": 20}},
		{Server: "demo", Name: "echo", Arguments: map[string]any{"text": "five"}},
	})
	var unknown *mcp.UnknownServerError
	if !errors.As(errs[1], &unknown) || unknown.Name != "nowhere" {
		t.Errorf("errs[1] = %v, want UnknownServerError", errs[1])
	}
	got := []string{}
	for i, r := range results {
		if i != 1 && errs[i] != nil {
			t.Errorf("call %d: %v", i, errs[i])
		}
		got = append(got, map[bool]string{false: "success", true: "error"}[r.IsError]+":"+r.Text())
	}
	want := []string{"success:one", "error:", "error:the tool failed on purpose", "success:slept", "success:five"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("results (-want +got):\n%s", diff)
	}
}

func TestSessionClose(t *testing.T) {
	ts := testserver.New("demo")
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "demo", InProcess: ts.MCP})
	s := m.NewSession(mcp.Callbacks{Progress: func(_ context.Context, _ mcp.Progress) {}})
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "demo", Name: "slow", Arguments: map[string]any{"ms": 20000}})
		done <- err
	}()
	for ts.Active.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	s.Close()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("call after Close: %v, want context.Canceled", err)
	}
	if _, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "demo", Name: "echo"}); !errors.Is(err, mcp.ErrSessionClosed) {
		t.Fatalf("call on closed session: %v", err)
	}
}

func TestSSE(t *testing.T) {
	ts := testserver.New("old")
	hs := ts.SSE()
	t.Cleanup(hs.Close) // after the manager's shutdown, which closes the stream
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "old", Transport: mcp.TransportSSE, URL: hs.URL + "/sse"})
	var progress int
	s := m.NewSession(mcp.Callbacks{Progress: func(_ context.Context, _ mcp.Progress) { progress++ }, Elicit: func(context.Context, elicit.Request) (elicit.Response, error) {
		t.Error("elicitation cannot reach a client over SSE")
		return elicit.Response{}, nil
	}})
	defer s.Close()
	res, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "old", Name: "media"})
	if err != nil || !slices.ContainsFunc(res.Contents, toolresult.Content.IsImage) {
		t.Fatalf("media over SSE: %v, %+v", err, res)
	}
	// The client declares no elicitation capability over SSE, so the server
	// refuses to ask and the tool reports it.
	res, err = s.CallTool(context.Background(), mcp.ToolCall{Server: "old", Name: "ask"})
	if err != nil || !res.IsError {
		t.Fatalf("ask over SSE: %v, %+v", err, res)
	}
}

// injectingWriter lets a test add an event to an SSE stream the server
// writes: the handler's goroutine writes it, so every write happens before
// the handler returns.
type injectingWriter struct {
	http.ResponseWriter
	mu sync.Mutex
}

func (w *injectingWriter) Write(b []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ResponseWriter.Write(b)
}

func (w *injectingWriter) Flush() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.ResponseWriter.(http.Flusher).Flush()
}

func TestSSEServerRequestFailsTheCall(t *testing.T) {
	ts := testserver.New("old")
	sse := server.NewSSEServer(ts.MCP)
	inject := make(chan string)
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/sse" {
			sse.ServeHTTP(w, r)
			return
		}
		iw := &injectingWriter{ResponseWriter: w}
		served := make(chan struct{})
		go func() { defer close(served); sse.ServeHTTP(iw, r) }()
		for {
			select {
			case ev := <-inject:
				iw.Write([]byte(ev))
				iw.Flush()
			case <-served:
				return
			}
		}
	}))
	server.WithBaseURL(hs.URL)(sse)
	t.Cleanup(hs.Close)
	m := newManager(t, mcp.ManagerConfig{}, mcp.Server{Name: "old", Transport: mcp.TransportSSE, URL: hs.URL + "/sse"})
	// mcp-go's SSE server does not stop the handler when the client gives up.
	t.Cleanup(ts.Release)
	s := m.NewSession(mcp.Callbacks{})
	defer s.Close()
	done := make(chan error, 1)
	go func() {
		_, err := s.CallTool(context.Background(), mcp.ToolCall{Server: "old", Name: "slow", Arguments: map[string]any{"ms": 20000}})
		done <- err
	}()
	waitFor(t, "the call to start", func() bool { return ts.Active.Load() == 1 })
	// A server-to-client request on the legacy stream cannot be answered.
	inject <- "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":\"srv-1\",\"method\":\"roots/list\"}\n\n"
	select {
	case err := <-done:
		var ce *mcp.CallError
		if !errors.Is(err, mcp.ErrServerRequestsUnsupported) || !errors.As(err, &ce) || ce.Kind != mcp.KindConnection || !strings.Contains(err.Error(), "roots/list") {
			t.Fatalf("err = %v, want ErrServerRequestsUnsupported naming roots/list", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("the call kept waiting for an answer the transport cannot give")
	}
}

// Over stdio a legacy elicitation/create reaches the client without the
// call's context: with one eliciting call in flight it goes to that call's
// session; with two, nobody can tell, so the manager's callback answers.
func TestStdioElicitationAttribution(t *testing.T) {
	var mgrAsked atomic.Int64
	m := newManager(t, mcp.ManagerConfig{Elicit: func(ctx context.Context, req elicit.Request) (elicit.Response, error) {
		mgrAsked.Add(1)
		return elicit.Response{Action: elicit.Accept, Content: map[string]any{"name": "manager"}}, nil
	}}, stdioServer("demo"))
	release := make(chan struct{})
	var sessAsked atomic.Int64
	answer := func(name string) elicit.Func {
		return func(ctx context.Context, req elicit.Request) (elicit.Response, error) {
			sessAsked.Add(1)
			<-release
			return elicit.Response{Action: elicit.Accept, Content: map[string]any{"name": name}}, nil
		}
	}
	ctx := context.Background()
	one := m.NewSession(mcp.Callbacks{Elicit: answer("one")})
	defer one.Close()
	close(release)
	res, err := one.CallTool(ctx, mcp.ToolCall{Server: "demo", Name: "ask"})
	if err != nil || res.Text() != "hello one x3 in green" {
		t.Fatalf("single eliciting call: %v %q", err, res.Text())
	}

	// a's request comes while a is the only call: it is a's. b's comes while
	// a still waits for its user: two calls, so the manager answers.
	hold := make(chan struct{})
	var aAsked atomic.Int64
	a := m.NewSession(mcp.Callbacks{Elicit: func(ctx context.Context, req elicit.Request) (elicit.Response, error) {
		aAsked.Add(1)
		<-hold
		return elicit.Response{Action: elicit.Accept, Content: map[string]any{"name": "a"}}, nil
	}})
	b := m.NewSession(mcp.Callbacks{Elicit: answer("b")})
	defer a.Close()
	defer b.Close()
	aText := make(chan string, 1)
	go func() {
		res, err := a.CallTool(ctx, mcp.ToolCall{Server: "demo", Name: "ask"})
		if err != nil {
			t.Error(err)
		}
		aText <- res.Text()
	}()
	waitFor(t, "a's elicitation", func() bool { return aAsked.Load() == 1 })
	res, err = b.CallTool(ctx, mcp.ToolCall{Server: "demo", Name: "ask"})
	if err != nil || res.Text() != "hello manager x3 in green" {
		t.Fatalf("b: %v %q, want the manager's answer", err, res.Text())
	}
	close(hold)
	if got := <-aText; got != "hello a x3 in green" {
		t.Errorf("a: %q", got)
	}
	if mgrAsked.Load() != 1 || sessAsked.Load() != 1 {
		t.Errorf("manager asked %d times, sessions %d; want 1 and 1", mgrAsked.Load(), sessAsked.Load())
	}
}
