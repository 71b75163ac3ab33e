package conformance_test

import (
	"slices"
	"testing"

	"github.com/agentgraph/agentgraph/internal/conformance"
)

type store struct{ name string }

// TestRun checks that every check runs, in order, as a subtest named after
// it, on a store of its own made with the subtest's t.
func TestRun(t *testing.T) {
	var made, ran []string
	newStore := func(t *testing.T) *store {
		made = append(made, t.Name())
		return &store{name: t.Name()}
	}
	check := func(t *testing.T, s *store) {
		if s.name != t.Name() {
			t.Errorf("check %s got the store made for %s", t.Name(), s.name)
		}
		ran = append(ran, t.Name())
	}
	conformance.Run(t, newStore, []conformance.Check[*store]{{"A", check}, {"B", check}, {"C", check}})
	want := []string{"TestRun/A", "TestRun/B", "TestRun/C"}
	if !slices.Equal(made, want) || !slices.Equal(ran, want) {
		t.Errorf("stores made for %v, checks ran as %v; want both %v", made, ran, want)
	}
}
