package chatbot_test

import (
	"bytes"
	"encoding/json"
	"io"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"regexp"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/document"
	"github.com/agentgraph/agentgraph/examples/chatbot"
)

// goFieldRE is a Go field name of an upload or a document, as an error
// must not name it: the client sends conversation_id, not ConversationID.
var goFieldRE = regexp.MustCompile(`\b(?:ConversationID|ContentType|DocumentID|Name|Content|Owner)\b`)

// TestDocumentErrorsNameWireFields walks the document endpoints' bad
// inputs, JSON, multipart and path, and checks that every error names the
// field as the request writes it, in the field member and in the message.
func TestDocumentErrorsNameWireFields(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{Documents: chatbot.DocumentConfig{Limits: document.Limits{MaxSize: 1000}}})
	form := func(fields map[string]string, name, fileType, content string) (string, io.Reader) {
		var b bytes.Buffer
		mw := multipart.NewWriter(&b)
		for k, v := range fields {
			_ = mw.WriteField(k, v)
		}
		if name != "" {
			h := textproto.MIMEHeader{}
			h.Set("Content-Disposition", `form-data; name="file"; filename="`+name+`"`)
			h.Set("Content-Type", fileType)
			fw, _ := mw.CreatePart(h)
			_, _ = io.WriteString(fw, content)
		}
		_ = mw.Close()
		return mw.FormDataContentType(), &b
	}
	type req struct {
		name, method, path, ctype string
		body                      io.Reader
		field                     string
	}
	jsonBody := func(m map[string]any) io.Reader {
		b, _ := json.Marshal(m)
		return bytes.NewReader(b)
	}
	var reqs []req
	for _, c := range []struct {
		name  string
		body  map[string]any
		field string
	}{
		{"json: blank conversation", map[string]any{"conversation_id": " ", "name": "a.txt", "content": "hi"}, "conversation_id"},
		{"json: no conversation", map[string]any{"name": "a.txt", "content": "hi"}, "conversation_id"},
		{"json: no name", map[string]any{"conversation_id": "c1", "content": "hi"}, "name"},
		{"json: long name", map[string]any{"conversation_id": "c1", "name": strings.Repeat("n", 300) + ".txt", "content": "hi"}, "name"},
		{"json: unknown extension", map[string]any{"conversation_id": "c1", "name": "a.exe", "content": "hi"}, "content_type"},
		{"json: bad media type", map[string]any{"conversation_id": "c1", "name": "a.txt", "content_type": "text/", "content": "hi"}, "content_type"},
		{"json: charset", map[string]any{"conversation_id": "c1", "name": "a.txt", "content_type": "text/plain; charset=latin1", "content": "hi"}, "content_type"},
		{"json: blank content", map[string]any{"conversation_id": "c1", "name": "a.txt", "content": " "}, "content"},
		{"json: content too large", map[string]any{"conversation_id": "c1", "name": "a.txt", "content": strings.Repeat("x", 1001)}, "content"},
		{"json: content a number", map[string]any{"conversation_id": "c1", "name": "a.txt", "content": 5}, "content"},
	} {
		reqs = append(reqs, req{c.name, http.MethodPost, "/api/v1/documents", "application/json", jsonBody(c.body), c.field})
	}
	ct, b := form(map[string]string{"conversation_id": "c1"}, "a.txt", "text/plain", " ")
	reqs = append(reqs, req{"form: blank file", http.MethodPost, "/api/v1/documents", ct, b, "file"})
	ct, b = form(map[string]string{"conversation_id": "c1"}, "a.txt", "text/plain", strings.Repeat("x", 1001))
	reqs = append(reqs, req{"form: file too large", http.MethodPost, "/api/v1/documents", ct, b, "file"})
	// Without a content_type part the type is the "file" part's: its
	// header's, or its name's extension's; with one, the part's.
	ct, b = form(map[string]string{"conversation_id": "c1"}, "a.exe", "application/octet-stream", "hi")
	reqs = append(reqs, req{"form: unknown extension", http.MethodPost, "/api/v1/documents", ct, b, "file"})
	ct, b = form(map[string]string{"conversation_id": "c1"}, "a.txt", "image/png", "hi")
	reqs = append(reqs, req{"form: file part of an unsupported type", http.MethodPost, "/api/v1/documents", ct, b, "file"})
	ct, b = form(map[string]string{"conversation_id": "c1", "content_type": "image/png"}, "a.txt", "text/plain", "hi")
	reqs = append(reqs, req{"form: content_type part unsupported", http.MethodPost, "/api/v1/documents", ct, b, "content_type"})
	ct, b = form(map[string]string{"conversation_id": "c1", "content_type": "text/"}, "a.exe", "", "hi")
	reqs = append(reqs, req{"form: content_type part malformed", http.MethodPost, "/api/v1/documents", ct, b, "content_type"})
	ct, b = form(map[string]string{"conversation_id": "a b"}, "a.txt", "text/plain", "hi")
	reqs = append(reqs, req{"form: bad conversation", http.MethodPost, "/api/v1/documents", ct, b, "conversation_id"})
	ct, b = form(map[string]string{"conversation_id": "c1"}, "", "", "")
	reqs = append(reqs, req{"form: no file", http.MethodPost, "/api/v1/documents", ct, b, "file"})
	reqs = append(reqs,
		req{"path: bad conversation (list)", http.MethodGet, "/api/v1/documents/a%20b", "", nil, "conversation_id"},
		req{"path: unknown document (status)", http.MethodGet, "/api/v1/documents/c1/nope/status", "", nil, "document_id"},
		req{"path: unknown document (delete)", http.MethodDelete, "/api/v1/documents/c1/nope", "", nil, "document_id"},
	)
	for _, r := range reqs {
		t.Run(r.name, func(t *testing.T) {
			hr, err := http.NewRequestWithContext(t.Context(), r.method, srv.URL+r.path, r.body)
			if err != nil {
				t.Fatal(err)
			}
			if r.ctype != "" {
				hr.Header.Set("Content-Type", r.ctype)
			}
			resp, err := http.DefaultClient.Do(hr)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			var e struct{ Error, Field string }
			if err := json.NewDecoder(resp.Body).Decode(&e); err != nil {
				t.Fatalf("%s: decoding the error: %v", resp.Status, err)
			}
			if resp.StatusCode < 400 || e.Field != r.field {
				t.Errorf("%s field %q, want an error naming %q: %s", resp.Status, e.Field, r.field, e.Error)
			}
			if resp.StatusCode == http.StatusBadRequest && !strings.Contains(e.Error, r.field) {
				t.Errorf("the message does not name %q: %s", r.field, e.Error)
			}
			if m := goFieldRE.FindString(e.Error); m != "" {
				t.Errorf("the message names the Go field %q: %s", m, e.Error)
			}
		})
	}
}
