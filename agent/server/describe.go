package server

import (
	"encoding/json"
	"fmt"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/agentgraph/agentgraph/graph"
)

// This file serves what an assistant says of its graph: GET
// /assistants/{id}/graph (its nodes and edges, LangGraph's graph JSON),
// /schemas (JSON Schemas of its state) and /subgraphs (those of its
// subgraphs, by namespace).

// graphNode is a node of LangGraph's graph JSON: START and END are
// "schema" nodes, the others "runnable".
type graphNode struct {
	ID   string `json:"id"`
	Type string `json:"type"`
	Data any    `json:"data"`
}

// graphEdge is an edge of LangGraph's graph JSON; conditional marks a
// router's targets and a node's declared routes (drawn dashed).
type graphEdge struct {
	Source      string `json:"source"`
	Target      string `json:"target"`
	Data        string `json:"data,omitempty"`
	Conditional bool   `json:"conditional,omitempty"`
}

// endpoint is where an edge into (or out of) a node lands once the node
// is drawn: the node itself, or, for a subgraph drawn expanded, the
// nodes its START leads to (or that lead to its END).
type endpoint struct {
	id   string
	cond bool // reached through a conditional edge inside the subgraph
}

// graphView is LangGraph's graph JSON of t: subgraph nodes are drawn
// expanded depth levels deep (xray; -1 for all), their nodes named
// "<subgraph node>:<node>", as LangGraph names them.
func graphView(t graph.Topology, depth int) map[string]any {
	nodes := []graphNode{{ID: graph.START, Type: "schema", Data: graph.START}}
	var edges []graphEdge
	entries, exits := expandGraph(t, "", depth, &nodes, &edges)
	for _, e := range entries {
		edges = append(edges, graphEdge{Source: graph.START, Target: e.id, Conditional: e.cond})
	}
	for _, e := range exits {
		edges = append(edges, graphEdge{Source: e.id, Target: graph.END, Conditional: e.cond})
	}
	nodes = append(nodes, graphNode{ID: graph.END, Type: "schema", Data: graph.END})
	if edges == nil {
		edges = []graphEdge{}
	}
	return map[string]any{"nodes": nodes, "edges": edges}
}

// expandGraph adds t's nodes and inner edges, named with prefix, and
// returns where its START leads and what leads to its END.
func expandGraph(t graph.Topology, prefix string, depth int, nodes *[]graphNode, edges *[]graphEdge) (entries, exits []endpoint) {
	ins := map[string][]endpoint{}
	outs := map[string][]endpoint{}
	for _, n := range t.Nodes {
		id := prefix + n.Name
		if n.Subgraph != nil && depth != 0 {
			ins[n.Name], outs[n.Name] = expandGraph(*n.Subgraph, id+":", depth-1, nodes, edges)
			continue
		}
		kind := "node"
		switch {
		case n.Task:
			kind = "task"
		case n.Subgraph != nil:
			kind = "subgraph"
		}
		*nodes = append(*nodes, graphNode{ID: id, Type: "runnable", Data: map[string]any{"id": []string{"agentgraph", "graph", kind}, "name": n.Name}})
		ins[n.Name] = []endpoint{{id: id}}
		outs[n.Name] = []endpoint{{id: id}}
	}
	for _, e := range t.Edges {
		cond := e.Kind != graph.EdgeStatic
		switch {
		case e.From == graph.START && e.To == graph.END:
			// Nothing to draw inside: the subgraph passes through.
		case e.From == graph.START:
			for _, to := range ins[e.To] {
				entries = append(entries, endpoint{id: to.id, cond: cond || to.cond})
			}
		case e.To == graph.END:
			for _, from := range outs[e.From] {
				exits = append(exits, endpoint{id: from.id, cond: cond || from.cond})
			}
		default:
			for _, from := range outs[e.From] {
				for _, to := range ins[e.To] {
					*edges = append(*edges, graphEdge{Source: from.id, Target: to.id, Data: e.Label, Conditional: cond || from.cond || to.cond})
				}
			}
		}
	}
	return entries, exits
}

// xrayDepth parses the xray query parameter: a boolean (true: every
// level of subgraphs) or how many levels to expand.
func xrayDepth(r *http.Request) (int, error) {
	v := r.URL.Query().Get("xray")
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return n, nil
	}
	on, err := queryBool(r, "xray", false)
	if err != nil {
		return 0, errorf(http.StatusUnprocessableEntity, "xray: %q is neither a boolean nor a number of levels; use true, false or 0, 1, 2...", v)
	}
	if on {
		return -1, nil
	}
	return 0, nil
}

func (s *Server) getAssistantGraph(w http.ResponseWriter, r *http.Request) {
	g, _, err := s.ownAssistant(r)
	if err != nil {
		writeError(w, err)
		return
	}
	depth, err := xrayDepth(r)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, graphView(g.topology(), depth))
}

// stateSchema is the JSON Schema of a state type t's JSON form, as
// encoding/json writes it: invopop/jsonschema's reflection, with no
// field required (a run's input and a state update name the fields they
// write). Named types are referenced ($ref into $defs), so a recursive
// type (a message whose parts hold messages) has a finite schema. keys,
// when not nil, keeps only those properties (the fields clients may
// write, WithInputFields). A type the reflection cannot describe (one
// holding a func, a chan or a complex number, on which it panics) gets
// freeObject and an error saying why, for Register to log.
func stateSchema(t reflect.Type, title string, keys []string) (out json.RawMessage, err error) {
	defer func() {
		if p := recover(); p != nil {
			out, err = freeObject, fmt.Errorf("JSON Schema of %s: %v; its schemas are free objects", t, p)
		}
	}()
	r := jsonschema.Reflector{ExpandedStruct: true, Anonymous: true, RequiredFromJSONSchemaTags: true}
	sc := r.ReflectFromType(t)
	sc.Title = title
	if keys != nil && sc.Properties != nil {
		for p := sc.Properties.Oldest(); p != nil; {
			next := p.Next()
			if !slices.Contains(keys, p.Key) {
				sc.Properties.Delete(p.Key)
			}
			p = next
		}
	}
	b, err := json.Marshal(sc)
	if err != nil {
		return freeObject, fmt.Errorf("JSON Schema of %s: %w; its schemas are free objects", t, err)
	}
	return b, nil
}

// freeObject is the JSON Schema of an object of any keys: a run's
// config.configurable and context, which RunContext gives the nodes, and
// a state whose JSON form a Codec decides without giving its schema.
var freeObject = json.RawMessage(`{"type":"object"}`)

// schemaSet is the answer of GET /assistants/{id}/schemas for one graph
// or subgraph, built once at Register.
type schemaSet struct {
	input, state json.RawMessage
}

// answer is the JSON of s for the graph graphID.
func (s schemaSet) answer(graphID string) map[string]any {
	return map[string]any{"graph_id": graphID, "input_schema": s.input, "output_schema": s.state, "state_schema": s.state,
		"config_schema": freeObject, "context_schema": freeObject}
}

// buildSchemas is the schemas of a graph whose state type is state
// (inputKeys: the keys clients may write, nil for all); warn receives
// the error of a type that has no schema (which then gets freeObject).
func buildSchemas(state reflect.Type, inputKeys []string, warn func(error)) schemaSet {
	st, err := stateSchema(state, "State", nil)
	if err != nil {
		warn(err)
	}
	in := st
	if inputKeys != nil && err == nil {
		if in, err = stateSchema(state, "Input", inputKeys); err != nil {
			warn(err)
		}
	}
	return schemaSet{input: in, state: st}
}

// subgraphSchemaSets builds the schemas of t's subgraphs, and of theirs,
// keyed by namespace (subgraph node names joined by "|").
func subgraphSchemaSets(t graph.Topology, prefix string, out map[string]schemaSet, warn func(error)) {
	for _, n := range t.Nodes {
		if n.Subgraph == nil {
			continue
		}
		ns := prefix + n.Name
		out[ns] = buildSchemas(n.Subgraph.State, nil, warn)
		subgraphSchemaSets(*n.Subgraph, ns+"|", out, warn)
	}
}

func (s *Server) getAssistantSchemas(w http.ResponseWriter, r *http.Request) {
	g, _, err := s.ownAssistant(r)
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, 200, g.schemas().answer(g.graphID()))
}

// subgraphSchemas adds to out the schemas of t's subgraphs under prefix,
// keyed by namespace, and, with recurse, of theirs: those sets built at
// Register.
func subgraphSchemas(graphID string, sets map[string]schemaSet, t graph.Topology, prefix string, recurse bool, out map[string]any) {
	for _, n := range t.Nodes {
		if n.Subgraph == nil {
			continue
		}
		ns := prefix + n.Name
		out[ns] = sets[ns].answer(graphID)
		if recurse {
			subgraphSchemas(graphID, sets, *n.Subgraph, ns+"|", true, out)
		}
	}
}

func (s *Server) getAssistantSubgraphs(w http.ResponseWriter, r *http.Request) {
	g, _, err := s.ownAssistant(r)
	if err != nil {
		writeError(w, err)
		return
	}
	recurse, err := queryBool(r, "recurse", false)
	if err != nil {
		writeError(w, err)
		return
	}
	t := g.topology()
	sets := g.subgraphSchemas()
	if ns := r.PathValue("namespace"); ns != "" {
		// The subgraph at ns (node names joined by "|"): its schemas,
		// and with recurse those of its subgraphs.
		names := strings.Split(ns, "|")
		for k, name := range names {
			i := slices.IndexFunc(t.Nodes, func(n graph.TopologyNode) bool { return n.Name == name && n.Subgraph != nil })
			if i < 0 {
				var subs []string
				for _, n := range t.Nodes {
					if n.Subgraph != nil {
						subs = append(subs, n.Name)
					}
				}
				writeError(w, errorf(http.StatusNotFound, "namespace %q: graph %q has no subgraph %q there (subgraph nodes: %s)", clip(ns), g.graphID(), clip(name), strings.Join(subs, ", ")))
				return
			}
			if k < len(names)-1 {
				t = *t.Nodes[i].Subgraph
				continue
			}
			out := map[string]any{ns: sets[ns].answer(g.graphID())}
			if recurse {
				subgraphSchemas(g.graphID(), sets, *t.Nodes[i].Subgraph, ns+"|", true, out)
			}
			writeJSON(w, 200, out)
			return
		}
	}
	out := map[string]any{}
	subgraphSchemas(g.graphID(), sets, t, "", recurse, out)
	writeJSON(w, 200, out)
}
