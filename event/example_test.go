package event_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/agentgraph/agentgraph/event"
)

// An application defines its payloads: structs whose EventType names
// their type.
type (
	// OrderPlaced reports a new order.
	OrderPlaced struct {
		Order string `json:"order"`
	}
	// PackingProgress reports how much of an order is packed. A newer
	// report of the same order replaces a queued one.
	PackingProgress struct {
		Order    string  `json:"order"`
		Progress float64 `json:"progress"`
	}
	// OrderShipped reports that an order left.
	OrderShipped struct {
		Order   string `json:"order"`
		Carrier string `json:"carrier"`
	}
)

func (OrderPlaced) EventType() event.Type     { return "order.placed" }
func (PackingProgress) EventType() event.Type { return "order.packing" }
func (p PackingProgress) CoalesceKey() string { return p.Order }
func (OrderShipped) EventType() event.Type    { return "order.shipped" }
func (p OrderPlaced) Validate() error {
	if p.Order == "" {
		return &event.ValidationError{Type: p.EventType(), Field: "order", Reason: "is empty; set it"}
	}
	return nil
}

func ExampleEmitter() {
	em := event.NewEmitter(event.EmitterConfig{RequestID: "req-1"})
	ctx := context.Background()

	go func() { // the run
		defer em.Close()
		_ = em.Emit(ctx, OrderPlaced{Order: "A-17"})
		_ = em.Emit(ctx, PackingProgress{Order: "A-17", Progress: 0.5})
		_ = em.Emit(ctx, OrderShipped{Order: "A-17", Carrier: "post"})
	}()

	for ev, err := range em.Events(ctx) { // the client
		if err != nil {
			fmt.Println("error:", err)
			return
		}
		fmt.Println(ev.Seq, ev.Type, ev.Payload)
	}
	// Output:
	// 1 order.placed {A-17}
	// 2 order.packing {A-17 0.5}
	// 3 order.shipped {A-17 post}
}

func ExampleMemoryBus_Subscribe() {
	bus := event.NewMemoryBus(event.BusConfig{})
	ctx := context.Background()

	var mu sync.Mutex
	var seen []string
	_, err := bus.Subscribe(ctx, "order.p*", func(ctx context.Context, ev event.Event) {
		mu.Lock()
		defer mu.Unlock()
		seen = append(seen, fmt.Sprintf("%s %v", ev.Type, ev.Payload))
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range []event.Payload{
		OrderPlaced{Order: "A-17"},
		PackingProgress{Order: "A-17", Progress: 1},
		OrderShipped{Order: "A-17", Carrier: "post"},
	} {
		_ = bus.Publish(ctx, event.Event{Payload: p})
	}
	_ = bus.Close(ctx) // handles what is queued, then stops

	for _, s := range seen {
		fmt.Println(s)
	}
	// Output:
	// order.placed {A-17}
	// order.packing {A-17 1}
}

func ExampleDecoder() {
	d := event.NewDecoder()
	event.Register[OrderShipped](d)

	for _, line := range []string{
		`{"type":"order.shipped","request_id":"req-1","seq":3,"order":"A-17","carrier":"post"}`,
		`{"type":"order.returned","request_id":"req-1","seq":4,"order":"A-17"}`,
	} {
		ev, err := d.Decode([]byte(line))
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%s %T\n", ev.Type, ev.Payload)
	}
	// Output:
	// order.shipped event_test.OrderShipped
	// order.returned event.Raw
}
