package checkpoint_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// rebuild turns a loaded list channel back into its value: the base, then
// each delta appended, as an append reducer would.
func rebuild(c checkpoint.Channel) []string {
	var out []string
	if c.Base != nil {
		out, _ = checkpoint.Decode[[]string](checkpoint.JSON, c.Base)
	}
	for _, d := range c.Deltas {
		more, _ := checkpoint.Decode[[]string](checkpoint.JSON, d)
		out = append(out, more...)
	}
	return out
}

// A thread whose message list grows by deltas, a writer that lost a race,
// and time travel: a fork from an older checkpoint that leaves history as it
// was.
func Example() {
	ctx := context.Background()
	saver := checkpoint.NewMemory()
	enc := func(v any) []byte {
		b, err := checkpoint.Encode(checkpoint.JSON, v)
		if err != nil {
			log.Fatal(err)
		}
		return b
	}

	// Step 1 stores the messages and the profile whole.
	first := &checkpoint.Checkpoint{ThreadID: "chat-42", Step: 1,
		Versions: map[string]uint64{"messages": 1, "profile": 1}}
	err := saver.Put(ctx, "", first, []checkpoint.Blob{
		{Channel: "messages", Kind: checkpoint.Full, Data: enc([]string{"hello"})},
		{Channel: "profile", Kind: checkpoint.Full, Data: enc("Ada")},
	}, nil)
	if err != nil {
		log.Fatal(err)
	}

	// Step 2 appends one message as a delta; the unchanged profile is
	// shared, not stored again.
	second := &checkpoint.Checkpoint{ThreadID: "chat-42", ParentID: first.ID, Step: 2,
		Versions: map[string]uint64{"messages": 2, "profile": 1}}
	err = saver.Put(ctx, first.ID, second, []checkpoint.Blob{
		{Channel: "messages", Kind: checkpoint.Delta, Data: enc([]string{"how are you?"})},
	}, nil)
	if err != nil {
		log.Fatal(err)
	}

	latest, err := saver.Get(ctx, "chat-42", "")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("latest:", rebuild(latest.Channels["messages"]))

	// A writer that still believes the first checkpoint is the latest gets
	// a conflict and stores nothing.
	stale := &checkpoint.Checkpoint{ThreadID: "chat-42", ParentID: first.ID, Step: 2,
		Versions: map[string]uint64{"messages": 2, "profile": 1}}
	err = saver.Put(ctx, first.ID, stale, []checkpoint.Blob{
		{Channel: "messages", Kind: checkpoint.Delta, Data: enc([]string{"late"})},
	}, nil)
	var conflict *checkpoint.ConflictError
	fmt.Println("conflict:", errors.As(err, &conflict) && conflict.Actual == second.ID)

	// Time travel: continue from the first checkpoint, expecting the
	// current latest. The thread forks; the old branch stays loadable.
	fork := &checkpoint.Checkpoint{ThreadID: "chat-42", ParentID: first.ID, Step: 2,
		Versions: map[string]uint64{"messages": 2, "profile": 1},
		Metadata: map[string]string{"source": "fork"}}
	err = saver.Put(ctx, second.ID, fork, []checkpoint.Blob{
		{Channel: "messages", Kind: checkpoint.Delta, Data: enc([]string{"¿qué tal?"})},
	}, nil)
	if err != nil {
		log.Fatal(err)
	}
	history, err := saver.List(ctx, "chat-42", checkpoint.ListOptions{})
	if err != nil {
		log.Fatal(err)
	}
	for _, cp := range history {
		snap, err := saver.Get(ctx, "chat-42", cp.ID)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("step %d %-6s %v\n", cp.Step, cp.Metadata["source"], rebuild(snap.Channels["messages"]))
	}
	// Output:
	// latest: [hello how are you?]
	// conflict: true
	// step 2 fork   [hello ¿qué tal?]
	// step 2        [hello how are you?]
	// step 1        [hello]
}

// The engine keeps a ChainStats per delta channel and writes a full value
// when NeedsFull says so, which keeps storage proportional to the data and
// delta chains short.
func ExampleChainStats() {
	var stats checkpoint.ChainStats
	var kinds []string
	for n := 1; n <= 12; n++ { // step n appends the nth message of 10 bytes
		kind, size := checkpoint.Delta, 10
		if stats.NeedsFull() {
			kind, size = checkpoint.Full, 10*n
		}
		stats.Add(kind, size)
		kinds = append(kinds, kind.String())
	}
	fmt.Println(kinds)
	// Output:
	// [delta full delta delta full delta delta delta delta delta full delta]
}

// coreOnly hides every optional interface of the Saver it holds, as a
// backend that implements only Saver would.
type coreOnly struct{ checkpoint.Saver }

// Code that accepts any Saver applies retention through checkpoint.Prune,
// which says when the backend cannot prune.
func ExamplePrune() {
	ctx := context.Background()
	var s checkpoint.Saver = checkpoint.NewMemory()
	prev := ""
	for i := range 3 {
		cp := &checkpoint.Checkpoint{ThreadID: "chat", ParentID: prev, Step: i, Versions: map[string]uint64{"n": uint64(i + 1)}}
		if err := s.Put(ctx, prev, cp, []checkpoint.Blob{{Channel: "n", Kind: checkpoint.Full, Data: []byte("1")}}, nil); err != nil {
			log.Fatal(err)
		}
		prev = cp.ID
	}
	p, err := checkpoint.Prune(ctx, s, checkpoint.Retention{KeepLatest: 1})
	fmt.Println(p.Checkpoints, "checkpoints pruned, error:", err)

	_, err = checkpoint.Prune(ctx, coreOnly{s}, checkpoint.Retention{KeepLatest: 1})
	fmt.Println(errors.Is(err, errors.ErrUnsupported))
	// Output:
	// 2 checkpoints pruned, error: <nil>
	// true
}
