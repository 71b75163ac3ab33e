package chatbot_test

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/agentgraph/agentgraph/examples/chatbot"
)

// browser returns a headless Chromium context, or skips the test when no
// Chromium is installed.
func browser(t *testing.T) context.Context {
	t.Helper()
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		t.Skip("no Chromium found: install it (apt-get install -y chromium) to run the page's browser test")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.Headless)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(actx)
	ctx, cancelTimeout := context.WithTimeout(ctx, 60*time.Second)
	t.Cleanup(func() {
		// chromedp.Cancel waits for the browser to close; on a context that
		// never started one it would wait forever.
		if c := chromedp.FromContext(ctx); c != nil && c.Browser != nil {
			_ = chromedp.Cancel(ctx)
		}
		cancelTimeout()
		cancelBrowser()
		cancelAlloc()
	})
	return ctx
}

// TestPageInBrowser drives the chat page in headless Chromium: a question
// shows the supervisor's decision, the tool's progress and the answer; a
// demo booking shows the tool's question as a form, which the test fills
// in and sends, and the answer confirms the booking.
func TestPageInBrowser(t *testing.T) {
	ctx := browser(t)
	_, srv := newServer(t, chatbot.Config{})

	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("#demo")),
		chromedp.SendKeys(chromedp.CSS("#message"), "What is 15% of 240?"),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS(".turn:nth-of-type(1) .usage:not(:empty)")),
	)
	if err != nil {
		t.Fatal(err)
	}
	demo := text(t, ctx, "#demo")
	progress := text(t, ctx, ".turn:nth-of-type(1) .progress")
	answer := text(t, ctx, ".turn:nth-of-type(1) .answer")
	usage := text(t, ctx, ".turn:nth-of-type(1) .usage")
	if !strings.Contains(demo, "DEMO MODE") {
		t.Errorf("banner %q", demo)
	}
	for _, want := range []string{"call_tool", "calculate"} {
		if !strings.Contains(progress, want) {
			t.Errorf("progress lacks %q:\n%s", want, progress)
		}
	}
	if !strings.Contains(answer, "= 36") {
		t.Errorf("answer:\n%s", answer)
	}
	if !strings.Contains(usage, "tokens") {
		t.Errorf("usage %q", usage)
	}

	date := nextWeekday()
	err = chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS("#message"), "I would like to book a demo"),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS(`form.elicit input[name="email"]`)),
		chromedp.SendKeys(chromedp.CSS(`form.elicit input[name="email"]`), "ada@example.com"),
		chromedp.SetValue(chromedp.CSS(`form.elicit input[name="date"]`), date),
		chromedp.Click(chromedp.CSS(`form.elicit button[type="submit"]`)),
		chromedp.WaitVisible(chromedp.CSS(".turn:nth-of-type(2) .usage:not(:empty)")),
	)
	if err != nil {
		t.Fatal(err)
	}
	answer = text(t, ctx, ".turn:nth-of-type(2) .answer")
	if !strings.Contains(answer, "DEMO-") || !strings.Contains(answer, date) {
		t.Errorf("booking answer:\n%s", answer)
	}
	if *screenshot {
		err := chromedp.Do(ctx,
			chromedp.SendKeys(chromedp.CSS("#message"), "Compare our pricing to competitors"),
			chromedp.Click(chromedp.CSS("#send")),
			chromedp.WaitVisible(chromedp.CSS(".turn:nth-of-type(3) .usage:not(:empty)")),
		)
		if err != nil {
			t.Fatal(err)
		}
		png, err := chromedp.Run(ctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join("testdata", "page.png"), png, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

var screenshot = flag.Bool("screenshot", false, "save a screenshot of the page in testdata/page.png")

// text returns the text content of the first element matching the CSS
// selector.
func text(t *testing.T, ctx context.Context, selector string) string {
	t.Helper()
	s, err := chromedp.Run(ctx, chromedp.TextContent(chromedp.CSS(selector)))
	if err != nil {
		t.Fatalf("text of %s: %v", selector, err)
	}
	return s
}

// TestPageUploadsDocument uploads a file with the page's file input: the
// document is listed, shown ready once processed, and a question about it
// is answered from it.
func TestPageUploadsDocument(t *testing.T) {
	ctx := browser(t)
	_, srv := newServer(t, chatbot.Config{})
	file := filepath.Join(t.TempDir(), "office.md")
	if err := os.WriteFile(file, []byte(parrot), 0o644); err != nil {
		t.Fatal(err)
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("#file")),
		chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{file}),
		chromedp.WaitVisible(chromedp.CSS(`#doclist li[data-status="ready"]`)),
		chromedp.SendKeys(chromedp.CSS("#message"), "What does my uploaded document say about the office parrot?"),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS(".turn:nth-of-type(1) .usage:not(:empty)")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if docs := text(t, ctx, "#doclist"); !strings.Contains(docs, "office.md (ready)") {
		t.Errorf("document list %q", docs)
	}
	if progress := text(t, ctx, ".turn:nth-of-type(1) .progress"); !strings.Contains(progress, chatbot.LoadDocumentTool) {
		t.Errorf("progress lacks load_document:\n%s", progress)
	}
	if answer := text(t, ctx, ".turn:nth-of-type(1) .answer"); !strings.Contains(answer, "Captain Biscuit") {
		t.Errorf("answer:\n%s", answer)
	}
	err = chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#doclist li button`)),
		chromedp.WaitNotPresent(chromedp.CSS(`#doclist li`)),
	)
	if err != nil {
		t.Fatal(err)
	}
}

// chatBodies wraps the bot's handler and records the JSON body of every
// POST /api/v1/chat.
type chatBodies struct {
	h  http.Handler
	mu sync.Mutex
	// bodies are the decoded bodies, in order.
	bodies []map[string]any
}

func (c *chatBodies) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method == http.MethodPost && r.URL.Path == "/api/v1/chat" {
		b, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var body map[string]any
		_ = json.Unmarshal(b, &body)
		c.mu.Lock()
		c.bodies = append(c.bodies, body)
		c.mu.Unlock()
		r.Body = io.NopCloser(bytes.NewReader(b))
	}
	c.h.ServeHTTP(w, r)
}

func (c *chatBodies) all() []map[string]any {
	c.mu.Lock()
	defer c.mu.Unlock()
	return slices.Clone(c.bodies)
}

// TestPageSendsUserID checks the page's user field: with cognition on it
// is shown, remembered across reloads, and sent as the chat requests'
// user_id, so the bot knows the user in a new conversation; with
// cognition off it is hidden and no user_id is sent, even with one
// remembered.
func TestPageSendsUserID(t *testing.T) {
	t.Run("cognition on", func(t *testing.T) {
		ctx := browser(t)
		bot, _ := newServer(t, chatbot.Config{Cognition: &chatbot.CognitionConfig{}})
		rec := &chatBodies{h: bot.Handler()}
		srv := httptest.NewServer(rec)
		t.Cleanup(srv.Close)
		err := chromedp.Do(ctx,
			chromedp.Navigate(srv.URL+"/"),
			chromedp.WaitVisible(chromedp.CSS("#user")),
			chromedp.SendKeys(chromedp.CSS("#user"), "ada"),
			chromedp.SendKeys(chromedp.CSS("#message"), "My name is Ada and I prefer short answers."),
			chromedp.Click(chromedp.CSS("#send")),
			chromedp.WaitVisible(chromedp.CSS(".turn:nth-of-type(1) .usage:not(:empty)")),
		)
		if err != nil {
			t.Fatal(err)
		}
		waitLearned(t, bot.Cognition())
		// A new conversation (sessionStorage cleared) after a reload: the
		// user is remembered, and so is what they said.
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`sessionStorage.clear(), true`)); err != nil {
			t.Fatal(err)
		}
		if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#user"))); err != nil {
			t.Fatal(err)
		}
		user, err := chromedp.Run(ctx, chromedp.Value(chromedp.CSS("#user")))
		if err != nil {
			t.Fatal(err)
		}
		err = chromedp.Do(ctx,
			chromedp.SendKeys(chromedp.CSS("#message"), "What is my name?"),
			chromedp.Click(chromedp.CSS("#send")),
			chromedp.WaitVisible(chromedp.CSS(".turn:nth-of-type(1) .usage:not(:empty)")),
		)
		if err != nil {
			t.Fatal(err)
		}
		if user != "ada" {
			t.Errorf("user field after a reload = %q, want the remembered ada", user)
		}
		if answer := text(t, ctx, ".turn:nth-of-type(1) .answer"); !strings.Contains(answer, "Ada") {
			t.Errorf("answer in a new conversation: %q, want the learned name", answer)
		}
		bodies := rec.all()
		if len(bodies) != 2 {
			t.Fatalf("chat requests %v, want 2", bodies)
		}
		for i, b := range bodies {
			if b["user_id"] != "ada" {
				t.Errorf("chat request %d: %v, want user_id ada", i+1, b)
			}
		}
		if bodies[0]["conversation_id"] == bodies[1]["conversation_id"] {
			t.Errorf("both requests in conversation %v, want a new one after the reload", bodies[0]["conversation_id"])
		}
	})
	t.Run("cognition off", func(t *testing.T) {
		ctx := browser(t)
		bot, _ := newServer(t, chatbot.Config{})
		rec := &chatBodies{h: bot.Handler()}
		srv := httptest.NewServer(rec)
		t.Cleanup(srv.Close)
		if err := chromedp.Do(ctx, chromedp.Navigate(srv.URL+"/")); err != nil {
			t.Fatal(err)
		}
		if _, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`localStorage.setItem("user", "ada"), true`)); err != nil {
			t.Fatal(err)
		}
		// Once the demo banner shows, the page has read /health.
		if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#demo"))); err != nil {
			t.Fatal(err)
		}
		hidden, err := chromedp.Run(ctx, chromedp.Evaluate[bool](`getComputedStyle(document.getElementById("userbox")).display === "none"`))
		if err != nil {
			t.Fatal(err)
		}
		err = chromedp.Do(ctx,
			chromedp.SendKeys(chromedp.CSS("#message"), "What is 15% of 240?"),
			chromedp.Click(chromedp.CSS("#send")),
			chromedp.WaitVisible(chromedp.CSS(".turn:nth-of-type(1) .usage:not(:empty)")),
		)
		if err != nil {
			t.Fatal(err)
		}
		if !hidden {
			t.Error("the user field is shown with cognition off")
		}
		bodies := rec.all()
		if len(bodies) != 1 {
			t.Fatalf("chat requests %v, want 1", bodies)
		}
		if _, ok := bodies[0]["user_id"]; ok {
			t.Errorf("chat request %v carries a user_id with cognition off", bodies[0])
		}
	})
}

// TestPageShowsServerStringsAsText: every string the server gives the page
// (a document's name in the list and its delete button's title, an
// upload's error naming the file, the question in the transcript and the
// conversation list, the steps and an answer from the document) is shown as text,
// never parsed as HTML: files and a question named with markup that runs
// script when parsed create no element and run nothing.
func TestPageShowsServerStringsAsText(t *testing.T) {
	ctx := browser(t)
	_, srv := newServer(t, chatbot.Config{})
	dir := t.TempDir()
	const (
		good     = `<img src=x onerror=window.__xss=(window.__xss||0)+1>.md`
		bad      = `<svg onload=window.__xss=(window.__xss||0)+10>.qqq`
		question = `Hello! <img src=x onerror=window.__xss=(window.__xss||0)+100><b>`
	)
	for _, name := range []string{good, bad} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(parrot), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err := chromedp.Do(ctx,
		chromedp.Navigate(srv.URL+"/"),
		chromedp.WaitVisible(chromedp.CSS("#file")),
		chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{filepath.Join(dir, good)}),
		chromedp.WaitVisible(chromedp.CSS(`#doclist li[data-status="ready"]`)),
		chromedp.SetUploadFiles(chromedp.CSS("#file"), []string{filepath.Join(dir, bad)}),
		chromedp.WaitVisible(chromedp.CSS(`#docerror:not(:empty)`)),
		chromedp.SendKeys(chromedp.CSS("#message"), question),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS(".turn:nth-of-type(1) .usage:not(:empty)")),
		chromedp.Poll[chromedp.Void](`document.querySelector("#conversations").textContent.includes("<img")`),
		chromedp.SendKeys(chromedp.CSS("#message"), "What does my uploaded document say about the office parrot?"),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS(".turn:nth-of-type(2) .usage:not(:empty)")),
	)
	if err != nil {
		t.Fatal(err)
	}
	if docs := text(t, ctx, "#doclist"); !strings.Contains(docs, good+" (ready)") {
		t.Errorf("document list %q; want the name as text", docs)
	}
	if title := eval[string](t, ctx, `document.querySelector("#doclist li button").title`); title != "delete "+good {
		t.Errorf("delete button's title %q", title)
	}
	if e := text(t, ctx, "#docerror"); !strings.Contains(e, bad) {
		t.Errorf("upload error %q; want it to name the file as text", e)
	}
	if q := text(t, ctx, ".turn:nth-of-type(1) .user"); q != question {
		t.Errorf("question shown as %q", q)
	}
	if progress := text(t, ctx, ".turn:nth-of-type(2) .progress"); !strings.Contains(progress, chatbot.LoadDocumentTool) {
		t.Errorf("steps lack load_document:\n%s", progress)
	}
	if answer := text(t, ctx, ".turn:nth-of-type(2) .answer"); !strings.Contains(answer, "Captain Biscuit") {
		t.Errorf("answer:\n%s\nwant it to quote the document", answer)
	}
	// Give an image that failed to load the time to fire its onerror (an
	// element made of a string is found below whatever the time).
	if err := chromedp.Do(ctx, chromedp.Sleep(200*time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if n := eval[int](t, ctx, `document.querySelectorAll("img, svg, b, script:not(:first-of-type), iframe, object").length`); n != 0 {
		t.Errorf("%d elements were made of server-given strings; want none", n)
	}
	if ran := eval[bool](t, ctx, `window.__xss !== undefined`); ran {
		t.Errorf("a server-given string ran script: window.__xss = %v", eval[any](t, ctx, `window.__xss`))
	}
}
