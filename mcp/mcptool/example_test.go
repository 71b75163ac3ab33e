package mcptool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/calculator"
	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/mcp/mcptool"
	"github.com/agentgraph/agentgraph/operator"
)

// The tools of an MCP server (here the examples' calculator, served in
// process) join a toolset beside local functions, and a model's call runs
// on the server.
func Example() {
	calc, err := calculator.New(calculator.Config{})
	if err != nil {
		log.Fatal(err)
	}
	m, err := mcp.NewManager(mcp.ManagerConfig{})
	if err != nil {
		log.Fatal(err)
	}
	defer m.Shutdown(context.Background())
	if err := m.Add(mcp.Server{Name: "calculator", InProcess: calc}); err != nil {
		log.Fatal(err)
	}
	reg, err := mcp.NewRegistry(mcp.RegistryConfig{Manager: m})
	if err != nil {
		log.Fatal(err)
	}

	ctx := context.Background()
	session := reg.NewSession(mcp.Callbacks{}) // one per request
	defer session.Close()
	remote, err := mcptool.Tools(ctx, reg, session, "calculate")
	if err != nil {
		log.Fatal(err)
	}
	type noArgs struct{}
	local := operator.MustFuncTool("today", "Tells today's date", func(context.Context, noArgs) (string, error) {
		return "2026-01-01", nil
	})
	tools, err := operator.NewToolset(append(remote, local)...)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(tools.Names())

	res, err := tools.Call(ctx, model.ToolCall{ID: "call_1", Name: "calculate", Arguments: json.RawMessage(`{"expression":"(49 * 10) / 12"}`)})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(res.CallID, res.IsError, res.Text())
	fmt.Println(string(res.Structured))

	// A program's own flow picks one server's tool by the server's name
	// for it, and reads the server's whole result.
	calculate, err := mcptool.New(ctx, reg, session, "calculate", mcptool.WithServer("calculator"))
	if err != nil {
		log.Fatal(err)
	}
	full, err := calculate.CallResult(ctx, json.RawMessage(`{"expression":"2 + 2"}`))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(full.Server, full.IsError, full.Text())
	// Output:
	// [calculate today]
	// call_1 false (49 * 10) / 12 = 40.8333333333333
	// {"expression":"(49 * 10) / 12","result":40.833333333333336,"formatted":"40.8333333333333"}
	// calculator false 2 + 2 = 4
}
