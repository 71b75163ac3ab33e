package operator_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/operator"
)

// BenchmarkToolsetCall measures a model's tool call through a toolset to a
// FuncTool: lookup, schema check, strict decoding, tag validation, the
// function and the result's encoding.
func BenchmarkToolsetCall(b *testing.B) {
	weather := operator.MustFuncTool("get_weather", "Gets the weather", func(_ context.Context, in WeatherArgs) (Weather, error) {
		return Weather{City: in.City, Temperature: 18, Units: "celsius"}, nil
	})
	set, err := operator.NewToolset(weather, echoTool("echo"))
	if err != nil {
		b.Fatal(err)
	}
	call := model.ToolCall{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris","units":"celsius"}`)}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		res, err := set.Call(ctx, call)
		if err != nil || res.IsError {
			b.Fatal(res, err)
		}
	}
}

// BenchmarkToolsetDefinitions measures the definitions of a model request.
func BenchmarkToolsetDefinitions(b *testing.B) {
	var set operator.Toolset
	for _, n := range []string{"a", "b", "c", "d", "e", "f", "g", "h"} {
		if err := set.Add(echoTool(n)); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if len(set.Definitions()) != 8 {
			b.Fatal("wrong count")
		}
	}
}
