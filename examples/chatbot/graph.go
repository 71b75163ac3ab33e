package chatbot

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode/utf8"

	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/event"
	"github.com/agentgraph/agentgraph/examples/chatbot/chatevent"
	"github.com/agentgraph/agentgraph/examples/chatbot/mcpservers/knowledge"
	"github.com/agentgraph/agentgraph/examples/supervisor"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/elicit"
	"github.com/agentgraph/agentgraph/operator/workflow"
)

// Node names of the chat graph.
const (
	NodeInitialize = "initialize"
	NodeSupervisor = "supervisor"
	NodeTool       = "tool"
	NodeWorkflow   = "workflow"
	NodeClarify    = "clarify"
	NodeObserve    = "observe"
	NodeReflect    = "reflect"
	NodeSynthesize = "synthesize"
	NodeBlocked    = "handle_blocked"
	NodeWrite      = "write"
	NodeRespond    = "respond"
)

// maxObservation caps the text of one observation shown to the models.
const maxObservation = 6000

// turnDeps are the runtime objects the nodes of one turn use: the turn's
// event stream, its MCP session, how it asks the user, its scratchpad and
// the tools it may call. They are not data of the turn (that is State) and
// cannot be saved; runTurn builds them before the run and puts them in the
// run's context, so one compiled graph serves every request. Nodes only
// read them.
type turnDeps struct {
	em *event.Emitter
	// report is em for the SDK packages: it maps their reports to chat
	// events (see wire).
	report operator.Reporter
	caller operator.ToolCaller
	elicit elicit.Elicitor
	turn   *memory.Turn
	tools  []model.ToolDef
	meter  *meter
	// endTools closes the turn's MCP session once no tool runs any more
	// (write, respond): the progress it still has queued is emitted
	// before the answer, and late progress is dropped, so that nothing
	// follows response.done. Nil outside a turn.
	endTools func()
	// slot is the turn's running slot, given up while the turn waits for
	// something other than the CPU (load_document waiting for a
	// document). Nil outside a turn.
	slot *turnSlot
}

// toolsDone ends the turn's tool calls (see turnDeps.endTools).
func (r *turnDeps) toolsDone() {
	if r.endTools != nil {
		r.endTools()
	}
}

type runKey struct{}

func runFrom(ctx context.Context) *turnDeps {
	r, _ := ctx.Value(runKey{}).(*turnDeps)
	if r == nil {
		// Only a graph run started outside Chat gets here.
		em := event.NewEmitter(event.EmitterConfig{})
		return &turnDeps{em: em, report: wire{em: em, log: zap.NewNop()}, meter: new(meter)}
	}
	return r
}

// buildGraph compiles the chat graph. It has no checkpointer: a turn is a
// run of its own that nothing resumes (a cancelled or failed turn leaves
// nothing in the conversation, and the next turn starts clean from the
// conversation memory), so the checkpoint it would save when it ends would
// be written, never read, and kept forever, one per turn.
func buildGraph(b *Bot) (*graph.Compiled[State], error) {
	g := graph.New[State]()
	g.AddNode(NodeInitialize, b.initialize)
	g.AddNode(NodeSupervisor, b.supervise)
	toolFlow, err := buildToolFlow(b)
	if err != nil {
		return nil, fmt.Errorf("chatbot: compiling the tool subflow: %w", err)
	}
	graph.AddSubgraph(g, NodeTool, toolFlow,
		func(s State) ToolState {
			return ToolState{ConversationID: s.ConversationID, Query: s.Query, Tool: s.Decision.Tool, Arguments: s.Decision.Arguments, Prior: s.Observations}
		},
		func(c ToolState) graph.Update[State] {
			obs := make([]supervisor.Observation, 0, len(c.Prior)+1)
			obs = append(append(obs, c.Prior...), c.Observation)
			if c.Direct != nil {
				// The tool answered the user itself: reflection routes
				// to respond (direct_response), which stores what it sent.
				return graph.Updates(fObservations.Set(obs), fUsage.Set(c.Usage), fDirect.Set(true), fFinal.Set(*c.Direct))
			}
			return graph.Updates(fObservations.Set(obs), fUsage.Set(c.Usage))
		})
	exec, err := workflow.NewExecutor(b.workflowConfig())
	if err != nil {
		return nil, fmt.Errorf("chatbot: compiling the workflow executor: %w", err)
	}
	graph.AddSubgraph(g, NodeWorkflow, exec.Graph(), workflowInput, workflowOutput)
	g.AddNode(NodeClarify, b.clarify)
	g.AddNode(NodeObserve, b.observe)
	g.AddNode(NodeReflect, b.reflect)
	g.AddNode(NodeSynthesize, b.synthesize)
	g.AddNode(NodeBlocked, b.handleBlocked)
	g.AddNode(NodeWrite, b.write)
	g.AddNode(NodeRespond, b.respond)

	g.AddEdge(graph.START, NodeInitialize)
	g.AddEdge(NodeInitialize, NodeSupervisor)
	g.AddConditionalEdges(NodeSupervisor, routeDecision, NodeWrite, NodeTool, NodeWorkflow, NodeClarify, NodeBlocked)
	g.AddEdge(NodeTool, NodeObserve)
	g.AddEdge(NodeWorkflow, NodeObserve)
	g.AddEdge(NodeClarify, NodeWrite)
	g.AddEdge(NodeObserve, NodeReflect)
	g.AddConditionalEdges(NodeReflect, b.routeReflection, NodeSupervisor, NodeSynthesize, NodeWrite, NodeBlocked, NodeRespond)
	g.AddEdge(NodeSynthesize, NodeWrite)
	g.AddEdge(NodeBlocked, NodeWrite)
	g.AddEdge(NodeWrite, NodeRespond)
	g.AddEdge(NodeRespond, graph.END)
	g.Label(NodeSupervisor, NodeWrite, "answer").Label(NodeSupervisor, NodeTool, "call_tool").
		Label(NodeSupervisor, NodeWorkflow, "workflow").Label(NodeSupervisor, NodeClarify, "clarify").
		Label(NodeSupervisor, NodeBlocked, "answer, every tool failed").
		Label(NodeReflect, NodeSupervisor, "need_more").Label(NodeReflect, NodeSynthesize, "several sources").
		Label(NodeReflect, NodeWrite, "satisfied").Label(NodeReflect, NodeBlocked, "blocked").
		Label(NodeReflect, NodeRespond, "direct_response")
	c, err := g.Compile(graph.WithLogger(b.log),
		graph.WithHooks(b.cfg.Hooks))
	if err != nil {
		return nil, fmt.Errorf("chatbot: compiling the chat graph: %w", err)
	}
	return c, nil
}

// initialize starts a turn: it resets the per-turn fields, loads the
// conversation's summary and recent messages (runTurn listed the
// conversation before) and, with cognition, loads what is known about
// the turn's user. (The turn's first event,
// "Analyzing your question...", was sent by Chat when it accepted the
// turn.)
func (b *Bot) initialize(ctx context.Context, s State) (graph.Update[State], error) {
	view, err := b.convs.View(ctx, s.ConversationID)
	if err != nil {
		return graph.Update[State]{}, fmt.Errorf("loading the conversation: %w", err)
	}
	cognition := ""
	if s.User != "" {
		cognition = b.loadCognition(ctx, s.User, s.Query)
	}
	return graph.Updates(
		fContext.Set(conversationText(view)), fCognition.Set(cognition),
		fObservations.Set(nil), fIteration.Set(0), fDecision.Set(supervisor.Decision{}),
		fReflection.Set(supervisor.Reflection{}), fSynthesis.Set(""), fDraft.Set(""),
		fFinal.Set(""), fDirect.Set(false), fBlocked.Set(false),
	), nil
}

// conversationText renders a conversation view as the prompts'
// conversation context: the summary, then one "role: text" line per
// message.
func conversationText(v memory.View) string {
	var sb strings.Builder
	if v.Summary.Text != "" {
		fmt.Fprintf(&sb, "Summary of earlier messages: %s\n", v.Summary.Text)
	}
	for _, m := range append(append([]memory.Message(nil), v.Pending...), v.Recent...) {
		fmt.Fprintf(&sb, "%s: %s\n", m.Role, m.Content)
	}
	return strings.TrimSpace(sb.String())
}

// supervise makes one supervisor decision.
func (b *Bot) supervise(ctx context.Context, s State) (graph.Update[State], error) {
	r := runFrom(ctx)
	it := s.Iteration + 1
	if it > 1 { // the first iteration's thinking was announced by Chat
		if err := r.em.Emit(ctx, chatevent.SupervisorThinking{Message: "Reviewing the results..."}); err != nil {
			return graph.Update[State]{}, err
		}
	}
	in, opts := b.supervisorInput(ctx, s.ConversationID, supervisor.DecideInput{
		Query: s.Query, Tools: r.tools, Context: withClientContext(s.ClientContext, withCognition(s.Cognition, s.Context)), Observations: s.Observations,
		Iteration: it, MaxIterations: b.cfg.MaxIterations,
	})
	res, err := supervisor.Decide(ctx, b.turnModel(), in, opts...)
	if err != nil {
		return graph.Update[State]{}, fmt.Errorf("supervisor decision: %w", err)
	}
	d := res.Value
	if err := r.em.Emit(ctx, chatevent.SupervisorDecided{Action: wireAction(d.Action), Message: decisionMessage(d)}); err != nil {
		return graph.Update[State]{}, err
	}
	draft := d.Response
	if d.Action == supervisor.ActionClarify {
		draft = d.Question
	}
	return graph.Updates(fIteration.Set(it), fDecision.Set(d), fUsage.Set(r.meter.take()), fDraft.Set(draft)), nil
}

// wireAction is a supervisor action as the chat's events name it:
// "answer", "call_tool", "workflow" or "clarify".
func wireAction(a supervisor.Action) string {
	if a == supervisor.ActionCreateWorkflow {
		return "workflow"
	}
	return strings.ToLower(string(a))
}

func decisionMessage(d supervisor.Decision) string {
	switch d.Action {
	case supervisor.ActionCallTool:
		return "Calling " + d.Tool + "..."
	case supervisor.ActionCreateWorkflow:
		return "Creating a plan..."
	case supervisor.ActionClarify:
		return "Asking for clarification..."
	default:
		return "Writing the answer..."
	}
}

func routeDecision(_ context.Context, s State) (graph.Route, error) {
	switch s.Decision.Action {
	case supervisor.ActionCallTool:
		return graph.To(NodeTool), nil
	case supervisor.ActionCreateWorkflow:
		return graph.To(NodeWorkflow), nil
	case supervisor.ActionClarify:
		return graph.To(NodeClarify), nil
	default:
		if len(s.Observations) > 0 && !succeeded(s) {
			// Every call failed: a graceful answer, not one written
			// from error messages.
			return graph.To(NodeBlocked), nil
		}
		return graph.To(NodeWrite), nil
	}
}

// workflowConfig configures the workflow executor, the chat graph's
// workflow node: the steps run the bot's operators with the turn's
// emitter, MCP session, questions and turn, taken from the run's context.
//
// It has no Checkpointer, as the chat graph has none: a turn that stopped
// part-way is closed, not resumed (see runTurn), so the executor is one
// task of the turn's run.
func (b *Bot) workflowConfig() workflow.Config {
	return workflow.Config{Operators: b.ops, Assembler: b.assembler, Logger: b.log, EnvFrom: workflowEnv}
}

// workflowEnv is the Env of the workflow steps of the turn ctx belongs to.
func workflowEnv(ctx context.Context) operator.Env {
	r := runFrom(ctx)
	return operator.Env{Reporter: r.report, Elicitor: r.elicit, Tools: r.caller, Turn: r.turn}
}

// workflowInput gives the workflow executor the supervisor's plan. A
// decision without one gives an empty plan, which the executor reports as
// invalid.
func workflowInput(s State) workflow.ExecState {
	in := workflow.ExecState{Query: s.Query}
	if p := s.Decision.Workflow; p != nil {
		in.Plan = *p
	}
	return in
}

// workflowOutput adds the workflow's outcome to the turn's observations:
// one per step no other step depends on, each that step's output or why
// it failed or was skipped (or one saying why the plan did not run). A
// synthesizer step's output is the turn's synthesis.
func workflowOutput(x workflow.ExecState) graph.Update[State] {
	source := "workflow"
	if x.Plan.Goal != "" {
		source += ": " + x.Plan.Goal
	}
	if x.Error != "" {
		return fAddObservations.Set([]supervisor.Observation{{Source: source, Err: x.Error}})
	}
	var obs []supervisor.Observation
	synthesis := ""
	for _, id := range x.Plan.Leaves() {
		sr, ok := x.Step(id)
		if !ok {
			continue
		}
		o := supervisor.Observation{Source: source + " / " + sr.Name}
		if sr.Status == workflow.Succeeded {
			out := renderOutput(sr.Output)
			o.Content = truncate(out, maxObservation)
			if sr.Operator == "synthesizer" {
				synthesis = out
			}
		} else {
			o.Err = fmt.Sprintf("step %s %s", sr.ID, sr.Status)
			if sr.Err != nil {
				o.Err += ": " + sr.Err.Error()
			}
		}
		obs = append(obs, o)
	}
	return graph.Updates(fAddObservations.Set(obs), fSynthesis.Set(synthesis))
}

func renderOutput(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case nil:
		return ""
	default:
		return fmt.Sprint(v)
	}
}

// clarify asks the user the supervisor's question.
func (b *Bot) clarify(_ context.Context, s State) (graph.Update[State], error) {
	q := s.Decision.Question
	if q == "" {
		q = supervisor.ClarifyFallback
	}
	return graph.Updates(fDraft.Set(q)), nil
}

// observe closes the turn's latest action: its results are in the
// observations, each cut to maxObservation when it was collected (the tool
// subflow's collect node, workflowOutput). It counts the tokens the
// action's operators used (a workflow's steps) that no node counted yet.
func (b *Bot) observe(ctx context.Context, _ State) (graph.Update[State], error) {
	return graph.Updates(fUsage.Set(runFrom(ctx).meter.take())), nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + " […]"
}

// reflect judges the observations: satisfied, need_more, blocked or
// direct_response.
func (b *Bot) reflect(ctx context.Context, s State) (graph.Update[State], error) {
	res, err := supervisor.Reflect(ctx, b.turnModel(), supervisor.ReflectInput{
		Query: s.Query, Observations: s.Observations, Iteration: s.Iteration,
		MaxIterations: b.cfg.MaxIterations, DirectResponse: s.SentDirectResponse,
	}, agent.WithModel(b.cfg.SupervisorModel))
	if err != nil {
		return graph.Update[State]{}, fmt.Errorf("reflection: %w", err)
	}
	return graph.Updates(fReflection.Set(res.Value), fUsage.Set(runFrom(ctx).meter.take())), nil
}

func (b *Bot) routeReflection(_ context.Context, s State) (graph.Route, error) {
	switch s.Reflection.Assessment {
	case supervisor.AssessDirectResponse:
		return graph.To(NodeRespond), nil
	case supervisor.AssessBlocked:
		return graph.To(NodeBlocked), nil
	case supervisor.AssessNeedMore:
		if s.Iteration < b.cfg.MaxIterations {
			return graph.To(NodeSupervisor), nil
		}
	}
	if needsSynthesis(s) {
		return graph.To(NodeSynthesize), nil
	}
	return graph.To(NodeWrite), nil
}

// needsSynthesis reports whether several sources answered and nothing
// combined them yet.
func needsSynthesis(s State) bool {
	if s.Synthesis != "" {
		return false
	}
	n := 0
	for _, o := range s.Observations {
		if o.Err == "" && o.Content != "" {
			n++
		}
	}
	return n > 1
}

// synthesize combines the sources with the synthesizer operator.
func (b *Bot) synthesize(ctx context.Context, s State) (graph.Update[State], error) {
	r := runFrom(ctx)
	var sources []any
	for _, o := range s.Observations {
		if o.Err == "" && o.Content != "" {
			sources = append(sources, "("+o.Source+") "+o.Content)
		}
	}
	res, err := b.provider.Execute(ctx, "synthesizer", map[string]any{"query": s.Query, "sources": sources},
		operator.Env{Query: s.Query, Tools: r.caller, Reporter: r.report, Elicitor: r.elicit, Turn: r.turn})
	if err != nil {
		if ctx.Err() != nil {
			return graph.Update[State]{}, ctx.Err()
		}
		b.log.Warn("chatbot: synthesis failed; writing from the sources")
		return graph.Update[State]{}, nil
	}
	return graph.Updates(fSynthesis.Set(res.Text()), fUsage.Set(r.meter.take())), nil
}

// handleBlocked turns a dead end into a graceful answer.
func (b *Bot) handleBlocked(_ context.Context, s State) (graph.Update[State], error) {
	reason := ""
	if s.Reflection.Assessment == supervisor.AssessBlocked {
		reason = strings.TrimRight(strings.TrimSpace(s.Reflection.Blocker), ".")
	}
	if reason == "" {
		var failed []string
		for _, o := range s.Observations {
			if o.Err != "" && !slices.Contains(failed, o.Source) {
				failed = append(failed, o.Source)
			}
		}
		reason = "the sources I tried returned nothing usable"
		if len(failed) > 0 {
			reason = "the sources I tried (" + strings.Join(failed, ", ") + ") are not answering right now"
		}
	}
	// Trying again later helps only when a source failed; a source that
	// answered with nothing will answer the same, and then the answer
	// says what the sources do cover, when that is known: the bundled
	// knowledge base's topics, once it was searched.
	next := "try again later, rephrase the question, or ask about something more specific."
	if !slices.ContainsFunc(s.Observations, func(o supervisor.Observation) bool { return o.Err != "" }) {
		next = "rephrase the question, or ask about something more specific."
		if b.searchedBundledKnowledge(s.Observations) {
			next = "rephrase the question, or ask about what my sources cover: " + coveredTopics() + "."
		}
	}
	return graph.Updates(fBlocked.Set(true), fDraft.Set("I'm sorry, I couldn't find an answer to that: "+reason+
		". You could "+next)), nil
}

// searchedBundledKnowledge reports whether the bundled knowledge server
// runs and one of the observations came from it: only then are its
// topics (coveredTopics) what the sources cover.
func (b *Bot) searchedBundledKnowledge(obs []supervisor.Observation) bool {
	return slices.Contains(b.bundled, "knowledge") && slices.ContainsFunc(obs, func(o supervisor.Observation) bool {
		return strings.Contains(o.Source, "knowledge")
	})
}

// coveredTopics are what the bundled knowledge base is about, named when
// a question finds nothing in it: its documents' titles
// (knowledge.Topics), read once.
var coveredTopics = sync.OnceValue(func() string {
	topics, err := knowledge.Topics(nil)
	if err != nil || len(topics) == 0 {
		return "our products, plans, pricing and policies" // the bundled corpus always has titles
	}
	if len(topics) == 1 {
		return topics[0]
	}
	return strings.Join(topics[:len(topics)-1], ", ") + " or " + topics[len(topics)-1]
})

// write writes the answer, streaming it as response.chunk events. A
// question for the user, a graceful failure and an answer the supervisor
// gave without any results are sent as they are.
func (b *Bot) write(ctx context.Context, s State) (graph.Update[State], error) {
	r := runFrom(ctx)
	r.toolsDone()
	verbatim := s.Decision.Action == supervisor.ActionClarify || s.Blocked ||
		(len(s.Observations) == 0 && s.Draft != "")
	var text string
	if verbatim {
		text = s.Draft
		if err := streamText(ctx, r.em, text); err != nil {
			return graph.Update[State]{}, err
		}
	} else {
		draft := s.Draft
		if s.Synthesis != "" {
			draft = s.Synthesis
		}
		res, err := supervisor.Write(ctx, b.turnModel(), supervisor.WriteInput{
			Query: s.Query, Context: withClientContext(s.ClientContext, withCognition(s.Cognition, s.Context)), Observations: s.Observations, Draft: draft,
		}, agent.WithModel(cmp.Or(s.Writer, DefaultWriterModel)), agent.WithStreaming(func(ctx context.Context, c model.Chunk) error {
			if c.Kind != model.ChunkText || c.Text == "" {
				return nil
			}
			return r.em.Emit(ctx, chatevent.ResponseChunk{Content: c.Text})
		}))
		if err != nil {
			return graph.Update[State]{}, fmt.Errorf("writing the answer: %w", err)
		}
		text = res.Value
	}
	return graph.Updates(fFinal.Set(text), fUsage.Set(r.meter.take())), nil
}

// streamText sends text as response.chunk events of a few words each.
func streamText(ctx context.Context, em *event.Emitter, text string) error {
	const size = 24
	for len(text) > 0 {
		n := min(size, len(text))
		if i := strings.IndexByte(text[n:], ' '); i >= 0 && n < len(text) {
			n += i + 1
		} else if n < len(text) {
			n = len(text)
		}
		if err := em.Emit(ctx, chatevent.ResponseChunk{Content: text[:n]}); err != nil {
			return err
		}
		text = text[n:]
	}
	return nil
}

// respond ends the turn: it stores the exchange in the conversation memory
// (whose summary, when messages leave the window, is a model call of the
// turn's) and reports the token usage, then response.done (or
// clarify.request when the answer is a question).
func (b *Bot) respond(ctx context.Context, s State) (graph.Update[State], error) {
	r := runFrom(ctx)
	r.toolsDone()
	answer := s.FinalResponse
	if s.SentDirectResponse && answer == "" {
		answer = "(sent directly by a tool)"
	}
	err := b.convs.Append(ctx, s.ConversationID,
		memory.Message{Role: memory.RoleUser, Content: s.Query},
		memory.Message{Role: memory.RoleAssistant, Content: answer})
	var sumErr *memory.SummarizeError
	if errors.As(err, &sumErr) {
		b.log.Warn("chatbot: conversation summary failed; the messages are kept and summarised later")
	} else if err != nil {
		return graph.Update[State]{}, fmt.Errorf("saving the conversation: %w", err)
	}
	summary := r.meter.take()
	u := fUsage.Set(summary)
	if err := r.em.Emit(ctx, chatevent.TokenUsage{Usage: s.Usage.Merge(summary)}); err != nil {
		return u, err
	}
	if s.Decision.Action == supervisor.ActionClarify {
		return u, r.em.Emit(ctx, chatevent.ClarifyRequest{Question: s.FinalResponse})
	}
	return u, r.em.Emit(ctx, chatevent.ResponseDone{})
}
