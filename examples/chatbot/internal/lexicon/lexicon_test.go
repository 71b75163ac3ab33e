package lexicon_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot/internal/lexicon"
)

// TestStem checks words of the Snowball English vocabulary against their
// published stems (snowballstem.org's voc.txt and output.txt), and that
// inflections of one word share a stem while unrelated words that share
// their first letters do not, as truncation made them.
func TestStem(t *testing.T) {
	for w, want := range map[string]string{
		"consign": "consign", "consigned": "consign", "consigning": "consign", "consignment": "consign",
		"consist": "consist", "consisted": "consist", "consistency": "consist", "consistent": "consist",
		"knack": "knack", "knackeries": "knackeri", "knaves": "knave", "knavish": "knavish",
		"generously": "generous", "generate": "generat", "generation": "generat",
		"happy": "happi", "happiness": "happi", "skies": "sky", "dying": "die", "news": "news",
		"pricing": "price", "priced": "price", "prices": "price",
		"acme's": "acm", "a": "a", "SLA": "SLA", "café": "café", "2fa": "2fa",
	} {
		if got := lexicon.Stem(w); got != want {
			t.Errorf("Stem(%q) = %q, want %q", w, got, want)
		}
	}
	for _, p := range [][2]string{{"started", "starter"}, {"trial", "training"}, {"plan", "planet"}} {
		if a, b := lexicon.Stem(p[0]), lexicon.Stem(p[1]); a == b {
			t.Errorf("Stem(%q) = Stem(%q) = %q, want them apart", p[0], p[1], a)
		}
	}
}

// TestSynonyms checks that the table finds the synonyms of a word's
// common senses in any inflection, leaves out the word's own forms and
// the synonyms of rare senses, and is bounded.
func TestSynonyms(t *testing.T) {
	for _, c := range []struct {
		word string
		want []string
		not  []string
	}{
		{"clients", []string{"customer"}, []string{"client", "clients"}},
		{"permitted", []string{"allow", "let"}, nil},
		{"shut", []string{"close"}, nil},
		{"frequently", []string{"often"}, nil},
		{"founded", []string{"establish"}, nil},
		{"demonstrations", []string{"presentation"}, nil},
		// "bill" as an invoice is a frequent sense; a bird's beak is not.
		{"bill", []string{"invoice"}, []string{"beak", "neb"}},
	} {
		got := lexicon.Synonyms(c.word)
		for _, w := range c.want {
			if !slices.Contains(got, w) {
				t.Errorf("Synonyms(%q) = %q, lacks %q", c.word, got, w)
			}
		}
		for _, w := range c.not {
			if slices.Contains(got, w) {
				t.Errorf("Synonyms(%q) = %q, has %q", c.word, got, w)
			}
		}
	}
	for _, w := range []string{"the", "xyzzy", "qwerty", ""} {
		if got := lexicon.Synonyms(w); len(got) != 0 {
			t.Errorf("Synonyms(%q) = %q, want none", w, got)
		}
	}
}

// TestSynonymsBounded checks the table's bounds over every word of it:
// at most twelve synonyms a word, none of them another form of it, and
// phrases of at most two words.
func TestSynonymsBounded(t *testing.T) {
	for _, w := range []string{"set", "run", "take", "make", "go", "break", "cut", "head", "line", "point"} {
		got := lexicon.Synonyms(w)
		if len(got) > 12 {
			t.Errorf("Synonyms(%q) has %d words, want at most 12", w, len(got))
		}
		for _, x := range got {
			if lexicon.Stem(x) == lexicon.Stem(w) || strings.Count(x, " ") > 1 {
				t.Errorf("Synonyms(%q) has %q", w, x)
			}
		}
	}
}

// TestAbbreviates checks chat abbreviations against the words they
// shorten, and that common words, other words and abbreviations of
// another word are not taken for them.
func TestAbbreviates(t *testing.T) {
	for _, p := range [][2]string{{"acct", "account"}, {"mgmt", "management"}, {"yrs", "years"}, {"reqs", "requests"},
		{"msg", "message"}, {"auth", "authentication"}, {"approx", "approximately"}, {"dept", "department"}, {"ppl", "people"}} {
		if !lexicon.Abbreviates(p[0], p[1]) {
			t.Errorf("Abbreviates(%q, %q) = false, want true", p[0], p[1])
		}
	}
	for _, p := range [][2]string{{"plan", "planning"}, {"cost", "costume"}, {"yrs", "yearly"}, {"acct", "access"},
		{"msg", "sms"}, {"ab", "about"}, {"reqs", "request"}, {"team", "teams"}, {"acct", "acct"}} {
		if lexicon.Abbreviates(p[0], p[1]) {
			t.Errorf("Abbreviates(%q, %q) = true, want false", p[0], p[1])
		}
	}
}

// TestSynonymsPartOfSpeech checks that words of an adjective synset and
// of an adverb synset at the same offset of their own data files are not
// synonyms: the generator once keyed both parts of speech "a".
func TestSynonymsPartOfSpeech(t *testing.T) {
	for _, p := range [][2]string{
		{"preferential", "meanwhile"}, {"naked", "sleepily"}, {"kindly", "editorially"},
		{"convinced", "faultlessly"}, {"frontal", "sociolinguistically"}, {"reassured", "fervently"},
	} {
		if slices.Contains(lexicon.Synonyms(p[0]), p[1]) || slices.Contains(lexicon.Synonyms(p[1]), p[0]) {
			t.Errorf("%q and %q are synonyms, want them apart (an adjective and an adverb synset merged)", p[0], p[1])
		}
	}
	// The adverb synsets themselves are read.
	if !slices.Contains(lexicon.Synonyms("meanwhile"), "meantime") {
		t.Errorf("Synonyms(%q) = %q, want it to hold %q", "meanwhile", lexicon.Synonyms("meanwhile"), "meantime")
	}
}

// TestSynonymsOfLaterSenses checks that a word in a group by a later
// sense of its own is a synonym of the group's words but does not take
// them as its own: "complimentary" finds "free" (its third sense,
// costless), and "free" finds no "gratis", nor "language" "words".
func TestSynonymsOfLaterSenses(t *testing.T) {
	if got := lexicon.Synonyms("complimentary"); !slices.Contains(got, "free") {
		t.Errorf("Synonyms(complimentary) = %q, want free among them", got)
	}
	for w, not := range map[string]string{"free": "gratis", "language": "words"} {
		if got := lexicon.Synonyms(w); slices.Contains(got, not) {
			t.Errorf("Synonyms(%s) = %q, want no %s: it is its word in a later sense only", w, got, not)
		}
	}
	if !lexicon.Known("free") {
		t.Error("Known(free) = false, want true")
	}
}
