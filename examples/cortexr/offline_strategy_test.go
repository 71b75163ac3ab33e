package cortexr_test

import (
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/agentgraph/agentgraph/examples/cortexr"
	"github.com/agentgraph/agentgraph/mcp"
)

// These tests run the offline model end to end: its plans follow the
// configured strategy, perception's tool hint and the persona.

// calls lists a run's tool calls as "step:tool" (":failed" when the call
// failed).
func calls(evs []cortexr.Event) []string {
	var out []string
	for _, e := range evs {
		if e.Kind == cortexr.EventToolCall {
			c := strconv.Itoa(e.Step) + ":" + e.Tool.Name
			if e.Tool.Error != "" {
				c += ":failed"
			}
			out = append(out, c)
		}
	}
	return out
}

func plans(evs []cortexr.Event) []string {
	var out []string
	for _, e := range evs {
		if e.Kind == cortexr.EventPlan {
			out = append(out, e.Plan)
		}
	}
	return out
}

func attemptErrors(evs []cortexr.Event) []string {
	var out []string
	for _, e := range evs {
		if e.Kind == cortexr.EventAction && e.Error != "" {
			out = append(out, e.Error)
		}
	}
	return out
}

// Conservative: the INDIA example takes two steps of one call each, and
// no plan is rejected.
func TestOfflineConservativeOneCallPerStep(t *testing.T) {
	a := newAgent(t, cortexr.Config{Strategy: cortexr.StrategyConservative, Servers: mathOnly()})
	evs, ans := run(t, a, india)
	if ans.Outcome != cortexr.OutcomeAnswered || ans.Steps != 2 {
		t.Fatalf("answer %+v; want answered after two steps", ans)
	}
	got, err := strconv.ParseFloat(ans.Text, 64)
	if want := indiaSum(); err != nil || math.Abs(got-want)/want > 1e-9 {
		t.Errorf("answer %q, want %v", ans.Text, want)
	}
	if c := strings.Join(calls(evs), ","); c != "1:strings_to_chars_to_int,2:int_list_to_exponential_sum" {
		t.Errorf("tool calls %s; want one call in each of two steps", c)
	}
	if errs := attemptErrors(evs); len(errs) != 0 {
		t.Errorf("attempts failed: %q; the offline model's conservative plans must pass the check", errs)
	}
}

const independentQuery = "What is the factorial of 5 and the first 7 Fibonacci numbers?"

const independentAnswer = "factorial(n=5) = 120; fibonacci_numbers(n=7) = [0, 1, 1, 2, 3, 5, 8]"

// The same question with independent steps under each strategy: parallel
// runs both calls together in one parallel(), sequential one after the
// other in one plan, conservative one per step; all answer the same.
func TestOfflineStrategiesOnIndependentSteps(t *testing.T) {
	for _, c := range []struct {
		strategy   cortexr.Strategy
		steps      int
		calls      string
		planHas    string
		planHasNot string
	}{
		{cortexr.StrategyParallel, 1, "1:factorial,1:fibonacci_numbers", "parallel(calls=", ""},
		{cortexr.StrategySequential, 1, "1:factorial,1:fibonacci_numbers", "factorial(n=5)", "parallel("},
		{cortexr.StrategyConservative, 2, "1:factorial,2:fibonacci_numbers", "factorial(n=5)", "parallel("},
	} {
		t.Run(string(c.strategy), func(t *testing.T) {
			a := newAgent(t, cortexr.Config{Strategy: c.strategy, Servers: mathOnly()})
			evs, ans := run(t, a, independentQuery)
			if ans.Outcome != cortexr.OutcomeAnswered || ans.Steps != c.steps || ans.Text != independentAnswer {
				t.Fatalf("answer %+v; want %q after %d step(s)", ans, independentAnswer, c.steps)
			}
			got := calls(evs)
			if c.strategy == cortexr.StrategyParallel {
				slices.Sort(got) // run together: in any order
			}
			if got := strings.Join(got, ","); got != c.calls {
				t.Errorf("tool calls %s, want %s", got, c.calls)
			}
			first := plans(evs)[0]
			if !strings.Contains(first, c.planHas) || c.planHasNot != "" && strings.Contains(first, c.planHasNot) {
				t.Errorf("first plan\n%s\nwant it to contain %q and not %q", first, c.planHas, c.planHasNot)
			}
		})
	}
}

// Parallel: a documents question searches the documents and the web
// together; the documents do not answer it, so the web result does (the
// same as the sequential strategy's fallback).
func TestOfflineParallelDocumentsAndWeb(t *testing.T) {
	a := newAgent(t, cortexr.Config{Strategy: cortexr.StrategyParallel})
	evs, ans := run(t, a, "What is the capital of France?")
	got := calls(evs)
	slices.Sort(got) // run together: in any order
	if c := strings.Join(got, ","); c != "1:search_stored_documents,1:web_search" {
		t.Fatalf("tool calls %s; want both in step 1", c)
	}
	_, seq := run(t, newAgent(t, cortexr.Config{}), "What is the capital of France?")
	if ans.Outcome != cortexr.OutcomeAnswered || ans.Text != seq.Text || !strings.Contains(plans(evs)[0], "parallel(calls=") {
		t.Fatalf("answer %+v; want the web's answer %q from one parallel plan", ans, seq.Text)
	}
}

// Conservative: the same question searches the documents in step 1 and
// the web in step 2.
func TestOfflineConservativeDocumentsThenWeb(t *testing.T) {
	a := newAgent(t, cortexr.Config{Strategy: cortexr.StrategyConservative})
	evs, ans := run(t, a, "What is the capital of France?")
	if c := strings.Join(calls(evs), ","); c != "1:search_stored_documents,2:web_search" {
		t.Fatalf("tool calls %s; want the documents in step 1, the web in step 2", c)
	}
	_, seq := run(t, newAgent(t, cortexr.Config{}), "What is the capital of France?")
	if ans.Outcome != cortexr.OutcomeAnswered || ans.Steps != 2 || ans.Text != seq.Text {
		t.Fatalf("answer %+v; want the web's answer %q", ans, seq.Text)
	}
}

// brokenCbrt is a math server whose cbrt always fails and whose power
// works.
func brokenCbrt() []cortexr.Server {
	s := server.NewMCPServer("math", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcpgo.NewTool("cbrt", mcpgo.WithDescription("The cube root of a."), mcpgo.WithNumber("a", mcpgo.Required())),
		func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultError("cbrt is out of order"), nil
		})
	s.AddTool(mcpgo.NewTool("power", mcpgo.WithDescription("Raise a to the power b."), mcpgo.WithNumber("a", mcpgo.Required()), mcpgo.WithNumber("b", mcpgo.Required())),
		func(_ context.Context, req mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return mcpgo.NewToolResultText(strconv.FormatFloat(math.Round(math.Pow(req.GetFloat("a", 0), req.GetFloat("b", 0))*1e9)/1e9, 'g', -1, 64)), nil
		})
	return []cortexr.Server{{Server: mcp.Server{Name: cortexr.MathServerName, InProcess: s}, Description: cortexr.MathServerDescription}}
}

// Sequential falls back on failure: cbrt fails, the plan's try_call
// chain computes the root with power. Conservative has no fallback: the
// one call fails on every lifeline and the run ends failed, saying why.
func TestOfflineSequentialFallsBackConservativeDoesNot(t *testing.T) {
	const q = "What is the cube root of 27?"
	a := newAgent(t, cortexr.Config{Strategy: cortexr.StrategySequential, Servers: brokenCbrt()})
	evs, ans := run(t, a, q)
	if c := strings.Join(calls(evs), ","); c != "1:cbrt:failed,1:power" {
		t.Fatalf("tool calls %s; want cbrt failing, then power", c)
	}
	if ans.Outcome != cortexr.OutcomeAnswered || ans.Text != "3" || !strings.Contains(plans(evs)[0], "try_call(") {
		t.Fatalf("answer %+v; want 3 from the fallback", ans)
	}

	c := newAgent(t, cortexr.Config{Strategy: cortexr.StrategyConservative, Servers: brokenCbrt(), Lifelines: 1})
	evs, ans = run(t, c, q)
	if ans.Outcome != cortexr.OutcomeFailed || !strings.Contains(ans.Text, "cbrt is out of order") {
		t.Fatalf("conservative answer %+v; want failed with the tool's error", ans)
	}
	for _, call := range calls(evs) {
		if call != "1:cbrt:failed" {
			t.Fatalf("conservative tool calls %v; want only cbrt, once per attempt", calls(evs))
		}
	}
}

// tool_hint: perception hints cbrt for a cube root, and the decision calls
// the hinted tool with the query's number (the planner has no rule of its
// own for cube roots).
func TestOfflineToolHint(t *testing.T) {
	a := newAgent(t, cortexr.Config{Servers: mathOnly()})
	evs, ans := run(t, a, "What is the cube root of 27?")
	if p := evs[0].Perception; p == nil || p.ToolHint != "cbrt" {
		t.Fatalf("perception %+v; want tool_hint cbrt", evs[0].Perception)
	}
	if c := strings.Join(calls(evs), ","); c != "1:cbrt" || ans.Outcome != cortexr.OutcomeAnswered || ans.Text != "3" {
		t.Fatalf("calls %s, answer %+v; want cbrt(a=27) = 3", c, ans)
	}
	// Without the hint's tool in the catalogue the query is not planned.
	noCbrt := newAgent(t, cortexr.Config{Servers: brokenCbrtless(), Lifelines: -1})
	_, ans = run(t, noCbrt, "What is the cube root of 27?")
	if ans.Outcome != cortexr.OutcomeFailed {
		t.Fatalf("answer %+v; want failed without the hinted tool", ans)
	}
}

// brokenCbrtless is a math server with only add.
func brokenCbrtless() []cortexr.Server {
	s := server.NewMCPServer("math", "1.0.0", server.WithToolCapabilities(false))
	s.AddTool(mcpgo.NewTool("add", mcpgo.WithDescription("Add a and b."), mcpgo.WithNumber("a", mcpgo.Required()), mcpgo.WithNumber("b", mcpgo.Required())),
		func(context.Context, mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
			return nil, errors.New("not called")
		})
	return []cortexr.Server{{Server: mcp.Server{Name: cortexr.MathServerName, InProcess: s}, Description: cortexr.MathServerDescription}}
}

// persona: the same question answered bare by default, as a friendly
// sentence naming the tools with tone friendly and verbosity high.
func TestOfflinePersona(t *testing.T) {
	const q = "What is the factorial of 5?"
	_, plain := run(t, newAgent(t, cortexr.Config{Servers: mathOnly()}), q)
	if plain.Text != "120" {
		t.Fatalf("default persona: %q, want 120", plain.Text)
	}
	_, concise := run(t, newAgent(t, cortexr.Config{Servers: mathOnly(), Persona: cortexr.Persona{Tone: "concise", Verbosity: "low"}}), q)
	if concise.Text != "120" {
		t.Fatalf("concise persona: %q, want 120", concise.Text)
	}
	_, chatty := run(t, newAgent(t, cortexr.Config{Servers: mathOnly(), Persona: cortexr.Persona{Tone: "friendly", Verbosity: "high"}}), q)
	if want := "Happy to help! The answer is 120 (worked out with factorial)."; chatty.Text != want {
		t.Fatalf("friendly, verbose persona: %q, want %q", chatty.Text, want)
	}
}
