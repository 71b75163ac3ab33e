package pdf_test

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/document/pdf"
)

// textPDF returns a PDF of pages pages sharing one Flate-compressed
// content stream of lines lines of n times char each (a character of a
// PDF string in WinAnsiEncoding): a small file holding much text.
func textPDF(t testing.TB, pages, lines, n int, char string) []byte {
	t.Helper()
	content := "BT /F1 1 Tf 1 TL 0 0 Td " + strings.Repeat("("+strings.Repeat(char, n)+") Tj T* ", lines) + "ET"
	var comp bytes.Buffer
	w := zlib.NewWriter(&comp)
	if _, err := w.Write([]byte(content)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	kids := make([]string, pages)
	for i := range kids {
		kids[i] = fmt.Sprintf("%d 0 R", 5+i)
	}
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), pages),
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>",
		fmt.Sprintf("<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream", comp.Len(), comp.String()),
	}
	for range pages {
		objs = append(objs, "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents 4 0 R >>")
	}
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offs := make([]int, len(objs))
	for i, o := range objs {
		offs[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, o := range offs {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// Config.MaxText bounds the text of one extraction, checked after each
// page and, before a page is read, against its character count.
func TestExtractMaxText(t *testing.T) {
	e, err := pdf.New(context.Background(), pdf.Config{MaxText: 300, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// Three pages of 2 lines of 100 "é": 202 characters of PDFium's,
	// 401 bytes of UTF-8 each.
	accents := textPDF(t, 3, 2, 100, `\351`)
	got, err := extractor(t).Extract(context.Background(), accents)
	if err != nil || len(got.Pages) != 3 || got.Pages[0] != strings.Repeat("é", 100)+"\n"+strings.Repeat("é", 100) {
		t.Fatalf("with the default MaxText: %q, %v; want 3 pages of 2 lines", got.Pages, err)
	}
	for name, c := range map[string]struct {
		data []byte
		want string
	}{
		// The first page's text passes 300 bytes.
		"after a page": {accents, "at page 1 of 3"},
		// The first page alone has more characters than the limit: it
		// is not read.
		"before a page": {textPDF(t, 2, 10, 100, "A"), "page 1 of 2: pdf: file too large: its 10"},
		// The second page has more characters than what is left.
		"before the second page": {textPDF(t, 2, 1, 200, "A"), "page 2 of 2: pdf: file too large: its 200 characters"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := e.Extract(context.Background(), c.data)
			if !errors.Is(err, pdf.ErrTooLarge) || !strings.Contains(err.Error(), "Config.MaxText") || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("err = %v, want ErrTooLarge naming Config.MaxText and %q", err, c.want)
			}
		})
	}
	if _, err := pdf.New(context.Background(), pdf.Config{MaxText: -1}); err == nil || !strings.Contains(err.Error(), "MaxText") {
		t.Errorf("New with a negative MaxText: %v, want an error naming it", err)
	}
}

// Config.Timeout bounds one extraction; its error says so.
func TestExtractTimeout(t *testing.T) {
	e, err := pdf.New(context.Background(), pdf.Config{Timeout: time.Nanosecond, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	_, err = e.Extract(context.Background(), read(t, "multipage.pdf"))
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "Config.Timeout") {
		t.Fatalf("err = %v, want context.DeadlineExceeded naming Config.Timeout", err)
	}
	if d := pdf.Timeout(e); d != time.Nanosecond {
		t.Errorf("timeout %v, want 1ns", d)
	}
	def, err := pdf.New(context.Background(), pdf.Config{Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer def.Close()
	if d := pdf.Timeout(def); d != pdf.DefaultTimeout {
		t.Errorf("Config{} has timeout %v, want DefaultTimeout", d)
	}
	none, err := pdf.New(context.Background(), pdf.Config{Timeout: -1, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer none.Close()
	if d := pdf.Timeout(none); d != 0 {
		t.Errorf("Config{Timeout: -1} has timeout %v, want none", d)
	}
	if _, err := none.Extract(context.Background(), read(t, "multipage.pdf")); err != nil {
		t.Fatal(err)
	}
}

// A page's text is read in one call, not a call per character: the host
// memory an extraction allocates grows by about 1 KB per character (the
// WebAssembly memory PDFium lays the page out in), not 3 KB.
func TestExtractAllocsPerChar(t *testing.T) {
	e := extractor(t)
	alloc := func(lines int) uint64 {
		data := textPDF(t, 1, lines, 1000, "A")
		if _, err := e.Extract(context.Background(), data); err != nil { // warm up
			t.Fatal(err)
		}
		var m0, m1 runtime.MemStats
		runtime.ReadMemStats(&m0)
		if _, err := e.Extract(context.Background(), data); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&m1)
		return m1.TotalAlloc - m0.TotalAlloc
	}
	one, twenty := alloc(1), alloc(20)
	if perChar := (int64(twenty) - int64(one)) / 19_000; perChar > 2000 {
		t.Errorf("an extraction allocates %d bytes more per character of text, want under 2000", perChar)
	}
}
