package main

import (
	"context"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestQuickstartGraph(t *testing.T) {
	app, err := build()
	if err != nil {
		t.Fatal(err)
	}
	out, err := app.Invoke(context.Background(), State{Question: "a and b"})
	if err != nil {
		t.Fatal(err)
	}
	want := State{
		Question: "a and b",
		Notes:    []string{"a: found", "b: found"},
		Draft:    "draft 2 from 2 notes",
		Drafts:   2,
		Approved: true,
	}
	if diff := cmp.Diff(want, out); diff != "" {
		t.Errorf("final state (-want +got):\n%s", diff)
	}
	if m := app.Mermaid(); !strings.Contains(m, `plan -.->|"send"| research`) || !strings.Contains(m, "review -.-> __end__") {
		t.Errorf("diagram lacks the dynamic and conditional edges:\n%s", m)
	}
}
