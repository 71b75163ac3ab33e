package graph

import (
	"fmt"

	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// The ids a durable run saves are built from node names and the run's
// thread id, and every checkpoint.Saver refuses one longer than
// checkpoint.MaxIDLen bytes (checkpoint.ValidateID). Compile and the start
// of a durable run check that they fit, so that a run does not fail at
// the step that first saves a long one, after earlier steps were saved.
const (
	// taskIDRoom is the most bytes taskID(step, node, i) adds to node: a
	// step and an index of up to 20 bytes each and two colons.
	taskIDRoom = 2*20 + 2
	// interruptIDRoom is the most bytes an interrupt id adds to its
	// task's id: "#" and the interrupt's number, or suffixBefore.
	interruptIDRoom = 1 + 20
)

// idRoomer is a subgraph node's child graph, which reports the room its
// ids take (see Compiled.idRoom).
type idRoomer interface {
	idRoom() (durable bool, thread, interrupt int)
}

// idRoom reports whether c runs on a thread of its own under a durable
// parent (it has a checkpointer), the most bytes its subgraph threads add
// to its thread id, and the most bytes its interrupt ids take.
func (c *Compiled[S]) idRoom() (durable bool, thread, interrupt int) {
	return c.set.saver != nil, c.threadRoom, c.interruptRoom
}

// checkIDRoom checks, for a graph with a checkpointer, that every node
// name passes checkpoint.ValidateID with room for the task id and
// interrupt id built on it, and that the ids its durable subgraphs nest
// fit; it sets c.threadRoom and c.interruptRoom.
func (c *Compiled[S]) checkIDRoom() []error {
	var errs []error
	const most = checkpoint.MaxIDLen - taskIDRoom - interruptIDRoom
	for _, nd := range c.nodes {
		if err := checkpoint.ValidateID("Compile", fmt.Sprintf("node name %.40q", nd.name), nd.name); err != nil {
			errs = append(errs, invalid("%v", err))
			continue
		}
		if len(nd.name) > most {
			errs = append(errs, invalid("node name %.40q... is %d bytes: a checkpointed task id (\"step:node:index\") and interrupt id built on it could exceed checkpoint.MaxIDLen (%d bytes); use a node name of at most %d bytes", nd.name, len(nd.name), checkpoint.MaxIDLen, most))
			continue
		}
		task := len(nd.name) + taskIDRoom
		thread, interrupt := 0, task+interruptIDRoom
		if r, ok := nd.sub.(idRoomer); ok {
			if durable, t, i := r.idRoom(); durable {
				// SubgraphThread: parent + "|" + task id, and the
				// child's own subgraph threads under it; a child's
				// interrupt is raised as task id + "#" + its id.
				thread = 1 + task + t
				interrupt = max(interrupt, task+1+i)
			}
		}
		c.threadRoom = max(c.threadRoom, thread)
		c.interruptRoom = max(c.interruptRoom, interrupt)
	}
	if c.threadRoom >= checkpoint.MaxIDLen {
		errs = append(errs, invalid("the subgraph threads of this graph (graph.SubgraphThread, nested) add up to %d bytes to a thread id, which leaves no room in checkpoint.MaxIDLen (%d bytes); use shorter subgraph node names or nest fewer durable subgraphs", c.threadRoom, checkpoint.MaxIDLen))
	}
	if c.interruptRoom > checkpoint.MaxIDLen {
		errs = append(errs, invalid("the interrupt ids of this graph's subgraphs (task id \"#\" the child's interrupt id, nested) take up to %d bytes, more than checkpoint.MaxIDLen (%d bytes); use shorter subgraph node names or nest fewer durable subgraphs", c.interruptRoom, checkpoint.MaxIDLen))
	}
	return errs
}

// checkThreadRoom checks, before a durable run of c on thread starts, that
// the thread id and the subgraph threads built on it fit in
// checkpoint.MaxIDLen; the error wraps checkpoint.ErrInvalid. Without
// subgraph threads the Saver checks the thread id when the run loads it.
func (c *Compiled[S]) checkThreadRoom(thread string) error {
	if c.threadRoom == 0 || len(thread)+c.threadRoom <= checkpoint.MaxIDLen {
		return nil
	}
	return fmt.Errorf("%w: thread id %.40q... is %d bytes, and the graph's durable subgraphs run on threads (graph.SubgraphThread) that add up to %d bytes to it, past checkpoint.MaxIDLen (%d bytes); use a thread id of at most %d bytes",
		checkpoint.ErrInvalid, thread, len(thread), c.threadRoom, checkpoint.MaxIDLen, checkpoint.MaxIDLen-c.threadRoom)
}
