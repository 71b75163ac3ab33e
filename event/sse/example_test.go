package sse_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/sse"
)

// A chat handler: the run emits into an emitter, the stream serves it.
func ExampleStream() {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		em := event.NewEmitter(event.EmitterConfig{RequestID: "req-1"})
		// A run that may outlive a dropped connection (for resumption) would
		// use context.WithoutCancel(r.Context()) and a deadline instead.
		ctx := r.Context()
		go func() { // the agent run
			defer em.Close()
			_ = em.Emit(ctx, event.SupervisorThinking{Message: "Analyzing your question..."})
			_ = em.Emit(ctx, event.MCPProgress{Server: "search", Tool: "web_search", Progress: 0.5})
			_ = em.Emit(ctx, event.ResponseChunk{Content: "Python is..."})
			_ = em.Emit(ctx, event.ResponseDone{})
		}()
		st := sse.NewStream(sse.Config{})
		go st.Run(ctx, event.UserFacing(em.Events(ctx)))
		st.ServeHTTP(w, r) // returns once the client has every event
	})
	srv := httptest.NewServer(handler)
	defer srv.Close()

	resp, err := http.Get(srv.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer resp.Body.Close()
	for ev, err := range sse.ReadEvents(resp.Body) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(ev.Seq, ev.Type, ev.Payload)
	}
	// Output:
	// 1 supervisor.thinking {Analyzing your question...}
	// 2 tool.progress {web_search 0.5 }
	// 3 response.chunk {Python is...}
	// 4 response.done {}
}

func ExampleRead() {
	stream := "retry: 2000\n: comments are skipped\nid: 1\nevent: greeting\ndata: hello\ndata: world\n\n"
	for msg, err := range sse.Read(strings.NewReader(stream)) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s %s %q %v\n", msg.ID, msg.Event, msg.Data, msg.Retry)
	}
	// Output: 1 greeting "hello\nworld" 2s
}
