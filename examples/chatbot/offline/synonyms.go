package offline

import (
	"slices"
	"strings"
	"sync"

	"github.com/agentgraph/agentgraph/examples/chatbot/internal/lexicon"
)

// Synonyms and abbreviations: a question may ask in other words than its sources hold
// ("How many clients use the platform?" of "2,300 customers use the
// platform"). A question word is expanded to its WordNet synonyms that
// the results hold (see lexicon.Synonyms), and a passage or sentence
// that does not hold the word matches it by one of those, below one with
// the word itself. Another passage may hold the word in another sense
// ("Clients should back off and retry"), so the word is expanded even
// when some result holds it. A synonym counts only where the question
// does not already ask it in a word of its own: "is the price the same
// as the cost?" does not find "cost" twice. A word that is no common
// English word and that no result holds is matched the same way by the
// results' words it is an abbreviation of ("acct" of "account", see
// lexicon.Abbreviates). Less surely, a word stands for the words WordNet
// relates to it one step away (lexicon.Related: "folks" for "people",
// "reduction" for "discount"), which count for half a word where a
// passage's coverage is weighed and never say what a passage is about,
// and two words in a row for the one word their phrase is
// (lexicon.PhraseSynonyms: "price reduction" for "discount", also
// asked with a synonym of either word, "cost reduction", or inflected,
// "goes down" for "fall") or for a phrase that shares that word
// ("charge cards" for "credit cards"), which counts as one word for the
// two. A function word and the word after it may be an adverb of two
// words (lexicon.Guards.Idiom: "per annum"), whose synonyms ("per
// year") count as a synonym in everyday use does.

// expanded maps a question word to the synonyms of it that the results
// hold, each as the stems of its words ("set up" is "set", "up"), and to
// the words related to it one step away in WordNet that they hold (see
// lexicon.Related: "folks" is "people", "reduction" has "discount"),
// which stand for it less surely, and to the one-word synonyms of a
// phrase it makes with the next or the previous question word ("price
// reduction" is "discount"). Its match is asked only where the word
// itself is not matched.
type expanded struct {
	syn, phrase, related map[string][][]string
	// usage are the synonyms in everyday use (lexicon.Usage: "staff" is
	// "employees"), which hold one sense: they count as syn does, and
	// also where the results hold no other word of the question.
	usage map[string][][]string
}

// relatedCredit is how much of a question word a related word counts
// for where a passage's coverage of the question is weighed (see
// passageCover): half, so that a passage must match more of the
// question than by synonyms ("floors of the Singapore building" is not
// answered by "Acme builds a platform" with "Singapore" elsewhere).
const relatedCredit = 0.5

// phraseCredit is how much of each of its two words the one word of a
// phrase counts for (see lexicon.PhraseSynonyms): half, so that
// "discount" counts as one word for "price reduction", not two.
const phraseCredit = 0.5

// expandWords returns the expansions of words, the question's words,
// over toks, all the words of the results; nil when no word has a
// synonym there.
//
// q is the question as typed: a word it writes in capitals ("ERP",
// "AWS") is an initialism, never a chat abbreviation, and an
// abbreviation that shortens more than lexicon.MaxAbbreviated of the
// results' words stands for none of them.
func expandWords(q string, words, toks []string) expanded {
	var e expanded
	var caps map[string]bool
	for _, f := range strings.FieldsFunc(q, func(r rune) bool { return r < 'A' || r > 'Z' && r < 'a' || r > 'z' }) {
		if lexicon.Initialism(f) {
			if caps == nil {
				caps = map[string]bool{}
			}
			caps[strings.ToLower(f)] = true
		}
	}
	for _, w := range words {
		if !expandable(w) {
			continue
		}
		// A synonym in everyday use, of a word WordNet may not know
		// ("staff" is "employees").
		if u := guards().Usage(w, words, func(parts []string) bool { return holdsStems(toks, parts) }); len(u) > 0 {
			if e.usage == nil {
				e.usage = map[string][][]string{}
			}
			e.usage[w] = u
		}
		if !lexicon.Known(w) && !matches(w, toks) {
			// A chat abbreviation ("acct", "yrs") is the results' word
			// it shortens ("account", "years").
			if caps[w] {
				continue
			}
			var abbr [][]string
			for _, t := range toks {
				if lexicon.Abbreviates(w, t) && !slices.ContainsFunc(abbr, func(p []string) bool { return p[0] == stem(t) }) {
					abbr = append(abbr, []string{stem(t)})
				}
			}
			if len(abbr) > 0 && len(abbr) <= lexicon.MaxAbbreviated {
				if e.syn == nil {
					e.syn = map[string][][]string{}
				}
				e.syn[w] = abbr
			}
			continue
		}
		held := func(parts []string) bool { return holdsStems(toks, parts) }
		if syn := guards().Synonyms(w, words, held); len(syn) > 0 {
			if e.syn == nil {
				e.syn = map[string][][]string{}
			}
			e.syn[w] = syn
		}
		if rel := guards().Related(w, words, held); len(rel) > 0 {
			if e.related == nil {
				e.related = map[string][][]string{}
			}
			e.related[w] = rel
		}
	}
	// "How many workers ...?" asks a count of workers: a related word
	// that is the noun the results count ("about 140 employees") stands
	// for the noun asked as a synonym in everyday use does, in one sense
	// and wherever the question's other words are, since the count says
	// what it counts; if it is a word of a business a document counts by
	// (countNouns: "employee", not the "people" of "folks").
	if n := askedNoun(q); n != "" && expandable(n) && askedKind(tokens(q)) == kindCount {
		for _, r := range countNouns(n) {
			if parts := []string{stem(r)}; counted(toks, parts[0]) {
				if e.usage == nil {
					e.usage = map[string][][]string{}
				}
				e.usage[n] = append(e.usage[n], parts)
			}
		}
	}
	// A function word and the question word after it may be an adverb
	// of two words ("per annum"), whose synonyms ("annually", "every
	// year") the word stands for. A fixed phrase holds one sense: they
	// count as synonyms in everyday use do, also where the results hold
	// no other word of the question ("how much is Enterprise per
	// annum?" names only a plan).
	qt := tokens(q)
	for i := 0; i+1 < len(qt); i++ {
		b := qt[i+1]
		if !slices.Contains(words, b) || !expandable(b) {
			continue
		}
		if syn := guards().Idiom(qt[i], b, words, func(parts []string) bool { return holdsStems(toks, parts) }); len(syn) > 0 {
			if e.usage == nil {
				e.usage = map[string][][]string{}
			}
			e.usage[b] = append(e.usage[b], syn...)
		}
	}
	// Two words of the question in a row may be a phrase a document says
	// in one word ("price reduction" is "discount"): each of them
	// matches it.
	if len(words) > 1 {
		held := func(parts []string) bool { return holdsStems(toks, parts) }
		for i := 0; i+1 < len(qt); i++ {
			a, b := qt[i], qt[i+1]
			if !slices.Contains(words, a) || !slices.Contains(words, b) || !expandable(a) || !expandable(b) {
				continue
			}
			if syn := guards().Phrase(a, b, words, held); len(syn) > 0 {
				if e.phrase == nil {
					e.phrase = map[string][][]string{}
				}
				e.phrase[a] = append(e.phrase[a], syn...)
				e.phrase[b] = append(e.phrase[b], syn...)
			}
		}
	}
	return e
}

// counted reports whether toks hold a word of the stem noun right after a
// count: a number that is no year ("140 employees", "2,300 customers").
func counted(toks []string, noun string) bool {
	for i := 1; i < len(toks); i++ {
		if c := toks[i-1]; strings.Trim(c, "0123456789,") == "" && strings.ContainsAny(c, "0123456789") &&
			!yearRE.MatchString(c) && sameStem(toks[i], noun) {
			return true
		}
	}
	return false
}

// expandable reports whether a question word may stand for a synonym
// or an abbreviation: a word lexicon.Guards.Expandable passes (letters, no
// stop word, no name of the documents' own) that is no category.
func expandable(w string) bool {
	return categoryOf[w] == nil && guards().Expandable(w)
}

// nameWords are words the documents use as names: a plan or a product
// is no synonym of a common word ("team", "business", "forecast").
var nameWords = []string{"starter", "team", "business", "enterprise", "insights", "pipelines", "forecast", "acme", "analytics"}

// guards are the synonym guards of the demo's documents, whose names are
// nameWords (see lexicon.Guards): the knowledge server expands its
// searches by the same rules.
var guards = sync.OnceValue(func() *lexicon.Guards {
	return lexicon.NewGuards(nameWords, nil)
})

// holdsStems reports whether toks hold the stems parts as consecutive
// words.
func holdsStems(toks, parts []string) bool {
	for i := 0; i+len(parts) <= len(toks); i++ {
		ok := true
		for j, p := range parts {
			if ok = sameStem(toks[i+j], p); !ok {
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// match reports whether toks hold a synonym, a phrase's word or a
// related word w was expanded to.
func (e expanded) match(w string, toks []string) bool {
	return e.credit(w, toks) > 0
}

// sure reports whether toks hold a synonym or a phrase's word w was
// expanded to: what says that a passage is about w, as a related word
// ("level" of "floors", "structure" of "building") does not.
func (e expanded) sure(w string, toks []string) bool {
	for _, m := range []map[string][][]string{e.usage, e.syn, e.phrase} {
		for _, parts := range m[w] {
			if holdsStems(toks, parts) {
				return true
			}
		}
	}
	return false
}

// credit returns how much of w toks hold by the words it was expanded
// to: 1 by a synonym, phraseCredit by the one word of a phrase w makes
// with its neighbour, relatedCredit by a related word only, 0 by none.
func (e expanded) credit(w string, toks []string) float64 {
	for _, parts := range e.usage[w] {
		if holdsStems(toks, parts) {
			return 1
		}
	}
	for _, parts := range e.syn[w] {
		if holdsStems(toks, parts) {
			return 1
		}
	}
	for _, parts := range e.phrase[w] {
		if holdsStems(toks, parts) {
			return phraseCredit
		}
	}
	for _, parts := range e.related[w] {
		if holdsStems(toks, parts) {
			return relatedCredit
		}
	}
	return 0
}

// resultWords returns the words of every sentence of the results.
func resultWords(rs []result) []string {
	var all []string
	for _, r := range rs {
		for _, s := range sentencesOf(r.text) {
			all = append(all, s.words...)
		}
	}
	return all
}
