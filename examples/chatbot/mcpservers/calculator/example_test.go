package calculator_test

import (
	"context"
	"fmt"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/calculator"
)

// Start the calculator in-process with tighter limits and run a program.
func Example() {
	ctx := context.Background()
	srv, err := calculator.New(calculator.Config{MaxSteps: 100_000, Timeout: time.Second})
	if err != nil {
		fmt.Println(err)
		return
	}
	c, err := client.NewInProcessClient(srv)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer c.Close()
	if err := c.Start(ctx); err != nil {
		fmt.Println(err)
		return
	}
	init := mcp.InitializeRequest{}
	init.Params.ClientInfo = mcp.Implementation{Name: "example", Version: "1.0.0"}
	if _, err := c.Initialize(ctx, init); err != nil {
		fmt.Println(err)
		return
	}

	for _, code := range []string{
		"result = sum([19, 49, 89]) * 12",
		"while True:\n    pass",
	} {
		req := mcp.CallToolRequest{}
		req.Params.Name = "run_code"
		req.Params.Arguments = map[string]any{"code": code}
		res, err := c.CallTool(ctx, req)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("isError=%v: %s\n", res.IsError, res.Content[0].(mcp.TextContent).Text)
	}
	// Output:
	// isError=false: result = 1884
	//
	// isError=true: run_code: step limit error: the program exceeded the limit of 100000 execution steps; reduce loop counts or simplify it
}

func ExampleEval() {
	v, err := calculator.Eval("49 * 12 * (1 - 0.4)")
	fmt.Println(calculator.FormatNumber(v), err)
	_, err = calculator.Eval("2 * (3 + 4")
	fmt.Println(err)
	// Output:
	// 352.8 <nil>
	// calculator: column 11: expected ")" to close the parenthesis at column 5, found end of expression
}
