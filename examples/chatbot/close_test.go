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
)

// startQuestion starts a turn that stops at book_demo's question and
// returns the question and a channel that receives the turn's events and
// then its error (nil when the iterator ended without one) once it ends.
func startQuestion(t *testing.T, bot *chatbot.Bot) (event.ElicitationRequest, <-chan error, *[]event.Type) {
	t.Helper()
	asked := make(chan event.ElicitationRequest, 1)
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
			if q, ok := ev.Payload.(event.ElicitationRequest); ok {
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

// TestCloseDrainsTurnInFlight closes the bot while a turn waits for the
// user's answer: Close refuses new turns at once but waits for the turn in
// flight, which finishes its answer once the question is answered.
func TestCloseDrainsTurnInFlight(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	bot, err := chatbot.New(context.Background(), chatbot.Config{Offline: true, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	q, ended, types := startQuestion(t, bot)

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
		t.Fatalf("Close returned (%v) while a turn was waiting for its answer", err)
	case err := <-ended:
		t.Fatalf("the turn in flight ended (%v) before its question was answered", err)
	case <-time.After(200 * time.Millisecond):
	}

	err = bot.Respond(event.ElicitationResponse{ElicitationID: q.ElicitationID, Action: event.ActionAccept,
		Content: map[string]any{"email": "ada@example.com", "date": nextWeekday()}})
	if err != nil {
		t.Fatalf("Respond during Close: %v", err)
	}
	if err := <-ended; err != nil {
		t.Fatalf("the drained turn failed: %v", err)
	}
	if got := (*types)[len(*types)-1]; got != event.TypeResponseDone {
		t.Errorf("the drained turn ended with %s, want response.done; events %v", got, *types)
	}
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v", err)
	}
	goleak.VerifyNone(t, ignore)
}

// TestCloseDeadlineCancelsTurn closes the bot with a short deadline while a
// turn waits for an answer that never comes: when the deadline passes the
// turn is cancelled, Close returns, and nothing the bot started is left
// running.
func TestCloseDeadlineCancelsTurn(t *testing.T) {
	ignore := goleak.IgnoreCurrent()
	bot, err := chatbot.New(context.Background(), chatbot.Config{Offline: true, DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	_, ended, _ := startQuestion(t, bot)

	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	_ = bot.Close(ctx) // the deadline passes; the error only reports how the shutdown went
	select {
	case err := <-ended:
		if err == nil || !strings.Contains(err.Error(), "context canceled") && !errors.Is(err, context.Canceled) {
			t.Errorf("the cut turn ended with %v, want a cancellation", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the turn was still running 10s after Close returned")
	}
	goleak.VerifyNone(t, ignore)
}
