package offline

import (
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/examples/supervisor"
)

// This file holds messages that ask several questions, each needing a
// search of its own ("How much is the Team plan and what is its uptime
// SLA?"). One search for the whole message returns what the search
// favours, usually passages on one of the questions; instead each
// question is searched alone, in order, and answered from its own
// results, and the answer says which question the sources did not answer.

// maxSearchParts caps the questions of one message searched one by one:
// each costs a supervisor iteration, and one is left for the answer.
const maxSearchParts = supervisor.DefaultMaxIterations - 1

// searchParts returns the questions of q that each need a search, when q
// has two or more of them and nothing else; otherwise nil. A message
// that also asks for a tool's work (arithmetic, a chart, code), a seat
// cost, a recommendation or a comparison is left to the rules for those.
func searchParts(q string, tools []tool) []string {
	if !strings.ContainsAny(q, "?.!,") && !strings.Contains(q, " and ") && !strings.Contains(q, " also ") && !strings.Contains(q, " plus ") {
		return nil // one question: no regular expression run
	}
	parts := questionParts(q)
	if len(parts) < 2 || len(parts) > maxSearchParts {
		return nil
	}
	if w := tokens(q); asksSeatCost(q, w) || asksRecommendation(w) || isComparison(w) || asksChoice(q) || arithmetic(q) != "" {
		return nil
	}
	for _, p := range parts {
		w := tokens(p)
		if !strings.HasSuffix(p, "?") && !hasAny(w[:1], questionWords...) {
			return nil // a statement ("A shop sells pens at $3 each."), the setting of a question
		}
		if len(contentWords(p)) == 0 || isThanks(w) || isGreeting(w) || directTool(p, tools) != "" ||
			asksAboutConversation(w) || asksAboutUser(w) {
			return nil
		}
	}
	return parts
}

// partQuery is the search query of the i-th part: its content words,
// after the names of the first part when it points back with a pronoun
// ("what is its uptime SLA?" after "How much is the Team plan?").
func partQuery(parts []string, i int) string {
	words := contentWords(parts[i])
	if w := tokens(parts[i]); !isPriceQuestion(w) && strings.Contains(" "+strings.Join(w, " ")+" ", " how much ") {
		words = append(words, "cost") // "how much is the Team plan?"
	}
	for _, w := range slices.Clone(words) {
		// "sso" finds the passages that say "SAML" and "OIDC".
		for _, g := range synonyms {
			if slices.Contains(g, w) {
				for _, x := range g {
					if x != w && !slices.Contains(words, x) {
						words = append(words, x)
					}
				}
			}
		}
	}
	q := strings.Join(words, " ")
	if q == "" {
		q = parts[i]
	}
	if i > 0 && refersBack(tokens(parts[i])) {
		if names := namesIn(parts[0]); len(names) > 0 {
			q = strings.ToLower(strings.Join(names, " ")) + " " + q
		}
	}
	return q
}

// questionWords open a question.
var questionWords = []string{"how", "what", "what's", "whats", "which", "who", "when", "where", "why", "is", "are", "does", "do",
	"can", "could", "will", "should", "tell"}

// namesIn returns the capitalised words of s after its first word: the
// names it mentions ("Team" in "How much is the Team plan?"). The first
// word of a later sentence ("Thanks. What does Team cost?") and a
// capitalised common word ("Actually", "The") are no names.
func namesIn(s string) []string {
	var out []string
	sentenceStart := true
	for _, raw := range strings.Fields(s) {
		f := strings.TrimFunc(raw, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		first := sentenceStart
		sentenceStart = strings.ContainsAny(raw[len(raw)-1:], ".!?") && !abbreviationDots[strings.ToLower(raw)]
		if first || f == "" || f == "I" {
			continue
		}
		l := strings.ToLower(f)
		common := stopwords[l] && !isAcronym(f) && !monthNames[l] // "US" and "May" name something; "The" does not
		if r := []rune(f); unicode.IsUpper(r[0]) && !common && !sentenceOpeners[l] {
			out = append(out, f)
		}
	}
	return out
}

// abbreviationDots are abbreviations written with a dot, which ends no
// sentence: the word after "vs." or "e.g." may be a name.
var abbreviationDots = map[string]bool{"vs.": true, "v.": true, "e.g.": true, "i.e.": true, "incl.": true,
	"approx.": true, "esp.": true, "cf.": true, "mr.": true, "ms.": true, "mrs.": true, "dr.": true}

// monthNames are months whose name is also a common word ("May").
var monthNames = map[string]bool{"may": true, "march": true, "june": true, "august": true}

// sentenceOpeners are words that open a sentence or a correction, written
// with a capital for that reason, not because they name something.
var sentenceOpeners = map[string]bool{"actually": true, "sorry": true, "oops": true, "no": true, "nope": true, "yes": true,
	"ok": true, "okay": true, "well": true, "hmm": true, "wait": true, "rather": true, "instead": true, "thanks": true,
	"hi": true, "hello": true, "hey": true}

// isSearch reports whether a result comes from a search tool.
func isSearch(source string) bool {
	s := strings.ToLower(source)
	return !isDirect(source) && (strings.Contains(s, "search") || strings.Contains(s, "knowledge") ||
		strings.Contains(s, "rag") || strings.Contains(s, "web"))
}

// searchResults returns the results of search tools, in the order they
// came: the i-th is the search for the i-th part.
func searchResults(rs []result) []result {
	var out []result
	for _, r := range rs {
		if isSearch(r.source) {
			out = append(out, r)
		}
	}
	return out
}

// nextPartSearch returns the search for the first part of a multi-part
// message not searched yet, or false when every part has been (or the
// message is not one).
func nextPartSearch(p prompt) (supervisor.Decision, bool) {
	parts := searchParts(p.question, p.tools)
	n := len(searchResults(p.results))
	if parts == nil || n >= len(parts) || p.iteration >= p.max {
		return supervisor.Decision{}, false
	}
	t := pick(p.tools, "search_knowledge", "rag_retriever", "knowledge", "rag")
	if t == "" {
		return supervisor.Decision{}, false
	}
	why := "The message asks " + strconv.Itoa(len(parts)) + " questions that each need a search; searching for question " + strconv.Itoa(n+1) + " alone."
	return call(why, t, map[string]any{"query": partQuery(parts, n)}), true
}

// partsPending reports whether a multi-part message has parts not
// searched yet (for the reflection, which sees no tools).
func partsPending(p prompt) bool {
	parts := searchParts(p.question, p.tools)
	return parts != nil && len(searchResults(p.results)) < len(parts)
}

// partAnswered reports whether results answer one part of a multi-part
// message: they are relevant to its search query (pq, its content words)
// and answer what the part asks in its own words (answersAsked), which
// the query has lost: "globex bi founded" names no thing and asks no year,
// "When was Globex BI founded?" does both.
func partAnswered(pq, part string, rs []result) bool {
	return relevant(pq, rs) && answersAsked(part, rs)
}

// multiPartAnswer answers each part of a multi-part message from its own
// search, and names the parts the sources did not answer. It returns
// false unless every part has been searched.
func multiPartAnswer(q string, rs []result, tools []tool, u about) (string, bool) {
	parts := searchParts(q, tools)
	found := searchResults(rs)
	if parts == nil || len(found) < len(parts) {
		return "", false
	}
	if u.style == "" {
		u.style = cognition.Concise // one or two sentences a part
	}
	var b strings.Builder
	var missed []string
	answered := 0
	for i, part := range parts {
		own := []result{found[i]}
		pq := partQuery(parts, i)
		if i > 0 {
			b.WriteString("\n\n")
		}
		if !strings.ContainsAny(part[len(part)-1:], "?.!") {
			part += "?"
		}
		b.WriteString(strconv.Itoa(i+1) + ". " + upperFirst(strings.TrimPrefix(strings.TrimPrefix(part, "And "), "and ")) + "\n")
		if !own[0].usable() || !partAnswered(pq, part, own) {
			// Another part's search may have found it.
			own = usableResults(found)
		}
		if len(own) == 0 || !partAnswered(pq, part, own) {
			b.WriteString("I could not find an answer to this in " + sourceName(found[i].source) + ".")
			missed = append(missed, `"`+strings.TrimRight(part, "?.! ")+`"`)
			continue
		}
		answered++
		// The kind of answer asked ("how fast": a duration; "where": a
		// place) is in the part's frame words, which its query drops.
		cq := pq
		if asksDuration(tokens(part)) && !asksDuration(tokens(pq)) || asksPlace(part) && !asksPlace(pq) {
			cq = pq + " " + part
		}
		b.WriteString(composeFor(cq, own, u))
	}
	if answered == 0 {
		return notFound(q, rs, tools), true
	}
	if len(missed) > 0 {
		b.WriteString("\n\nI answered " + strconv.Itoa(answered) + " of your " + strconv.Itoa(len(parts)) + " questions; for " + joinAnd(missed) +
			" the sources hold nothing that matches, so I won't guess.")
	}
	return b.String(), true
}
