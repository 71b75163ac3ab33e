package offline

import (
	"slices"
	"strings"
	"unicode"
)

// A question that asks who did something ("who founded Acme?", "who
// built the API?") or who holds a role ("who is the CEO?", "who was the
// founder of Globex?") asks for a person or a body: a sentence that says
// the thing was done without saying by whom ("Acme Analytics was founded
// in 2019 in Lisbon") or that names the role without naming who holds
// it ("Escalations go ... to the head of support") does not answer it,
// however many of the question's words it shares.

// roleNouns are the nouns of a role a person holds in a company, whose
// "who is the ...?" asks a name.
var roleNouns = map[string]bool{
	"founder": true, "founders": true, "cofounder": true, "co-founder": true, "creator": true, "owner": true, "owners": true,
	"ceo": true, "cto": true, "cfo": true, "coo": true, "president": true, "chairman": true, "chair": true, "chairwoman": true,
	"head": true, "chief": true, "director": true, "manager": true, "lead": true, "leader": true, "boss": true, "investor": true,
	"investors": true, "shareholder": true, "shareholders": true,
}

// beForms are the forms of "be", the copula of a question about who holds
// a role and the auxiliary of a passive ("was founded").
var beForms = map[string]bool{"is": true, "are": true, "was": true, "were": true, "be": true, "been": true, "being": true, "'s": true}

// irregularPasts are the common irregular pasts of the verbs a question
// asks the doer of ("who built ...?", "who wrote ...?"); a regular one
// ends in "ed".
var irregularPasts = map[string]bool{"built": true, "made": true, "wrote": true, "began": true, "bought": true, "sold": true,
	"ran": true, "led": true, "set": true, "drew": true, "chose": true, "took": true, "gave": true, "won": true}

// agentVerb reports whether w is a past of a verb a "who" question may ask
// the doer of: a regular past ("founded", "acquired") or an irregular one
// (irregularPasts). A word in "-ed" that is a past auxiliary ("need" is
// no past) is none.
func agentVerb(w string) bool {
	return irregularPasts[w] || len(w) > 4 && strings.HasSuffix(w, "ed") && !stopwords[w]
}

// whoAt returns the index of the "who" that opens the question's clause
// (its first word, or after "know", "tell me", "wonder"), or -1: "Customers
// who ..." is a relative clause, which asks no doer.
func whoAt(toks []string) int {
	for i, w := range toks {
		if w != "who" {
			continue
		}
		if i == 0 || hasAny(toks[i-1:i], "know", "me", "wonder", "and", "tell", "asking") {
			return i
		}
		return -1
	}
	return -1
}

// asksAgent reports whether a question (its tokens) asks who did
// something in the past ("who founded Acme?", "do you know who created
// Globex BI?") or who holds a role ("who is the CEO?", "who are Acme's
// founders?"): "who" opening it and followed by a past verb (agentVerb),
// or by a form of "be" and a role noun (roleNouns) within three words.
// "Who gets live chat?" asks who is given it, which a plan or a kind of
// customer answers, and is asked as before.
func asksAgent(toks []string) bool {
	i := whoAt(toks)
	if i < 0 || i+1 >= len(toks) {
		return false
	}
	next := toks[i+1]
	if beForms[next] {
		for _, w := range toks[i+2 : min(len(toks), i+6)] {
			if roleNouns[w] {
				return true
			}
		}
		return false
	}
	return agentVerb(next)
}

// givesAgent reports whether a sentence names who did what a question
// (its tokens, see asksAgent) asks the doer of, or who holds the role it
// asks: for a verb, a form of it (same stem, or both verbs of a beginning)
// followed by "by" ("founded by ...") or said actively of what the
// question names after it ("X founded Acme"); for a role, the role's noun
// beside a name written in capitals that the question does not hold
// ("Jane Doe, our CEO"). The documents' sentences of the demo name no
// such person, so no sentence of theirs answers "who founded Acme?".
func givesAgent(qtoks []string, s sentence) bool {
	i := whoAt(qtoks)
	if i < 0 || i+1 >= len(qtoks) {
		return false
	}
	if beForms[qtoks[i+1]] {
		return namesRoleHolder(qtoks, s.text)
	}
	verb := qtoks[i+1]
	object := slices.DeleteFunc(slices.Clone(qtoks[i+2:]), func(w string) bool { return stopwords[w] })
	for j, t := range s.toks {
		if !sameStem(t, stem(verb)) && !(beginVerb(verb) && beginVerb(t)) {
			continue
		}
		if slices.Contains(s.toks[j+1:min(len(s.toks), j+3)], "by") {
			return true
		}
		passive := j > 0 && beForms[s.toks[j-1]]
		if !passive && j > 0 && (len(object) == 0 || slices.ContainsFunc(object, func(w string) bool { return matches(w, s.toks[j+1:]) })) {
			return true
		}
	}
	return false
}

// namesRoleHolder reports whether text names someone in a role a question
// asks about: a role noun of the question (roleNouns) within three words
// of a word written with a capital that is not the sentence's first word
// and that the question does not hold.
func namesRoleHolder(qtoks []string, text string) bool {
	fields := strings.Fields(text)
	var roles, names []int
	for k, f := range fields {
		w := strings.ToLower(strings.Trim(f, ".,;:!?()\"'"))
		if roleNouns[w] && slices.Contains(qtoks, w) {
			roles = append(roles, k)
		}
		r := []rune(strings.Trim(f, "\"'(“"))
		if k > 0 && len(r) > 1 && unicode.IsUpper(r[0]) && unicode.IsLower(r[1]) && !slices.Contains(qtoks, w) {
			names = append(names, k)
		}
	}
	for _, a := range roles {
		for _, b := range names {
			if b-a <= 3 && a-b <= 3 {
				return true
			}
		}
	}
	return false
}
