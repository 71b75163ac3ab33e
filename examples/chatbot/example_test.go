package chatbot_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/agentgraph/agentgraph/examples/chatbot"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
)

// Embedding the bot in another server: its API mounted under /bot/ next to
// the server's own routes.
func Example() {
	ctx := context.Background()
	bot, err := chatbot.New(ctx, chatbot.Config{Offline: true})
	if err != nil {
		log.Fatal(err)
	}
	defer bot.Close(ctx)

	mux := http.NewServeMux()
	mux.Handle("/bot/", http.StripPrefix("/bot", bot.Handler()))
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "my service") })
	srv := httptest.NewServer(mux) // http.ListenAndServe(":8080", mux) in a real program
	defer srv.Close()

	resp, err := http.Post(srv.URL+"/bot/api/v1/chat/sync", "application/json",
		strings.NewReader(`{"message": "What is 15% of 240?"}`))
	if err != nil {
		log.Fatal(err)
	}
	defer resp.Body.Close()
	var answer chatbot.SyncResponse
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil {
		log.Fatal(err)
	}
	fmt.Println(answer.Action)
	fmt.Println(answer.Response)
	// Output:
	// call_tool
	// The calculator gives (15/100*240) = 36.
}

// One turn from Go: the events of a greeting, the answer's chunks joined.
func ExampleBot_Chat() {
	ctx := context.Background()
	bot, err := chatbot.New(ctx, chatbot.Config{Offline: true})
	if err != nil {
		log.Fatal(err)
	}
	defer bot.Close(ctx)

	var answer strings.Builder
	for ev, err := range bot.Chat(ctx, chatbot.Request{ConversationID: "demo", Message: "Hello!"}) {
		if err != nil {
			log.Fatal(err)
		}
		switch p := ev.Payload.(type) {
		case chatevent.ResponseChunk:
			answer.WriteString(p.Content)
		case chatevent.SupervisorDecided:
			fmt.Println(ev.Type, p.Action)
		default:
			fmt.Println(ev.Type)
		}
	}
	fmt.Println(answer.String())
	// Output:
	// supervisor.thinking
	// supervisor.decided answer
	// token.usage
	// response.done
	// Hello! I'm the offline demo assistant. I can answer questions about our products, pricing and policies, search the web snapshot and do arithmetic. What would you like to know?
}
