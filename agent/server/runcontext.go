package server

import (
	"context"
	"maps"

	"github.com/agentgraph/agentgraph/graph"
)

type runContextKey struct{}

// RunContext returns the "context" object of the request that created the
// run ctx belongs to: LangGraph's runtime context, the per-run settings a
// node reads (a user id, a model name, a locale) that are not part of the
// graph's state. The pairs of the request's config.configurable are in it
// too (the context's win), except the ids the server reads itself
// (thread_id, checkpoint_id, checkpoint_ns, checkpoint_map, run_id,
// assistant_id, graph_id) and the identity keys a client cannot set
// (user_id, langgraph_auth_user_id, langgraph_auth_user,
// langgraph_auth_permissions). For a run of an authenticated principal
// (Config.Authenticate), user_id and langgraph_auth_user_id are the
// principal. It is nil outside a run of a [Server], or when there is
// nothing to give. The map is a copy.
//
// The run's context also carries its principal, for guard.Principal: the
// run's owner, read from the run's record, so a background run, a run
// taken over from another instance and a stateless run carry it alike;
// "" without Config.Authenticate.
func RunContext(ctx context.Context) map[string]any {
	m, _ := ctx.Value(runContextKey{}).(map[string]any)
	return maps.Clone(m)
}

// durabilities maps the run body's durability to the graph's modes: sync
// saves each step before the next, async while the next runs, exit when
// the run ends or pauses.
var durabilities = map[string]graph.Durability{
	"sync":  graph.DurabilityStep,
	"async": graph.DurabilityAsync,
	"exit":  graph.DurabilityExit,
}
