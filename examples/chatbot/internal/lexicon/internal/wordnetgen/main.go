// Command wordnetgen writes the synonym table of package lexicon from
// the WordNet 3.0 database (Debian's wordnet-base package installs it in
// /usr/share/wordnet). It reads only the index files (index.noun,
// index.verb, index.adj, index.adv), where each word lists the synsets
// it belongs to, most frequent sense first, and how many of its senses
// were seen in the tagged corpus. A synset offset is a byte offset into
// its part of speech's data file, so a synset is keyed by the index
// line's own part of speech (n, v, a, r) and its offset: an adjective
// and an adverb synset at the same offset are different synsets.
//
// A word joins a synset's group only when the synset is one of its
// first senses (-senses), the word was seen in the tagged corpus at all
// (rare words are left out), and it is a single word or a phrase of two
// words, of letters only. Groups of fewer than two such words are left
// out, and so are groups a word would be in past -groups (its most
// frequent senses are kept). A common word also joins, past -groups,
// the group of a later sense the tagged corpus saw (up to -tagged) when
// the group's other words make it without the word: "free" is in
// "complimentary costless gratis", its third sense. It is written with a
// "+" after it ("free+"): the group's words stand for it, but it stands
// for them only in that rarer sense, which the lexicon does not guess
// ("words" for "language", its sixth sense, would find any passage). Each output line is one group, its words
// separated by spaces and a phrase's words joined by "_".
//
// It writes two more tables from the data files (data.noun and the
// others), which hold each synset's words and its pointers to other
// synsets: -related, a word's related words one step away (see
// buildRelated), and -phrases, the one-word synonyms of a phrase of two
// words (see buildPhrases). Each table starts with the lines of the
// -license file, WordNet's notice, each after "# ", so that the notice
// goes with every copy of the data.
//
// Usage:
//
//	go run ./internal/wordnetgen -dict /usr/share/wordnet -o wordnet.txt -related related.txt -phrases phrases.txt
package main

import (
	"cmp"
	"flag"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	dict := flag.String("dict", "/usr/share/wordnet", "directory of the WordNet database (index.noun, index.verb, index.adj, index.adv)")
	out := flag.String("o", "wordnet.txt", "file to write the table to")
	relatedOut := flag.String("related", "related.txt", "file to write the related-words table to")
	phrasesOut := flag.String("phrases", "phrases.txt", "file to write the phrase-synonym table to")
	license := flag.String("license", "WORDNET-LICENSE", "file of the WordNet notice written, as '#' lines, at the top of the table")
	senses := flag.Int("senses", 2, "a word joins the groups of its first `n` senses only")
	tagged := flag.Int("tagged", 6, "and, of its first `n` senses, those the tagged corpus saw that another word's first senses put in a group")
	groups := flag.Int("groups", 3, "a word is in at most `n` groups")
	size := flag.Int("size", 6, "a group has at most `n` words")
	flag.Parse()
	if *senses < 1 || *groups < 1 || *size < 2 || *tagged < 0 {
		log.Fatal("wordnetgen: -senses and -groups must be at least 1, -size at least 2, -tagged at least 0")
	}
	table, err := build(*dict, *senses, *tagged, *groups, *size)
	if err != nil {
		log.Fatal(err)
	}
	notice, err := os.ReadFile(*license)
	if err != nil {
		log.Fatalf("wordnetgen: %v (pass -license, the WordNet notice that must go with the data)", err)
	}
	var head strings.Builder
	for line := range strings.Lines(string(notice)) {
		head.WriteString(strings.TrimRight("# "+strings.TrimRight(line, "\n"), " ") + "\n")
	}
	if err := os.WriteFile(*out, []byte(head.String()+table), 0o644); err != nil {
		log.Fatal(err)
	}
	related, err := buildRelated(*dict, *senses, relatedSize)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*relatedOut, []byte(head.String()+related), 0o644); err != nil {
		log.Fatal(err)
	}
	phrases, err := buildPhrases(*dict, relatedSize)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*phrasesOut, []byte(head.String()+phrases), 0o644); err != nil {
		log.Fatal(err)
	}
}

// relatedSize bounds the words related to one word.
const relatedSize = 12

// sense is one synset a word belongs to, by the word's rank of it.
type sense struct {
	word   string
	rank   int  // 0: the word's most frequent sense
	common bool // the word was seen in the tagged corpus
	late   bool // a sense past -senses (see readIndex)
}

// build returns the table's text. A word's later senses (see
// readIndex) join a group that its other words make without them, but
// count neither for the group's rank nor against the word's -groups
// cap: they add a common word to a group its first senses would not
// put it in ("free" to "complimentary costless gratis"), and neither
// make a group nor push one out.
func build(dict string, senses, tagged, maxGroups, size int) (string, error) {
	synsets := map[string][]sense{} // "n00001740" → its words
	for _, pos := range []string{"noun", "verb", "adj", "adv"} {
		if err := readIndex(filepath.Join(dict, "index."+pos), senses, tagged, synsets); err != nil {
			return "", err
		}
	}
	type group struct {
		words []string
		late  map[string]bool // the words of a later sense
		rank  int             // the sum of its other words' ranks: lower is more frequent
	}
	var all []group
	for _, ws := range synsets {
		if !slices.ContainsFunc(ws, func(s sense) bool { return s.common && !s.late }) {
			continue // rare words only, or the later senses of common ones
		}
		// Common words first, each by its rank of the sense, later
		// senses last, and at most -size of them.
		slices.SortStableFunc(ws, func(a, b sense) int {
			if a.late != b.late {
				if b.late {
					return -1
				}
				return 1
			}
			if a.common != b.common {
				if a.common {
					return -1
				}
				return 1
			}
			return cmp.Compare(a.rank, b.rank)
		})
		g := group{}
		for _, s := range ws[:min(len(ws), size)] {
			g.words = append(g.words, s.word)
			if s.late {
				if g.late == nil {
					g.late = map[string]bool{}
				}
				g.late[s.word] = true
				continue
			}
			g.rank += s.rank
		}
		if len(g.words) < 2 {
			continue
		}
		slices.Sort(g.words)
		all = append(all, g)
	}
	// Most frequent senses first, then by words, so that the output is
	// the same on every run and the cap keeps a word's main senses.
	slices.SortFunc(all, func(a, b group) int {
		return cmp.Or(cmp.Compare(a.rank, b.rank), slices.Compare(a.words, b.words))
	})
	in := map[string]int{}
	seen := map[string]bool{}
	var lines []string
	for _, g := range all {
		var keep []string
		main := 0 // the words kept of their first senses
		for _, w := range g.words {
			if g.late[w] {
				keep = append(keep, w+"+")
			} else if in[w] < maxGroups {
				keep = append(keep, w)
				main++
			}
		}
		line := strings.Join(keep, " ")
		if main < 2 || seen[line] {
			continue
		}
		seen[line] = true
		for _, w := range keep {
			if !g.late[w] {
				in[w]++
			}
		}
		lines = append(lines, line)
	}
	slices.Sort(lines)
	return strings.Join(lines, "\n") + "\n", nil
}

// readIndex adds the words of an index file to synsets: the plain words
// (see plain) of their first senses senses, or of their first one alone
// when the tagged corpus never saw them; and, marked late, those of
// their senses after these, up to the first tagged, that the tagged
// corpus saw (the third sense of "free", "costless"). build keeps a late
// word only in a group that another word's first senses make.
func readIndex(name string, senses, tagged int, synsets map[string][]sense) error {
	entries, err := readIndexEntries(name)
	if err != nil {
		return err
	}
	for _, e := range entries {
		if !plain(e.word) {
			continue
		}
		for rank, key := range e.synsets {
			// A word not seen in the tagged corpus is rare: only its
			// first sense counts, for the groups of common words it
			// is another word for ("yearly" of "annual").
			late := rank >= senses
			if late && (rank >= tagged || rank >= e.tagged) || !e.common && (rank > 0 || strings.Contains(e.word, "_")) {
				break
			}
			synsets[key] = append(synsets[key], sense{e.word, rank, e.common, late})
		}
	}
	return nil
}

// plain reports whether a lemma is one word or two of lower-case letters
// ("set_up"), at least three letters long.
func plain(w string) bool {
	if len(w) < 3 || strings.Count(w, "_") > 1 || w[0] == '_' || w[len(w)-1] == '_' {
		return false
	}
	for i := 0; i < len(w); i++ {
		if (w[i] < 'a' || w[i] > 'z') && w[i] != '_' {
			return false
		}
	}
	return true
}
