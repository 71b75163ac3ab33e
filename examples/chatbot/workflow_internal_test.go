package chatbot

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/mcp/mcptool"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/workflow"
)

// The supervisor's plan runs as tasks of the turn's own graph run: a
// streamed turn shows the workflow executor's plan node, one step task per
// step of the plan (steps 2 and 3 in one super-step) and its finish node,
// all under the workflow node's namespace, and the turn's state after the
// workflow node holds the plan's outcome as observations.
func TestWorkflowStepsAreTasksOfTheChatRun(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	b := newTestBot(t, Config{})

	// The request's context, as runTurn builds it.
	em := event.NewEmitter(event.EmitterConfig{})
	events := make(chan []event.Event, 1)
	go func() {
		var evs []event.Event
		for ev, err := range em.Events(context.Background()) {
			if err == nil {
				evs = append(evs, ev)
			}
		}
		events <- evs
	}()
	sums, err := b.provider.ToolSummaries(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var tools []model.ToolDef
	for _, s := range sums {
		tools = append(tools, model.ToolDef{Name: s.Name, Description: s.Description})
	}
	report := wire{em: em, log: zap.NewNop()}
	elicit := operator.NewElicitations(report)
	session := b.mcpReg.NewSession(mcptool.Callbacks(report, elicit))
	defer session.Close()
	const query = "Compare our pricing to competitors"
	r := &turnDeps{em: em, report: report, caller: mcptool.Session(session), elicit: elicit, turn: memory.NewTurn("conv-wf", query),
		tools: tools, meter: new(meter)}
	rctx := graph.WithConfig(context.WithValue(ctx, runKey{}, r), graph.RunConfig{ThreadID: "conv-wf"})

	type task struct {
		step int
		node string
	}
	var tasks []task
	var afterWorkflow State
	for ev, err := range b.graph.Stream(rctx, State{ConversationID: "conv-wf", RequestID: "r1", Query: query, Writer: b.cfg.WriterModel},
		graph.WithModes(graph.StreamDebug, graph.StreamValues, graph.StreamUpdates)) {
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case ev.Mode == graph.StreamDebug && ev.Debug.Kind == graph.TaskStart && slices.Equal(ev.Namespace, []string{NodeWorkflow}):
			tasks = append(tasks, task{ev.Step, ev.Node})
			if ev.Task.Namespace[0] != NodeWorkflow || !strings.HasPrefix(ev.Task.ID(), NodeWorkflow) {
				t.Errorf("task %s of the workflow has namespace %v", ev.Task.ID(), ev.Task.Namespace)
			}
		case ev.Mode == graph.StreamUpdates && len(ev.Namespace) == 0 && ev.Node == NodeWorkflow:
			afterWorkflow = State{}
			ev.Update.ApplyTo(&afterWorkflow)
		}
	}
	em.Close()
	evs := <-events

	want := []task{
		{1, workflow.NodePlan},
		{2, workflow.NodeStep},                         // step_1
		{3, workflow.NodeStep}, {3, workflow.NodeStep}, // step_2 and step_3
		{4, workflow.NodeStep}, // step_4
		{5, workflow.NodeFinish},
	}
	if diff := cmp.Diff(want, tasks, cmp.AllowUnexported(task{})); diff != "" {
		t.Errorf("tasks of the workflow subgraph, by super-step (-want +got):\n%s", diff)
	}
	if len(afterWorkflow.Observations) != 1 || afterWorkflow.Observations[0].Err != "" ||
		!strings.Contains(afterWorkflow.Observations[0].Content, "Northwind") {
		t.Errorf("the workflow node's observations = %+v, want the synthesizer's answer", afterWorkflow.Observations)
	}
	if afterWorkflow.Synthesis == "" || afterWorkflow.Synthesis != afterWorkflow.Observations[0].Content {
		t.Errorf("synthesis = %q, want the synthesizer step's output", afterWorkflow.Synthesis)
	}
	var steps []string
	for _, ev := range evs {
		if p, ok := ev.Payload.(chatevent.WorkflowStepComplete); ok {
			steps = append(steps, p.Status)
		}
	}
	if diff := cmp.Diff([]string{"", "", "", ""}, steps); diff != "" {
		t.Errorf("statuses of the steps' workflow.step.complete events (-want +got):\n%s", diff)
	}
	if _, ok := r.turn.Results.Get("step_4"); !ok {
		t.Error("the turn holds no result for step_4 (results.step)")
	}
}
