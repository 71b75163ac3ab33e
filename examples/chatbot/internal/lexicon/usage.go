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

// usageGroups maps the stem of each word of the usage table to the other
// words of its groups, a phrase's words separated by a space. It is built
// on first use.
var usageGroups = sync.OnceValue(func() map[string][]string {
	m := map[string][]string{}
	for line := range strings.Lines(usageText) {
		if strings.HasPrefix(line, "#") {
			continue
		}
		var group []string
		for _, w := range strings.Fields(line) {
			group = append(group, strings.ReplaceAll(w, "_", " "))
		}
		for _, w := range group {
			if strings.Contains(w, " ") {
				continue // a phrase is a synonym, not a key
			}
			s := Stem(w)
			for _, x := range group {
				if Stem(x) != s && !slices.Contains(m[s], x) {
					m[s] = append(m[s], x)
				}
			}
		}
	}
	return m
})

// Usage returns the synonyms in everyday use of w, a lower-case word, or
// of a word of its stem ("charities" of "charity"): the words a question
// about a company says for the words its documents use ("staff" for
// "employees", "downtime" for "outage", "charity" for "non-profit"),
// which WordNet lacks or ranks behind rarer senses. Unlike [Synonyms],
// they hold one sense, so a search may count them where none of the
// question's other words is. A phrase has its words separated by a
// space. The caller must not modify the slice.
func Usage(w string) []string {
	return usageGroups()[Stem(w)]
}
