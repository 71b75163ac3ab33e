package lexicon

import (
	_ "embed"
	"slices"
	"strings"
	"sync"
)

// usageText is the table of synonyms in everyday use: one group a line,
// a phrase's words joined by "_", after comment lines starting with "#".
//
//go:embed usage.txt
var usageText string

// usageGroups maps each word of the usage table, and each of its
// inflections (inflections), to the other words of its groups, a
// phrase's words separated by a space. It is built on first use.
var usageGroups = sync.OnceValue(func() map[string][]string {
	return readUsage()
})

// contextGroup is a group of the usage table that holds its sense only
// beside a word of its context: "refund" is a service credit in a
// question about downtime, not in one about cancelling.
type contextGroup struct {
	words   []string // the group's other words, a phrase's separated by a space
	context []string // the words beside which it holds
}

// contextGroups maps each word of a group with a context (a line whose
// words are followed by "|" and its context words), and each of its
// inflections, to its groups. It is built on first use.
var contextGroups = sync.OnceValue(func() map[string][]contextGroup {
	m := map[string][]contextGroup{}
	for line := range strings.Lines(usageText) {
		group, context, ok := strings.Cut(line, "|")
		if strings.HasPrefix(line, "#") || !ok {
			continue
		}
		words := strings.Fields(group)
		for i := range words {
			words[i] = strings.ReplaceAll(words[i], "_", " ")
		}
		ctx := strings.Fields(context)
		for _, w := range words {
			others := slices.DeleteFunc(slices.Clone(words), func(x string) bool { return x == w })
			for _, form := range inflections(w) {
				m[form] = append(m[form], contextGroup{words: others, context: ctx})
			}
		}
	}
	return m
})

// UsageBeside returns the synonyms in everyday use of w (see [Usage])
// and those of the table's groups that hold their sense only beside a
// word of a context, when one of asked, the question's other words, is
// one of its context's or an inflection of one: "refund" is "credit"
// beside "downtime" ("do I get a refund for downtime?"), not beside
// "cancel". The caller must not modify the slice.
func UsageBeside(w string, asked []string) []string {
	out := Usage(w)
	for _, g := range contextGroups()[w] {
		if !slices.ContainsFunc(asked, func(q string) bool {
			return q != w && slices.ContainsFunc(g.context, func(c string) bool { return slices.Contains(inflections(c), q) })
		}) {
			continue
		}
		out = slices.Clone(out)
		for _, x := range g.words {
			if !slices.Contains(out, x) {
				out = append(out, x)
			}
		}
	}
	return out
}

// readUsage reads the usage table's groups, those with a context (see
// contextGroups) left out: each word and its inflections to the other
// words of its groups.
func readUsage() map[string][]string {
	m := map[string][]string{}
	for line := range strings.Lines(usageText) {
		if strings.HasPrefix(line, "#") || strings.Contains(line, "|") {
			continue
		}
		var group []string
		for _, w := range strings.Fields(line) {
			group = append(group, strings.ReplaceAll(w, "_", " "))
		}
		for _, w := range group {
			// A phrase is a key too, by its own form and its last
			// word's plural ("bank cards"), for [Guards.Phrase].
			for _, form := range inflections(w) {
				for _, x := range group {
					if x != w && !slices.Contains(m[form], x) {
						m[form] = append(m[form], x)
					}
				}
			}
		}
	}
	return m
}

// inflections returns w and its plural or third-person forms: "charity"
// and "charities", "employee" and "employees"; of a phrase, its last
// word's ("bank cards"). A past or a participle is
// a word of the table of its own ("founded"): an inflection taken off by
// a stemmer would make "found" (as in "I found a bug") "founded".
func inflections(w string) []string {
	switch {
	case strings.HasSuffix(w, "y") && len(w) > 2 && !strings.ContainsRune("aeiou", rune(w[len(w)-2])):
		return []string{w, w[:len(w)-1] + "ies"}
	case strings.HasSuffix(w, "s"), strings.HasSuffix(w, "x"), strings.HasSuffix(w, "ch"), strings.HasSuffix(w, "sh"):
		return []string{w, w + "es"}
	}
	return []string{w, w + "s"}
}

// Usage returns the synonyms in everyday use of w, a lower-case word or
// phrase of the table (a phrase's words separated by a space) or a
// plural of one ("charities" of "charity", "bank cards"): the words a
// question about a company says for the words its documents use ("staff"
// for "employees", "downtime" for "outage", "charity" for "non-profit"),
// which WordNet lacks or ranks behind rarer senses. Unlike [Synonyms],
// they hold one sense, so a search may count them where none of the
// question's other words is. A word is looked up by its form, not its
// stem: "available" is no "availability", "found" no "founded". A phrase
// has its words separated by a space. The caller must not modify the
// slice.
//
// A word of no group that WordNet relates to nothing of its own (see
// [Related]) is related to what its synonyms are, as the members of a
// synset share their more general and more specific words: the group
// of a word its synonyms' lines relate them to is its own. "workforce",
// whose synset is "manpower", "hands" and "work force", is what
// "manpower" is a kind of, "personnel", so "employees". That word leads
// the slice, when two of its synonyms are related to it and it to one
// of them (WordNet relates both ways; "barman" and "governance" pass
// too, a sense no question about a business asks). A synonym's
// own group is not: a synonym may be one of another sense ("steady" is
// "firm", "test" "trial").
func Usage(w string) []string {
	if g, ok := usageGroups()[w]; ok {
		return g
	}
	return synsetUsage(w)
}

// synsetUsage returns the usage group a word of none has by its
// synonyms' related words (see Usage), the word of the group it has it
// by first; nil for none.
func synsetUsage(w string) []string {
	groups := usageGroups()
	syn := Synonyms(w)
	lend := func(x string) []string {
		g := groups[x]
		if g == nil || x == w {
			return nil
		}
		out := make([]string, 0, len(g)+1)
		out = append(out, x)
		for _, y := range g {
			if y != w {
				out = append(out, y)
			}
		}
		return out
	}
	if Related(w) != nil {
		return nil // related to words of its own, which may be another kind
	}
	// A related word two synonyms share is the synset's; one only one
	// of them has may be of another sense of that synonym ("bartender",
	// of "barman", is an "employee", but "barkeeper" and "mixologist"
	// are related to nothing).
	rel := relatedWords()
	for i, x := range syn {
		for _, r := range rel[x] {
			if g := lend(r); g != nil && slices.ContainsFunc(syn[i+1:], func(y string) bool { return slices.Contains(rel[y], r) }) &&
				slices.ContainsFunc(rel[r], func(y string) bool { return slices.Contains(syn, y) }) {
				return g
			}
		}
	}
	return nil
}
