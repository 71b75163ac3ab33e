package cortexr_test

import (
	"context"
	"fmt"

	"github.com/agentgraph/agentgraph/examples/cortexr"
)

// The seed's example, answered by the offline model: perception picks the
// math server, the plan chains two tool calls, the sandbox runs it.
func ExampleAgent_Run() {
	a, err := cortexr.New(cortexr.Config{}) // offline; memory not persisted
	if err != nil {
		panic(err)
	}
	defer a.Close(context.Background())
	q := "Find the ASCII values of characters in INDIA and then return sum of exponentials of those values"
	for ev, err := range a.Run(context.Background(), q) {
		if err != nil {
			panic(err)
		}
		switch ev.Kind {
		case cortexr.EventPerception:
			fmt.Println("servers:", ev.Perception.SelectedServers)
		case cortexr.EventToolCall:
			fmt.Println("tool:", ev.Tool.Name, "=", ev.Tool.Result)
		case cortexr.EventAnswer:
			fmt.Println(ev.Answer.Outcome+":", ev.Answer.Text)
		}
	}
	// Output:
	// servers: [math]
	// tool: strings_to_chars_to_int = [73 78 68 73 65]
	// tool: int_list_to_exponential_sum = 7.599822246093079e+33
	// answered: 7.599822246093079e+33
}
