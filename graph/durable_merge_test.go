package graph_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/graph/checkpoint/sqlite"
)

// talk is a state whose conversation merges by model.Messages' Merge
// method, not through an Append handle.
type talk struct {
	Messages model.Messages
	Topic    string
	Turns    int
}

var (
	talkMessages = graph.Declare(func(s *talk) *model.Messages { return &s.Messages })
	talkTopic    = graph.Replace(func(s *talk) *string { return &s.Topic })
	talkTurns    = graph.Sum(func(s *talk) *int { return &s.Turns })
)

// untilGraph compiles START → name → name … → END with the saver: node runs
// again until done holds, for at most steps+1 steps.
func untilGraph[S any](tb testing.TB, saver checkpoint.Saver, steps int, name string, node graph.NodeFunc[S], done func(S) bool) *graph.Compiled[S] {
	tb.Helper()
	g := graph.New[S]()
	g.AddNode(name, node)
	g.AddEdge(graph.START, name)
	g.AddConditionalEdges(name, func(_ context.Context, s S) (graph.Route, error) {
		if done(s) {
			return graph.To(graph.END), nil
		}
		return graph.To(name), nil
	}, name, graph.END)
	c, err := g.Compile(graph.WithCheckpointer(saver), graph.WithStepLimit(steps+1))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// blobCounter is a Saver that counts the blobs and bytes it is given per
// channel and kind.
type blobCounter struct {
	checkpoint.Saver
	mu    sync.Mutex
	blobs map[string]int // "channel kind" → blobs
	bytes map[string]int // channel → bytes
}

func (b *blobCounter) Put(ctx context.Context, expect string, cp *checkpoint.Checkpoint, blobs []checkpoint.Blob, writes []checkpoint.Write) error {
	b.mu.Lock()
	for _, bl := range blobs {
		b.blobs[bl.Channel+" "+bl.Kind.String()]++
		b.bytes[bl.Channel] += len(bl.Data)
	}
	b.mu.Unlock()
	return b.Saver.Put(ctx, expect, cp, blobs, writes)
}

// TestStorageGrowsWithWhatChangedMerged: a conversation merged by a
// merge method (model.Messages, as graph.Declare gives it) is stored as
// the messages added while the earlier ones are unchanged, as an Append
// handle's, and in full when a write edits or removes one; a field written
// again with the value it holds is not stored again. Every checkpoint
// loads the state the run had at it, from Memory and from SQLite.
func TestStorageGrowsWithWhatChangedMerged(t *testing.T) {
	const steps = 300
	sl, err := sqlite.New(context.Background(), sqlite.Config{Path: filepath.Join(t.TempDir(), "cp.db")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sl.Close() })
	for name, saver := range map[string]checkpoint.Saver{"memory": checkpoint.NewMemory(), "sqlite": sl} {
		t.Run(name, func(t *testing.T) {
			counter := &blobCounter{Saver: saver, blobs: map[string]int{}, bytes: map[string]int{}}
			var (
				mu       sync.Mutex
				seen     = map[int]model.Messages{} // the conversation each turn started from
				msgBytes int
			)
			c := untilGraph(t, counter, steps, "say", func(_ context.Context, s talk) (graph.Update[talk], error) {
				mu.Lock()
				seen[s.Turns] = slices.Clone(s.Messages)
				mu.Unlock()
				text := fmt.Sprintf("message number %d with some text in it", s.Turns)
				msgBytes += len(text)
				var u model.Messages
				switch {
				case s.Turns%60 == 30: // edit the first message in place, and add one
					first := s.Messages[0]
					first.Parts = []model.Part{model.TextPart(text)}
					u = model.Messages{first, model.User(text)}
				case s.Turns%50 == 20: // edit the last message in place, and add one
					last := s.Messages[len(s.Messages)-1]
					last.Parts = append(last.Parts, model.TextPart("!"))
					u = model.Messages{last, model.User(text)}
				case s.Turns%70 == 35: // remove the second
					u = model.Messages{model.Remove(s.Messages[1].ID)}
				default:
					u = model.Messages{model.User(text)}
				}
				return graph.Updates(talkMessages.Set(u), talkTopic.Set("the same topic"), talkTurns.Set(1)), nil
			}, func(s talk) bool { return s.Turns >= steps })
			got, err := c.Invoke(onThread("merged"), talk{})
			if err != nil {
				t.Fatal(err)
			}
			if n := counter.blobs["Topic full"]; n != 1 {
				t.Errorf("Topic, written every step with one value, was stored %d times; want once", n)
			}
			if counter.blobs["Messages delta"] < steps-20 {
				t.Errorf("Messages blobs %v; want a delta for each step that only added a message", counter.blobs)
			}
			// Storing the whole conversation every step takes about
			// steps/2 times the messages' bytes (each with its id and
			// role); deltas and a full value now and then take a few
			// times their size.
			if b := counter.bytes["Messages"]; b > 40*msgBytes {
				t.Errorf("Messages took %d bytes for %d bytes of text; want at most %d", b, msgBytes, 40*msgBytes)
			}
			st, err := c.Thread("merged").State(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if d := cmp.Diff(got, st.Values); d != "" {
				t.Fatalf("reloaded state differs (-run +loaded):\n%s", d)
			}
			checked := 0
			for snap, err := range c.Thread("merged").History(context.Background(), checkpoint.ListOptions{}) {
				if err != nil {
					t.Fatal(err)
				}
				want, ok := seen[snap.Values.Turns]
				if !ok || len(snap.Next) == 0 {
					continue // the last checkpoint: checked above
				}
				if d := cmp.Diff(want, snap.Values.Messages); d != "" {
					t.Fatalf("checkpoint of turn %d loads another conversation (-run +loaded):\n%s", snap.Values.Turns, d)
				}
				checked++
			}
			if checked < steps {
				t.Fatalf("checked %d checkpoints; want %d", checked, steps)
			}
		})
	}
}

// BenchmarkCheckpointBytesMerged is BenchmarkCheckpointBytes with the
// conversation a model.Messages merged by its Merge method (graph.Declare)
// rather than through an Append handle: b.N steps, each adding one message
// of about 200 bytes, and the bytes stored per checkpoint.
func BenchmarkCheckpointBytesMerged(b *testing.B) {
	saver := checkpoint.NewMemory()
	content := strings.Repeat("lorem ipsum ", 16)
	c := untilGraph(b, saver, b.N, "turn", func(_ context.Context, s talk) (graph.Update[talk], error) {
		m := model.User(content)
		if len(s.Messages)%2 == 1 {
			m = model.Assistant(content)
		}
		return graph.Updates(talkMessages.Set(model.Messages{m}), talkTurns.Set(1), talkTopic.Set(string(m.Role))), nil
	}, func(s talk) bool { return len(s.Messages) >= b.N })
	checkpointBytes(b, c, saver, talk{})
}

// checkpointBytes runs c on a new thread, timed, and reports the bytes
// of blobs saver stores per checkpoint; it returns the run's result.
func checkpointBytes[S any](b *testing.B, c *graph.Compiled[S], saver *checkpoint.Memory, input S) S {
	b.ReportAllocs()
	b.ResetTimer()
	out, err := c.Invoke(onThread("chat"), input)
	if err != nil {
		b.Fatal(err)
	}
	b.StopTimer()
	u, err := saver.Usage(context.Background(), "chat")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(u.BlobBytes)/float64(u.Checkpoints), "B/checkpoint")
	return out
}

// numbered is a list whose items know their position: UnmarshalJSON sets
// it, as a type that derives, caps or sorts its items on decoding does.
type numbered []numberedItem

type numberedItem struct {
	Text string
	At   int `json:"-"`
}

func (n *numbered) UnmarshalJSON(b []byte) error {
	var items []numberedItem
	if err := json.Unmarshal(b, &items); err != nil {
		return err
	}
	for i := range items {
		items[i].At = i
	}
	*n = items
	return nil
}

type numberedState struct {
	Items numbered
}

var numberedItems = graph.Replace(func(s *numberedState) *numbered { return &s.Items })

// TestDeltaSkipsUnmarshaler: a slice field whose type decodes itself is
// stored whole: decoded piece by piece its items would be decoded apart,
// and the state loaded would not be the state saved. (An Append handle
// takes a field of an unnamed slice type, which has no methods.)
func TestDeltaSkipsUnmarshaler(t *testing.T) {
	c := untilGraph(t, checkpoint.NewMemory(), 6, "add", func(_ context.Context, s numberedState) (graph.Update[numberedState], error) {
		item := numberedItem{Text: fmt.Sprint("item ", len(s.Items)), At: len(s.Items)}
		return graph.Updates(numberedItems.Set(append(slices.Clone(s.Items), item))), nil
	}, func(s numberedState) bool { return len(s.Items) >= 5 })
	got, err := c.Invoke(onThread("numbered"), numberedState{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := c.Thread("numbered").State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(got, st.Values); d != "" {
		t.Fatalf("reloaded state differs (-run +loaded):\n%s", d)
	}
}

// TestDeltaJoinedForUnmarshaler: a checkpoint written when a slice type
// that decodes itself was stored as deltas loads as the whole slice,
// decoded once.
func TestDeltaJoinedForUnmarshaler(t *testing.T) {
	ctx := context.Background()
	saver := checkpoint.NewMemory()
	cp1 := &checkpoint.Checkpoint{ThreadID: "old", Versions: map[string]uint64{"Items": 1}}
	if err := saver.Put(ctx, "", cp1, []checkpoint.Blob{{Channel: "Items", Kind: checkpoint.Full, Data: []byte(`[{"Text":"a"}]`)}}, nil); err != nil {
		t.Fatal(err)
	}
	cp2 := &checkpoint.Checkpoint{ThreadID: "old", ParentID: cp1.ID, Step: 1, Versions: map[string]uint64{"Items": 2}}
	if err := saver.Put(ctx, cp1.ID, cp2, []checkpoint.Blob{{Channel: "Items", Kind: checkpoint.Delta, Data: []byte(`[{"Text":"b"},{"Text":"c"}]`)}}, nil); err != nil {
		t.Fatal(err)
	}
	c := untilGraph(t, saver, 1, "add", func(context.Context, numberedState) (graph.Update[numberedState], error) {
		return graph.Updates[numberedState](), nil
	}, func(numberedState) bool { return true })
	st, err := c.Thread("old").State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := numbered{{"a", 0}, {"b", 1}, {"c", 2}}
	if d := cmp.Diff(want, st.Values.Items); d != "" {
		t.Fatalf("state loaded from base and deltas (-want +got):\n%s", d)
	}
}
