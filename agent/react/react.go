package react

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"unsafe"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
	"github.com/agentgraph/agentgraph/internal/inplace"
	"github.com/agentgraph/agentgraph/internal/msgid"
	"github.com/agentgraph/agentgraph/internal/toolcall"
	"github.com/agentgraph/agentgraph/internal/utf8clip"
	"github.com/agentgraph/agentgraph/operator"
)

// DefaultMaxIterations is the number of model calls a run may make when
// [Config.MaxIterations] is zero.
const DefaultMaxIterations = 20

// The defaults of the agent's bounds on one model turn's tool calls, in
// force when the [Config] field is zero.
const (
	// DefaultMaxParallelTools is [Config.MaxParallelTools]'s default.
	DefaultMaxParallelTools = 16
	// DefaultMaxCallsPerTurn is [Config.MaxCallsPerTurn]'s default.
	DefaultMaxCallsPerTurn = 64
	// DefaultMaxArgumentBytes is [Config.MaxArgumentBytes]'s default: 1 MiB.
	DefaultMaxArgumentBytes = 1 << 20
	// DefaultMaxResultBytes is [Config.MaxResultBytes]'s default: 64 KiB.
	DefaultMaxResultBytes = 64 << 10
	// DefaultMaxResultBinaryBytes is [Config.MaxResultBinaryBytes]'s
	// default: 16 MiB, room for a few screenshots.
	DefaultMaxResultBinaryBytes = 16 << 20
)

// The names of the agent graph's nodes, as they appear in stream events,
// [graph.TaskInfo] and checkpoints.
const (
	// NodeModel calls the model.
	NodeModel = "model"
	// NodeTools runs one tool call per task.
	NodeTools = "tools"
	// NodeApprove pauses for a person's [Decision]s on the calls of tools
	// named in [Config.Approve].
	NodeApprove = "approve"
)

// Config configures an agent.
type Config struct {
	// Model is the model that answers and calls tools. Required.
	Model model.Model
	// Tools are the tools the model may call. Their names must be unique.
	Tools []operator.Tool
	// Instructions is the system message put before the conversation on
	// every model call. [State.Instructions], when set, replaces it.
	Instructions string
	// MaxIterations bounds the model calls of one run; zero means
	// [DefaultMaxIterations]. A model still calling tools at the limit ends
	// the run with [OutcomeIterationLimit].
	MaxIterations int
	// Approve names the tools whose calls pause the run for approval (see
	// [Review] and [Decision]). "*" names every tool. A run must be able
	// to pause and resume where it paused: set Checkpointer and run the
	// agent on a thread, also when it runs as a subgraph (see "Approval
	// and structured answers" in the package doc); a run that cannot fails
	// before its first model call.
	Approve []string
	// Answer, when set, is the tool the model calls to give its final
	// answer, whose arguments are the answer (see [AnswerTool]). The model
	// is then required to call a tool on every turn, and the run ends when
	// it calls this one with arguments that fit its schema; [State.Answer]
	// holds the arguments. A reply in text goes back to the model with a
	// reminder; a run whose last model call still replies in text ends
	// with [OutcomeNoAnswer]. New reports a schema that does not compile.
	Answer *model.ToolDef
	// Request, when set, is called with each request before it is sent, to
	// set call options such as Temperature or MaxTokens. It must not keep
	// the request.
	Request func(*model.Request)
	// Checkpointer, when set, makes every run of the agent durable on a
	// thread (run it through the compiled graph's Thread(id) handle): the
	// thread is a conversation, and approval can pause it. As a subgraph
	// of a checkpointed parent, an agent with a checkpointer (the parent's
	// saver will do) keeps its steps on a thread of its own and resumes a
	// pause where it stopped; Config.Approve needs one there too (see
	// "Approval and structured answers" in the package doc).
	Checkpointer checkpoint.Saver
	// MaxParallelTools bounds how many tool calls of one turn run at the
	// same time; the others wait for a running one to end. Zero means
	// [DefaultMaxParallelTools]. It is the graph's
	// [graph.WithMaxConcurrency], which a run may override.
	MaxParallelTools int
	// MaxCallsPerTurn bounds the tool calls of one model turn that run.
	// Zero means [DefaultMaxCallsPerTurn]. The calls after the first
	// MaxCallsPerTurn are not run: each gets an error result telling the
	// model to make it again in a later turn.
	MaxCallsPerTurn int
	// MaxArgumentBytes bounds the size of one tool call's arguments, in
	// bytes. Zero means [DefaultMaxArgumentBytes]. A call with larger
	// arguments is not run: its error result gives the size and the limit.
	MaxArgumentBytes int
	// MaxResultBytes bounds the text of one tool result going back to the
	// model: the bytes of its text parts, of its parts' URLs and of its
	// Structured JSON. Zero means [DefaultMaxResultBytes]. Larger text is
	// cut to fit, and a text part at the result's end says how many bytes
	// were cut. Binary data is bounded apart, by MaxResultBinaryBytes.
	MaxResultBytes int
	// MaxResultBinaryBytes bounds the binary data of one tool result going
	// back to the model: the bytes of its binary parts' Data, such as
	// images. Zero means [DefaultMaxResultBinaryBytes]. The binary parts
	// that do not fit are left out, and a text part at the result's end
	// says how many.
	MaxResultBinaryBytes int
}

// Outcome says how a run of the agent ended.
type Outcome string

// The outcomes of a run.
const (
	// OutcomeNone: the run has not ended, such as a run paused for
	// approval.
	OutcomeNone Outcome = ""
	// OutcomeAnswered: the model answered (without tool calls, or, with
	// Config.Answer, with the answer tool and arguments that fit its
	// schema).
	OutcomeAnswered Outcome = "answered"
	// OutcomeIterationLimit: the model still called tools after
	// Config.MaxIterations model calls; those calls were not run.
	OutcomeIterationLimit Outcome = "iteration_limit"
	// OutcomeNoAnswer: Config.Answer is set and the model still replied
	// in text, without calling the answer tool, after Config.MaxIterations
	// model calls. State.Answer is empty.
	OutcomeNoAnswer Outcome = "no_answer"
)

// State is the agent graph's state: the conversation and what the last run
// did. Its zero value with some messages is a valid input.
type State struct {
	// Messages is the conversation; see [model.Messages].
	Messages model.Messages `json:"messages"`
	// Instructions, when set, replaces Config.Instructions as the system
	// message, so a caller (or a parent graph) can give each thread or run
	// its own.
	Instructions string `json:"instructions,omitempty"`
	// Usage counts the tokens of every model call of the thread.
	Usage model.Usage `json:"usage"`
	// RunUsage counts the tokens of the model calls of the last run.
	RunUsage model.Usage `json:"run_usage"`
	// Iterations is the number of model calls of the last run. A run
	// continuing from tool results counts on from it (a negative count
	// counts as zero), so an input with a count at or past
	// Config.MaxIterations ends the run at its next model call.
	Iterations int `json:"iterations"`
	// Outcome says how the last run ended.
	Outcome Outcome `json:"outcome,omitempty"`
	// Answer is the final answer's JSON when Config.Answer is set.
	Answer json.RawMessage `json:"answer,omitempty"`
}

// Input returns the state that asks the agent a question: one user message.
func Input(text string) State {
	// The message, its part and its id's text in one allocation, which
	// the message's parts keep anyway; the slice has no room past the
	// message, so the run's first merge copies it.
	in := new(struct {
		msgs  [1]model.Message
		parts [1]model.Part
		id    [idLen]byte
	})
	msgid.Put(in.id[:])
	in.parts[0] = model.TextPart(text)
	// The id's text is never modified after this.
	in.msgs[0] = model.Message{ID: unsafe.String(&in.id[0], idLen), Role: model.RoleUser, Parts: in.parts[:]}
	return State{Messages: in.msgs[:]}
}

// Reply returns the text of the conversation's last message when the model
// wrote it, and "" otherwise.
func (s State) Reply() string {
	if m, ok := s.Messages.Last(); ok && m.Role == model.RoleAssistant {
		return m.Text()
	}
	return ""
}

// The fields of State as graph handles, for nodes of a graph over State
// and for [graph.Thread.Update].
var (
	// MessagesField merges messages with model.Messages.Merge.
	MessagesField = graph.Merge(func(s *State) *model.Messages { return &s.Messages })
	// InstructionsField replaces the instructions.
	InstructionsField = graph.Replace(func(s *State) *string { return &s.Instructions })
	// UsageField sums usage.
	UsageField = graph.Merge(func(s *State) *model.Usage { return &s.Usage })
	// RunUsageField replaces the last run's usage.
	RunUsageField = graph.Replace(func(s *State) *model.Usage { return &s.RunUsage })
	// IterationsField replaces the last run's count of model calls.
	IterationsField = graph.Replace(func(s *State) *int { return &s.Iterations })
	// OutcomeField replaces the outcome.
	OutcomeField = graph.Replace(func(s *State) *Outcome { return &s.Outcome })
	// AnswerField replaces the structured answer.
	AnswerField = graph.Replace(func(s *State) *json.RawMessage { return &s.Answer })
)

// call is the input of one task of the tools node: a call to run, or one
// already answered (rejected at approval). Tasks take a *call, which a Send
// holds without copying it.
type call struct {
	Call model.ToolCall `json:"call"`
	// Rejected, when set, is the reviewer's message: the tool is not run
	// and the model reads this as the call's error result.
	Rejected string `json:"rejected,omitempty"`
	// ResultID, when set, is the id of the tool message holding the
	// result; without one the messages reducer gives it one.
	ResultID string `json:"result_id,omitempty"`
	// msg, when set, is the storage of the call's tool message in its
	// turn's allocation (see toolTurn), and room, when set, room there
	// for a small result. The call's first run takes them; a later one
	// (a run again after a pause) allocates its own. A call decoded from
	// a checkpoint has neither.
	msg  *toolMessage
	room *toolcall.Room
}

// inlineCalls is the number of tool calls of a model turn whose tasks a
// turn holds without allocating more.
const inlineCalls = 2

// turn is what one model turn leaves in the conversation, allocated at
// once: the messages of the node's update, the tasks of the tool calls and
// the text of the new ids (the reply's and those of the calls' results).
// The ids are never modified once written, and the messages that carry
// them keep the turn reachable, so the request is not part of it: a long
// conversation keeps one small turn per model reply, not a copy of the
// conversation per reply. The request is allocated apart and never
// modified once the model has it, which may keep it (see [model.Model]).
type turn struct {
	msgs  [1]model.Message
	calls [inlineCalls]call
	sends [inlineCalls]graph.Send
	ids   [(1 + inlineCalls) * idLen]byte
}

// replyMessage is what a model turn without tool calls leaves in the
// conversation, allocated at once: the reply and the text of its id.
type replyMessage struct {
	msgs [1]model.Message
	id   [idLen]byte
}

// The turns of one or two calls that run, each with its calls' tool
// messages, allocated at once: every call names a tool that writes its
// result into its caller's storage (toolcall.Into), and a result that
// lives in its message's room (an integer's text, say) stays in the turn,
// which the reply's id keeps anyway. A result pointing outside its room
// (binary parts, Structured JSON, text longer than the room) moves to an
// allocation of its own (see toolMessage): the turn, which anything
// holding the reply or one of the turn's ids keeps, never keeps a large
// result reachable after the conversation let go of it. Other turns
// allocate their tool messages apart: a result without room always
// points outside it.
type (
	roomyTurn1 struct {
		turn
		results [1]roomyMessage
	}
	roomyTurn2 struct {
		turn
		results [2]roomyMessage
	}
)

// toolTurn's types hold two tool messages at most: inlineCalls must be 2.
var _ [1]struct{} = [inlineCalls - 1]struct{}{}

// toolTurn returns a turn of n calls, 1 or 2, with storage for their tool
// messages, with room for small results, set on its calls.
func toolTurn(n int) *turn {
	if n == 1 {
		t := new(roomyTurn1)
		t.calls[0].msg, t.calls[0].room = &t.results[0].toolMessage, &t.results[0].room
		return &t.turn
	}
	t := new(roomyTurn2)
	t.calls[0].msg, t.calls[0].room = &t.results[0].toolMessage, &t.results[0].room
	t.calls[1].msg, t.calls[1].room = &t.results[1].toolMessage, &t.results[1].room
	return &t.turn
}

// toolMessage is the tool message of one result, allocated at once.
type toolMessage struct {
	msgs  [1]model.Message
	parts [1]model.Part
	res   model.ToolResult
}

// roomyMessage is the tool message of the result of a tool that writes its
// result into its caller's storage (toolcall.Into), such as an
// operator.FuncTool, with room for a small result's content (an integer's
// text, say), allocated at once.
type roomyMessage struct {
	toolMessage
	room toolcall.Room
}

type agent struct {
	cfg     Config
	max     int
	tools   map[string]operator.Tool
	names   []string
	list    []operator.Tool // the tools in the order of names
	defs    []model.ToolDef
	approve map[string]bool
	all     bool
	pauses  bool // some calls need approval: a run must be able to pause
	// answerCheck checks the arguments of a call of Config.Answer.
	answerCheck operator.Tool
	tasks       *graph.TaskNode[State, *call]
	// The bounds of one turn: MaxCallsPerTurn, MaxArgumentBytes,
	// MaxResultBytes and MaxResultBinaryBytes with their defaults applied.
	maxCalls, maxArgs, maxResult, maxBinary int
}

// New returns the agent as a compiled graph over [State], to run alone or
// as a subgraph. It reports a missing model, a tool without a name, two
// tools of one name, and a Config.Answer whose name or schema is not a
// tool's.
func New(cfg Config) (*graph.Compiled[State], error) {
	if cfg.Model == nil {
		return nil, errors.New("react: Config.Model is nil; set it to a model.Model, such as a provider adapter")
	}
	if cfg.MaxIterations < 0 {
		return nil, fmt.Errorf("react: Config.MaxIterations is %d; use a positive number, or 0 for the default %d", cfg.MaxIterations, DefaultMaxIterations)
	}
	a := &agent{cfg: cfg, max: cfg.MaxIterations, tools: map[string]operator.Tool{}, approve: map[string]bool{}}
	if a.max == 0 {
		a.max = DefaultMaxIterations
	}
	parallel := cfg.MaxParallelTools
	for _, b := range []struct {
		field string
		v     int
		def   int
		dst   *int
	}{
		{"MaxParallelTools", cfg.MaxParallelTools, DefaultMaxParallelTools, &parallel},
		{"MaxCallsPerTurn", cfg.MaxCallsPerTurn, DefaultMaxCallsPerTurn, &a.maxCalls},
		{"MaxArgumentBytes", cfg.MaxArgumentBytes, DefaultMaxArgumentBytes, &a.maxArgs},
		{"MaxResultBytes", cfg.MaxResultBytes, DefaultMaxResultBytes, &a.maxResult},
		{"MaxResultBinaryBytes", cfg.MaxResultBinaryBytes, DefaultMaxResultBinaryBytes, &a.maxBinary},
	} {
		switch {
		case b.v < 0:
			return nil, fmt.Errorf("react: Config.%s is %d; use a positive number, or 0 for the default %d", b.field, b.v, b.def)
		case b.v == 0:
			*b.dst = b.def
		default:
			*b.dst = b.v
		}
	}
	for i, t := range cfg.Tools {
		if t == nil {
			return nil, fmt.Errorf("react: Config.Tools[%d] is nil", i)
		}
		d := t.Definition()
		if d.Name == "" {
			return nil, fmt.Errorf("react: Config.Tools[%d] has no name in its Definition", i)
		}
		if _, dup := a.tools[d.Name]; dup {
			return nil, fmt.Errorf("react: two tools are named %q in Config.Tools; tool names must be unique", d.Name)
		}
		a.tools[d.Name] = t
		a.names = append(a.names, d.Name)
		a.list = append(a.list, t)
		a.defs = append(a.defs, d)
	}
	if cfg.Answer != nil {
		if cfg.Answer.Name == "" {
			return nil, errors.New("react: Config.Answer has no name; make it with react.AnswerTool")
		}
		if _, dup := a.tools[cfg.Answer.Name]; dup {
			return nil, fmt.Errorf("react: Config.Answer is named %q like a tool of Config.Tools; rename one", cfg.Answer.Name)
		}
		a.defs = append(a.defs, *cfg.Answer)
		// The answer's arguments are checked as a FuncTool checks its
		// arguments: against the schema, then decoded strictly.
		desc := cfg.Answer.Description
		if strings.TrimSpace(desc) == "" {
			desc = "The final answer."
		}
		check, err := operator.FuncTool(cfg.Answer.Name, desc, func(context.Context, map[string]any) (string, error) {
			return "answer received", nil
		}, operator.WithSchema(cfg.Answer.Parameters))
		if err != nil {
			return nil, fmt.Errorf("react: Config.Answer: %w", err)
		}
		a.answerCheck = check
	}
	for _, name := range cfg.Approve {
		if name == "*" {
			a.all = true
			continue
		}
		if _, ok := a.tools[name]; !ok {
			return nil, fmt.Errorf("react: Config.Approve names %q, which is not a tool of Config.Tools (tools: %s)", name, strings.Join(a.names, ", "))
		}
		a.approve[name] = true
	}

	a.pauses = a.all || len(a.approve) > 0
	g := graph.New[State]()
	targets := []string{NodeTools, NodeModel, graph.END}
	if a.pauses {
		targets = append(targets, NodeApprove)
		g.AddNode(NodeApprove, a.review, graph.Targets(NodeTools))
	}
	// Both nodes write their updates in place (see internal/inplace):
	// the functions they are added with do the same through a copy.
	g.AddNode(NodeModel, a.modelNode(), graph.Targets(targets...), inplace.Node(a.modelInto()).(graph.NodeOption))
	a.tasks = graph.AddTask(g, NodeTools, a.runTool(), inplace.Node(a.runToolInto()).(graph.NodeOption))
	g.AddEdge(graph.START, NodeModel)
	g.AddEdge(NodeTools, NodeModel)
	// A run takes at most two steps per model call, three with approval.
	opts := []graph.CompileOption{graph.WithName("react"), graph.WithStepLimit(3*a.max + 2), graph.WithMaxConcurrency(parallel)}
	if cfg.Checkpointer != nil {
		opts = append(opts, graph.WithCheckpointer(cfg.Checkpointer))
	}
	return g.Compile(opts...)
}

// cannotPause returns the error that fails a run of an agent with
// Config.Approve that could not pause for approval, or could not resume
// where it paused (graph.ResumesInPlace), before its first model call.
//
//go:noinline
func (a *agent) cannotPause(ctx context.Context) error {
	switch {
	case !graph.CanInterrupt(ctx) && a.cfg.Checkpointer == nil:
		return errors.New("react: Config.Approve needs a run that can pause for approval: set react.Config.Checkpointer and run the agent on a thread (Compiled.Thread); as a subgraph, set react.Config.Checkpointer (the parent's saver will do) and run the parent, compiled with graph.WithCheckpointer, on a thread")
	case !graph.CanInterrupt(ctx):
		return errors.New("react: Config.Approve needs a run that can pause for approval, and this run of the agent is on no thread although react.Config.Checkpointer is set: run the agent through Compiled.Thread(id); as a subgraph, compile the parent graph with graph.WithCheckpointer and run it on a thread")
	case a.cfg.Checkpointer == nil:
		return errors.New("react: Config.Approve needs a run that resumes where it paused, and this agent runs inside a checkpointed run without a checkpointer of its own (as a subgraph, or with Invoke inside a node): each resume would run it again from its input and call the model again, which proposes its calls anew, so that no approval would apply: set react.Config.Checkpointer (the parent's saver will do)")
	}
	return errors.New("react: Config.Approve needs a run that resumes where it paused, and this agent runs with Invoke inside a node of a checkpointed run, off a thread of its own: each resume would run it again from its input: add it to the graph with graph.AddSubgraph, or run it on a thread (Compiled.Thread)")
}

// instructions returns the system message of a run.
func (a *agent) instructions(s *State) string {
	if s.Instructions != "" {
		return s.Instructions
	}
	return a.cfg.Instructions
}

// modelNode returns the function the model node is added with; the graph
// runs modelInto's in its place, which reads the run's state and writes
// the update in place, where this one has them copied (the state, 168
// bytes, in; the update, 320, out).
func (a *agent) modelNode() graph.NodeFunc[State] {
	return func(ctx context.Context, s State) (u graph.Update[State], err error) {
		err = a.callModel(ctx, &s, &u)
		return u, err
	}
}

// modelInto returns the model node's function that writes its update in
// place (see internal/inplace): it reads the run's state through s, which
// callModel never writes to nor keeps.
func (a *agent) modelInto() func(context.Context, *State, *graph.Update[State]) error {
	return func(ctx context.Context, s *State, u *graph.Update[State]) error {
		return a.callModel(ctx, s, u)
	}
}

// callModel calls the model with the conversation s and writes to u the
// turn's update, routing on the model's reply.
//
// Its frame is kept small, as runTool's is: the agent may run as a task of
// a parent's parallel step, on a fresh goroutine whose stack grows by
// copying. What only some turns need (ids for input messages, the answer
// tool, the iteration limit) is in helpers that are not inlined, and the
// update is written in place.
func (a *agent) callModel(ctx context.Context, s *State, u *graph.Update[State]) error {
	if a.pauses && !graph.ResumesInPlace(ctx) {
		return a.cannotPause(ctx)
	}
	var fixed model.Messages
	if hasDangling(s.Messages) {
		s, fixed = answerDangling(s)
	}
	req := new(model.Request)
	a.request(req, s)
	resp, err := graph.Generate(ctx, a.cfg.Model, req)
	if err != nil {
		return err
	}

	// A run starts where the conversation does not end with tool results.
	// The last message's role is read in place: Messages.Last would
	// copy the message.
	runUsage, iter := resp.Usage, 1
	if n := len(s.Messages); n > 0 && (s.Messages[n-1].Role == model.RoleTool || isReminder(&s.Messages[n-1])) {
		// A count from the input is not trusted below zero: a negative
		// one would let the run call the model past Config.MaxIterations.
		runUsage, iter = s.RunUsage.Merge(resp.Usage), max(s.Iterations, 0)+1
	}
	nc := countCalls(&resp.Message)
	if nc == 0 {
		a.replyTurn(u, s, resp, fixed, runUsage, iter)
		return nil
	}
	var t *turn
	if nc <= inlineCalls && iter < a.max && a.cfg.Answer == nil && !a.pauses && a.allInto(&resp.Message) {
		// The calls run (unless a bound refuses one, which still gets
		// a tool message): their tool messages come with the turn.
		t = toolTurn(nc)
	} else {
		t = new(turn)
	}
	t.msgs[0] = resp.Message
	msg := &t.msgs[0]
	msg.Role = model.RoleAssistant
	var calls []call
	if nc <= inlineCalls {
		calls = t.calls[:nc]
	} else {
		calls = make([]call, nc)
	}
	j := 0
	for i := range msg.Parts {
		if p := &msg.Parts[i]; p.Kind == model.PartToolCall && p.ToolCall != nil {
			calls[j].Call = *p.ToolCall
			j++
		}
	}
	if !uniqueIDs(calls) {
		msg.Parts = freshIDs(msg.Parts, calls)
	}
	answer := -1
	if a.cfg.Answer != nil {
		answer = slices.IndexFunc(calls, func(c call) bool { return c.Call.Name == a.cfg.Answer.Name })
	}
	approve := a.needsApproval(calls)
	// One string holds the new ids: the reply's and those of the results
	// of the calls sent to the tools node. The reply always gets a new
	// id, never the model's: a provider's id for its reply is no
	// conversation id (a server may answer every call with the same
	// one), and kept, it would make the reply replace an earlier message
	// of the conversation, as a write of an existing id does. In a run
	// streamed with graph.StreamMessages, graph.Generate gave the reply
	// the new id its chunks were streamed under, which it keeps, so that
	// a client finds the reply it streamed in the state; otherwise
	// graph.Generate left the id empty.
	const k = 1
	n := k
	if answer < 0 && iter < a.max && !approve {
		n += len(calls)
	}
	ids := t.newIDs(n)
	if msg.ID == "" {
		msg.ID = ids[:idLen]
	}
	if fixed == nil && !allIDs(s.Messages) {
		fixed = withIDs(s.Messages)
	}
	// The fields every turn writes, each through this package's handle
	// on it, so that it merges the same in every graph over State
	// whatever handles other code declares on these fields.
	UsageField.Put(u, resp.Usage)
	RunUsageField.Put(u, runUsage)
	IterationsField.Put(u, iter)
	switch {
	case answer >= 0:
		return a.answerTurn(ctx, u, fixed, *msg, calls, answer, iter)
	case iter >= a.max:
		a.limitTurn(u, fixed, *msg, calls)
		return nil
	}
	MessagesField.Put(u, withPrefix(fixed, t.msgs[:]))
	OutcomeField.Put(u, OutcomeNone)
	if approve {
		*u = u.Goto(NodeApprove)
		return nil
	}
	sends := t.sends[:0]
	if len(calls) > inlineCalls {
		sends = make([]graph.Send, 0, len(calls))
	}
	for i := range calls {
		c := &calls[i]
		c.ResultID = ids[(k+i)*idLen : (k+i+1)*idLen]
		if a.refused(i, &c.Call) {
			c.Rejected = a.refusal(i, len(calls), &c.Call)
		}
		sends = append(sends, a.tasks.Send(c))
	}
	// As *u = u.Send(sends...), without copying the update twice.
	r := inplace.Route(u).(*graph.Route)
	*r = r.Send(sends...)
	return nil
}

// replyTurn writes to u the update of a turn whose reply, resp's message,
// calls no tool: the reply with its id (see below), and the run's answer,
// or, with Config.Answer, a reminder to call the answer tool (see
// textTurn).
func (a *agent) replyTurn(u *graph.Update[State], s *State, resp *model.Response, fixed model.Messages, runUsage model.Usage, iter int) {
	r := new(replyMessage)
	r.msgs[0] = resp.Message
	msg := &r.msgs[0]
	msg.Role = model.RoleAssistant
	// The reply keeps the id graph.Generate gave it in a run streamed
	// with graph.StreamMessages, the one its chunks were streamed under,
	// so that a client finds the reply it streamed in the state;
	// otherwise graph.Generate left the id empty (never the provider's,
	// see callModel) and the reply gets a new one. r.id is written only
	// here: the id's text is never modified after this.
	if msg.ID == "" {
		msgid.Put(r.id[:])
		msg.ID = unsafe.String(&r.id[0], idLen)
	}
	if fixed == nil && !allIDs(s.Messages) {
		fixed = withIDs(s.Messages)
	}
	UsageField.Put(u, resp.Usage)
	RunUsageField.Put(u, runUsage)
	IterationsField.Put(u, iter)
	if a.cfg.Answer != nil {
		a.textTurn(u, fixed, *msg, iter)
		return
	}
	MessagesField.Put(u, withPrefix(fixed, r.msgs[:]))
	OutcomeField.Put(u, OutcomeAnswered)
}

// allInto reports whether every tool call of msg names a tool of the agent
// that writes its result into its caller's storage (toolcall.Into).
func (a *agent) allInto(msg *model.Message) bool {
	for i := range msg.Parts {
		if p := &msg.Parts[i]; p.Kind == model.PartToolCall && p.ToolCall != nil {
			t, _ := a.tool(p.ToolCall.Name)
			if _, into := t.(toolcall.Into); !into {
				return false
			}
		}
	}
	return true
}

// request fills req with the model request of a turn on s.
func (a *agent) request(req *model.Request, s *State) {
	req.Tools = a.defs
	if sys := a.instructions(s); sys != "" {
		req.Messages = make([]model.Message, 0, len(s.Messages)+1)
		req.Messages = append(req.Messages, model.System(sys))
		req.Messages = append(req.Messages, s.Messages...)
	} else {
		req.Messages = s.Messages
	}
	if a.cfg.Answer != nil {
		req.ToolChoice = model.ToolChoice{Mode: model.ToolRequired}
	}
	if a.cfg.Request != nil {
		a.cfg.Request(req)
	}
}

// hasDangling reports whether the conversation's last assistant message
// has tool calls that no tool message after it answers, as when a new
// message was added to a thread paused for approval.
func hasDangling(msgs model.Messages) bool {
	i := len(msgs) - 1
	for i >= 0 && msgs[i].Role != model.RoleAssistant {
		i--
	}
	if i < 0 {
		return false
	}
	// Parts are read in place: ranging by value would copy each one.
	parts := msgs[i].Parts
	tail := msgs[i+1:]
	var next resultCursor
	for k := range parts {
		p := &parts[k]
		if p.Kind != model.PartToolCall || p.ToolCall == nil {
			continue
		}
		// The results mostly answer the calls in call order: the next
		// one answers this call, or the whole tail is searched.
		if r := next.next(tail); r != nil && r.CallID == p.ToolCall.ID {
			continue
		}
		if !answered(tail, p.ToolCall.ID) {
			return true
		}
	}
	return false
}

// resultCursor walks the tool results of the tool messages at the start
// of a conversation's tail, in order: the zero value is at the first.
type resultCursor struct{ msg, part int }

// next returns the tool result at the cursor and moves past it, or nil
// when the tool messages at the start of tail have no more.
func (c *resultCursor) next(tail model.Messages) *model.ToolResult {
	for c.msg < len(tail) && tail[c.msg].Role == model.RoleTool {
		parts := tail[c.msg].Parts
		for c.part < len(parts) {
			p := &parts[c.part]
			c.part++
			if p.Kind == model.PartToolResult && p.ToolResult != nil {
				return p.ToolResult
			}
		}
		c.msg, c.part = c.msg+1, 0
	}
	return nil
}

// answered reports whether the tool messages at the start of msgs answer
// the call with the given id.
func answered(msgs model.Messages, id string) bool {
	for i := range msgs {
		if msgs[i].Role != model.RoleTool {
			return false
		}
		parts := msgs[i].Parts
		for k := range parts {
			if p := &parts[k]; p.Kind == model.PartToolResult && p.ToolResult != nil && p.ToolResult.CallID == id {
				return true
			}
		}
	}
	return false
}

// danglingText is the error result of a call that was never run.
const danglingText = "not run: the conversation went on before this call ran (the run that made it paused for approval or stopped); make it again if it is still needed"

// answerDangling returns a copy of s whose conversation answers each call
// of its last assistant message that has no result (see hasDangling) with
// an error result, in a tool message after the results it has, and the
// update of the messages that makes the thread's conversation that one:
// a provider rejects a conversation with calls left unanswered.
//
//go:noinline
func answerDangling(s *State) (*State, model.Messages) {
	msgs := s.Messages
	i := len(msgs) - 1
	for msgs[i].Role != model.RoleAssistant {
		i--
	}
	j := i + 1
	for j < len(msgs) && msgs[j].Role == model.RoleTool {
		j++
	}
	var results []model.ToolResult
	for _, c := range msgs[i].ToolCalls() {
		if !answered(msgs[i+1:], c.ID) {
			results = append(results, errorResult(c, danglingText))
		}
	}
	out := make(model.Messages, 0, len(msgs)+1)
	out = append(out, msgs[:j]...)
	m := model.ToolResults(results...)
	m.ID = model.NewID()
	out = append(out, m)
	out = append(out, msgs[j:]...)
	cp := *s
	cp.Messages = out
	return &cp, withIDs(out)
}

// allIDs reports whether every message of msgs has an id. It reads the
// ids in place, where slices.ContainsFunc would copy each message.
func allIDs(msgs model.Messages) bool {
	for i := range msgs {
		if msgs[i].ID == "" {
			return false
		}
	}
	return true
}

// withIDs returns the update of the messages that replaces the
// conversation msgs with a copy whose messages all have ids. Input given
// to a run without a checkpointer is not merged, so its messages may have
// none; the turn's own messages go after it.
//
//go:noinline
func withIDs(msgs model.Messages) model.Messages {
	fixed := make(model.Messages, 0, len(msgs)+3)
	fixed = append(fixed, model.Remove(model.RemoveAll))
	for _, m := range msgs {
		if m.ID == "" {
			m.ID = model.NewID()
		}
		fixed = append(fixed, m)
	}
	return fixed
}

// answerTurn writes to u the messages, outcome and answer of a turn that
// called the answer tool (calls[answer]), and routes back to the model
// when the answer does not fit the tool's schema, unless the turn is the
// run's last (iter is Config.MaxIterations): the run then ends with
// OutcomeIterationLimit.
//
//go:noinline
func (a *agent) answerTurn(ctx context.Context, u *graph.Update[State], fixed model.Messages, msg model.Message, calls []call, answer, iter int) error {
	msgs, outcome, value, err := a.answered(ctx, msg, calls, answer)
	if err != nil {
		return err
	}
	MessagesField.Put(u, withPrefix(fixed, msgs))
	switch {
	case outcome == OutcomeAnswered:
		OutcomeField.Put(u, outcome)
		AnswerField.Put(u, value)
	case iter >= a.max:
		OutcomeField.Put(u, OutcomeIterationLimit)
	default:
		// The answer does not fit its schema: the model reads why.
		OutcomeField.Put(u, outcome)
		*u = u.Goto(NodeModel)
	}
	return nil
}

// reminderPrefix starts the id of the message that reminds the model to
// call the answer tool (see textTurn): the run goes on past it.
const reminderPrefix = "react-reminder-"

// isReminder reports whether m is a reminder to call the answer tool.
func isReminder(m *model.Message) bool {
	return m.Role == model.RoleUser && strings.HasPrefix(m.ID, reminderPrefix)
}

// textTurn writes to u the messages and outcome of a turn of an agent with
// Config.Answer whose reply calls no tool: the reply and a reminder to
// call the answer tool, routing back to the model, or, on the run's last
// turn, the reply and OutcomeNoAnswer.
//
//go:noinline
func (a *agent) textTurn(u *graph.Update[State], fixed model.Messages, msg model.Message, iter int) {
	if iter >= a.max {
		MessagesField.Put(u, withPrefix(fixed, model.Messages{msg}))
		OutcomeField.Put(u, OutcomeNoAnswer)
		return
	}
	reminder := model.User("Your reply must be a call of the " + a.cfg.Answer.Name + " tool, whose arguments are your final answer; a reply in text is not read. Call " + a.cfg.Answer.Name + " now.")
	reminder.ID = reminderPrefix + model.NewID()
	MessagesField.Put(u, withPrefix(fixed, model.Messages{msg, reminder}))
	OutcomeField.Put(u, OutcomeNone)
	*u = u.Goto(NodeModel)
}

// limitTurn writes to u the messages and outcome of a turn that called
// tools after the run's last allowed model call: the calls are not run,
// and each gets an error result saying why.
//
//go:noinline
func (a *agent) limitTurn(u *graph.Update[State], fixed model.Messages, msg model.Message, calls []call) {
	results := make([]model.ToolResult, len(calls))
	for i, c := range calls {
		results[i] = errorResult(c.Call, fmt.Sprintf("not run: the agent reached its limit of %d model calls in this run", a.max))
	}
	MessagesField.Put(u, withPrefix(fixed, model.Messages{msg, model.ToolResults(results...)}))
	OutcomeField.Put(u, OutcomeIterationLimit)
}

// countCalls returns the number of tool calls of msg.
func countCalls(msg *model.Message) int {
	n := 0
	for i := range msg.Parts {
		if p := &msg.Parts[i]; p.Kind == model.PartToolCall && p.ToolCall != nil {
			n++
		}
	}
	return n
}

// idLen is the length of an id of [model.NewID]'s form: "m-" and 16
// hexadecimal digits.
const idLen = msgid.Len

// newIDs returns n random message ids of model.NewID's form, one after the
// other in one string: the i-th is ids[i*idLen:(i+1)*idLen]. The string is
// the turn's own room for ids when they fit in it, so that a turn with at
// most inlineCalls calls allocates nothing for its ids.
func (t *turn) newIDs(n int) string {
	if n <= 0 {
		return ""
	}
	var buf []byte
	if n*idLen <= len(t.ids) {
		buf = t.ids[:n*idLen]
	} else {
		buf = make([]byte, n*idLen)
	}
	for i := range n {
		msgid.Put(buf[i*idLen : (i+1)*idLen])
	}
	// buf is written only here, once, for this turn: the ids' text is
	// never modified after this.
	return unsafe.String(&buf[0], len(buf))
}

// withPrefix returns msgs after prefix, or msgs itself without a prefix.
func withPrefix(prefix, msgs model.Messages) model.Messages {
	if prefix == nil {
		return msgs
	}
	return append(prefix, msgs...)
}

// answered handles a call of the answer tool: its arguments are the answer,
// and every call of the turn gets a result so that the conversation can go
// on. It returns the turn's messages, the outcome, and the answer;
// OutcomeNone when the arguments do not fit the answer's schema (checked
// and decoded strictly, as an operator.FuncTool's), which the model then
// reads in the call's result. Its error is the run's cancellation.
func (a *agent) answered(ctx context.Context, msg model.Message, tasks []call, i int) (model.Messages, Outcome, json.RawMessage, error) {
	calls := make([]model.ToolCall, len(tasks))
	for k := range tasks {
		calls[k] = tasks[k].Call
	}
	results := make([]model.ToolResult, len(calls))
	for k, c := range calls {
		if k == i {
			results[k] = model.ToolResult{CallID: c.ID, Name: c.Name, Content: []model.Part{model.TextPart("answer received")}}
			continue
		}
		results[k] = errorResult(c, "not run: the final answer was given in the same turn")
	}
	answer := calls[i].Arguments
	res, err := a.answerCheck.Call(ctx, answer)
	if err != nil {
		return nil, OutcomeNone, nil, err
	}
	if res.IsError {
		res.CallID, res.Name = calls[i].ID, calls[i].Name
		for k, c := range calls {
			if k != i {
				results[k] = errorResult(c, "not run: the final answer ("+a.cfg.Answer.Name+") in the same turn was refused; make this call again if it is still needed")
			}
		}
		results[i] = *res
		return model.Messages{msg, model.ToolResults(results...)}, OutcomeNone, nil, nil
	}
	return model.Messages{msg, model.ToolResults(results...)}, OutcomeAnswered, slices.Clone(answer), nil
}

// needsApproval reports whether a call of the turn that is to run (not
// refused, see refused) needs approval.
func (a *agent) needsApproval(calls []call) bool {
	if !a.all && len(a.approve) == 0 {
		return false
	}
	for i := range calls {
		if (a.all || a.approve[calls[i].Call.Name]) && !a.refused(i, &calls[i].Call) {
			return true
		}
	}
	return false
}

// refused reports whether the i-th call of a turn is not run because of
// the turn's bounds: it is past Config.MaxCallsPerTurn, or its arguments
// are over Config.MaxArgumentBytes.
func (a *agent) refused(i int, c *model.ToolCall) bool {
	return i >= a.maxCalls || len(c.Arguments) > a.maxArgs
}

// refusal returns the error result's text of the i-th of n calls of a
// turn, which refused reports is not run.
//
//go:noinline
func (a *agent) refusal(i, n int, c *model.ToolCall) string {
	if i >= a.maxCalls {
		return fmt.Sprintf("not run: this turn made %d tool calls and the agent runs at most %d per turn (react.Config.MaxCallsPerTurn); make this call again in a later turn", n, a.maxCalls)
	}
	return fmt.Sprintf("not run: the arguments are %d bytes, over the limit of %d bytes (react.Config.MaxArgumentBytes); call the tool with smaller arguments", len(c.Arguments), a.maxArgs)
}

// uniqueIDs reports whether every call has an id that no other call of
// the turn has.
func uniqueIDs(calls []call) bool {
	const scan = 8 // up to this many calls, comparing costs less than a set
	if len(calls) <= scan {
		for i := range calls {
			id := calls[i].Call.ID
			if id == "" {
				return false
			}
			for j := range i {
				if calls[j].Call.ID == id {
					return false
				}
			}
		}
		return true
	}
	seen := make(map[string]struct{}, len(calls))
	for i := range calls {
		id := calls[i].Call.ID
		if _, dup := seen[id]; dup || id == "" {
			return false
		}
		seen[id] = struct{}{}
	}
	return true
}

// freshIDs gives each call without an id, and each call after the first
// with an id an earlier call has, a fresh id, in calls and in a copy of
// the reply's parts, which it returns: the model may keep its response,
// so the parts are not changed in place. The results then answer the
// calls one to one, in call order.
//
//go:noinline
func freshIDs(parts []model.Part, calls []call) []model.Part {
	seen := make(map[string]struct{}, len(calls))
	for i := range calls {
		c := &calls[i].Call
		if _, dup := seen[c.ID]; dup || c.ID == "" {
			c.ID = "call_" + model.NewID()
		}
		seen[c.ID] = struct{}{}
	}
	out := make([]model.Part, len(parts))
	copy(out, parts)
	k := 0
	for i, p := range out {
		if p.Kind == model.PartToolCall && p.ToolCall != nil {
			tc := calls[k].Call
			out[i].ToolCall = &tc
			k++
		}
	}
	return out
}

// runTool returns the function the tools node is added with, which runs
// one call; the graph runs runToolInto's in its place, which writes the
// update in place. Whatever goes wrong with the call is its result; only
// the run's cancellation is an error.
func (a *agent) runTool() graph.TaskFunc[State, *call] {
	into := a.runToolInto()
	return func(ctx context.Context, c *call) (u graph.Update[State], err error) {
		err = into(ctx, c, &u)
		return u, err
	}
}

// runToolInto returns the tools node's function, which runs one call and
// writes its update in place (see internal/inplace).
//
// A parallel step's task runs on a fresh goroutine, whose stack grows by
// copying as deep as the task's frames go, so the frames of this path are
// kept small: a closure (a method value would add its wrapper's frame),
// the update written in place, results written through pointers.
func (a *agent) runToolInto() func(context.Context, *call, *graph.Update[State]) error {
	return func(ctx context.Context, c *call, u *graph.Update[State]) error {
		m, err := a.toolMessage(ctx, c)
		if err == nil {
			MessagesField.Put(u, m.msgs[:])
		}
		return err
	}
}

// toolMessage runs the call c and returns its tool message: the storage
// c's turn holds for it when the result lives in the room there, else a
// message of its own (see toolTurn).
func (a *agent) toolMessage(ctx context.Context, c *call) (*toolMessage, error) {
	if c == nil {
		return nil, errors.New("react: a task of the tools node has no call; send it a *call")
	}
	inTurn := c.msg != nil
	m, t, room := a.newToolMessage(c)
	if err := a.execute(ctx, c, t, &m.res, room); err != nil {
		return nil, err
	}
	if text, data := resultSize(&m.res); text > a.maxResult || data > a.maxBinary {
		clipResult(&m.res, a.maxResult, a.maxBinary)
	}
	if inTurn && !inRoom(&m.res, room) {
		// The turn keeps only a result that lives in its room.
		m = apart(m, room)
	}
	m.parts[0] = model.Part{Kind: model.PartToolResult, ToolResult: &m.res}
	m.msgs[0] = model.Message{ID: c.ResultID, Role: model.RoleTool, Parts: m.parts[:]}
	return m, nil
}

// inRoom reports whether res, the result of a call given room (nil for
// none), and room point to no memory outside room: res's content is none
// or room's one text part, whose text is in room, and its Structured
// JSON, if any, is in room. Only such a result may stay in its turn's
// allocation (see toolTurn).
func inRoom(res *model.ToolResult, room *toolcall.Room) bool {
	if room == nil {
		return unsafe.SliceData(res.Content) == nil && unsafe.SliceData(res.Structured) == nil
	}
	p := &room.Parts[0]
	return within(unsafe.Pointer(unsafe.SliceData(res.Content)), room) &&
		within(unsafe.Pointer(unsafe.SliceData(res.Structured)), room) &&
		within(unsafe.Pointer(unsafe.StringData(p.Text)), room) &&
		unsafe.StringData(p.Signature) == nil && unsafe.StringData(p.MIMEType) == nil &&
		unsafe.SliceData(p.Data) == nil && unsafe.StringData(p.URL) == nil &&
		p.ToolCall == nil && p.ToolResult == nil
}

// within reports whether p is nil or points into room.
func within(p unsafe.Pointer, room *toolcall.Room) bool {
	return p == nil || uintptr(p)-uintptr(unsafe.Pointer(room)) < unsafe.Sizeof(*room)
}

// apart returns a tool message of its own holding the result of m, storage
// in a turn, and leaves m, and room's part, zero, so that the turn keeps
// nothing the result points to; the result's bytes in room (a text or
// Structured JSON written there) stay where they are.
//
//go:noinline
func apart(m *toolMessage, room *toolcall.Room) *toolMessage {
	own := &toolMessage{res: m.res}
	m.res = model.ToolResult{}
	if room != nil {
		if unsafe.SliceData(own.res.Content) == &room.Parts[0] {
			own.res.Content = append([]model.Part(nil), own.res.Content...)
		}
		room.Parts[0] = model.Part{}
	}
	return own
}

// newToolMessage returns the tool message of the call c, and the tool to
// run, nil when the call is not run (rejected at approval) or names no
// tool of the agent. A tool that writes its result into its caller's
// storage (toolcall.Into), which only a tool whose results may fit a
// room does, gets room for it in the message's allocation, which
// newToolMessage returns too; otherwise room is nil, and the message has
// none: a room the result cannot use would be kept, unused, as long as
// the conversation.
//
// It is not inlined, so that its locals do not widen the frame of
// toolMessage, on the task's fresh stack.
//
//go:noinline
func (a *agent) newToolMessage(c *call) (m *toolMessage, t operator.Tool, room *toolcall.Room) {
	if c.Rejected == "" {
		t, _ = a.tool(c.Call.Name)
	}
	_, into := t.(toolcall.Into)
	if c.msg != nil {
		// The storage the turn holds for the message, taken once.
		m, room = c.msg, c.room
		c.msg, c.room = nil, nil
		if !into {
			room = nil
		}
		return m, t, room
	}
	if into {
		rm := new(roomyMessage)
		return &rm.toolMessage, t, &rm.room
	}
	return new(toolMessage), t, nil
}

// execute runs the call c of t, the tool it names (nil when the agent has
// none of that name), and leaves its result in *res; given room, t writes
// its result there (toolcall.Into).
func (a *agent) execute(ctx context.Context, c *call, t operator.Tool, res *model.ToolResult, room *toolcall.Room) error {
	if c.Rejected != "" {
		setError(res, &c.Call, c.Rejected)
		return nil
	}
	if t == nil {
		a.unknownTool(res, &c.Call)
		return nil
	}
	out, err := callTool(ctx, t, c, res, room)
	switch {
	case err == errResult:
		return nil
	case err != nil:
		return err
	}
	if out != nil {
		*res = *out
	}
	res.CallID, res.Name = c.Call.ID, c.Call.Name
	return nil
}

// scanTools is the number of tools up to which tool finds a tool by
// comparing names, which costs less than hashing the name.
const scanTools = 8

// tool returns the agent's tool named name.
func (a *agent) tool(name string) (operator.Tool, bool) {
	if len(a.names) > scanTools {
		t, ok := a.tools[name]
		return t, ok
	}
	for i, n := range a.names {
		if n == name {
			return a.list[i], true
		}
	}
	return nil, false
}

// errResult is callTool's error for a call whose result it left in *res.
var errResult = errors.New("react: the call's result is set")

// callTool calls t with c's arguments. Given room, t writes its result to
// *res and room (toolcall.Into), and callTool returns no result. A panic
// in the tool and a failure other than the run's cancellation or a pause
// (graph.Interrupt) are the call's result: callTool leaves it in *res and
// returns errResult.
func callTool(ctx context.Context, t operator.Tool, c *call, res *model.ToolResult, room *toolcall.Room) (out *model.ToolResult, err error) {
	defer func() {
		if v := recover(); v != nil {
			panicResult(res, &c.Call, v)
			out, err = nil, errResult
		}
	}()
	if room != nil {
		err = t.(toolcall.Into).CallInto(ctx, c.Call.Arguments, res, room)
	} else {
		out, err = t.Call(ctx, c.Call.Arguments)
	}
	if err != nil && ctx.Err() == nil && !graph.IsInterrupt(err) {
		// Any failure but these two is the model's to read.
		failedResult(res, &c.Call, err)
		return nil, errResult
	}
	return out, err
}

// unknownTool sets *res to the result of a call of a tool the agent does
// not have.
//
//go:noinline
func (a *agent) unknownTool(res *model.ToolResult, c *model.ToolCall) {
	setError(res, c, unknownText(c.Name, a.names))
	// The result names the call's tool, which the model wrote: clipped.
	res.Name = utf8clip.Clip(c.Name, maxEchoedName)
}

// panicResult sets *res to the result of a call whose tool panicked with v.
//
//go:noinline
func panicResult(res *model.ToolResult, c *model.ToolCall, v any) {
	setError(res, c, fmt.Sprintf("the tool failed: %v", v))
}

// failedResult sets *res to the result of a call whose tool failed with
// err.
//
//go:noinline
func failedResult(res *model.ToolResult, c *model.ToolCall, err error) {
	setError(res, c, "the tool failed: "+err.Error())
}

// setError sets *res to c's error result saying text.
//
//go:noinline
func setError(res *model.ToolResult, c *model.ToolCall, text string) {
	*res = errorResult(*c, text)
}

func errorResult(c model.ToolCall, text string) model.ToolResult {
	return model.ToolResult{CallID: c.ID, Name: c.Name, Content: []model.Part{model.TextPart(text)}, IsError: true}
}
