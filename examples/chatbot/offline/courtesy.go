package offline

import (
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
// the Team plan?"): the rules answer the question, and a greeting's words
// are no part of a search.
func withoutGreeting(q string) string {
	if w := tokens(q); isGreeting(w) || isThanks(w) || foreignCourtesy(q) != noCourtesy {
		return q // "Ciao! Come stai?": a greeting all through
	}
	for range 3 {
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

// courtesyReply answers a greeting or thanks in another language: in
// English, saying so, since English is what the demo model reads.
func courtesyReply(c courtesy, tools []tool, u about) string {
	const note = " (As the offline demo model I read and answer English only, so please ask your questions in English.)"
	if c == thanks {
		return "You're welcome! Anything else I can help with?" + note
	}
	return greetingFor(tools, u) + note
}
