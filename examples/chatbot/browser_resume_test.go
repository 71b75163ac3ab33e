package chatbot_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/chromedp/chromedp"
	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
)

// cutter wraps the bot's handler: it lets the first POST /api/v1/chat
// send `after` events, sends the id of the last of them on passed, then
// holds the connection until cut is closed and breaks it, as a flaky
// network would. It holds the first GET /api/v1/chat/stream/{id} until
// hold is closed (so that a test can see the page's reconnecting state),
// and records the Last-Event-ID header of every such GET.
type cutter struct {
	h      http.Handler
	after  int
	passed chan string
	cut    chan struct{}
	hold   chan struct{}
	// gone, if set, answers every GET /api/v1/chat/stream/{id} with 404,
	// as for a turn whose stream the server no longer keeps.
	gone bool

	mu      sync.Mutex
	posts   int
	resumes []string
}

func newCutter(h http.Handler, after int) *cutter {
	return &cutter{h: h, after: after, passed: make(chan string, 1), cut: make(chan struct{}), hold: make(chan struct{})}
}

func (c *cutter) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch {
	case r.Method == http.MethodPost && r.URL.Path == "/api/v1/chat":
		c.mu.Lock()
		c.posts++
		first := c.posts == 1
		c.mu.Unlock()
		if first {
			w = &cutWriter{ResponseWriter: w, c: c, left: c.after, done: r.Context().Done()}
		}
	case r.Method == http.MethodGet && strings.HasPrefix(r.URL.Path, "/api/v1/chat/stream/"):
		c.mu.Lock()
		c.resumes = append(c.resumes, r.Header.Get("Last-Event-ID"))
		first := len(c.resumes) == 1
		c.mu.Unlock()
		if c.gone {
			http.Error(w, `{"error": "gone"}`, http.StatusNotFound)
			return
		}
		if first {
			select {
			case <-c.hold:
			case <-r.Context().Done():
				return
			}
		}
	}
	c.h.ServeHTTP(w, r)
}

func (c *cutter) lastEventIDs() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.resumes...)
}

var errCut = errors.New("test: connection cut")

// cutWriter passes `left` SSE events through; its next write waits for the
// cutter's cut and closes the TCP connection in the middle of the chunked
// response instead.
type cutWriter struct {
	http.ResponseWriter
	c    *cutter
	left int
	done <-chan struct{}
	cut  bool
}

func (w *cutWriter) Write(b []byte) (int, error) {
	if w.cut {
		return 0, errCut
	}
	if w.left == 0 {
		w.cut = true
		select {
		case <-w.c.cut:
		case <-w.done:
			return 0, errCut
		}
		conn, _, err := http.NewResponseController(w.ResponseWriter).Hijack()
		if err != nil {
			return 0, err
		}
		conn.Close()
		return 0, errCut
	}
	// The stream writes whole messages; count those that are events (not
	// heartbeat comments), and pass at most `left` of them.
	end := len(b)
	for off := 0; off < len(b); {
		i := bytes.Index(b[off:], []byte("\n\n"))
		if i < 0 {
			break
		}
		if id, ok := bytes.CutPrefix(b[off:off+i], []byte("id: ")); ok {
			w.left--
			if w.left == 0 {
				id, _, _ = bytes.Cut(id, []byte("\n"))
				w.c.passed <- string(id)
				end = off + i + 2
				break
			}
		}
		off += i + 2
	}
	n, err := w.ResponseWriter.Write(b[:end])
	if err == nil && end < len(b) {
		// The rest is lost with the connection.
		return n, errCut
	}
	return n, err
}

func (w *cutWriter) FlushError() error {
	if w.cut {
		return errCut
	}
	return http.NewResponseController(w.ResponseWriter).Flush()
}

func (w *cutWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// pageLines is the text of the progress lines of the page's first turn,
// without the lines of progress bars, and the number of bars.
const pageLines = `(() => {
  const lines = [], bars = [];
  for (const d of document.querySelectorAll(".turn .progress > div")) {
    if (d.querySelector(".bar")) bars.push(d.textContent); else lines.push(d.textContent);
  }
  return {lines, bars};
})()`

// wantLines is what the page shows, one line per event, for the events of
// a turn without tool progress.
func wantLines(evs []event.Event) []string {
	var out []string
	for _, ev := range evs {
		switch p := ev.Payload.(type) {
		case chatevent.SupervisorThinking:
			out = append(out, "… "+p.Message)
		case chatevent.SupervisorDecided:
			out = append(out, "→ "+p.Action+": "+p.Message)
		case chatevent.ToolStart:
			out = append(out, "⚙ "+p.Tool+": "+p.Message)
		case chatevent.ToolComplete:
			out = append(out, "✓ "+p.Tool)
		case chatevent.ToolError:
			out = append(out, "✗ "+p.Tool+": "+p.Error)
		case chatevent.WorkflowCreated:
			out = append(out, fmt.Sprintf("▤ plan of %d steps: %s", p.Steps, p.Goal))
		case chatevent.WorkflowStepStart:
			out = append(out, fmt.Sprintf("▶ step %d: %s", p.Step, p.Name))
		case chatevent.WorkflowStepComplete:
			out = append(out, fmt.Sprintf("■ step %d %s", p.Step, cmpOr(p.Status, "done")))
		}
	}
	return out
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestPageResumesStream cuts the page's chat connection in the middle of a
// turn: the page shows that it is reconnecting, resumes the turn with GET
// /api/v1/chat/stream/{request_id} and the id of the last event it got in
// Last-Event-ID, and in the end shows every event of the turn exactly once:
// the whole answer, each progress line once, one bar per tool.
func TestPageResumesStream(t *testing.T) {
	ctx := browser(t)
	bot, direct := newServer(t, chatbot.Config{})
	const after = 18
	c := newCutter(bot.Handler(), after)
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)

	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("#demo")),
		chromedp.SendKeys(chromedp.CSS("#message"), "Compare our pricing to competitors"),
		chromedp.Click(chromedp.CSS("#send")),
	)
	if err != nil {
		t.Fatal(err)
	}
	// Cut the connection once the page has shown the events sent on it.
	var passed string
	select {
	case passed = <-c.passed:
	case <-ctx.Done():
		t.Fatal("the turn did not send its first events")
	}
	err = chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(`.turn[data-last-event-id="`+passed+`"]`)),
		chromedp.Func(func(context.Context, *chromedp.Target) error { close(c.cut); return nil }),
		chromedp.WaitVisible(chromedp.CSS(`.turn[data-state="reconnecting"] .status`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if status := text(t, ctx, ".turn .status"); !strings.Contains(status, "reconnecting") {
		t.Errorf("status while the connection is down: %q", status)
	}
	close(c.hold)
	if err := chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`.turn[data-state="done"]`))); err != nil {
		t.Fatal(err)
	}
	requestID, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(".turn"), "data-request-id"))
	if err != nil {
		t.Fatal(err)
	}
	reconnects, err := chromedp.Run(ctx, chromedp.AttributeValue(chromedp.CSS(".turn"), "data-reconnects"))
	if err != nil {
		t.Fatal(err)
	}
	// The answer as the page holds it (the markdown it renders).
	answer, err := chromedp.Run(ctx, chromedp.Evaluate[string](`document.querySelector(".turn").markdown()`))
	if err != nil {
		t.Fatal(err)
	}
	shown, err := chromedp.Run(ctx, chromedp.Evaluate[struct{ Lines, Bars []string }](pageLines))
	if err != nil {
		t.Fatal(err)
	}

	// The turn's events, all of them, from the server's replay buffer.
	resp, evs := resume(t, direct.URL, requestID.Value, "")
	if resp.StatusCode != http.StatusOK || len(evs) <= after {
		t.Fatalf("GET the turn's stream: %s, %d events", resp.Status, len(evs))
	}
	var want strings.Builder
	progressTools := map[string]bool{}
	for _, ev := range evs {
		switch p := ev.Payload.(type) {
		case chatevent.ResponseChunk:
			want.WriteString(p.Content)
		case chatevent.ToolProgress:
			progressTools[p.Tool] = true
		}
	}
	if want.Len() == 0 || answer != want.String() {
		t.Errorf("the page's answer differs from the turn's chunks:\npage: %q\nturn: %q", answer, want.String())
	}
	if diff := cmp.Diff(wantLines(evs), shown.Lines); diff != "" {
		t.Errorf("progress lines (-turn +page):\n%s", diff)
	}
	if len(shown.Bars) != len(progressTools) {
		t.Errorf("progress bars %q, want one for each of %v", shown.Bars, progressTools)
	}
	if reconnects.Value != "1" {
		t.Errorf("the page reconnected %q times, want 1", reconnects.Value)
	}
	if want := fmt.Sprint(evs[after-1].Seq); passed != want {
		t.Errorf("the cut connection's last event has id %s, want %s (the %dth event's)", passed, want, after)
	}
	if ids := c.lastEventIDs(); len(ids) == 0 || ids[0] != passed {
		t.Errorf("Last-Event-ID of the resuming GETs: %q, want first %q (the last event the page got)", ids, passed)
	}
}

// TestPageIgnoresLateProgress feeds the page's turn events by hand: progress
// that arrives after its tool's tool.complete (late MCP progress) leaves the
// completed tool's display as it was, and a new call of the tool gets a new
// bar.
func TestPageIgnoresLateProgress(t *testing.T) {
	ctx := browser(t)
	_, srv := newServer(t, chatbot.Config{})
	type result struct {
		Completed, AfterLate, OnlyLate, Restarted string
		Bars, DoneBars                            int
	}
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#demo"))); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[result](`(() => {
  const t = newTurn("late progress");
  const p = t.querySelector(".progress");
  t.handle({type: "tool.start", tool: "web_search"});
  t.handle({type: "tool.progress", tool: "web_search", progress: 0.4, message: "searching"});
  t.handle({type: "tool.complete", tool: "web_search", content_count: 1});
  const completed = p.innerHTML;
  t.handle({type: "tool.progress", tool: "web_search", progress: 0.7, message: "late"});
  const afterLate = p.innerHTML;
  t.handle({type: "tool.start", tool: "calculate"});
  t.handle({type: "tool.complete", tool: "calculate", content_count: 1});
  const before = p.innerHTML;
  t.handle({type: "tool.progress", tool: "calculate", progress: 1, message: "late"});
  const onlyLate = p.innerHTML === before ? "unchanged" : p.innerHTML;
  t.handle({type: "tool.start", tool: "web_search"});
  t.handle({type: "tool.progress", tool: "web_search", progress: 0.2, message: "again"});
  return {Completed: completed, AfterLate: afterLate, OnlyLate: onlyLate, Restarted: p.textContent,
    Bars: p.querySelectorAll(".bar").length, DoneBars: p.querySelectorAll(".bar.done").length};
})()`))
	if err != nil {
		t.Fatal(err)
	}
	if got.AfterLate != got.Completed {
		t.Errorf("late progress changed the completed tool's display:\nbefore: %s\nafter:  %s", got.Completed, got.AfterLate)
	}
	if !strings.Contains(got.Completed, "width: 100%") || strings.Contains(got.AfterLate, "late") {
		t.Errorf("the completed tool's bar is not full, or shows late progress: %s", got.AfterLate)
	}
	if got.OnlyLate != "unchanged" {
		t.Errorf("late progress of a tool without a bar drew one: %s", got.OnlyLate)
	}
	if got.Bars != 2 || got.DoneBars != 1 || !strings.Contains(got.Restarted, "again") {
		t.Errorf("after the tool started again: %d bars (%d done), text %q; want a new bar", got.Bars, got.DoneBars, got.Restarted)
	}
}

// TestPageElicitationKinds feeds the page questions by hand and captures
// the answers it posts: a yes/no question and a choice get one button per
// option and answer with the option; a form sends booleans and numbers as
// JSON values.
func TestPageElicitationKinds(t *testing.T) {
	ctx := browser(t)
	_, srv := newServer(t, chatbot.Config{})
	if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.CSS("#demo"))); err != nil {
		t.Fatal(err)
	}
	// Capture the answers instead of sending them: no turn is waiting.
	_, err := chromedp.Run(ctx, chromedp.Evaluate[any](`(() => {
  window.answers = [];
  window.fetch = async (url, init) => {
    window.answers.push({url, body: JSON.parse(init.body)});
    return new Response(JSON.stringify({status: "delivered"}), {status: 200});
  };
  const t = newTurn("questions");
  t.handle({type: "elicitation.request", elicitation_id: "e1", message: "Delete it?", options: ["yes", "no"]});
  t.handle({type: "elicitation.request", elicitation_id: "e2", message: "Which colour?", options: ["red", "green", "blue"]});
  t.handle({type: "elicitation.request", elicitation_id: "e3", message: "Details", schema: {type: "object", properties: {
    seats: {type: "integer", title: "Seats", default: 2}, remind: {type: "boolean", title: "Remind me"},
    size: {type: "string", enum: ["s", "l"], default: "l"}}}});
  return null;
})()`))
	if err != nil {
		t.Fatal(err)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`form[data-elicitation-id="e1"] button:nth-of-type(2)`)), // "no"
		chromedp.WaitNotPresent(chromedp.CSS(`form[data-elicitation-id="e1"]`)),
		chromedp.Click(chromedp.CSS(`form[data-elicitation-id="e2"] button:nth-of-type(3)`)), // "blue"
		chromedp.WaitNotPresent(chromedp.CSS(`form[data-elicitation-id="e2"]`)),
		chromedp.Click(chromedp.CSS(`form[data-elicitation-id="e3"] input[name="remind"]`)),
		chromedp.Click(chromedp.CSS(`form[data-elicitation-id="e3"] button[type="submit"]`)),
		chromedp.WaitNotPresent(chromedp.CSS("form.elicit")),
	)
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		URL  string
		Body map[string]any
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[[]answer](`window.answers`))
	if err != nil {
		t.Fatal(err)
	}
	want := []answer{
		{"api/v1/elicitation/respond", map[string]any{"elicitation_id": "e1", "action": "accept", "content": map[string]any{"answer": "no"}}},
		{"api/v1/elicitation/respond", map[string]any{"elicitation_id": "e2", "action": "accept", "content": map[string]any{"answer": "blue"}}},
		{"api/v1/elicitation/respond", map[string]any{"elicitation_id": "e3", "action": "accept", "content": map[string]any{"seats": 2.0, "remind": true, "size": "l"}}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("answers posted (-want +got):\n%s", diff)
	}
	if s := text(t, ctx, ".turn .progress"); strings.Count(s, "✓ answered") != 3 {
		t.Errorf("progress after answering:\n%s", s)
	}
}

// TestPageStreamGone: when the turn's stream is no longer on the server,
// the page stops reconnecting and says so.
func TestPageStreamGone(t *testing.T) {
	ctx := browser(t)
	bot, _ := newServer(t, chatbot.Config{})
	c := newCutter(bot.Handler(), 3)
	c.gone = true
	close(c.cut)
	srv := httptest.NewServer(c)
	t.Cleanup(srv.Close)
	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("#demo")),
		chromedp.SendKeys(chromedp.CSS("#message"), "Compare our pricing to competitors"),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS(`.turn[data-state="failed"]`)),
	)
	if err != nil {
		t.Fatal(err)
	}
	if s := text(t, ctx, ".turn .answer"); !strings.Contains(s, "no longer available") {
		t.Errorf("answer after the stream was gone: %q", s)
	}
	if ids := c.lastEventIDs(); len(ids) != 1 {
		t.Errorf("the page tried to resume %d times (%q), want once: 404 is final", len(ids), ids)
	}
}
