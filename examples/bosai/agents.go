package bosai

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/mcp/mcptool"
)

// recorder collects one agent's trace events and streams each as it
// happens (graph.Emit: a custom event of a streamed run).
type recorder struct {
	agent  AgentName
	events []TraceEvent
}

func (r *recorder) add(ctx context.Context, kind TraceKind, msg string, data map[string]any) {
	ev := newTrace(kind, r.agent, msg, data)
	r.events = append(r.events, ev)
	// Emit fails only when the run has stopped; the caller sees ctx.Err().
	_ = graph.Emit(ctx, ev)
}

// fail records the failure and returns the failed result.
func (r *recorder) fail(ctx context.Context, kind ErrorKind, err error) AgentResult {
	ae := &AgentError{Agent: r.agent, Kind: kind, Message: err.Error()}
	r.add(ctx, TraceError, string(r.agent)+" agent failed", map[string]any{"kind": string(kind), "error": ae.Message, "status": string(StatusFailed)})
	return AgentResult{Agent: r.agent, Status: StatusFailed, Error: ae}
}

func (r *recorder) succeed(ctx context.Context, answer string, table *TabularResult) AgentResult {
	data := map[string]any{"answer": answer, "status": string(StatusSucceeded)}
	if table != nil {
		data["rows"] = table.RowCount
	}
	r.add(ctx, TraceResult, string(r.agent)+" agent succeeded", data)
	return AgentResult{Agent: r.agent, Status: StatusSucceeded, Answer: answer, Table: table}
}

// runAgent runs one specialist. Its failures are in the result, never an
// error: only a cancelled run stops the graph.
func (b *Bot) runAgent(ctx context.Context, name AgentName, req Request) (AgentResult, []TraceEvent, error) {
	start := time.Now()
	rec := &recorder{agent: name}
	rec.add(ctx, TraceMessage, string(name)+" agent started", map[string]any{"status": string(StatusRunning)})
	var res AgentResult
	switch name {
	case AgentSQL:
		res = b.sqlAgent(ctx, rec, req)
	case AgentAPI:
		res = b.apiAgent(ctx, rec, req)
	case AgentComputation:
		res = b.computationAgent(ctx, rec, req)
	default:
		res = rec.fail(ctx, KindPlanningDeclined, fmt.Errorf("no agent is named %q", name))
	}
	if err := ctx.Err(); err != nil {
		return AgentResult{}, nil, err
	}
	res.LatencyMS = float64(time.Since(start).Microseconds()) / 1000
	return res, rec.events, nil
}

// modelFailure words a failed structured call for the trace.
func modelFailure(err error) error {
	var se *agent.StructuredOutputError
	if errors.As(err, &se) {
		return fmt.Errorf("no valid plan from the model: %w", err)
	}
	return err
}

func rowLine(cols []string, row map[string]any) string {
	vals := make([]string, 0, len(cols))
	for _, c := range cols {
		if v, ok := row[c]; ok {
			vals = append(vals, fmt.Sprintf("%s=%v", c, v))
		}
	}
	return strings.Join(vals, " ")
}

// ---- computation: code → sandbox ----

type computationPlan struct {
	Code        string `json:"code"`
	Explanation string `json:"explanation"`
}

func (b *Bot) computationAgent(ctx context.Context, rec *recorder, req Request) AgentResult {
	prompt := MarkerComputation + "\n\nWrite a short Starlark program (a Python dialect: no imports, no files, no network) that computes what the question asks and assigns it to the global result. If the question asks for no computation, leave code empty and say why in explanation.\n\n## Question\n" + req.Question + "\n"
	p, err := agent.Call[computationPlan](ctx, b.model, prompt)
	if err != nil {
		return rec.fail(ctx, KindModel, modelFailure(err))
	}
	if strings.TrimSpace(p.Value.Code) == "" {
		return rec.fail(ctx, KindPlanningDeclined, errors.New(cmp.Or(p.Value.Explanation, "the model wrote no program")))
	}
	rec.add(ctx, TraceDecision, "run a program in the sandbox", map[string]any{"code": p.Value.Code, "explanation": p.Value.Explanation})

	sess := b.manager.NewSession(mcp.Callbacks{})
	defer sess.Close()
	res, err := callWith(ctx, map[string]any{"code": p.Value.Code}, func() (*mcptool.Tool, error) {
		return mcptool.New(ctx, b.reg, sess, "run_code", mcptool.WithServer("calculator"))
	})
	if err != nil {
		return rec.fail(ctx, KindTool, err)
	}
	data := map[string]any{"status": callStatus(res), "elapsed_ms": res.Duration.Milliseconds()}
	var out struct {
		Output string `json:"output"`
		Result string `json:"result"`
		Steps  uint64 `json:"steps"`
	}
	if s, ok := res.Structured.(map[string]any); ok {
		raw, _ := json.Marshal(s)
		_ = json.Unmarshal(raw, &out)
		data["steps"] = out.Steps
	}
	rec.add(ctx, TraceTool, "called calculator/run_code", data)
	if res.IsError {
		return rec.fail(ctx, KindSandbox, errors.New(cmp.Or(res.Error, res.Text())))
	}
	answer := strings.TrimSpace(out.Output)
	if out.Result != "" {
		answer = "result = " + out.Result
		if e := strings.TrimSpace(p.Value.Explanation); e != "" {
			answer = e + ": " + answer
		}
	}
	if answer == "" {
		return rec.fail(ctx, KindSandbox, errors.New("the program printed nothing and set no result"))
	}
	return rec.succeed(ctx, answer, nil)
}

// ---- helpers ----

func errString(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}
