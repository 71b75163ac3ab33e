package lexicon

import (
	_ "embed"
	"slices"
	"strings"
	"sync"

	"github.com/kljensen/snowball/english"
)

// Stem returns the Snowball English (Porter2) stem of a lower-case word:
// "pricing", "priced" and "prices" are "price", "started" is "start" and
// "starter" is "starter", and "acme's" is "acm" as "acme" is. A word of
// one or two letters, or with a byte that is not a lower-case ASCII
// letter, a digit or an apostrophe, is returned as it is.
func Stem(w string) string {
	if len(w) <= 2 || !isLowerASCII(w) {
		return w
	}
	if len(w) > maxCachedWord {
		return english.Stem(w, true)
	}
	stems.RLock()
	s, ok := stems.m[w]
	stems.RUnlock()
	if ok {
		return s
	}
	s = english.Stem(w, true)
	stems.Lock()
	if len(stems.m) >= maxStems {
		clear(stems.m) // the words of recent questions and passages come back
	}
	stems.m[strings.Clone(w)] = s
	stems.Unlock()
	return s
}

// maxStems bounds the stems remembered, and maxCachedWord the length of
// a word remembered: longer tokens (ids, hashes, run-together text from
// uploaded documents) are rare in questions and would let the cache hold
// maxStems times their length.
const (
	maxStems      = 8192
	maxCachedWord = 32
)

// stems remembers the stems of the words last stemmed: the algorithm
// takes microseconds and allocates, and a chat stems the same few
// hundred words of its question and passages again and again.
var stems = struct {
	sync.RWMutex
	m map[string]string
}{m: make(map[string]string)}

func isLowerASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '\'' {
			return false
		}
	}
	return true
}

// wordnet is the synonym table: one group of synonyms a line, a phrase's
// words joined by "_", after WordNet's licence notice in lines starting
// with "#". A word written with a "+" after it ("free+" of
// "complimentary costless free+ gratis") is there in a later sense of
// its own: the group's other words have it as a synonym, it does not
// have them ("complimentary" finds "free", but "free" only its main
// senses' groups).
//
//go:embed wordnet.txt
var wordnet string

// maxSynonyms bounds the synonyms of one word, over all its groups.
const maxSynonyms = 12

// synonyms maps a word as WordNet writes it (its lemma: "client",
// "permit", "busy") to the words that share a WordNet synset with it, a
// phrase's words separated by a space. It is built on first use. The key
// is the word, not its stem: "busy" and "business" share the stem
// "busi" but no synonym.
var synonyms = sync.OnceValue(func() map[string][]string {
	m := make(map[string][]string, 16384)
	var group, stems []string
	var late []bool
	for line := range strings.Lines(wordnet) {
		if strings.HasPrefix(line, "#") {
			continue // the licence notice
		}
		group, stems, late = group[:0], stems[:0], late[:0]
		for _, w := range strings.Fields(line) {
			w, l := strings.CutSuffix(w, "+")
			w = strings.ReplaceAll(w, "_", " ")
			group, stems, late = append(group, w), append(stems, Stem(w)), append(late, l)
		}
		for i, w := range group {
			if strings.Count(w, " ") > 1 {
				continue // a phrase of more than two words is a synonym, not a key
			}
			if late[i] {
				if _, ok := m[w]; !ok {
					m[w] = nil // a word of the table all the same (Known)
				}
				continue
			}
			for j, x := range group {
				// Another form of the same word is no synonym.
				if stems[j] != stems[i] && len(m[w]) < maxSynonyms && !slices.Contains(m[w], x) {
					m[w] = append(m[w], x)
				}
			}
		}
	}
	return m
})

// relatedText is the related-words table: one word a line, then the
// words WordNet relates to it one step away (see Related), a phrase's
// words joined by "_", after WordNet's licence notice in lines starting
// with "#".
//
//go:embed related.txt
var relatedText string

// relatedWords maps a word as WordNet writes it to its related words
// (see Related), a phrase's words separated by a space. It is built on
// first use.
var relatedWords = sync.OnceValue(func() map[string][]string {
	m := make(map[string][]string, 16384)
	for line := range strings.Lines(relatedText) {
		if strings.HasPrefix(line, "#") {
			continue // the licence notice
		}
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		w, s := f[0], Stem(f[0])
		var rel []string
		for _, x := range f[1:] {
			// Another form of the same word is no relation.
			if x = strings.ReplaceAll(x, "_", " "); Stem(x) != s {
				rel = append(rel, x)
			}
		}
		if len(rel) > 0 {
			m[w] = rel
		}
	}
	return m
})

// Related returns the words WordNet relates to w, a lower-case word, or
// to the word w inflects, one step away, that are not its synonyms (see
// Synonyms): for a noun the more general word of its common senses
// ("folks" is "people", "reduction" "decrease") and the more specific
// ones ("reduction" has "discount"), and for any word the words derived
// from it or it from them ("founded" has "founder" and "foundation",
// "delivered" "delivery"). They stand for w less surely than a synonym
// does. A phrase has its words separated by a space. The caller must
// not modify the slice.
func Related(w string) []string {
	m := relatedWords()
	if r, ok := m[w]; ok {
		return r
	}
	var buf [maxBases]string
	s := Stem(w)
	for _, c := range basesOf(w, buf[:0]) {
		if r, ok := m[c]; ok && Stem(c) == s {
			return r
		}
	}
	return nil
}

// phrasesText is the phrase table: one phrase of two words a line, its
// words joined by "_", then the one-word synonyms of its most frequent
// sense (see PhraseSynonyms), after WordNet's licence notice in lines
// starting with "#".
//
//go:embed phrases.txt
var phrasesText string

// phrases maps a phrase of two words, separated by a space, to its
// one-word synonyms. It is built on first use.
var phrases = sync.OnceValue(func() map[string][]string {
	m := make(map[string][]string, 4096)
	for line := range strings.Lines(phrasesText) {
		if f := strings.Fields(line); len(f) >= 2 && !strings.HasPrefix(line, "#") {
			m[strings.ReplaceAll(f[0], "_", " ")] = f[1:]
		}
	}
	return m
})

// PhraseSynonyms returns the one-word synonyms WordNet gives the phrase
// of the lower-case words a and b, one of its words perhaps inflected:
// "price reduction" and "price reductions" are "discount", "goes down"
// and "go down" "fall", "set up"
// "found", "establish" and "launch". What a question asks in two words a
// document may say in one. The caller must not modify the slice.
func PhraseSynonyms(a, b string) []string {
	m := phrases()
	if p, ok := m[a+" "+b]; ok {
		return p
	}
	var buf, bufA [maxBases]string
	s := Stem(b)
	for _, c := range basesOf(b, buf[:0]) {
		if p, ok := m[a+" "+c]; ok && Stem(c) == s {
			return p
		}
	}
	// A phrasal verb is asked in the person and tense of its sentence:
	// "goes down" is "go down", "fall".
	for _, c := range basesOf(a, bufA[:0]) {
		if p, ok := m[c+" "+b]; ok && Inflects(a, c) {
			return p
		}
	}
	return nil
}

// maxSisterPhrases bounds the phrases one one-word synonym may be shared
// by for them to stand for one another (see SisterPhrases): a word many
// phrases stand for ("break") says no one thing.
const maxSisterPhrases = 4

// sisters maps a one-word synonym of the phrase table to the phrases it
// is the first synonym of, a phrase's words separated by a space. It is built on
// first use.
var sisters = sync.OnceValue(func() map[string][]string {
	m := make(map[string][]string, 4096)
	for p, syn := range phrases() {
		m[syn[0]] = append(m[syn[0]], p) // the main sense's word
	}
	for _, ps := range m {
		slices.Sort(ps)
	}
	return m
})

// SisterPhrases returns the other phrases of two words whose first
// one-word synonym (see PhraseSynonyms) is that of the phrase of the
// lower-case words a and b: "charge card" and "credit card" are both
// "plastic" first, so a question's "charge cards" finds a document's
// "credit cards"; "brush aside", whose "discount" comes after
// "dismiss", is no "price reduction". A one-word synonym that is the
// first of more than four phrases joins none of them.
// A phrase has its words separated by a space. The slice is the
// caller's.
func SisterPhrases(a, b string) []string {
	own := PhraseSynonyms(a, b)
	if len(own) == 0 {
		return nil
	}
	self := a + " " + b
	var out []string
	for _, x := range own[:1] {
		ps := sisters()[x]
		if len(ps) > maxSisterPhrases {
			continue
		}
		for _, p := range ps {
			if p != self && !slices.Contains(out, p) && !sameStems(p, self) {
				out = append(out, p)
			}
		}
	}
	return out
}

// sameStems reports whether two phrases have the same stems, word by
// word: "charge cards" is "charge card".
func sameStems(p, q string) bool {
	a, b := strings.Fields(p), strings.Fields(q)
	return slices.EqualFunc(a, b, func(x, y string) bool { return Stem(x) == Stem(y) })
}

// lemma returns the word of the synonym table that w, a lower-case word,
// is an inflection of: w itself when the table holds it, else w without
// a plural's, past tense's or gerund's ending ("clients" is "client",
// "permitted" "permit", "pricing" "price") when the two share a stem;
// "" when the table holds neither.
func lemma(w string) string {
	m := synonyms()
	if _, ok := m[w]; ok {
		return w
	}
	var buf [maxBases]string
	bases := basesOf(w, buf[:0])
	if len(bases) == 0 {
		return ""
	}
	s := Stem(w)
	for _, c := range bases {
		if _, ok := m[c]; ok && Stem(c) == s {
			return c
		}
	}
	return ""
}

// maxBases bounds what basesOf returns.
const maxBases = 3

// basesOf appends to dst the words w may be an inflection of, by its
// ending: "policies" may be "policy" or "policie", "ties" "ty" or
// "tie", "priced" "price" or "pric",
// "planned" "plann" or "plan". Words of three letters or fewer have none.
func basesOf(w string, dst []string) []string {
	if len(w) <= 3 {
		return dst
	}
	add := func(c string) {
		if len(c) >= 2 {
			dst = append(dst, c)
		}
	}
	doubled := func(base string) bool { // "permitt" of "permitted"
		return len(base) >= 3 && base[len(base)-1] == base[len(base)-2]
	}
	switch {
	case strings.HasSuffix(w, "'s"):
		add(w[:len(w)-2]) // "acme's" is "acme"
	case strings.HasSuffix(w, "ies"), strings.HasSuffix(w, "ied"):
		add(w[:len(w)-3] + "y") // "policies", "copied"
		add(w[:len(w)-1])       // "ties", "tied", "movies"
	case strings.HasSuffix(w, "es"):
		add(w[:len(w)-1])
		add(w[:len(w)-2])
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss"):
		add(w[:len(w)-1])
	case strings.HasSuffix(w, "ed"):
		add(w[:len(w)-1])
		add(w[:len(w)-2])
		if doubled(w[:len(w)-2]) {
			add(w[:len(w)-3])
		}
	case strings.HasSuffix(w, "ing"):
		add(w[:len(w)-3] + "e")
		add(w[:len(w)-3])
		if doubled(w[:len(w)-3]) {
			add(w[:len(w)-4])
		}
	}
	return dst
}

// Inflects reports whether a and b, lower-case words, are forms of one
// word by their endings alone: "business" and "businesses", "plan" and
// "planned", "policy" and "policies", but not "busy" and "business" or
// "internal" and "international", which share a Porter2 stem (see Stem)
// as words derived from one another would.
func Inflects(a, b string) bool {
	if a == b {
		return true
	}
	var bufA, bufB [maxBases]string
	ba, bb := basesOf(a, bufA[:0]), basesOf(b, bufB[:0])
	return slices.Contains(ba, b) || slices.Contains(bb, a) || slices.ContainsFunc(ba, func(x string) bool { return slices.Contains(bb, x) })
}

// Synonyms returns the words WordNet gives as synonyms of w, a
// lower-case word, and of the words w inflects: "clients" finds
// "customer", "permitted" finds "allow" and "let", "viewers" those of
// "viewers" and of "viewer". A phrase has its words separated by a space
// ("set up"). The words are those of the most frequent senses of common
// words, at most twelve; other forms of w itself are not among them, nor
// the synonyms of another word of w's stem ("busy" does not find those
// of "business"). The caller must not modify the slice.
func Synonyms(w string) []string {
	m := synonyms()
	own, ok := m[w]
	var buf [maxBases]string
	bases := basesOf(w, buf[:0])
	if len(bases) == 0 {
		return own
	}
	s := Stem(w)
	var out []string
	for _, c := range bases {
		syn, found := m[c]
		if !found || Stem(c) != s {
			continue
		}
		if !ok && out == nil {
			own, ok = syn, true // the one word w inflects: shared, not copied
			continue
		}
		if out == nil {
			out = append(make([]string, 0, maxSynonyms), own...)
		}
		for _, x := range syn {
			if len(out) < maxSynonyms && !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
	}
	if out == nil {
		return own
	}
	return out
}

// Known reports whether w, a lower-case word, is a word of the synonym
// table or an inflection of one: a common English word, not an
// abbreviation or a name.
func Known(w string) bool {
	return lemma(w) != ""
}

// Abbreviates reports whether a is an informal abbreviation of the word
// w, as chat writes them: w's first letters followed by some of its
// later consonants ("acct" of "account", "mgmt" of "management", "yrs"
// of "years", "reqs" of "requests", "msg" of "message"), or w clipped
// ("auth" of "authentication", "approx" of "approximately"). a has three
// to six letters, is no common word (Known), and is at least two letters
// shorter than w.
func Abbreviates(a, w string) bool {
	if len(a) < 3 || len(a) > 6 || len(w) < len(a)+2 || a[0] != w[0] || !isLetters(a) || !isLetters(w) {
		return false
	}
	if strings.HasPrefix(w, a) {
		return !Known(a)
	}
	// The longest common start, then consonants of w in order.
	k := 1
	for k < len(a) && a[k] == w[k] {
		k++
	}
	j := k
	for _, c := range []byte(a[k:]) {
		if strings.IndexByte("aeiou", c) >= 0 {
			return false
		}
		i := strings.IndexByte(w[j:], c)
		if i < 0 {
			return false
		}
		j += i + 1
	}
	// A plural's s is w's last letter: "yrs" is "years", not "yearsly".
	if a[len(a)-1] == 's' && w[len(w)-1] != 's' {
		return false
	}
	return !Known(a)
}

// Initialism reports whether field, a word as the question typed it, is
// written in capitals ("ERP", "AWS", "SSL"): an initialism, which names
// something, never a chat abbreviation of a longer word.
func Initialism(field string) bool {
	n := 0
	for _, r := range field {
		if r < 'A' || r > 'Z' {
			return false
		}
		n++
	}
	return n >= 2
}

// MaxAbbreviated bounds the words one chat abbreviation is expanded to:
// one that shortens many words stands for none of them surely.
const MaxAbbreviated = 3

func isLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return s != ""
}
