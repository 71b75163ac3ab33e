package react_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/agent/react"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/operator"
)

// exampleModel stands in for a language model in the examples: it calls
// get_weather for Paris, then answers from the result, streaming the answer
// word by word.
type exampleModel struct{}

func (exampleModel) Generate(_ context.Context, req *model.Request) (*model.Response, error) {
	last := req.Messages[len(req.Messages)-1]
	if last.Role != model.RoleTool {
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, Parts: []model.Part{
			model.ToolCallPart(model.ToolCall{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)}),
		}}, Usage: model.Usage{InputTokens: 40, OutputTokens: 12}}, nil
	}
	r := last.Parts[0].ToolResult
	if r.IsError {
		return &model.Response{Message: model.Assistant("I could not look it up: " + r.Text()), Usage: model.Usage{InputTokens: 60, OutputTokens: 9}}, nil
	}
	return &model.Response{Message: model.Assistant("It is " + r.Text() + " in Paris."), Usage: model.Usage{InputTokens: 60, OutputTokens: 6}}, nil
}

func (m exampleModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		resp, err := m.Generate(ctx, req)
		if err != nil {
			yield(model.Chunk{}, err)
			return
		}
		for _, w := range strings.SplitAfter(resp.Text(), " ") {
			if w != "" && !yield(model.Chunk{Kind: model.ChunkText, Text: w}, nil) {
				return
			}
		}
		yield(model.Chunk{Kind: model.ChunkDone, Response: resp}, nil)
	}
}

type City struct {
	City string `json:"city" validate:"required"`
}

func getWeather(_ context.Context, in City) (string, error) { return "18 °C", nil }

func Example() {
	weather := operator.MustFuncTool("get_weather", "Current temperature of a city.", getWeather)
	ag, err := react.New(react.Config{
		Model:        exampleModel{}, // a provider's model in a program
		Tools:        []operator.Tool{weather},
		Instructions: "Answer weather questions with get_weather.",
	})
	if err != nil {
		panic(err)
	}
	s, err := ag.Invoke(context.Background(), react.Input("How warm is Paris?"))
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Reply())
	fmt.Println(s.Outcome, s.Iterations, "model calls,", s.RunUsage.Total(), "tokens")
	// Output:
	// It is 18 °C in Paris.
	// answered 2 model calls, 118 tokens
}

// Stream the answer as the model writes it: the messages stream mode
// carries the model's chunks, named by node.
func Example_streaming() {
	weather := operator.MustFuncTool("get_weather", "Current temperature of a city.", getWeather)
	ag, err := react.New(react.Config{Model: exampleModel{}, Tools: []operator.Tool{weather}})
	if err != nil {
		panic(err)
	}
	for ev, err := range ag.Stream(context.Background(), react.Input("How warm is Paris?"), graph.WithModes(graph.StreamMessages)) {
		if err != nil {
			panic(err)
		}
		if c, ok := ev.Chunk(); ok && c.Kind == model.ChunkText {
			fmt.Printf("%s: %q\n", ev.Node, c.Text)
		}
	}
	// Output:
	// model: "It "
	// model: "is "
	// model: "18 "
	// model: "°C "
	// model: "in "
	// model: "Paris."
}

// Approval: the run pauses before get_weather runs, with the proposed calls;
// a person (here, code) rejects the call with a message the model reads.
// With a SQLite or PostgreSQL checkpointer the resume can happen in another
// process, any time later.
func Example_approval() {
	weather := operator.MustFuncTool("get_weather", "Current temperature of a city.", getWeather)
	ag, err := react.New(react.Config{
		Model:        exampleModel{},
		Tools:        []operator.Tool{weather},
		Approve:      []string{"get_weather"},
		Checkpointer: checkpoint.NewMemory(),
	})
	if err != nil {
		panic(err)
	}
	ctx, thread := context.Background(), ag.Thread("user-42")
	_, err = thread.Invoke(ctx, react.Input("How warm is Paris?"))
	var paused *graph.InterruptError
	if !errors.As(err, &paused) {
		panic(err)
	}
	var review react.Review
	if err := paused.Interrupts[0].Decode(&review); err != nil {
		panic(err)
	}
	c := review.Calls[0]
	fmt.Printf("proposed: %s %s\n", c.Name, c.Arguments)

	s, err := thread.Invoke(ctx, react.State{}, graph.Resume([]react.Decision{
		react.Reject(c, "weather lookups are disabled today"),
	}))
	if err != nil {
		panic(err)
	}
	fmt.Println(s.Reply())
	// Output:
	// proposed: get_weather {"city":"Paris"}
	// I could not look it up: weather lookups are disabled today
}
