package offline

import "strings"

// abbreviates reports whether w is an abbreviation of consecutive tokens
// of a passage: an initialism spelled by their first letters ("sso" of
// "single sign on", "2fa" of "multi factor authentication", a count
// before the initials standing for the word before them), or a word
// clipped before a number ("sev" of "severity 1"). It reads the passage,
// not a list, so "SSO" asked finds "single sign-on" written, and the
// other way round a passage's own abbreviation is matched as a word.
func abbreviates(w string, toks []string) bool {
	letters := strings.TrimLeft(w, "0123456789")
	counted := len(letters) < len(w)
	if !isLowerLetters(letters) {
		return false
	}
	if (len(letters) >= 3 || counted && len(letters) >= 2) && len(letters) <= 5 {
		for i := range toks {
			if i+len(letters) > len(toks) || counted && i == 0 {
				continue
			}
			ok, long := true, false
			for j, t := range toks[i : i+len(letters)] {
				ok = ok && t != "" && t[0] == letters[j] && isLowerLetters(t) && !stopwords[t]
				long = long || len(t) >= 4
			}
			if ok && long && (!counted || isCount(toks[i-1])) {
				return true
			}
		}
	}
	if !counted && len(w) >= 3 && len(w) <= 4 {
		for i, t := range toks[:max(0, len(toks)-1)] {
			if _, num := numberValue(toks[i+1]); num && len(t) > len(w)+1 && strings.HasPrefix(t, w) {
				return true
			}
		}
	}
	return false
}

func isLowerLetters(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return s != ""
}

// isCount reports whether a word counts what follows it, as "2" does in
// "2FA": a number, or "multi" of "multi-factor".
func isCount(w string) bool {
	_, n := numberValue(w)
	return n || w == "multi" || w == "single" || w == "double" || w == "triple"
}

// countPrefixes are the counts a compound may open with: "two-factor",
// "multi-step", "single-tenant", joined as contentWords joins them.
var countPrefixes = []string{"single", "double", "triple", "multi", "one", "two", "three", "four", "five"}

// countedCompound reports whether w is a compound of a count and a word
// ("twofactor" of "two-factor") and toks hold that word after a count of
// the same kind: "two-factor" and "2-factor" are "multi-factor" written
// with another count, as "2FA" is (see abbreviates), but "multi-tenant"
// is not "single-tenant", nor "two-year" "one year".
func countedCompound(w string, toks []string) bool {
	for _, c := range countPrefixes {
		rest, ok := strings.CutPrefix(w, c)
		if !ok || len(rest) < 4 {
			continue
		}
		s := stem(rest)
		for i := 1; i < len(toks); i++ {
			if sameStem(toks[i], s) && isCount(toks[i-1]) && countKind(toks[i-1]) == countKind(c) {
				return true
			}
		}
	}
	return false
}

// countKind is 1 for a count of one ("one", "single", "1") and 2 for a
// count of more ("two", "multi", "double", "3"): counts of one kind
// stand for each other, not for the other kind's.
func countKind(w string) int {
	switch w {
	case "one", "single", "1":
		return 1
	}
	return 2
}
