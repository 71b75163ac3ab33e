package offline

import (
	"github.com/agentgraph/agentgraph/examples/supervisor"

	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// This file holds the rules that reason over figures the knowledge base
// gives rather than only quoting them: the cost of a number of seats at a
// plan's price per seat ("how much would 3 Team seats cost per year?"),
// and which plan fits a team ("which plan should a 3-person startup
// pick?"). Both read the plans from the search results, as sentences that
// name a price per seat and the section they are in; nothing about the
// shipped plans is written here.

var (
	// seatCountRE is a number of seats, people or users in a question
	// (after spelled-out numbers became digits): "3 seats", "5 editors",
	// "12 Team seats", "a team of 8", "a 3-person startup".
	seatCountRE = regexp.MustCompile(`\b(\d+)(?:\s+|-)(?:[a-z]+\s+){0,2}?(seats?|editors?|users?|people|persons?|licen[cs]es?|members?|analysts?|employees?|staff|agents?|accounts?|engineers?|developers?)\b|\b(?:team|company|group|staff|startup) of (\d+)\b`)
	// seatPriceRE is a price per seat and period in a passage: "$49 per
	// editor per month", "$70 per user per month".
	seatPriceRE = regexp.MustCompile(`\$(\d[\d,]*(?:\.\d+)?)\s+per\s+(editor|user|seat|member|licen[cs]e|agent|person)s?(?:\s+seat)?\s+(?:per|a|each)\s+(` + periodAlt + `)\b`)
	// limitRE is a plan's cap on seats: "for up to 5 editors".
	limitRE = regexp.MustCompile(`\bup to (\d+) (?:editors?|users?|seats?|members?)\b`)
	// thresholdRE is a term for large teams: "100 or more editors".
	thresholdRE = regexp.MustCompile(`\b(\d+) or more (?:editors?|users?|seats?)\b`)
)

// seatCount returns the number of seats or people a question names, or 0.
func seatCount(q string) int {
	m := seatCountRE.FindStringSubmatch(spellNumbers(strings.ToLower(q)))
	if m == nil {
		return 0
	}
	n := m[1]
	if n == "" {
		n = m[3]
	}
	v, err := strconv.Atoi(n)
	if err != nil || v <= 0 || v > 1_000_000 {
		return 0
	}
	return v
}

// asksSeatCost reports whether the question asks what a number of seats
// costs at a price it does not give: "how much would 5 editors on the
// Business plan cost per month?". A question that gives the price is
// plain arithmetic.
func asksSeatCost(q string, w []string) bool {
	if strings.Contains(q, "$") || hasAny(w, "dollars", "usd", "euros") {
		return false
	}
	asks := hasPrefix(w, "cost", "pric", "pay", "spend", "charg", "bill", "budget", "total") || howMuchMoney(w)
	return asks && seatCount(q) > 0
}

// howMuchMoney reports whether the words ask "how much" of money: "how
// much would 5 seats be?", "how much for 10 editors?"; "how much storage
// do 10 users get?" asks how much of something else.
func howMuchMoney(w []string) bool {
	for i := 0; i+2 < len(w); i++ {
		if w[i] == "how" && w[i+1] == "much" {
			return hasAny(w[i+2:i+3], "would", "will", "does", "do", "is", "are", "did", "should", "could", "for", "to", "money", "it", "they")
		}
	}
	return false
}

// seatPrice is a price per seat read from a passage.
type seatPrice struct {
	sentence, where string
	from            string // the source, for a user: "the knowledge base"
	amount          string // "49"
	period          string // "month"
	words           []string
}

// seatPrices returns the prices per seat among the results, in the
// results' order.
func seatPrices(rs []result) []seatPrice {
	var out []seatPrice
	for _, r := range rs {
		if isDirect(r.source) || !r.usable() {
			continue
		}
		for _, s := range sentencesOf(r.text) {
			m := seatPriceRE.FindStringSubmatch(s.text)
			if m == nil {
				continue
			}
			where := s.where
			if !s.quoted && where != "" {
				where = r.source + ": " + where
			}
			out = append(out, seatPrice{sentence: strings.TrimSpace(s.text), where: where, from: sourceName(r.source),
				amount: strings.ReplaceAll(m[1], ",", ""), period: m[3], words: s.words})
		}
	}
	return out
}

// costWords are a seat-cost question's words that say what is computed,
// not which plan.
var costWords = map[string]bool{"cost": true, "costs": true, "price": true, "pricing": true, "pay": true, "spend": true,
	"seat": true, "seats": true, "editor": true, "editors": true, "user": true, "users": true, "month": true, "months": true,
	"year": true, "years": true, "week": true, "weeks": true, "day": true, "days": true, "quarter": true, "monthly": true,
	"annually": true, "annual": true, "yearly": true, "plan": true, "plans": true, "tier": true, "total": true, "would": true,
	"people": true, "person": true, "licence": true, "license": true, "members": true, "per": true, "much": true, "our": true}

// askedPrice returns the price per seat among the results that the
// question names (its plan's name in the sentence or its section), or
// false when no price or more than one plan fits it equally.
func askedPrice(q string, rs []result) (seatPrice, bool) {
	var names []string
	for _, w := range contentWords(q) {
		if !costWords[w] && strings.Trim(w, "0123456789") != "" {
			names = append(names, w)
		}
	}
	best, bestN, tie := seatPrice{}, 0, false
	for _, p := range seatPrices(rs) {
		n := 0
		for _, w := range names {
			if slices.Contains(p.words, w) {
				n++
			}
		}
		switch {
		case n > bestN:
			best, bestN, tie = p, n, false
		case n == bestN && n > 0 && p.amount != best.amount:
			tie = true
		}
	}
	return best, bestN > 0 && !tie
}

// seatCostExpr returns the calculator's expression for a seat-cost
// question from the price the results give, or "".
func seatCostExpr(q string, rs []result) string {
	n := seatCount(q)
	p, ok := askedPrice(q, rs)
	if n == 0 || !ok {
		return ""
	}
	return overPeriod(strconv.Itoa(n)+" * "+p.amount, p.period, strings.ToLower(q))
}

// seatCostAnswer answers a seat-cost question from the calculator's
// result and the passage its price came from, or reports false.
func seatCostAnswer(q string, rs []result) (string, bool) {
	calc := ""
	for i := len(rs) - 1; i >= 0; i-- {
		if name := rs[i].source; (strings.HasSuffix(name, "calculate") || strings.HasSuffix(name, "calculator")) && rs[i].err == "" {
			calc = strings.TrimSpace(rs[i].text)
			break
		}
	}
	p, ok := askedPrice(q, rs)
	if calc == "" || !ok {
		return "", false
	}
	n := seatCount(q)
	period := p.period
	if to, k := askedPeriod(strings.ToLower(q), p.period); to != "" {
		period = to
		if k > 1 {
			period = fmt.Sprintf("%d %ss", k, to)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "From %s: %q (%s)\n\n", p.from, p.sentence, p.where)
	fmt.Fprintf(&b, "The calculator gives %s", calc)
	if _, v, ok := strings.Cut(calc, "= "); ok {
		fmt.Fprintf(&b, ", so %d seats come to %s per %s", n, money(strings.TrimSpace(v)), strings.TrimPrefix(period, "1 "))
	}
	b.WriteString(".")
	if doc, sec, ok := strings.Cut(p.where, " § "); ok && isAboutOthers(tokens(doc+" "+sec)) {
		fmt.Fprintf(&b, " Note that this price is from our notes on %s, not one of our own plans.", sec)
	}
	b.WriteString(seatTerms(strings.ToLower(q), n, p, rs))
	return b.String(), true
}

// seatTerms returns what the results say about n seats beyond their
// price: that the plan priced takes fewer ("for up to 5 editors"), with
// the cheapest plan that takes n and what they cost on it, and any term
// for that many ("100 or more editors receive volume discounts"); or "".
func seatTerms(q string, n int, p seatPrice, rs []result) string {
	var b strings.Builder
	limit, limitText := 0, ""
	for _, r := range rs {
		for _, s := range sentencesOf(r.text) {
			where := s.where
			if !s.quoted && where != "" {
				where = r.source + ": " + where
			}
			if where != p.where && s.text != p.sentence {
				continue
			}
			if m := limitRE.FindStringSubmatch(s.text); m != nil {
				limit, _ = strconv.Atoi(m[1])
				limitText = strings.TrimSpace(s.text)
				break
			}
		}
		if limit > 0 {
			break
		}
	}
	if limit > 0 && n > limit {
		name := "this plan"
		if _, sec, ok := strings.Cut(p.where, " § "); ok {
			name = sec
		}
		if limitText == p.sentence {
			fmt.Fprintf(&b, "\n\nBut %s is for up to %d, so %d seats do not fit on it.", name, limit, n)
		} else {
			fmt.Fprintf(&b, "\n\nBut %s takes at most %d: %q (%s). %d seats do not fit on it.", name, limit, limitText, p.where, n)
		}
		for _, o := range planOffers(rs) {
			if o.price.amount == "" || o.limit > 0 && n > o.limit || o.name == name {
				continue
			}
			v, _ := strconv.ParseFloat(o.price.amount, 64)
			fmt.Fprintf(&b, " The cheapest plan with room for %d is %s: %q (%s), so %d seats come to %d × $%s = %s per %s",
				n, o.name, o.priceText, o.where, n, n, o.price.amount, money(strconv.FormatFloat(v*float64(n), 'f', -1, 64)), o.price.period)
			if to, k := askedPeriod(q, o.price.period); to != "" && perYear[to] > 0 && perYear[o.price.period] > 0 {
				f := float64(perYear[o.price.period]*k) / float64(perYear[to])
				if k > 1 {
					to = fmt.Sprintf("%d %ss", k, to)
				}
				fmt.Fprintf(&b, ", or %s per %s", money(strconv.FormatFloat(v*float64(n)*f, 'f', -1, 64)), to)
			}
			b.WriteString(".")
			break
		}
	}
	for _, r := range rs {
		for _, s := range sentencesOf(r.text) {
			if m := thresholdRE.FindStringSubmatch(s.text); m != nil {
				if t, _ := strconv.Atoi(m[1]); n >= t && !isAboutOthers(s.heading) {
					fmt.Fprintf(&b, "\n\nFor that many seats: %q (%s: %s)", strings.TrimSpace(s.text), r.source, s.where)
					return b.String()
				}
			}
		}
	}
	return b.String()
}

// money writes a calculator value as dollars: "1392" is "$1,392",
// "40.8" is "$40.80".
func money(v string) string {
	f, err := strconv.ParseFloat(v, 64)
	if err != nil {
		return v
	}
	s := strconv.FormatFloat(f, 'f', 2, 64)
	whole, cents, _ := strings.Cut(s, ".")
	var b strings.Builder
	for i, c := range whole {
		if i > 0 && (len(whole)-i)%3 == 0 && whole[i-1] != '-' {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if cents != "00" {
		return "$" + b.String() + "." + cents
	}
	return "$" + b.String()
}

// decideFromFigures is the supervisor's rule for questions answered by
// reasoning over the knowledge base's figures: a recommendation is
// answered from the plans the results describe; once the search results
// hold the price asked about, the calculator computes the cost of the
// seats, and its result is reported with the passage the price came from.
func decideFromFigures(p prompt, q string, last bool) (supervisor.Decision, bool) {
	w := tokens(q)
	if asksChoice(q) {
		if text, ok := comparePlans(q, usableResults(p.results)); ok {
			return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "The plans the knowledge base describes answer which of those named fits the question.", Response: text}, true
		}
	}
	if x := asksExtremePlan(w); x != "" {
		if text, ok := extremePlan(x, usableResults(p.results)); ok {
			return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "The plans the knowledge base describes, by price, answer it.", Response: text}, true
		}
	}
	if asksRecommendation(w) {
		if text, ok := recommend(q, usableResults(p.results)); ok {
			return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "The plans the knowledge base describes answer which one fits.", Response: text}, true
		}
	}
	if !asksSeatCost(q, w) {
		return supervisor.Decision{}, false
	}
	if text, ok := seatCostAnswer(q, p.results); ok {
		return supervisor.Decision{Action: supervisor.ActionAnswer, Reasoning: "The calculator computed the cost from the price the knowledge base gives.", Response: text}, true
	}
	if last {
		return supervisor.Decision{}, false
	}
	if expr := seatCostExpr(q, usableResults(p.results)); expr != "" {
		if t := pick(p.tools, "calculate", "calculator", "calc"); t != "" {
			return call("The knowledge base gives the price per seat; the calculator computes the cost of the seats asked about.", t,
				map[string]any{"expression": expr}), true
		}
	}
	return supervisor.Decision{}, false
}

// seatCostQuery is the search query for a seat-cost question: the words
// that name the plan, and what it costs per seat; the number of seats and
// the period asked for only add noise ("12", "year").
func seatCostQuery(q string) string {
	var out []string
	for _, w := range contentWords(q) {
		if !costWords[w] && strings.Trim(w, "0123456789") != "" {
			out = append(out, w)
		}
	}
	if m := seatCountRE.FindStringSubmatch(spellNumbers(strings.ToLower(q))); m != nil && m[2] != "" {
		out = append(out, m[2])
	}
	return strings.Join(append(out, "costs", "per", "month"), " ")
}

// asksRecommendation reports whether the question asks which plan fits:
// "which plan should a 3-person startup pick?", "what tier do you
// recommend for 200 analysts?", "which plan is best if we need SSO?".
func asksRecommendation(w []string) bool {
	if !hasAny(w, planNouns...) {
		return false
	}
	if extremeKind(w) == "cheap" && len(extremeNeeds(w)) > 0 {
		return true // "what's the cheapest plan with SSO?": the cheapest that has it
	}
	return hasAny(w, "recommend", "recommended", "recommendation", "suggest", "advise") ||
		asksWhichPlan(w) && hasAny(w, "should", "best", "right", "suit", "suits", "suited", "fit", "fits", "ideal", "pick",
			"choose", "go", "makes", "better")
}

// planNouns name a plan.
var planNouns = []string{"plan", "plans", "tier", "tiers", "package", "subscription", "edition", "option"}

// whichFillers may stand between "which" or "what" and the plan it asks
// for: "what is the best tier", "which of your plans".
var whichFillers = map[string]bool{"is": true, "are": true, "would": true, "be": true, "the": true, "a": true, "an": true,
	"best": true, "right": true, "ideal": true, "better": true, "good": true, "cheapest": true, "of": true, "your": true,
	"our": true, "these": true, "those": true}

// asksWhichPlan reports whether "which" or "what" asks for a plan: the
// plan follows it with only fillers between ("which plan", "what is the
// right tier"). In "what makes the Business plan more expensive?" or
// "what is the best way to cancel my plan?" it asks for something else.
func asksWhichPlan(w []string) bool {
	for i, x := range w {
		if x != "which" && x != "what" {
			continue
		}
		for _, y := range w[i+1 : min(len(w), i+6)] {
			if hasAny([]string{y}, planNouns...) {
				return true
			}
			if !whichFillers[y] {
				break
			}
		}
	}
	return false
}

// planOffer is one plan read from the results: a section whose first
// price sentence names it.
type planOffer struct {
	name, where string
	price       seatPrice // zero when the plan is not priced per seat
	priceText   string    // the sentence with its price
	limit       int       // most seats, 0: no limit said
	text        []string  // the section's sentences that say what it has
	lacks       []string  // the section's sentences that say what it has not ("There is no API access on Starter.")
	adds        bool      // "It adds ...": it has what the plan before it has
}

// planOffers returns the plans the results describe, cheapest per seat
// first, then those priced otherwise: the sections of one document whose
// heading is the first word of a sentence with a price ("Team costs $49
// per editor per month").
func planOffers(rs []result) []planOffer {
	byWhere := map[string]*planOffer{}
	var order []string
	for _, r := range rs {
		if isDirect(r.source) || !r.usable() {
			continue
		}
		for _, s := range sentencesOf(r.text) {
			_, sec, ok := strings.Cut(s.where, " § ")
			if !ok || s.quoted {
				continue
			}
			p := byWhere[s.where]
			if p == nil {
				st := s.toks
				if len(st) == 0 || st[0] != strings.ToLower(sec) || !strings.Contains(s.text, "$") {
					continue
				}
				p = &planOffer{name: sec, where: r.source + ": " + s.where, priceText: strings.TrimSpace(s.text)}
				if m := seatPriceRE.FindStringSubmatch(s.text); m != nil {
					p.price = seatPrice{sentence: p.priceText, where: p.where, amount: strings.ReplaceAll(m[1], ",", ""), period: m[3]}
				}
				if m := limitRE.FindStringSubmatch(s.text); m != nil {
					p.limit, _ = strconv.Atoi(m[1])
				}
				byWhere[s.where] = p
				order = append(order, s.where)
			}
			if hasAny(s.toks, "adds") {
				p.adds = true
			}
			// The price sentence says what the plan is, even when it
			// says what it has no cap on ("with no editor limit").
			if strings.TrimSpace(s.text) == p.priceText || !hasAny(s.toks, "no", "not", "without") {
				p.text = append(p.text, s.text)
			} else {
				p.lacks = append(p.lacks, s.text)
			}
		}
	}
	var out []planOffer
	for _, w := range order {
		out = append(out, *byWhere[w])
	}
	slices.SortStableFunc(out, func(a, b planOffer) int {
		switch {
		case a.price.amount == "" && b.price.amount == "":
			return 0
		case a.price.amount == "":
			return 1
		case b.price.amount == "":
			return -1
		}
		x, _ := strconv.ParseFloat(a.price.amount, 64)
		y, _ := strconv.ParseFloat(b.price.amount, 64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	return out
}

// recommendWords are a recommendation question's words that shape it
// rather than say what the team needs.
var recommendWords = map[string]bool{"recommend": true, "recommended": true, "recommendation": true, "suggest": true,
	"advise": true, "best": true, "right": true, "suit": true, "suits": true, "suited": true, "fit": true, "fits": true,
	"ideal": true, "pick": true, "choose": true, "go": true, "makes": true, "better": true, "sense": true, "plan": true,
	"plans": true, "tier": true, "tiers": true, "package": true, "subscription": true, "edition": true, "option": true,
	"need": true, "needs": true, "want": true, "company": true, "team": true, "startup": true, "person": true,
	"people": true, "small": true, "large": true, "big": true, "us": true, "we": true, "our": true, "should": true}

// recommend answers a recommendation question from the plans the results
// describe: the cheapest plan that has room for the team and has every
// need the question names that some plan has, with its price and what
// the team would pay; or, when the question says neither size nor needs,
// the plans and what would decide between them. It reports false when
// the results describe fewer than two plans.
func recommend(q string, rs []result) (string, bool) {
	plans := planOffers(rs)
	if len(plans) < 2 {
		return "", false
	}
	n := seatCount(q)
	// The needs are the question's words that some plan's passage has.
	var needs []string
	for _, w := range contentWords(q) {
		if recommendWords[w] || costWords[w] || strings.Trim(w, "0123456789-") == "" || seatCountRE.MatchString(w) {
			continue
		}
		for _, p := range plans {
			if slices.ContainsFunc(p.text, func(s string) bool { return matches(w, tokens(s)) }) && !slices.Contains(needs, w) {
				needs = append(needs, w)
			}
		}
	}
	has := func(i int, w string) bool {
		return planStates(plans, i, func(s string) bool { return matches(w, tokens(s)) })
	}
	var b strings.Builder
	if n == 0 && len(needs) == 0 {
		b.WriteString("It depends on how many people will edit and what you need. The plans in the knowledge base:\n")
		for _, p := range plans {
			fmt.Fprintf(&b, "\n- %s: %q (%s)", p.name, p.priceText, p.where)
		}
		b.WriteString("\n\nTell me how many people need to edit and what you need (for example single sign-on, forecasting or API access), and I'll suggest one.")
		return b.String(), true
	}
	pickAt := -1
	for i, p := range plans {
		if n > 0 && p.limit > 0 && n > p.limit {
			continue
		}
		if !slices.ContainsFunc(needs, func(w string) bool { return !has(i, w) }) {
			pickAt = i
			break
		}
	}
	for_ := forWhom(q, n, needs)
	if pickAt < 0 {
		fmt.Fprintf(&b, "None of the plans in the knowledge base clearly fits %s. Sales can advise on a custom plan.", for_)
		return b.String(), true
	}
	p := plans[pickAt]
	fmt.Fprintf(&b, "From the plans in the knowledge base, %s looks like the best fit for %s: it is the cheapest plan with room for them", p.name, for_)
	if len(needs) > 0 {
		b.WriteString(" and what they need")
	}
	fmt.Fprintf(&b, ".\n\n- %q (%s)", p.priceText, p.where)
	for _, w := range needs {
		for j := pickAt; j >= 0; j-- {
			if k := slices.IndexFunc(plans[j].text, func(s string) bool { return matches(w, tokens(s)) }); k >= 0 {
				if s := plans[j].text[k]; s != p.priceText && !strings.Contains(b.String(), s) {
					fmt.Fprintf(&b, "\n- %q (%s)", strings.TrimSpace(s), plans[j].where)
				}
				break
			}
		}
	}
	if n > 0 && p.price.amount != "" {
		v, _ := strconv.ParseFloat(p.price.amount, 64)
		fmt.Fprintf(&b, "\n- For %d people that is %d × $%s = %s per %s.", n, n, p.price.amount, money(strconv.FormatFloat(v*float64(n), 'f', -1, 64)), p.price.period)
	}
	for _, r := range rs {
		for _, s := range sentencesOf(r.text) {
			if m := thresholdRE.FindStringSubmatch(s.text); m != nil && n > 0 {
				if t, _ := strconv.Atoi(m[1]); n >= t {
					fmt.Fprintf(&b, "\n- %q (%s: %s)", strings.TrimSpace(s.text), r.source, s.where)
				}
			}
		}
	}
	if pickAt+1 < len(plans) {
		next := plans[pickAt+1]
		fmt.Fprintf(&b, "\n\nIf you outgrow it, the next plan up is %s: %q (%s)", next.name, next.priceText, next.where)
	}
	return b.String(), true
}

// recommendQuery is the search query for a recommendation question: the
// plans' prices and what the question says the team needs.
func recommendQuery(q string) string {
	out := []string{"plan", "costs", "per", "editor", "month"}
	for _, w := range contentWords(q) {
		if !recommendWords[w] && !costWords[w] && strings.Trim(w, "0123456789-") != "" {
			out = append(out, w)
		}
	}
	return strings.Join(out, " ")
}

// needPhrase writes needs as the question says them: the runs of its
// words that hold a need ("single sign-on"), joined by commas.
func needPhrase(q string, needs []string) string {
	var runs []string
	run := ""
	for _, f := range strings.Fields(q) {
		word := strings.Trim(f, ",.;:!?()\"'")
		if slices.ContainsFunc(tokens(word), func(t string) bool { return slices.Contains(needs, t) }) {
			run = strings.TrimSpace(run + " " + word)
			continue
		}
		if run != "" {
			runs = append(runs, run)
			run = ""
		}
	}
	if run != "" {
		runs = append(runs, run)
	}
	return strings.Join(runs, ", ")
}

// hasCalculation reports whether the results hold a calculator's result.
func hasCalculation(rs []result) bool {
	for _, r := range rs {
		if name := r.source; (strings.HasSuffix(name, "calculate") || strings.HasSuffix(name, "calculator")) && r.err == "" {
			return true
		}
	}
	return false
}

// planStates reports whether a sentence of plans[i] satisfies pred, or
// one of the plans before it that plans[i] adds to ("everything in
// Team, plus ...") does.
func planStates(plans []planOffer, i int, pred func(sentence string) bool) bool {
	for j := i; j >= 0; j-- {
		if slices.ContainsFunc(plans[j].text, pred) {
			return true
		}
		if !plans[j].adds {
			return false
		}
	}
	return false
}

// forWhom names who a plan is sought for: n people (n > 0), who need
// what the question asks (needs), or both.
func forWhom(q string, n int, needs []string) string {
	switch need := needPhrase(q, needs); {
	case n > 0 && len(needs) > 0:
		return fmt.Sprintf("%d people who need %s", n, need)
	case n > 0:
		return fmt.Sprintf("%d people", n)
	default:
		return "a team that needs " + need
	}
}
