package knowledge

import (
	"embed"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
)

//go:embed corpus/*.md
var bundled embed.FS

// Corpus returns the bundled Acme Analytics documents: markdown files at the
// root of the returned file system.
func Corpus() fs.FS {
	sub, err := fs.Sub(bundled, "corpus")
	if err != nil {
		panic(err) // the embedded directory always exists
	}
	return sub
}

// document is one markdown file split into passages.
type document struct {
	name     string // file name without ".md"
	title    string // text of the first "# " heading, or name
	markdown string
	passages []passage
}

// passage is the text under one "## " heading, or the text before the first.
type passage struct {
	doc     int    // index into the documents
	section string // heading text; "" for the text before the first heading
	text    string
}

// loadDocuments reads every *.md file at the root of fsys, sorted by name.
func loadDocuments(fsys fs.FS) ([]document, error) {
	names, err := fs.Glob(fsys, "*.md")
	if err != nil {
		return nil, fmt.Errorf("knowledge: listing documents: %w", err)
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: no *.md files at the root of Config.Documents", ErrNoDocuments)
	}
	slices.Sort(names)
	docs := make([]document, 0, len(names))
	for _, file := range names {
		b, err := fs.ReadFile(fsys, file)
		if err != nil {
			return nil, fmt.Errorf("knowledge: reading %s: %w", file, err)
		}
		docs = append(docs, parseDocument(strings.TrimSuffix(path.Base(file), ".md"), string(b), len(docs)))
	}
	return docs, nil
}

func parseDocument(name, markdown string, index int) document {
	d := document{name: name, title: name, markdown: markdown}
	var section string
	var body strings.Builder
	flush := func() {
		if text := strings.TrimSpace(body.String()); text != "" {
			d.passages = append(d.passages, passage{doc: index, section: section, text: text})
		}
		body.Reset()
	}
	titled := false
	for line := range strings.SplitSeq(markdown, "\n") {
		trimmed := strings.TrimSpace(line)
		switch {
		case !titled && strings.HasPrefix(trimmed, "# "):
			d.title = strings.TrimSpace(trimmed[2:])
			titled = true
		case strings.HasPrefix(trimmed, "## "):
			flush()
			section = strings.TrimSpace(trimmed[3:])
		default:
			body.WriteString(line)
			body.WriteByte('\n')
		}
	}
	flush()
	return d
}

// joinLines turns hard-wrapped paragraphs into single lines, keeping blank
// lines between paragraphs, so passages read well in a chat.
func joinLines(text string) string {
	paras := strings.Split(text, "\n\n")
	for i, p := range paras {
		paras[i] = strings.Join(strings.Fields(p), " ")
	}
	return strings.Join(paras, "\n\n")
}
