package natsbus_test

import (
	"context"
	"log"
	"time"

	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/event/natsbus"
)

// Every instance of a service opens a bus on the same NATS server and
// subject prefix; a subscriber on one sees what any instance publishes.
func Example() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	d := event.NewDecoder()
	event.Register[JobFailed](d) // the application's payloads
	bus, err := natsbus.New(ctx, natsbus.Config{URL: "nats://127.0.0.1:4222", Decoder: d})
	if err != nil {
		log.Fatal(err)
	}
	defer bus.Close(ctx)

	// Audit every failure, whichever instance ran the job.
	if _, err := bus.Subscribe(ctx, "*.error", func(ctx context.Context, ev event.Event) {
		log.Printf("request %s: %s %+v", ev.RequestID, ev.Type, ev.Payload)
	}); err != nil {
		log.Fatal(err)
	}

	// Emitters publish to it as well as to their client.
	em := event.NewEmitter(event.EmitterConfig{Bus: bus})
	defer em.Close()
	_ = em.Emit(ctx, JobFailed{Job: "nightly-report", Reason: "timeout"})
}

// JobFailed is an application's payload.
type JobFailed struct {
	Job    string `json:"job"`
	Reason string `json:"reason"`
}

// EventType names the payload's type.
func (JobFailed) EventType() event.Type { return "job.error" }
