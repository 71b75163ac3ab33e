package pdf_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/document"
	"github.com/agentgraph/agentgraph/document/pdf"
)

var (
	shared     *pdf.Extractor
	sharedErr  error
	sharedOnce sync.Once
)

func TestMain(m *testing.M) {
	code := m.Run()
	if shared != nil {
		_ = shared.Close()
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("goleak: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// extractor returns one Extractor shared by the tests: preparing PDFium
// costs about a second.
func extractor(t testing.TB) *pdf.Extractor {
	t.Helper()
	// No timeout but the test's: under the race detector on a loaded
	// machine, laying out a page takes minutes, not the default's bound.
	sharedOnce.Do(func() { shared, sharedErr = pdf.New(context.Background(), pdf.Config{Timeout: -1}) })
	if sharedErr != nil {
		t.Fatal(sharedErr)
	}
	return shared
}

func read(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// multipage.pdf was printed by Chromium from testdata/multipage.html:
// three pages, the second in German, French, Greek and Russian.
func TestExtractMultiPage(t *testing.T) {
	got, err := extractor(t).Extract(context.Background(), read(t, "multipage.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Quarterly report\nRevenue grew 12% in the third quarter.",
		"Naïve café — Zürich\nGrüße aus München. Ελληνικά κείμενο. Русский текст.",
		"Page three\nThe end.",
	}
	if got.PageCount != 3 || got.Truncated || len(got.Pages) != 3 {
		t.Fatalf("PageCount %d, Truncated %v, %d pages; want 3 pages", got.PageCount, got.Truncated, len(got.Pages))
	}
	for i, w := range want {
		if got.Pages[i] != w {
			t.Errorf("page %d = %q, want %q", i+1, got.Pages[i], w)
		}
	}
	if s := got.String(); s != strings.Join(want, "\n\n") {
		t.Errorf("String() = %q", s)
	}
}

func TestExtractMaxPages(t *testing.T) {
	e, err := pdf.New(context.Background(), pdf.Config{MaxPages: 2, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	got, err := e.Extract(context.Background(), read(t, "multipage.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	if got.PageCount != 3 || !got.Truncated || len(got.Pages) != 2 || !strings.HasPrefix(got.Pages[1], "Naïve") {
		t.Fatalf("got %+v; want the first 2 of 3 pages, truncated", got)
	}
}

// scanned.pdf is a page holding only a picture of text, as a scanner
// makes it.
func TestExtractScannedHasNoText(t *testing.T) {
	got, err := extractor(t).Extract(context.Background(), read(t, "scanned.pdf"))
	if !errors.Is(err, pdf.ErrNoText) {
		t.Fatalf("err = %v, want ErrNoText", err)
	}
	if !strings.Contains(err.Error(), "OCR") || got.PageCount != 1 {
		t.Errorf("err %q should say to run OCR; PageCount %d, want 1", err, got.PageCount)
	}
}

func TestExtractInvalid(t *testing.T) {
	multi := read(t, "multipage.pdf")
	for name, data := range map[string][]byte{
		"truncated":      read(t, "truncated.pdf"), // the first 3000 bytes of multipage.pdf
		"not a pdf":      []byte("hello, I am plain text"),
		"empty":          nil,
		"header only":    []byte("%PDF-1.7\n"),
		"garbled middle": append(append(append([]byte{}, multi[:2000]...), bytes.Repeat([]byte{0xff}, 4000)...), multi[6000:]...),
	} {
		t.Run(name, func(t *testing.T) {
			got, err := extractor(t).Extract(context.Background(), data)
			if name == "garbled middle" && err == nil {
				// PDFium repairs some damage; what it returns must then
				// still be the readable pages.
				if len(got.Pages) == 0 {
					t.Fatal("no error and no pages")
				}
				return
			}
			if !errors.Is(err, pdf.ErrInvalid) && !errors.Is(err, pdf.ErrNoText) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestExtractTooLarge(t *testing.T) {
	e, err := pdf.New(context.Background(), pdf.Config{MaxSize: 1000, Workers: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if _, err := e.Extract(context.Background(), read(t, "multipage.pdf")); !errors.Is(err, pdf.ErrTooLarge) {
		t.Fatalf("err = %v, want ErrTooLarge", err)
	}
}

func TestExtractCancelled(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := extractor(t).Extract(ctx, read(t, "multipage.pdf")); !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	// The extractor still works afterwards.
	if _, err := extractor(t).Extract(context.Background(), read(t, "multipage.pdf")); err != nil {
		t.Fatal(err)
	}
}

func TestExtractConcurrent(t *testing.T) {
	data := read(t, "multipage.pdf")
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Go(func() {
			got, err := extractor(t).Extract(context.Background(), data)
			if err == nil && len(got.Pages) != 3 {
				err = errors.New("wrong page count")
			}
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

func TestUpload(t *testing.T) {
	u, err := extractor(t).Upload(context.Background(), document.Upload{ConversationID: "c1", Name: "report.pdf", Content: read(t, "multipage.pdf")})
	if err != nil {
		t.Fatal(err)
	}
	ct, content, err := document.Limits{}.Check(u)
	if err != nil {
		t.Fatalf("the converted upload fails document.Limits: %v", err)
	}
	if ct != "text/plain" || !strings.Contains(string(content), "Русский текст") || u.Name != "report.pdf" {
		t.Fatalf("got %s %q %q", ct, u.Name, content)
	}
	// Not a PDF: unchanged.
	txt := document.Upload{ConversationID: "c1", Name: "a.md", Content: []byte("# hi")}
	if got, err := extractor(t).Upload(context.Background(), txt); err != nil || string(got.Content) != "# hi" {
		t.Fatalf("got %+v, %v", got, err)
	}
	// A scan: the error names the file and the fix.
	_, err = extractor(t).Upload(context.Background(), document.Upload{ConversationID: "c1", Name: "scan.pdf", ContentType: "application/pdf", Content: read(t, "scanned.pdf")})
	if !errors.Is(err, pdf.ErrNoText) || !strings.Contains(err.Error(), "scan.pdf") {
		t.Fatalf("err = %v", err)
	}
}

// FuzzExtract feeds damaged PDFs to PDFium: every input must return (text
// or an error), never panic or crash the process.
func FuzzExtract(f *testing.F) {
	for _, name := range []string{"multipage.pdf", "scanned.pdf", "truncated.pdf"} {
		f.Add(read(f, name))
	}
	f.Add([]byte("%PDF-1.4\n1 0 obj << /Type /Catalog /Pages 2 0 R >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF"))
	e := extractor(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := e.Extract(context.Background(), data)
		if err == nil && len(got.Pages) == 0 {
			t.Fatal("no error and no pages")
		}
	})
}
