package chatbot_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/mcp"
)

// startQuestion starts a turn that stops at book_demo's question and
// returns the question and a channel that receives the turn's events and
// then its error (nil when the iterator ended without one) once it ends.
func startQuestion(t *testing.T, bot *chatbot.Bot) (chatevent.ElicitationRequest, <-chan error, *[]event.Type) {
	t.Helper()
	asked := make(chan chatevent.ElicitationRequest, 1)
	ended := make(chan error, 1)
	var types []event.Type
	go func() {
		var last error
		for ev, err := range bot.Chat(context.Background(), chatbot.Request{ConversationID: "drain", Message: "I would like to book a demo"}) {
			if err != nil {
				last = err
				break
			}
			types = append(types, ev.Type)
			if q, ok := ev.Payload.(chatevent.ElicitationRequest); ok {
				asked <- q
			}
		}
		ended <- last
	}()
	select {
	case q := <-asked:
		return q, ended, &types
	case err := <-ended:
		t.Fatalf("the turn ended before asking: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("no elicitation.request within 20s")
	}
	panic("unreachable")
}

// TestCloseDrainsTurnInFlight closes the bot while a turn waits for a
// tool: Close refuses new turns at once but waits for the turn in flight,
// which finishes its answer once the tool answers.
func TestCloseDrainsTurnInFlight(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	web, started, release := heldWebSearch()
	bot, err := chatbot.New(context.Background(), chatbot.Config{Offline: true, DataDir: t.TempDir(),
		NoBundledServers: true, MCPServers: []mcp.Server{web}})
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	var types []event.Type
	go func() {
		var last error
		for ev, err := range bot.Chat(context.Background(), chatbot.Request{ConversationID: "drain", Message: "What's the latest news about Northwind Metrics?"}) {
			if err != nil {
				last = err
				break
			}
			types = append(types, ev.Type)
		}
		ended <- last
	}()
	select {
	case <-started:
	case err := <-ended:
		t.Fatalf("the turn ended before its tool started: %v", err)
	case <-time.After(20 * time.Second):
		t.Fatal("the tool did not start within 20s")
	}

	closed := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		closed <- bot.Close(ctx)
	}()
	// Close has begun once new turns are refused.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var got error
		for _, err := range bot.Chat(context.Background(), chatbot.Request{Message: "Hello!"}) {
			got = err
			break
		}
		if errors.Is(got, chatbot.ErrClosed) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("Chat during Close: %v, want ErrClosed", got)
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-closed:
		t.Fatalf("Close returned (%v) while a turn was waiting for its tool", err)
	case err := <-ended:
		t.Fatalf("the turn in flight ended (%v) before its tool answered", err)
	case <-time.After(200 * time.Millisecond):
	}

	release()
	if err := <-ended; err != nil {
		t.Fatalf("the drained turn failed: %v", err)
	}
	if got := types[len(types)-1]; got != chatevent.TypeResponseDone {
		t.Errorf("the drained turn ended with %s, want response.done; events %v", got, types)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	goleak.VerifyNone(t, ignore)
}

// TestCloseEndsUnansweredQuestion closes the bot, with a deadline far
// away, while a turn waits for an answer no one will give: Close does not
// wait for it, the turn ends with ErrClosed, and nothing the bot started
// is left running.
func TestCloseEndsUnansweredQuestion(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	bot, err := chatbot.New(context.Background(), chatbot.Config{Offline: true, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	_, ended, _ := startQuestion(t, bot)

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	closed := make(chan error, 1)
	go func() { closed <- bot.Close(ctx) }()
	select {
	case err := <-ended:
		if !errors.Is(err, chatbot.ErrClosed) || !strings.Contains(err.Error(), "shutting down") {
			t.Errorf("the turn ended with %v, want ErrClosed saying the server is shutting down", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the turn waiting for an answer was still running 30s into Close")
	}
	select {
	case err := <-closed:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Close did not return")
	}
	goleak.VerifyNone(t, ignore)
}

// TestCloseDeadlineCancelsTurn closes the bot with a short deadline while a
// turn waits for a tool that never answers: when the deadline passes the
// turn is cancelled, Close returns, and nothing the bot started is left
// running.
func TestCloseDeadlineCancelsTurn(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	web, started, release := heldWebSearch()
	defer release()
	bot, err := chatbot.New(context.Background(), chatbot.Config{Offline: true, DataDir: t.TempDir(),
		NoBundledServers: true, MCPServers: []mcp.Server{web}})
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan error, 1)
	go func() {
		var last error
		for _, err := range bot.Chat(context.Background(), chatbot.Request{Message: "What's the latest news about Northwind Metrics?"}) {
			if err != nil {
				last = err
				break
			}
		}
		ended <- last
	}()
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		t.Fatal("the tool did not start within 20s")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_ = bot.Close(ctx) // the deadline passes; the error only reports how the shutdown went
	select {
	case err := <-ended:
		if !errors.Is(err, chatbot.ErrClosed) {
			t.Errorf("the cut turn ended with %v, want ErrClosed", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the turn was still running 10s after Close returned")
	}
	goleak.VerifyNone(t, ignore)
}
