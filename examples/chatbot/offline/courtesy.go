package offline

import (
	"slices"
	"strings"
	"unicode"
)

// courtesy is what a message that only greets or thanks says.
type courtesy int

const (
	noCourtesy courtesy = iota
	greets
	thanks
)

// foreignCourtesies are greetings and thanks of other languages, written
// without accents, punctuation or case: a message made of nothing else
// is a greeting or thanks, whatever the language. Longer messages in
// another language are notEnglish's.
var foreignCourtesies = map[string]courtesy{}

func init() {
	for _, g := range []string{
		// Spanish, French, German, Italian, Portuguese, Dutch, Nordic.
		"hola", "buenas", "buenos dias", "buenas tardes", "buenas noches", "que tal",
		"bonjour", "bonsoir", "salut", "coucou", "allo",
		"hallo", "guten tag", "guten morgen", "guten abend", "moin", "servus", "gruss gott", "gruezi",
		"ciao", "buongiorno", "buonasera", "salve",
		"ola", "oi", "bom dia", "boa tarde", "boa noite",
		"hoi", "goedemorgen", "goedendag", "hej", "hei", "god dag", "terve", "moi",
		// Other scripts and languages.
		"privet", "zdravstvuyte", "привет", "здравствуйте", "namaste", "merhaba", "selam", "shalom", "salaam",
		"marhaba", "konnichiwa", "ni hao", "annyeong", "annyeonghaseyo", "czesc", "dzien dobry", "ahoj", "szia",
		"こんにちは", "你好", "您好", "안녕하세요", "مرحبا", "שלום", "नमस्ते", "γεια σας", "γεια",
	} {
		foreignCourtesies[g] = greets
	}
	for _, t := range []string{
		"gracias", "muchas gracias", "mil gracias", "merci", "merci beaucoup", "merci bien", "danke", "danke schon",
		"danke sehr", "vielen dank", "besten dank", "grazie", "grazie mille", "obrigado", "obrigada", "muito obrigado",
		"muito obrigada", "dank je", "dank je wel", "dank u", "bedankt", "tack", "tack sa mycket", "takk", "tak",
		"kiitos", "spasibo", "спасибо", "arigato", "arigatou", "domo arigato", "xie xie", "dziekuje", "dekuji",
		"koszonom", "tesekkurler", "shukran", "toda", "gamsahamnida", "ありがとう", "谢谢", "감사합니다", "شكرا", "תודה",
		"धन्यवाद", "ευχαριστω",
	} {
		foreignCourtesies[t] = thanks
	}
}

// plainAccents maps the accented Latin letters of the greetings above to
// their plain letters.
var plainAccents = strings.NewReplacer("á", "a", "à", "a", "â", "a", "ã", "a", "ä", "a", "é", "e", "è", "e", "ê", "e",
	"í", "i", "ó", "o", "ô", "o", "õ", "o", "ö", "o", "ú", "u", "ü", "u", "ç", "c", "ñ", "n", "ß", "ss", "å", "a",
	"ø", "o", "ę", "e", "ś", "s", "ł", "l", "ň", "n", "ě", "e", "ű", "u", "ő", "o", "ş", "s", "ı", "i", "ί", "ι", "ώ", "ω")

// smalltalk are the "how are you" of a greeting, in English and other
// languages, written as foreignCourtesies are: a greeting may end with one.
var smalltalk = map[string]bool{}

// greetingFillers are the words a greeting names its listener with ("hi
// there", "hola amigo", "bonjour tout le monde", "hallo zusammen"). No
// word that may carry a follow-up is one: "and", "all", a plan's name
// ("Gracias! And Team?" asks about Team).
var greetingFillers = map[string]bool{}

func init() {
	for _, s := range []string{
		"how are you", "how are you doing", "how are things", "how's it going", "how is it going", "how do you do",
		"what's up", "whats up", "how's everything", "hows it going",
		"que tal", "como estas", "como esta", "como va", "ca va", "comment ca va", "comment allez vous",
		"wie gehts", "wie geht's", "wie geht es dir", "wie geht es ihnen", "alles gut", "come stai", "come va", "come sta",
		"tudo bem", "tudo bom", "como vai", "hoe gaat het", "hur mar du", "hvordan gar det",
	} {
		smalltalk[s] = true
	}
	for _, f := range []string{"there", "everyone", "everybody", "folks", "friend", "friends", "guys", "again",
		"amigo", "amigos", "amiga", "amigas", "a", "todos", "todas", "tout", "le", "monde", "mon", "ami", "mes", "amis",
		"zusammen", "alle", "leute", "tutti", "ragazzi", "pessoal", "allemaal"} {
		greetingFillers[f] = true
	}
}

// courtesyWords splits s, lower-cased and without accents, into its
// words, as foreignCourtesies and smalltalk write them.
func courtesyWords(s string) []string {
	s = plainAccents.Replace(strings.ToLower(s))
	return strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' })
}

// foreignCourtesy returns whether the whole message is a greeting or
// thanks in a language other than English ("hola", "merci beaucoup",
// "¡Buenos días!", "danke schön"), or several of them, mixed with English
// ones, with the "how are you" of a greeting and the words that name its
// listener ("hola, gracias", "hallo, guten morgen", "buenos días, ¿qué
// tal?", "bonjour tout le monde"). Thanks win over greetings. English
// ones alone are isGreeting's and isThanks'.
func foreignCourtesy(q string) courtesy {
	q = strings.TrimSpace(q)
	if len(q) == 0 || len(q) > 80 {
		return noCourtesy // checked first: most messages are longer
	}
	words := courtesyWords(q)
	if len(words) == 0 || len(words) > 10 {
		return noCourtesy
	}
	found, foreign := noCourtesy, false
	for i := 0; i < len(words); {
		n := 0
		for k := min(4, len(words)-i); k > 0 && n == 0; k-- {
			phrase := strings.Join(words[i:i+k], " ")
			switch c, ok := foreignCourtesies[phrase]; {
			case ok:
				found, foreign, n = max(found, c), true, k
			case smalltalk[phrase]:
				found, n = max(found, greets), k
			case englishCourtesy(phrase) != noCourtesy:
				found, n = max(found, englishCourtesy(phrase)), k
			case k == 1 && greetingFillers[phrase] && found != noCourtesy:
				n = 1 // "amigo" after "hola", not on its own
			}
		}
		if n == 0 {
			return noCourtesy // a word that greets no one: a question, or another language's sentence
		}
		i += n
	}
	if !foreign {
		return noCourtesy
	}
	return found
}

// englishCourtesy returns what an English greeting or thanks phrase of
// one or two words says ("hello", "good morning", "thank you").
func englishCourtesy(phrase string) courtesy {
	switch phrase {
	case "hi", "hello", "hey", "hiya", "howdy", "greetings", "good morning", "good afternoon", "good evening", "good day":
		return greets
	case "thanks", "thank you", "thx", "cheers", "many thanks", "thanks a lot":
		return thanks
	}
	return noCourtesy
}

// withoutGreeting returns q without the greeting or thanks it opens with
// when a question follows ("Hi! What does Team cost?", "Hola, how much is
// the Team plan?"), and without a conversational opener ("Quick
// question:", "So,", "One more thing -", "btw", "just wondering,"): the
// rules answer the question, and an opener's words are no part of a
// search. Texting spellings are written out first ("where r ur offices"
// is "where are your offices"; see plainSpelling).
func withoutGreeting(q string) string {
	q = plainSpelling(q)
	if w := tokens(q); isGreeting(w) || isThanks(w) || foreignCourtesy(q) != noCourtesy {
		return q // "Ciao! Come stai?": a greeting all through
	}
	for range 4 {
		if rest, ok := withoutOpener(q); ok {
			q = rest
			continue
		}
		i := strings.IndexAny(q, ",.!?;:")
		if i <= 0 {
			return q
		}
		head, rest := q[:i], strings.TrimLeft(q[i+1:], " ,.!?;:")
		if rest == "" || len(contentWords(rest)) == 0 {
			return q
		}
		if w := tokens(head); !isGreeting(w) && !isThanks(w) && foreignCourtesy(head) == noCourtesy {
			return q
		}
		q = rest
	}
	return q
}

// openers are the phrases a message may open with before its question
// that say nothing of what is asked: with a mark after them ("Quick
// question: is there an API?", "So, what does Team cost?", "One more
// thing - ...") or, for those marked true, without one ("btw is there a
// status page?", "I was wondering if you have an API"). "So" and "also"
// without a mark open a question only before a question word ("so what
// does Team cost?").
var openers = map[string]bool{
	"quick question": true, "a quick question": true, "quick one": true, "one more thing": true, "one more question": true,
	"one last thing": true, "one last question": true, "another question": true, "another thing": true,
	"just wondering": true, "i was wondering": true, "i'm wondering": true, "im wondering": true, "wondering": true,
	"i was wondering if": true, "i was wondering whether": true, "just wondering if": true, "wondering if": true,
	"just curious": true, "curious": false, "by the way": true, "btw": true, "fyi": true, "oh and": true, "and also": true,
	"ok so": true, "okay so": true, "so": true, "also": true,
	"question": false, "ok": false, "okay": false, "well": false, "anyway": false, "anyways": false, "right": false,
	"alright": false, "hmm": false, "um": false, "uh": false, "oh": false, "and": false, "sorry": false, "excuse me": false,
}

// openerWords is the most words an opener has.
const openerWords = 4

// withoutOpener returns q without the opener it starts with (openers),
// and whether it had one; a message that is nothing but an opener, or
// whose rest has no content words, keeps it.
func withoutOpener(q string) (string, bool) {
	q = strings.TrimSpace(q)
	// The words at q's start and where each ends.
	var ends [openerWords]int
	n := 0
	for i := 0; i < len(q) && n < openerWords; {
		j := i
		for j < len(q) && (isWordByte(q[j]|0x20) || q[j] == '\'') {
			j++
		}
		if j == i {
			break
		}
		ends[n] = j
		n++
		if j >= len(q) || q[j] != ' ' {
			break
		}
		i = j + 1
	}
	for k := n; k > 0; k-- {
		direct, ok := openers[strings.ToLower(q[:ends[k-1]])]
		if !ok {
			continue
		}
		rest := q[ends[k-1]:]
		if joinedByDash(rest) {
			// "Right-to-left", "so-called": one word with the next.
			continue
		}
		marked := strings.TrimLeft(rest, " ,:;!.-–—")
		hasMark := len(strings.TrimLeft(rest, " ")) > len(marked)
		switch {
		case hasMark:
		case !direct:
			continue
		case k == 1 && hasAny([]string{strings.ToLower(q[:ends[0]])}, "so", "also"):
			if w := tokens(marked); len(w) == 0 || !slices.Contains(questionWords, w[0]) {
				continue
			}
		}
		if marked == "" || len(contentWords(marked)) == 0 {
			return q, false
		}
		return marked, true
	}
	return q, false
}

// joinedByDash reports whether rest, what follows a word, opens with a
// dash written without a space after it: the word and the next are one
// ("right-to-left"). A dash is a mark only with a space before or after
// it ("One more thing - ...", "One more thing -- ...").
func joinedByDash(rest string) bool {
	for _, d := range []string{"-", "–", "—"} {
		if r, ok := strings.CutPrefix(rest, d); ok {
			return r != "" && r[0] != ' ' && !strings.HasPrefix(r, d)
		}
	}
	return false
}

// textingForms are texting spellings and the words they stand for.
var textingForms = map[string]string{"r": "are", "u": "you", "ur": "your", "pls": "please", "plz": "please",
	"thx": "thanks", "thnx": "thanks", "wat": "what", "abt": "about", "cuz": "because", "bc": "because",
	"where's": "where is", "wheres": "where is"}

// plainSpelling returns q with its texting spellings (textingForms)
// written out: "where r ur offices" is "where are your offices", "can u
// tell me" is "can you tell me". A one-letter form only in lower case
// ("R" is a language, "U" a letter); the others in any case ("Where's",
// "WHERES"). A form counts only as a word of the sentence: between
// spaces or sentence marks, and outside backticks and quotes, so that
// code and quoted text (`print(r"\d+")`, `print("u")`) stay as written.
// q itself when it has none, without a copy.
func plainSpelling(q string) string {
	var b strings.Builder
	last := 0
	quoted := false   // inside `...` or "..."
	var lower [8]byte // a word of several letters in lower case, for the forms written in capitals
	for i := 0; i < len(q); {
		if c := q[i]; c == '`' || c == '"' {
			quoted = !quoted
		}
		if !isWordByte(q[i] | 0x20) {
			i++
			continue
		}
		j := i + 1
		for j < len(q) && (isWordByte(q[j]|0x20) || q[j] == '\'') {
			j++
		}
		full, ok := textingForms[q[i:j]]
		if !ok && 1 < j-i && j-i <= len(lower) && hasUpper(q[i:j]) {
			n := copy(lower[:], q[i:j])
			for k := range n {
				lower[k] |= 0x20 // letters only: the rest are digits and "'", unchanged
			}
			if full, ok = textingForms[string(lower[:n])]; ok && 'A' <= q[i] && q[i] <= 'Z' {
				full = strings.ToUpper(full[:1]) + full[1:]
			}
		}
		if ok && !quoted && sentenceBoundary(q, i-1) && sentenceBoundary(q, j) {
			if b.Len() == 0 {
				b.Grow(len(q) + 16)
			}
			b.WriteString(q[last:i])
			b.WriteString(full)
			last = j
		}
		i = j
	}
	if last == 0 {
		return q
	}
	b.WriteString(q[last:])
	return b.String()
}

// hasUpper reports whether s holds a capital letter.
func hasUpper(s string) bool {
	for i := range len(s) {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// sentenceBoundary reports whether q[i] may stand next to a word of a
// sentence: outside q, white space or a sentence mark. A bracket, quote
// or operator next to it makes the word part of code ("print(u)",
// "r'...'").
func sentenceBoundary(q string, i int) bool {
	if i < 0 || i >= len(q) {
		return true
	}
	switch q[i] {
	case ' ', '\t', '\n', '\r', ',', '.', '!', '?', ';', ':':
		return true
	}
	return false
}

// courtesyReply answers a greeting or thanks in another language: in
// English, saying so, since English is what the demo model reads.
func courtesyReply(c courtesy, tools []tool, u about) string {
	const note = " (As the offline demo model I read and answer English only, so please ask your questions in English.)"
	if c == thanks {
		return "You're welcome! Anything else I can help with?" + note
	}
	return greetingFor(tools, u) + note
}
