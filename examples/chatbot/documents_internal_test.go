package chatbot

import (
	"strconv"
	"testing"
)

// TestDocumentConversationSetIsBounded: the set of conversations that may
// hold documents, which grows with every conversation a client uploads to
// (and deletes from), stops at maxTrackedConversations; past it every
// conversation may hold documents, so none is missed.
func TestDocumentConversationSetIsBounded(t *testing.T) {
	d := &documents{convs: map[string]bool{}}
	d.add("first")
	if !d.has("first") || d.has("other") {
		t.Fatalf("has(first) %v, has(other) %v; want true, false", d.has("first"), d.has("other"))
	}
	for i := range maxTrackedConversations + 10 {
		d.add("c" + strconv.Itoa(i))
	}
	if n := len(d.convs); n > maxTrackedConversations {
		t.Fatalf("%d conversations tracked; want at most %d", n, maxTrackedConversations)
	}
	for _, id := range []string{"first", "c0", "c" + strconv.Itoa(maxTrackedConversations+5), "never-seen"} {
		if !d.has(id) {
			t.Errorf("has(%q) false past the bound; want true (the store decides)", id)
		}
	}
}
