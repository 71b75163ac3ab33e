package lexicon

import (
	"slices"
	"strings"
)

// Guards decide which words of a question may stand for their synonyms
// (see [Synonyms]) in a search, and for which: the offline model
// matching its results and the knowledge server ranking its passages
// expand a question by these same rules.
//
//   - A word is expanded only when it has at least three letters, all
//     of them a to z, and is no function word and no name of the
//     documents' own: a plan or a product means only itself.
//   - A one-word synonym of under four letters (as its stem), or a
//     function word, is left out: a short word has many senses
//     ("leave" is "go").
//   - A synonym one of whose words shares a name's stem is left out:
//     the searched text matches words by their stems, so "busy" (of
//     "occupied") would find the Business plan and "forecasting" (of
//     "foretelling") the product Forecast. So is one the question asks
//     in a word of its own: it counts for that word.
//   - A synonym of several words needs one that is no function word:
//     "count on" counts by "count".
//   - A synonym counts only beside a word of the question that is no
//     name and that the searched text holds as asked (see
//     [Guards.Anchors]): "clients" of "how many clients use the
//     platform?" is "customers", but "looker" alone is no "viewer".
//
// A Guards is safe for concurrent use.
type Guards struct {
	names     map[string]bool // the names, and the table's words they inflect
	nameStems map[string]bool // the names' stems
	terms     func(string) []string
}

// MaxExpanded bounds the synonyms one question word is expanded to.
const MaxExpanded = 4

// Fewest letters of a question word expanded, and of a one-word
// synonym's stem.
const (
	minExpanded   = 3
	minSynonymLen = 4
)

// NewGuards returns the guards of documents that use names (words:
// "starter", "Insights") as the names of their own plans and products.
// Function words are those of [StopWord]. terms reduces a synonym to the
// terms the searched text is matched by, as it reduces the text (a
// search index's tokenizer, which may drop words), and must be safe for
// concurrent use; nil means each of its words' [Stem].
func NewGuards(names []string, terms func(text string) []string) *Guards {
	g := &Guards{names: make(map[string]bool, 2*len(names)), nameStems: make(map[string]bool, len(names)), terms: terms}
	for _, n := range names {
		n = strings.ToLower(n)
		g.names[n] = true
		g.nameStems[Stem(n)] = true
		if l := lemma(n); l != "" {
			g.names[l] = true // "insights" names "insight" too
		}
	}
	if g.terms == nil {
		g.terms = func(x string) []string {
			words := strings.Fields(x)
			for i, w := range words {
				words[i] = Stem(w)
			}
			return words
		}
	}
	return g
}

// Name reports whether w, a lower-case word, is a name of the documents'
// own, or an inflection of one ("pipeline" of "pipelines", "forecasting"
// of "forecast"). A word that only shares a name's stem is not: "busy"
// is no "business".
func (g *Guards) Name(w string) bool {
	if g.names[w] {
		return true
	}
	var buf [maxBases]string
	for _, b := range basesOf(w, buf[:0]) {
		if g.names[b] && Stem(b) == Stem(w) {
			return true
		}
	}
	return false
}

// Expandable reports whether w, a lower-case question word, may stand
// for a synonym: three letters a to z or more, no function word, no
// name.
func (g *Guards) Expandable(w string) bool {
	return len(w) >= minExpanded && isLetters(w) && !StopWord(w) && !g.Name(w)
}

// Anchors reports whether w, a question word the searched text holds as
// asked, lets the question's synonyms count beside it: it is no name
// and no function word. A question none of whose anchors the text holds
// is about something the text lacks, however many synonyms it finds.
func (g *Guards) Anchors(w string) bool {
	return !StopWord(w) && !g.Name(w)
}

// Synonyms returns the synonyms of w, a lower-case question word, that
// it may stand for, each as its terms (see [NewGuards]: "set up" is
// "set", "up"), at most MaxExpanded: none when w is not Expandable, and of
// [Synonyms](w) only those that pass the guards (see [Guards]) and
// that held reports the searched text to hold. asked are the question's
// words, w among them.
func (g *Guards) Synonyms(w string, asked []string, held func(stems []string) bool) [][]string {
	if !g.Expandable(w) {
		return nil
	}
	return g.pass(w, Synonyms(w), asked, held)
}

// Related returns the words related to w, a lower-case question word,
// one step away in WordNet (see [Related]: a more general or a more
// specific noun, a derived form) that it may stand for, each as its
// terms, at most MaxExpanded, by the rules and with the arguments of
// [Guards.Synonyms]. A related word stands for w less surely than a
// synonym: a search counts it below one.
func (g *Guards) Related(w string, asked []string, held func(stems []string) bool) [][]string {
	if !g.Expandable(w) {
		return nil
	}
	return g.pass(w, Related(w), asked, held)
}

// Usage returns the synonyms in everyday use of w, a lower-case question
// word (see [Usage], and [UsageBeside] for the groups that hold their
// sense only beside a word of asked), that it may stand for, each as its
// terms, at most MaxExpanded, by the rules and with the arguments of
// [Guards.Synonyms]:
// but for the last, as they hold one sense, they may count where no other
// word of the question is.
func (g *Guards) Usage(w string, asked []string, held func(stems []string) bool) [][]string {
	if !g.Expandable(w) {
		return nil
	}
	return g.pass(w, UsageBeside(w, asked), asked, held)
}

// Phrase returns the one-word synonyms of the phrase of the question's
// consecutive words a and b (see [PhraseSynonyms]: "price reduction" is
// "discount") that it may stand for, each as its terms, at most
// MaxExpanded, by the rules and with the arguments of [Guards.Synonyms]:
// both words must be Expandable, and a synonym that shares a stem with
// either of them is left out: "manager" says only part of "managing
// director", and a text's "account manager" is none.
//
// A phrase WordNet gives no one-word synonym may say a phrase it does
// in other words: one of its two words is then taken as a one-word
// synonym of its own that is no name ("cost reduction" is "price
// reduction", so "discount"). And a phrase stands for the other phrases
// that share a one-word synonym with it (see [SisterPhrases]: "charge
// cards" for "credit card"), whose words may share a stem with its own,
// and a phrase of the usage table for the words of its group (see
// [Usage]: "bank card" is "credit card").
func (g *Guards) Phrase(a, b string, asked []string, held func(stems []string) bool) [][]string {
	if !g.Expandable(a) || !g.Expandable(b) {
		return nil
	}
	sa, sb := Stem(a), Stem(b)
	pa, pb := a, b
	own := PhraseSynonyms(a, b)
	for _, x := range Synonyms(a) {
		if own != nil {
			break
		}
		if g.plainSynonym(x) {
			pa, own = x, PhraseSynonyms(x, b)
		}
	}
	for _, x := range Synonyms(b) {
		if own != nil {
			break
		}
		if g.plainSynonym(x) {
			pa, pb, own = a, x, PhraseSynonyms(a, x)
		}
	}
	candidates := slices.DeleteFunc(slices.Clone(own), func(x string) bool {
		return slices.ContainsFunc(strings.Fields(x), func(p string) bool { s := Stem(p); return s == sa || s == sb })
	})
	if own != nil {
		candidates = append(candidates, SisterPhrases(pa, pb)...)
	}
	// A phrase of the usage table stands for its group ("bank card" for
	// "credit card", "price cut" for "discount").
	for _, x := range Usage(a + " " + b) {
		if !slices.Contains(candidates, x) {
			candidates = append(candidates, x)
		}
	}
	others := slices.DeleteFunc(slices.Clone(asked), func(q string) bool { return q == b })
	return g.pass(a, candidates, others, held)
}

// Idiom returns the synonyms of the phrase the question's function word
// a makes with its next word b, an adverb of two words ("per annum" is
// "annually", "yearly", "every year"; "right away" is "immediately"),
// that b may stand for, each as its terms, at most MaxExpanded, by the
// rules and with the arguments of [Guards.Synonyms]: b must be
// Expandable, and the phrase a group of the synonym table's.
func (g *Guards) Idiom(a, b string, asked []string, held func(stems []string) bool) [][]string {
	if !StopWord(a) || !g.Expandable(b) {
		return nil
	}
	syn := synonyms()[a+" "+b]
	if len(syn) == 0 {
		return nil
	}
	return g.pass(b, syn, asked, held)
}

// plainSynonym reports whether x, a synonym of a phrase's word, may
// stand for it in the phrase (see Guards.Phrase): one word, no
// function word, no name.
func (g *Guards) plainSynonym(x string) bool {
	return !strings.Contains(x, " ") && !StopWord(x) && !g.Name(x) && !g.nameStems[Stem(x)]
}

// pass returns the candidates of w that pass the guards, as terms.
func (g *Guards) pass(w string, candidates, asked []string, held func(stems []string) bool) [][]string {
	var out [][]string
	for _, x := range candidates {
		words := strings.Fields(x)
		if len(words) == 1 && (StopWord(x) || len(Stem(x)) < minSynonymLen) {
			continue
		}
		if !slices.ContainsFunc(words, func(p string) bool { return !StopWord(p) }) {
			continue // "out of" says nothing of its own
		}
		parts := g.terms(x)
		if len(parts) == 0 || slices.ContainsFunc(words, func(p string) bool { return g.Name(p) || g.nameStems[Stem(p)] }) {
			continue
		}
		if slices.ContainsFunc(asked, func(q string) bool { return q != w && slices.Contains(parts, Stem(q)) }) {
			continue
		}
		if !held(parts) {
			continue
		}
		if out = append(out, parts); len(out) == MaxExpanded {
			break
		}
	}
	return out
}
