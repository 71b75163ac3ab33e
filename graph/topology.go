package graph

import "reflect"

// Topology is the shape of a compiled graph, as [Compiled.Mermaid] draws
// it, for programs that render or serve it (LangGraph's graph JSON, say):
// its state type, its nodes and the edges between them.
type Topology struct {
	// State is the graph's state type S.
	State reflect.Type
	// Nodes are the graph's nodes in the order they were added; [START]
	// and [END] are not among them (edges name them).
	Nodes []TopologyNode
	// Edges are the graph's edges: for each source ([START] first, then
	// the nodes in order), its static edges, the targets of its
	// conditional edges, then the routes it declared with [Targets].
	Edges []TopologyEdge
}

// TopologyNode is one node of a [Topology].
type TopologyNode struct {
	// Name is the node's name.
	Name string
	// Task says the node is a task node ([AddTask]), run by Sends.
	Task bool
	// Subgraph is the topology of the compiled graph a subgraph node
	// ([AddSubgraph]) runs; nil for other nodes.
	Subgraph *Topology
}

// EdgeKind says how an edge of a [Topology] is taken.
type EdgeKind int

const (
	// EdgeStatic is an edge of [Graph.AddEdge], always taken.
	EdgeStatic EdgeKind = iota
	// EdgeConditional is a possible target of a router
	// ([Graph.AddConditionalEdges]).
	EdgeConditional
	// EdgeGoto is a route a node declared with [Targets], taken when its
	// update routes there ([Update.Goto], [Update.Send]).
	EdgeGoto
)

// TopologyEdge is one edge of a [Topology].
type TopologyEdge struct {
	// From and To are node names, [START] and [END] included.
	From, To string
	// Kind says how the edge is taken.
	Kind EdgeKind
	// Label is the edge's label set with [Graph.Label], "" for none.
	Label string
}

// Topology returns the graph's shape: its nodes (subgraph nodes with
// the shape of the graph they run) and its edges, in the order
// [Compiled.Mermaid] draws them.
func (c *Compiled[S]) Topology() Topology {
	t := Topology{State: reflect.TypeFor[S](), Nodes: make([]TopologyNode, 0, len(c.nodes))}
	for _, n := range c.nodes {
		tn := TopologyNode{Name: n.name, Task: n.task != nil}
		if n.sub != nil {
			sub := n.sub.topology()
			tn.Subgraph = &sub
		}
		t.Nodes = append(t.Nodes, tn)
	}
	name := func(i int) string {
		if i == len(c.nodes) {
			return END
		}
		return c.nodes[i].name
	}
	add := func(from *node[S], to int, kind EdgeKind) {
		t.Edges = append(t.Edges, TopologyEdge{From: from.name, To: name(to), Kind: kind, Label: c.labels[[2]int{from.idx, to}]})
	}
	for _, n := range append([]*node[S]{c.start}, c.nodes...) {
		for _, to := range n.next {
			add(n, to, EdgeStatic)
		}
		for _, br := range n.branches {
			for _, to := range br.idx {
				add(n, to, EdgeConditional)
			}
		}
		for _, to := range n.targetIdx {
			add(n, to, EdgeGoto)
		}
	}
	return t
}

func (c *Compiled[S]) topology() Topology { return c.Topology() }
