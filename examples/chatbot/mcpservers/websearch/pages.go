package websearch

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"slices"
	"strings"
)

// ErrPage reports a page that cannot be served: no title, a URL that is not
// an absolute http(s) URL, or a URL given twice.
var ErrPage = errors.New("websearch: invalid page")

// Page is one web page in the offline corpus.
type Page struct {
	// Title is the page title shown in results.
	Title string `json:"title"`
	// URL is the page's absolute http or https address; fetch_page looks
	// pages up by it.
	URL string `json:"url"`
	// Snippet is the short description shown in results.
	Snippet string `json:"snippet"`
	// Body is the page text returned by fetch_page.
	Body string `json:"body"`
}

//go:embed pages/*.txt
var bundled embed.FS

// Pages returns a copy of the bundled pages, sorted by URL.
func Pages() []Page {
	pages, err := parsePages(bundled)
	if err != nil {
		panic(err) // the bundled pages are checked by the tests
	}
	return pages
}

// parsePages reads pages/*.txt files: "key: value" header lines (title, url,
// snippet), a line "---", then the body.
func parsePages(fsys fs.FS) ([]Page, error) {
	files, err := fs.Glob(fsys, "pages/*.txt")
	if err != nil {
		return nil, err
	}
	var pages []Page
	for _, file := range files {
		b, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, err
		}
		head, body, ok := strings.Cut(string(b), "\n---\n")
		if !ok {
			return nil, fmt.Errorf("%w: %s has no \"---\" line between header and body", ErrPage, file)
		}
		p := Page{Body: strings.TrimSpace(body)}
		for line := range strings.SplitSeq(head, "\n") {
			key, value, _ := strings.Cut(line, ":")
			value = strings.TrimSpace(value)
			switch strings.TrimSpace(key) {
			case "title":
				p.Title = value
			case "url":
				p.URL = value
			case "snippet":
				p.Snippet = value
			}
		}
		pages = append(pages, p)
	}
	slices.SortFunc(pages, func(a, b Page) int { return strings.Compare(a.URL, b.URL) })
	return pages, nil
}

// checkPages validates pages and returns them keyed by normalised URL.
func checkPages(pages []Page) (map[string]int, error) {
	byURL := make(map[string]int, len(pages))
	for i, p := range pages {
		if strings.TrimSpace(p.Title) == "" {
			return nil, fmt.Errorf("%w: Pages[%d] (%s) has no Title", ErrPage, i, p.URL)
		}
		u, err := url.Parse(p.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%w: Pages[%d] URL %q is not an absolute http(s) URL", ErrPage, i, p.URL)
		}
		key := normalise(p.URL)
		if j, dup := byURL[key]; dup {
			return nil, fmt.Errorf("%w: Pages[%d] and Pages[%d] have the same URL %s", ErrPage, j, i, p.URL)
		}
		byURL[key] = i
	}
	return byURL, nil
}

// normalise makes URL lookups forgiving: scheme and host are
// case-insensitive, and a trailing slash or fragment does not matter.
func normalise(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return strings.TrimSpace(raw)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	u.Host = strings.ToLower(u.Host)
	u.Fragment = ""
	u.Path = strings.TrimSuffix(u.Path, "/")
	return u.String()
}
