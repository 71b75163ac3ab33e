package graph

import (
	"strings"
)

// drawer is a compiled graph drawn inside another as a subgraph.
type drawer interface {
	draw(b *strings.Builder, prefix, indent string)
	topology() Topology
}

// Mermaid returns a Mermaid flowchart of the graph: START and END as
// stadiums, nodes as boxes (task nodes as subroutines), static edges as
// solid arrows, conditional edges as dotted arrows, routes declared with
// [Targets] as dotted arrows labelled "goto", Sends as dotted arrows
// labelled "send", and subgraph nodes as nested subgraphs drawn in full.
// Labels set with [Graph.Label] replace the default ones.
// The output is deterministic.
func (c *Compiled[S]) Mermaid() string {
	var b strings.Builder
	b.WriteString("flowchart TD\n")
	c.draw(&b, "", "\t")
	return b.String()
}

func (c *Compiled[S]) draw(b *strings.Builder, prefix, indent string) {
	id := func(name string) string { return prefix + mermaidID(name) }
	line := func(parts ...string) {
		b.WriteString(indent)
		for _, p := range parts {
			b.WriteString(p)
		}
		b.WriteByte('\n')
	}
	line(id(START), "([START])")
	for _, n := range c.nodes {
		switch {
		case n.sub != nil:
			line("subgraph ", id(n.name), "[", mermaidLabel(n.name), "]")
			n.sub.draw(b, id(n.name)+"__", indent+"\t")
			line("end")
		case n.task != nil:
			line(id(n.name), "[[", mermaidLabel(n.name), "]]")
		default:
			line(id(n.name), "[", mermaidLabel(n.name), "]")
		}
	}
	line(id(END), "([END])")
	name := func(i int) string {
		if i == len(c.nodes) {
			return END
		}
		return c.nodes[i].name
	}
	// kind: "" for a static edge, "?" for a conditional one, "goto" for a
	// route declared with Targets. Sends are drawn as "send".
	arrow := func(from *node[S], to int, kind string) {
		label := c.labels[[2]int{from.idx, to}]
		if label == "" && to < len(c.nodes) && c.nodes[to].task != nil {
			label = "send"
		}
		if label == "" && kind == "goto" {
			label = "goto"
		}
		switch {
		case kind == "" && label == "":
			line(id(from.name), " --> ", id(name(to)))
		case kind == "":
			line(id(from.name), " -->|", mermaidLabel(label), "| ", id(name(to)))
		case label == "":
			line(id(from.name), " -.-> ", id(name(to)))
		default:
			line(id(from.name), " -.->|", mermaidLabel(label), "| ", id(name(to)))
		}
	}
	for _, n := range append([]*node[S]{c.start}, c.nodes...) {
		for _, t := range n.next {
			arrow(n, t, "")
		}
		for _, br := range n.branches {
			for _, t := range br.idx {
				arrow(n, t, "?")
			}
		}
		for _, t := range n.targetIdx {
			arrow(n, t, "goto")
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
