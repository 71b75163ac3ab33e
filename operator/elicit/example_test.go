package elicit_test

import (
	"context"
	"fmt"

	"github.com/agentgraph/agentgraph/operator/elicit"
)

// A Func answers questions with a function: here every question with an
// options list gets its first option.
func ExampleFunc() {
	var el elicit.Elicitor = elicit.Func(func(ctx context.Context, req elicit.Request) (elicit.Response, error) {
		if len(req.Options) == 0 {
			return elicit.Response{ElicitationID: req.ElicitationID, Action: elicit.Decline}, nil
		}
		return elicit.Response{ElicitationID: req.ElicitationID, Action: elicit.Accept,
			Content: map[string]any{"choice": req.Options[0]}}, nil
	})
	resp, err := el.Elicit(context.Background(), elicit.Request{ElicitationID: "q1", Message: "Which day?", Options: []string{"Mon", "Tue"}})
	fmt.Println(resp.ElicitationID, resp.Action, resp.Content["choice"], err)
	resp, _ = el.Elicit(context.Background(), elicit.Request{ElicitationID: "q2", Message: "Proceed?"})
	fmt.Println(resp.ElicitationID, resp.Action)
	// Output:
	// q1 accept Mon <nil>
	// q2 decline
}
