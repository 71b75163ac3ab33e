package chatbot

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"reflect"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/document"
)

// DocumentInfo is a document as the HTTP API returns it.
type DocumentInfo struct {
	ID             string    `json:"id"`
	ConversationID string    `json:"conversation_id"`
	Name           string    `json:"name"`
	ContentType    string    `json:"content_type"`
	Size           int64     `json:"size"`
	Status         string    `json:"status"`
	Error          string    `json:"error,omitempty"`
	Summary        string    `json:"summary,omitempty"`
	Chunks         int       `json:"chunks"`
	Tokens         int       `json:"tokens"`
	Created        time.Time `json:"created"`
	Updated        time.Time `json:"updated"`
}

// documentInfo is d as principal's client sees it.
func documentInfo(principal string, d document.Document) DocumentInfo {
	return DocumentInfo{ID: d.ID, ConversationID: unscoped(principal, d.ConversationID), Name: d.Name, ContentType: d.ContentType,
		Size: d.Size, Status: string(d.Status), Error: d.Error, Summary: d.Summary, Chunks: d.Chunks,
		Tokens: d.Tokens, Created: d.Created, Updated: d.Updated}
}

// DocumentUpload is the JSON body of POST /api/v1/documents. A multipart
// form (multipart/form-data) has the same fields, with the content as a
// file part named "file" whose file name is the default name.
type DocumentUpload struct {
	ConversationID string `json:"conversation_id"`
	Name           string `json:"name"`
	// ContentType is the media type; empty means guess from Name's
	// extension.
	ContentType string `json:"content_type,omitempty"`
	// Content is the document's text.
	Content string `json:"content"`
}

// documentRoutes adds the document endpoints to mux (see Handler).
func (b *Bot) documentRoutes(mux *http.ServeMux) {
	mux.HandleFunc("POST /api/v1/documents", b.serveUpload)
	mux.HandleFunc("GET /api/v1/documents/{conversation_id}", b.serveDocuments)
	mux.HandleFunc("GET /api/v1/documents/{conversation_id}/{document_id}", b.serveDocument)
	mux.HandleFunc("GET /api/v1/documents/{conversation_id}/{document_id}/status", b.serveDocument)
	mux.HandleFunc("DELETE /api/v1/documents/{conversation_id}/{document_id}", b.serveDeleteDocument)
}

// uploadWithin uploads u for principal unless it would pass the
// principal's quota (a *quotaError), which the store checks with the
// upload, or its share of the processing queue (a *queueShareError).
func (b *Bot) uploadWithin(ctx context.Context, u document.Upload) (document.Document, error) {
	done, err := b.docs.reserveQueue(u.Owner)
	if err != nil {
		return document.Document{}, err
	}
	defer done()
	doc, err := b.docs.proc.Upload(ctx, u)
	return doc, principalQuota(err)
}

// uploadLimit is the largest body of an upload: twice the largest
// document (JSON escapes can double a text's size) and room for the other
// fields.
func (b *Bot) uploadLimit() int64 {
	maxSize := b.docs.limits.MaxSize
	if maxSize <= 0 {
		maxSize = document.DefaultMaxSize
	}
	return 2*maxSize + 64<<10
}

func (b *Bot) serveUpload(w http.ResponseWriter, r *http.Request) {
	u, typePart, err := b.readUpload(w, r)
	if err != nil {
		b.writeDocumentError(w, r, err)
		return
	}
	if !idPattern.MatchString(u.ConversationID) && u.ConversationID != "" {
		b.writeDocumentError(w, r, &RequestError{Field: "conversation_id", Reason: "must be 1 to 128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit"})
		return
	}
	if err := b.begin(); err != nil {
		b.writeDocumentError(w, r, err)
		return
	}
	defer b.active.Done()
	p := PrincipalFromContext(r.Context())
	if u.ConversationID != "" {
		u.ConversationID = scoped(p, u.ConversationID)
	}
	u.Owner = p // the quota counts the principal's documents by it
	doc, err := b.uploadWithin(r.Context(), u)
	if err != nil {
		// A multipart upload without a content_type part takes the type
		// from the "file" part's header: a type refused is that part's.
		var ve *document.ValidationError
		if errors.As(err, &ve) && ve.Field == "ContentType" && !typePart && isMultipart(r) {
			moved := *ve
			moved.Field = "Content"
			err = &moved
		}
		b.writeDocumentError(w, r, err)
		return
	}
	info := documentInfo(p, doc)
	w.Header().Set("Location", "/api/v1/documents/"+info.ConversationID+"/"+doc.ID+"/status")
	writeJSON(w, http.StatusAccepted, info)
}

// readUpload reads a JSON or multipart upload of at most uploadLimit
// bytes, within Config.BodyTimeout. typePart reports whether a multipart
// upload sent a content_type part.
func (b *Bot) readUpload(w http.ResponseWriter, r *http.Request) (u document.Upload, typePart bool, err error) {
	body := &timeoutMarker{ReadCloser: r.Body}
	r.Body = body
	u, typePart, err = b.readUploadBody(w, r)
	if err == nil {
		bodyRead(w)
	}
	if err != nil && body.timedOut {
		return u, typePart, &bodyTimeoutError{limit: b.cfg.BodyTimeout}
	}
	return u, typePart, err
}

// isMultipart reports whether r's body is a multipart form.
func isMultipart(r *http.Request) bool {
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	return mt == "multipart/form-data"
}

func (b *Bot) readUploadBody(w http.ResponseWriter, r *http.Request) (document.Upload, bool, error) {
	limit := b.uploadLimit()
	r.Body = http.MaxBytesReader(w, r.Body, limit)
	tooBig := func(err error) error {
		var mb *http.MaxBytesError
		if errors.As(err, &mb) {
			return &bodyTooLargeError{limit: limit}
		}
		return nil
	}
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "multipart/form-data" {
		var in DocumentUpload
		data, err := io.ReadAll(r.Body)
		if err != nil {
			if e := tooBig(err); e != nil {
				return document.Upload{}, false, e
			}
			return document.Upload{}, false, &RequestError{Field: "body", Reason: "could not be read: " + err.Error()}
		}
		if err := checkKeys(data, reflect.TypeOf(&in)); err != nil {
			var re *RequestError
			if errors.As(err, &re) && re.Reason == "is not a known field" {
				re.Reason += "; send conversation_id, name, content_type and content"
			}
			return document.Upload{}, false, err
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			var typeErr *json.UnmarshalTypeError
			switch {
			case errors.As(err, &typeErr):
				return document.Upload{}, false, typeError(typeErr)
			case strings.HasPrefix(err.Error(), "json: unknown field "):
				f := strings.Trim(strings.TrimPrefix(err.Error(), "json: unknown field "), `"`)
				return document.Upload{}, false, &RequestError{Field: f, Reason: "is not a known field; send conversation_id, name, content_type and content"}
			case errors.Is(err, io.EOF):
				return document.Upload{}, false, &RequestError{Field: "body", Reason: "is empty; send a JSON object {conversation_id, name, content_type, content} or a multipart form"}
			}
			return document.Upload{}, false, &RequestError{Field: "body", Reason: "is not valid JSON: " + clip(err.Error(), 2*maxQuoted)}
		}
		if dec.More() {
			return document.Upload{}, false, &RequestError{Field: "body", Reason: "holds more than one JSON value"}
		}
		return document.Upload{ConversationID: in.ConversationID, Name: in.Name, ContentType: in.ContentType, Content: []byte(in.Content)}, false, nil
	}
	mr, err := r.MultipartReader()
	if err != nil {
		return document.Upload{}, false, &RequestError{Field: "body", Reason: "is not a multipart form: " + err.Error()}
	}
	var u document.Upload
	hasFile := false
	seen := map[string]bool{} // the fields read so far, of the few known
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			if e := tooBig(err); e != nil {
				return u, seen["content_type"], e
			}
			return u, seen["content_type"], &RequestError{Field: "body", Reason: "is not a valid multipart form: " + err.Error()}
		}
		data, err := io.ReadAll(part)
		if err != nil {
			if e := tooBig(err); e != nil {
				return u, seen["content_type"], e
			}
			return u, seen["content_type"], &RequestError{Field: part.FormName(), Reason: "could not be read: " + err.Error()}
		}
		// A repeated field would replace the first: a second file would
		// be stored, under the first file's name, and the first lost.
		field := part.FormName()
		if field == "content" {
			field = "file"
		}
		if seen[field] {
			return u, seen["content_type"], &RequestError{Field: part.FormName(), Reason: "is sent twice; send each field once, and one document per upload"}
		}
		seen[field] = true
		switch part.FormName() {
		case "conversation_id":
			u.ConversationID = string(data)
		case "name":
			u.Name = string(data)
		case "content_type":
			u.ContentType = string(data)
		case "file", "content":
			hasFile = true
			u.Content = data
			if u.Name == "" {
				u.Name = multipartFileName(part)
			}
			// Browsers send application/octet-stream (or nothing) for
			// extensions they do not know, such as .md: then the name's
			// extension decides.
			if ct := part.Header.Get("Content-Type"); u.ContentType == "" && ct != "" && !strings.HasPrefix(ct, "application/octet-stream") {
				u.ContentType = ct
			}
		default:
			return u, seen["content_type"], &RequestError{Field: part.FormName(), Reason: "is not a known field; send conversation_id, name, content_type and file"}
		}
	}
	if !hasFile {
		return u, seen["content_type"], &RequestError{Field: "file", Reason: "is required: add the document as a file part named \"file\""}
	}
	return u, seen["content_type"], nil
}

// multipartFileName is the base name of part's file name. Browsers of
// old (Internet Explorer, Edge before Chromium) send the whole Windows
// path ("C:\Users\me\notes.md"), which part.FileName, applying the
// server's filepath.Base, strips on Windows only: the text after its last
// backslash is the name. The "name" field, which a client writes itself,
// is not cut (document.CheckName refuses a backslash in it).
func multipartFileName(part *multipart.Part) string {
	name := part.FileName()
	if i := strings.LastIndexByte(name, '\\'); i >= 0 {
		name = name[i+1:]
	}
	return name
}

// writeDocumentError writes err as the documents API's error response: a
// rejected upload is 400 naming the field, a full conversation 409, a
// principal's full share of the queue 429 and a full queue 503, both
// with Retry-After, an unknown document 404.
func (b *Bot) writeDocumentError(w http.ResponseWriter, r *http.Request, err error) {
	var ve *document.ValidationError
	var big *bodyTooLargeError
	switch {
	case errors.As(err, &ve):
		// The message names the field as the request does, not as
		// package document's Upload does ("conversation_id", not
		// "ConversationID").
		f := uploadField(ve.Field, r)
		writeJSON(w, http.StatusBadRequest, apiError{Error: (&RequestError{Field: f, Reason: ve.Problem}).Error(), Field: f})
	case errors.As(err, &big):
		writeJSON(w, http.StatusRequestEntityTooLarge, apiError{Error: err.Error(), Field: "body"})
	case errors.As(err, new(*quotaError)):
		writeJSON(w, http.StatusConflict, apiError{Error: err.Error()})
	case errors.Is(err, document.ErrTooMany):
		writeJSON(w, http.StatusConflict, apiError{Error: fmt.Sprintf("chatbot: the conversation holds the most documents it may (%d); delete one first", b.maxDocuments()), Field: "conversation_id"})
	case errors.As(err, new(*queueShareError)):
		w.Header().Set("Retry-After", "5")
		writeJSON(w, http.StatusTooManyRequests, apiError{Error: err.Error()})
	case errors.Is(err, document.ErrQueueFull):
		w.Header().Set("Retry-After", "5")
		writeJSON(w, http.StatusServiceUnavailable, apiError{Error: err.Error()})
	case errors.Is(err, document.ErrClosed):
		writeJSON(w, http.StatusServiceUnavailable, apiError{Error: err.Error()})
	case errors.Is(err, document.ErrNotFound):
		writeJSON(w, http.StatusNotFound, apiError{Error: "chatbot: the conversation has no such document", Field: "document_id"})
	default:
		b.writeError(w, r, err)
	}
}

// maxDocuments is the most documents a conversation holds.
func (b *Bot) maxDocuments() int {
	if n := b.docs.limits.MaxPerConversation; n > 0 {
		return n
	}
	return document.DefaultMaxPerConversation
}

// bodyTooLargeError is an upload body over the limit: 413.
type bodyTooLargeError struct{ limit int64 }

func (e *bodyTooLargeError) Error() string {
	return fmt.Sprintf("chatbot: body: is larger than %d bytes; a document may have at most %d bytes", e.limit, (e.limit-64<<10)/2)
}

// uploadField is the request's name of an Upload field: its JSON name,
// or its form field's in a multipart upload, where the content is the
// "file" part.
func uploadField(f string, r *http.Request) string {
	switch f {
	case "ConversationID":
		return "conversation_id"
	case "ContentType":
		return "content_type"
	case "Content":
		if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt == "multipart/form-data" {
			return "file"
		}
	}
	return strings.ToLower(f)
}

func conversationParam(r *http.Request) (string, error) {
	id := r.PathValue("conversation_id")
	if !idPattern.MatchString(id) {
		return "", &RequestError{Field: "conversation_id", Reason: "must be 1 to 128 letters, digits, '_', '.', ':' or '-', starting with a letter or digit"}
	}
	return id, nil
}

func (b *Bot) serveDocuments(w http.ResponseWriter, r *http.Request) {
	conv, err := conversationParam(r)
	if err != nil {
		b.writeDocumentError(w, r, err)
		return
	}
	p := PrincipalFromContext(r.Context())
	docs, err := b.docs.store.List(r.Context(), scoped(p, conv))
	if err != nil {
		b.writeDocumentError(w, r, err)
		return
	}
	out := struct {
		ConversationID string         `json:"conversation_id"`
		Documents      []DocumentInfo `json:"documents"`
	}{ConversationID: conv, Documents: make([]DocumentInfo, len(docs))}
	for i, d := range docs {
		out.Documents[i] = documentInfo(p, d)
	}
	writeJSON(w, http.StatusOK, out)
}

// conversationDocument returns the request's document if it belongs to
// the request's conversation; a document of another conversation is
// reported as not found.
func (b *Bot) conversationDocument(r *http.Request) (document.Document, error) {
	conv, err := conversationParam(r)
	if err != nil {
		return document.Document{}, err
	}
	id := r.PathValue("document_id")
	doc, err := b.docs.store.Get(r.Context(), id)
	if err == nil && doc.ConversationID != scoped(PrincipalFromContext(r.Context()), conv) {
		err = document.ErrNotFound
	}
	if errors.Is(err, document.ErrNotFound) {
		return doc, fmt.Errorf("%w: conversation %q has no document %q", document.ErrNotFound, conv, id)
	}
	return doc, err
}

func (b *Bot) serveDocument(w http.ResponseWriter, r *http.Request) {
	doc, err := b.conversationDocument(r)
	if err != nil {
		b.writeDocumentError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, documentInfo(PrincipalFromContext(r.Context()), doc))
}

func (b *Bot) serveDeleteDocument(w http.ResponseWriter, r *http.Request) {
	doc, err := b.conversationDocument(r)
	if err == nil {
		err = b.docs.store.Delete(r.Context(), doc.ID)
	}
	if err != nil {
		b.writeDocumentError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"status": "deleted", "document_id": doc.ID, "conversation_id": unscoped(PrincipalFromContext(r.Context()), doc.ConversationID)})
}
