package graph

import (
	"context"
	"fmt"
	"reflect"
	"strings"
)

// Route is where control goes after a node: target nodes that run in the
// next super-step and dynamic tasks ([Send]) that start there. Routers of
// conditional edges return one; an [Update] carries one for routing from
// inside a node. The zero Route goes nowhere. Build one with [To] and
// [Dispatch]; Route is a value and a single target needs no allocation.
type Route struct {
	to    string   // first target, kept inline
	hasTo bool     // to is set (an empty name is an error, not "nowhere")
	more  []string // further targets
	sends []Send
}

// To returns a route to the named targets. [END] is a valid target and means
// "stop on this path".
func To(targets ...string) Route {
	var r Route
	return r.To(targets...)
}

// Dispatch returns a route that starts the given dynamic tasks. The slice is
// kept, not copied.
func Dispatch(tasks ...Send) Route {
	return Route{sends: tasks}
}

// To returns r with targets added.
func (r Route) To(targets ...string) Route {
	for _, t := range targets {
		if !r.hasTo {
			r.to, r.hasTo = t, true
			continue
		}
		r.more = append(r.more[:len(r.more):len(r.more)], t)
	}
	return r
}

// Send returns r with dynamic tasks added.
func (r Route) Send(tasks ...Send) Route {
	if len(r.sends) == 0 {
		r.sends = tasks
		return r
	}
	r.sends = append(r.sends[:len(r.sends):len(r.sends)], tasks...)
	return r
}

func (r *Route) add(o Route) {
	if o.IsZero() {
		return
	}
	if r.IsZero() {
		*r = o
		return
	}
	*r = r.To(o.Targets()...).Send(o.sends...)
}

// Targets returns the route's target names, in order.
func (r Route) Targets() []string {
	if !r.hasTo {
		return nil
	}
	return append([]string{r.to}, r.more...)
}

// Sends returns the route's dynamic tasks, in order.
func (r Route) Sends() []Send { return r.sends }

// IsZero reports whether r goes nowhere.
func (r Route) IsZero() bool { return !r.hasTo && len(r.sends) == 0 }

// String formats r as "-> a, b" and "send work×3".
func (r Route) String() string {
	var parts []string
	if t := r.Targets(); len(t) > 0 {
		parts = append(parts, "-> "+strings.Join(t, ", "))
	}
	if len(r.sends) > 0 {
		counts := map[string]int{}
		var order []string
		for _, s := range r.sends {
			if counts[s.Node()] == 0 {
				order = append(order, s.Node())
			}
			counts[s.Node()]++
		}
		for _, n := range order {
			parts = append(parts, fmt.Sprintf("send %s×%d", n, counts[n]))
		}
	}
	return strings.Join(parts, "; ")
}

// taskDef identifies a task node across the builder and compiled graphs.
type taskDef struct {
	name string
	idx  int          // node index in its graph
	arg  reflect.Type // the type of the task's input
}

// Send is one dynamic task: an invocation of a task node with its own input,
// LangGraph's Send. Make one with [TaskNode.Send]; return several from a
// router with [Dispatch] (or from a node with [Update.Send]) for a
// map-reduce: every task runs in the next super-step, in parallel, and their
// updates merge through the reducers in the order the tasks were sent.
type Send struct {
	def *taskDef
	arg any
}

// Node returns the name of the task node the Send starts.
func (s Send) Node() string {
	if s.def == nil {
		return ""
	}
	return s.def.name
}

// Arg returns the task's input.
func (s Send) Arg() any { return s.arg }

// SendTo returns a dynamic task running the task node named node (see
// [AddTask]) with an input decode fills in: decode is given a pointer to a
// new value of the node's input type, as json.Unmarshal's target. It is
// for code that knows a task node by its name only, such as a server
// decoding a client's Send; code holding the node's handle uses
// [TaskNode.Send]. An unknown node, or one that is not a task node, is an
// error wrapping [ErrBadRoute]; decode's error is returned wrapped.
func (c *Compiled[S]) SendTo(node string, decode func(ptr any) error) (Send, error) {
	i, ok := c.index[node]
	if !ok {
		return Send{}, fmt.Errorf("%w: no node %q to send a task to; the graph's nodes are %s", ErrBadRoute, node, strings.Join(c.Nodes(), ", "))
	}
	def := c.nodes[i].def
	if c.nodes[i].task == nil || def == nil {
		return Send{}, fmt.Errorf("%w: node %q is not a task node (graph.AddTask), which a Send runs; route to it by name instead", ErrBadRoute, node)
	}
	p := reflect.New(def.arg)
	if err := decode(p.Interface()); err != nil {
		return Send{}, fmt.Errorf("graph: the input of a task of %q (a %s): %w", node, def.arg, err)
	}
	return Send{def: def, arg: p.Elem().Interface()}, nil
}

// TaskNode is a handle on a node that runs once per [Send], with an input of
// its own type X instead of the state. Make one with [AddTask].
type TaskNode[S, X any] struct {
	def *taskDef
}

// Name returns the node's name.
func (t *TaskNode[S, X]) Name() string { return t.def.name }

// Send returns a dynamic task running the node with input x.
func (t *TaskNode[S, X]) Send(x X) Send { return Send{def: t.def, arg: x} }

// TaskFunc is the function of a task node: it receives the input of one
// [Send] and returns an update of the state, like a node.
type TaskFunc[S, X any] func(ctx context.Context, x X) (Update[S], error)

// RouterFunc decides where control goes after a node (see
// [Graph.AddConditionalEdges]). It reads the state after the super-step's
// updates are merged.
type RouterFunc[S any] func(ctx context.Context, s S) (Route, error)

// NodeFunc is a node: it reads the state, a plain value of S, and returns an
// update naming only the fields it writes. Treat s as read-only: its slices
// and maps are shared with the engine and with other nodes of the step.
type NodeFunc[S any] func(ctx context.Context, s S) (Update[S], error)
