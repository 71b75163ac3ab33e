package server_test

import (
	"context"
	"fmt"
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

	"github.com/agentgraph/agentgraph/agent/server"
)

// chromium returns a headless Chromium context with a fresh profile, or
// skips the test when no Chromium is installed.
func chromium(t *testing.T) context.Context {
	t.Helper()
	var path string
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			path = p
			break
		}
	}
	if path == "" {
		t.Skip("no Chromium found: install it (apt-get install -y chromium) to run the useStream browser test")
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(path), chromedp.NoSandbox, chromedp.Headless, chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true), chromedp.Flag("no-first-run", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true), chromedp.UserDataDir(t.TempDir()))
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelBrowser := chromedp.NewContext(actx)
	// A guard against a hung browser, far above what the test takes.
	ctx, cancelTimeout := context.WithTimeout(ctx, 3*time.Minute)
	t.Cleanup(func() {
		// chromedp.Cancel waits for the browser to close; on a context that
		// never started one (the test skipped or failed before its first
		// action) it would wait forever, so only a started browser is
		// closed that way.
		if c := chromedp.FromContext(ctx); c != nil && c.Browser != nil {
			_ = chromedp.Cancel(ctx)
		}
		cancelTimeout()
		cancelBrowser()
		cancelAlloc()
	})
	return ctx
}

// bundlePage builds testdata/browser/app.jsx (React and useStream) with
// esbuild from testdata/npm, skipping the test when the packages are
// missing, and returns the bundle.
func bundlePage(t *testing.T) []byte {
	t.Helper()
	modules := nodeModules(t)
	esbuild := filepath.Join(modules, ".bin", "esbuild")
	for _, p := range []string{esbuild, filepath.Join(modules, "react"), filepath.Join(modules, "react-dom")} {
		if _, err := os.Stat(p); err != nil {
			t.Skipf("%s is not installed; run: npm ci --prefix agent/server/testdata/npm", filepath.Base(p))
		}
	}
	out := filepath.Join(t.TempDir(), "app.js")
	cmd := exec.Command(esbuild, filepath.Join("testdata", "browser", "app.jsx"), "--bundle", "--jsx=automatic", "--format=esm",
		`--define:process.env.NODE_ENV="production"`, "--log-level=warning", "--outfile="+out)
	cmd.Env = append(os.Environ(), "NODE_PATH="+modules)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("esbuild: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// requestLog records the API requests the page makes.
type requestLog struct {
	mu   sync.Mutex
	reqs []string // "METHOD path [Last-Event-ID]"
	seen chan struct{}
}

func (l *requestLog) wrap(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodOptions {
			entry := r.Method + " " + r.URL.Path
			if v, ok := r.Header["Last-Event-Id"]; ok {
				entry += " [Last-Event-ID: " + strings.Join(v, ",") + "]"
			}
			l.mu.Lock()
			l.reqs = append(l.reqs, entry)
			l.mu.Unlock()
			select {
			case l.seen <- struct{}{}:
			default:
			}
		}
		h.ServeHTTP(w, r)
	})
}

func (l *requestLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.reqs)
}

// await waits until a request matching ok has been made.
func (l *requestLog) await(ctx context.Context, ok func(string) bool) (string, error) {
	for {
		l.mu.Lock()
		i := slices.IndexFunc(l.reqs, ok)
		var r string
		if i >= 0 {
			r = l.reqs[i]
		}
		l.mu.Unlock()
		if i >= 0 {
			return r, nil
		}
		select {
		case <-l.seen:
		case <-ctx.Done():
			l.mu.Lock()
			defer l.mu.Unlock()
			return "", fmt.Errorf("%w; requests: %v", ctx.Err(), l.reqs)
		}
	}
}

// TestUseStreamInBrowser drives a React page on useStream of
// @langchain/langgraph-sdk/react in headless Chromium, served from
// another origin than the API (CORS, x-api-key): submit streams the
// draft, the interrupt shows, resuming it finishes the run; then a run
// left waiting is rejoined after a page reload (reconnectOnMount: GET
// .../runs/{run_id}/stream with Last-Event-ID -1) and its end is shown.
func TestUseStreamInBrowser(t *testing.T) {
	ctx := chromium(t)
	app := bundlePage(t)
	ts := newTestServer(t, server.Config{Authenticate: apiKeys(t, map[string]string{"browser-key-0123456789": "tester"})})
	log := &requestLog{seen: make(chan struct{}, 1)}
	api := httptest.NewServer(log.wrap(ts.Server))
	t.Cleanup(func() { api.CloseClientConnections(); api.Close() })
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/app.js":
			w.Header().Set("Content-Type", "text/javascript")
			_, _ = w.Write(app)
		default:
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, `<!doctype html><meta charset="utf-8"><title>useStream</title><div id="root"></div><script type="module" src="/app.js"></script>`)
		}
	}))
	t.Cleanup(page.Close)
	// The page is on another port than the API: another origin.
	open := func(assistant string) string {
		return page.URL + "/?api=" + api.URL + "&key=browser-key-0123456789&assistant=" + assistant
	}
	messages := `[...document.querySelectorAll("#messages li")].map((li) => li.textContent)`
	has := func(text string) string {
		return fmt.Sprintf(`%s.includes(%q)`, messages, text)
	}

	poll := func(js string) error {
		_, err := chromedp.Run(ctx, chromedp.Poll[bool](js))
		return err
	}
	shown := func() []string {
		msgs, _ := chromedp.Run(context.WithoutCancel(ctx), chromedp.Evaluate[[]string](messages))
		return msgs
	}

	// Submit, stream, interrupt, resume.
	err := chromedp.Do(ctx,
		chromedp.Navigate(open("agent")),
		chromedp.WaitVisible(chromedp.CSS("#send")),
		chromedp.SendKeys(chromedp.CSS("#text"), "hi"),
		chromedp.Click(chromedp.CSS("#send")),
		chromedp.WaitVisible(chromedp.CSS("#question")),
	)
	if err == nil {
		err = poll(has("draft for: hi"))
	}
	if err != nil {
		t.Fatalf("submit: %v; messages %q; requests %v", err, shown(), log.all())
	}
	question, err := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#question")))
	if err != nil || question != "approve?" {
		t.Fatalf("the interrupt shows %q (%v); want approve?", question, err)
	}
	err = chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#approve")))
	if err == nil {
		err = poll(has("final: yes") + ` && !document.querySelector("#question")`)
	}
	if err != nil {
		t.Fatalf("resume: %v; messages %q; requests %v", err, shown(), log.all())
	}
	if errText, _ := chromedp.Run(ctx, chromedp.Text(chromedp.CSS("#error"))); errText != "" {
		t.Fatalf("the page shows the error %q", errText)
	}
	if msgs, want := shown(), []string{"hi", "draft for: hi", "final: yes"}; !slices.Equal(msgs, want) {
		t.Fatalf("messages %q; want %q", msgs, want)
	}
	if _, err := log.await(ctx, func(r string) bool {
		return strings.HasPrefix(r, "POST /threads/") && strings.HasSuffix(r, "/runs/stream")
	}); err != nil {
		t.Fatal(err)
	}

	// Rejoin after reload: the slow graph's node waits until the test
	// releases it, which it does only once the reloaded page has rejoined.
	err = chromedp.Do(ctx,
		chromedp.Navigate(open("slow")),
		chromedp.WaitVisible(chromedp.CSS("#send")),
		chromedp.SendKeys(chromedp.CSS("#text"), "wait"),
		chromedp.Click(chromedp.CSS("#send")),
	)
	if err != nil {
		t.Fatal(err)
	}
	tid, err := chromedp.Run(ctx, chromedp.Poll[string](`document.querySelector("#thread").textContent`))
	if err != nil {
		t.Fatal(err)
	}
	for !ts.gates.waiting(tid) {
		select {
		case <-ctx.Done():
			t.Fatalf("the slow node never started on thread %s", tid)
		case <-time.After(10 * time.Millisecond):
		}
	}
	url, err := chromedp.Run(ctx, chromedp.Location())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(url, "thread="+tid) {
		t.Fatalf("page URL %s does not name thread %s", url, tid)
	}
	if err := chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#send"))); err != nil {
		t.Fatal(err)
	}
	join, err := log.await(ctx, func(r string) bool {
		return strings.HasPrefix(r, "GET /threads/"+tid+"/runs/") && strings.Contains(r, "/stream")
	})
	if err != nil {
		t.Fatalf("the reloaded page did not rejoin the run: %v", err)
	}
	if !strings.HasSuffix(join, "[Last-Event-ID: -1]") {
		t.Errorf("rejoin request %q; want Last-Event-ID -1", join)
	}
	ts.gates.release(tid)
	if err := poll(has("slow done: wait") + ` && document.querySelector("#loading").textContent === "idle"`); err != nil {
		t.Fatalf("after the rejoin, the run's end was not shown: %v; requests %v", err, log.all())
	}
}
