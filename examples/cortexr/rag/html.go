package rag

import (
	"io"
	"regexp"
	"strings"

	"golang.org/x/net/html"
)

// HTMLToMarkdown returns an HTML page's main content as Markdown: its title
// as a heading, headings, paragraphs, list items, links' text with their
// targets, and preformatted blocks; scripts, styles, navigation, headers,
// footers, forms and asides are left out (the seed's "clean webpage content
// without ads and clutter").
func HTMLToMarkdown(r io.Reader) (string, error) {
	doc, err := html.Parse(r)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	var title string
	var walk func(n *html.Node, pre bool)
	block := func() {
		s := b.String()
		if s != "" && !strings.HasSuffix(s, "\n\n") {
			if strings.HasSuffix(s, "\n") {
				b.WriteString("\n")
			} else {
				b.WriteString("\n\n")
			}
		}
	}
	walk = func(n *html.Node, pre bool) {
		switch n.Type {
		case html.TextNode:
			if pre {
				b.WriteString(n.Data)
				return
			}
			t := spaceRE.ReplaceAllString(n.Data, " ")
			if strings.TrimSpace(t) == "" {
				if s := b.String(); s != "" && !strings.HasSuffix(s, " ") && !strings.HasSuffix(s, "\n") {
					b.WriteString(" ")
				}
				return
			}
			if s := b.String(); s == "" || strings.HasSuffix(s, "\n") {
				t = strings.TrimLeft(t, " ")
			}
			b.WriteString(t)
			return
		case html.ElementNode:
			switch n.Data {
			case "script", "style", "noscript", "nav", "header", "footer", "form", "aside", "svg", "iframe", "template":
				return
			case "title":
				if n.FirstChild != nil {
					title = strings.TrimSpace(n.FirstChild.Data)
				}
				return
			case "h1", "h2", "h3", "h4", "h5", "h6":
				block()
				b.WriteString(strings.Repeat("#", int(n.Data[1]-'0')) + " ")
			case "p", "div", "section", "article", "main", "table", "blockquote", "ul", "ol":
				block()
			case "li":
				if s := b.String(); s != "" && !strings.HasSuffix(s, "\n") {
					b.WriteString("\n")
				}
				b.WriteString("- ")
			case "br", "tr":
				b.WriteString("\n")
			case "pre":
				block()
				b.WriteString("```\n")
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c, true)
				}
				b.WriteString("\n```\n\n")
				return
			case "a":
				href := attr(n, "href")
				start := b.Len()
				for c := n.FirstChild; c != nil; c = c.NextSibling {
					walk(c, pre)
				}
				text := strings.TrimSpace(b.String()[start:])
				if href != "" && text != "" && !strings.HasPrefix(href, "#") && !strings.HasPrefix(href, "javascript:") {
					b.WriteString(" (" + href + ")")
				}
				return
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, pre)
		}
		if n.Type == html.ElementNode {
			switch n.Data {
			case "h1", "h2", "h3", "h4", "h5", "h6", "p", "div", "section", "article", "main", "table", "blockquote", "ul", "ol":
				block()
			}
		}
	}
	walk(doc, false)
	body := strings.TrimSpace(blankRE.ReplaceAllString(trailRE.ReplaceAllString(b.String(), "\n"), "\n\n"))
	if title != "" && !strings.HasPrefix(body, "# ") {
		body = "# " + title + "\n\n" + body
	}
	return body, nil
}

var (
	spaceRE = regexp.MustCompile(`\s+`)
	trailRE = regexp.MustCompile(`[ \t]+\n`)
	blankRE = regexp.MustCompile(`\n{3,}`)
)

func attr(n *html.Node, key string) string {
	for _, a := range n.Attr {
		if a.Key == key {
			return a.Val
		}
	}
	return ""
}
