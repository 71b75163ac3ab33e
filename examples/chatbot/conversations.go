package chatbot

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Bounds of the conversation index: the conversations listed per
// principal (the least recently used is forgotten first) and the
// principals with a list (the one idle longest is forgotten first).
const (
	maxListedConversations = 200
	maxListedPrincipals    = 10000
	conversationTitleLen   = 80
)

// ConversationSummary is one entry of GET /api/v1/conversations: a
// conversation of the caller's principal, titled by its first message.
type ConversationSummary struct {
	ID      string    `json:"id"`
	Title   string    `json:"title"`
	Updated time.Time `json:"updated"`
}

// conversationIndex lists each principal's conversations, most recently
// used first, for the page's conversation list. It is kept in memory and
// bounded (maxListedConversations per principal, maxListedPrincipals in
// all); the conversations themselves, and their history, are in the
// conversation store.
type conversationIndex struct {
	now func() time.Time

	mu   sync.Mutex
	byOf map[string][]ConversationSummary // principal → most recent first
	used map[string]time.Time             // principal → last use
}

// touch records that principal's conversation id had a turn with
// message; the first message of a conversation becomes its title.
func (x *conversationIndex) touch(principal, id, message string) {
	now := x.now()
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.byOf == nil {
		x.byOf, x.used = map[string][]ConversationSummary{}, map[string]time.Time{}
	}
	list, known := x.byOf[principal]
	if !known && len(x.byOf) >= maxListedPrincipals {
		var idle string
		for p, t := range x.used {
			if idle == "" || t.Before(x.used[idle]) {
				idle = p
			}
		}
		delete(x.byOf, idle)
		delete(x.used, idle)
	}
	entry := ConversationSummary{ID: id, Title: title(message), Updated: now}
	if i := slices.IndexFunc(list, func(c ConversationSummary) bool { return c.ID == id }); i >= 0 {
		entry.Title = list[i].Title
		list = slices.Delete(list, i, i+1)
	}
	list = slices.Insert(list, 0, entry)
	if len(list) > maxListedConversations {
		list = list[:maxListedConversations]
	}
	x.byOf[principal] = list
	x.used[principal] = now
}

// list returns principal's conversations, most recently used first.
func (x *conversationIndex) list(principal string) []ConversationSummary {
	x.mu.Lock()
	defer x.mu.Unlock()
	return slices.Clone(x.byOf[principal])
}

// title is message on one line, cut to conversationTitleLen bytes.
func title(message string) string {
	return clip(strings.Join(strings.Fields(message), " "), conversationTitleLen)
}

// Conversations lists the conversations of ctx's principal
// ([WithPrincipal]) that had a turn since the bot started, most recently
// used first, at most 200. Another principal's conversations are not
// listed.
func (b *Bot) Conversations(ctx context.Context) []ConversationSummary {
	list := b.convIndex.list(PrincipalFromContext(ctx))
	if list == nil {
		list = []ConversationSummary{}
	}
	return list
}

// serveConversations serves GET /api/v1/conversations.
func (b *Bot) serveConversations(w http.ResponseWriter, r *http.Request) {
	writeJSON(w, http.StatusOK, map[string]any{"conversations": b.Conversations(r.Context())})
}
