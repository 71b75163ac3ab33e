package graph

import (
	"strings"
)

// drawer is a compiled graph drawn inside another as a subgraph: its
// Topology is drawn, and reported, as part of its parent's.
type drawer interface {
	topology() Topology
}

// Mermaid returns a Mermaid flowchart of the graph: START and END as
// stadiums, nodes as boxes (task nodes as subroutines), static edges as
// solid arrows, conditional edges as dotted arrows, routes declared with
// [Targets] as dotted arrows labelled "goto", Sends as dotted arrows
// labelled "send", and subgraph nodes as nested subgraphs drawn in full.
// Labels set with [Graph.Label] replace the default ones.
// The output is deterministic. It draws the graph's [Compiled.Topology].
func (c *Compiled[S]) Mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	t := c.Topology()
	drawMermaid(&b, &t, "", "\t")
	return b.String()
}

// drawMermaid writes the nodes and edges of t, each line indented by
// indent, with Mermaid ids prefixed by prefix (those of a subgraph by its
// node's id).
func drawMermaid(b *strings.Builder, t *Topology, prefix, indent string) {
	id := func(name string) string { return prefix + mermaidID(name) }
	line := func(parts ...string) {
		b.WriteString(indent)
		for _, p := range parts {
			b.WriteString(p)
		}
		b.WriteByte('\n')
	}
	line(id(START), "([START])")
	task := make(map[string]bool, len(t.Nodes))
	for i := range t.Nodes {
		n := &t.Nodes[i]
		task[n.Name] = n.Task
		switch {
		case n.Subgraph != nil:
			line("subgraph ", id(n.Name), "[", mermaidLabel(n.Name), "]")
			drawMermaid(b, n.Subgraph, id(n.Name)+"__", indent+"\t")
			line("end")
		case n.Task:
			line(id(n.Name), "[[", mermaidLabel(n.Name), "]]")
		default:
			line(id(n.Name), "[", mermaidLabel(n.Name), "]")
		}
	}
	line(id(END), "([END])")
	for _, e := range t.Edges {
		label := e.Label
		if label == "" && task[e.To] {
			label = "send"
		}
		if label == "" && e.Kind == EdgeGoto {
			label = "goto"
		}
		switch {
		case e.Kind == EdgeStatic && label == "":
			line(id(e.From), " --> ", id(e.To))
		case e.Kind == EdgeStatic:
			line(id(e.From), " -->|", mermaidLabel(label), "| ", id(e.To))
		case label == "":
			line(id(e.From), " -.-> ", id(e.To))
		default:
			line(id(e.From), " -.->|", mermaidLabel(label), "| ", id(e.To))
		}
	}
}

// mermaidID turns a node name into a Mermaid identifier.
func mermaidID(name string) string {
	var b strings.Builder
	for _, r := range name {
		if r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// mermaidLabel quotes a node name as a Mermaid label.
func mermaidLabel(name string) string {
	return `"` + strings.ReplaceAll(name, `"`, "#quot;") + `"`
}
