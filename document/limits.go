package document

import (
	"bytes"
	"encoding/json"
	"fmt"
	"mime"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/agentgraph/agentgraph/internal/storeid"
)

// Defaults of [Limits] fields left zero.
const (
	// DefaultMaxSize is the largest content accepted: 1 MB.
	DefaultMaxSize = 1_000_000
	// DefaultMaxPerConversation is the most documents a conversation
	// holds.
	DefaultMaxPerConversation = 5
	// MaxIDBytes is the longest [Upload.ConversationID] and
	// [Upload.Owner] accepted, in bytes: the limit of every conversation
	// id, as memory.MaxIDBytes.
	MaxIDBytes = storeid.MaxBytes
)

// DefaultContentTypes are the media types accepted when
// Limits.ContentTypes is nil: text formats whose bytes are the text to
// read. Binary formats that need an extractor (PDF, Word, images) and
// markup whose tags would waste tokens (HTML) are not accepted; convert
// them to text before upload (a PDF with package document/pdf:
// pdf.Extractor.Upload).
var DefaultContentTypes = []string{
	"text/plain",
	"text/markdown",
	"text/csv",
	"text/tab-separated-values",
	"application/json",
}

// extTypes maps file extensions to media types, for uploads without one.
var extTypes = map[string]string{
	".txt": "text/plain", ".text": "text/plain", ".log": "text/plain",
	".md": "text/markdown", ".markdown": "text/markdown",
	".csv": "text/csv", ".tsv": "text/tab-separated-values",
	".json": "application/json",
}

// Limits says which uploads are accepted. The zero value applies the
// defaults.
type Limits struct {
	// MaxSize is the largest content in bytes. Zero means
	// [DefaultMaxSize].
	MaxSize int64
	// ContentTypes are the accepted media types, without parameters. Nil
	// means [DefaultContentTypes].
	ContentTypes []string
	// MaxPerConversation is the most documents one conversation holds;
	// the store enforces it atomically. Zero means
	// [DefaultMaxPerConversation]; negative means no limit.
	MaxPerConversation int
	// MaxPerOwner and MaxBytesPerOwner bound the documents one owner
	// ([Upload.Owner]) holds over all conversations, in number and in
	// bytes of content; the store enforces them atomically with the
	// upload, also across processes sharing a database, and refuses an
	// upload past either with a [*QuotaError]. Zero or negative means no
	// bound; uploads without an owner are not bound.
	MaxPerOwner      int
	MaxBytesPerOwner int64
}

// quota is what the store checks when a document is created.
func (l Limits) quota() Quota {
	return Quota{PerConversation: l.perConversation(), Owner: Usage{Documents: l.MaxPerOwner, Bytes: l.MaxBytesPerOwner}}
}

func (l Limits) maxSize() int64 {
	if l.MaxSize <= 0 {
		return DefaultMaxSize
	}
	return l.MaxSize
}

func (l Limits) perConversation() int {
	switch {
	case l.MaxPerConversation == 0:
		return DefaultMaxPerConversation
	case l.MaxPerConversation < 0:
		return 0
	}
	return l.MaxPerConversation
}

func (l Limits) types() []string {
	if l.ContentTypes == nil {
		return DefaultContentTypes
	}
	return l.ContentTypes
}

// Check validates u and returns its normalized content type (lower case,
// without parameters; guessed from the name's extension when
// u.ContentType is empty) and its content without a leading UTF-8 byte
// order mark. It checks, in order: the conversation id and the owner
// (UTF-8 without NUL bytes, of at most [MaxIDBytes]; the owner may be
// empty), the name (see [CheckName]), the
// content type (a charset parameter, if any, must be UTF-8 or ASCII), the
// size, that the content is valid UTF-8 without NUL bytes and with some
// non-space text, and, for
// application/json, that it is valid JSON. The error is a
// [*ValidationError] naming the field and the fix.
func (l Limits) Check(u Upload) (contentType string, content []byte, err error) {
	bad := func(field, format string, args ...any) (string, []byte, error) {
		return "", nil, &ValidationError{Field: field, Problem: fmt.Sprintf(format, args...)}
	}
	if strings.TrimSpace(u.ConversationID) == "" {
		return bad("ConversationID", "empty; set it to the conversation the document belongs to")
	}
	if why := checkID(u.ConversationID); why != "" {
		return bad("ConversationID", "%s", why)
	}
	if why := checkID(u.Owner); why != "" {
		return bad("Owner", "%s", why)
	}
	if strings.TrimSpace(u.Name) == "" {
		return bad("Name", "empty; set it to the file name, e.g. \"notes.md\"")
	}
	if !utf8.ValidString(u.Name) || len(u.Name) > 255 {
		return bad("Name", "must be UTF-8 of at most 255 bytes")
	}
	if why := CheckName(u.Name); why != "" {
		return bad("Name", "%s", why)
	}
	ct := u.ContentType
	if ct == "" {
		ct = extTypes[strings.ToLower(path.Ext(u.Name))]
		if ct == "" {
			return bad("ContentType", "empty, and the name %q has no known text extension; set it to one of %s", u.Name, strings.Join(l.types(), ", "))
		}
	}
	mt, params, perr := mime.ParseMediaType(ct)
	if perr != nil {
		return bad("ContentType", "%q is not a media type (%v); use one of %s", ct, perr, strings.Join(l.types(), ", "))
	}
	if !slices.Contains(l.types(), mt) {
		return bad("ContentType", "%q is not supported; use one of %s (convert PDF, Word or HTML to text first)", mt, strings.Join(l.types(), ", "))
	}
	if cs, ok := params["charset"]; ok {
		switch strings.ToLower(cs) {
		case "utf-8", "utf8", "us-ascii", "ascii":
		default:
			return bad("ContentType", "charset %q is not supported; convert the content to UTF-8", cs)
		}
	}
	if int64(len(u.Content)) > l.maxSize() {
		return bad("Content", "%d bytes, more than the limit of %d; split the document or raise Limits.MaxSize", len(u.Content), l.maxSize())
	}
	content = bytes.TrimPrefix(u.Content, []byte("\xef\xbb\xbf"))
	if len(bytes.TrimSpace(content)) == 0 {
		return bad("Content", "empty or only white space; upload a document with text")
	}
	if !utf8.Valid(content) {
		off := 0
		for off < len(content) {
			r, n := utf8.DecodeRune(content[off:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			off += n
		}
		return bad("Content", "not valid UTF-8 (first bad byte at offset %d); convert it to UTF-8", off)
	}
	if i := bytes.IndexByte(content, 0); i >= 0 {
		return bad("Content", "holds a NUL byte at offset %d, so it is binary, not text; upload a text file", i)
	}
	if mt == "application/json" && !json.Valid(content) {
		return bad("Content", "not valid JSON although ContentType is application/json; fix the JSON or upload it as text/plain")
	}
	return mt, content, nil
}

// checkID says what is wrong with an id every store must hold alike
// (PostgreSQL's text refuses NUL bytes and invalid UTF-8), or "".
func checkID(id string) string {
	return storeid.Problem(id)
}
