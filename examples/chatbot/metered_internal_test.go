package chatbot

import (
	"context"
	"testing"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/llmtest"
	"github.com/agentgraph/agentgraph/agent/model"
)

// TestMeteredStreamCountsUsageWhenConsumerStopsEarly: a streamed call whose
// consumer stops after its first chunk still adds the call's usage to the
// turn's meter, as a consumer that reads the whole reply does.
func TestMeteredStreamCountsUsageWhenConsumerStopsEarly(t *testing.T) {
	usage := model.Usage{InputTokens: 17, OutputTokens: 29}
	for _, tc := range []struct {
		name string
		read int // chunks read before stopping; -1 reads everything
	}{
		{name: "stops after the first chunk", read: 1},
		{name: "stops after three chunks", read: 3},
		{name: "reads everything", read: -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fake := llmtest.New(llmtest.Reply{Text: "one two three four five six seven", Usage: usage}).SetChunkSize(3)
			c, err := agent.New(agent.Config{Model: fake})
			if err != nil {
				t.Fatal(err)
			}
			m := new(meter)
			ctx := context.WithValue(context.Background(), runKey{}, &turnDeps{meter: m})
			req := &model.Request{Messages: []model.Message{model.User("hi")}}
			read, done := 0, false
			for ch, err := range (meteredModel{c: c}).Stream(ctx, req) {
				if err != nil {
					t.Fatalf("stream: %v", err)
				}
				read++
				done = ch.Kind == model.ChunkDone
				if tc.read >= 0 && read == tc.read {
					break
				}
			}
			if tc.read >= 0 && (done || read != tc.read) {
				t.Fatalf("the consumer read %d chunks (done %v); the test wants it to stop after %d, before the end", read, done, tc.read)
			}
			got := m.take()
			if got.InputTokens != usage.InputTokens || got.OutputTokens != usage.OutputTokens {
				t.Errorf("meter holds in %d out %d after the consumer read %d chunks; the call used in %d out %d",
					got.InputTokens, got.OutputTokens, read, usage.InputTokens, usage.OutputTokens)
			}
		})
	}
}
