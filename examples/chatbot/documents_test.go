package chatbot_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"net/http/httptest"
	"net/textproto"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/document"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/operator"
)

// parrot is a document with facts no tool of the bot knows.
const parrot = `# Office notes

The office parrot is named Captain Biscuit and lives in meeting room 4B.
Captain Biscuit eats sunflower seeds at 10:30 every morning.

# Parking

Visitors park on level 2 of the Harbour Street garage; the code for the barrier is 7731.`

// upload posts a JSON upload and returns the response's status and body.
func upload(t *testing.T, srv *httptest.Server, body any) (int, map[string]any, http.Header) {
	t.Helper()
	resp := postJSON(t, srv.URL+"/api/v1/documents", body)
	defer resp.Body.Close()
	var out map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("POST /api/v1/documents: %s: decoding the body: %v", resp.Status, err)
	}
	return resp.StatusCode, out, resp.Header
}

// getDoc gets url and decodes its JSON body into v; it returns the
// status code.
func getDoc(t *testing.T, url string, v any) int {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if err := json.NewDecoder(resp.Body).Decode(v); err != nil {
		t.Fatalf("GET %s: %s: decoding the body: %v", url, resp.Status, err)
	}
	return resp.StatusCode
}

// waitReady polls the document's status until it is ready or failed.
func waitReady(t *testing.T, srv *httptest.Server, conv, id string) chatbot.DocumentInfo {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		var d chatbot.DocumentInfo
		if code := getDoc(t, srv.URL+"/api/v1/documents/"+conv+"/"+id+"/status", &d); code != http.StatusOK {
			t.Fatalf("GET status: %d", code)
		}
		if d.Status == "ready" || d.Status == "failed" {
			return d
		}
		if time.Now().After(deadline) {
			t.Fatalf("document %s still %s", id, d.Status)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestDocumentUploadAnswer uploads a document over HTTP, waits for it to
// be processed, and asks about it: the supervisor loads it and the answer
// quotes a fact only the document has. Another conversation neither sees
// nor loads it, and cannot read or delete it.
func TestDocumentUploadAnswer(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{})
	code, doc, hdr := upload(t, srv, map[string]any{"conversation_id": "conv-a", "name": "office.md", "content": parrot})
	if code != http.StatusAccepted {
		t.Fatalf("upload: %d %v", code, doc)
	}
	id, _ := doc["id"].(string)
	if doc["status"] != "pending" || id == "" || doc["conversation_id"] != "conv-a" || doc["content_type"] != "text/markdown" {
		t.Errorf("upload response %v", doc)
	}
	if loc := hdr.Get("Location"); loc != "/api/v1/documents/conv-a/"+id+"/status" {
		t.Errorf("Location %q", loc)
	}
	ready := waitReady(t, srv, "conv-a", id)
	if ready.Status != "ready" || !strings.Contains(ready.Summary, "Office notes") || ready.Chunks < 1 {
		t.Fatalf("processed document %+v", ready)
	}

	var list struct {
		ConversationID string                 `json:"conversation_id"`
		Documents      []chatbot.DocumentInfo `json:"documents"`
	}
	if code := getDoc(t, srv.URL+"/api/v1/documents/conv-a", &list); code != http.StatusOK || len(list.Documents) != 1 ||
		list.Documents[0].ID != id || list.Documents[0].Status != "ready" || list.Documents[0].Summary == "" {
		t.Fatalf("list: %d %+v", code, list)
	}

	tr := chat(t, srv, "conv-a", "What does my uploaded document say about the office parrot?")
	if !slices.Contains(tr.tools(), chatbot.LoadDocumentTool) {
		t.Errorf("tools %v, want load_document; events %v", tr.tools(), tr.types())
	}
	t.Logf("answer: %s", tr.answer())
	if a := tr.answer(); !strings.Contains(a, "Captain Biscuit") {
		t.Errorf("answer does not quote the document:\n%s", a)
	}
	// A question the summary covers, without naming the document.
	tr = chat(t, srv, "conv-a", "Where do visitors park?")
	if !slices.Contains(tr.tools(), chatbot.LoadDocumentTool) || !strings.Contains(tr.answer(), "Harbour Street") {
		t.Errorf("tools %v, answer:\n%s", tr.tools(), tr.answer())
	}

	// Conversation isolation.
	tr = chat(t, srv, "conv-b", "What does my uploaded document say about the office parrot?")
	if slices.Contains(tr.tools(), chatbot.LoadDocumentTool) || strings.Contains(tr.answer(), "Captain Biscuit") {
		t.Errorf("conversation B loaded A's document: tools %v, answer:\n%s", tr.tools(), tr.answer())
	}
	if code := getDoc(t, srv.URL+"/api/v1/documents/conv-b", &list); code != http.StatusOK || len(list.Documents) != 0 {
		t.Errorf("B's list: %d %+v", code, list)
	}
	var e struct{ Error, Field string }
	if code := getDoc(t, srv.URL+"/api/v1/documents/conv-b/"+id+"/status", &e); code != http.StatusNotFound || e.Field != "document_id" {
		t.Errorf("B reads A's document: %d %+v", code, e)
	}
	if code := del(t, srv, "/api/v1/documents/conv-b/"+id); code != http.StatusNotFound {
		t.Errorf("B deletes A's document: %d", code)
	}

	// Delete.
	if code := del(t, srv, "/api/v1/documents/conv-a/"+id); code != http.StatusOK {
		t.Fatalf("delete: %d", code)
	}
	if code := getDoc(t, srv.URL+"/api/v1/documents/conv-a/"+id, &e); code != http.StatusNotFound {
		t.Errorf("GET after delete: %d", code)
	}
	if code := getDoc(t, srv.URL+"/api/v1/documents/conv-a", &list); code != http.StatusOK || len(list.Documents) != 0 {
		t.Errorf("list after delete: %d %+v", code, list)
	}
	tr = chat(t, srv, "conv-a", "What does my uploaded document say about the office parrot?")
	if slices.Contains(tr.tools(), chatbot.LoadDocumentTool) || strings.Contains(tr.answer(), "Captain Biscuit") {
		t.Errorf("a deleted document was loaded: tools %v, answer:\n%s", tr.tools(), tr.answer())
	}
}

func del(t *testing.T, srv *httptest.Server, path string) int {
	t.Helper()
	req, err := http.NewRequest(http.MethodDelete, srv.URL+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	return resp.StatusCode
}

// TestDocumentUploadMultipart uploads a file as a browser does: a
// multipart form whose file part has the type application/octet-stream,
// which the name's extension replaces.
func TestDocumentUploadMultipart(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{})
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("conversation_id", "conv-m")
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="file"; filename="notes.md"`)
	h.Set("Content-Type", "application/octet-stream")
	fw, _ := mw.CreatePart(h)
	_, _ = io.WriteString(fw, parrot)
	_ = mw.Close()
	resp, err := http.Post(srv.URL+"/api/v1/documents", mw.FormDataContentType(), &body)
	if err != nil {
		t.Fatal(err)
	}
	var d chatbot.DocumentInfo
	_ = json.NewDecoder(resp.Body).Decode(&d)
	resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted || d.Name != "notes.md" || d.ContentType != "text/markdown" || d.Size != int64(len(parrot)) {
		t.Fatalf("multipart upload: %s %+v", resp.Status, d)
	}
	if got := waitReady(t, srv, "conv-m", d.ID); got.Status != "ready" {
		t.Errorf("status %s: %s", got.Status, got.Error)
	}
}

// TestDocumentValidation checks that a rejected upload gets 400 naming
// the field at fault, a body over the limit 413, and a full conversation
// 409.
func TestDocumentValidation(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{Documents: chatbot.DocumentConfig{
		Limits: document.Limits{MaxSize: 1000, MaxPerConversation: 1}}})
	ok := map[string]any{"conversation_id": "conv-v", "name": "a.txt", "content": "hello"}
	with := func(k string, v any) map[string]any {
		m := map[string]any{}
		for k, v := range ok {
			m[k] = v
		}
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
		return m
	}
	tests := []struct {
		name  string
		body  any
		code  int
		field string
	}{
		{"no conversation", with("conversation_id", nil), 400, "conversation_id"},
		{"bad conversation id", with("conversation_id", "a b"), 400, "conversation_id"},
		{"no name", with("name", nil), 400, "name"},
		{"binary type", with("content_type", "application/pdf"), 400, "content_type"},
		{"unknown extension", with("name", "a.exe"), 400, "content_type"},
		{"empty content", with("content", "  "), 400, "content"},
		{"too large content", with("content", strings.Repeat("x", 1001)), 400, "content"},
		{"invalid JSON document", map[string]any{"conversation_id": "conv-v", "name": "a.json", "content": "{"}, 400, "content"},
		{"content not a string", with("content", 5), 400, "content"},
		{"unknown field", with("owner", "x"), 400, "owner"},
		{"body over the limit", with("content", strings.Repeat("x", 70<<10)), 413, "body"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, _ := upload(t, srv, tt.body)
			if code != tt.code || out["field"] != tt.field {
				t.Errorf("%d %v, want %d naming %s", code, out, tt.code, tt.field)
			}
		})
	}
	if code, out, _ := upload(t, srv, ok); code != http.StatusAccepted {
		t.Fatalf("valid upload: %d %v", code, out)
	}
	if code, out, _ := upload(t, srv, ok); code != http.StatusConflict || out["field"] != "conversation_id" {
		t.Errorf("upload to a full conversation: %d %v, want 409", code, out)
	}
	resp, err := http.Post(srv.URL+"/api/v1/documents", "multipart/form-data; boundary=x", strings.NewReader("--x\r\nContent-Disposition: form-data; name=\"conversation_id\"\r\n\r\nc\r\n--x--\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	var e struct{ Field string }
	_ = json.NewDecoder(resp.Body).Decode(&e)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest || e.Field != "file" {
		t.Errorf("multipart without a file: %s %+v", resp.Status, e)
	}
}

// gate is a document.Summarizer that waits until it is opened.
type gate struct{ open chan struct{} }

func (g gate) wait(ctx context.Context) error {
	select {
	case <-g.open:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (g gate) SummarizeChunk(ctx context.Context, _ document.Document, c document.Chunk) (string, error) {
	return "part", g.wait(ctx)
}

func (g gate) Combine(ctx context.Context, _ document.Document, s []string) (string, error) {
	return "summary", g.wait(ctx)
}

// TestDocumentQueueFull fills the processing queue: the upload beyond it
// gets 503 with Retry-After, and nothing is stored for it. Close then
// drains the queue: every accepted document is processed.
func TestDocumentQueueFull(t *testing.T) {
	g := gate{open: make(chan struct{})}
	bot, err := chatbot.New(context.Background(), chatbot.Config{Offline: true,
		Documents: chatbot.DocumentConfig{Workers: 1, Queue: 1, QueuePerPrincipal: -1, Summarizer: g}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(bot.Handler())
	defer srv.Close()
	var accepted []string
	full := false
	for i := 0; i < 4 && !full; i++ {
		code, out, hdr := upload(t, srv, map[string]any{"conversation_id": "conv-q", "name": "a.txt", "content": "hello"})
		switch code {
		case http.StatusAccepted:
			accepted = append(accepted, out["id"].(string))
		case http.StatusServiceUnavailable:
			full = true
			if hdr.Get("Retry-After") == "" {
				t.Errorf("503 without Retry-After: %v", out)
			}
		default:
			t.Fatalf("upload %d: %d %v", i, code, out)
		}
	}
	if !full || len(accepted) == 0 || len(accepted) > 2 {
		t.Fatalf("accepted %d uploads, queue full %v; want 1 or 2 then 503", len(accepted), full)
	}
	docs, err := bot.Documents().Store().List(context.Background(), "conv-q")
	if err != nil || len(docs) != len(accepted) {
		t.Errorf("stored %d documents (%v), want %d", len(docs), err, len(accepted))
	}
	time.AfterFunc(50*time.Millisecond, func() { close(g.open) })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := bot.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, id := range accepted {
		d, err := bot.Documents().Store().Get(context.Background(), id)
		if err != nil || d.Status != document.StatusReady {
			t.Errorf("after Close, document %s is %s (%v), want ready", id, d.Status, err)
		}
	}
	if _, err := bot.Documents().Upload(context.Background(), document.Upload{ConversationID: "c", Name: "a.txt", Content: []byte("x")}); !errors.Is(err, document.ErrClosed) {
		t.Errorf("upload after Close: %v, want ErrClosed", err)
	}
}

// TestDocumentCloseInterrupts closes the bot while a document is being
// processed and the context ends: Close says so, and the document is
// marked failed, not left pending.
func TestDocumentCloseInterrupts(t *testing.T) {
	g := gate{open: make(chan struct{})}
	bot, err := chatbot.New(context.Background(), chatbot.Config{Offline: true, Documents: chatbot.DocumentConfig{Summarizer: g}})
	if err != nil {
		t.Fatal(err)
	}
	doc, err := bot.Documents().Upload(context.Background(), document.Upload{ConversationID: "c", Name: "a.txt", Content: []byte("hello")})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	if err := bot.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Close: %v, want the deadline", err)
	}
	d, err := bot.Documents().Store().Get(context.Background(), doc.ID)
	if err != nil || d.Status != document.StatusFailed || !strings.Contains(d.Error, "interrupted") {
		t.Errorf("document after Close: %+v %v", d, err)
	}
}

// TestDocumentsSurviveRestart uploads a document, closes the bot and
// opens another on the same DataDir: the new bot's supervisor sees the
// document and loads it.
func TestDocumentsSurviveRestart(t *testing.T) {
	dir := t.TempDir()
	bot, srv := newServer(t, chatbot.Config{DataDir: dir})
	code, out, _ := upload(t, srv, map[string]any{"conversation_id": "conv-r", "name": "office.md", "content": parrot})
	if code != http.StatusAccepted {
		t.Fatalf("upload: %d %v", code, out)
	}
	waitReady(t, srv, "conv-r", out["id"].(string))
	srv.Close()
	if err := bot.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, srv = newServer(t, chatbot.Config{DataDir: dir})
	tr := chat(t, srv, "conv-r", "What is the office parrot called?")
	if !slices.Contains(tr.tools(), chatbot.LoadDocumentTool) || !strings.Contains(tr.answer(), "Captain Biscuit") {
		t.Errorf("after a restart: tools %v, answer:\n%s", tr.tools(), tr.answer())
	}
}

// TestLoadDocumentWaits asks about a document that is still being
// processed: load_document waits for it (its tool.progress says so) and
// answers from it once it is ready; with a Wait too short, it says the
// document is still being processed.
func TestLoadDocumentWaits(t *testing.T) {
	q := "What does my uploaded document say about the office parrot?"
	t.Run("ready in time", func(t *testing.T) {
		g := gate{open: make(chan struct{})}
		bot, srv := newServer(t, chatbot.Config{Documents: chatbot.DocumentConfig{Summarizer: g, Wait: time.Minute}})
		if _, err := bot.Documents().Upload(context.Background(), document.Upload{ConversationID: "conv-w", Name: "office.md", Content: []byte(parrot)}); err != nil {
			t.Fatal(err)
		}
		resp := postJSON(t, srv.URL+"/api/v1/chat", map[string]string{"conversation_id": "conv-w", "message": q})
		defer resp.Body.Close()
		var tr turn
		waited := false
		for ev, err := range chatevent.ReadEvents(resp.Body) {
			if err != nil {
				t.Fatal(err)
			}
			tr.events = append(tr.events, ev)
			if p, ok := ev.Payload.(chatevent.ToolProgress); ok && p.Tool == chatbot.LoadDocumentTool && !waited {
				waited = true
				close(g.open) // the document is processed while load_document waits
			}
		}
		if !waited || !strings.Contains(tr.answer(), "Captain Biscuit") {
			t.Errorf("waited %v, events %v, answer:\n%s", waited, tr.types(), tr.answer())
		}
	})
	t.Run("not ready in time", func(t *testing.T) {
		g := gate{open: make(chan struct{})}
		bot, srv := newServer(t, chatbot.Config{Documents: chatbot.DocumentConfig{Summarizer: g, Wait: 50 * time.Millisecond}})
		if _, err := bot.Documents().Upload(context.Background(), document.Upload{ConversationID: "conv-w", Name: "office.md", Content: []byte(parrot)}); err != nil {
			t.Fatal(err)
		}
		defer close(g.open)
		tr := chat(t, srv, "conv-w", q)
		var toolErr string
		for _, ev := range tr.events {
			if p, ok := ev.Payload.(chatevent.ToolError); ok && p.Tool == chatbot.LoadDocumentTool {
				toolErr = p.Error
			}
		}
		if !strings.Contains(toolErr, "office.md") || !strings.Contains(toolErr, "still") || strings.Contains(tr.answer(), "Captain Biscuit") {
			t.Errorf("load_document error %q, answer:\n%s", toolErr, tr.answer())
		}
	})
}

// TestDocumentsContextSource checks that operators may ask the context
// assembler for the conversation's documents: New accepts
// documents.summaries and documents.load(ID), and refuses a method the
// documents source does not have.
func TestDocumentsContextSource(t *testing.T) {
	register := func(reqs ...string) func(*operator.Registry) error {
		return func(r *operator.Registry) error {
			return r.Register(operator.Metadata{Name: "doc_reader", Description: "Reads the uploaded documents", Type: operator.PureLLM,
				ContextRequirements: reqs},
				func(operator.Deps) (operator.Operator, error) {
					return operator.Func(func(context.Context, *operator.Context) (*operator.Result, error) { return &operator.Result{}, nil }), nil
				})
		}
	}
	bot, err := chatbot.New(context.Background(), chatbot.Config{Offline: true,
		RegisterOperators: register("query", "documents.summaries", "documents.load(doc-1)")})
	if err != nil {
		t.Fatal(err)
	}
	if err := bot.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	_, err = chatbot.New(context.Background(), chatbot.Config{Offline: true, RegisterOperators: register("documents.recent")})
	if err == nil || !strings.Contains(err.Error(), "documents.summaries") {
		t.Errorf("New with documents.recent: %v", err)
	}
}

// TestLoadDocumentWaitFreesSlot checks that a turn whose load_document
// waits for a document gives its running slot up meanwhile: with
// MaxRunningTurns 1, another conversation's turn runs to its end.
func TestLoadDocumentWaitFreesSlot(t *testing.T) {
	g := gate{open: make(chan struct{})}
	bot, srv := newServer(t, chatbot.Config{MaxRunningTurns: 1, Documents: chatbot.DocumentConfig{Summarizer: g, Wait: time.Minute}})
	if _, err := bot.Documents().Upload(context.Background(), document.Upload{ConversationID: "conv-w", Name: "office.md", Content: []byte(parrot)}); err != nil {
		t.Fatal(err)
	}
	resp := postJSON(t, srv.URL+"/api/v1/chat", map[string]string{"conversation_id": "conv-w", "message": "What does my uploaded document say about the office parrot?"})
	defer resp.Body.Close()
	var tr turn
	other := false
	for ev, err := range chatevent.ReadEvents(resp.Body) {
		if err != nil {
			t.Fatal(err)
		}
		tr.events = append(tr.events, ev)
		if p, ok := ev.Payload.(chatevent.ToolProgress); ok && p.Tool == chatbot.LoadDocumentTool && !other {
			other = true
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			body := strings.NewReader(`{"conversation_id": "conv-x", "message": "What is 15% of 240?"}`)
			req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api/v1/chat/sync", body)
			req.Header.Set("Content-Type", "application/json")
			r, err := http.DefaultClient.Do(req)
			if err != nil {
				cancel()
				t.Fatalf("the other turn did not run while load_document waited: %v", err)
			}
			var out chatbot.SyncResponse
			_ = json.NewDecoder(r.Body).Decode(&out)
			r.Body.Close()
			cancel()
			if !strings.Contains(out.Response, "36") {
				t.Errorf("other turn: %s %+v", r.Status, out)
			}
			close(g.open)
		}
	}
	if !other || !strings.Contains(tr.answer(), "Captain Biscuit") {
		t.Errorf("waited %v, answer:\n%s", other, tr.answer())
	}
}

// TestDocumentUploadMultipartWindowsPath: a browser of old sends a file's
// whole Windows path as its name; the document takes its base name. A
// backslash in the name field, which the client writes itself, is still
// refused.
func TestDocumentUploadMultipartWindowsPath(t *testing.T) {
	t.Parallel()
	_, srv := newServer(t, chatbot.Config{})
	post := func(filename, nameField string) (int, chatbot.DocumentInfo, string) {
		t.Helper()
		var body bytes.Buffer
		mw := multipart.NewWriter(&body)
		_ = mw.WriteField("conversation_id", "conv-win")
		if nameField != "" {
			_ = mw.WriteField("name", nameField)
		}
		h := textproto.MIMEHeader{}
		h.Set("Content-Disposition", `form-data; name="file"; filename="`+filename+`"`) // unescaped, as such a browser writes it
		h.Set("Content-Type", "text/markdown")
		fw, _ := mw.CreatePart(h)
		_, _ = io.WriteString(fw, parrot)
		_ = mw.Close()
		resp, err := http.Post(srv.URL+"/api/v1/documents", mw.FormDataContentType(), &body)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		var d chatbot.DocumentInfo
		_ = json.Unmarshal(raw, &d)
		return resp.StatusCode, d, string(raw)
	}
	for _, filename := range []string{`C:\Users\me\notes.md`, `\\server\share\team\notes.md`, `notes.md`} {
		if code, d, raw := post(filename, ""); code != http.StatusAccepted || d.Name != "notes.md" {
			t.Errorf("file name %s: %d %s; want 202 with the name notes.md", filename, code, raw)
		}
	}
	if code, _, raw := post("notes.md", `C:\Users\me\notes.md`); code != http.StatusBadRequest {
		t.Errorf("a Windows path in the name field: %d %s; want 400", code, raw)
	}
}
