package event_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/agentgraph/agentgraph/event"
)

func ExampleEmitter() {
	em := event.NewEmitter(event.EmitterConfig{RequestID: "req-1"})
	ctx := context.Background()

	go func() { // the run
		defer em.Close()
		_ = em.Emit(ctx, event.SupervisorThinking{Message: "Analyzing your question..."})
		_ = em.Emit(ctx, event.ToolStart{Tool: "web_search"})
		_ = em.Emit(ctx, event.ResponseChunk{Content: "Python is..."})
		_ = em.Emit(ctx, event.ResponseDone{})
	}()

	for ev, err := range em.Events(ctx) { // the client
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println(ev.Seq, ev.Type, ev.Payload)
	}
	// Output:
	// 1 supervisor.thinking {Analyzing your question...}
	// 2 tool.start {web_search }
	// 3 response.chunk {Python is...}
	// 4 response.done {}
}

func ExampleMemoryBus_Subscribe() {
	bus := event.NewMemoryBus(event.BusConfig{})
	ctx := context.Background()

	var mu sync.Mutex
	var tools []string
	_, err := bus.Subscribe(ctx, "tool.*", func(ctx context.Context, ev event.Event) {
		mu.Lock()
		defer mu.Unlock()
		tools = append(tools, fmt.Sprintf("%s %v", ev.Type, ev.Payload))
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range []event.Payload{
		event.SupervisorThinking{Message: "thinking"},
		event.ToolStart{Tool: "rag_search"},
		event.ToolComplete{Tool: "rag_search", ContentCount: 2},
		event.ResponseDone{},
	} {
		_ = bus.Publish(ctx, event.Event{Payload: p})
	}
	_ = bus.Close(ctx) // handles what is queued, then stops

	for _, s := range tools {
		fmt.Println(s)
	}
	// Output:
	// tool.start {rag_search }
	// tool.complete {rag_search 2}
}

func ExampleToUserFacing() {
	internal := event.Event{RequestID: "req-1", Seq: 3, Payload: event.MCPProgress{Server: "analytics", Tool: "data_analyzer", Progress: 0.5, Message: "Processing..."}}
	ev, ok := event.ToUserFacing(internal)
	fmt.Println(ok, ev.Type, ev.Seq, ev.Payload)
	// Output: true tool.progress 3 {data_analyzer 0.5 Processing...}
}
