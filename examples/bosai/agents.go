package bosai

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/resilience"
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
	r.add(ctx, TraceError, string(r.agent)+" agent failed", map[string]any{"kind": string(kind), "error": ae.Message})
	return AgentResult{Agent: r.agent, Status: StatusFailed, Error: ae}
}

func (r *recorder) succeed(ctx context.Context, answer string, table *TabularResult) AgentResult {
	data := map[string]any{"answer": answer}
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
	rec.add(ctx, TraceMessage, string(name)+" agent started", nil)
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

// ---- api: plan → HTTP (under a resilience policy) → summary ----

type apiCallPlan struct {
	MakeRequest   bool              `json:"make_request"`
	Method        string            `json:"method,omitempty"`
	Path          string            `json:"path,omitempty"`
	Query         map[string]string `json:"query,omitempty"`
	Reason        string            `json:"reason"`
	FailureReason string            `json:"failure_reason,omitempty"`
}

// Validate accepts only GET calls to catalogued endpoints.
func (p apiCallPlan) Validate() error {
	if !p.MakeRequest {
		return nil
	}
	for _, e := range Endpoints {
		if e.Method == p.Method && e.Path == p.Path {
			return nil
		}
	}
	return fmt.Errorf("method and path: %s %s is not in the endpoint catalogue; choose one of the listed endpoints", p.Method, p.Path)
}

func apiPrompt(req Request) string {
	var b strings.Builder
	b.WriteString(MarkerAPI + "\n\nPlan one HTTP call to Acme's service API that answers the question, choosing from the endpoints below. If none fits, set make_request to false and say why in failure_reason.\n\n")
	b.WriteString("## Question\n" + req.Question + "\n\n## Endpoints\n")
	for _, e := range rankEndpoints(req.Question) {
		fmt.Fprintf(&b, "- %s %s: %s (keywords: %s)\n", e.Method, e.Path, e.Description, strings.Join(e.Keywords, ", "))
	}
	writeContext(&b, req.Context)
	return b.String()
}

func (b *Bot) apiAgent(ctx context.Context, rec *recorder, req Request) AgentResult {
	p, err := agent.Call[apiCallPlan](ctx, b.client, apiPrompt(req))
	if err != nil {
		return rec.fail(ctx, KindModel, modelFailure(err))
	}
	plan := p.Value
	if !plan.MakeRequest {
		return rec.fail(ctx, KindPlanningDeclined, errors.New(cmp.Or(plan.FailureReason, plan.Reason, "the model made no request")))
	}
	rec.add(ctx, TraceDecision, "call "+plan.Method+" "+plan.Path, map[string]any{"method": plan.Method, "path": plan.Path, "reason": plan.Reason})

	u, err := url.Parse(strings.TrimSuffix(b.apiBase, "/") + plan.Path)
	if err != nil {
		return rec.fail(ctx, KindHTTP, err)
	}
	if len(plan.Query) > 0 {
		v := url.Values{}
		for k, x := range plan.Query {
			v.Set(k, x)
		}
		u.RawQuery = v.Encode()
	}
	start := time.Now()
	attempts := 0
	var lastErr error
	body, err := b.httpPolicy.Do(ctx, func(ctx context.Context) ([]byte, error) {
		attempts++
		if attempts > 1 {
			rec.add(ctx, TraceMessage, fmt.Sprintf("retrying the HTTP call (attempt %d)", attempts), map[string]any{"attempt": attempts, "error": errString(lastErr)})
		}
		body, err := b.get(ctx, u.String())
		lastErr = err
		return body, err
	})
	data := map[string]any{"method": plan.Method, "url": u.String(), "attempts": attempts, "elapsed_ms": time.Since(start).Milliseconds()}
	var he *resilience.HTTPError
	if errors.As(err, &he) {
		data["status_code"] = he.StatusCode
	} else if err == nil {
		data["status_code"] = http.StatusOK
	}
	rec.add(ctx, TraceTool, "executed HTTP request", data)
	if err != nil {
		return rec.fail(ctx, KindHTTP, err)
	}
	table, terr := TabulateJSON(body)
	if terr != nil {
		table = nil
	}
	return rec.succeed(ctx, summarizeJSON(plan.Method+" "+plan.Path, body, table), table)
}

// get fetches url and returns the body; an error status is a
// *resilience.HTTPError, so that 5xx and 429 are retried.
func (b *Bot) get(ctx context.Context, u string) ([]byte, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, resilience.MarkPermanent(err)
	}
	r.Header.Set("Accept", "application/json")
	resp, err := b.http.Do(r)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if err := resilience.CheckResponse(resp); err != nil {
		return nil, err
	}
	return io.ReadAll(io.LimitReader(resp.Body, 1<<20))
}

// summarizeJSON describes a JSON body in one line: its top-level scalar
// fields and the size of its table.
func summarizeJSON(call string, body []byte, table *TabularResult) string {
	var obj map[string]any
	parts := []string{}
	if json.Unmarshal(body, &obj) == nil {
		keys, _ := keysInOrder(body)
		for _, k := range keys {
			switch v := obj[k].(type) {
			case string, float64, bool:
				parts = append(parts, fmt.Sprintf("%s %v", k, v))
			}
		}
	}
	if table != nil {
		var first []string
		for _, row := range table.Rows {
			first = append(first, rowLine(table.Columns, row))
		}
		parts = append(parts, fmt.Sprintf("%d rows: %s", table.RowCount, strings.Join(first, "; ")))
	}
	return call + " returned " + strings.Join(parts, "; ")
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
	p, err := agent.Call[computationPlan](ctx, b.client, prompt)
	if err != nil {
		return rec.fail(ctx, KindModel, modelFailure(err))
	}
	if strings.TrimSpace(p.Value.Code) == "" {
		return rec.fail(ctx, KindPlanningDeclined, errors.New(cmp.Or(p.Value.Explanation, "the model wrote no program")))
	}
	rec.add(ctx, TraceDecision, "run a program in the sandbox", map[string]any{"code": p.Value.Code, "explanation": p.Value.Explanation})

	sess := b.manager.NewSession(mcp.Callbacks{})
	defer sess.Close()
	res, err := sess.CallTool(ctx, mcp.ToolCall{Server: "calculator", Name: "run_code", Arguments: map[string]any{"code": p.Value.Code}})
	if err != nil {
		return rec.fail(ctx, KindTool, err)
	}
	data := map[string]any{"status": string(res.Status), "elapsed_ms": res.Duration.Milliseconds()}
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
	if res.Status != mcp.StatusSuccess {
		return rec.fail(ctx, KindSandbox, errors.New(cmp.Or(res.Error, res.CombinedText())))
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

// firstSentences returns the first n sentences of s.
func firstSentences(s string, n int) string {
	end := 0
	for i := 0; i < n; i++ {
		j := strings.Index(s[end:], ". ")
		if j < 0 {
			return s
		}
		end += j + 1
	}
	return s[:end]
}
