package offline

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
)

// This file holds questions that set two or more named things against
// each other ("which is cheaper, Starter or Team?", "is Business or Team
// better for 30 people?", "what's the difference between Team and
// Business?"). When the things are plans the search results describe,
// the answer compares them on what is asked (price, room for the team,
// something the team needs), rather than quoting the passages that
// happen to match. The plans are read from the results, as planOffers
// reads them; nothing about the shipped plans is written here.

// comparisonCues say that a question sets things against each other.
var comparisonCues = map[string]bool{"or": true, "vs": true, "versus": true, "than": true, "between": true,
	"difference": true, "differences": true, "differ": true, "compare": true, "compared": true, "comparing": true}

// namesOrRE is two names joined by "or": "Team or Starter".
var namesOrRE = regexp.MustCompile(`\b[A-Z][A-Za-z0-9-]*,? or (?:the )?[A-Z][A-Za-z0-9-]*\b`)

// comparatives ask which of the things is more of something.
var comparatives = []string{"cheaper", "cheapest", "pricier", "costlier", "expensive", "better", "best", "worse", "bigger",
	"larger", "smaller", "more", "less", "fewer", "faster", "slower", "preferable"}

// havingWords ask whether a thing has something ("does Team include API
// access?"), besides capabilityVerbs; they are no need of their own.
var havingWords = map[string]bool{"include": true, "includes": true, "included": true, "including": true, "come": true,
	"comes": true, "get": true, "gets": true, "contain": true, "contains": true, "feature": true, "features": true}

// choiceNames returns the names a question sets against each other, in
// its order: its capitalised words (the first one too, unless it is a
// question word or an article) when there are two or more and the
// question compares ("Starter or Team", "Team vs Business", "the
// difference between Team and Business", "is Team more expensive than
// Starter?"); otherwise nil.
func choiceNames(q string) []string {
	w := tokens(q)
	if !hasAny(w, "or", "vs", "versus", "than", "between", "and") {
		return nil // most questions: no names read
	}
	cue := false
	for _, x := range w {
		if comparisonCues[x] && x != "or" || slices.Contains(comparatives, x) {
			cue = true
		}
	}
	if !cue && !(hasAny(w, "or") && (hasAny(w[:1], questionWords...) || namesOrRE.MatchString(q) &&
		(seatCount(q) > 0 || hasAny(w, planNouns...) || isPriceQuestion(w) || hasAny(w, "need", "needs", "require", "requires")))) {
		// "Starter and Team both have ...": no choice asked; "Team or
		// Starter for 8 editors?" asks one.
		return nil
	}
	var names []string
	for i, f := range strings.Fields(q) {
		f = strings.TrimFunc(f, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
		if f == "" || f == "I" || isAcronym(f) {
			continue
		}
		lower := strings.ToLower(f)
		if i == 0 && (slices.Contains(questionWords, lower) || stopwords[lower]) {
			continue
		}
		if r := []rune(f); unicode.IsUpper(r[0]) && !slices.Contains(names, f) {
			names = append(names, f)
		}
	}
	if len(names) < 2 {
		return nil
	}
	return names
}

// asksChoice reports whether a question asks to choose between named
// things that are not competitors (those are compared by the comparison
// workflow).
func asksChoice(q string) bool {
	w := tokens(q)
	return len(choiceNames(q)) >= 2 && !isComparison(w) && !isAboutOthers(w)
}

// choiceQuery is the search query for a choice between named things: the
// plans' prices, the names, and what the question says besides.
func choiceQuery(q string) string {
	out := []string{"plan", "pricing", "costs", "per", "editor", "month"}
	for _, n := range choiceNames(q) {
		out = append(out, strings.ToLower(n))
	}
	for _, w := range wordsOf(q) { // a hyphenated word as its parts, as the search indexes it
		if slices.Contains(out, w) {
			continue
		}
		if !recommendWords[w] && !costWords[w] && !slices.Contains(comparatives, w) && !comparisonCues[w] && strings.Trim(w, "0123456789-") != "" {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// comparePlans answers a question that sets two or more plans against
// each other from the plans the results describe: on price when it asks
// about money, on room for the team and what it needs when it names
// them, and otherwise by what each plan is and adds. It reports false
// when fewer than two of the names are plans the results describe.
func comparePlans(q string, rs []result) (string, bool) {
	names := choiceNames(q)
	all := planOffers(rs)
	var named []planOffer // cheapest first, as planOffers sorts them
	for _, p := range all {
		if slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, p.name) }) {
			named = append(named, p)
		}
	}
	if len(named) < 2 {
		return "", false
	}
	w := tokens(q)
	n := seatCount(q)
	// A plan has what the plans before it have when it "adds" to them.
	has := func(p planOffer, need string) bool {
		i := slices.IndexFunc(all, func(o planOffer) bool { return o.name == p.name })
		return i >= 0 && planStates(all, i, func(s string) bool { return states(need, tokens(s)) })
	}
	// The needs are every word of the question besides its shape that
	// some plan the results describe states, named or not: a need no
	// named plan has is answered as such, not dropped.
	var needs []string
	words := contentWords(q)
	for i, x := range words {
		// A capability verb right after a need is a noun of it:
		// "priority support", "phone support".
		asNoun := i > 0 && slices.Contains(needs, words[i-1]) && adjacent(q, words[i-1], x)
		if recommendWords[x] || costWords[x] || slices.Contains(comparatives, x) || comparisonCues[x] || capabilityVerbs[x] && !asNoun || havingWords[x] ||
			strings.Trim(x, "0123456789-") == "" || slices.ContainsFunc(names, func(n string) bool { return strings.EqualFold(n, x) }) {
			continue
		}
		if slices.ContainsFunc(all, func(p planOffer) bool { return has(p, x) || limitWords[x] && p.limit > 0 }) && !slices.Contains(needs, x) {
			needs = append(needs, x)
		}
	}
	// A need of several words ("unlimited data sources") is had only
	// where they stand together: "unlimited dashboards, 20 data sources"
	// is not it.
	runs := needRuns(q, needs)
	hasWord := has
	has = func(p planOffer, need string) bool {
		if limitWords[need] {
			return p.limit > 0 // "for up to 5 editors"; "the Team rate limit" is no cap on the plan
		}
		run := runs[need]
		if len(run) < 2 {
			return hasWord(p, need)
		}
		i := slices.IndexFunc(all, func(o planOffer) bool { return o.name == p.name })
		for j := i; j >= 0; j-- {
			if slices.ContainsFunc(all[j].text, func(s string) bool { return wordsTogether(run, tokens(s)) && !deniedAll(run[0], tokens(s)) }) {
				return true
			}
			if !all[j].adds {
				return false
			}
		}
		return false
	}
	var b strings.Builder
	list := func(ps []planOffer) string {
		var s []string
		for _, p := range ps {
			s = append(s, p.name)
		}
		return joinAnd(s)
	}
	room := func(p planOffer) bool { return n == 0 || p.limit == 0 || n <= p.limit }
	priced := func(p planOffer) bool { return p.price.amount != "" }
	total := func(p planOffer) string {
		v, _ := strconv.ParseFloat(p.price.amount, 64)
		return fmt.Sprintf("%d × $%s = %s per %s", n, p.price.amount, money(strconv.FormatFloat(v*float64(n), 'f', -1, 64)), p.price.period)
	}
	quote := func(p planOffer) {
		fmt.Fprintf(&b, "\n- %q (%s)", p.priceText, p.where)
	}
	aboutMoney := isPriceQuestion(w) || hasAny(w, "cheaper", "cheapest", "pricier", "costlier", "expensive", "afford", "affordable")
	switch {
	case aboutMoney && n == 0 && len(needs) == 0:
		cheap, dear := named[0], named[len(named)-1]
		if !priced(cheap) || !priced(dear) || cheap.price.amount == dear.price.amount || cheap.price.period != dear.price.period {
			fmt.Fprintf(&b, "The knowledge base prices %s differently, so here is each one's price:\n", list(named))
		} else if asksDearer(w) {
			fmt.Fprintf(&b, "%s costs more: $%s per %s per %s against $%s for %s.\n", dear.name,
				dear.price.amount, strings.TrimSuffix(priceUnit(dear), "s"), dear.price.period, cheap.price.amount, cheap.name)
		} else {
			fmt.Fprintf(&b, "%s is the cheaper of %s: $%s per %s per %s against $%s for %s.\n", cheap.name, list(named),
				cheap.price.amount, strings.TrimSuffix(priceUnit(cheap), "s"), cheap.price.period, dear.price.amount, dear.name)
		}
		for _, p := range named {
			quote(p)
		}
	case n > 0 || len(needs) > 0:
		fits := func(p planOffer) bool {
			return room(p) && !slices.ContainsFunc(needs, func(x string) bool { return !has(p, x) })
		}
		who := forWhom(q, n, needs)
		pick := slices.IndexFunc(named, fits)
		var fitting []planOffer
		for _, p := range named {
			if fits(p) {
				fitting = append(fitting, p)
			}
		}
		if n == 0 && pick >= 0 {
			// Which has what the team needs, whatever it costs.
			need := needPhrase(q, needs)
			switch {
			case len(fitting) == 1:
				fmt.Fprintf(&b, "Of %s, only %s has %s, from what the knowledge base says.\n", list(named), fitting[0].name, need)
			case len(fitting) == len(named) && len(named) == 2:
				fmt.Fprintf(&b, "%s both have %s; %s costs less.\n", list(named), need, fitting[0].name)
			case len(fitting) == len(named):
				fmt.Fprintf(&b, "%s all have %s; %s costs least.\n", list(named), need, fitting[0].name)
			default:
				fmt.Fprintf(&b, "Of %s, %s have %s, from what the knowledge base says.\n", list(named), list(fitting), need)
			}
		} else if other := slices.IndexFunc(all, fits); pick < 0 && n == 0 && other >= 0 {
			// No named plan has it, another does: say so, and which.
			none := "None of " + list(named)
			if len(named) == 2 {
				none = "Neither " + named[0].name + " nor " + named[1].name
			}
			fmt.Fprintf(&b, "%s has %s, from what the knowledge base says; %s has it", none, needPhrase(q, needs), all[other].name)
			if s, where := statedIn(all, other, runs[needs[0]], needs[0]); s != "" {
				fmt.Fprintf(&b, ": %q (%s)", strings.TrimSpace(s), where)
			}
			b.WriteString(".\n")
		} else if pick < 0 {
			fmt.Fprintf(&b, "None of %s clearly fits %s, from what the knowledge base says:\n", list(named), who)
		} else {
			best := named[pick]
			fmt.Fprintf(&b, "Of %s, %s is the better fit for %s", list(named), best.name, who)
			var others []planOffer
			for _, p := range named {
				if p.name != best.name && fits(p) {
					others = append(others, p)
				}
			}
			if len(others) > 0 {
				fmt.Fprintf(&b, ": %s would fit too, but %s costs less.\n", list(others), best.name)
			} else {
				fmt.Fprintf(&b, ".\n")
			}
		}
		for _, p := range named {
			quote(p)
			if n > 0 && p.limit > 0 && n > p.limit {
				fmt.Fprintf(&b, " It takes at most %d editors, so %d do not fit.", p.limit, n)
			} else if n > 0 && priced(p) {
				fmt.Fprintf(&b, " For %d people: %s.", n, total(p))
			}
			var lacks []string
			for _, x := range needs {
				if !has(p, x) {
					lacks = append(lacks, x)
				}
			}
			said := false
			for _, s := range p.lacks {
				// "There is no Pipelines, Forecast or API access on
				// Starter.": what the knowledge base says it lacks.
				if slices.ContainsFunc(lacks, func(x string) bool { return matches(x, tokens(s)) }) {
					fmt.Fprintf(&b, " %s", strings.TrimSpace(s))
					said = true
					break
				}
			}
			if len(lacks) > 0 && !said {
				fmt.Fprintf(&b, " Its description does not mention %s.", needPhrase(q, lacks))
			}
		}
	default:
		fmt.Fprintf(&b, "Here is how %s compare, from the knowledge base:\n", list(named))
		for _, p := range named {
			quote(p)
			for _, s := range p.text {
				if s != p.priceText && len(b.String()) < 4000 {
					fmt.Fprintf(&b, " %s", strings.TrimSpace(s))
				}
			}
		}
	}
	if n == 0 && len(needs) == 0 && !aboutMoney {
		return b.String(), true
	}
	// What the dearer plans add, so the cheaper pick is not mistaken for
	// the same thing.
	for _, p := range named[1:] {
		if !p.adds {
			continue
		}
		for _, s := range p.text {
			if s != p.priceText && hasAny(tokens(s), "adds") && !strings.Contains(b.String(), s) {
				fmt.Fprintf(&b, "\n\nWhat %s adds: %q (%s)", p.name, strings.TrimSpace(s), p.where)
				break
			}
		}
	}
	return b.String(), true
}

// priceUnit is what a plan's price is per: "editor".
func priceUnit(p planOffer) string {
	if m := seatPriceRE.FindStringSubmatch(p.priceText); m != nil {
		return m[2]
	}
	return "seat"
}

// asksExtremePlan returns "cheap" when a question asks which plan costs
// least ("which plan is cheapest?", "what's the least expensive tier?"),
// "dear" when it asks which costs most ("what's the most expensive
// plan?", "your priciest option"), or "".
func asksExtremePlan(w []string) string {
	x := extremeKind(w)
	if x == "cheap" && len(extremeNeeds(w)) > 0 {
		// "the cheapest plan with API access" asks for the cheapest plan
		// that has it: a recommendation.
		return ""
	}
	return x
}

// extremeWords are the words of a question about the cheapest or
// dearest plan that say so.
var extremeWords = map[string]bool{"cheapest": true, "lowest": true, "least": true, "expensive": true, "priciest": true,
	"dearest": true, "costliest": true, "most": true, "highest": true, "price": true, "priced": true, "cheap": true,
	"inexpensive": true, "affordable": true, "option": true, "your": true, "the": true, "you": true, "have": true, "offer": true}

// extremeNeeds are the words of a question about the cheapest plan
// besides price and plan words: what the plan must have ("API access"),
// or what else it asks about ("way to upgrade").
func extremeNeeds(w []string) []string {
	var out []string
	for _, x := range w {
		if len(x) < 2 || stopwords[x] || extremeWords[x] || costWords[x] || recommendWords[x] || slices.Contains(planNouns, x) ||
			slices.Contains(questionWords, x) || strings.Trim(x, "0123456789-") == "" || strings.HasPrefix(x, "what") || strings.HasPrefix(x, "which") {
			continue
		}
		out = append(out, x)
	}
	return out
}

// extremeKind is asksExtremePlan without regard to what else the
// question asks.
func extremeKind(w []string) string {
	if !hasAny(w, planNouns...) || !asksWhichPlan(w) && !hasAny(w, "your", "the") {
		return ""
	}
	s := " " + strings.Join(w, " ") + " "
	switch {
	case hasAny(w, "cheapest", "lowest", "least") && (hasAny(w, "cheapest") || hasPrefix(w, "expens", "pric", "cost")):
		return "cheap"
	case hasAny(w, "priciest", "dearest", "costliest") || strings.Contains(s, " most expensive ") || strings.Contains(s, " highest price"):
		return "dear"
	}
	return ""
}

// extremePlan answers which plan costs least or most from the plans the
// results describe, with its price and what it takes; a plan priced
// otherwise (custom pricing) is named beside the most expensive one
// priced per seat. It reports false when the results describe fewer than
// two plans.
func extremePlan(which string, rs []result) (string, bool) {
	plans := planOffers(rs)
	var priced, other []planOffer
	for _, p := range plans {
		if p.price.amount != "" {
			priced = append(priced, p)
		} else {
			other = append(other, p)
		}
	}
	if len(priced) < 2 {
		return "", false
	}
	var b strings.Builder
	if which == "cheap" {
		p := priced[0]
		fmt.Fprintf(&b, "%s is the cheapest plan in the knowledge base: %q (%s)", p.name, p.priceText, p.where)
		if p.limit > 0 {
			fmt.Fprintf(&b, "\n\nIt takes at most %d editors; the next plan up is %s: %q (%s)", p.limit, priced[1].name, priced[1].priceText, priced[1].where)
		}
		return b.String(), true
	}
	p := priced[len(priced)-1]
	if len(other) > 0 {
		fmt.Fprintf(&b, "%s is priced differently from the others: %q (%s)\n\nOf the plans priced per seat, %s costs most: %q (%s)",
			other[0].name, other[0].priceText, other[0].where, p.name, p.priceText, p.where)
		return b.String(), true
	}
	fmt.Fprintf(&b, "%s is the most expensive plan in the knowledge base: %q (%s)", p.name, p.priceText, p.where)
	return b.String(), true
}

// asksDearer reports whether a price question asks which costs more
// ("which costs more", "is Team more expensive than Starter?") rather
// than less.
func asksDearer(w []string) bool {
	if hasAny(w, "cheaper", "cheapest", "less", "lower", "affordable") {
		return false
	}
	return hasAny(w, "pricier", "costlier", "dearer", "expensive") || hasAny(w, "more", "higher") && hasPrefix(w, "cost", "pric")
}

// needRuns returns, for each need, the run of needs it stands in in the
// question: "unlimited data sources" for each of its three words.
func needRuns(q string, needs []string) map[string][]string {
	runs := map[string][]string{}
	var run []string
	flush := func() {
		for _, w := range run {
			runs[w] = run
		}
		run = nil
	}
	for _, t := range tokens(joinCompounds(q)) {
		if slices.Contains(needs, t) {
			run = append(run, t)
			continue
		}
		flush()
	}
	flush()
	return runs
}

// wordsTogether reports whether the words of run stand together, in order, in
// toks; a word may take two tokens ("customermanaged" is "customer
// managed").
func wordsTogether(run, toks []string) bool {
	for i := range toks {
		j, ok := i, true
		for _, w := range run {
			switch {
			case j < len(toks) && matches(w, toks[j:j+1]):
				j++
			case j+1 < len(toks) && matches(w, toks[j:j+2]):
				j += 2
			default:
				ok = false
			}
			if !ok {
				break
			}
		}
		if ok {
			return true
		}
	}
	return false
}

// states reports whether a passage's tokens say a plan has need: the
// word is there and not denied ("with no editor limit" does not state a
// limit).
func states(need string, toks []string) bool {
	return matches(need, toks) && !deniedAll(need, toks)
}

// deniedAll reports whether every place need occurs in toks follows a
// denial ("no", "not", "without") at most two words before it.
func deniedAll(need string, toks []string) bool {
	found := false
	for i := range toks {
		if !matches(need, toks[i:i+1]) {
			continue
		}
		found = true
		if !hasAny(toks[max(0, i-2):i], "no", "not", "without") {
			return false
		}
	}
	return found
}

// limitWords ask about a plan's cap on seats, which planOffer.limit
// holds.
var limitWords = map[string]bool{"limit": true, "limits": true, "limited": true, "cap": true, "capped": true, "maximum": true}

// adjacent reports whether word b directly follows word a in q.
func adjacent(q, a, b string) bool {
	toks := tokens(joinCompounds(q))
	for i := 0; i+1 < len(toks); i++ {
		if toks[i] == a && toks[i+1] == b {
			return true
		}
	}
	return false
}

// statedIn returns the sentence of plans[i], or of a plan it adds to,
// that states need (its run of words together when it has several), and
// where it is; or "".
func statedIn(plans []planOffer, i int, run []string, need string) (string, string) {
	for j := i; j >= 0; j-- {
		for _, s := range plans[j].text {
			t := tokens(s)
			if len(run) >= 2 && wordsTogether(run, t) || len(run) < 2 && states(need, t) {
				return s, plans[j].where
			}
		}
		if !plans[j].adds {
			break
		}
	}
	return "", ""
}
