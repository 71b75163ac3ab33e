// Package pdf extracts the text of PDF files, so that a PDF can become a
// [document.Upload] like any text file, or feed an index.
//
// The parser is PDFium (the PDF engine of Chromium) compiled to
// WebAssembly and run by the wazero runtime, both pure Go: no cgo, no
// external program. PDFium reads the fonts real producers embed (subset
// TrueType and CID fonts with ToUnicode maps, standard encodings), so text
// in any script comes out as Unicode.
//
// # Isolation
//
// Every [Extractor.Extract] runs in a fresh WebAssembly instance with its
// own linear memory, capped by Config.MaxMemory, and no access to files,
// network or environment (no directory is mounted). A malformed PDF that
// crashes PDFium fails that call with [ErrInvalid]; it cannot corrupt the
// host's memory, and the next call gets a new instance. Cancelling the
// context stops a running extraction. What is not isolated: CPU, bounded
// by Config.Timeout (two minutes by default) and the context's deadline,
// and host memory: the WebAssembly instance's memory (Config.MaxMemory),
// the copy of the input (Config.MaxSize) and the extracted text
// (Config.MaxText, 16 MiB by default; a page whose character count alone
// passes the limit is not read). A small PDF can still hold much text (a
// compressed content stream shared by many pages), so these bound one
// extraction whatever its input's size.
//
// # Errors
//
// Each failure is one of [ErrTooLarge], [ErrInvalid] (not a PDF, or damaged
// beyond repair), [ErrEncrypted] (needs a password) or [ErrNoText] (pages
// without a text layer, typically scans), wrapped with what was found and
// what to do.
package pdf

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/klippa-app/go-pdfium"
	pdferrors "github.com/klippa-app/go-pdfium/errors"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/document"
)

// ContentType is the media type of PDF files.
const ContentType = "application/pdf"

// Defaults of [Config] fields left zero.
const (
	// DefaultMaxSize is the largest PDF accepted: 50 MB.
	DefaultMaxSize = 50 << 20
	// DefaultMaxPages is the most pages read of one PDF.
	DefaultMaxPages = 2000
	// DefaultMaxMemory is the most memory one extraction's WebAssembly
	// instance may grow to: 512 MiB.
	DefaultMaxMemory = 512 << 20
	// DefaultWorkers is how many extractions run at once.
	DefaultWorkers = 2
	// DefaultTimeout is the longest one extraction runs.
	DefaultTimeout = 2 * time.Minute
	// DefaultMaxText is the most text one extraction returns: 16 MiB.
	DefaultMaxText = 16 << 20
)

// Errors of [Extractor.Extract]; match them with errors.Is.
var (
	// ErrTooLarge: the input is larger than Config.MaxSize, or its text
	// larger than Config.MaxText.
	ErrTooLarge = errors.New("pdf: file too large")
	// ErrInvalid: the input is not a PDF, or is damaged beyond what
	// PDFium repairs.
	ErrInvalid = errors.New("pdf: not a readable PDF")
	// ErrEncrypted: the PDF needs a password.
	ErrEncrypted = errors.New("pdf: encrypted")
	// ErrNoText: no page has extractable text; the PDF is most likely
	// scanned images and needs OCR first.
	ErrNoText = errors.New("pdf: no text layer")
)

// Config configures an [Extractor]. The zero value is valid.
type Config struct {
	// CacheDir, when set, compiles PDFium to machine code and keeps the
	// compiled code in this directory: the first New takes tens of seconds
	// on a slow machine, later ones (in any process using the directory)
	// about a second, and extraction is several times faster. Empty runs
	// PDFium in wazero's interpreter: New takes about a second and nothing
	// is written to disk.
	CacheDir string
	// MaxSize is the largest input in bytes. Zero means DefaultMaxSize.
	MaxSize int64
	// MaxPages is the most pages read; the text of later pages is left
	// out and Text.Truncated is set. Zero means DefaultMaxPages.
	MaxPages int
	// MaxMemory is the most bytes one extraction's WebAssembly memory may
	// grow to; a PDF that needs more fails with ErrInvalid. Zero means
	// DefaultMaxMemory; it cannot exceed 4 GiB.
	MaxMemory int64
	// Workers is how many extractions run at once; more wait for a free
	// one (or their context). Zero means DefaultWorkers.
	Workers int
	// Timeout is the longest one extraction runs, from the moment it has
	// a worker: a PDF that takes longer fails with an error wrapping
	// context.DeadlineExceeded and naming Config.Timeout. Zero means
	// DefaultTimeout; negative means no limit but the context's.
	Timeout time.Duration
	// MaxText is the most bytes of text one extraction returns, checked
	// after each page and, before a page's text is read, against the
	// page's character count: a PDF with more fails with ErrTooLarge
	// naming Config.MaxText. Zero means DefaultMaxText.
	MaxText int64
	// Logger receives PDFium's diagnostics at debug level. Nil means
	// zap.NewNop().
	Logger *zap.Logger
}

// Extractor extracts text from PDFs. It is safe for concurrent use; Close
// it when done.
type Extractor struct {
	pool     pdfium.Pool
	cache    wazero.CompilationCache
	maxSize  int64
	maxPages int
	maxText  int64
	timeout  time.Duration // 0: none
	log      *zap.Logger

	mu     sync.Mutex
	closed bool
}

// New prepares PDFium: it compiles the WebAssembly module (from
// Config.CacheDir when it holds a compiled copy). ctx bounds the
// preparation and is not kept.
func New(ctx context.Context, cfg Config) (*Extractor, error) {
	if cfg.MaxSize < 0 || cfg.MaxPages < 0 || cfg.MaxMemory < 0 || cfg.Workers < 0 || cfg.MaxText < 0 {
		return nil, errors.New("pdf: Config.MaxSize, MaxPages, MaxMemory, Workers and MaxText must not be negative (zero means the default)")
	}
	if cfg.MaxMemory > 4<<30 {
		return nil, fmt.Errorf("pdf: Config.MaxMemory %d is more than WebAssembly's 4 GiB; lower it", cfg.MaxMemory)
	}
	e := &Extractor{
		maxSize:  orDefault(cfg.MaxSize, DefaultMaxSize),
		maxPages: int(orDefault(int64(cfg.MaxPages), DefaultMaxPages)),
		maxText:  orDefault(cfg.MaxText, DefaultMaxText),
		timeout:  max(time.Duration(orDefault(int64(cfg.Timeout), int64(DefaultTimeout))), 0),
		log:      cfg.Logger,
	}
	if e.log == nil {
		e.log = zap.NewNop()
	}
	rc := wazero.NewRuntimeConfigInterpreter()
	if cfg.CacheDir != "" {
		c, err := wazero.NewCompilationCacheWithDir(cfg.CacheDir)
		if err != nil {
			return nil, fmt.Errorf("pdf: Config.CacheDir %q: %w", cfg.CacheDir, err)
		}
		e.cache = c
		rc = wazero.NewRuntimeConfig().WithCompilationCache(c)
	}
	pages := orDefault(cfg.MaxMemory, DefaultMaxMemory) / 65536
	rc = rc.WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesExceptionHandling).
		WithMemoryLimitPages(uint32(min(pages, 65536))).
		WithCloseOnContextDone(true)
	workers := int(orDefault(int64(cfg.Workers), DefaultWorkers))

	type result struct {
		pool pdfium.Pool
		err  error
	}
	done := make(chan result, 1)
	go func() {
		diag := &logWriter{log: e.log}
		p, err := webassembly.Init(webassembly.Config{
			MinIdle:       0,
			MaxIdle:       0,
			MaxTotal:      workers,
			RuntimeConfig: rc,
			// No directory mounted: PDFium sees no file of the host.
			FSConfig: wazero.NewFSConfig(),
			Stdout:   diag,
			Stderr:   diag,
		})
		done <- result{p, err}
	}()
	select {
	case r := <-done:
		if r.err != nil {
			e.closeCache()
			return nil, fmt.Errorf("pdf: preparing PDFium: %w", r.err)
		}
		e.pool = r.pool
		return e, nil
	case <-ctx.Done():
		// Let the preparation finish in the background and release it.
		go func() {
			if r := <-done; r.err == nil {
				_ = r.pool.Close()
			}
			e.closeCache()
		}()
		return nil, fmt.Errorf("pdf: preparing PDFium: %w", ctx.Err())
	}
}

func orDefault(v, def int64) int64 {
	if v == 0 {
		return def
	}
	return v
}

// Close releases PDFium. Extractions running stop with an error.
func (e *Extractor) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = true
	err := e.pool.Close()
	e.closeCache()
	return err
}

func (e *Extractor) closeCache() {
	if e.cache != nil {
		_ = e.cache.Close(context.Background())
	}
}

// Text is the text of a PDF, page by page.
type Text struct {
	// Pages holds each page's text, in order: lines separated by "\n",
	// without trailing space. A page without text is "".
	Pages []string
	// PageCount is the number of pages of the PDF, which is more than
	// len(Pages) when Truncated.
	PageCount int
	// Truncated reports that pages past Config.MaxPages were not read.
	Truncated bool
}

// String returns the pages' text, pages separated by a blank line.
func (t Text) String() string {
	var parts []string
	for _, p := range t.Pages {
		if p != "" {
			parts = append(parts, p)
		}
	}
	return strings.Join(parts, "\n\n")
}

// Extract returns the text of the PDF in data. A PDF whose pages hold no
// text fails with ErrNoText (and still returns the page count in Text).
// ctx cancels a running extraction.
func (e *Extractor) Extract(ctx context.Context, data []byte) (Text, error) {
	if int64(len(data)) > e.maxSize {
		return Text{}, fmt.Errorf("%w: %d bytes, more than the limit of %d; split the PDF or raise Config.MaxSize", ErrTooLarge, len(data), e.maxSize)
	}
	if !bytes.Contains(data[:min(len(data), 1024)], []byte("%PDF-")) {
		return Text{}, fmt.Errorf("%w: the content does not start with a %%PDF- header, so it is not a PDF", ErrInvalid)
	}
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return Text{}, errors.New("pdf: the Extractor is closed")
	}
	inst, err := e.pool.GetInstanceWithContext(ctx)
	if err != nil {
		if ctx.Err() != nil {
			return Text{}, fmt.Errorf("pdf: waiting for a free worker: %w", ctx.Err())
		}
		return Text{}, fmt.Errorf("pdf: starting PDFium: %w", err)
	}
	if e.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeoutCause(ctx, e.timeout, errTimeout)
		defer cancel()
	}
	stop := context.AfterFunc(ctx, func() { _ = inst.Kill() })
	t, err := e.extract(inst, data)
	if !stop() {
		// The context ended during the extraction and killed the instance.
		if context.Cause(ctx) == errTimeout {
			return Text{}, fmt.Errorf("pdf: extraction took longer than Config.Timeout (%v): %w; the PDF holds too much to lay out (split it) or raise Config.Timeout", e.timeout, ctx.Err())
		}
		return Text{}, fmt.Errorf("pdf: extraction stopped: %w", ctx.Err())
	}
	_ = inst.Close()
	return t, err
}

func (e *Extractor) extract(inst pdfium.Pdfium, data []byte) (t Text, err error) {
	defer func() {
		// A trap in PDFium (out of memory, a bug reached by a malformed
		// file) must fail the call, never the host.
		if r := recover(); r != nil {
			t, err = Text{}, fmt.Errorf("%w: PDFium failed on it: %v", ErrInvalid, r)
		}
	}()
	doc, err := inst.OpenDocument(&requests.OpenDocument{File: &data})
	if err != nil {
		switch {
		case errors.Is(err, pdferrors.ErrPassword), errors.Is(err, pdferrors.ErrSecurity):
			return Text{}, fmt.Errorf("%w: the PDF needs a password; decrypt it first (e.g. qpdf --decrypt)", ErrEncrypted)
		default:
			return Text{}, fmt.Errorf("%w: PDFium cannot open it (%v); check that the file is a complete PDF", ErrInvalid, err)
		}
	}
	count, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: doc.Document})
	if err != nil {
		return Text{}, fmt.Errorf("%w: reading its page count: %v", ErrInvalid, err)
	}
	t.PageCount = count.PageCount
	n := min(count.PageCount, e.maxPages)
	t.Truncated = n < count.PageCount
	t.Pages = make([]string, n)
	var size int64
	for i := range n {
		text, err := e.pageText(inst, doc.Document, i, e.maxText-size)
		if err != nil {
			return Text{}, fmt.Errorf("page %d of %d: %w", i+1, count.PageCount, err)
		}
		t.Pages[i] = text
		size += int64(len(text))
		if size > e.maxText {
			return Text{}, fmt.Errorf("%w: its text passes Config.MaxText (%d bytes) at page %d of %d; split the PDF or raise Config.MaxText", ErrTooLarge, e.maxText, i+1, count.PageCount)
		}
	}
	if size == 0 {
		return t, fmt.Errorf("%w: its %d page(s) hold no text, so it is most likely scanned images; run OCR on it (e.g. ocrmypdf) and extract again", ErrNoText, count.PageCount)
	}
	return t, nil
}

// errTimeout is the cause of a context ended by Config.Timeout.
var errTimeout = errors.New("pdf: Config.Timeout passed")

// pageText returns the cleaned text of page i, failing without reading
// it when the page has more than budget characters.
func (e *Extractor) pageText(inst pdfium.Pdfium, doc references.FPDF_DOCUMENT, i int, budget int64) (string, error) {
	page, err := inst.FPDF_LoadPage(&requests.FPDF_LoadPage{Document: doc, Index: i})
	if err != nil {
		return "", fmt.Errorf("%w: loading it: %v", ErrInvalid, err)
	}
	defer func() { _, _ = inst.FPDF_ClosePage(&requests.FPDF_ClosePage{Page: page.Page}) }()
	tp, err := inst.FPDFText_LoadPage(&requests.FPDFText_LoadPage{Page: requests.Page{ByReference: &page.Page}})
	if err != nil {
		return "", fmt.Errorf("%w: reading its text: %v", ErrInvalid, err)
	}
	defer func() { _, _ = inst.FPDFText_ClosePage(&requests.FPDFText_ClosePage{TextPage: tp.TextPage}) }()
	c, err := inst.FPDFText_CountChars(&requests.FPDFText_CountChars{TextPage: tp.TextPage})
	if err != nil {
		return "", fmt.Errorf("%w: counting its characters: %v", ErrInvalid, err)
	}
	if int64(c.Count) > budget {
		return "", fmt.Errorf("%w: its %d characters pass Config.MaxText (%d bytes for the whole PDF); split the PDF or raise Config.MaxText", ErrTooLarge, c.Count, e.maxText)
	}
	if c.Count <= 0 {
		return "", nil
	}
	r, err := inst.FPDFText_GetText(&requests.FPDFText_GetText{TextPage: tp.TextPage, Count: c.Count})
	if err != nil {
		return "", fmt.Errorf("%w: reading its text: %v", ErrInvalid, err)
	}
	return clean(r.Text), nil
}

// clean normalises PDFium's page text: "\r\n" and "\r" line ends become
// "\n", trailing space of each line and control characters other than
// tab and newline go, and so do blank lines at the start and end.
func clean(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = strings.Map(func(r rune) rune {
		if r == '\n' || r == '\t' || !unicode.IsControl(r) && r != '\ufffe' && r != '\uffff' {
			return r
		}
		return -1
	}, s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRightFunc(l, unicode.IsSpace)
	}
	return strings.Trim(strings.Join(lines, "\n"), "\n")
}

// IsPDF reports whether an upload is a PDF: its ContentType is
// application/pdf, or it has none and its name ends in ".pdf".
func IsPDF(u document.Upload) bool {
	if u.ContentType != "" {
		return strings.HasPrefix(strings.ToLower(strings.TrimSpace(u.ContentType)), ContentType)
	}
	return strings.HasSuffix(strings.ToLower(u.Name), ".pdf")
}

// Upload returns u with a PDF's content replaced by its text, as
// text/plain, ready for [document.Processor.Upload]; an upload that is not
// a PDF (see IsPDF) is returned as it is. The name stays, so the document
// is still known by its file name.
func (e *Extractor) Upload(ctx context.Context, u document.Upload) (document.Upload, error) {
	if !IsPDF(u) {
		return u, nil
	}
	t, err := e.Extract(ctx, u.Content)
	if err != nil {
		return document.Upload{}, fmt.Errorf("%s: %w", u.Name, err)
	}
	u.Content = []byte(t.String())
	u.ContentType = "text/plain; charset=utf-8"
	return u, nil
}

// logWriter passes PDFium's output to a logger, one entry per write.
type logWriter struct{ log *zap.Logger }

var _ io.Writer = (*logWriter)(nil)

func (w *logWriter) Write(p []byte) (int, error) {
	if s := strings.TrimSpace(string(p)); s != "" {
		w.log.Debug("pdfium", zap.String("output", s))
	}
	return len(p), nil
}
