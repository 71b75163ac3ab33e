package cognition

import (
	"cmp"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/internal/distinct"
)

// Outcome is how a turn or an episode ended.
type Outcome string

// Outcomes. The zero value means not known.
const (
	Success Outcome = "success"
	Partial Outcome = "partial"
	Failure Outcome = "failure"
)

// valid reports whether o is empty or one of the outcomes.
func (o Outcome) valid() bool { return o == "" || o == Success || o == Partial || o == Failure }

// Episode is one episodic memory: something worth remembering about a user
// from a past conversation, in one or two sentences. Episodes are learned
// from turns, merged with near-duplicates instead of stored twice, ranked
// for each query by relevance, recency and importance, and pruned by age
// and importance.
type Episode struct {
	// ID identifies the episode; stores key episodes by (UserID, ID).
	ID string `json:"id"`
	// UserID is the user the episode belongs to. Episodes of one user never
	// appear in another user's context.
	UserID string `json:"user_id"`
	// ConversationID is the conversation the episode was last learned
	// from.
	ConversationID string `json:"conversation_id,omitempty"`
	// Summary is what happened, as it goes into a prompt.
	Summary string `json:"summary"`
	// Topics are lower-case keywords of the episode.
	Topics []string `json:"topics,omitempty"`
	// Outcome is how the episode ended for the user.
	Outcome Outcome `json:"outcome,omitempty"`
	// Importance is how much the episode matters, from 0 to 1.
	Importance float64 `json:"importance"`
	// Mentions counts the turns the episode was learned from: 1, plus one
	// for every near-duplicate merged into it.
	Mentions int `json:"mentions"`
	// AccessCount counts the contexts the episode was retrieved into.
	AccessCount int `json:"access_count"`
	// Created is when the episode was first learned.
	Created time.Time `json:"created"`
	// Updated is when the episode was last learned (merges included).
	Updated time.Time `json:"updated"`
	// LastAccessed is when the episode was last retrieved; zero if never.
	LastAccessed time.Time `json:"last_accessed,omitzero"`
}

// text is what similarity and relevance look at: the summary and topics.
func (e *Episode) text() string {
	if len(e.Topics) == 0 {
		return e.Summary
	}
	return e.Summary + " " + strings.Join(e.Topics, " ")
}

// lastSeen is the later of Updated and LastAccessed: retrieval and
// re-learning both keep an episode fresh.
func (e *Episode) lastSeen() time.Time {
	if e.LastAccessed.After(e.Updated) {
		return e.LastAccessed
	}
	return e.Updated
}

// merge folds a near-duplicate learned at now into e: the newer summary
// wins, topics are unioned, importance is the larger one, bumped a little
// for the repetition.
func (e *Episode) merge(d EpisodeDraft, conversationID string, now time.Time) {
	e.Summary = d.Summary
	e.Topics = unionTopics(MaxTopics, d.Topics, e.Topics)
	if d.Outcome != "" {
		e.Outcome = d.Outcome
	}
	e.Importance = min(1, max(e.Importance, d.Importance)+0.05)
	e.Mentions++
	if conversationID != "" {
		e.ConversationID = conversationID
	}
	e.Updated = now
}

// MaxTopics is how many topics an episode keeps.
const MaxTopics = 10

// unionTopics returns the lower-cased, trimmed, unique non-empty strings of
// the lists, in order, at most limit: it stops at the limit-th, so that
// its time is linear in the strings it reads, whatever their number.
func unionTopics(limit int, lists ...[]string) []string {
	var out []string
	for _, list := range lists {
		for _, t := range list {
			if len(out) >= limit {
				return out
			}
			t = strings.ToLower(strings.TrimSpace(t))
			if t != "" && !slices.Contains(out, t) {
				out = append(out, t)
			}
		}
	}
	return out
}

// Retention configures how episodes are kept and ranked. The zero value
// uses every default.
type Retention struct {
	// MaxPerUser is the most episodes kept per user; beyond it, those with
	// the lowest retention score (importance weighed by recency) go first.
	// Zero means 100.
	MaxPerUser int
	// TTL removes episodes neither learned nor retrieved for this long.
	// Zero means 90 days; negative keeps episodes forever.
	TTL time.Duration
	// HalfLife is the age at which an episode's recency score halves.
	// Zero means 30 days.
	HalfLife time.Duration
	// DedupThreshold is the similarity at or above which a new episode is
	// merged into the most similar stored one. Zero means 0.6.
	DedupThreshold float64
}

func (r Retention) withDefaults() Retention {
	r.MaxPerUser = cmp.Or(r.MaxPerUser, 100)
	r.TTL = cmp.Or(r.TTL, 90*24*time.Hour)
	r.HalfLife = cmp.Or(r.HalfLife, 30*24*time.Hour)
	r.DedupThreshold = cmp.Or(r.DedupThreshold, 0.6)
	return r
}

// recency is 1 for an episode seen now, 0.5 one half-life ago, and so on.
func (r Retention) recency(e *Episode, now time.Time) float64 {
	age := now.Sub(e.lastSeen())
	if age <= 0 {
		return 1
	}
	return math.Exp2(-float64(age) / float64(r.HalfLife))
}

// keepScore orders episodes for pruning: lowest goes first.
func (r Retention) keepScore(e *Episode, now time.Time) float64 {
	return e.Importance*(0.5+0.5*r.recency(e, now)) + 0.02*math.Log1p(float64(e.AccessCount+e.Mentions))
}

// Recalled is an episode retrieved for a query with its score.
type Recalled struct {
	Episode
	// Score is the combined ranking score, from 0 to 1.
	Score float64 `json:"score"`
	// Relevance is the episode's lexical relevance to the query, from 0
	// to 1 (BM25, relative to the best match).
	Relevance float64 `json:"relevance"`
}

// Ranking weights.
const (
	weightRelevance  = 0.6
	weightRecency    = 0.2
	weightImportance = 0.2
)

// rank returns the n episodes that best fit query, best first. An episode's
// score is 0.6 × relevance (BM25 over summary and topics, divided by the
// best score) + 0.2 × recency + 0.2 × importance. When the query has
// searchable words (the first MaxQueryTerms distinct ones count), only
// episodes sharing at least one of them are returned; when it has none (empty, or only stop words), episodes are
// ranked by recency and importance alone. Episodes past the TTL are left
// out. Ties go to the newer episode,
// then to the smaller ID, so the order is deterministic. It does not
// change the episodes or their access counts.
func (r Retention) rank(episodes []Episode, query string, n int, now time.Time) []Recalled {
	r = r.withDefaults()
	if n <= 0 || len(episodes) == 0 {
		return nil
	}
	live := func(e *Episode) bool { return r.TTL <= 0 || now.Sub(e.lastSeen()) <= r.TTL }
	q := uniqueTokens(query, MaxQueryTerms)
	var rel []float64
	if len(q) > 0 {
		texts := make([]string, len(episodes))
		for i := range episodes {
			texts[i] = episodes[i].text()
		}
		rel = bm25(texts, q)
		best := 0.0
		for i := range episodes {
			if live(&episodes[i]) {
				best = max(best, rel[i])
			}
		}
		if best == 0 {
			return nil
		}
		for i := range rel {
			rel[i] /= best
		}
	}
	type cand struct {
		i            int
		score, relev float64
	}
	cands := make([]cand, 0, len(episodes))
	for i := range episodes {
		e := &episodes[i]
		if !live(e) {
			// Expired episodes wait for the next learning step to be
			// pruned; they are not recalled meanwhile.
			continue
		}
		c := cand{i: i}
		if rel != nil {
			if rel[i] == 0 {
				continue
			}
			c.relev = rel[i]
			c.score = weightRelevance * rel[i]
		}
		c.score += weightRecency*r.recency(e, now) + weightImportance*e.Importance
		if rel == nil {
			c.score /= weightRecency + weightImportance
		}
		cands = append(cands, c)
	}
	slices.SortFunc(cands, func(a, b cand) int {
		if c := cmp.Compare(b.score, a.score); c != 0 {
			return c
		}
		if c := episodes[b.i].Updated.Compare(episodes[a.i].Updated); c != 0 {
			return c
		}
		return strings.Compare(episodes[a.i].ID, episodes[b.i].ID)
	})
	cands = cands[:min(n, len(cands))]
	if len(cands) == 0 {
		return nil
	}
	out := make([]Recalled, len(cands))
	for k, c := range cands {
		out[k] = Recalled{Episode: episodes[c.i], Score: c.score, Relevance: c.relev}
	}
	return out
}

// MaxQueryTerms is the most distinct words of a query that recall
// matches episodes against: the first ones, in the query's order (see
// [Service.Context]). The words after them do not count, so that a long
// query (a pasted document) costs recall time linear in its length and
// memory bounded by the number of episodes. Recall ranks episodes sharing
// any word, so the cut only loses some ranking signal; memory's item
// search, which keeps records holding every term, refuses a longer query
// instead.
const MaxQueryTerms = 256

// uniqueTokens returns the distinct normalised words of s (see
// eachToken) in order, at most limit.
func uniqueTokens(s string, limit int) []string {
	var terms distinct.Terms
	eachToken(s, func(w string) {
		if terms.Len() < limit {
			terms.Add(w)
		}
	})
	return terms.List()
}

// EpisodeChanges is what one learning step does to a user's episodes.
type EpisodeChanges struct {
	// Put are episodes to insert or replace, by ID.
	Put []Episode
	// Delete are the IDs of episodes to remove.
	Delete []string
}

// IsZero reports whether the changes do nothing.
func (c EpisodeChanges) IsZero() bool { return len(c.Put) == 0 && len(c.Delete) == 0 }

// consolidate decides what learning drafts does to a user's stored
// episodes: each draft is merged into the most similar episode at or above
// the dedup threshold (drafts of the same step included) or added as a new
// one; then episodes past the TTL are removed and, over MaxPerUser, those
// with the lowest keep score. newID makes IDs for new episodes.
func (r Retention) consolidate(stored []Episode, drafts []EpisodeDraft, userID, conversationID string,
	sim Similarity, now time.Time, newID func() string) EpisodeChanges {
	r = r.withDefaults()
	all := slices.Clone(stored)
	changed := make(map[string]bool)
	for _, d := range drafts {
		// What is learned goes into later prompts: a summary that could
		// add a line there, or an outcome that is none, is not kept.
		d.Summary = strings.TrimSpace(d.Summary)
		if checkLearned(d.Summary, MaxSummaryLen) != "" || !d.Outcome.valid() {
			continue
		}
		draftText := (&Episode{Summary: d.Summary, Topics: d.Topics}).text()
		best, bestSim := -1, 0.0
		for i := range all {
			if s := sim(draftText, all[i].text()); s >= r.DedupThreshold && s > bestSim {
				best, bestSim = i, s
			}
		}
		if best >= 0 {
			all[best].merge(d, conversationID, now)
			changed[all[best].ID] = true
			continue
		}
		e := Episode{
			ID: newID(), UserID: userID, ConversationID: conversationID,
			Summary: d.Summary, Topics: unionTopics(MaxTopics, d.Topics), Outcome: d.Outcome,
			Importance: d.Importance, Mentions: 1, Created: now, Updated: now,
		}
		all = append(all, e)
		changed[e.ID] = true
	}

	var ch EpisodeChanges
	keep := all[:0:0]
	for _, e := range all {
		if r.TTL > 0 && now.Sub(e.lastSeen()) > r.TTL {
			ch.Delete = append(ch.Delete, e.ID)
			delete(changed, e.ID)
			continue
		}
		keep = append(keep, e)
	}
	if len(keep) > r.MaxPerUser {
		slices.SortStableFunc(keep, func(a, b Episode) int {
			if c := cmp.Compare(r.keepScore(&b, now), r.keepScore(&a, now)); c != 0 {
				return c
			}
			return b.Updated.Compare(a.Updated)
		})
		for _, e := range keep[r.MaxPerUser:] {
			ch.Delete = append(ch.Delete, e.ID)
			delete(changed, e.ID)
		}
		keep = keep[:r.MaxPerUser]
	}
	for _, e := range keep {
		if changed[e.ID] {
			ch.Put = append(ch.Put, e)
		}
	}
	// Deleting a draft that was never stored is harmless, but keep the
	// change set to what exists.
	storedIDs := make(map[string]bool, len(stored))
	for _, e := range stored {
		storedIDs[e.ID] = true
	}
	ch.Delete = slices.DeleteFunc(ch.Delete, func(id string) bool { return !storedIDs[id] })
	slices.Sort(ch.Delete)
	slices.SortFunc(ch.Put, func(a, b Episode) int { return strings.Compare(a.ID, b.ID) })
	return ch
}
