package sse_test

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/sse"
)

// A handler that streams a run's events: the run emits into an emitter,
// the stream serves it.
func ExampleStream() {
	handler := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		em := event.NewEmitter(event.EmitterConfig{RequestID: "req-1"})
		// A run that may outlive a dropped connection (for resumption) would
		// use context.WithoutCancel(r.Context()) and a deadline instead.
		ctx := r.Context()
		go func() { // the run
			defer em.Close()
			_ = em.Emit(ctx, Progress{Job: "report", Fraction: 0.5})
			_ = em.Emit(ctx, Progress{Job: "report", Fraction: 1})
			_ = em.Emit(ctx, event.Error{Message: "the printer is out of paper", Code: "no_paper"})
		}()
		st := sse.NewStream(sse.Config{})
		go st.Run(ctx, em.Events(ctx))
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
	d := event.NewDecoder()
	event.Register[Progress](d)
	for ev, err := range (sse.Reader{Decoder: d}).ReadEvents(resp.Body) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(ev.Seq, ev.Type, ev.Payload)
	}
	// Output:
	// 1 job.progress {report 0.5}
	// 2 job.progress {report 1}
	// 3 error {the printer is out of paper no_paper}
}

// Progress is an application's payload: how far a job is.
type Progress struct {
	Job      string  `json:"job"`
	Fraction float64 `json:"fraction"`
}

// EventType names the payload's type.
func (Progress) EventType() event.Type { return "job.progress" }

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
