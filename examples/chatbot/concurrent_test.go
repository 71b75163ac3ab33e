package chatbot_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
)

// TestConcurrentChats runs 100 conversations at once over HTTP, on SQLite
// storage: every turn ends with its terminal event, each conversation's
// history holds its own exchange, and Close (in the cleanup) leaves no
// goroutine.
func TestConcurrentChats(t *testing.T) {
	_, srv := newServer(t, chatbot.Config{})
	questions := []struct {
		message string
		last    event.Type
	}{
		{"Hello!", chatevent.TypeResponseDone},
		{"What is 15% of 240?", chatevent.TypeResponseDone},
		{"How much does the Team plan cost?", chatevent.TypeResponseDone},
		{"Update the document", chatevent.TypeClarifyRequest},
		{"Compare our pricing to competitors", chatevent.TypeResponseDone},
	}
	const n = 100
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q := questions[i%len(questions)]
			tr, err := chatErr(srv, fmt.Sprintf("conc-%d", i), q.message)
			if err != nil {
				t.Errorf("chat %d: %v", i, err)
				return
			}
			if tr.last() != q.last {
				t.Errorf("chat %d (%s) ended with %s; events %v", i, q.message, tr.last(), tr.types())
			}
		}()
	}
	wg.Wait()
	for i := range n {
		hist := history(t, srv, fmt.Sprintf("conc-%d", i))
		if len(hist) != 2 || hist[0].Content != questions[i%len(questions)].message {
			t.Errorf("history of conc-%d: %+v", i, hist)
		}
	}
}
