package chatbot

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/memory"
)

// Bounds of the conversation list: the conversations listed per
// principal (the least recently used is forgotten first).
const (
	maxListedConversations = 200
	conversationTitleLen   = 80
	// pruneSlack is how far past maxListedConversations a principal's
	// records may grow before the least recently used are forgotten:
	// pruning reads the whole list, so it runs once per pruneSlack new
	// conversations rather than at every one.
	pruneSlack = 50
	// probeEvery is how many new conversations of a principal an instance
	// lists between two checks of whether the principal's records need
	// pruning (one query each): a check finding more than
	// maxListedConversations + pruneSlack - probeEvery records prunes, so
	// that the bound holds in between.
	probeEvery = 10
	// maxProbeCounts bounds the principals whose new conversations are
	// counted; when it is reached the counts start over (a principal not
	// counted is checked at its next new conversation).
	maxProbeCounts = 4096
)

// ConversationSummary is one entry of GET /api/v1/conversations: a
// conversation of the caller's principal, titled by its first message.
type ConversationSummary struct {
	ID      string    `json:"id"`
	Title   string    `json:"title"`
	Updated time.Time `json:"updated"`
}

// conversationIndex lists each principal's conversations, most recently
// used first, for the page's conversation list. It keeps one record per
// conversation in the bot's memory.Items (the SQLite or PostgreSQL store
// beside the conversations, or memory), under the namespace
// ["chatbot", "conversations", principal], so the list survives a restart
// and every instance sharing the store sees it; at most
// maxListedConversations per principal are kept.
//
// When the store is full (memory.ErrFull: the in-memory store of a bot
// without DataDir or Postgres), a principal whose new conversation found
// it full while it holds more than its fair share (the records over the
// principals holding any) forgets its own least recently used records
// beyond that share; for a principal within its share, the principals
// over theirs forget their least recently used records beyond it, and
// only when none is over its share do the least recently used records of
// all principals go, evictBatch at a time (see makeRoom).
type conversationIndex struct {
	items      memory.Items
	log        *zap.Logger
	evictBatch int           // zero means defaultEvictBatch
	forgetWait time.Duration // zero means defaultForgetTimeout

	// room serialises making room in the full store; share is the fair
	// share the last scan of the full store found (zero: none yet, or
	// others' records were forgotten since), and freedOwn how many records
	// principals over it forgot since.
	room     sync.Mutex
	share    int
	freedOwn int

	// forgotten, when set, is told of each record the index forgets to
	// make room or to prune (ns, the principal's namespace, and the
	// conversation's id): it deletes the conversation's messages, which
	// would otherwise stay in the store unlisted and uncounted (see
	// Bot.forgetWithList).
	forgotten func(ctx context.Context, ns []string, id string)
	// exclusive, when set, runs forget, the forgetting of conversation id
	// of ns (its record, and its messages through forgotten), unless a
	// turn of the conversation runs or waits to run on this bot, and
	// reports whether it ran forget. No turn of the conversation starts
	// while forget runs (a turn is tracked before it loads its
	// conversation, and waits): a turn either keeps its conversation,
	// listed, or finds it gone and counts it as new. forget takes no lock
	// (touch runs under a conversation lock); it runs the store's
	// statements that delete one record and its conversation, each bounded
	// by forgetTimeout.
	exclusive func(ns []string, id string, forget func()) bool

	mu sync.Mutex
	// unprobed counts, by namespace key, the new conversations listed
	// since the namespace was last checked for pruning (see probeEvery),
	// for at most maxProbeCounts namespaces. A namespace not in it is
	// checked at its next new conversation.
	unprobed map[string]int
}

// defaultEvictBatch is how many conversation list records a full store
// forgets at once: one scan of the records frees room for that many.
const defaultEvictBatch = 1000

// listedConversation is a conversation's record in the index.
type listedConversation struct {
	Title string `json:"title"`
}

// principalOf is the principal whose namespace (see namespace) is ns.
func principalOf(ns []string) string {
	return strings.ReplaceAll(ns[len(ns)-1], "%2E", ".")
}

// namespace is principal's namespace in the index. Namespace labels may
// not hold dots, which principals may.
func (x *conversationIndex) namespace(principal string) []string {
	return []string{"chatbot", "conversations", strings.ReplaceAll(principal, ".", "%2E")}
}

// touch records that principal's conversation id had a turn with
// message; the first message of a conversation becomes its title. A
// conversation without history (started says so: the turn found neither
// messages nor a summary) is titled by message without reading its
// record, one statement less per new conversation; one with history keeps
// the title it has. So a conversation whose first turns failed before
// storing anything is titled by the first turn whose exchange is stored,
// the question its history starts with. A failure to list it is logged
// and returned: a turn whose exchange is stored goes on without it, a new
// conversation's turn fails (see reserve).
func (x *conversationIndex) touch(ctx context.Context, principal, id, message string, started bool) error {
	ns := x.namespace(principal)
	entry := listedConversation{Title: title(message)}
	known := false
	if started {
		old, err := x.items.Get(ctx, ns, id, false)
		known = err == nil
		if known {
			var prev listedConversation
			if json.Unmarshal(old.Value, &prev) == nil && prev.Title != "" {
				entry.Title = prev.Title
			}
		} else if !errors.Is(err, memory.ErrNotFound) {
			x.log.Warn("chatbot: reading the conversation list failed", zap.String("conversation_id", id), zap.Error(err))
		}
	}
	value, _ := json.Marshal(entry)
	rec := memory.Record{Namespace: ns, Key: id, Value: value}
	err := x.items.Put(ctx, rec)
	if errors.Is(err, memory.ErrFull) {
		err = x.putFull(ctx, rec)
	}
	if err != nil {
		x.log.Warn("chatbot: adding to the conversation list failed", zap.String("conversation_id", id), zap.Error(err))
		return err
	}
	if !known && x.probeDue(ns) {
		x.prune(ctx, ns)
	}
	return nil
}

// probeDue counts a new conversation in ns and reports whether ns is due a
// check for pruning: at its first new conversation since the counts
// started, then once per probeEvery.
func (x *conversationIndex) probeDue(ns []string) bool {
	key := strings.Join(ns, "\x00")
	x.mu.Lock()
	defer x.mu.Unlock()
	n, counted := x.unprobed[key]
	if counted && n+1 < probeEvery {
		x.unprobed[key] = n + 1
		return false
	}
	if x.unprobed == nil || (!counted && len(x.unprobed) >= maxProbeCounts) {
		x.unprobed = map[string]int{}
	}
	x.unprobed[key] = 0
	return true
}

// prune forgets the least recently used conversations of ns beyond
// maxListedConversations once ns holds more than maxListedConversations +
// pruneSlack - probeEvery records (list shows only the first
// maxListedConversations). It is called once per probeEvery new
// conversations of ns (see probeDue), so that ns never holds more than
// maxListedConversations + pruneSlack records (with several instances
// sharing the store, probeEvery more per further instance).
func (x *conversationIndex) prune(ctx context.Context, ns []string) {
	// Whether ns has too many records does not depend on the order: probe
	// past the bound before reading them all, so that a check costs one
	// small query and the whole list is read about once per pruneSlack
	// new conversations.
	if more, err := x.items.Search(ctx, memory.ItemQuery{Prefix: ns, Limit: 1, Offset: maxListedConversations + pruneSlack - probeEvery}); err != nil || len(more) == 0 {
		return
	}
	recs, err := x.records(ctx, ns)
	if err != nil || len(recs) <= maxListedConversations {
		return
	}
	for _, r := range recs[maxListedConversations:] {
		// A record used since it was read (a turn began on it, here or
		// on another instance) is kept: it is recently used now.
		if _, err := x.drop(ctx, r, true); err != nil {
			x.log.Warn("chatbot: pruning the conversation list failed", zap.Error(err))
			return
		}
	}
}

// putFull puts rec, which the full store refused, after making room
// (see makeRoom), round after round: a slot a round frees may be taken by
// another turn's Put before rec's, so it tries again until rec is stored,
// a round frees nothing (memory.ErrFull), or ctx ends.
func (x *conversationIndex) putFull(ctx context.Context, rec memory.Record) error {
	x.room.Lock()
	defer x.room.Unlock()
	for {
		// Another turn may have made room meanwhile.
		if err := x.items.Put(ctx, rec); !errors.Is(err, memory.ErrFull) {
			return err
		}
		n, err := x.makeRoom(ctx, rec.Namespace)
		if err != nil {
			return err
		}
		if n == 0 {
			return memory.ErrFull
		}
	}
}

// makeRoom forgets records of the full store for a new conversation of
// ns's principal and returns how many it forgot. When that principal holds
// more than its fair share of the store (the records listed over the
// principals holding any), it forgets its own least recently used records
// beyond that share, up to evictBatch. Otherwise the principals holding
// more than their share forget their least recently used records beyond
// it, the least recently used of those first, up to evictBatch; only when
// no principal holds more than its share do the least recently used
// records of every principal go, evictBatch of them. So a principal
// filling the store makes room from its own list, and one holding no more
// than its share keeps its history while others' excess, then others'
// older records, make room.
//
// The share is found by a scan of the whole store, which also counts each
// principal's records and finds everyone's least recently used records.
// It is reused while principals over it forget their own records, until
// evictBatch have been forgotten so, and found again by a new scan before
// it decides that a principal holds no more than its share: so a scan,
// like the forgetting of others' records, happens about once per
// evictBatch new conversations.
func (x *conversationIndex) makeRoom(ctx context.Context, ns []string) (int, error) {
	batch := cmp.Or(x.evictBatch, defaultEvictBatch)
	if x.share > 0 && x.freedOwn < batch {
		if n := x.evictOwn(ctx, ns, x.share, batch); n > 0 {
			x.freedOwn += n
			return n, nil
		}
	}
	s, err := x.scan(ctx, batch)
	if err != nil {
		return 0, err
	}
	x.share, x.freedOwn = s.share, 0
	if n := x.evictOwn(ctx, ns, s.share, batch); n > 0 {
		x.freedOwn += n
		return n, nil
	}
	// The others' records change now: the next full store scans again.
	x.share = 0
	if n := x.evictOver(ctx, s, batch); n > 0 {
		return n, nil
	}
	return x.forget(ctx, s.oldest), nil
}

// evictOwn forgets the least recently used records of ns, the namespace
// of the principal whose new conversation found the store full, beyond
// its share, at most batch of them, and returns how many it forgot.
func (x *conversationIndex) evictOwn(ctx context.Context, ns []string, share, batch int) int {
	recs, err := x.records(ctx, ns)
	if err != nil || len(recs) <= share {
		return 0
	}
	n := 0
	for _, r := range recs[max(share, len(recs)-batch):] {
		dropped, err := x.drop(ctx, r, true)
		if err != nil {
			x.log.Warn("chatbot: making room in the full conversation list failed", zap.Error(err))
			break
		}
		if dropped {
			n++
		}
	}
	if n > 0 {
		x.log.Info("chatbot: the conversation list was full; forgot the least recently used entries of a principal over its share",
			zap.Int("forgotten", n), zap.Int("share", share))
	}
	return n
}

// evictOver forgets the records of the principals that s found holding
// more than s.share beyond their s.share most recently used, the least
// recently used first, at most batch of them, and returns how many it
// forgot.
func (x *conversationIndex) evictOver(ctx context.Context, s storeScan, batch int) int {
	prefix := []string{"chatbot", "conversations"}
	var excess []memory.Record
	for label, n := range s.counts {
		if n <= s.share {
			continue
		}
		recs, err := x.records(ctx, append(slices.Clip(prefix), label))
		if err != nil {
			x.log.Warn("chatbot: making room in the full conversation list failed", zap.Error(err))
			continue
		}
		if len(recs) > s.share {
			excess = append(excess, recs[s.share:]...)
		}
	}
	slices.SortFunc(excess, func(a, b memory.Record) int {
		return cmp.Or(a.Updated.Compare(b.Updated), slices.Compare(a.Namespace, b.Namespace), strings.Compare(a.Key, b.Key))
	})
	n := x.deleteUnchanged(ctx, excess[:min(len(excess), batch)])
	if n > 0 {
		x.log.Info("chatbot: the conversation list was full; forgot the least recently used entries of the principals over their share",
			zap.Int("forgotten", n), zap.Int("share", s.share))
	}
	return n
}

// storeScan is what scan found in the full store.
type storeScan struct {
	// oldest are the least recently used records of every principal,
	// oldest first.
	oldest []memory.Record
	// share is the fair share of a principal: the records over the
	// principals holding any (at least 1).
	share int
	// counts holds how many records each principal holds, by the last
	// label of its namespace (at most the store's records).
	counts map[string]int
}

// scan reads every principal's records: it counts them by principal and
// finds the batch least recently used and the fair share.
func (x *conversationIndex) scan(ctx context.Context, batch int) (storeScan, error) {
	prefix := []string{"chatbot", "conversations"}
	s := storeScan{counts: map[string]int{}}
	total := 0
	for offset := 0; ; offset += memory.MaxSearchLimit {
		recs, err := x.items.Search(ctx, memory.ItemQuery{Prefix: prefix, Limit: memory.MaxSearchLimit, Offset: offset})
		if err != nil {
			x.log.Warn("chatbot: making room in the full conversation list failed", zap.Error(err))
			return storeScan{}, err
		}
		for _, r := range recs {
			total++
			if len(r.Namespace) == len(prefix)+1 {
				s.counts[r.Namespace[len(prefix)]]++
			}
			if len(s.oldest) == batch && !r.Updated.Before(s.oldest[batch-1].Updated) {
				continue
			}
			i, _ := slices.BinarySearchFunc(s.oldest, r, func(a, b memory.Record) int { return a.Updated.Compare(b.Updated) })
			s.oldest = slices.Insert(s.oldest, i, r)
			if len(s.oldest) > batch {
				s.oldest = s.oldest[:batch]
			}
		}
		if len(recs) < memory.MaxSearchLimit {
			break
		}
	}
	s.share = max(1, total/max(1, len(s.counts)))
	return s, nil
}

// forget deletes recs, the least recently used records of every
// principal's list, and returns how many it deleted.
func (x *conversationIndex) forget(ctx context.Context, recs []memory.Record) int {
	n := x.deleteUnchanged(ctx, recs)
	if n > 0 {
		x.log.Info("chatbot: the conversation list was full; forgot the least recently used entries", zap.Int("forgotten", n))
	}
	return n
}

// deleteUnchanged deletes those of recs that nobody used since they were
// read (a turn may have touched one since: it is recently used now) and
// returns how many it deleted.
func (x *conversationIndex) deleteUnchanged(ctx context.Context, recs []memory.Record) int {
	n := 0
	for _, r := range recs {
		dropped, err := x.drop(ctx, r, true)
		if err != nil {
			x.log.Warn("chatbot: making room in the full conversation list failed", zap.Error(err))
			break
		}
		if dropped {
			n++
		}
	}
	return n
}

// defaultForgetTimeout bounds each step of forgetting a conversation:
// reading and deleting its entry, then deleting its messages. A turn of
// the conversation waits for them (see turnCancels.track).
const defaultForgetTimeout = 10 * time.Second

// forgetTimeout is how long each step of forgetting a conversation may
// take (see defaultForgetTimeout).
func (x *conversationIndex) forgetTimeout() time.Duration {
	return cmp.Or(x.forgetWait, defaultForgetTimeout)
}

// drop forgets r, a record of the list, and reports whether it did: it
// deletes r and tells x.forgotten, when set, which deletes the
// conversation's messages. With x.exclusive, a conversation a turn runs
// or waits for on this bot is kept, and no turn of it starts meanwhile.
// With unchanged, a record used since it was read (a turn touched it: it
// is recently used now) or gone is kept too; the check and the delete
// are one step under x.exclusive for the turns of this bot (touches run
// in turns), not for those of another instance sharing the store (see
// Bot.forgetWithList).
func (x *conversationIndex) drop(ctx context.Context, r memory.Record, unchanged bool) (bool, error) {
	var dropped bool
	var err error
	forget := func() {
		ctx, cancel := context.WithTimeout(ctx, x.forgetTimeout())
		defer cancel()
		if unchanged {
			var now memory.Record
			now, err = x.items.Get(ctx, r.Namespace, r.Key, false)
			if errors.Is(err, memory.ErrNotFound) || err == nil && !now.Updated.Equal(r.Updated) {
				err = nil
				return
			}
			if err != nil {
				return
			}
		}
		if err = x.items.Delete(ctx, r.Namespace, r.Key); err != nil {
			return
		}
		dropped = true
		if x.forgotten != nil {
			x.forgotten(ctx, r.Namespace, r.Key)
		}
	}
	if x.exclusive == nil {
		forget()
	} else {
		x.exclusive(r.Namespace, r.Key, forget)
	}
	return dropped, err
}

// records returns ns's records, most recently used first.
func (x *conversationIndex) records(ctx context.Context, ns []string) ([]memory.Record, error) {
	recs, err := x.items.Search(ctx, memory.ItemQuery{Prefix: ns, Limit: memory.MaxSearchLimit})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(recs, func(a, b memory.Record) int {
		return cmp.Or(b.Updated.Compare(a.Updated), strings.Compare(a.Key, b.Key))
	})
	return recs, nil
}

// list returns principal's conversations, most recently used first.
func (x *conversationIndex) list(ctx context.Context, principal string) ([]ConversationSummary, error) {
	recs, err := x.records(ctx, x.namespace(principal))
	if err != nil {
		return nil, err
	}
	out := make([]ConversationSummary, 0, min(len(recs), maxListedConversations))
	for _, r := range recs[:min(len(recs), maxListedConversations)] {
		var c listedConversation
		_ = json.Unmarshal(r.Value, &c)
		out = append(out, ConversationSummary{ID: r.Key, Title: c.Title, Updated: r.Updated})
	}
	return out, nil
}

// title is message on one line without control characters (a NUL, which
// no store keeps, would keep the conversation out of the list), cut to
// conversationTitleLen bytes.
func title(message string) string {
	printable := strings.Map(func(r rune) rune {
		if unicode.IsControl(r) && !unicode.IsSpace(r) {
			return -1
		}
		return r
	}, message)
	return clip(strings.Join(strings.Fields(printable), " "), conversationTitleLen)
}

// Conversations lists the conversations of ctx's principal
// ([WithPrincipal]) that had a turn, most recently used first, at most
// 200: from the conversation store, so the list survives a restart and is
// the same on every instance sharing Config.Postgres. Another principal's
// conversations are not listed.
func (b *Bot) Conversations(ctx context.Context) ([]ConversationSummary, error) {
	return b.convIndex.list(ctx, PrincipalFromContext(ctx))
}

// serveConversations serves GET /api/v1/conversations.
func (b *Bot) serveConversations(w http.ResponseWriter, r *http.Request) {
	list, err := b.Conversations(r.Context())
	if err != nil {
		b.writeError(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"conversations": list})
}

// atLimit reports whether principal keeps max conversations in its list
// and id is not one of them: a turn of id would start one more. It costs
// one small query while the principal is below max.
func (x *conversationIndex) atLimit(ctx context.Context, principal, id string, max int) (bool, error) {
	ns := x.namespace(principal)
	more, err := x.items.Search(ctx, memory.ItemQuery{Prefix: ns, Limit: 1, Offset: max - 1})
	if err != nil || len(more) == 0 {
		return false, err
	}
	_, err = x.items.Get(ctx, ns, id, false)
	switch {
	case err == nil:
		return false, nil
	case errors.Is(err, memory.ErrNotFound):
		return true, nil
	}
	return false, err
}

// remove deletes principal's conversation id from the list and reports
// whether it was listed.
func (x *conversationIndex) remove(ctx context.Context, principal, id string) (bool, error) {
	ns := x.namespace(principal)
	_, err := x.items.Get(ctx, ns, id, false)
	if errors.Is(err, memory.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return true, x.items.Delete(ctx, ns, id)
}

// admit refuses a turn of principal's conversation id that the bounds do
// not allow, with an error wrapping ErrConversationLimit: one more turn of
// a conversation that keeps Config.MaxConversationTurns, or a new
// conversation of a principal that keeps Config.MaxConversations. It runs
// before the turn's first event, so that the HTTP API answers 429. fresh
// reports a conversation with nothing stored, which the turn starts: the
// turn lists it with reserve, which counts the principal's conversations
// again under a lock.
func (b *Bot) admit(ctx context.Context, principal, id string) (fresh bool, err error) {
	st, err := b.convs.Store().Load(ctx, scoped(principal, id), 0)
	if err != nil {
		// Not knowing whether the conversation is new, the turn cannot
		// count it against Config.MaxConversations: it fails.
		return false, fmt.Errorf("chatbot: loading conversation %q: %w", id, cmp.Or(context.Cause(ctx), err))
	}
	// Each turn stores two messages: the question and the answer.
	if turns := st.Last / 2; turns >= int64(b.cfg.MaxConversationTurns) {
		return false, fmt.Errorf("%w: conversation %q keeps %d turns, the most a conversation may keep (Config.MaxConversationTurns); start a new conversation, or delete this one (DELETE /api/v1/chat/{conversation_id})",
			ErrConversationLimit, id, turns)
	}
	if st.Last > 0 || st.Summary.Text != "" {
		return false, nil // a conversation the principal keeps
	}
	return true, b.checkRoom(ctx, principal, id)
}

// checkRoom refuses principal's new conversation id, with an error
// wrapping ErrConversationLimit, when principal keeps
// Config.MaxConversations.
func (b *Bot) checkRoom(ctx context.Context, principal, id string) error {
	full, err := b.convIndex.atLimit(ctx, principal, id, b.cfg.MaxConversations)
	if err != nil {
		return fmt.Errorf("chatbot: reading the conversation list: %w", err)
	}
	if full {
		return fmt.Errorf("%w: you keep %d conversations, the most a principal may keep (Config.MaxConversations); delete one (DELETE /api/v1/chat/{conversation_id}) to start another",
			ErrConversationLimit, b.cfg.MaxConversations)
	}
	return nil
}

// reserve lists principal's new conversation id (titled by message),
// once checkRoom allowed it under a lock of principal's new
// conversations, which the same principal's other new conversations take
// too (across instances with Config.Postgres, whose locks are shared):
// the count and the listing are one step, so that new conversations
// started at once do not together pass Config.MaxConversations. The
// caller holds the conversation's lock.
func (b *Bot) reserve(ctx context.Context, principal, id, message string) error {
	if b.lockWaiting != nil {
		b.lockWaiting(id)
	}
	unlock, err := b.convs.Lock(ctx, newConversationsLock(principal))
	if err != nil {
		return cmp.Or(context.Cause(ctx), err)
	}
	defer unlock()
	if err := b.checkRoom(ctx, principal, id); err != nil {
		return err
	}
	if b.roomChecked != nil {
		b.roomChecked(id)
	}
	// A conversation the list could not take would be neither listed nor
	// counted: its turn fails instead.
	if err := b.convIndex.touch(ctx, principal, id, message, false); err != nil {
		return fmt.Errorf("chatbot: listing conversation %q: %w", id, err)
	}
	return nil
}

// newConversationsLock is the name of the lock of principal's new
// conversations (see reserve), in the namespace of conversation locks:
// it starts with '#', which no conversation's id does.
func newConversationsLock(principal string) string {
	return "#new-conversations/" + principal
}

// DeleteConversation deletes the conversation id of ctx's principal
// ([WithPrincipal]): its messages, its summary and its entry in
// [Bot.Conversations], which makes room for another under
// Config.MaxConversations. It first cancels the conversation's turns
// that run on this bot, the running one (even one waiting for an answer
// to a question) and those waiting for it, each ending with an error
// wrapping ErrUnknownConversation; a turn running on another instance
// sharing the store is waited for (or ctx). A turn that arrives after the
// delete starts the conversation anew. What a cancelled resumable turn
// streamed (its question, the events up to its error) stays resumable by
// its request id for Config.ResumeLinger, and as long in the turn journal
// of a bot with Config.NATS or Config.Postgres; the conversation's
// documents stay until deleted themselves. A conversation the principal does not have is an
// error wrapping ErrUnknownConversation, unless it had turns to cancel
// (its first, still running).
func (b *Bot) DeleteConversation(ctx context.Context, id string) error {
	if !idPattern.MatchString(id) {
		return &RequestError{Field: "conversation_id", Reason: idRule}
	}
	principal := PrincipalFromContext(ctx)
	thread := scoped(principal, id)
	// A running turn holds the conversation's lock until it ends, up to
	// Config.TurnTimeout; a turn waiting for the lock would run on after
	// the delete, on an empty conversation.
	cancelled := b.turnsRun.cancelThread(thread, fmt.Errorf("%w %q: it was deleted (DELETE /api/v1/chat/{conversation_id}) while this turn ran or waited to run", ErrUnknownConversation, id))
	unlock, err := b.convs.Lock(ctx, thread)
	if err != nil {
		return err
	}
	defer unlock()
	st, err := b.convs.Store().Load(ctx, thread, 0)
	if err != nil {
		return fmt.Errorf("chatbot: loading conversation %q: %w", id, err)
	}
	// The messages go first: should that fail, the conversation stays
	// listed, to be deleted again.
	if err := b.convs.Delete(ctx, thread); err != nil {
		return fmt.Errorf("chatbot: deleting conversation %q: %w", id, err)
	}
	listed, err := b.convIndex.remove(ctx, principal, id)
	if err != nil {
		return fmt.Errorf("chatbot: removing conversation %q from the list: %w", id, err)
	}
	if !listed && st.Last == 0 && st.Summary.Text == "" && cancelled == 0 {
		return fmt.Errorf("%w %q", ErrUnknownConversation, id)
	}
	return nil
}

// serveDeleteConversation serves DELETE /api/v1/chat/{conversation_id}:
// 204 once the conversation is deleted, 404 when the caller has none of
// that id.
func (b *Bot) serveDeleteConversation(w http.ResponseWriter, r *http.Request) {
	if err := b.DeleteConversation(r.Context(), r.PathValue("conversation_id")); err != nil {
		b.writeError(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}
