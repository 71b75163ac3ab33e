package main

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"slices"
	"strings"

	"github.com/agentgraph/agentgraph/agent/model"
)

// demoModel is the offline demo model: a script, not a language model. It
// follows the tool-calling protocol the way a model would, reading the
// conversation it is sent: it looks up the weather of the demo cities the
// last question names, compares two of them with the calculator, and
// answers from the results. A question that names no city is answered from
// the thread's earlier questions, which shows the conversation memory.
type demoModel struct{}

func (demoModel) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	msgs := req.Messages
	u := -1
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == model.RoleUser {
			u = i
			break
		}
	}
	if u < 0 {
		return demoAnswer("Ask me about the weather in a city."), nil
	}
	cities := citiesIn(msgs[u].Text())
	if len(cities) == 0 {
		var earlier []string
		for _, m := range msgs[:u] {
			if m.Role == model.RoleUser {
				for _, c := range citiesIn(m.Text()) {
					if !slices.Contains(earlier, c) {
						earlier = append(earlier, c)
					}
				}
			}
		}
		if len(earlier) == 0 {
			return demoAnswer("Ask me about the weather in Paris, Rome, London, Berlin, Madrid or Oslo."), nil
		}
		return demoAnswer("Earlier in this conversation you asked about " + strings.Join(earlier, " and ") + "."), nil
	}
	// What this turn's tool calls returned.
	temps := map[string]float64{}
	var diff *float64
	callOf := map[string]model.ToolCall{}
	for _, m := range msgs[u+1:] {
		for _, c := range m.ToolCalls() {
			callOf[c.ID] = c
		}
		for _, p := range m.Parts {
			r := p.ToolResult
			if r == nil || r.IsError {
				continue
			}
			switch c := callOf[r.CallID]; c.Name {
			case "get_weather":
				var a WeatherArgs
				var t float64
				if json.Unmarshal(c.Arguments, &a) == nil {
					if _, err := fmt.Sscanf(r.Text(), "%g", &t); err == nil {
						temps[strings.ToLower(a.City)] = t
					}
				}
			case "calculate":
				var v float64
				if json.Unmarshal(r.Structured, &v) == nil {
					diff = &v
				}
			}
		}
	}
	var calls []model.ToolCall
	for _, c := range cities {
		if _, ok := temps[strings.ToLower(c)]; !ok {
			args, _ := json.Marshal(WeatherArgs{City: c})
			calls = append(calls, model.ToolCall{ID: fmt.Sprintf("call_%d_%s", len(msgs), strings.ToLower(c)), Name: "get_weather", Arguments: args})
		}
	}
	if len(calls) > 0 {
		return demoCalls(calls...), nil
	}
	if len(cities) == 1 {
		return demoAnswer(fmt.Sprintf("It is %g °C in %s.", temps[strings.ToLower(cities[0])], cities[0])), nil
	}
	a, b := cities[0], cities[1]
	ta, tb := temps[strings.ToLower(a)], temps[strings.ToLower(b)]
	if tb > ta {
		a, b, ta, tb = b, a, tb, ta
	}
	if diff == nil {
		args, _ := json.Marshal(CalcArgs{A: ta, Op: "-", B: tb})
		return demoCalls(model.ToolCall{ID: fmt.Sprintf("call_%d_calc", len(msgs)), Name: "calculate", Arguments: args}), nil
	}
	return demoAnswer(fmt.Sprintf("It is warmer in %s (%g °C) than in %s (%g °C), by %g degrees.", a, ta, b, tb, *diff)), nil
}

// Stream streams Generate's reply: the text word by word, each tool call
// as one delta.
func (d demoModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		resp, err := d.Generate(ctx, req)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		for _, w := range strings.SplitAfter(resp.Text(), " ") {
			if w != "" && !yield(model.Chunk{Kind: model.ChunkText, Text: w}, nil) {
				return
			}
		}
		for i, c := range resp.ToolCalls() {
			if !yield(model.Chunk{Kind: model.ChunkToolCall, ToolCall: &model.ToolCallDelta{Index: i, ID: c.ID, Name: c.Name, Arguments: string(c.Arguments)}}, nil) {
				return
			}
		}
		yield(model.Chunk{Kind: model.ChunkDone, Response: resp}, nil)
	}
}

func citiesIn(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(text, func(r rune) bool { return !('a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') }) {
		if _, ok := demoWeather[strings.ToLower(w)]; ok && !slices.Contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

func demoAnswer(text string) *model.Response {
	return &model.Response{Message: model.Assistant(text), FinishReason: model.FinishStop, Model: "offline-demo",
		Usage: model.Usage{InputTokens: 30, OutputTokens: len(strings.Fields(text))}}
}

func demoCalls(calls ...model.ToolCall) *model.Response {
	m := model.Message{Role: model.RoleAssistant}
	for _, c := range calls {
		m.Parts = append(m.Parts, model.ToolCallPart(c))
	}
	return &model.Response{Message: m, FinishReason: model.FinishToolCalls, Model: "offline-demo", Usage: model.Usage{InputTokens: 30, OutputTokens: 10}}
}
