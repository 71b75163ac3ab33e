// Package inplace lets this module's own packages give a graph node a
// function that writes its update in place, through a pointer, rather than
// returning it: an update holds a copy of the state's type (some hundreds
// of bytes), and a node function that returns one has it copied on its way
// to the run, once more through a task node's wrapper. The prebuilt agent
// (agent/react) runs its model and tool nodes this way.
//
// It is not public API: a pointer to the run's state is handed to the
// function, which must only read it, and only during the call.
package inplace

// Node returns the graph.NodeOption (as any) that makes a node run fn in
// place of the function it was added with. For a node of Graph.AddNode
// over state S, fn is a func(context.Context, *S, *graph.Update[S]) error;
// for a task node of graph.AddTask[S, X], a func(context.Context, X,
// *graph.Update[S]) error. The update is zero when fn is called, and is
// discarded when fn fails or does not return (a panic, runtime.Goexit).
// fn reads the state through its pointer during the call only, never
// writing to it: the pointer is the run's own state, shared by the step's
// tasks. A function of another type, or one given to
// a subgraph node (graph.AddSubgraph), makes the graph fail to compile,
// naming the node.
//
// Package graph sets Node when it is initialised.
var Node func(fn any) any

// Route returns the routing of u, a *graph.Update[S] of any S, as a
// *graph.Route (boxed in any, which a pointer needs no allocation for),
// so that a function writing its update in place adds to the update's
// routing without copying the update twice, as *u = u.Send(...) does:
//
//	r := inplace.Route(u).(*graph.Route)
//	*r = r.Send(sends...)
//
// u must not be nil. The route points into the update the engine
// gave the function: use it only during that call and on its
// goroutine, never keep it (the engine reuses updates for later steps
// and runs).
//
// Package graph sets Route when it is initialised.
var Route func(u any) any
