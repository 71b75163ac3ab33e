package knowledge

import (
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentgraph/agentgraph/examples/chatbot/internal/lexicon"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/internal/bm25"
)

// synonymWeight is how much a synonym a query word was expanded to counts
// against the query's own words.
const synonymWeight = 0.5

// relatedWeight is how much a word related to a query word one step away
// in WordNet (lexicon.Related: a more general or more specific noun, a
// derived form) counts: less than a synonym, which means the same.
const relatedWeight = 0.3

// heldSynonymWeight is how much a synonym counts of a query word that the
// passages hold themselves, perhaps in another sense ("test changes" for
// the "test" of "how long can I test it for free?", whose synonym is
// "trial"): less than a synonym of a word they lack, as the word itself
// may be what is meant.
const heldSynonymWeight = 0.35

// searchTerms returns the terms of a search for query: own, the terms of
// its words (with the words of the passages its abbreviations stand for,
// see expandQuery) that are no name of the documents' own, and extra,
// the terms of its names, at full weight, then the words its other words
// may stand for, weighted below the query's own (see synonymTerms).
func (k *kb) searchTerms(query string) (own []string, extra []bm25.Term) {
	for _, f := range strings.FieldsFunc(k.expandQuery(query), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		for _, t := range bm25.Tokenize(f) {
			if k.guards.Anchors(strings.ToLower(f)) {
				own = append(own, t)
			} else {
				// A name ranks the passages that hold it, but a
				// synonym does not count beside it alone.
				extra = append(extra, bm25.Term{Text: t, Weight: 1})
			}
		}
	}
	return own, append(extra, k.synonymTerms(query)...)
}

// synonymTerms returns the synonyms in everyday use (lexicon.Usage) of the
// query's words that the passages hold, weighted below the query's own
// words and counted wherever they are, and the WordNet synonyms (see
// lexicon.Synonyms) of the
// query's words that no passage holds, those the passages hold, weighted
// below the query's own words: "clients" searches "customer", "permit"
// "allow". They pass the guards the offline model's synonyms pass (see
// lexicon.Guards): no name is expanded or searched for a synonym, nor a
// short or function word, and a synonym counts only in a passage that
// holds a word the query asks, not a name. A word that is no common
// English word searches the corpus's words it is an abbreviation of (see
// lexicon.Abbreviates). A synonym of two words ("set up") is searched
// when the corpus holds both.
func (k *kb) synonymTerms(query string) []bm25.Term {
	var extra []bm25.Term
	fields := strings.FieldsFunc(query, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	var asked []string
	for _, typed := range fields {
		asked = append(asked, strings.ToLower(typed))
	}
	held := func(stems []string) bool {
		return !slices.ContainsFunc(stems, func(t string) bool { return !k.index.Contains(t) })
	}
	for i, typed := range fields {
		f := asked[i]
		terms := bm25.Tokenize(f)
		if len(terms) != 1 || !k.guards.Expandable(f) {
			continue
		}
		// A synonym in everyday use ("staff" is "employees") holds one
		// sense: it counts where no other word of the query is. A phrase
		// of several words ("data source", "non profit") does not: each
		// of its words alone ("data") means what it means, so they count
		// only in a passage that holds a word of the query.
		for _, parts := range k.guards.Usage(f, asked, held) {
			for _, t := range parts {
				extra = append(extra, bm25.Term{Text: t, Weight: synonymWeight, Beside: len(parts) > 1})
			}
		}
		if k.index.Contains(terms[0]) {
			// A word the passages hold may be meant in another sense
			// than theirs: its synonyms count too, below the word.
			// A synonym of several words ("back up" of "support") is
			// left out: its words alone mean what they mean.
			for _, parts := range k.guards.Synonyms(f, asked, held) {
				if len(parts) == 1 {
					extra = append(extra, bm25.Term{Text: parts[0], Weight: heldSynonymWeight, Beside: true})
				}
			}
			continue
		}
		if !lexicon.Known(f) {
			// A chat abbreviation ("acct", "yrs") searches the corpus's
			// words it shortens ("account", "years"); one typed in
			// capitals ("ERP", "AWS") is an initialism, and one that
			// shortens too many words stands for none.
			if lexicon.Initialism(typed) {
				continue
			}
			var abbr []bm25.Term
			for _, w := range k.vocabulary() {
				if lexicon.Abbreviates(f, w) {
					abbr = append(abbr, bm25.Term{Text: bm25.Stem(w), Weight: synonymWeight, Beside: true})
				}
			}
			if len(abbr) <= lexicon.MaxAbbreviated {
				extra = append(extra, abbr...)
			}
			continue
		}
		for _, parts := range k.guards.Synonyms(f, asked, held) {
			for _, t := range parts {
				extra = append(extra, bm25.Term{Text: t, Weight: synonymWeight, Beside: true})
			}
		}
		for _, parts := range k.guards.Related(f, asked, held) {
			for _, t := range parts {
				extra = append(extra, bm25.Term{Text: t, Weight: relatedWeight, Beside: true})
			}
		}
	}
	// Two words in a row may be a phrase the passages say in one word
	// ("price reduction" is "discount"): that word says both of them, so
	// it counts where neither is, as a synonym in everyday use does, and
	// as a synonym of each of them: as much as one word of the query's
	// own ("do charities get a cost reduction?" finds "volume discounts"
	// beside "non-profits", over the passages that only say "costs"). A
	// phrase of two words ("credit card" of "charge cards") does not:
	// each of its words alone means what it means. They come first: a
	// term counts once, at its first weight, and the phrase's word may
	// also be a word related to one of its words ("discount" of
	// "reduction"), which counts less.
	var phrased []bm25.Term
	for i := 0; i+1 < len(asked); i++ {
		// An adverb of two words ("per annum") searches its synonyms
		// ("annually", "per year") for its word, which is none of the
		// passages'.
		for _, parts := range k.guards.Idiom(asked[i], asked[i+1], asked, held) {
			for _, t := range parts {
				phrased = append(phrased, bm25.Term{Text: t, Weight: synonymWeight, Beside: len(parts) > 1})
			}
		}
		for _, parts := range k.guards.Phrase(asked[i], asked[i+1], asked, held) {
			w := 2 * synonymWeight
			if len(parts) > 1 {
				w = synonymWeight
			}
			for _, t := range parts {
				phrased = append(phrased, bm25.Term{Text: t, Weight: w, Beside: len(parts) > 1})
			}
		}
	}
	return append(phrased, extra...)
}

// guardsOf returns the synonym guards of passages, with their names
// (namesOf), matching synonyms by the terms the index holds: a phrase
// is searched without the stop words Tokenize drops ("count on" by
// "count").
func guardsOf(passages []passage) *lexicon.Guards {
	return lexicon.NewGuards(namesOf(passages), bm25.Tokenize)
}

// namesOf returns the words the documents use as names: those their
// passages write capitalised after another word of the same sentence
// ("the Team plan", "Acme Forecast", "by email or Slack") more often than
// in lower case ("dashboards" once opens "Embedded Dashboards", but is
// mostly a word), lower-cased. A sentence opens each line, and follows a
// sentence's end (see endsSentence) or a list's, table's or heading's
// marker ("- Storage", "| Basic |", "### Metrics"). A name means only itself: no synonym
// stands for it, and it stands for none (see lexicon.Guards).
func namesOf(passages []passage) []string {
	capitalised, lower := map[string]int{}, map[string]int{}
	var names []string
	for _, p := range passages {
		for line := range strings.Lines(p.text) {
			start := true // a sentence starts here
			for _, f := range strings.Fields(line) {
				w := strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
				if w == "" {
					// A list's, table's or heading's marker ("-", "|",
					// "###") opens what follows as a sentence is.
					start = true
					continue
				}
				switch lw := strings.ToLower(w); {
				case !isLetters(lw):
				case lw == w:
					lower[lw]++
				case !start:
					if capitalised[lw]++; capitalised[lw] == 1 {
						names = append(names, lw)
					}
				}
				start = endsSentence(f)
			}
		}
	}
	return slices.DeleteFunc(names, func(w string) bool { return capitalised[w] <= lower[w] })
}

// endsSentence reports whether f, a word as a passage writes it, ends a
// sentence or a clause a capital may open: its last mark, behind closing
// quotes, brackets and emphasis ("plan.", "fast.\"", "(yearly).",
// "**Pro.**", "wait…"), is one of . ! ? : or an ellipsis.
func endsSentence(f string) bool {
	f = strings.TrimRight(f, "\"'”’)]*_`")
	r, _ := utf8.DecodeLastRuneInString(f)
	return strings.ContainsRune(".!?:…", r)
}

// expandQuery returns query with the words of the passages that its
// abbreviations stand for, when no passage holds the abbreviation itself:
// an initialism spelled by the first letters of consecutive words ("SSO"
// is "single sign-on", "2FA" is "two-factor authentication" or any other
// count of factors), or a word clipped before a number ("Sev 1" is
// "Severity 1"), or a word with one typing slip. The expansions come from the corpus, not a list, so they
// hold for whatever the documents say.
func (k *kb) expandQuery(query string) string {
	fields := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	var extra []string
	for i, f := range fields {
		if terms := bm25.Tokenize(f); len(terms) != 1 || k.index.Contains(terms[0]) {
			continue
		}
		nextNumber := i+1 < len(fields) && isNumber(fields[i+1])
		found := false
		for _, p := range k.passages {
			if x := expansion(f, nextNumber, p.section+". "+p.text); x != "" && !containsWord(extra, x) {
				extra, found = append(extra, x), true
				break
			}
		}
		if !found {
			// A count and a word written as one ("twofactor", "multistep"):
			// the word, as the corpus writes it after its own count
			// ("multi-factor").
			if x := k.countedWord(f); x != "" && !containsWord(extra, x) {
				extra, found = append(extra, x), true
			}
		}
		if !found && len(f) >= 5 && isLetters(f) {
			// No abbreviation: a word with one typing slip ("polcy",
			// "bussiness") is the corpus's word it is one edit from.
			if x := k.nearWord(f); x != "" && !containsWord(extra, x) {
				extra = append(extra, x)
			}
		}
	}
	if len(extra) == 0 {
		return query
	}
	return query + " " + strings.Join(extra, " ")
}

// expansion returns the words of text that the abbreviation a stands for,
// or "".
func expansion(a string, beforeNumber bool, text string) string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	letters := strings.TrimLeft(a, "0123456789")
	counted := len(letters) < len(a) // "2fa": a count, then the initials
	if isLetters(letters) && (len(letters) >= 3 || counted && len(letters) >= 2) && len(letters) <= 5 {
		for i := range words {
			if i+len(letters) > len(words) || counted && i == 0 {
				continue
			}
			run := words[i : i+len(letters)]
			ok, long := true, false
			for j, w := range run {
				ok = ok && w[0] == letters[j] && isLetters(w)
				long = long || len(w) >= 4
			}
			if ok && long && hyphenated(strings.ToLower(text), words[max(0, i-1):i+len(letters)]) {
				// A term: its words, or the count before the initials
				// ("multi-factor"), are joined by a hyphen; "some small
				// options" is no term.
				return strings.Join(run, " ")
			}
		}
	}
	if beforeNumber && isLetters(a) && len(a) >= 3 {
		for i, w := range words[:max(0, len(words)-1)] {
			if len(w) > len(a)+1 && strings.HasPrefix(w, a) && isNumber(words[i+1]) {
				return w // "sev 1": "severity 1"
			}
		}
	}
	return ""
}

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return s != ""
}

func isNumber(s string) bool { return s != "" && strings.Trim(s, "0123456789") == "" }

func containsWord(ws []string, w string) bool {
	for _, x := range ws {
		if x == w {
			return true
		}
	}
	return false
}

// hyphenated reports whether text writes the words ws one after another
// with a hyphen between two of them ("single sign-on").
func hyphenated(text string, ws []string) bool {
	for i := 0; i+1 < len(ws); i++ {
		if strings.Contains(text, ws[i]+"-"+ws[i+1]) {
			return true
		}
	}
	return false
}

// nearWord returns the first word of the corpus one typing slip from w
// (a letter left out, added, changed or two swapped), or "".
func (k *kb) nearWord(w string) string {
	for _, p := range k.passages {
		for _, x := range strings.FieldsFunc(strings.ToLower(p.section+" "+p.text), func(r rune) bool { return !unicode.IsLetter(r) }) {
			if x != w && oneEdit(w, x) {
				return x
			}
		}
	}
	return ""
}

// oneEdit reports whether a and b differ by one deletion, insertion,
// substitution or swap of neighbouring letters.
func oneEdit(a, b string) bool {
	if len(a) > len(b) {
		a, b = b, a
	}
	switch len(b) - len(a) {
	case 0:
		var diff []int
		for i := 0; i < len(a); i++ {
			if a[i] != b[i] {
				diff = append(diff, i)
			}
		}
		return len(diff) == 1 || len(diff) == 2 && diff[1] == diff[0]+1 && a[diff[0]] == b[diff[1]] && a[diff[1]] == b[diff[0]]
	case 1:
		i := 0
		for i < len(a) && a[i] == b[i] {
			i++
		}
		return a[i:] == b[i+1:]
	}
	return false
}

// countPrefixes are the counts a compound may open with.
var countPrefixes = []string{"single", "double", "triple", "multi", "one", "two", "three", "four", "five"}

// countedWord returns the word after the count of w when w is a count and
// a word of the corpus written as one ("factor" of "twofactor"), or "".
//
// The corpus must write the word after a count of the same kind as w's
// ("multi-factor" for "twofactor"): "multitenant" is not "single-tenant",
// nor "twoyear" "one year".
func (k *kb) countedWord(w string) string {
	for _, c := range countPrefixes {
		rest, ok := strings.CutPrefix(w, c)
		if !ok || len(rest) < 4 {
			continue
		}
		if terms := bm25.Tokenize(rest); len(terms) != 1 || !k.index.Contains(terms[0]) {
			continue
		}
		for _, p := range k.passages {
			if countedIn(p.section+". "+p.text, rest, countKind(c)) {
				return rest
			}
		}
	}
	return ""
}

// countedIn reports whether text holds word, or a form of it that starts
// with it ("years" of "year"), after a count of the given kind.
func countedIn(text, word string, kind int) bool {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for i := 1; i < len(words); i++ {
		if strings.HasPrefix(words[i], word) && isCountWord(words[i-1]) && countKind(words[i-1]) == kind {
			return true
		}
	}
	return false
}

// isCountWord reports whether w is a count: a number, or a word of
// countPrefixes.
func isCountWord(w string) bool {
	return isNumber(w) || slices.Contains(countPrefixes, w)
}

// countKind is 1 for a count of one ("one", "single", "1") and 2 for a
// count of more ("two", "multi", "3"): counts of one kind stand for each
// other, not for the other kind's.
func countKind(w string) int {
	if w == "one" || w == "single" || w == "1" {
		return 1
	}
	return 2
}

// vocabulary returns the distinct lower-case words of the corpus, built
// on first use.
func (k *kb) vocabulary() []string {
	k.vocabOnce.Do(func() {
		seen := map[string]bool{}
		for _, p := range k.passages {
			for _, w := range strings.FieldsFunc(strings.ToLower(p.section+" "+p.text), func(r rune) bool { return !unicode.IsLetter(r) }) {
				if !seen[w] {
					seen[w] = true
					k.vocab = append(k.vocab, w)
				}
			}
		}
		slices.Sort(k.vocab)
	})
	return k.vocab
}
