package offline

import (
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"

	"github.com/agentgraph/agentgraph/cognition"
)

// This file holds what the model learns about users from what they say
// about themselves: the answer to cognition.LLMLearner's prompt, and the
// same reading of a conversation's messages, so that a style asked for
// earlier shapes later answers (see style.go).

// isLearnPrompt reports whether human is the prompt of
// cognition.LLMLearner, which starts with cognition.MarkerLearn.
func isLearnPrompt(human string) bool {
	first, _, _ := strings.Cut(strings.TrimSpace(human), "\n")
	return strings.TrimSpace(first) == cognition.MarkerLearn
}

// about is what a user said about themselves. Empty fields were not said.
type about struct {
	name, role, org string
	expertise       cognition.Expertise
	style           cognition.Style
	format          string // "bullet points", "numbered lists"
	tone            string // "plain language"
	work            string // "on ETL pipelines"
	interests       []string
	prefs           map[string]string // "I prefer X": key, the preference's last word
}

// empty reports whether nothing was said about the user.
func (a about) empty() bool {
	return a.name == "" && a.role == "" && a.org == "" && a.expertise == "" && a.style == "" && a.format == "" &&
		a.tone == "" && a.work == "" && len(a.interests) == 0 && len(a.prefs) == 0
}

// merge returns a with the fields b says, b winning.
func (a about) merge(b about) about {
	for _, f := range []struct {
		dst *string
		src string
	}{
		{&a.name, b.name}, {&a.role, b.role}, {&a.org, b.org}, {&a.format, b.format}, {&a.tone, b.tone}, {&a.work, b.work},
	} {
		if f.src != "" {
			*f.dst = f.src
		}
	}
	if b.expertise != "" {
		a.expertise = b.expertise
	}
	if b.style != "" {
		a.style = b.style
	}
	for _, i := range b.interests {
		if !slices.Contains(a.interests, i) {
			a.interests = append(a.interests, i)
		}
	}
	for k, v := range b.prefs {
		if a.prefs == nil {
			a.prefs = map[string]string{}
		}
		a.prefs[k] = v
	}
	return a
}

// Names: stated outright in any case ("my name is ada", "call me Jo"), or
// introduced ("I'm Linus", "this is Omar", "Raj here", a "Thanks, Mei"
// sign-off) when written with a capital.
const nameRE = `(\p{L}[\p{L}'-]*(?:\s+\p{Lu}[\p{L}'-]*)?)`
const capNameRE = `(\p{Lu}[\p{L}'-]*(?:\s+\p{Lu}[\p{L}'-]+)?)`

var (
	statedNameRE  = regexp.MustCompile(`(?i:\bmy name(?:'s| is)|\bname's|\bcall me|\bi go by)\s+` + nameRE)
	introNameRE   = regexp.MustCompile(`(?i:\b(?:i'm|i am|this is|it's))\s+` + capNameRE + `(?:\s*[,.!;:?…]|\s+(?:and|from|here|with|-|–|—)\b|\s*$)`)
	hereNameRE    = regexp.MustCompile(`(?:^|[,!.]\s*|\b(?i:hi|hello|hey)\s+)` + capNameRE + `\s+here\b`)
	signOffNameRE = regexp.MustCompile(`(?i:\b(?:thanks|thank you|cheers|regards|best|many thanks|ta))[,!]?\s+` + capNameRE + `[.!]?\s*$`)
	// notNames are capitalised words that follow "I'm" without being a
	// name.
	notNames = map[string]bool{"not": true, "just": true, "here": true, "back": true, "sorry": true, "fine": true, "good": true,
		"ok": true, "okay": true, "interested": true, "looking": true, "new": true, "happy": true, "glad": true, "trying": true,
		"using": true, "working": true, "the": true, "a": true, "an": true, "also": true, "still": true, "very": true, "so": true,
		"really": true, "from": true, "in": true, "on": true, "at": true, "done": true, "ready": true, "sure": true, "curious": true,
		"wondering": true, "confused": true, "stuck": true, "tired": true, "busy": true, "english": true, "i": true, "me": true,
		"hi": true, "hello": true, "hey": true, "thanks": true, "please": true, "team": true, "all": true, "everyone": true}
)

// Roles: "I'm a data engineer", "I work as an accountant", "my job is
// data scientist", "as a nurse, ...", "I'm Sofia, a UX designer", "Raj
// here - lead SRE". The role runs to the next preposition or clause end,
// and its last word must name a person (see isPersonNoun).
const roleWords = `((?:[\p{L}/&-]+\s+){0,4}?[\p{L}/&-]+)`

var (
	roleRE   = regexp.MustCompile(`(?i:\b(?:i'm|i am|i work as|i'm working as|i am working as|working as|i'm employed as|employed as|my (?:job|role|title|job title|position) is|i've been|i have been)(?:\s+(?:just|only|currently|now|actually|also|basically|still))?\s+(?:an?\s+|the\s+)?)` + roleWords + roleEnd)
	workAsRE = regexp.MustCompile(`(?i:\b(?:work|working|employed)\b[^.;!?]*?\bas\s+(?:an?\s+|the\s+)?)` + roleWords + roleEnd)
	ofRoleRE = regexp.MustCompile(`^\s+(?i:of)\s+(\p{L}[\p{L}-]*)`)
	asRoleRE = regexp.MustCompile(`(?:^|[.;!?]\s*)(?i:as an?)\s+` + roleWords + `\s*,`)
	// appositiveRE is a role set off after a name or "here" ("I'm Sofia,
	// a UX designer", "Raj here - lead SRE"), read from the comma or dash
	// on.
	appositiveRE   = regexp.MustCompile(`^\s*(?:,|-|–|—)\s*(?i:an?\s+|the\s+)?` + roleWords + roleEnd)
	roleEnd        = `(?:\s+(?i:at|for|with|in|on|from|who|and|but|that|which|so|working|based|of|by|since|here|too|learning|trying)\b|\s*[,.;:!?…()-]|\s*$)`
	orgAfterRoleRE = regexp.MustCompile(`^\s+(?i:at|for|with)\s+(\p{Lu}[\p{L}\d&.'-]*(?:\s+\p{Lu}[\p{L}\d&.'-]*)*)`)
	workAtRE       = regexp.MustCompile(`(?i:\bi(?:'m| am)?\s+(?:work|working|employed)\s+(?:at|for))\s+(\p{Lu}[\p{L}\d&.'-]*(?:\s+\p{Lu}[\p{L}\d&.'-]*)*)`)
	workRE         = regexp.MustCompile(`(?i)\bI(?:\s+am|'m)?\s+(?:(?:mostly|mainly|currently|also|now|primarily)\s+)?(?:work|working)\s+(on|in|with)\s+([^.,;!?…]+?)(?:\s+(?:and|but)\s+|[.,;!?…]|$)`)
	interestRE     = regexp.MustCompile(`(?i)\b(?:interested in|passionate about|i care about|i'm into|i am into|i'm learning|i am learning|i'm studying|i am studying|focus on|specialise in|specialize in)\s+([^.,;!?…]+?)(?:\s+(?:and|but|so)\s+|[.,;!?…]|$)`)
	preferRE       = regexp.MustCompile(`(?i)\bI(?:\s+would|'d)?\s+prefer\s+([^.,;!?]+?)(?:\s+(?:and|but)\s+|[.,;!?]|$)`)
	yearsRE        = regexp.MustCompile(`(?i)\b(\d{1,2})\+?\s+years?\b`)
	noviceRE       = regexp.MustCompile(`(?i)\b(?:beginner|newbie|novice|new to|just (?:started|starting|getting started)|getting started with|not (?:very |that |a |too )?technical|non-technical|no experience|little experience|first time|junior|intern|trainee|apprentice|go easy on me|student)\b|\b(?:i'm|i am)\b[^.;!?]*?\b(?:still |just )?learning\b`)
	expertRE       = regexp.MustCompile(`(?i)\b(?:expert|senior|lead|principal|staff|veteran|seasoned|experienced|advanced|head of|chief|director|architect)\b`)
	intermediateRE = regexp.MustCompile(`(?i)\b(?:intermediate|some experience|familiar with|comfortable with|know the basics)\b`)
	clauseRE       = regexp.MustCompile(`[.!?;…\n]+|\s+(?:-|–|—)\s+`)
)

// personSuffixes and personNouns tell a role's last word from other words
// that follow "I'm a" ("I'm a bit tired", "I'm a big fan").
var (
	personSuffixes = []string{"er", "or", "ist", "ian", "ant", "ent", "eer", "ect", "man", "woman", "person", "ee", "yst", "ive", "ary", "ier", "eur", "ologist", "wright", "smith"}
	personNouns    = map[string]bool{"nurse": true, "chef": true, "cook": true, "clerk": true, "coach": true, "pilot": true, "dev": true,
		"admin": true, "sysadmin": true, "lead": true, "head": true, "intern": true, "midwife": true, "paramedic": true, "mechanic": true,
		"nanny": true, "artist": true, "poet": true, "judge": true, "medic": true, "doctor": true, "vet": true, "guide": true, "pm": true,
		"ceo": true, "cto": true, "cfo": true, "coo": true, "cio": true, "ciso": true, "vp": true, "sre": true, "dba": true, "qa": true,
		"founder": true, "cofounder": true, "co-founder": true, "rep": true, "diplomat": true, "barista": true, "pharmacist": true,
		"surgeon": true, "dentist": true, "therapist": true, "secretary": true, "assistant": true, "associate": true, "scientist": true,
		"student": true, "freelancer": true, "contractor": true, "auditor": true, "clinician": true, "technician": true, "specialist": true}
	// notRoles end in a person suffix without naming an occupation.
	notRoles = map[string]bool{"beginner": true, "newcomer": true, "novice": true, "expert": true, "user": true, "customer": true,
		"member": true, "buyer": true, "other": true, "number": true, "fan": true, "lover": true, "believer": true, "player": true,
		"follower": true, "subscriber": true, "reader": true, "viewer": true, "listener": true, "learner": true, "bit": true,
		"lot": true, "different": true, "client": true, "prospect": true, "patient": true, "parent": true, "resident": true,
		"moment": true, "hurry": true, "rush": true, "newbie": true, "ancient": true, "silent": true, "fluent": true, "whole": true}
	// notRoleWords may not appear in a role at all.
	notRoleWords = map[string]bool{"not": true, "looking": true, "trying": true, "interested": true, "going": true, "using": true,
		"tired": true, "sure": true, "the": true, "your": true, "my": true, "a": true, "an": true, "bit": true, "little": true,
		"big": true, "huge": true, "lot": true, "fan": true, "i": true, "you": true, "it": true, "is": true, "are": true}
)

func isPersonNoun(w string) bool {
	if len(w) >= 2 && len(w) <= 5 && strings.ToUpper(w) == w && !strings.ContainsAny(w, "0123456789") {
		return true // an acronym: CTO, SRE, PM
	}
	w = strings.ToLower(w)
	if notRoles[w] {
		return false
	}
	if personNouns[w] {
		return true
	}
	for _, s := range personSuffixes {
		if strings.HasSuffix(w, s) && len(w) > len(s)+2 {
			return true
		}
	}
	return false
}

// cleanRole returns the role if its words read as one ("senior backend
// developer"), or "".
func cleanRole(role string) string {
	words := strings.Fields(role)
	for len(words) > 0 && hasAny([]string{strings.ToLower(words[0])}, "just", "only", "currently", "now", "actually", "also", "basically", "total", "complete") {
		words = words[1:]
	}
	if len(words) == 0 || len(words) > 5 {
		return ""
	}
	for _, w := range words {
		if notRoleWords[strings.ToLower(w)] {
			return ""
		}
	}
	if !isPersonNoun(words[len(words)-1]) {
		return ""
	}
	return strings.Join(words, " ")
}

// Styles are asked for with words of length ("brief", "in depth") or of
// register ("technical"); a negation before one turns length around ("not
// too long", "tired of long answers"). A style is a standing preference
// when the clause is about answers in general ("keep answers brief",
// "please be concise", "I like detailed explanations"), not a request for
// one thing ("a short summary of the SLA").
var (
	conciseWords  = []string{"brief", "briefly", "short", "shorter", "concise", "concisely", "succinct", "terse", "tl;dr", "tldr", "to the point", "short version", "no fluff", "fewer words", "bottom line", "in a hurry", "short on time", "in a rush", "much time", "quick answers", "quick replies", "keep it quick"}
	detailedWords = []string{"detailed", "detail", "details", "thorough", "thoroughly", "in-depth", "in depth", "comprehensive", "elaborate", "step-by-step", "step by step", "walk me through", "long", "longer", "full explanations", "fuller", "extensive", "exhaustive", "lengthy", "verbose"}
	technicalWord = []string{"technical", "technically", "low-level", "low level", "jargon is fine", "with code", "include code", "code samples", "code examples", "precise"}
	plainWords    = []string{"simply", "simple terms", "plain english", "plain language", "no jargon", "without jargon", "layman", "eli5", "simple words", "easy to understand"}
	bulletWords   = []string{"bullet", "bullets", "bulleted", "bullet points", "as a list", "in a list", "as lists", "in lists", "list form", "point form", "numbered list", "numbered lists"}
	negations     = []string{"not", "don't", "dont", "do not", "no", "never", "without", "tired of", "hate", "dislike", "too", "no need for", "don't need", "skip the", "less", "fewer", "stop"}
	// generalTargets make a style clause about answers in general.
	generalTargets = []string{"answer", "answers", "response", "responses", "reply", "replies", "explanation", "explanations", "message", "messages",
		"it", "things", "everything", "yourself", "version", "please", "be", "keep", "prefer", "like", "love", "want", "need", "appreciate",
		"stay", "use", "give", "hurry", "time", "rush", "would"}
	// durationRE is "long" as a duration: "how long", "as long as",
	// "for how long".
	durationRE = regexp.MustCompile(`\b(how |as )long\b`)
	oneOffRE   = regexp.MustCompile(`(?i)\b(?:short|brief|detailed|quick|long|thorough|technical|concise)\s+(?:\w+\s+)?(?:summary|overview|description|list|intro|introduction|note|explanation|answer|look|rundown)\s+(?:of|about|on|for|to)\b`)
)

// phraseIn reports whether the clause, lower-case with single spaces,
// holds the phrase as whole words, and where.
func phraseIn(clause, phrase string) int {
	c := " " + clause + " "
	for i := 0; ; {
		j := strings.Index(c[i:], " "+phrase)
		if j < 0 {
			return -1
		}
		j += i
		end := j + 1 + len(phrase)
		if end <= len(c) && (end == len(c) || !unicode.IsLetter(rune(c[end]))) {
			return j
		}
		i = j + 1
	}
}

// firstPhrase returns the position of the first of phrases in clause, or
// -1.
func firstPhrase(clause string, phrases []string) int {
	best := -1
	for _, p := range phrases {
		if i := phraseIn(clause, p); i >= 0 && (best < 0 || i < best) {
			best = i
		}
	}
	return best
}

// negated reports whether a negation comes shortly before position i.
func negated(clause string, i int) bool {
	before := " " + clause[:max(0, i)] + " "
	words := strings.Fields(before)
	tail := " " + strings.Join(words[max(0, len(words)-4):], " ") + " "
	for _, n := range negations {
		if strings.Contains(tail, " "+n+" ") {
			return true
		}
	}
	return false
}

// styleOf returns the standing style and format a clause asks for.
func styleOf(clause string) (style cognition.Style, format, tone string) {
	c := strings.Join(strings.Fields(strings.ToLower(clause)), " ")
	// "How long does Acme keep backups?", "as long as": a duration, not
	// a length of answer.
	c = replaceAll(durationRE, c, "${1}duration")
	if oneOffRE.MatchString(c) {
		return "", "", ""
	}
	words := tokens(c)
	if !hasAny(words, generalTargets...) && !strings.Contains(c, "i'd") && !strings.Contains(c, "i'm") {
		return "", "", ""
	}
	if i := firstPhrase(c, bulletWords); i >= 0 && !negated(c, i) {
		format = "bullet points"
		if strings.Contains(c, "numbered") {
			format = "numbered lists"
		}
	}
	if i := firstPhrase(c, plainWords); i >= 0 {
		tone = "plain language"
	}
	ci, di, ti := firstPhrase(c, conciseWords), firstPhrase(c, detailedWords), firstPhrase(c, technicalWord)
	switch {
	case ti >= 0 && !negated(c, ti) && (ci < 0 || ti < ci) && (di < 0 || ti < di):
		style = cognition.Technical
	case ci >= 0 && (di < 0 || ci < di):
		style = cognition.Concise
		if negated(c, ci) && !strings.Contains(c, "much time") {
			style = cognition.Detailed
		}
	case di >= 0:
		style = cognition.Detailed
		if negated(c, di) {
			style = cognition.Concise
		}
	}
	return style, format, tone
}

// quoteReplacer turns typographic apostrophes into plain ones.
var quoteReplacer = strings.NewReplacer("’", "'", "‘", "'")

// messageMemo holds what recent messages say about their authors: every
// turn reads the conversation's earlier user messages again, and the
// supervisor and the writer both read the current one. Up to 2,048
// messages or 2 MiB of them.
var messageMemo = memo[about]{maxEntries: 2048, maxBytes: 2 << 20}

// readAbout reads what messages say about their author.
func readAbout(msgs []string) about {
	var a about
	for _, raw := range msgs {
		a = a.merge(messageMemo.get(quoteReplacer.Replace(raw), readMessage))
	}
	return a
}

func readMessage(msg string) about {
	var a about
	if m := statedNameRE.FindStringSubmatch(msg); m != nil && !notNames[strings.ToLower(firstWord(m[1]))] {
		a.name = capitalize(m[1])
	} else {
		for _, re := range []*regexp.Regexp{introNameRE, hereNameRE, signOffNameRE} {
			for _, m := range re.FindAllStringSubmatch(msg, -1) {
				if name := m[1]; a.name == "" && !notNames[strings.ToLower(firstWord(name))] && !strings.HasSuffix(name, "'s") {
					a.name = name
				}
			}
		}
	}
	// The role and where it is held.
	var found [][]int // the role's start and end in msg
	for _, re := range []*regexp.Regexp{roleRE, workAsRE, asRoleRE} {
		for _, idx := range re.FindAllStringSubmatchIndex(msg, -1) {
			found = append(found, idx[len(idx)-2:])
		}
	}
	for i, r := range msg {
		if !strings.ContainsRune(",-–—", r) {
			continue
		}
		before := lastWord(strings.TrimSpace(msg[:i]))
		if before == "here" || before != "" && unicode.IsUpper([]rune(before)[0]) && !notNames[strings.ToLower(before)] {
			if idx := appositiveRE.FindStringSubmatchIndex(msg[i:]); idx != nil {
				found = append(found, []int{i + idx[2], i + idx[3]})
			}
		}
	}
	for _, f := range found {
		role := cleanRole(msg[f[0]:f[1]])
		if role == "" || a.role != "" {
			continue
		}
		rest := msg[f[1]:]
		if m := ofRoleRE.FindStringSubmatch(rest); m != nil && hasAny([]string{strings.ToLower(lastWord(role))}, "head", "director", "vp", "chief", "professor", "manager", "lead") {
			role += " of " + m[1] // "head of data"
			rest = rest[len(m[0]):]
		}
		a.role = role
		if m := orgAfterRoleRE.FindStringSubmatch(rest); m != nil {
			a.org = orgName(m[1])
		}
	}
	if m := workAtRE.FindStringSubmatch(msg); m != nil && a.org == "" {
		a.org = orgName(m[1])
	}
	if m := workRE.FindStringSubmatch(msg); m != nil {
		what := strings.TrimSpace(m[2])
		a.work = limit(strings.ToLower(m[1])+" "+what, 200)
		a.interests = append(a.interests, topicsOf(what)...)
	}
	for _, m := range interestRE.FindAllStringSubmatch(msg, -1) {
		a.interests = append(a.interests, topicsOf(m[1])...)
	}
	// Expertise: said outright, or read from the role and the years.
	switch {
	case noviceRE.MatchString(msg) && !expertRE.MatchString(a.role):
		a.expertise = cognition.Novice
	case expertRE.MatchString(a.role) || selfExpert(msg):
		a.expertise = cognition.Expert
	case intermediateRE.MatchString(msg):
		a.expertise = cognition.Intermediate
	}
	if m := yearsRE.FindStringSubmatch(msg); m != nil && a.expertise == "" && (a.role != "" || strings.Contains(strings.ToLower(msg), "experience")) {
		if n, _ := strconv.Atoi(m[1]); n >= 5 {
			a.expertise = cognition.Expert
		} else if n >= 1 {
			a.expertise = cognition.Intermediate
		}
	}
	if a.expertise == "" && a.role != "" {
		a.expertise = cognition.Intermediate // a working professional, in their field
	}
	// Style, format and tone, clause by clause.
	for _, clause := range clauseRE.Split(msg, -1) {
		s, f, t := styleOf(clause)
		if s != "" {
			a.style = s
		}
		if f != "" {
			a.format = f
		}
		if t != "" {
			a.tone = t
		}
	}
	for _, m := range preferRE.FindAllStringSubmatch(msg, -1) {
		what := strings.TrimSpace(m[1])
		if what == "" {
			continue
		}
		key := "general"
		if w := strings.Fields(strings.ToLower(what)); len(w) > 1 {
			key = w[len(w)-1]
		}
		if a.prefs == nil {
			a.prefs = map[string]string{}
		}
		a.prefs[limit(key, 40)] = limit(what, 200)
	}
	return a
}

// selfExpert reports whether the user calls themselves an expert ("I'm
// an expert in", "I'm a seasoned ...", "I've been doing this for 10
// years" is read from the years).
func selfExpert(msg string) bool {
	for _, clause := range clauseRE.Split(msg, -1) {
		l := strings.ToLower(clause)
		if (strings.Contains(l, "i'm") || strings.Contains(l, "i am") || strings.Contains(l, "i've")) && expertRE.MatchString(l) &&
			!strings.Contains(l, "expert in your") {
			return true
		}
	}
	return false
}

// orgName cuts an organisation's name read from capitalised words at the
// end of its sentence ("Fintrack. Short answers" is "Fintrack").
func orgName(s string) string {
	if i := strings.Index(s, ". "); i >= 0 {
		s = s[:i]
	}
	return strings.TrimRight(s, ".'-")
}

func lastWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[len(f)-1]
	}
	return s
}

func firstWord(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return s
}

// learn answers cognition.LLMLearner's prompt with rules: from the user's
// messages of the "## Turn" section it takes what they say about
// themselves (readAbout: name, role and organisation, expertise, style,
// format, what they work on and are interested in, stated preferences),
// each fact about the person (name, role, work) also an episode; how they
// like their answers goes to the profile only; a failed turn's question
// is a knowledge gap. A turn that says nothing about the user teaches
// nothing.
func learn(human string) cognition.Learning {
	turn := human
	if _, after, ok := strings.Cut(human, "\n## Turn\n"); ok {
		turn = after
	}
	var said []string
	for _, line := range strings.Split(turn, "\n") {
		// LearnPrompt quotes each message and its role.
		if msg, ok := strings.CutPrefix(line, `"user": `); ok {
			if m, err := strconv.Unquote(msg); err == nil {
				said = append(said, strings.TrimSpace(m))
			}
		}
	}
	a := readAbout(said)
	out := cognition.Learning{Episodes: []cognition.EpisodeDraft{}}
	prefs := map[string]string{}
	for k, v := range a.prefs {
		prefs[k] = v
	}
	episode := func(summary string, importance float64, topics ...string) {
		out.Episodes = append(out.Episodes, cognition.EpisodeDraft{Summary: limit(summary, 500), Topics: topics, Importance: importance})
	}
	if a.name != "" {
		prefs["name"] = a.name
		episode("The user's name is "+a.name+".", 0.8, "name")
	}
	if a.role != "" {
		prefs["role"] = limit(a.role, 200)
		s := "The user is " + article(a.role) + " " + a.role
		if a.org != "" {
			s += " at " + a.org
		}
		episode(s+".", 0.7, append([]string{"role"}, topicsOf(a.role)...)...)
	}
	if a.org != "" {
		prefs["organization"] = limit(a.org, 200)
		if a.role == "" {
			episode("The user works at "+a.org+".", 0.6, "organization")
		}
	}
	if a.format != "" {
		prefs["format"] = a.format
	}
	if a.tone != "" {
		prefs["tone"] = a.tone
	}
	if a.work != "" {
		prefs["work"] = a.work
		episode("The user works "+a.work+".", 0.7, topicsOf(a.work)...)
	}
	out.Profile = cognition.ProfileUpdate{Expertise: a.expertise, Style: a.style}
	if len(prefs) > 0 {
		for len(prefs) > 10 {
			for k := range prefs {
				if k != "name" && k != "role" {
					delete(prefs, k)
					break
				}
			}
		}
		out.Profile.Preferences = prefs
	}
	if len(a.interests) > 0 {
		out.Profile.Interests = a.interests[:min(len(a.interests), cognition.MaxInterests)]
	}
	for i := range out.Episodes {
		if len(out.Episodes[i].Topics) == 0 {
			out.Episodes[i].Topics = []string{"user"}
		}
		out.Episodes[i].Topics = out.Episodes[i].Topics[:min(len(out.Episodes[i].Topics), cognition.MaxTopics)]
	}
	if len(out.Episodes) > 5 {
		out.Episodes = out.Episodes[:5]
	}
	if m := outcomeRE.FindStringSubmatch(turn); m != nil && m[1] == string(cognition.Failure) && len(said) > 0 {
		if t := topicsOf(said[len(said)-1]); len(t) > 0 {
			out.Gaps = []string{limit(strings.Join(t[:min(3, len(t))], " "), 60)}
		}
	}
	return out
}

var outcomeRE = regexp.MustCompile(`(?m)^Outcome: "(\w+)"$`)

func article(s string) string {
	if s != "" && strings.ContainsRune("aeiouAEIOU", rune(s[0])) && !(len(s) > 1 && unicode.IsUpper(rune(s[1]))) {
		return "an"
	}
	if len(s) > 1 && unicode.IsUpper(rune(s[0])) && unicode.IsUpper(rune(s[1])) && strings.ContainsRune("AEFHILMNORSX", rune(s[0])) {
		return "an" // an SRE, an IT administrator
	}
	return "a"
}

// topicsOf returns the content words of s, lower-case, at most
// cognition.MaxTopics.
func topicsOf(s string) []string {
	var out []string
	for _, w := range contentWords(s) {
		if len(w) > 1 && len(w) <= 60 && len(out) < cognition.MaxTopics {
			out = append(out, w)
		}
	}
	return out
}

func capitalize(s string) string {
	words := strings.Fields(s)
	for i, w := range words {
		r := []rune(w)
		r[0] = unicode.ToUpper(r[0])
		words[i] = string(r)
	}
	return strings.Join(words, " ")
}

// limit cuts s to at most n bytes, at a rune boundary.
func limit(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	for len(string(r)) > n {
		r = r[:len(r)-1]
	}
	return string(r)
}
