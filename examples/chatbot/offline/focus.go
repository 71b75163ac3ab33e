package offline

import (
	"slices"
	"strings"
	"sync"

	"github.com/agentgraph/agentgraph/examples/chatbot/internal/lexicon"
)

// A question's focus is what it needs to know: the thing asked about
// ("workforce" of "how large is Acme's workforce?", "clients" of "how
// many clients does Acme serve?") or the event asked of ("established"
// of "in what year was Acme established?"). The rest of its words say
// what kind of answer it wants (the degree of "how large", the measure
// of "what year"), name the company every document is about ("Acme"),
// or frame the question ("which plan"). A sentence that shares only
// those with the question is about something else: "Query speed on large
// dashboards improved" says nothing of a workforce, and "a SOC 2 report,
// renewed every year" nothing of a founding. Such a sentence is no
// answer, however well it scores on the question's other words; the
// model says it found nothing rather than quote it.

// focusWords returns the question's focus among words, its relevance
// words (see relevanceWords): those that are no frame word, no verb of
// the frame ("happens", "counts": plainVerbs), no number,
// not the company's name, not the degree a "how" asks ("large", "big",
// "old"), no measure asked (see measureWord: "year" of "in what year",
// "hours" of "how many hours")
// and not the word that says which one ("last" of "last month").
func focusWords(q string, words []string) []string {
	focus, _ := focusAndKind(q, words)
	return focus
}

// focusAndKind returns the question's focus among words (see
// focusWords) and its kind words: those that only say what kind of
// value is asked, the degree a "how" asks, a measure asked and the word
// that says which one, and a verb of a beginning asked the year of
// ("year" and "formed" of "in what year was the company formed?").
func focusAndKind(q string, words []string) (focus, kind []string) {
	toks := tokens(q)
	if asksPlace(q) || askedList(toks) != "" {
		// "Which nation is Acme's main office in?", "where do your
		// servers live?", "which plan levels can we subscribe to?": the
		// rules of places and lists find the answer by its kind; the
		// question's other words ("main", "live") say which.
		return nil, nil
	}
	degree := map[string]bool{}
	for i := 0; i+1 < len(toks); i++ {
		// "How large", "how many", "how old": the word after "how"
		// is the kind of answer asked, a size or a count. So is the
		// noun of a duration before "of" ("the length of a demo").
		if toks[i] == "how" {
			degree[toks[i+1]] = true
		}
		if (durationNoun(toks[i]) || measureWord(toks[i])) && toks[i+1] == "of" && (askedKind(toks) != kindNone || asksDuration(toks)) {
			degree[toks[i]] = true // "the size of the customer base"
		}
	}
	// "What year was Acme set up?": a question that asks the year of a
	// beginning (kindBegin) asks it in its measure wherever "what" or
	// "which" stands, as "in what year" does; the measure says what kind
	// of answer is wanted, and the verb of the beginning what about. Kept
	// in the focus, "year" would be matched by "renewed every year"
	// while the sentence that says "founded in 2019" holds no focus word.
	begins := askedKind(toks) == kindBegin
	for i := 0; i+1 < len(toks); i++ {
		// "Last month", "every year", "per day": the word before a
		// measure says which one, as much the kind of answer as it.
		// A measure is the kind of answer asked after "how many" or a
		// preposition's "what" or "which" ("how many hours", "in what
		// year"); elsewhere it may be the thing asked ("help desk
		// hours", "what hours does the team work?").
		if measureWord(toks[i+1]) {
			degree[toks[i]] = true
			if toks[i] == "many" || i > 0 && hasAny(toks[i:i+1], "what", "which") && hasAny(toks[i-1:i], "in", "at", "by", "since", "until", "on") ||
				begins && hasAny(toks[i:i+1], "what", "which") {
				degree[toks[i+1]] = true
			}
		}
	}
	// "When was Acme founded?": the verb of the beginning says that a
	// year is asked (kindBegin), which any verb of a beginning gives.
	// So do the words of a phrase of one ("set up" of "when was Acme
	// set up?") and a gerund of existence after it (existenceVerbs:
	// "operating" of "when did the firm begin operating?"); any other
	// gerund says what began ("selling" of "when did Acme begin selling
	// in Japan?") and stays in the focus.
	begin := askedKind(toks) == kindBegin
	begun := map[string]bool{}
	if begin {
		for i := range toks {
			n := beginAt(toks, i)
			for _, w := range toks[i : i+n] {
				begun[w] = true
			}
			if n > 0 && i+n < len(toks) && existenceVerbs[toks[i+n]] {
				begun[toks[i+n]] = true
			}
		}
	}
	for _, w := range words {
		switch {
		case degree[w] || begin && (beginVerb(w) || begun[w]):
			kind = append(kind, w)
		case frameWords[w] || questionForms[w] || plainVerbs[w] || companyWord(w):
		case strings.Trim(w, "0123456789.,$%") == "":
		default:
			focus = append(focus, w)
		}
	}
	return focus, kind
}

// existenceVerbs are the gerunds that, after a verb of a beginning, say
// only that the subject began to be, an explicit list: "when did the firm
// begin operating?" asks when it began.
var existenceVerbs = map[string]bool{"operating": true, "trading": true, "existing": true}

// companyWord reports whether w is a word of the company's own name,
// which the documents are all about and so no focus of a question:
// "Acme's" of "how large is Acme's workforce?".
func companyWord(w string) bool {
	w = strings.TrimSuffix(strings.TrimSuffix(w, "'s"), "’s")
	return w == "acme" || w == "analytics"
}

// measureConcepts are the WordNet words of a measure: a word that is
// one of them, or one that WordNet relates to "time period", "time unit"
// or "time" one step away (timeConcepts; see lexicon.Related: "year",
// "month", "minute"), says what kind of answer is asked ("what year",
// "how many hours"), not what about.
var (
	measureConcepts = []string{"time period", "time unit", "time", "amount", "number", "magnitude", "size", "quantity"}
	timeConcepts    = []string{"time period", "time unit", "time"}
)

// measures caches measureWord per word; its size is bounded by
// maxMeasures, beyond which words are looked up uncached.
var (
	measuresMu sync.Mutex
	measures   = map[string]bool{}
)

const maxMeasures = 4096

// measureWord reports whether w, a lower-case question word, is a
// measure by WordNet (see measureConcepts), as written or as its
// singular ("years").
func measureWord(w string) bool {
	measuresMu.Lock()
	m, ok := measures[w]
	measuresMu.Unlock()
	if ok {
		return m
	}
	m = slices.Contains(measureConcepts, w)
	for _, r := range lexicon.Related(w) {
		m = m || slices.Contains(timeConcepts, r)
	}
	if !m && strings.HasSuffix(w, "s") && len(w) > 3 {
		m = measureWord(strings.TrimSuffix(w, "s"))
	}
	measuresMu.Lock()
	if len(measures) < maxMeasures {
		measures[w] = m
	}
	measuresMu.Unlock()
	return m
}

// coversFocus reports whether a sentence, by its words toks and its
// passage's heading, holds a word of the focus, as written (see
// matches) or by a synonym, a related word or a phrase synonym syn
// found in the results. With no focus, any sentence does.
func coversFocus(focus []string, syn expanded, toks, heading []string) bool {
	if len(focus) == 0 {
		return true
	}
	held := 0
	for _, w := range focus {
		if matches(w, toks) || matches(w, heading) || syn.match(w, toks) || syn.match(w, heading) {
			held++
		}
	}
	return held > 0
}
