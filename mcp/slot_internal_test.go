package mcp

import (
	"context"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/operator/elicit"
)

// TestRetriedAttemptHoldsASlot: an attempt that follows one which ended
// while its elicitation waited runs with the call's concurrency slot, and
// the late answer of the first attempt's question, whose request has
// ended, neither waits for a slot past its request nor takes a second one.
func TestRetriedAttemptHoldsASlot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	m := &Manager{cfg: ManagerConfig{ElicitTimeout: time.Minute}}
	sem := make(chan struct{}, 1)
	c := &conn{m: m, spec: Server{Name: "demo"}, sem: sem, log: zap.NewNop()}
	asked := make(chan struct{})
	answer := make(chan struct{})
	s := m.NewSession(Callbacks{Elicit: func(ctx context.Context, req elicit.Request) (elicit.Response, error) {
		close(asked)
		select {
		case <-answer:
		case <-ctx.Done():
			return elicit.Response{}, ctx.Err()
		}
		return elicit.Response{Action: elicit.Accept}, nil
	}})
	defer s.Close()
	sem <- struct{}{} // the call's slot, taken as it starts
	cl := &call{session: s, tool: "ask", sem: sem, held: true, ctx: ctx}

	// Attempt 1 asks; its request's context ends with the attempt.
	reqCtx, endAttempt := context.WithCancel(context.WithValue(ctx, callKey{}, cl))
	done := make(chan error, 1)
	go func() {
		_, err := elicitor{c}.Elicit(reqCtx, mcpgo.ElicitationRequest{})
		done <- err
	}()
	select {
	case <-asked:
	case <-ctx.Done():
		t.Fatal("the question was never asked")
	}
	if len(sem) != 0 {
		t.Fatal("the call holds its slot while its question waits")
	}
	sem <- struct{}{} // another call takes the free slot

	// The answer comes while the other call runs; then attempt 1 ends.
	close(answer)
	endAttempt()
	select {
	case err := <-done:
		if err == nil {
			t.Error("the answer went back without a slot")
		}
	case <-ctx.Done():
		t.Fatal("the answer's handler waits for a slot after its request ended")
	}
	<-sem // the other call ends

	// Attempt 2 goes out holding the slot.
	if err := cl.holdSlot(ctx); err != nil {
		t.Fatal(err)
	}
	if len(sem) != 1 || !cl.held {
		t.Fatalf("the retried attempt runs without a slot: %d taken, held %v", len(sem), cl.held)
	}
	cl.endSlot()
	if len(sem) != 0 {
		t.Fatalf("%d slots still taken after the call returned", len(sem))
	}
}
