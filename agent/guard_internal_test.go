package agent

import (
	"fmt"
	"runtime"
	"testing"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/internal/heaptest"
)

// TestGuardPoliciesBounded: 100,000 distinct model names (which requests
// may choose) keep maxPolicies policies and under 32 MB.
func TestGuardPoliciesBounded(t *testing.T) {
	const bound = 32 << 20
	var g *guard
	grew := heaptest.Growth(func() {
		var err error
		if g, err = newGuard(nil, zap.NewNop()); err != nil {
			t.Fatal(err)
		}
		for i := range 100_000 {
			g.policy(ModelSpec{Provider: "openai", ID: fmt.Sprintf("model-%06d", i)})
		}
	})
	n := g.policies.Len()
	runtime.KeepAlive(g)
	if n != maxPolicies || grew > bound {
		t.Errorf("after 100,000 models: %d policies, %d bytes; want %d and under %d", n, grew, maxPolicies, bound)
	}
	// A model in use keeps its policy, and so its breaker.
	hot := ModelSpec{Provider: "openai", ID: "hot"}
	p := g.policy(hot)
	for i := range 1000 {
		g.policy(ModelSpec{Provider: "openai", ID: fmt.Sprintf("other-%d", i)})
		if i%100 == 0 && g.policy(hot) != p {
			t.Fatal("the policy of a model in use was replaced")
		}
	}
	t.Logf("%d policies: %d bytes", n, grew)
}
