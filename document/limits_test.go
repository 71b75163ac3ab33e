package document_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/document"
)

func TestLimitsCheck(t *testing.T) {
	t.Parallel()
	ok := document.Upload{ConversationID: "c1", Name: "notes.md", ContentType: "text/markdown", Content: []byte("# Notes\n")}
	for _, tc := range []struct {
		name  string
		limit document.Limits
		mut   func(*document.Upload)
		field string // "" means accepted
		want  string // substring of the error, or the normalized content type
	}{
		{"ok", document.Limits{}, func(*document.Upload) {}, "", "text/markdown"},
		{"params dropped", document.Limits{}, func(u *document.Upload) { u.ContentType = "Text/Plain; charset=UTF-8" }, "", "text/plain"},
		{"guessed from name", document.Limits{}, func(u *document.Upload) { u.ContentType, u.Name = "", "data.CSV" }, "", "text/csv"},
		{"json", document.Limits{}, func(u *document.Upload) { u.ContentType, u.Content = "application/json", []byte(`{"a":1}`) }, "", "application/json"},
		{"no conversation", document.Limits{}, func(u *document.Upload) { u.ConversationID = " " }, "ConversationID", "empty"},
		{"no name", document.Limits{}, func(u *document.Upload) { u.Name = "" }, "Name", "empty"},
		{"unknown extension", document.Limits{}, func(u *document.Upload) { u.ContentType, u.Name = "", "report.pdf" }, "ContentType", "no known text extension"},
		{"pdf", document.Limits{}, func(u *document.Upload) { u.ContentType = "application/pdf" }, "ContentType", "not supported"},
		{"html", document.Limits{}, func(u *document.Upload) { u.ContentType = "text/html" }, "ContentType", "convert PDF, Word or HTML"},
		{"not a media type", document.Limits{}, func(u *document.Upload) { u.ContentType = "text/" }, "ContentType", "not a media type"},
		{"latin1", document.Limits{}, func(u *document.Upload) { u.ContentType = "text/plain; charset=iso-8859-1" }, "ContentType", "convert the content to UTF-8"},
		{"custom types", document.Limits{ContentTypes: []string{"text/plain"}}, func(*document.Upload) {}, "ContentType", "use one of text/plain"},
		{"too large", document.Limits{MaxSize: 4}, func(*document.Upload) {}, "Content", "more than the limit of 4"},
		{"empty", document.Limits{}, func(u *document.Upload) { u.Content = nil }, "Content", "empty"},
		{"blank", document.Limits{}, func(u *document.Upload) { u.Content = []byte("\xef\xbb\xbf \n\t") }, "Content", "only white space"},
		{"invalid utf-8", document.Limits{}, func(u *document.Upload) { u.Content = []byte("abc\xffdef") }, "Content", "offset 3"},
		{"nul byte", document.Limits{}, func(u *document.Upload) { u.Content = []byte("ab\x00c") }, "Content", "NUL byte at offset 2"},
		{"bad json", document.Limits{}, func(u *document.Upload) { u.ContentType, u.Content = "application/json", []byte(`{"a":`) }, "Content", "not valid JSON"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u := ok
			tc.mut(&u)
			ct, content, err := tc.limit.Check(u)
			if tc.field == "" {
				if err != nil || ct != tc.want || len(content) == 0 {
					t.Fatalf("Check = %q, %d bytes, %v; want %q", ct, len(content), err, tc.want)
				}
				return
			}
			var ve *document.ValidationError
			if !errors.As(err, &ve) || !errors.Is(err, document.ErrInvalid) {
				t.Fatalf("Check error = %v; want a *ValidationError matching ErrInvalid", err)
			}
			if ve.Field != tc.field || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error = %v (field %s); want field %s and %q", err, ve.Field, tc.field, tc.want)
			}
		})
	}
}

func TestLimitsCheckStripsBOM(t *testing.T) {
	t.Parallel()
	_, content, err := document.Limits{}.Check(document.Upload{ConversationID: "c", Name: "a.txt", Content: []byte("\xef\xbb\xbfhello")})
	if err != nil || string(content) != "hello" {
		t.Errorf("Check = %q, %v; want %q without the byte order mark", content, err, "hello")
	}
}
