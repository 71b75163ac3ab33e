package natsbus

import (
	"context"
	"github.com/agentgraph/agentgraph/event/internal/eventtest"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/agentgraph/agentgraph/event"
)

// An event published under a span reaches another instance's handler with
// that span's context as the remote parent of the handler's context; an
// event published without one reaches it with none.
func TestTraceContextAcrossInstances(t *testing.T) {
	url, prefix := natsURL(t), uniquePrefix()
	a, b := newBus(t, url, prefix), newBus(t, url, prefix)
	got := make(chan trace.SpanContext, 2)
	if _, err := b.Subscribe(context.Background(), "tool.*", func(ctx context.Context, ev event.Event) {
		if _, ok := ev.Payload.(eventtest.ToolStart); !ok {
			t.Errorf("payload %T, want eventtest.ToolStart", ev.Payload)
		}
		got <- trace.SpanContextFromContext(ctx)
	}); err != nil {
		t.Fatal(err)
	}
	tp := sdktrace.NewTracerProvider()
	defer func() { _ = tp.Shutdown(context.Background()) }()
	ctx, span := tp.Tracer("test").Start(context.Background(), "publish")
	defer span.End()
	if err := a.Publish(ctx, event.Event{RequestID: "r", Payload: eventtest.ToolStart{Tool: "search"}}); err != nil {
		t.Fatal(err)
	}
	if err := a.Publish(context.Background(), event.Event{RequestID: "r", Payload: eventtest.ToolStart{Tool: "search"}}); err != nil {
		t.Fatal(err)
	}
	var seen []trace.SpanContext
	for len(seen) < 2 {
		select {
		case sc := <-got:
			seen = append(seen, sc)
		case <-time.After(30 * time.Second):
			t.Fatalf("received %d of 2 events", len(seen))
		}
	}
	want := span.SpanContext()
	if sc := seen[0]; sc.TraceID() != want.TraceID() || sc.SpanID() != want.SpanID() || !sc.IsRemote() || !sc.IsSampled() {
		t.Errorf("handler's span context = %v, want the publisher's %v as remote", sc, want)
	}
	if seen[1].IsValid() {
		t.Errorf("an event published without a span arrived with span context %v", seen[1])
	}
}
