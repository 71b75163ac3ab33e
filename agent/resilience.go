package agent

import (
	"context"
	"errors"

	"github.com/agentgraph/agentgraph/agent/internal/lcmodel"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/internal/lru"
	"github.com/agentgraph/agentgraph/resilience"
	"go.uber.org/zap"
)

// maxPolicies bounds the models the guard keeps a Policy for. Model names
// may come from requests, so the policies live in an LRU cache: a model
// unused while this many others were called loses its breaker state, and
// starts afresh (closed) when it is next called.
const maxPolicies = 256

// guard runs model calls under the resilience policy, one Policy per
// provider model, so that one model's breaker does not stop another's calls.
type guard struct {
	cfg      resilience.Config
	log      *zap.Logger
	policies *lru.Cache[policyKey, *resilience.Policy[*model.Response]]
}

func newGuard(cfg *resilience.Config, log *zap.Logger) (*guard, error) {
	g := &guard{cfg: resilience.LLM(), log: log, policies: lru.New[policyKey, *resilience.Policy[*model.Response]](maxPolicies)}
	if cfg != nil {
		g.cfg = *cfg
	}
	// Build one policy now so that an invalid Config fails New, not a call.
	if _, err := resilience.New[*model.Response](g.cfg); err != nil {
		return nil, errors.Join(errors.New("agent: Config.Resilience is invalid"), err)
	}
	return g, nil
}

type policyKey struct{ provider, id string }

func (g *guard) policy(spec ModelSpec) *resilience.Policy[*model.Response] {
	return g.policies.GetOrAdd(policyKey{spec.Provider, spec.ID}, func() *resilience.Policy[*model.Response] {
		cfg := g.cfg
		if cfg.Name == "" {
			cfg.Name = "llm:" + spec.Provider + ":" + spec.ID
		}
		p, err := resilience.New[*model.Response](cfg, resilience.WithLogger(g.log))
		if err != nil {
			panic("agent: resilience config validated in New failed later: " + err.Error())
		}
		return p
	})
}

func (g *guard) do(ctx context.Context, spec ModelSpec, fn func(context.Context) (*model.Response, error)) (*model.Response, error) {
	return g.policy(spec).Do(ctx, fn)
}

// classify marks a provider error for the resilience policy: by HTTP status
// when there is one (429 rate-limited with its Retry-After, 408/425/5xx
// transient, other 4xx permanent), else by the provider client's error code; errors
// with neither are left to resilience.Classify (network errors, timeouts).
func classify(err error) error {
	var pe *ProviderError
	if !errors.As(err, &pe) {
		return err
	}
	var class resilience.Class
	if pe.StatusCode != 0 {
		class = resilience.ClassifyStatus(pe.StatusCode)
	} else {
		class = lcmodel.Class(err)
	}
	switch class {
	case resilience.RateLimited:
		return resilience.RateLimit(err, pe.RetryAfter)
	case resilience.Transient:
		return resilience.MarkTransient(err)
	case resilience.Permanent:
		return resilience.MarkPermanent(err)
	}
	return err
}
