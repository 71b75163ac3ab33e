package graph

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// Names of the two virtual nodes every graph has. Edges from START choose
// the first nodes to run; routing to END stops that path.
const (
	START = "__start__"
	END   = "__end__"
)

// Graph builds a graph over the state type S. Add nodes and edges, then call
// Compile. Builder methods return the graph, so calls can be chained, and
// record problems instead of returning errors: Compile reports all of them
// at once. A Graph is not safe for concurrent use; the [Compiled] graph is.
type Graph[S any] struct {
	opts     []CompileOption
	nodes    []*nodeSpec[S]
	index    map[string]int
	edges    []edgeSpec
	branches []*branchSpec[S]
	labels   map[[2]string]string
	fields   []Handle[S]
	errs     []error
}

type nodeSpec[S any] struct {
	name string
	fn   NodeFunc[S]
	// task runs a task node's function on arg, leaving its update in
	// *out: written in place, the update (some hundreds of bytes) is not
	// copied once more on its way to the task.
	task func(ctx context.Context, arg any, out *Update[S]) error
	// into, when set, runs a node of AddNode in place of fn, writing its
	// update in place (see internal/inplace).
	into func(ctx context.Context, s *S, out *Update[S]) error
	def  *taskDef
	sub  drawer // the child graph of a subgraph node
	opts nodeOptions
}

type edgeSpec struct{ from, to string }

type branchSpec[S any] struct {
	from    string
	router  RouterFunc[S]
	targets []string
}

// New returns an empty graph over the state type S, which must be a struct.
// Options given here are the defaults of the compiled graph.
func New[S any](opts ...CompileOption) *Graph[S] {
	return &Graph[S]{opts: opts, index: map[string]int{}}
}

func (g *Graph[S]) problem(format string, args ...any) {
	g.errs = append(g.errs, invalid(format, args...))
}

func (g *Graph[S]) add(n *nodeSpec[S], opts []NodeOption) {
	for _, o := range opts {
		if o != nil {
			o(&n.opts)
		}
	}
	switch {
	case n.name == "":
		g.problem("a node has an empty name")
		return
	case n.name == START || n.name == END:
		g.problem("node name %q is reserved", n.name)
		return
	}
	if _, dup := g.index[n.name]; dup {
		g.problem("node %q is added twice", n.name)
		return
	}
	g.index[n.name] = len(g.nodes)
	g.nodes = append(g.nodes, n)
}

// AddNode adds a node that runs fn when triggered by an edge or a route.
func (g *Graph[S]) AddNode(name string, fn NodeFunc[S], opts ...NodeOption) *Graph[S] {
	if fn == nil {
		g.problem("node %q has a nil function", name)
		return g
	}
	n := &nodeSpec[S]{name: name, fn: fn}
	g.add(n, opts)
	if n.opts.into != nil {
		into, ok := n.opts.into.(func(context.Context, *S, *Update[S]) error)
		if !ok {
			g.problem("node %q is given a function of type %T to run in place; it takes func(context.Context, *S, *graph.Update[S]) error", name, n.opts.into)
		}
		n.into = into
	}
	return g
}

// AddEdge adds a static edge: after from runs, to runs in the next
// super-step. Use [START] as from for an entry node and [END] as to for an
// exit. A node with several incoming edges from branches that run in
// parallel runs once, after the last of them; a node that a loop feeds runs
// after each round of the loop, not once after the loop (see the package
// doc on joins, and [Defer]).
func (g *Graph[S]) AddEdge(from, to string) *Graph[S] {
	g.edges = append(g.edges, edgeSpec{from, to})
	return g
}

// AddConditionalEdges makes router decide where control goes after from.
// targets declares every node the router may return (END included), so the
// graph can be validated and drawn; a route to any other node fails the
// run. The router runs once per super-step in which from ran, on the state
// after that step's updates merged.
func (g *Graph[S]) AddConditionalEdges(from string, router RouterFunc[S], targets ...string) *Graph[S] {
	if router == nil {
		g.problem("conditional edge from %q has a nil router", from)
		return g
	}
	g.branches = append(g.branches, &branchSpec[S]{from: from, router: router, targets: targets})
	return g
}

// Label gives the edge from -> to (static, conditional or declared with
// [Targets]) a label for [Compiled.Mermaid], such as the condition under
// which a router takes it. Compile reports a label on an edge that does
// not exist.
func (g *Graph[S]) Label(from, to, label string) *Graph[S] {
	if g.labels == nil {
		g.labels = map[[2]string]string{}
	}
	g.labels[[2]string{from, to}] = label
	return g
}

// AddTask adds a task node: a node that runs once per [Send] with the
// Send's input x of type X rather than the state, LangGraph's map-reduce
// worker. Route to it from a router with [Dispatch] or from a node with
// [Update.Send], declaring it as a target; its updates merge through the
// reducers in the order the tasks were sent. Its outgoing edges fire once
// per step, after all its tasks.
func AddTask[S, X any](g *Graph[S], name string, fn TaskFunc[S, X], opts ...NodeOption) *TaskNode[S, X] {
	def := &taskDef{name: name, idx: -1, arg: reflect.TypeFor[X]()}
	if fn == nil {
		g.problem("task node %q has a nil function", name)
		return &TaskNode[S, X]{def: def}
	}
	n := &nodeSpec[S]{name: name, def: def, task: func(ctx context.Context, arg any, out *Update[S]) (err error) {
		x, ok := arg.(X)
		if !ok && arg != nil {
			return badTaskArg(name, def.arg, arg)
		}
		*out, err = fn(ctx, x)
		return err
	}}
	before := len(g.nodes)
	g.add(n, opts)
	if n.opts.into != nil {
		into, ok := n.opts.into.(func(context.Context, X, *Update[S]) error)
		if !ok {
			g.problem("task node %q is given a function of type %T to run in place; it takes func(context.Context, %s, *graph.Update[S]) error", name, n.opts.into, def.arg)
		} else {
			n.task = func(ctx context.Context, arg any, out *Update[S]) error {
				x, ok := arg.(X)
				if !ok && arg != nil {
					return badTaskArg(name, def.arg, arg)
				}
				return into(ctx, x, out)
			}
		}
	}
	if len(g.nodes) > before {
		def.idx = before
	}
	return &TaskNode[S, X]{def: def}
}

// badTaskArg is the error of a task node named name, taking want, sent
// arg. It is apart from the task's wrapper so that its formatting does not
// add to the wrapper's stack frame: a parallel task runs on a fresh
// goroutine, whose stack grows by copying.
//
//go:noinline
func badTaskArg(name string, want reflect.Type, arg any) error {
	return fmt.Errorf("graph: task node %q takes %s, got %T", name, want, arg)
}

// AddSubgraph adds a node that runs the compiled graph child. in builds the
// child's input from the parent's state; out turns the child's final state
// into an update of the parent. The child may have a different state type.
// The child runs with the node's context, so cancellation reaches it, and
// when the parent is streamed the child's events are streamed too, with the
// node's name in their Namespace. The child keeps its own step limit.
//
// A child compiled with [WithCheckpointer], run by a durable parent,
// checkpoints its own steps on the thread [SubgraphThread] names, so that
// a parent step resumed part-way goes on inside the child where it
// stopped (the child's saved state is its input then, not what in
// returns), and the child's interrupts pause the parent (see "Durable
// subgraphs" in the package doc). Otherwise the child runs without
// checkpoints, as one task of its parent.
func AddSubgraph[P, C any](g *Graph[P], name string, child *Compiled[C], in func(P) C, out func(C) Update[P], opts ...NodeOption) *Graph[P] {
	if child == nil || in == nil || out == nil {
		g.problem("subgraph node %q needs a compiled child graph and both mappings", name)
		return g
	}
	fn := func(ctx context.Context, s P) (Update[P], error) {
		res, err := child.runChild(ctx, in(s), name)
		if err != nil {
			return Update[P]{}, err
		}
		return out(res), nil
	}
	n := &nodeSpec[P]{name: name, fn: fn, sub: child}
	g.add(n, opts)
	if n.opts.into != nil {
		g.problem("subgraph node %q is given a function to run in place; a subgraph node runs its child graph: drop that option", name)
	}
	return g
}

// Compile validates the graph and returns its runnable form. It reports
// every problem at once, joined with errors.Join, each wrapping
// [ErrInvalidGraph] and naming the node or edge at fault.
func (g *Graph[S]) Compile(opts ...CompileOption) (*Compiled[S], error) {
	errs := append([]error(nil), g.errs...)
	if t := reflect.TypeFor[S](); t.Kind() != reflect.Struct {
		errs = append(errs, invalid("state type %s is not a struct", t))
	}
	c := &Compiled[S]{sch: schemaOf[S](), index: map[string]int{}}
	c.own, errs = ownFields(g.fields, errs)
	c.set.stepLimit = DefaultStepLimit
	c.set.modes = defaultModes
	c.set.compileOpts(g.opts)
	c.set.compileOpts(opts)
	if c.set.logger == nil {
		c.set.logger = zap.NewNop()
	}
	n := len(g.nodes)
	endIdx := n
	c.nodes = make([]*node[S], n)
	for i, spec := range g.nodes {
		c.nodes[i] = &node[S]{name: spec.name, idx: i, ran: []string{spec.name}, fn: spec.fn, task: spec.task, into: spec.into, def: spec.def,
			sub: spec.sub, retry: spec.opts.retry, timeout: spec.opts.timeout, deferred: spec.opts.deferred}
		c.index[spec.name] = i
	}
	c.start = &node[S]{name: START, idx: -1}
	lookup := func(name string) *node[S] {
		if name == START {
			return c.start
		}
		if i, ok := c.index[name]; ok {
			return c.nodes[i]
		}
		return nil
	}
	target := func(what, name string) (int, bool) {
		switch name {
		case END:
			return endIdx, true
		case START:
			errs = append(errs, invalid("%s: START cannot be a target", what))
			return 0, false
		}
		i, ok := c.index[name]
		if !ok {
			errs = append(errs, invalid("%s: unknown target %q", what, name))
		}
		return i, ok
	}
	for _, e := range g.edges {
		what := fmt.Sprintf("edge %q -> %q", e.from, e.to)
		if e.from == END {
			errs = append(errs, invalid("%s: END has no outgoing edges", what))
			continue
		}
		src := lookup(e.from)
		if src == nil {
			errs = append(errs, invalid("%s: unknown source %q", what, e.from))
		}
		to, ok := target(what, e.to)
		if !ok || src == nil {
			continue
		}
		if to < n && c.nodes[to].task != nil {
			errs = append(errs, invalid("%s: %q is a task node and takes its input from Send; route to it with %s.Send(x) from a router or node that declares it as a target", what, e.to, e.to))
			continue
		}
		src.next = appendUnique(src.next, to)
	}
	for _, b := range g.branches {
		what := fmt.Sprintf("conditional edge from %q", b.from)
		src := lookup(b.from)
		if src == nil {
			errs = append(errs, invalid("%s: unknown source %q", what, b.from))
			continue
		}
		if len(b.targets) == 0 {
			errs = append(errs, invalid("%s: no targets declared; list every node the router may return (END included) after the router", what))
			continue
		}
		cb := &branch[S]{router: b.router}
		for _, t := range b.targets {
			if i, ok := target(what, t); ok {
				cb.targets = append(cb.targets, t)
				cb.idx = append(cb.idx, i)
			}
		}
		src.branches = append(src.branches, cb)
	}
	for i, spec := range g.nodes {
		for _, t := range spec.opts.targets {
			if j, ok := target(fmt.Sprintf("node %q", spec.name), t); ok {
				c.nodes[i].targets = append(c.nodes[i].targets, t)
				c.nodes[i].targetIdx = append(c.nodes[i].targetIdx, j)
			}
		}
	}
	c.labels = map[[2]int]string{}
	for ft, label := range g.labels {
		src, to := lookup(ft[0]), -1
		if ft[1] == END {
			to = endIdx
		} else if i, ok := c.index[ft[1]]; ok {
			to = i
		}
		if src == nil || to < 0 || !src.hasEdge(to) {
			errs = append(errs, invalid("label %q on edge %q -> %q: there is no such edge", label, ft[0], ft[1]))
			continue
		}
		c.labels[[2]int{src.idx, to}] = label
	}
	if len(c.start.next) == 0 && len(c.start.branches) == 0 {
		errs = append(errs, invalid("no entry: add an edge from START to the first node"))
	}
	c.link()
	errs = append(errs, c.checkReach()...)
	if c.set.saver != nil {
		d, err := newDurable[S](c.set.saver, c.set.ser)
		if err != nil {
			errs = append(errs, err)
		}
		for _, nd := range c.nodes {
			if nd.def != nil && nd.def.arg != nil {
				if err := checkpoint.CheckType(d.ser, nd.def.arg); err != nil {
					errs = append(errs, invalid("the input type %s of task node %q cannot be checkpointed: %v", nd.def.arg, nd.name, err))
				}
			}
		}
		for _, names := range [][]string{c.set.before, c.set.after} {
			if err := c.checkBreaks(names); err != nil {
				errs = append(errs, invalid("%v", err))
			}
		}
		if !c.set.durability.valid() {
			errs = append(errs, invalid("unknown durability mode %d: use graph.DurabilityStep, graph.DurabilityAsync or graph.DurabilityExit", int(c.set.durability)))
		}
		errs = append(errs, c.checkIDRoom()...)
		c.dur = d
	} else if len(c.set.before)+len(c.set.after) > 0 {
		errs = append(errs, invalid("breakpoints need a checkpointer: add graph.WithCheckpointer"))
	}
	if len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	c.pool.New = func() any { return c.newRun() }
	return c, nil
}

func appendUnique(s []int, v int) []int {
	for _, x := range s {
		if x == v {
			return s
		}
	}
	return append(s, v)
}

// Compiled is a validated graph, ready to run. It is immutable and safe for
// concurrent use: run it from as many goroutines as you like.
type Compiled[S any] struct {
	sch    *schema[S]
	own    []*fieldOps[S] // the graph's own handles (Graph.Handles), one per field
	nodes  []*node[S]
	start  *node[S]
	index  map[string]int
	set    settings
	labels map[[2]int]string // Mermaid labels by (from, to); START is -1
	dur    *durable[S]       // nil without a checkpointer
	// threadRoom is the most bytes the subgraph threads of a durable run
	// of the graph (SubgraphThread, nested) add to its thread id, and
	// interruptRoom the most bytes an interrupt id of the graph takes,
	// its subgraphs' included; both 0 without a checkpointer. See
	// checkIDRoom.
	threadRoom, interruptRoom int
	pool                      sync.Pool // *run[S]
	// deep is set once a node is marked deep (node.deep): a helper then
	// makes room on its stack as soon as it joins a step (see helper).
	deep atomic.Bool
	// scopes is the number of task scopes the graph's last observed run
	// took (at most maxScopes): the room a run makes for them at first
	// (see run.takeScopes).
	scopes atomic.Int32
	// inFrom is the source node of each incoming edge of the nodes that
	// can wait (see node.in), and inWait the nodes strictly upstream of
	// the edge's target whose task can still reach the target through
	// the edge, nil when there is none (see link and run.waits).
	inFrom []int32
	inWait [][]uint64
}

type node[S any] struct {
	name      string
	idx       int
	ran       []string // []string{name}, the Ran of a checkpoint after a step of this node alone
	fn        NodeFunc[S]
	task      func(ctx context.Context, arg any, out *Update[S]) error // see nodeSpec.task
	into      func(ctx context.Context, s *S, out *Update[S]) error    // see nodeSpec.into
	def       *taskDef
	sub       drawer
	retry     *RetryPolicy
	timeout   time.Duration
	next      []int // static targets; len(nodes) is END
	branches  []*branch[S]
	targets   []string // declared routing targets (Targets option)
	targetIdx []int
	deferred  bool     // Defer option: run only when nothing else is ready
	succ      []int    // every possible successor, END excluded
	upstream  []uint64 // bitset of nodes strictly upstream (see defer)
	hasUp     bool     // upstream is not empty
	// in and nin locate the node's incoming edges in Compiled.inFrom
	// and inWait, and in run.fired: nin of them from in on, one per
	// predecessor in node order; nin is 0 when the node never waits:
	// nothing is strictly upstream, or its one incoming edge (START's
	// excluded) is the one that triggered it.
	in, nin int32
	// deep is set once a task of this node made the stack of a parallel
	// step's goroutine grow: workers then make room before its tasks (see
	// worker).
	deep atomic.Bool
	_    [0]func() // not comparable
}

// hasEdge reports whether n has an edge or a declared route to node to.
func (n *node[S]) hasEdge(to int) bool {
	if slices.Contains(n.next, to) || slices.Contains(n.targetIdx, to) {
		return true
	}
	for _, b := range n.branches {
		if slices.Contains(b.idx, to) {
			return true
		}
	}
	return false
}

type branch[S any] struct {
	router  RouterFunc[S]
	targets []string
	idx     []int
}

// link computes successors and, for joins, which nodes are strictly
// upstream of each node: those whose strongly connected component reaches
// the node's component in the graph of possible routes.
func (c *Compiled[S]) link() {
	n := len(c.nodes)
	all := append([]*node[S]{c.start}, c.nodes...)
	for _, nd := range all {
		add := func(t int) {
			if t < n {
				nd.succ = appendUnique(nd.succ, t)
			}
		}
		for _, t := range nd.next {
			add(t)
		}
		for _, b := range nd.branches {
			for _, t := range b.idx {
				add(t)
			}
		}
		for _, t := range nd.targetIdx {
			add(t)
		}
	}
	// reach[i] = nodes reachable from i (i itself only through a cycle).
	words := (n + 63) / 64
	reach := make([][]uint64, n)
	for i := range c.nodes {
		reach[i] = make([]uint64, words)
		stack := append([]int(nil), c.nodes[i].succ...)
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if reach[i][v/64]&(1<<(v%64)) != 0 {
				continue
			}
			reach[i][v/64] |= 1 << (v % 64)
			stack = append(stack, c.nodes[v].succ...)
		}
	}
	in := func(i, j int) bool { return reach[i][j/64]&(1<<(j%64)) != 0 }
	for x := range c.nodes {
		up := make([]uint64, words)
		has := false
		for y := range c.nodes {
			// y is strictly upstream of x: y reaches x, x does not reach y.
			if y != x && in(y, x) && !in(x, y) {
				up[y/64] |= 1 << (y % 64)
				has = true
			}
		}
		c.nodes[x].upstream, c.nodes[x].hasUp = up, has
	}
	c.linkIn(reach)
}

// linkIn builds the join tables from reach (see link): for each node x
// with nodes strictly upstream, one incoming edge per predecessor p (a node
// with an edge or a declared route to x; START excluded: nothing can be
// pending before it), and for the edge the nodes strictly upstream of x
// that can still reach x through p: p itself and the nodes that reach p
// without passing through x. A triggered x waits for those only while p
// has not triggered it (see run.waits): a node fed by a loop runs each time
// the loop triggers it, while a join still waits for its other branches.
func (c *Compiled[S]) linkIn(reach [][]uint64) {
	n := len(c.nodes)
	words := (n + 63) / 64
	in := func(i, j int) bool { return reach[i][j/64]&(1<<(j%64)) != 0 }
	pred := make([][]int, n)
	for _, nd := range c.nodes {
		for _, t := range nd.succ {
			pred[t] = append(pred[t], nd.idx) // in node order
		}
	}
	// upTo[p] is p and the nodes that reach p, made for the predecessors
	// of the nodes that can wait. For a predecessor p of x that x does not
	// reach, it is the wait set of the edge p -> x: no path to p passes
	// through x, and every node in it is strictly upstream of x (x
	// reaching one would reach p); edges into different nodes share it.
	upTo := make([][]uint64, n)
	var w []uint64
	seen := make([]bool, n)
	var stack []int
	for x, nd := range c.nodes {
		if !nd.hasUp || len(pred[x]) == 1 && !slices.Contains(c.start.succ, x) {
			// A node with one incoming edge, which triggered it,
			// never waits: it needs no table.
			continue
		}
		nd.in, nd.nin = int32(len(c.inFrom)), int32(len(pred[x]))
		for _, p := range pred[x] {
			var wait []uint64
			if !in(x, p) {
				if upTo[p] == nil {
					u := make([]uint64, words)
					for y := range c.nodes {
						if y == p || in(y, p) {
							u[y/64] |= 1 << (y % 64)
						}
					}
					if slices.Equal(u, nd.upstream) {
						u = nd.upstream // a chain, a tree: share it
					}
					upTo[p] = u
				}
				wait = upTo[p]
			} else {
				// p is on a cycle through x: walk back from p
				// without passing through x, and keep the nodes
				// strictly upstream of x.
				if w == nil {
					w = make([]uint64, words)
				}
				clear(w)
				clear(seen)
				stack = stack[:0]
				if p != x {
					stack = append(stack, p)
				}
				has := false
				for len(stack) > 0 {
					v := stack[len(stack)-1]
					stack = stack[:len(stack)-1]
					if seen[v] {
						continue
					}
					seen[v] = true
					if nd.upstream[v/64]&(1<<(v%64)) != 0 {
						w[v/64] |= 1 << (v % 64)
						has = true
					}
					for _, u := range pred[v] {
						if u != x && !seen[u] {
							stack = append(stack, u)
						}
					}
				}
				if has {
					wait = slices.Clone(w)
				}
			}
			c.inFrom = append(c.inFrom, int32(p))
			c.inWait = append(c.inWait, wait)
		}
	}
}

// checkReach reports nodes unreachable from START and nodes from which END
// cannot be reached.
func (c *Compiled[S]) checkReach() []error {
	n := len(c.nodes)
	var errs []error
	seen := make([]bool, n)
	stack := append([]int(nil), c.start.succ...)
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if seen[v] {
			continue
		}
		seen[v] = true
		stack = append(stack, c.nodes[v].succ...)
	}
	// Reverse reachability from END.
	ends := make([]bool, n)
	changed := true
	for changed {
		changed = false
		for _, nd := range c.nodes {
			if ends[nd.idx] {
				continue
			}
			ok := false
			for _, t := range nd.next {
				ok = ok || t == n || ends[t]
			}
			for _, b := range nd.branches {
				for _, t := range b.idx {
					ok = ok || t == n || ends[t]
				}
			}
			for _, t := range nd.targetIdx {
				ok = ok || t == n || ends[t]
			}
			if ok {
				ends[nd.idx], changed = true, true
			}
		}
	}
	for i, nd := range c.nodes {
		if !seen[i] {
			errs = append(errs, invalid("node %q is unreachable from START: add an edge or a declared route to it", nd.name))
		}
		if !ends[i] {
			errs = append(errs, invalid("node %q has no way to END: add an edge from it (or from a node after it) to END", nd.name))
		}
	}
	return errs
}
