package offline

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// The scanners that replaced regular expressions on the rules' hot path
// must cut text exactly as the expressions did; these are the expressions
// and the cut as they were, for reference.
var wordRE = regexp.MustCompile(`[a-z0-9$%]+(?:'[a-z]+)?`)

func regexpTokens(s string) []string { return wordRE.FindAllString(strings.ToLower(s), -1) }

func regexpSentences(text string) []sentence {
	var out []sentence
	var where string
	var para []string
	flush := func() {
		if len(para) == 0 {
			return
		}
		joined := strings.Join(para, " ")
		para = nil
		for _, s := range strings.Split(sentenceEndRE.ReplaceAllString(joined, "$1\x00"), "\x00") {
			if s = strings.TrimSpace(s); len(s) > 2 {
				out = append(out, sentence{text: s, where: where})
			}
		}
	}
	for _, line := range strings.Split(text, "\n") {
		t := strings.TrimSpace(line)
		switch {
		case t == "":
			flush()
		case quoteLineRE.MatchString(t):
			flush()
			m := quoteLineRE.FindStringSubmatch(t)
			if text, err := strconv.Unquote(m[1]); err == nil {
				out = append(out, sentence{text: text, where: m[2], quoted: true})
			}
		case strings.HasPrefix(t, "Here is what I found:"):
			flush()
		case headingRE.MatchString(t):
			flush()
			where = headingRE.FindStringSubmatch(t)[1]
		case passageLabelRE.MatchString(t):
			flush()
			where = passageLabelRE.FindStringSubmatch(t)[1]
		case listLabelRE.MatchString(t) && !strings.HasSuffix(t, "."):
			flush()
			where = listLabelRE.FindStringSubmatch(t)[1]
		case urlRE.MatchString(t):
			flush()
			where += " <" + t + ">"
		case strings.HasSuffix(t, ":") && strings.Contains(t, "passages for") || strings.HasPrefix(t, "Web results for"):
		default:
			para = append(para, t)
		}
	}
	flush()
	return out
}

var scanSamples = []string{
	"", "Hello!", "What is 15% of 240?", "I don't know; it's $49/month... OK?", "Don't'x 9'a 'quoted' x'", "ÀÉ café naïve Straße K",
	"rock'n'roll o'clock 1990's v1.2.3 a-b_c", "tab\there.\tnext!\fform?\r\nend", "NUL\x00in. the\x00middle", "a.. b?! c", "...",
	"Search results for \"team plan\": 2 passages for team plan:\n[1] pricing § Team (score 0.82)\nThe Team plan costs $49 per user per month. It includes SSO.\n\n[2] faq § Billing\nInvoices go out monthly! Refunds take 5 days.",
	"Here is what I found:\n- \"The Team plan costs $49.\" (pricing § Team)\n- \"Broken \\q quote\" (x)\n- \"ok\" (y)\n# Heading one\nText under it. More text.\n1. First item\n2. Second item.\nhttps://example.com/page\nWeb results for x\nplain line: with colon\nAnother para.",
	"## Plans\n\nStarter is free.  Team is $49.   Business is $99.\n[12] doc § Sec\n[x] not a label\n#nospace\n12 apples. 3 pears\n",
}

func TestTokensCutAsTheWordPattern(t *testing.T) {
	for _, s := range scanSamples {
		if got, want := tokens(s), regexpTokens(s); !slices.Equal(got, want) {
			t.Errorf("tokens(%q) = %q, want %q", s, got, want)
		}
	}
}

func TestSentencesCutAsTheRegexpCut(t *testing.T) {
	for _, s := range scanSamples {
		if got, want := cutSentences(s), regexpSentences(s); !sameSentences(got, want) {
			t.Errorf("cutSentences(%q) =\n%+v\nwant\n%+v", s, got, want)
		}
		if got, want := sentencesOf(s), regexpSentences(s); !sameSentences(got, want) {
			t.Errorf("sentencesOf(%q) (memo) =\n%+v\nwant\n%+v", s, got, want)
		}
	}
}

func FuzzTokens(f *testing.F) {
	for _, s := range scanSamples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := tokens(s), regexpTokens(s); !slices.Equal(got, want) {
			t.Errorf("tokens(%q) = %q, want %q", s, got, want)
		}
	})
}

func FuzzSentences(f *testing.F) {
	for _, s := range scanSamples {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := cutSentences(s), regexpSentences(s); !sameSentences(got, want) {
			t.Errorf("cutSentences(%q) =\n%+v\nwant\n%+v", s, got, want)
		}
	})
}

func TestMemoComputesOnceAndStaysBounded(t *testing.T) {
	calls := 0
	f := func(s string) int { calls++; return len(s) }
	c := memo[int]{maxEntries: 4, maxBytes: 64}
	for range 3 {
		if got := c.get("abc", f); got != 3 {
			t.Fatalf("get(abc) = %d, want 3", got)
		}
	}
	if calls != 1 {
		t.Errorf("f ran %d times for one key, want 1", calls)
	}
	for i := range 100 {
		c.get(fmt.Sprintf("key-%d", i), f)
		if len(c.m) > 4 || c.bytes > 64 {
			t.Fatalf("after %d keys the memo holds %d keys, %d bytes; want at most 4 and 64", i+1, len(c.m), c.bytes)
		}
	}
	long := strings.Repeat("x", 17) // over a quarter of maxBytes: computed, not kept
	before := calls
	c.get(long, f)
	c.get(long, f)
	if calls-before != 2 {
		t.Errorf("a key over a quarter of maxBytes ran f %d times in two gets, want 2 (not kept)", calls-before)
	}
	if _, kept := c.m[long]; kept {
		t.Error("a key over a quarter of maxBytes was kept")
	}
}

func TestMemoConcurrent(t *testing.T) {
	c := memo[string]{maxEntries: 8, maxBytes: 1 << 10}
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 200 {
				k := strconv.Itoa((g + i) % 20)
				if got := c.get(k, strings.ToUpper); got != k {
					t.Errorf("get(%q) = %q", k, got)
					return
				}
			}
		})
	}
	wg.Wait()
}

// A user message is read once per text; readAbout gives what readMessage
// gives, and later reads (from the memo) do not see changes made to an
// earlier result.
func TestReadAboutFromMemoIsUnshared(t *testing.T) {
	msg := "Hi, I'm Sofia, a data engineer at Acme. I'm interested in Go and Rust. I prefer short answers."
	a := readAbout([]string{msg})
	want := readMessage(msg)
	if a.name != want.name || a.role != want.role || a.org != want.org || !slices.Equal(a.interests, want.interests) {
		t.Fatalf("readAbout = %+v, want %+v", a, want)
	}
	if a.name != "Sofia" || len(a.interests) == 0 {
		t.Fatalf("readAbout(%q) = %+v: want the name Sofia and interests", msg, a)
	}
	a.interests[0] = "changed"
	if a.prefs != nil {
		a.prefs["general"] = "changed"
	}
	b := readAbout([]string{msg})
	if !slices.Equal(b.interests, want.interests) || b.prefs["general"] == "changed" {
		t.Errorf("a second readAbout = %+v: it sees the first caller's changes", b)
	}
}

func TestUnquoteJSONAsUnmarshal(t *testing.T) {
	for _, raw := range []string{`""`, `"plain"`, `"line\nbreak \"q\" \\ \/ \b\f\r\t"`, `"\u00e9\u4e2d\ud83d\ude00"`, `"lone \ud83d x"`,
		`"\ud83d\u0041"`, `"\udc00\ud83d"`, "\"caf\xc3\xa9 \xff bad\"", `"é ✓"`, `"\u0000"`, `"ends with \ud83d"`} {
		checkUnquote(t, []byte(raw))
	}
}

func FuzzUnquoteJSON(f *testing.F) {
	for _, s := range scanSamples {
		f.Add([]byte(strconv.Quote(s)))
	}
	f.Add([]byte(`"\ud83d\ude00 \u00e9"`))
	f.Fuzz(func(t *testing.T, raw []byte) { checkUnquote(t, raw) })
}

// checkUnquote compares unquoteJSON with json.Unmarshal on raw when raw is
// a valid JSON string, without the white space around it: what the
// request's decoder gives the handler.
func checkUnquote(t *testing.T, raw []byte) {
	t.Helper()
	raw = bytes.Trim(raw, " \t\r\n")
	var want string
	if !json.Valid(raw) || json.Unmarshal(raw, &want) != nil {
		return
	}
	got, ok := unquoteJSON(raw)
	if !ok || got != want {
		t.Errorf("unquoteJSON(%q) = %q, %v; want %q, true", raw, got, ok, want)
	}
}

// sameSentences reports whether got holds want's sentences (text, where,
// quoted), each with its words cut as tokens cuts them.
func sameSentences(got, want []sentence) bool {
	return slices.EqualFunc(got, want, func(g, w sentence) bool {
		return g.text == w.text && g.where == w.where && g.quoted == w.quoted &&
			slices.Equal(g.words, tokens(w.text+" "+w.where)) && slices.Equal(g.toks, tokens(w.text)) &&
			slices.Equal(g.heading, tokens(w.where))
	})
}
