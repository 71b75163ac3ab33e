package graph

import (
	"context"
	"reflect"
	"runtime"
	"strings"
	"testing"
)

// The function a parallel step's helper goroutines start with has a short
// name, not a generic one spelling out the state type: the runtime scans
// the name of a goroutine's function for its end as it starts the
// goroutine and as the goroutine ends.
func TestHelperFunctionName(t *testing.T) {
	type state struct {
		Messages []string `json:"messages"`
		Count    int      `json:"count"`
	}
	g := New[state]()
	g.AddNode("a", func(context.Context, state) (Update[state], error) { return Update[state]{}, nil })
	g.AddEdge(START, "a")
	g.AddEdge("a", END)
	c, err := g.Compile()
	if err != nil {
		t.Fatal(err)
	}
	r := c.newRun()
	name := runtime.FuncForPC(reflect.ValueOf(r.help).Pointer()).Name()
	if strings.Contains(name, "[") || len(name) > 100 {
		t.Fatalf("the helpers' function is %q (%d bytes), a generic function's", name, len(name))
	}
}
