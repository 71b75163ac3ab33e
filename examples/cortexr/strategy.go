package cortexr

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"

	"go.starlark.net/syntax"

	"github.com/agentgraph/agentgraph/examples/internal/sandbox"
)

// Strategy is how the decision plans a step: the seed's planning_mode and
// exploration_mode.
type Strategy string

// Strategies.
const (
	// StrategyConservative plans exactly one tool call per step: a plan
	// with more than one tool call is rejected before it runs, with
	// feedback for the next attempt (a lifeline).
	StrategyConservative Strategy = "conservative"
	// StrategyParallel plans 2 to 4 independent tool calls run together:
	// plans get parallel(calls=[[tool, {args}], ...]), which runs the calls
	// concurrently and returns their results in order.
	StrategyParallel Strategy = "exploratory_parallel"
	// StrategySequential plans a chain of calls with fallbacks: plans get
	// try_call(tool=..., args={...}), which returns {"ok": True, "result":
	// value} or {"ok": False, "error": message} instead of failing the plan,
	// Starlark's stand-in for the seed's try/except.
	StrategySequential Strategy = "exploratory_sequential"
)

// MaxParallelCalls bounds the calls of one parallel().
const MaxParallelCalls = 4

// ParseStrategy returns the strategy of the seed's profile fields:
// planning_mode "conservative" or "exploratory", and for exploratory,
// exploration_mode "parallel" or "sequential". It also accepts a
// Strategy's own name as planningMode.
func ParseStrategy(planningMode, explorationMode string) (Strategy, error) {
	switch s := Strategy(planningMode); s {
	case StrategyConservative, StrategyParallel, StrategySequential:
		return s, nil
	}
	if planningMode == "exploratory" {
		switch explorationMode {
		case "parallel":
			return StrategyParallel, nil
		case "sequential", "":
			return StrategySequential, nil
		}
		return "", fmt.Errorf("cortexr: exploration_mode %q; use parallel or sequential", explorationMode)
	}
	return "", fmt.Errorf("cortexr: planning_mode %q; use conservative or exploratory (or %s, %s, %s)", planningMode, StrategyConservative, StrategyParallel, StrategySequential)
}

// rules is the strategy's part of the decision prompt.
func (s Strategy) rules() string {
	switch s {
	case StrategyConservative:
		return `- Strategy: conservative. Make exactly ONE tool call in solve(). If the query needs more, return "FURTHER_PROCESSING_REQUIRED: " + str(result) and plan the next call in the next step.
`
	case StrategyParallel:
		return `- Strategy: exploratory parallel. When the query needs 2 to 4 independent tool calls, run them together with results = parallel(calls=[["tool_a", {"x": 1}], ["tool_b", {"y": 2}]]); results is the list of their values, in order.
`
	}
	return `- Strategy: exploratory sequential. Chain tool calls; where a call may fail, use r = try_call(tool="tool_name", args={...}): r["ok"] is True with r["result"], or False with r["error"], so you can fall back to another tool.
`
}

// checkPlan rejects a plan the strategy does not allow before it runs.
func (s Strategy) checkPlan(plan string, tools []string) error {
	if s != StrategyConservative {
		return nil
	}
	f, err := syntax.Parse("plan.star", plan, 0)
	if err != nil {
		return nil // RunPlan reports the syntax error
	}
	var calls []string
	syntax.Walk(f, func(n syntax.Node) bool {
		if c, ok := n.(*syntax.CallExpr); ok {
			if id, ok := c.Fn.(*syntax.Ident); ok && slices.Contains(tools, id.Name) {
				calls = append(calls, id.Name)
			}
		}
		return true
	})
	if len(calls) > 1 {
		return &PlanError{Kind: "strategy", Msg: fmt.Sprintf("the conservative strategy allows exactly one tool call per step, and the plan calls %d (%s); call one tool and return \"FURTHER_PROCESSING_REQUIRED: \" + str(result) to continue in the next step", len(calls), strings.Join(calls, ", "))}
	}
	return nil
}

// limits adapts lim to the strategy: one tool call for conservative.
func (s Strategy) limits(lim Limits) Limits {
	if s == StrategyConservative {
		lim.MaxToolCalls = 1
	}
	return lim
}

// builtins are the strategy's extra plan functions, run in this process
// over call, which must be safe for concurrent use.
func (s Strategy) builtins(tools []string, call ToolFunc) map[string]sandbox.Func {
	known := func(name string) error {
		if !slices.Contains(tools, name) {
			return fmt.Errorf("%q is not one of this plan's tools (%s)", name, strings.Join(tools, ", "))
		}
		return nil
	}
	switch s {
	case StrategyParallel:
		return map[string]sandbox.Func{"parallel": func(ctx context.Context, args map[string]any) (any, error) {
			list, ok := args["calls"].([]any)
			if !ok || len(list) == 0 {
				return nil, fmt.Errorf("parallel: pass calls=[[\"tool\", {args}], ...], a list of 1 to %d calls", MaxParallelCalls)
			}
			if len(list) > MaxParallelCalls {
				return nil, fmt.Errorf("parallel: %d calls; run at most %d together", len(list), MaxParallelCalls)
			}
			type job struct {
				name string
				args map[string]any
			}
			jobs := make([]job, len(list))
			for i, c := range list {
				pair, ok := c.([]any)
				if !ok || len(pair) != 2 {
					return nil, fmt.Errorf("parallel: call %d is %v; write it as [\"tool\", {args}]", i, c)
				}
				name, _ := pair[0].(string)
				a, ok := pair[1].(map[string]any)
				if !ok {
					return nil, fmt.Errorf("parallel: call %d's arguments are %v; give a dict", i, pair[1])
				}
				if err := known(name); err != nil {
					return nil, fmt.Errorf("parallel: call %d: %w", i, err)
				}
				jobs[i] = job{name, a}
			}
			out := make([]any, len(jobs))
			errs := make([]error, len(jobs))
			var wg sync.WaitGroup
			for i, j := range jobs {
				wg.Go(func() { out[i], errs[i] = call(ctx, j.name, j.args) })
			}
			wg.Wait()
			for i, err := range errs {
				if err != nil {
					return nil, fmt.Errorf("parallel: call %d (%s): %w", i, jobs[i].name, err)
				}
			}
			return out, nil
		}}
	case StrategySequential:
		return map[string]sandbox.Func{"try_call": func(ctx context.Context, args map[string]any) (any, error) {
			name, _ := args["tool"].(string)
			if err := known(name); err != nil {
				return nil, fmt.Errorf("try_call: tool %w", err)
			}
			a, _ := args["args"].(map[string]any)
			if a == nil {
				a = map[string]any{}
			}
			v, err := call(ctx, name, a)
			if err != nil {
				if ctx.Err() != nil {
					return nil, err
				}
				return map[string]any{"ok": false, "error": err.Error()}, nil
			}
			return map[string]any{"ok": true, "result": v}, nil
		}}
	}
	return nil
}
