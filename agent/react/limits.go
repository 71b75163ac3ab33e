package react

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/internal/utf8clip"
	"github.com/agentgraph/agentgraph/operator"
)

// The bounds of the error result of a call of an unknown tool: the model
// wrote the name, so it is echoed clipped, and the result names a few of
// the agent's tools whose names are close to it rather than all of them.
const (
	// maxEchoedName is the longest prefix of the unknown name echoed.
	maxEchoedName = operator.MaxToolNameLen
	// maxCloseNames is the number of close names the result gives.
	maxCloseNames = 3
)

// unknownText returns the error result's text of a call of name, which is
// none of the agent's tools (names).
func unknownText(name string, names []string) string {
	var b strings.Builder
	b.WriteString("there is no tool named ")
	if len(name) > maxEchoedName {
		b.WriteString(strconv.Quote(utf8clip.Clip(name, maxEchoedName)))
		fmt.Fprintf(&b, " (cut from %d bytes)", len(name))
	} else {
		b.WriteString(strconv.Quote(name))
	}
	near := closeNames(utf8clip.Clip(name, maxEchoedName), names)
	if len(near) == 0 && len(names) <= maxCloseNames {
		near = names
	}
	switch {
	case len(near) == 0:
		fmt.Fprintf(&b, "; call one of the %d tools the request lists by its exact name", len(names))
	default:
		if len(near) < len(names) {
			b.WriteString("; the closest names are: ")
		} else {
			b.WriteString("; the tools are: ")
		}
		for i, n := range near {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(n)
		}
	}
	return b.String()
}

// closeNames returns up to maxCloseNames of names close to name, closest
// first (ties in the order of names). Two names are close when most of
// their pairs of adjacent bytes (compared without case) are shared: the
// cost is linear in the bytes of the names, whatever their number.
func closeNames(name string, names []string) []string {
	var set bigramSet
	total := set.add(name)
	if total == 0 {
		return nil
	}
	type scored struct {
		name  string
		score float64
	}
	var best [maxCloseNames]scored
	found := 0
	for _, n := range names {
		shared, count := set.shared(n)
		if count == 0 {
			continue
		}
		score := 2 * float64(shared) / float64(total+count)
		if score < 0.5 {
			continue
		}
		// Insert in place, keeping best sorted by score.
		i := found
		if i == maxCloseNames {
			if score <= best[i-1].score {
				continue
			}
			i--
		} else {
			found++
		}
		for i > 0 && best[i-1].score < score {
			best[i] = best[i-1]
			i--
		}
		best[i] = scored{n, score}
	}
	out := make([]string, found)
	for i := range out {
		out[i] = best[i].name
	}
	return out
}

// bigramSet is a set of pairs of adjacent bytes, hashed to 4096 bits.
type bigramSet [64]uint64

func bigram(a, b byte) uint {
	return (uint(lower(a))*31 + uint(lower(b))) & 4095
}

func lower(c byte) byte {
	if c >= 'A' && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}

// add adds the bigrams of s and returns how many s has.
func (s *bigramSet) add(str string) int {
	for i := 1; i < len(str); i++ {
		h := bigram(str[i-1], str[i])
		s[h/64] |= 1 << (h % 64)
	}
	return max(len(str)-1, 0)
}

// shared returns how many bigrams of str (up to maxEchoedName bytes of it)
// are in the set, and how many it has.
func (s *bigramSet) shared(str string) (shared, count int) {
	if len(str) > maxEchoedName {
		str = str[:maxEchoedName]
	}
	for i := 1; i < len(str); i++ {
		h := bigram(str[i-1], str[i])
		if s[h/64]&(1<<(h%64)) != 0 {
			shared++
		}
	}
	return shared, max(len(str)-1, 0)
}

// resultSize returns the bytes of res that go to the model: text (its
// parts' text and URLs, and its Structured JSON) and binary data (its
// parts' Data).
func resultSize(res *model.ToolResult) (text, data int) {
	text = len(res.Structured)
	for i := range res.Content {
		p := &res.Content[i]
		text += len(p.Text) + len(p.URL)
		data += len(p.Data)
	}
	return text, data
}

// clipResult cuts res to at most limit bytes of text and binLimit bytes of
// binary data (see resultSize) and adds a text part saying what was cut.
// Parts are kept in order while they fit: a text part that does not is
// cut, and any other part that does not is left out; after that, no more
// text (or, for binary data, no more binary data) is kept. Structured JSON
// that does not fit is left out (cut JSON would not parse); when no text is
// kept, its cut text takes the place of the text the model would have read.
// The result's parts are replaced, not changed in place: the tool may keep
// them.
//
//go:noinline
func clipResult(res *model.ToolResult, limit, binLimit int) {
	size, binSize := resultSize(res)
	kept, binKept := 0, 0             // the bytes kept
	textFull, binFull := false, false // a part did not fit: keep no more
	out := make([]model.Part, 0, len(res.Content)+1)
	text := false
	dropped := 0 // binary parts left out
	for _, p := range res.Content {
		n, bin := len(p.Text)+len(p.URL), len(p.Data)
		fits := (n == 0 || !textFull && kept+n <= limit)
		binFits := (bin == 0 || !binFull && binKept+bin <= binLimit)
		if fits && binFits {
			out = append(out, p)
			kept += n
			binKept += bin
			text = text || p.Kind == model.PartText && p.Text != ""
			continue
		}
		if !binFits {
			binFull = true
			dropped++
			continue
		}
		if p.Kind == model.PartText && !textFull && kept < limit {
			p.Text = utf8clip.Clip(p.Text, limit-kept)
			out = append(out, p)
			text = text || p.Text != ""
			kept += len(p.Text)
		}
		textFull = true
	}
	if textFull || kept+len(res.Structured) > limit {
		if !text && kept < limit {
			t := utf8clip.Clip(string(res.Structured), limit-kept)
			out = append(out, model.TextPart(t))
			kept += len(t)
		}
		res.Structured = nil
	} else {
		kept += len(res.Structured)
	}
	var note strings.Builder
	note.WriteString("[the result was cut: ")
	if kept < size {
		fmt.Fprintf(&note, "its text was %d bytes and the agent passes at most %d bytes of a tool result's text to the model (react.Config.MaxResultBytes); %d bytes were left out", size, limit, size-kept)
	}
	if binKept < binSize {
		if kept < size {
			note.WriteString("; ")
		}
		fmt.Fprintf(&note, "%d binary parts of %d bytes were left out: the agent passes at most %d bytes of a tool result's binary data to the model (react.Config.MaxResultBinaryBytes)", dropped, binSize-binKept, binLimit)
	}
	note.WriteString("]")
	out = append(out, model.TextPart(note.String()))
	res.Content = out
}
