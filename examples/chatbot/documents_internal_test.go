package chatbot

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/document"
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

// listingStore counts the calls that list a document store's
// conversations or a conversation's documents.
type listingStore struct {
	document.Store
	conversations, lists int
}

func (s *listingStore) Conversations(ctx context.Context) ([]string, error) {
	s.conversations++
	return s.Store.Conversations(ctx)
}

func (s *listingStore) List(ctx context.Context, conversationID string) ([]document.Document, error) {
	s.lists++
	return s.Store.List(ctx, conversationID)
}

// TestDocumentQuotaDoesNotList: the quota check of an upload counts the
// principal's documents in the store without listing the store's
// conversations or their documents (which cost as much as every
// principal's conversations), and still refuses an upload beyond either
// bound.
func TestDocumentQuotaDoesNotList(t *testing.T) {
	ctx := t.Context()
	st := &listingStore{Store: document.NewMemoryStore()}
	at := time.Unix(1_000_000, 0)
	put := func(owner, conv string, i int, size int) {
		t.Helper()
		doc := document.Document{ID: fmt.Sprintf("%s-%s-%d", owner, conv, i), ConversationID: scoped(owner, conv), Owner: owner,
			Name: "a.txt", ContentType: "text/plain", Size: int64(size), Status: document.StatusReady, Created: at, Updated: at}
		if err := st.Create(ctx, doc, make([]byte, size), 0); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 200 {
		put("bob", fmt.Sprint("c", i), i, 10)
	}
	put("alice", "c1", 0, 100)
	put("alice", "c2", 1, 100)
	d := &documents{store: st, maxPerPrincipal: 3, maxBytesPerPrincipal: 1000}
	if err := d.checkQuota(ctx, "alice", 100); err != nil {
		t.Errorf("alice's third document: %v, want it within her quota", err)
	}
	var qe *quotaError
	if err := d.checkQuota(ctx, "alice", 801); !errors.As(err, &qe) || qe.field != "MaxBytesPerPrincipal" {
		t.Errorf("alice's third document of 801 bytes: %v, want the MaxBytesPerPrincipal quota error", err)
	}
	put("alice", "c3", 2, 100)
	if err := d.checkQuota(ctx, "alice", 1); !errors.As(err, &qe) || qe.field != "MaxPerPrincipal" {
		t.Errorf("alice's fourth document: %v, want the MaxPerPrincipal quota error", err)
	}
	if st.conversations != 0 || st.lists != 0 {
		t.Errorf("three quota checks listed the conversations %d times and documents %d times; want neither", st.conversations, st.lists)
	}
}
