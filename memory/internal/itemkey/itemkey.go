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

// End returns the least encoding above every namespace under the encoded
// prefix (not ""): prefix with its last byte, Sep, made 0x20. The
// namespaces under prefix are those from prefix up to End(prefix),
// excluded.
func End(prefix string) string {
	return prefix[:len(prefix)-1] + "\x20"
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

// List gathers the namespaces a namespace query lists, from encoded
// namespaces given in order ([Encode]'s order): those that end with its
// suffix, cut to its depth, each once, past its offset, up to its limit.
// The stores give it the live namespaces under the query's prefix.
type List struct {
	suffix      string
	depth, skip int
	limit       int
	last        string
	have        bool
	namespaces  [][]string
}

// NewList returns a List of the namespaces that end with the labels
// suffix, cut to their first maxDepth labels (all when maxDepth <= 0),
// skipping the first offset of them and holding at most limit (any number
// when limit <= 0).
func NewList(suffix []string, maxDepth, offset, limit int) *List {
	return &List{suffix: Encode(suffix), depth: maxDepth, skip: offset, limit: limit}
}

// Add considers the encoded namespace ns, which sorts at or after the one
// added before, and reports whether the list is full: then the caller stops.
func (l *List) Add(ns string) (full bool) {
	if !HasSuffix(ns, l.suffix) {
		return false
	}
	ns = Truncate(ns, l.depth)
	if l.have && ns == l.last {
		return false
	}
	l.last, l.have = ns, true
	if l.skip > 0 {
		l.skip--
		return false
	}
	l.namespaces = append(l.namespaces, Decode(ns))
	return len(l.namespaces) == l.limit
}

// Namespaces returns the namespaces listed, as labels.
func (l *List) Namespaces() [][]string { return l.namespaces }
