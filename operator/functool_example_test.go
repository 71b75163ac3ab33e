package operator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/operator"
)

// WeatherArgs are the arguments of the get_weather tool. The json tags name
// them, jsonschema tags describe them to the model, validate tags check them
// before the function runs.
type WeatherArgs struct {
	City  string `json:"city" jsonschema:"description=City name" validate:"min=2"`
	Units string `json:"units,omitempty" jsonschema:"enum=celsius,enum=fahrenheit" validate:"omitempty,oneof=celsius fahrenheit"`
}

// Weather is the result of get_weather: the model reads it as JSON, a
// program reads Structured.
type Weather struct {
	City        string  `json:"city"`
	Temperature float64 `json:"temperature"`
	Units       string  `json:"units"`
}

// CalcArgs are the arguments of the add tool.
type CalcArgs struct {
	A float64 `json:"a"`
	B float64 `json:"b"`
}

// A typed Go function becomes a tool: the model sees its definition, and a
// call with bad arguments comes back as an error result the model can
// correct, without running the function.
func ExampleFuncTool() {
	weather, err := operator.FuncTool("get_weather", "Gets the current weather of a city",
		func(ctx context.Context, in WeatherArgs) (Weather, error) {
			units := in.Units
			if units == "" {
				units = "celsius"
			}
			return Weather{City: in.City, Temperature: 18, Units: units}, nil
		})
	if err != nil {
		log.Fatal(err)
	}
	add := operator.MustFuncTool("add", "Adds two numbers",
		func(ctx context.Context, in CalcArgs) (float64, error) { return in.A + in.B, nil })

	tools, err := operator.NewToolset(weather, add)
	if err != nil {
		log.Fatal(err)
	}
	// The definitions go into model.Request.Tools.
	for _, d := range tools.Definitions() {
		fmt.Printf("%s: %s\n  %s\n", d.Name, d.Description, d.Parameters)
	}

	ctx := context.Background()
	// The model's tool calls run by name.
	res, _ := tools.Call(ctx, model.ToolCall{ID: "call_1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Paris"}`)})
	fmt.Println(res.CallID, res.Text())
	res, _ = tools.Call(ctx, model.ToolCall{ID: "call_2", Name: "add", Arguments: json.RawMessage(`{"a":2,"b":3.5}`)})
	fmt.Println(res.CallID, res.Text())

	// A bad call: the function does not run; the model reads why.
	res, _ = tools.Call(ctx, model.ToolCall{ID: "call_3", Name: "get_weather", Arguments: json.RawMessage(`{"town":"Paris","units":"kelvin"}`)})
	fmt.Println(res.CallID, "error:", res.IsError)
	fmt.Println(res.Text())
	// Output:
	// get_weather: Gets the current weather of a city
	//   {"additionalProperties":false,"properties":{"city":{"description":"City name","type":"string"},"units":{"enum":["celsius","fahrenheit"],"type":"string"}},"required":["city"],"type":"object"}
	// add: Adds two numbers
	//   {"additionalProperties":false,"properties":{"a":{"type":"number"},"b":{"type":"number"}},"required":["a","b"],"type":"object"}
	// call_1 {"city":"Paris","temperature":18,"units":"celsius"}
	// call_2 5.5
	// call_3 error: true
	// Invalid arguments for tool get_weather:
	// - city: is required but missing
	// - town: is not a known argument; remove it
	// - units: value must be one of 'celsius', 'fahrenheit'
	// Correct the arguments and call the tool again.
}
