package lexicon_test

import (
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot/internal/lexicon"
)

func BenchmarkStem(b *testing.B) {
	words := []string{"pricing", "customers", "editors", "dashboards", "unlimited", "response", "the", "plan"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		lexicon.Stem(words[i%len(words)])
	}
}

func BenchmarkSynonyms(b *testing.B) {
	lexicon.Synonyms("client")
	words := []string{"clients", "permit", "xyzzy", "shut"}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		lexicon.Synonyms(words[i%len(words)])
	}
}
