package bosai

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"regexp"
	"slices"
	"strings"

	"github.com/agentgraph/agentgraph/agent/model"
)

// NewOfflineModel returns a small rule-based model for Bos-AI's prompts,
// so that the example runs with no API key and no network. It is not a
// language model: it reads the prompts (recognised by their marker lines,
// MarkerPlanner and friends, and cut into "## " sections) and decides by
// rules from what they contain, inventing nothing:
//
//   - planner: the listed agents whose keywords the question uses, in the
//     listed order (preferred agents first), else the listed candidates;
//   - SQL query: counts, sums, averages, revenue, grouping, filters on
//     known values, date ranges, top-N and lists over the schema the
//     prompt shows (see offlinesql.go), else the table overview; the SQL
//     review accepts the query;
//   - API call: the listed endpoint whose keywords and path the question
//     uses most, or no request when none fits;
//   - computation: the question's arithmetic ("12 * 49", "15% of 240",
//     "7 times 6") as a one-line Starlark program, or no program;
//   - composer: one sentence per agent result, quoting it, and what failed.
//
// It is a model.Model (Config.Model, agent.Config.Model). It is safe for
// concurrent use.
func NewOfflineModel() OfflineModel { return OfflineModel{} }

// OfflineModel is the offline demo model; see NewOfflineModel.
type OfflineModel struct{}

var _ model.Model = OfflineModel{}

// Generate implements model.Model. It answers the last user message.
func (m OfflineModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	user := ""
	for _, msg := range req.Messages {
		if msg.Role == model.RoleUser {
			user = msg.Text()
		}
	}
	if user == "" {
		return nil, errors.New("bosai offline model: no user message; send the prompt as one")
	}
	text, err := offlineAnswer(user)
	if err != nil {
		return nil, err
	}
	return &model.Response{Message: model.Assistant(text), FinishReason: model.FinishStop, Model: "bosai-offline"}, nil
}

// Stream implements model.Model: the whole answer as one text chunk, then
// the response.
func (m OfflineModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		resp, err := m.Generate(ctx, req)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		if yield(model.Chunk{Kind: model.ChunkText, Text: resp.Text()}, nil) {
			yield(model.Chunk{Kind: model.ChunkDone, Response: resp}, nil)
		}
	}
}

func offlineAnswer(prompt string) (string, error) {
	sec := sections(prompt)
	q := strings.TrimSpace(sec["Question"])
	switch {
	case strings.HasPrefix(prompt, MarkerPlanner):
		return jsonText(offlinePlan(q, sec["Agents"], sec["Candidates"]))
	case strings.HasPrefix(prompt, MarkerSQL):
		return jsonText(offlineSQL(q, sec["Dialect"], sec["Schema"]))
	case strings.HasPrefix(prompt, MarkerSQLCheck):
		// The demo rules have nothing to add to their own query.
		return jsonText(sqlReview{OK: true})
	case strings.HasPrefix(prompt, MarkerAPIAdjust):
		return jsonText(offlineAdjust(sec["Plan"], sec["Error"]))
	case strings.HasPrefix(prompt, MarkerAPISummary):
		return offlineSummary(sec["Call"], sec["Status"], sec["Body"]), nil
	case strings.HasPrefix(prompt, MarkerAPI):
		return jsonText(offlineAPI(q, sec["Endpoints"]))
	case strings.HasPrefix(prompt, MarkerComputation):
		expr := arithmetic(q)
		if expr == "" {
			return jsonText(computationPlan{Explanation: "the question asks for no arithmetic"})
		}
		return jsonText(computationPlan{Code: "result = " + expr, Explanation: "computes " + expr})
	case strings.HasPrefix(prompt, MarkerCompose):
		return offlineCompose(sec["Results"]), nil
	}
	return "", fmt.Errorf("bosai offline model: unknown prompt (it starts %q); it answers only Bos-AI's prompts", firstLine(prompt))
}

func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	return string(b), err
}

func firstLine(s string) string {
	l, _, _ := strings.Cut(s, "\n")
	return l
}

// sections cuts a prompt at its "## " headings.
func sections(prompt string) map[string]string {
	out := map[string]string{}
	cur := ""
	for _, line := range strings.Split(prompt, "\n") {
		if h, ok := strings.CutPrefix(line, "## "); ok {
			cur = strings.TrimSpace(h)
			continue
		}
		if cur != "" {
			out[cur] += line + "\n"
		}
	}
	return out
}

// listItem parses "- name: description (keywords: a, b)".
func listItem(line string) (name string, keywords []string, ok bool) {
	line, ok = strings.CutPrefix(strings.TrimSpace(line), "- ")
	if !ok {
		return "", nil, false
	}
	name, rest, _ := strings.Cut(line, ":")
	if i := strings.LastIndex(rest, "(keywords: "); i >= 0 {
		kw := strings.TrimSuffix(strings.TrimSpace(rest[i+len("(keywords: "):]), ")")
		keywords = strings.Split(kw, ", ")
	}
	return strings.TrimSpace(name), keywords, true
}

func offlinePlan(q, agents, candidates string) plannerReply {
	var r plannerReply
	var why []string
	strong := true
	type hit struct {
		name string
		m    []string
	}
	var hits []hit
	for _, line := range strings.Split(agents, "\n") {
		name, kw, ok := listItem(line)
		if !ok {
			continue
		}
		if m := keywordMatches(q, kw); len(m) > 0 {
			hits = append(hits, hit{name, m})
		}
	}
	// Most matches first; ties in the listed order.
	slices.SortStableFunc(hits, func(a, b hit) int { return len(b.m) - len(a.m) })
	for _, h := range hits {
		r.Agents = append(r.Agents, AgentName(h.name))
		why = append(why, fmt.Sprintf("%s (the question says %s)", h.name, strings.Join(h.m, ", ")))
		strong = strong && len(h.m) >= 2
	}
	if len(r.Agents) == 0 {
		for _, line := range strings.Split(candidates, "\n") {
			if name, _, ok := listItem(line); ok {
				r.Agents = append(r.Agents, AgentName(name))
			}
		}
		r.Rationale = "no agent's keywords match the question; following the heuristic candidates"
		r.Confidence = 0.5
		return r
	}
	r.Rationale = "chose " + strings.Join(why, " and ")
	r.Confidence = 0.75
	if strong {
		r.Confidence = 0.9
	}
	return r
}

var stopWords = strings.Fields(`a an and are as at be by can could do does for from how i in is it its me much many
of on or our per please show tell that the their them there this to us was we what whats which who why will with you your
compute calculate calculation sum total average percent multiply divide times plus minus`)

// genericAPIWords say that an API is wanted but not which endpoint.
var genericAPIWords = []string{"api", "call", "calls", "request", "http", "the", "and", "query", "database"}

var idRe = regexp.MustCompile(`\b[A-Za-z]+-\d+\b`)

// offlineAPI picks the first listed endpoint that shares a specific word
// with the question and is not marked NOT allowed, and fills its
// parameters: enum values the question names, an id such as INC-204 for a
// path parameter, the question as a required text field.
func offlineAPI(q, endpoints string) apiCallPlan {
	words := tokens(q)
	type cand struct {
		method, path, text string
		params             []Param
		forbidden          bool
	}
	var cands []cand
	for _, line := range strings.Split(endpoints, "\n") {
		switch {
		case strings.HasPrefix(line, "- "):
			head, summary, _ := strings.Cut(line[2:], ": ")
			method, path, _ := strings.Cut(head, " ")
			cands = append(cands, cand{method: method, path: path, text: summary, forbidden: strings.Contains(summary, "NOT allowed")})
		case strings.HasPrefix(line, "  - param ") && len(cands) > 0:
			f := strings.Fields(line[len("  - param "):])
			if len(f) < 3 {
				continue
			}
			p := Param{Name: f[0], In: f[2], Required: strings.Contains(line, " required")}
			if _, rest, ok := strings.Cut(line, " one of "); ok {
				p.Enum = strings.Split(strings.Fields(strings.TrimSuffix(rest, ":"))[0], "|")
				p.Enum[len(p.Enum)-1] = strings.TrimSuffix(p.Enum[len(p.Enum)-1], ":")
			}
			cands[len(cands)-1].params = append(cands[len(cands)-1].params, p)
		}
	}
	for _, c := range cands {
		vocab := append(tokens(c.path), tokens(c.text)...)
		var hits []string
		for _, w := range words {
			if len(w) > 2 && slices.Contains(vocab, w) && !slices.Contains(genericAPIWords, w) && !slices.Contains(stopWords, w) {
				hits = append(hits, w)
			}
		}
		if len(hits) == 0 || c.forbidden {
			continue
		}
		plan := apiCallPlan{MakeRequest: true, Method: c.method, Path: c.path, Reason: fmt.Sprintf("%s %s matches %s", c.method, c.path, strings.Join(hits, ", "))}
		for _, p := range c.params {
			var v any
			for _, e := range p.Enum {
				if slices.Contains(words, e) {
					v = e
				}
			}
			if v == nil && p.In == "path" {
				if id := idRe.FindString(q); id != "" {
					v = strings.ToUpper(id)
				}
			}
			if v == nil && p.Required && p.In == "body" {
				v = strings.TrimSpace(q)
			}
			if v == nil {
				continue
			}
			switch p.In {
			case "path":
				plan.PathParams = setParam(plan.PathParams, p.Name, v)
			case "query":
				plan.QueryParams = setParam(plan.QueryParams, p.Name, v)
			case "body":
				plan.JSONBody = setParam(plan.JSONBody, p.Name, v)
			}
		}
		return plan
	}
	return apiCallPlan{Reason: "no endpoint fits", FailureReason: "no endpoint in the API documentation matches the question"}
}

func setParam(m map[string]any, k string, v any) map[string]any {
	if m == nil {
		m = map[string]any{}
	}
	m[k] = v
	return m
}

// offlineAdjust drops the parameters the API's error names.
func offlineAdjust(planJSON, errText string) apiCallPlan {
	var p apiCallPlan
	if json.Unmarshal([]byte(strings.TrimSpace(planJSON)), &p) != nil {
		return apiCallPlan{Reason: "unreadable plan", FailureReason: "the plan in the prompt is not JSON"}
	}
	dropped := false
	for _, m := range []map[string]any{p.QueryParams, p.JSONBody, p.PathParams} {
		for k := range m {
			if strings.Contains(errText, k) {
				delete(m, k)
				dropped = true
			}
		}
	}
	if !dropped {
		return apiCallPlan{Reason: "nothing to adjust", FailureReason: "the error names none of the plan's parameters"}
	}
	p.Reason = "dropped the parameters the API rejected"
	return p
}

// offlineSummary describes a JSON body in one line: its status, top-level
// scalar fields and the size and first rows of its table.
func offlineSummary(call, status, body string) string {
	var obj map[string]any
	parts := []string{}
	raw := []byte(strings.TrimSpace(body))
	if json.Unmarshal(raw, &obj) == nil {
		keys, _ := keysInOrder(raw)
		for _, k := range keys {
			switch v := obj[k].(type) {
			case string, float64, bool:
				parts = append(parts, fmt.Sprintf("%s %v", k, v))
			}
		}
	}
	if t, err := TabulateJSON(raw); err == nil {
		var rows []string
		for i, row := range t.Rows {
			if i == 8 {
				rows = append(rows, "…")
				break
			}
			rows = append(rows, rowLine(t.Columns, row))
		}
		parts = append(parts, fmt.Sprintf("%d rows: %s", t.RowCount, strings.Join(rows, "; ")))
	}
	return strings.TrimSpace(call) + " answered " + strings.TrimSpace(status) + ": " + strings.Join(parts, "; ")
}

var (
	percentOf = regexp.MustCompile(`(\d+(?:\.\d+)?)\s*%\s*of\s*(\d+(?:\.\d+)?)`)
	exprRun   = regexp.MustCompile(`[\d(][\d.\s+\-*/()]*[\d)]`)
	hasOp     = regexp.MustCompile(`[\d)]\s*[-+*/]\s*[\d(]`)
	wordOps   = strings.NewReplacer(" times ", " * ", " multiplied by ", " * ", " plus ", " + ", " minus ", " - ", " divided by ", " / ")
)

// arithmetic returns the longest arithmetic expression in q, or "".
func arithmetic(q string) string {
	s := wordOps.Replace(" " + strings.ToLower(q) + " ")
	s = percentOf.ReplaceAllString(s, "($1 / 100.0 * $2)")
	best := ""
	for _, m := range exprRun.FindAllString(s, -1) {
		m = strings.TrimSpace(m)
		if hasOp.MatchString(m) && len(m) > len(best) && strings.Count(m, "(") == strings.Count(m, ")") {
			best = m
		}
	}
	return best
}

// offlineCompose quotes each result and names the failures.
func offlineCompose(results string) string {
	var ok, failed []string
	for _, block := range strings.Split(results, "### ")[1:] {
		head, body, _ := strings.Cut(block, "\n")
		name, status, _ := strings.Cut(head, " ")
		status = strings.Trim(status, "()")
		first := strings.TrimSpace(firstLine(body))
		if status == string(StatusSucceeded) {
			ok = append(ok, fmt.Sprintf("From %s: %s", name, strings.TrimSuffix(first, ".")+"."))
		} else {
			failed = append(failed, fmt.Sprintf("The %s agent failed (%s), so this answer is partial.", name, strings.TrimPrefix(first, "error: ")))
		}
	}
	if len(ok) == 0 && len(failed) == 0 {
		return "No agent ran, so I have no answer."
	}
	return strings.Join(append(ok, failed...), " ")
}
