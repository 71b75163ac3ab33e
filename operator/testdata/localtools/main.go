// Command localtools is a program whose tools are all local: it imports
// operator and no MCP package, so it must not link the MCP client.
package main

import (
	"context"
	"fmt"

	"github.com/agentgraph/agentgraph/operator"
)

type args struct {
	A, B int
}

func main() {
	add := operator.MustFuncTool("add", "Adds two numbers", func(_ context.Context, in args) (int, error) { return in.A + in.B, nil })
	tools, err := operator.NewToolset(add)
	if err != nil {
		panic(err)
	}
	fmt.Println(tools.Names())
}
