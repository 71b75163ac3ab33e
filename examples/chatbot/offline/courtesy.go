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

// foreignCourtesy returns whether the whole message is a greeting or
// thanks in a language other than English ("hola", "merci beaucoup",
// "¡Buenos días!", "danke schön"), or two of them ("hola, gracias").
// English ones are isGreeting's and isThanks'.
func foreignCourtesy(q string) courtesy {
	q = strings.TrimSpace(q)
	if len(q) == 0 || len(q) > 60 {
		return noCourtesy // checked first: most messages are longer
	}
	s := plainAccents.Replace(strings.ToLower(q))
	if len(s) > 40 {
		return noCourtesy
	}
	words := strings.FieldsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && r != '\'' })
	if len(words) == 0 || len(words) > 4 {
		return noCourtesy
	}
	if c, ok := foreignCourtesies[strings.Join(words, " ")]; ok {
		return c
	}
	// A greeting and thanks together ("hola, gracias"): thanks wins.
	if len(words) == 2 {
		a, b := foreignCourtesies[words[0]], foreignCourtesies[words[1]]
		if a != noCourtesy && b != noCourtesy {
			return max(a, b)
		}
	}
	return noCourtesy
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
