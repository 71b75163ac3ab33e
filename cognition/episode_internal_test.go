package cognition

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)

func TestTokenJaccard(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		a, b     string
		min, max float64
	}{
		{"", "", 1, 1},
		{"the", "a", 1, 1}, // only stop words: no words on either side
		{"pgx pool", "", 0, 0},
		{"PGX pool, starves!", "starves pgx   POOL", 1, 1},
		{"tuned the connection pools", "tuned connection pool", 1, 1}, // plural and stop words
		{"User tuned the pgx connection pool for PostgreSQL", "The user tuned their pgx connection pool for PostgreSQL today", 0.6, 0.99},
		{"prefers Go for backend services", "asked about knitting patterns", 0, 0},
	} {
		got := TokenJaccard(tc.a, tc.b)
		if got < tc.min || got > tc.max {
			t.Errorf("TokenJaccard(%q, %q) = %.3f, want in [%v, %v]", tc.a, tc.b, got, tc.min, tc.max)
		}
		if back := TokenJaccard(tc.b, tc.a); back != got {
			t.Errorf("TokenJaccard is not symmetric on %q, %q: %v vs %v", tc.a, tc.b, got, back)
		}
	}
}

func ep(id, summary string, importance float64, updated time.Time, topics ...string) Episode {
	return Episode{ID: id, UserID: "u", Summary: summary, Topics: topics, Importance: importance, Mentions: 1, Created: updated, Updated: updated}
}

func ids(rs []Recalled) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.ID)
	}
	return out
}

func TestRank(t *testing.T) {
	t.Parallel()
	r := Retention{}
	eps := []Episode{
		ep("pool", "Tuned the pgx connection pool", 0.5, t0, "postgres"),
		ep("pool-old", "Asked about the connection pool size", 0.5, t0.Add(-90*24*time.Hour), "postgres"),
		ep("knit", "Likes knitting", 0.9, t0),
		ep("k8s", "Deployed to kubernetes", 0.2, t0, "kubernetes"),
	}
	for _, tc := range []struct {
		name, query string
		n           int
		want        []string
	}{
		{"relevance then recency", "connection pool", 5, []string{"pool", "pool-old"}},
		{"topics count", "postgres", 5, []string{"pool", "pool-old"}},
		{"limit", "connection pool", 1, []string{"pool"}},
		{"no match", "rust borrow checker", 5, nil},
		{"no searchable words: importance and recency", "what is it?", 5, []string{"knit", "pool", "k8s", "pool-old"}},
		{"zero n", "pool", 0, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := r.rank(eps, tc.query, tc.n, t0)
			if diff := cmp.Diff(tc.want, ids(got)); diff != "" {
				t.Errorf("rank(%q) (-want +got):\n%s", tc.query, diff)
			}
			for _, g := range got {
				if g.Score < 0 || g.Score > 1 || g.Relevance < 0 || g.Relevance > 1 {
					t.Errorf("%s: score %v, relevance %v out of [0, 1]", g.ID, g.Score, g.Relevance)
				}
			}
		})
	}
	// Expired episodes are not recalled.
	if got := ids(Retention{TTL: 30 * 24 * time.Hour}.rank(eps, "connection pool", 5, t0)); !cmp.Equal(got, []string{"pool"}) {
		t.Errorf("rank with a 30-day TTL = %v, want the 90-day-old episode left out", got)
	}
	// Importance breaks a tie in relevance and recency.
	tie := []Episode{ep("low", "connection pool", 0.1, t0), ep("high", "connection pool", 0.9, t0)}
	if got := ids(r.rank(tie, "pool", 2, t0)); !cmp.Equal(got, []string{"high", "low"}) {
		t.Errorf("rank with equal relevance = %v, want the more important first", got)
	}
	// Retrieval keeps an episode fresh: an old one accessed now outranks an
	// old one never accessed.
	a, b := ep("a", "connection pool", 0.5, t0.Add(-60*24*time.Hour)), ep("b", "connection pool", 0.5, t0.Add(-60*24*time.Hour))
	b.LastAccessed = t0
	if got := ids(r.rank([]Episode{a, b}, "pool", 2, t0)); !cmp.Equal(got, []string{"b", "a"}) {
		t.Errorf("rank = %v, want the recently accessed first", got)
	}
}

func seqIDs() func() string {
	n := 0
	return func() string { n++; return fmt.Sprintf("new%d", n) }
}

func TestConsolidateMergesNearDuplicates(t *testing.T) {
	t.Parallel()
	r := Retention{}
	stored := []Episode{ep("e1", "User tuned the pgx connection pool for PostgreSQL", 0.5, t0.Add(-time.Hour), "postgres")}
	now := t0
	ch := r.consolidate(stored, []EpisodeDraft{
		{Summary: "The user tuned their pgx connection pool for PostgreSQL today", Topics: []string{"pgx", "Postgres"}, Importance: 0.4, Outcome: Success},
		{Summary: "Prefers table-driven tests", Topics: []string{"testing"}, Importance: 0.3},
		{Summary: "Prefers table driven tests.", Importance: 0.6}, // duplicate of the draft before
	}, "u", "c9", TokenJaccard, now, seqIDs())
	want := EpisodeChanges{Put: []Episode{
		{ID: "e1", UserID: "u", ConversationID: "c9", Summary: "The user tuned their pgx connection pool for PostgreSQL today",
			Topics: []string{"pgx", "postgres"}, Outcome: Success, Importance: 0.55, Mentions: 2, Created: t0.Add(-time.Hour), Updated: now},
		{ID: "new1", UserID: "u", ConversationID: "c9", Summary: "Prefers table driven tests.", Topics: []string{"testing"},
			Importance: 0.65, Mentions: 2, Created: now, Updated: now},
	}}
	if diff := cmp.Diff(want, ch, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })); diff != "" {
		t.Errorf("consolidate (-want +got):\n%s", diff)
	}
}

func TestConsolidateCustomSimilarity(t *testing.T) {
	t.Parallel()
	never := func(a, b string) float64 { return 0 }
	stored := []Episode{ep("e1", "same text", 0.5, t0)}
	ch := Retention{}.consolidate(stored, []EpisodeDraft{{Summary: "same text", Importance: 0.5}}, "u", "", never, t0, seqIDs())
	if len(ch.Put) != 1 || ch.Put[0].ID != "new1" {
		t.Errorf("with a similarity that never matches, consolidate = %+v, want one new episode", ch)
	}
}

func TestConsolidatePrunes(t *testing.T) {
	t.Parallel()
	r := Retention{MaxPerUser: 3, TTL: 30 * 24 * time.Hour}
	stale := ep("stale", "old news", 1, t0.Add(-31*24*time.Hour))
	accessed := ep("accessed", "old but used", 0.5, t0.Add(-40*24*time.Hour))
	accessed.LastAccessed = t0.Add(-time.Hour)
	stored := []Episode{
		stale, accessed,
		ep("trivial", "small talk", 0.05, t0.Add(-2*24*time.Hour)),
		ep("key", "important fact", 0.9, t0.Add(-2*24*time.Hour)),
	}
	ch := r.consolidate(stored, []EpisodeDraft{{Summary: "brand new thing", Importance: 0.5}}, "u", "", TokenJaccard, t0, seqIDs())
	if diff := cmp.Diff([]string{"stale", "trivial"}, ch.Delete); diff != "" {
		t.Errorf("deleted (-want +got):\n%s", diff)
	}
	if len(ch.Put) != 1 || ch.Put[0].ID != "new1" {
		t.Errorf("put = %+v, want only the new episode", ch.Put)
	}
	// A draft that is itself pruned at once is neither put nor deleted.
	r.MaxPerUser = 1
	ch = r.consolidate([]Episode{ep("key", "important fact", 0.9, t0)}, []EpisodeDraft{{Summary: "trivial", Importance: 0}}, "u", "", TokenJaccard, t0, seqIDs())
	if !ch.IsZero() {
		t.Errorf("consolidate with a draft pruned at once = %+v, want no changes", ch)
	}
}

func TestProfileApply(t *testing.T) {
	t.Parallel()
	var p Profile
	p.UserID = "u"
	p.apply(ProfileUpdate{Expertise: Novice, Interests: []string{"Go", " go ", "SQL"}, Preferences: map[string]string{"Language": "Go", "": "x"}}, t0)
	p.apply(ProfileUpdate{Style: Concise, Interests: []string{"kubernetes", "sql"}}, t0.Add(time.Hour))
	want := Profile{
		UserID: "u", Expertise: Novice, Style: Concise, Interests: []string{"kubernetes", "sql", "go"},
		Preferences:  map[string]Preference{"language": {Value: "Go", Updated: t0}},
		Interactions: 2, Created: t0, Updated: t0.Add(time.Hour),
	}
	if diff := cmp.Diff(want, p); diff != "" {
		t.Errorf("profile after two updates (-want +got):\n%s", diff)
	}
	for i := range MaxPreferences + 5 {
		p.apply(ProfileUpdate{Interests: []string{fmt.Sprint("topic", i)}, Preferences: map[string]string{fmt.Sprint("k", i): "v"}}, t0.Add(time.Duration(i+2)*time.Hour))
	}
	if len(p.Interests) != MaxInterests || p.Interests[0] != "topic24" {
		t.Errorf("interests = %v, want the %d most recent, newest first", p.Interests, MaxInterests)
	}
	if len(p.Preferences) != MaxPreferences {
		t.Errorf("%d preferences kept, want %d", len(p.Preferences), MaxPreferences)
	}
	if _, ok := p.Preferences["language"]; ok {
		t.Error("the oldest preference was kept over newer ones")
	}
}

func TestIdentityKeepsGaps(t *testing.T) {
	t.Parallel()
	var id Identity
	for i := range MaxGaps + 5 {
		id.apply(&Interaction{Outcome: Failure}, []string{fmt.Sprint("Gap ", i)}, t0)
	}
	id.apply(&Interaction{Outcome: Success}, []string{"gap 3"}, t0)
	if len(id.Gaps) != MaxGaps || id.Gaps[0] != "gap 3" || id.Gaps[1] != "gap 24" {
		t.Errorf("gaps = %v, want the %d most recent, lower-case, newest first", id.Gaps, MaxGaps)
	}
	if id.Metrics.Turns != MaxGaps+6 || id.Metrics.Failures != MaxGaps+5 || id.Metrics.Successes != 1 {
		t.Errorf("metrics = %+v", id.Metrics)
	}
}

func TestBM25(t *testing.T) {
	t.Parallel()
	texts := []string{
		"postgres pool pool pool",
		"postgres pool",
		"postgres replication",
		"kubernetes ingress",
	}
	s := bm25(texts, []string{"pool"})
	if !(s[0] > s[1] && s[1] > 0 && s[2] == 0 && s[3] == 0) {
		t.Errorf("scores for pool = %v, want more occurrences first and zero without the term", s)
	}
	// A rare term weighs more than a common one.
	s = bm25(texts, []string{"postgres", "replication"})
	if !(s[2] > s[1]) {
		t.Errorf("scores = %v, want the doc with the rare term above", s)
	}
	// Long queries (indexed by a map) score like short ones.
	long := []string{"pool", "a1", "a2", "a3", "a4", "a5", "a6", "a7", "a8", "a9"}
	if got, want := bm25(texts, long), bm25(texts, []string{"pool"}); !cmp.Equal(got, want) {
		t.Errorf("long query scores %v, want %v", got, want)
	}
	if got := bm25(nil, []string{"x"}); len(got) != 0 {
		t.Errorf("bm25 of no texts = %v", got)
	}
}

// A query's distinct words are taken in order, each once, whether few
// (compared) or many (kept in a set), and only the first MaxQueryTerms
// count: a word after them does not make an episode relevant, one among
// them does, however long the query.
func TestRankQueryTermsCapped(t *testing.T) {
	t.Parallel()
	words := make([]string, 0, 3*MaxQueryTerms)
	for i := range MaxQueryTerms {
		words = append(words, fmt.Sprintf("w%dx", i), fmt.Sprintf("w%dx", i/2))
	}
	got := uniqueTokens(strings.Join(words, " ")+" postgres", MaxQueryTerms)
	if len(got) != MaxQueryTerms || got[0] != "w0x" || got[1] != "w1x" || got[MaxQueryTerms-1] != fmt.Sprintf("w%dx", MaxQueryTerms-1) {
		t.Fatalf("%d terms %v…, want the first %d distinct words in order", len(got), got[:min(3, len(got))], MaxQueryTerms)
	}
	if got := uniqueTokens("pool Pool pools the connection pool", 5); !cmp.Equal(got, []string{"pool", "connection"}) {
		t.Fatalf("terms %v", got)
	}
	eps := []Episode{ep("pool", "Tuned the pgx connection pool", 0.5, t0, "postgres")}
	filler := strings.Join(words, " ")
	if got := ids(Retention{}.rank(eps, filler+" postgres", 5, t0)); got != nil {
		t.Errorf("a word after the first %d distinct ones recalled %v", MaxQueryTerms, got)
	}
	if got := ids(Retention{}.rank(eps, "postgres "+filler, 5, t0)); !cmp.Equal(got, []string{"pool"}) {
		t.Errorf("a word among the first %d distinct ones recalled %v, want [pool]", MaxQueryTerms, got)
	}
}

// unionTopics stops at its limit: the first limit distinct topics, in
// order, however many follow.
func TestUnionTopicsLimit(t *testing.T) {
	t.Parallel()
	many := make([]string, 1000)
	for i := range many {
		many[i] = fmt.Sprintf(" Topic%d ", i%20)
	}
	got := unionTopics(3, []string{"", "A"}, many)
	if !cmp.Equal(got, []string{"a", "topic0", "topic1"}) {
		t.Errorf("unionTopics = %v", got)
	}
}
