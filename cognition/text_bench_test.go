package cognition

import (
	"fmt"
	"strings"
	"testing"
)

// wordsQuery returns a query of "postgres" and n more distinct words.
func wordsQuery(n int) string {
	var b strings.Builder
	b.WriteString("postgres")
	for i := range n {
		fmt.Fprintf(&b, " w%dx", i)
	}
	return b.String()
}

// BenchmarkRankQueryWords ranks 100 episodes for queries of growing
// numbers of distinct words: a question, a pasted page, a hostile input.
func BenchmarkRankQueryWords(b *testing.B) {
	eps := make([]Episode, 100)
	for i := range eps {
		eps[i] = Episode{ID: fmt.Sprint("e", i), UserID: "u", Summary: fmt.Sprintf("tuned the postgres pool %d", i),
			Topics: []string{"postgres"}, Importance: 0.5, Mentions: 1, Created: t0, Updated: t0}
	}
	for _, n := range []int{8, 100, 1000, 10000} {
		q := wordsQuery(n)
		b.Run(fmt.Sprintf("words=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got := (Retention{}).rank(eps, q, 5, t0); len(got) != 5 {
					b.Fatalf("%d recalled", len(got))
				}
			}
		})
	}
}

// BenchmarkUnionTopics merges an episode's topics with a draft's, of
// growing numbers of distinct topics.
func BenchmarkUnionTopics(b *testing.B) {
	stored := []string{"postgres", "pool", "tuning"}
	for _, n := range []int{5, 100, 10000} {
		draft := make([]string, n)
		for i := range draft {
			draft[i] = fmt.Sprintf(" Topic%d ", i)
		}
		b.Run(fmt.Sprintf("topics=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if got := unionTopics(MaxTopics, draft, stored); len(got) != min(MaxTopics, n+3) {
					b.Fatalf("%d topics", len(got))
				}
			}
		})
	}
}
