// Package itemkey encodes the namespace of a long-term memory record
// ([github.com/agentgraph/agentgraph/memory.Record]) as one string that the
// stores index and compare.
//
// Each label is followed by Sep (0x1f, the ASCII unit separator). Labels
// hold no byte below 0x20 (memory's validation makes sure), so comparing
// two encoded namespaces byte by byte orders them label by label, a
// namespace before every namespace it is a prefix of; and a namespace has a
// prefix p exactly when its encoding starts with p's.
package itemkey

import "strings"

// Sep ends every label of an encoded namespace.
const Sep = "\x1f"

// Encode returns the encoding of labels; "" for none.
func Encode(labels []string) string {
	n := len(labels)
	for _, l := range labels {
		n += len(l)
	}
	var b strings.Builder
	b.Grow(n)
	for _, l := range labels {
		b.WriteString(l)
		b.WriteString(Sep)
	}
	return b.String()
}

// Decode returns the labels of an encoded namespace.
func Decode(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(strings.TrimSuffix(s, Sep), Sep)
}

// HasSuffix reports whether the namespace encoded as s ends with the labels
// encoded as suffix.
func HasSuffix(s, suffix string) bool {
	return s == suffix || strings.HasSuffix(s, Sep+suffix)
}

// Truncate returns the encoding of the first depth labels of the namespace
// encoded as s (all of them when depth <= 0 or s has no more).
func Truncate(s string, depth int) string {
	if depth <= 0 {
		return s
	}
	end := 0
	for range depth {
		i := strings.Index(s[end:], Sep)
		if i < 0 {
			return s
		}
		end += i + 1
	}
	return s[:end]
}
