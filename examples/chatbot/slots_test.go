package chatbot_test

import (
	"context"
	"fmt"
	"iter"
	"strings"
	"testing"
	"time"

	mcpgo "github.com/mark3labs/mcp-go/mcp"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/mcp"
	"github.com/agentgraph/agentgraph/operator/elicit"
)

// untilQuestion reads a turn's events up to its first question.
func untilQuestion(t *testing.T, name string, next func() (event.Event, error, bool)) chatevent.ElicitationRequest {
	t.Helper()
	for {
		ev, err, ok := next()
		if !ok || err != nil {
			t.Fatalf("%s ended (%v) without asking its question", name, err)
		}
		if q, is := ev.Payload.(chatevent.ElicitationRequest); is {
			return q
		}
	}
}

// TestQuestionsDoNotHoldTheServer reproduces a deadlock: with one running
// slot, more turns ask a question of the same MCP server (book_demo on the
// knowledge server) than the server's concurrency limit (10). A call
// waiting for a person's answer held the server's slot while the turn,
// once answered, waited for the running slot, which the extra turn held
// while it waited for a server slot: no turn could go on. Now every turn
// asks its question, another conversation's turn runs to its end while
// they wait, and each turn ends once answered.
func TestQuestionsDoNotHoldTheServer(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{MaxRunningTurns: 1, MaxPendingQuestions: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const n = 11 // one more than the server's default MaxConcurrent
	turns := make([]func() (event.Event, error, bool), n)
	questions := make([]chatevent.ElicitationRequest, n)
	for i := range n {
		turns[i] = openTurn(t, ctx, srv.URL, fmt.Sprintf("book-%d", i), "I would like to book a demo")
		questions[i] = untilQuestion(t, fmt.Sprintf("booking turn %d", i), turns[i])
	}
	if types := rest(openTurn(t, ctx, srv.URL, "hello", "Hello!")); len(types) == 0 || types[len(types)-1] != chatevent.TypeResponseDone {
		t.Fatalf("another conversation's turn while %d questions wait: %v", n, types)
	}
	for i, q := range questions {
		answer := postJSON(t, srv.URL+"/api/v1/elicitation/respond", map[string]any{
			"elicitation_id": q.ElicitationID, "action": "accept",
			"content": map[string]any{"email": fmt.Sprintf("user%d@example.com", i), "date": nextWeekday()},
		})
		answer.Body.Close()
		if answer.StatusCode != 200 {
			t.Fatalf("answer %d: %s", i, answer.Status)
		}
	}
	for i, next := range turns {
		if types := rest(next); len(types) == 0 || types[len(types)-1] != chatevent.TypeResponseDone {
			t.Errorf("booking turn %d after its answer: %v", i, types)
		}
	}
}

// principalTurn runs a turn of principal through the Bot API and returns its
// events as a pull iterator.
func principalTurn(t *testing.T, ctx context.Context, bot *chatbot.Bot, principal, conv, msg string) func() (event.Event, error, bool) {
	t.Helper()
	next, stop := iter.Pull2(bot.Chat(chatbot.WithPrincipal(ctx, principal), chatbot.Request{ConversationID: conv, Message: msg}))
	t.Cleanup(stop)
	return next
}

// TestPendingQuestionsCap: a principal has at most MaxPendingQuestions
// questions waiting for its answers; a tool asking one more gets an error
// that names the limit, and the turn ends without the question. Another
// principal still gets its questions asked, and once the first principal
// answered, it may be asked again.
func TestPendingQuestionsCap(t *testing.T) {
	bot, _ := newServer(t, chatbot.Config{MaxPendingQuestions: 1})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const book = "I would like to book a demo"
	first := principalTurn(t, ctx, bot, "alice", "a1", book)
	q := untilQuestion(t, "alice's first booking", first)

	var texts []string
	var asked bool
	second := principalTurn(t, ctx, bot, "alice", "a2", book)
	for {
		ev, err, ok := second()
		if !ok {
			break
		}
		if err != nil {
			texts = append(texts, err.Error())
			break
		}
		if _, is := ev.Payload.(chatevent.ElicitationRequest); is {
			asked = true
		}
		texts = append(texts, fmt.Sprintf("%+v", ev.Payload))
	}
	if asked {
		t.Fatal("alice's second booking asked a question while her first waited (MaxPendingQuestions 1)")
	}
	if !strings.Contains(strings.Join(texts, "\n"), "MaxPendingQuestions") {
		t.Errorf("alice's second booking does not say why it could not ask; its events:\n%s", strings.Join(texts, "\n"))
	}

	untilQuestion(t, "bob's booking", principalTurn(t, ctx, bot, "bob", "b1", book))

	if err := bot.Respond(chatbot.WithPrincipal(ctx, "alice"), chatevent.ElicitationResponse{Response: elicit.Response{
		ElicitationID: q.ElicitationID, Action: elicit.Accept,
		Content: map[string]any{"email": "alice@example.com", "date": nextWeekday()},
	}}); err != nil {
		t.Fatalf("alice's answer: %v", err)
	}
	if types := rest(first); len(types) == 0 || types[len(types)-1] != chatevent.TypeResponseDone {
		t.Fatalf("alice's first booking after her answer: %v", types)
	}
	untilQuestion(t, "alice's booking after her answer", principalTurn(t, ctx, bot, "alice", "a3", book))
}

// TestRunningSlotsFairAmongPrincipals: with one running slot, bob's turns
// waiting for it do not all go before alice's turn that came after them:
// when bob's running turn ends, alice's turn runs next, and ends while
// bob's next turn holds the slot.
func TestRunningSlotsFairAmongPrincipals(t *testing.T) {
	started := make(chan struct{}, 8)
	gate := make(chan struct{})
	web := webServer(func(ctx context.Context, _ mcpgo.CallToolRequest) (*mcpgo.CallToolResult, error) {
		started <- struct{}{}
		select {
		case <-gate:
			return mcpgo.NewToolResultText("Northwind Metrics shipped a release."), nil
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	})
	bot, _ := newServer(t, chatbot.Config{MaxRunningTurns: 1, NoBundledServers: true, MCPServers: []mcp.Server{web}})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		for !cond() {
			select {
			case <-ctx.Done():
				t.Fatalf("waiting for %s: %v", what, ctx.Err())
			case <-time.After(5 * time.Millisecond):
			}
		}
	}
	wait := func(what string) {
		t.Helper()
		select {
		case <-started:
		case <-ctx.Done():
			t.Fatalf("waiting for %s: %v", what, ctx.Err())
		}
	}

	const news = "What's the latest news about Northwind Metrics?"
	const bobs = 4
	ends := make(chan []event.Type, bobs)
	runBob := func(i int) {
		next := principalTurn(t, ctx, bot, "bob", fmt.Sprintf("bob-%d", i), news)
		go func() { ends <- rest(next) }()
	}
	runBob(0)
	wait("bob's first tool call")
	for i := 1; i < bobs; i++ {
		runBob(i)
	}
	waitFor("bob's turns to wait for the slot", func() bool { return chatbot.WaitingTurns(bot) == bobs-1 })
	alice := principalTurn(t, ctx, bot, "alice", "alice-1", "Hello!")
	aliceDone := make(chan []event.Type, 1)
	go func() { aliceDone <- rest(alice) }()
	waitFor("alice's turn to wait for the slot", func() bool { return chatbot.WaitingTurns(bot) == bobs })

	gate <- struct{}{} // bob's first turn ends
	wait("bob's next tool call")
	// Bob's next turn holds the slot and waits in its tool: alice's turn
	// ran before it.
	select {
	case types := <-aliceDone:
		if len(types) == 0 || types[len(types)-1] != chatevent.TypeResponseDone {
			t.Fatalf("alice's turn: %v", types)
		}
	case <-ctx.Done():
		t.Fatal("alice's turn did not run before bob's next turn: bob's waiting turns went first")
	}
	close(gate)
	for range bobs {
		if types := <-ends; len(types) == 0 || types[len(types)-1] != chatevent.TypeResponseDone {
			t.Errorf("a turn of bob's: %v", types)
		}
	}
}
