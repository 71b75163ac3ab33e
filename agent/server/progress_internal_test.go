package server

import (
	"context"
	"testing"

	"github.com/agentgraph/agentgraph/graph"
)

// A run that started at a checkpoint its thread no longer has, the
// thread having none left (deleted or lost with the checkpoint
// database), is not resumed from a state that does not exist: progress
// reports no progress, and the run starts again from its input, rather
// than resumeAt reading a nil state.
func TestProgressWithoutCheckpoint(t *testing.T) {
	s, err := New(Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close(context.Background())
	registerInc(t, s)
	resume, st, err := progress(context.Background(), s.graph("inc"), "no-such-thread", "a-start-since-lost", "")
	if err != nil || resume {
		t.Fatalf("progress on a thread without checkpoints: resume %v, state %+v, %v; want no resume, no error", resume, st, err)
	}
}

// droppedFrom knows a run's drop or copy by its parent: the checkpoint the
// run started from, or the one its request names (own), and only an
// update: a step of the run's graph from either is progress.
func TestDroppedFrom(t *testing.T) {
	state := func(parent, source string) *threadState {
		return &threadState{ParentCheckpoint: &checkpointRef{CheckpointID: parent}, Metadata: map[string]any{graph.MetaSource: source}}
	}
	for _, c := range []struct {
		st         *threadState
		start, own string
		want       bool
	}{
		{state("s", "update"), "s", "", true},
		{state("x", "update"), "s", "x", true},
		{state("x", "update"), "s", "", false},
		{state("x", "loop"), "s", "x", false},
		{state("s", "loop"), "s", "", false},
		{state("", "update"), "", "", false},
		{&threadState{Metadata: map[string]any{graph.MetaSource: "update"}}, "s", "x", false},
		{nil, "s", "x", false},
	} {
		if got := droppedFrom(c.st, c.start, c.own); got != c.want {
			t.Errorf("droppedFrom(%+v, start %q, own %q) = %v; want %v", c.st, c.start, c.own, got, c.want)
		}
	}
}
