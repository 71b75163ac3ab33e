package offline

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/agentgraph/agentgraph/document"
	"github.com/agentgraph/agentgraph/examples/supervisor"
)

// Documents: the offline model writes the chunk and document summaries of
// package document's LLMSummarizer (recognised by its system prompts,
// document.DefaultChunkInstructions and document.DefaultCombineInstructions)
// by extraction, and its supervisor loads an uploaded document, listed in
// the Conversation section by document.Describe lines, when the question
// is about it.

// summaryPrompt is what the model understood of a summarizer's prompt.
type summaryPrompt struct {
	name      string   // the document's name
	text      string   // a chunk's text (kindChunkSummary)
	summaries []string // the parts' summaries (kindCombine)
}

// summaryKind reports whether system is one of the document summarizer's
// system prompts.
func summaryKind(system string) (kind, bool) {
	switch {
	case strings.Contains(system, document.DefaultChunkInstructions):
		return kindChunkSummary, true
	case strings.Contains(system, document.DefaultCombineInstructions):
		return kindCombine, true
	}
	return kindText, false
}

var (
	docLineRE      = regexp.MustCompile(`^Document: (.*) \([^()]*\)$`)
	partLineRE     = regexp.MustCompile(`^Part \d+ of \d+:$`)
	numberedLineRE = regexp.MustCompile(`^\d+\.\s+(.*)$`)
)

// readSummaryPrompt reads the human prompt of LLMSummarizer.SummarizeChunk
// ("Document: NAME (TYPE)", "Part I of N:", the text, "Summary of this
// part:") or of Combine ("Document: ...", the numbered summaries,
// "Summary:").
func readSummaryPrompt(k kind, human string) summaryPrompt {
	var p summaryPrompt
	lines := strings.Split(strings.TrimSpace(human), "\n")
	if len(lines) > 0 {
		if m := docLineRE.FindStringSubmatch(strings.TrimSpace(lines[0])); m != nil {
			p.name = m[1]
			if n, err := strconv.Unquote(p.name); err == nil { // the summarizer quotes names
				p.name = n
			}
			lines = lines[1:]
		}
	}
	if k == kindChunkSummary {
		if len(lines) > 0 && partLineRE.MatchString(strings.TrimSpace(lines[0])) {
			lines = lines[1:]
		}
		if n := len(lines); n > 0 && strings.TrimSpace(lines[n-1]) == "Summary of this part:" {
			lines = lines[:n-1]
		}
		p.text = strings.TrimSpace(strings.Join(lines, "\n"))
		return p
	}
	for _, l := range lines {
		if m := numberedLineRE.FindStringSubmatch(strings.TrimSpace(l)); m != nil {
			p.summaries = append(p.summaries, strings.TrimSpace(m[1]))
		}
	}
	return p
}

// coversPrefix starts a chunk summary's list of the part's headings.
const coversPrefix = "This part covers "

// summarizeChunk summarizes a part of a document by extraction: the
// headings it covers, then its first sentence and the next sentences
// that hold figures or names, at most three, each cut to 200 bytes.
// Nothing is invented; text without sentences is quoted from its start.
func summarizeChunk(text string) string {
	var headings []string
	for _, line := range strings.Split(text, "\n") {
		if m := headingRE.FindStringSubmatch(strings.TrimSpace(line)); m != nil && !slices.Contains(headings, m[1]) {
			headings = append(headings, strings.TrimSpace(m[1]))
		}
	}
	var out []string
	if len(headings) > 0 {
		out = append(out, coversPrefix+joinAnd(headings[:min(len(headings), 4)])+".")
	}
	n := 0
	for i, s := range sentencesOf(text) {
		if n == 3 {
			break
		}
		if i == 0 || strings.ContainsAny(s.text, "0123456789$%") || hasName(s.text) {
			out = append(out, endSentence(truncate(s.text, 200)))
			n++
		}
	}
	if n == 0 {
		out = append(out, endSentence(truncate(strings.Join(strings.Fields(text), " "), 300)))
	}
	return strings.Join(out, " ")
}

// hasName reports whether a sentence has a capitalised word after its
// first: a name, a product, a place.
func hasName(s string) bool {
	f := strings.Fields(s)
	for _, w := range f[min(1, len(f)):] {
		if c := w[0]; c >= 'A' && c <= 'Z' {
			return true
		}
	}
	return false
}

func endSentence(s string) string {
	if s == "" || strings.ContainsAny(s[len(s)-1:], ".!?…") {
		return s
	}
	return s + "."
}

// combineSummaries summarizes a document from its parts' summaries: the
// headings they cover, then the first other sentence of each part, at
// most six sentences in all.
func combineSummaries(name string, summaries []string) string {
	var topics, facts []string
	for _, s := range summaries {
		sents := strings.Split(replaceAll(sentenceEndRE, s, "$1\x00"), "\x00")
		took := false
		for _, sent := range sents {
			sent = strings.TrimSpace(sent)
			if t, ok := strings.CutPrefix(sent, coversPrefix); ok {
				for _, x := range splitAnd(strings.TrimSuffix(t, ".")) {
					if !slices.Contains(topics, x) {
						topics = append(topics, x)
					}
				}
				continue
			}
			if sent != "" && !took {
				facts = append(facts, endSentence(sent))
				took = true
			}
		}
	}
	var out []string
	if len(topics) > 0 {
		subject := "The document"
		if name != "" {
			subject = name
		}
		out = append(out, fmt.Sprintf("%s covers %s.", subject, joinAnd(topics[:min(len(topics), 6)])))
	}
	for _, f := range facts {
		if len(out) == 6 {
			break
		}
		out = append(out, f)
	}
	if len(out) == 0 {
		return "The document has no text to summarize."
	}
	return strings.Join(out, " ")
}

// splitAnd splits "a, b and c" into its items.
func splitAnd(s string) []string {
	var out []string
	for _, x := range strings.Split(strings.ReplaceAll(s, " and ", ", "), ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// doc is one document of the supervisor's documents list.
type doc struct {
	name, id, status, summary string
}

// describeRE reads a document.Describe line.
var describeRE = regexp.MustCompile(`^- (.+) \(id (\S+), (pending|processing|ready|failed)(?:, \d+ chunks)?, ~\d+ tokens\)(?:: (.*))?$`)

// documentsOf reads the documents listed in a prompt's Conversation
// section, one document.Describe line each.
func documentsOf(conversation string) []doc {
	var out []doc
	for _, line := range strings.Split(conversation, "\n") {
		if m := describeRE.FindStringSubmatch(strings.TrimSpace(line)); m != nil {
			name := m[1]
			if n, err := strconv.Unquote(name); err == nil { // Describe quotes names
				name = n
			}
			out = append(out, doc{name: name, id: m[2], status: m[3], summary: m[4]})
		}
	}
	return out
}

// docWords are the words with which a question refers to an uploaded
// document rather than to what it asks about.
var docWords = []string{"document", "documents", "doc", "docs", "file", "files", "upload", "uploaded", "attached",
	"attachment", "say", "says", "said", "mention", "mentions", "mentioned", "my", "according", "contain", "contains"}

// refersToDocument reports whether the question names an uploaded
// document: "the document", "my file", "the upload".
func refersToDocument(words []string) bool {
	return hasPrefix(words, "document", "doc", "file", "upload", "attach")
}

// withoutDocWords is q without the words that only point at a document.
func withoutDocWords(q string) string {
	var out []string
	for _, w := range tokens(q) {
		if !slices.Contains(docWords, w) {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// aboutDocuments is q without its document words when a document was
// loaded this turn (a load_document result), so that the coverage of the
// results and the quotes of the answer count only what q asks about.
func aboutDocuments(q string, rs []result) string {
	for _, r := range rs {
		if r.source == "load_document" {
			return withoutDocWords(q)
		}
	}
	return q
}

// decideDocument is the supervisor's document rule: a question that
// refers to an uploaded document, names one, or whose words a ready
// document's summary covers, loads the best matching document (ready or
// being processed; load_document waits) with the question's other words
// as the query.
func decideDocument(p prompt, q string) (supervisor.Decision, bool) {
	t := pick(p.tools, "load_document")
	docs := documentsOf(p.conversation)
	if t == "" || len(docs) == 0 {
		return supervisor.Decision{}, false
	}
	words := tokens(q)
	topic := withoutDocWords(q)
	content := contentWords(topic)
	explicit := refersToDocument(words)
	best, bestScore, bestNamed := -1, -1.0, false
	for i, d := range docs {
		if d.status == "failed" {
			continue
		}
		nameWords := contentWords(strings.TrimSuffix(d.name, pathExt(d.name)))
		named := len(nameWords) > 0 && !slices.ContainsFunc(nameWords, func(w string) bool { return !slices.Contains(words, w) })
		toks := tokens(d.name + " " + d.summary)
		hit := 0
		for _, w := range content {
			if matches(w, toks) {
				hit++
			}
		}
		score := 0.0
		if len(content) > 0 {
			score = float64(hit) / float64(len(content))
		}
		if named {
			score += 2
		}
		if score >= bestScore { // ties: the latest upload
			best, bestScore, bestNamed = i, score, named
		}
	}
	if best < 0 || !explicit && !bestNamed && (bestScore < coverage || docs[best].status != "ready") {
		return supervisor.Decision{}, false
	}
	d := docs[best]
	args := map[string]any{"document_id": d.id}
	if topic != "" {
		args["query"] = searchQuery(topic)
	}
	return call(fmt.Sprintf("The question is about the uploaded document %s, which the documents list shows; loading it comes before other tools.", d.name), t, args), true
}

// pathExt returns the extension of a file name, with its dot.
func pathExt(name string) string {
	if i := strings.LastIndexByte(name, '.'); i > 0 {
		return name[i:]
	}
	return ""
}
