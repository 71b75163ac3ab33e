package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"go.uber.org/zap"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/graph"
	"github.com/agentgraph/agentgraph/graph/checkpoint"
)

// Codec converts a graph's state to and from the JSON the API carries.
// The zero Codec uses encoding/json both ways, which suits a state whose
// JSON form is what clients send and read, with two differences in
// Input, for a struct state that does not decode itself
// (json.Unmarshaler): a top-level key that names no field of the state
// is refused (422 naming the key and the fields) instead of dropped, and
// a top-level field of type model.Messages is read as [DecodeMessages]
// reads it (the LangChain messages the official SDKs send, {"role":
// "user", "content": "..."}, or model.Message's own form), without
// giving ids. Values writes model.Messages in model.Message's form; a
// client that renders the messages of values (useStream) needs a Values
// writing them with [EncodeMessages].
type Codec[S any] struct {
	// Input decodes a run's input, or the values of a state update, into
	// a state value. The JSON keys present are the fields written. It
	// must be pure (no effects, the same answer for the same data): a
	// run's input is decoded when the run is made (so that an input that
	// does not decode is refused with 422 before the run exists), and the
	// run starts with that value when it is created claimed, to run on
	// the same instance at once (a store that is a RunClaimer, a thread
	// with no other active run, no after_seconds); any other run (queued,
	// delayed, started on another instance or after a restart) decodes
	// its stored input again when it starts. The error of a json.Unmarshal (an
	// *json.UnmarshalTypeError) is answered naming the field.
	Input func(data json.RawMessage) (S, error)
	// Values encodes a state value (the values stream mode, thread state,
	// /runs/wait results). It must give a JSON object.
	Values func(s S) (json.RawMessage, error)
	// InputSchema is the JSON Schema of the input Input decodes (GET
	// /assistants/{id}/schemas, input_schema). With an Input of its own
	// and no InputSchema, the input schema is a free object
	// ({"type":"object"}): the state type's schema would describe keys
	// Input may not take. Without an Input of its own, the schema is
	// reflected from the state type.
	InputSchema json.RawMessage
	// ValuesSchema is the JSON Schema of the object Values writes
	// (output_schema and state_schema). With a Values of its own and no
	// ValuesSchema, those schemas are free objects.
	ValuesSchema json.RawMessage
}

// GraphOption configures a graph at [Register].
type GraphOption[S any] func(*adapter[S])

// WithCodec sets how the graph's state converts to and from JSON.
func WithCodec[S any](c Codec[S]) GraphOption[S] {
	return func(a *adapter[S]) {
		if c.Input != nil {
			a.codec.Input, a.customInput = c.Input, true
		}
		if c.Values != nil {
			a.codec.Values, a.customValues = c.Values, true
		}
		a.codec.InputSchema, a.codec.ValuesSchema = c.InputSchema, c.ValuesSchema
	}
}

// WithInputFields limits the top-level keys of the state that clients may
// write, in a run's input and in a state update's values, to keys (JSON
// keys of the state's fields): any other key is refused with 422 naming
// it. Without it, clients may write every field of the state, which suits
// a state whose fields are all the caller's to give; a state that also
// holds what the graph counts or decides (usage, a count of model calls,
// an outcome) should list only the fields that are input. It limits the
// default Codec.Input; Register refuses it with a Codec.Input of
// WithCodec (which decides alone which keys it takes) and keys that name
// no field of the state.
func WithInputFields[S any](keys ...string) GraphOption[S] {
	keys = slices.Clone(keys)
	return func(a *adapter[S]) { a.inputKeys = append([]string{}, keys...) }
}

// DefaultMaxGotoSends is [GotoPolicy.MaxSends]'s default.
const DefaultMaxGotoSends = 64

// GotoPolicy says what a run's command.goto (LangGraph's Command.goto)
// may route to on a graph, [WithGoto].
type GotoPolicy struct {
	// Nodes are the nodes a command.goto may name, and the task nodes it
	// may give a Send {"node", "input"} (graph.END may be listed too).
	// A goto runs a node on the client's word, with the client's input
	// for a task node, skipping the nodes (and the checks) that lead to
	// it in the graph: list only nodes that are safe to run so. Register
	// refuses an empty list and a name that is not a node of the graph.
	Nodes []string
	// MaxSends caps the items (node names and Sends) of one
	// command.goto: more are refused with 422. Zero means
	// DefaultMaxGotoSends; a negative value is refused at Register.
	MaxSends int
}

// WithGoto lets clients route a run with command.goto to the nodes p
// lists. Without it, a run's command.goto is refused with 422: a goto
// reaches any node of the graph, a task node with input of the client's
// making (a tool call the model never made, say), so it is opt-in, per
// graph and per node.
func WithGoto[S any](p GotoPolicy) GraphOption[S] {
	p.Nodes = slices.Clone(p.Nodes)
	return func(a *adapter[S]) { a.gotoPolicy = &p }
}

// WithDescription sets the description of the graph's assistant.
func WithDescription[S any](text string) GraphOption[S] {
	return func(a *adapter[S]) { a.description = text }
}

// Register serves g under graphID: its assistant (one per graph, with the
// stable id AssistantID(graphID)) runs it on the server's threads. g must be
// compiled with the server's checkpointer, [Server.Checkpointer]
// (graph.WithCheckpointer(srv.Checkpointer())), so that threads keep their
// state between runs, pause on interrupts and are deleted and counted
// (Config.MaxThreadBytes) with their checkpoints: a graph compiled without
// a checkpointer, or with another saver, is refused. Register before
// serving requests.
func Register[S any](s *Server, graphID string, g *graph.Compiled[S], opts ...GraphOption[S]) error {
	if graphID == "" || strings.ContainsAny(graphID, "/ ") {
		return fmt.Errorf("server: graph id %q is not usable; use a non-empty name without slashes or spaces", graphID)
	}
	if g == nil {
		return fmt.Errorf("server: graph %q is nil", graphID)
	}
	if err := checkSaver(graphID, g.Checkpointer(), s.saver); err != nil {
		return err
	}
	a := &adapter[S]{id: graphID, asst: AssistantID(graphID), g: g}
	a.codec.Input = defaultInput[S](nil)
	a.codec.Values = func(v S) (json.RawMessage, error) { return json.Marshal(v) }
	for _, o := range opts {
		if o != nil {
			o(a)
		}
	}
	if a.inputKeys != nil {
		fields, err := limitFields[S](graphID, a.inputKeys, a.customInput)
		if err != nil {
			return err
		}
		a.codec.Input = defaultInput[S](fields)
	}
	if err := a.checkGoto(); err != nil {
		return err
	}
	a.keys = jsonKeys(reflect.TypeFor[S]())
	a.buildSchemas(s.log)
	return s.addGraph(graphID, a)
}

// checkSaver refuses a graph whose checkpointer is not the server's: a
// graph without one would fail every run (its threads could not keep
// their state), and one with another saver would keep checkpoints the
// server neither deletes with their threads nor counts.
func checkSaver(graphID string, own, server checkpoint.Saver) error {
	if own == nil {
		return fmt.Errorf("server: graph %q was compiled without a checkpointer; compile it with graph.WithCheckpointer(srv.Checkpointer()), the server's Config.Checkpointer", graphID)
	}
	if !sameSaver(own, server) {
		which := fmt.Sprintf("a %T, the server's is a %T", own, server)
		if reflect.TypeOf(own) == reflect.TypeOf(server) {
			which = fmt.Sprintf("another %T than the server's", own)
		}
		return fmt.Errorf("server: graph %q was compiled with a checkpointer that is not the server's (Config.Checkpointer, from which the server deletes threads' checkpoints and counts their bytes): %s; compile it with graph.WithCheckpointer(srv.Checkpointer()), or give its saver as Config.Checkpointer", graphID, which)
	}
	return nil
}

// sameSaver says whether a and b are the same saver: equal interface
// values, compared only when they are comparable (== on others would
// panic): a saver that is not (a struct holding a map, say) cannot be
// told from a copy.
func sameSaver(a, b checkpoint.Saver) bool {
	va, vb := reflect.ValueOf(a), reflect.ValueOf(b)
	return va.IsValid() && vb.IsValid() && va.Type() == vb.Type() && va.Comparable() && vb.Comparable() && a == b
}

// AssistantID returns the id of the assistant the server makes for the graph
// graphID: a UUID version 5 of the graph id in the namespace
// 6ba7b821-9dad-11d1-80b4-00c04fd430c8, as the LangGraph servers derive it, so that ids are stable across servers.
func AssistantID(graphID string) string {
	return uuid.NewSHA1(assistantNS, []byte(graphID)).String()
}

// assistantNS is the namespace the LangGraph servers derive assistant ids in.
var assistantNS = uuid.MustParse("6ba7b821-9dad-11d1-80b4-00c04fd430c8")

// runner is a registered graph with its state type erased.
type runner interface {
	graphID() string
	// assistantID is AssistantID(graphID()), computed once at Register
	// (a run names it three times, and a SHA-1 costs more than a read).
	assistantID() string
	describe() string
	// nodes lists the graph's nodes, which a run's breakpoints name.
	nodes() []string
	// topology is the compiled graph's shape (GET /assistants/{id}/graph).
	topology() graph.Topology
	// inputFields are the JSON keys clients may write (WithInputFields),
	// nil for every field of the state.
	inputFields() []string
	// schemas are the graph's JSON Schemas (GET
	// /assistants/{id}/schemas), built at Register.
	schemas() schemaSet
	// subgraphSchemas are those of its subgraphs, by namespace
	// (subgraph node names joined by "|"), built at Register.
	subgraphSchemas() map[string]schemaSet
	// checkInput decodes a run's input into the graph's state (absent or
	// null: none, nil), and refuses one that does not decode, so that
	// the run is refused before it is made and its thread stays as it
	// was. The value it returns is runCall.decoded for the start of a
	// run created claimed (claimedRun.input).
	checkInput(input json.RawMessage) (any, error)
	// checkCommand refuses a run's command.update and command.goto that
	// do not decode into the graph's state and nodes (422), before the
	// run is made.
	checkCommand(update, goTo json.RawMessage) error
	execute(ctx context.Context, rc *runCall, emit func(name string, data any) error) (*runResult, error)
	state(ctx context.Context, threadID, checkpointID string) (*threadState, error)
	// latest reads the thread's latest checkpoint for a run about to
	// start: its id ("" for a thread without one) and the snapshot read,
	// for runCall.latest (nil for a thread without a checkpoint). It
	// builds none of the API's view of the state, which a run does not
	// show.
	latest(ctx context.Context, threadID string) (checkpointID string, snap any, err error)
	history(ctx context.Context, threadID string, q historyQuery) ([]*threadState, bool, error)
	update(ctx context.Context, threadID string, values json.RawMessage, asNode, from string) (string, error)
	// threadDeleted is the graph's WithThreadDeleted function, or nil.
	threadDeleted() func(ctx context.Context, threadID string) error
}

// runCall is what one run asks of its graph.
type runCall struct {
	runID, threadID string
	input           json.RawMessage // absent or null: none
	// decoded, if not nil, is input as checkInput decoded it when the
	// run was created claimed on this instance (see claimedRun.input): the run
	// starts with it instead of decoding input again.
	decoded any
	resume  json.RawMessage // absent: none
	// update and goTo are the run's command.update and command.goto
	// (absent: none): written to the thread before its graph runs.
	update, goTo  json.RawMessage
	strictResume  bool // resume must answer pending interrupts (checkResume)
	before, after []string
	checkpointID  string
	modes         map[string]bool
	subgraphs     bool
	metadata      map[string]any
	// labels are the labels of each checkpoint the run saves: the run's
	// metadata as checkpointLabels gives it.
	labels      map[string]string
	tags        []string
	context     map[string]any // the request's context, for RunContext
	durability  string         // sync, async, exit or "" (the graph's own)
	stepLimit   int            // config.recursion_limit; 0: the graph's own
	concurrency int            // config.max_concurrency; 0: the graph's own
	// latest, when latestKnown, is the thread's latest snapshot (nil for
	// a thread without a checkpoint) as the server read it before the
	// run: the graph's adapter uses it instead of reading it again, and
	// the run starts from it (graph.ContinueFrom).
	latest      any
	latestKnown bool
	// head says that checkpointID is the checkpoint a rollback returned
	// the thread to (Thread.Head), not one the request named: the
	// thread's current state, which new input continues as it would
	// continue the latest.
	head bool
	// hasHead says that the thread has a rollback's head (Thread.Head or
	// Thread.Rolled), which the run clears (begin), whether or not the
	// run starts from it.
	hasHead bool
	// again says that the run starts again: taken over from an instance
	// that ran it, or after saves its checkpoint database lost. A
	// command's update (commandSaved) may then be saved already.
	again bool
	// start is the checkpoint the run started from, where a rollback
	// returns the thread ("" for none): the run saves nothing against it
	// (see adapter.copyStart).
	start string
	// subgraphSaves, when set, is set once the run saves a checkpoint
	// (or writes) of a thread other than its own: a durable subgraph's
	// (runCreate.subgraphSaves).
	subgraphSaves *atomic.Bool
	// begin, when set, is called once the run knows where it starts
	// (after it dropped a pending step, if it did), before the graph
	// runs. It clears the thread's head; an error ends the run before
	// the graph runs.
	begin func() error
	// msgs is the state of the messages modes (messages-tuple and the
	// legacy messages), when the run asks for one.
	msgs *streamedMessages
}

// recursionError is the error of a run that reached its step limit,
// said in the API's terms: the request's config.recursion_limit.
type recursionError struct {
	limit   int
	graphID string
	err     error // the graph's *graph.StepLimitError
}

func (e *recursionError) Error() string {
	return fmt.Sprintf("recursion limit of %d super-steps reached before graph %q finished; if it is meant to loop that long, raise config.recursion_limit (at most %d)", e.limit, e.graphID, MaxRecursionLimit)
}

func (e *recursionError) Unwrap() error { return e.err }

// runResult is how a run ended: the thread's state, read from its
// checkpoint, or for a run that finished, made from the run's last
// values event (its Values, and no next task: no Checkpoint nor
// Metadata, which the thread's record does not keep).
type runResult struct {
	state *threadState
}

// threadState is one checkpoint as the API shows it.
type threadState struct {
	Values           json.RawMessage `json:"values"`
	Next             []string        `json:"next"`
	Tasks            []stateTask     `json:"tasks"`
	Metadata         map[string]any  `json:"metadata"`
	CreatedAt        *string         `json:"created_at"`
	Checkpoint       *checkpointRef  `json:"checkpoint"`
	ParentCheckpoint *checkpointRef  `json:"parent_checkpoint"`
	Interrupts       []Interrupt     `json:"interrupts"`
}

type stateTask struct {
	ID         string      `json:"id"`
	Name       string      `json:"name"`
	Error      *string     `json:"error"`
	Interrupts []Interrupt `json:"interrupts"`
	Path       []string    `json:"path"`
	Checkpoint any         `json:"checkpoint"`
	State      any         `json:"state"`
	Result     any         `json:"result"`
}

// checkpointRef names one checkpoint of a thread, as the API writes it in
// a state and the LangGraph SDKs send it back in requests.
type checkpointRef struct {
	ThreadID      string         `json:"thread_id"`
	CheckpointNS  string         `json:"checkpoint_ns"`
	CheckpointID  string         `json:"checkpoint_id"`
	CheckpointMap map[string]any `json:"checkpoint_map"`
}

// taskInterrupts groups a state's interrupts by task id, for Thread.Interrupts.
func (st *threadState) taskInterrupts() map[string][]Interrupt {
	m := map[string][]Interrupt{}
	for _, t := range st.Tasks {
		if len(t.Interrupts) > 0 {
			m[t.ID] = t.Interrupts
		}
	}
	return m
}

type adapter[S any] struct {
	id           string
	asst         string // AssistantID(id)
	g            *graph.Compiled[S]
	codec        Codec[S]
	customInput  bool     // codec.Input is WithCodec's
	customValues bool     // codec.Values is WithCodec's
	inputKeys    []string // WithInputFields's keys; nil for every field
	description  string
	keys         map[string]string                   // Go field name -> JSON key
	schemaSet    schemaSet                           // GET /assistants/{id}/schemas, built at Register
	subSchemas   map[string]schemaSet                // of the subgraphs, by namespace
	gotoPolicy   *GotoPolicy                         // WithGoto's; nil: command.goto refused
	onDeleted    func(context.Context, string) error // WithThreadDeleted's; may be nil
}

// checkGoto refuses a WithGoto that lists no node, names a node the
// graph does not have, or caps Sends below zero; it sets MaxSends's
// default.
func (a *adapter[S]) checkGoto() error {
	p := a.gotoPolicy
	if p == nil {
		return nil
	}
	if len(p.Nodes) == 0 {
		return fmt.Errorf("server: graph %q: WithGoto lists no node; list the nodes clients may goto, or leave WithGoto out to refuse command.goto", a.id)
	}
	nodes := a.g.Nodes()
	for _, n := range p.Nodes {
		if n != graph.END && !slices.Contains(nodes, n) {
			return fmt.Errorf("server: graph %q: WithGoto lists %q, which is not a node of the graph (nodes: %s)", a.id, n, strings.Join(nodes, ", "))
		}
	}
	if p.MaxSends < 0 {
		return fmt.Errorf("server: graph %q: WithGoto's MaxSends is %d; give a positive cap, or 0 for %d", a.id, p.MaxSends, DefaultMaxGotoSends)
	}
	if p.MaxSends == 0 {
		p.MaxSends = DefaultMaxGotoSends
	}
	return nil
}

func (a *adapter[S]) graphID() string          { return a.id }
func (a *adapter[S]) assistantID() string      { return a.asst }
func (a *adapter[S]) describe() string         { return a.description }
func (a *adapter[S]) nodes() []string          { return a.g.Nodes() }
func (a *adapter[S]) topology() graph.Topology { return a.g.Topology() }
func (a *adapter[S]) inputFields() []string    { return a.inputKeys }

func (a *adapter[S]) schemas() schemaSet                    { return a.schemaSet }
func (a *adapter[S]) subgraphSchemas() map[string]schemaSet { return a.subSchemas }

// buildSchemas builds the graph's schemas and its subgraphs' once, at
// Register: a state type with no schema is logged to log and described
// as a free object. A codec of its own (WithCodec) decides the JSON form
// of the graph's state: its schemas are the codec's, free objects when it
// gives none.
func (a *adapter[S]) buildSchemas(log *zap.Logger) {
	warn := func(err error) {
		log.Warn("server: graph "+a.id+": its state has no JSON Schema", zap.Error(err))
	}
	t := a.g.Topology()
	a.schemaSet = buildSchemas(t.State, a.inputKeys, warn)
	if a.customInput {
		a.schemaSet.input = freeObject
		if a.codec.InputSchema != nil {
			a.schemaSet.input = a.codec.InputSchema
		}
	}
	if a.customValues {
		a.schemaSet.state = freeObject
		if a.codec.ValuesSchema != nil {
			a.schemaSet.state = a.codec.ValuesSchema
		}
	}
	a.subSchemas = map[string]schemaSet{}
	subgraphSchemaSets(t, "", a.subSchemas, warn)
}

// jsonKeys maps the top-level fields of a struct type to their JSON keys.
func jsonKeys(t reflect.Type) map[string]string {
	m := map[string]string{}
	if t.Kind() != reflect.Struct {
		return m
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name := f.Name
		if tag, ok := f.Tag.Lookup("json"); ok {
			n, _, _ := strings.Cut(tag, ",")
			if n == "-" {
				continue
			}
			if n != "" {
				name = n
			}
		}
		m[f.Name] = name
	}
	return m
}

func (a *adapter[S]) values(s S) (json.RawMessage, error) {
	b, err := a.codec.Values(s)
	if err != nil {
		return nil, fmt.Errorf("encoding the state of graph %q: %w", a.id, err)
	}
	return b, nil
}

// encodeUpdate gives an update as the JSON object of the fields it writes.
func encodeUpdate(fields []string, full json.RawMessage, keys map[string]string) json.RawMessage {
	var obj map[string]json.RawMessage
	if json.Unmarshal(full, &obj) != nil {
		return full
	}
	out := map[string]json.RawMessage{}
	for _, f := range fields {
		k := keys[f]
		if k == "" {
			k = f
		}
		if v, ok := obj[k]; ok {
			out[k] = v
			continue
		}
		// A Codec's Values may name a field other than its JSON tag
		// does (a field without a tag, "Messages", written as
		// "messages"): the key that matches regardless of case, as
		// encoding/json and a state update (adapter.update) match them,
		// when it is the only one and not another field's own key;
		// otherwise which field it holds is unknown, and the update
		// leaves it out.
		if key, ok := foldedKey(obj, f, k, keys); ok {
			out[key] = obj[key]
		}
	}
	b, _ := json.Marshal(out)
	return b
}

// foldedKey returns the one key of obj equal to k, the JSON key of the
// field f, regardless of case, if there is exactly one and it is not the
// JSON key of another field in keys (Go field name -> JSON key).
func foldedKey(obj map[string]json.RawMessage, f, k string, keys map[string]string) (string, bool) {
	found, n := "", 0
	for key := range obj {
		if strings.EqualFold(key, k) {
			found, n = key, n+1
		}
	}
	if n != 1 {
		return "", false
	}
	for g, jk := range keys {
		if g != f && jk == found {
			return "", false
		}
	}
	return found, true
}

func (a *adapter[S]) checkInput(input json.RawMessage) (any, error) {
	if len(input) == 0 || string(input) == "null" {
		return nil, nil
	}
	v, err := a.codec.Input(input)
	if err != nil {
		return nil, a.inputError(input, err)
	}
	return v, nil
}

// inputError is the 422 of an input that does not decode into the
// graph's state: naming the field of the wrong type (input.messages)
// when the codec's error says which, and a number the field's type does
// not hold by its path (input.a.b[1]), as numberError names it in a body.
func (a *adapter[S]) inputError(input json.RawMessage, err error) error {
	if e := a.keyError("input", err); e != nil {
		return e
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if num, ok := strings.CutPrefix(te.Value, "number "); ok {
			return numberError(input, te, num, "input")
		}
	}
	if errors.As(err, &te) && te.Field != "" {
		return &requestError{status: 422, msg: fmt.Sprintf("input.%s: must be %s, not a JSON %s, in the state of graph %q", te.Field, jsonKind(te.Type.Kind().String()), te.Value, a.id)}
	}
	return &requestError{status: 422, msg: fmt.Sprintf("input: does not decode into the state of graph %q: %v", a.id, err)}
}

// keyError is the 422 of the default codec's error for a key of the
// input (or of a state update's values: at is "values") that names no
// field of the state, or for a messages field that does not decode; nil
// for another error.
func (a *adapter[S]) keyError(at string, err error) error {
	var ke *unknownKeyError
	if errors.As(err, &ke) {
		keys := make([]string, len(ke.keys))
		for i, k := range ke.keys {
			keys[i] = at + "." + k
		}
		if ke.limited {
			return &requestError{status: 422, msg: fmt.Sprintf("%s: not a field clients may write in the state of graph %q (WithInputFields); give only: %s", strings.Join(keys, ", "), a.id, strings.Join(ke.known, ", "))}
		}
		return &requestError{status: 422, msg: fmt.Sprintf("%s: not a field of the state of graph %q; give its fields only: %s", strings.Join(keys, ", "), a.id, strings.Join(ke.known, ", "))}
	}
	var me *messagesError
	if errors.As(err, &me) {
		return &requestError{status: 422, msg: fmt.Sprintf("%s.%v", at, me)}
	}
	return nil
}

func (a *adapter[S]) execute(ctx context.Context, rc *runCall, emit func(name string, data any) error) (*runResult, error) {
	th := a.g.Thread(rc.threadID)
	var input S
	hasInput := len(rc.input) > 0 && string(rc.input) != "null"
	if v, ok := rc.decoded.(S); ok && hasInput {
		input = v
	} else if hasInput {
		v, err := a.codec.Input(rc.input)
		if err != nil {
			return nil, a.inputError(rc.input, err)
		}
		input = v
	}
	modes := []graph.StreamMode{graph.StreamValues}
	if rc.modes["updates"] {
		modes = append(modes, graph.StreamUpdates)
	}
	if rc.modes["custom"] {
		modes = append(modes, graph.StreamCustom)
	}
	if rc.modes["messages-tuple"] || rc.modes["messages"] {
		modes = append(modes, graph.StreamMessages)
	}
	if rc.modes["messages-tuple"] || rc.modes["messages"] {
		rc.msgs = newStreamedMessages(rc.modes["messages"], rc.modes["messages-tuple"])
		if !rc.modes["updates"] {
			// The nodes of each step, for the metadata of the messages
			// they write to the state without a model reply.
			modes = append(modes, graph.StreamUpdates)
		}
	}
	opts := []graph.RunOption{graph.WithModes(modes...), graph.WithCheckpointMetadata(rc.labels)}
	if d, ok := durabilities[rc.durability]; ok {
		opts = append(opts, graph.WithDurability(d))
	}
	if rc.stepLimit > 0 {
		opts = append(opts, graph.WithStepLimit(rc.stepLimit))
	}
	if saves := rc.subgraphSaves; saves != nil {
		own := rc.threadID
		opts = append(opts, graph.WithHooks(graph.Hooks{Saved: func(_ context.Context, si graph.SaveInfo, _ time.Duration, _ error) {
			if si.Thread != own && !saves.Load() {
				saves.Store(true)
			}
		}}))
	}
	if rc.concurrency > 0 {
		opts = append(opts, graph.WithMaxConcurrency(rc.concurrency))
	}
	if len(rc.before) > 0 {
		opts = append(opts, graph.InterruptBefore(a.nodesFor(rc.before)...))
	}
	if len(rc.after) > 0 {
		opts = append(opts, graph.InterruptAfter(a.nodesFor(rc.after)...))
	}
	u, commanded, err := a.command(rc.update, rc.goTo)
	if err != nil {
		return nil, err
	}
	copied := false // the run goes on from a copy of its start (copyStart)
	// New input for a checkpoint the request names that has pending
	// tasks (a paused step, or the next step of a past checkpoint the
	// client branches from) supersedes them, as in LangGraph: the tasks
	// are dropped on a new branch from the checkpoint (below), and the
	// run starts from START with the input. A zero input there is no
	// input, as the graph reads it: the run resumes, or replays, the
	// step.
	supersede := false
	if hasInput && rc.checkpointID != "" && !rc.head {
		snap, err := a.startOf(ctx, th, rc)
		if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
			return nil, fmt.Errorf("reading the state the run starts from: %w", err)
		}
		if err == nil && len(snap.Next) > 0 {
			if reflect.ValueOf(&input).Elem().IsZero() {
				hasInput = false
			} else {
				supersede = true
			}
		}
	}
	if rc.hasHead && !rc.head && rc.checkpointID != "" && !supersede {
		// A run from a checkpoint the request names, on a thread a
		// rollback left at its head, goes on from a copy of that
		// checkpoint, with or without input: the copy is the thread's
		// latest before the head is cleared below, so that a takeover
		// before the run's first checkpoint finds the run's copy
		// (droppedFrom knows it by its parent, the run's checkpoint), not
		// the latest checkpoint of the run rolled back, which it would
		// resume, ignoring the run's checkpoint, input and resume. Input
		// that supersedes the checkpoint's pending tasks makes, instead
		// of the copy, the update that drops them, on a new branch from
		// the checkpoint as well.
		if err := a.copyStart(ctx, th, rc); err != nil {
			return nil, err
		}
		copied = true
	}
	if !hasInput && rc.head && !commanded {
		// A run from a rollback's head without input (a resume, or
		// none) goes on from the head's state as it is: it copies the
		// head (an empty update keeping its pending writes, on a new
		// branch from it) as the thread's latest before the head is
		// cleared below, for the same reason as a run with input drops
		// its pending step: a takeover before the run's first checkpoint
		// must find the run's copy, not the latest checkpoint of the run
		// rolled back, which it would resume (issue #21). The copy is
		// read, and resumed, as the head itself (droppedFrom knows it).
		if err := a.copyStart(ctx, th, rc); err != nil {
			return nil, err
		}
		copied = true
	}
	if !hasInput && !copied && !commanded && rc.start != "" && (rc.checkpointID == "" || rc.checkpointID == rc.start) {
		// A run that resumes a step of several tasks saves each task's
		// writes as it finishes against the checkpoint it resumes. When
		// that is the run's start, where a rollback of the run returns
		// the thread, the run goes on from a copy of it instead, so that
		// the writes go to the copy: a run from the rollback's head must
		// not find the tasks done with the answers of the run rolled
		// back. The copy is the run's own, as a head's (droppedFrom).
		snap, err := a.startOf(ctx, th, rc)
		if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
			return nil, fmt.Errorf("reading the state the run starts from: %w", err)
		}
		if err == nil && snap.CheckpointID == rc.start && len(snap.Next) > 1 {
			rc.checkpointID = rc.start
			if err := a.copyStart(ctx, th, rc); err != nil {
				return nil, err
			}
		}
	}
	if commanded {
		// command.update and command.goto, LangGraph's Command given as
		// a run's input: the update merges into the state the run starts
		// from through the fields' reducers, written by no node (the
		// next tasks and pending interrupts stay), and goto adds its
		// nodes and Sends to the next step's tasks. Both are saved as an
		// update (on a new branch from the checkpoint the run starts
		// from, when it is not the latest: a rollback's head, or one the
		// request names), which the run goes on from as from the
		// thread's latest state, resuming its paused step when
		// command.resume is given too. That update is the copy the run
		// would otherwise make of a head or of a paused step of several
		// tasks (copyStart): the finished tasks' writes are dropped, and
		// they run again.
		if !a.commandSaved(ctx, th, rc) {
			if err := a.checkResume(ctx, th, rc, true); err != nil {
				return nil, err
			}
			var uo []graph.UpdateOption
			if rc.checkpointID != "" {
				uo = append(uo, graph.UpdateFrom(rc.checkpointID))
			}
			if _, err := th.Update(ctx, u, uo...); err != nil {
				return nil, err
			}
		}
		rc.latest, rc.latestKnown = nil, false
		rc.checkpointID, rc.head = "", false
	}
	ignored := false // a resume that answers no interrupt, and nothing to continue (resumeOption)
	if len(rc.resume) > 0 {
		o, err := a.resumeOption(ctx, th, rc, rc.resume)
		if err != nil {
			return nil, err
		}
		if o != nil {
			opts = append(opts, o)
		} else {
			ignored = !copied && a.nothingPending(ctx, th, rc)
		}
	} else if hasInput && (rc.checkpointID == "" || rc.head || supersede) {
		// New input on a thread that paused or was stopped mid-run starts
		// a new run from START, as LangGraph does: the pending step is
		// dropped (its completed steps stay in the state). A thread
		// rolled back to a checkpoint (rc.head) is in that checkpoint's
		// state, which may be paused: a cancelled run left its step
		// pending, and the run rolled back since started from there.
		// The step is dropped on a new branch from the checkpoint,
		// which becomes the thread's latest, and the run goes on from
		// it as from any latest state. A run from a rollback's head
		// makes that update (empty, as END) even when the head has no
		// pending step: the head is cleared below, and the thread's
		// latest must then be a checkpoint of this run, not one of the
		// run rolled back, which a takeover would take for this run's
		// (issue #21). The drop, like the copies of copyStart, is an
		// update a run makes before its graph runs, its parent the
		// checkpoint the run starts from: a takeover knows it by that
		// (droppedFrom), whether or not the run recorded anything since.
		// Input for a past checkpoint with pending tasks (supersede) drops
		// them the same way, on a branch from that checkpoint.
		snap, err := a.startOf(ctx, th, rc)
		if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
			return nil, fmt.Errorf("reading the state the run starts from: %w", err)
		}
		if err == nil && (len(snap.Next) > 0 || rc.head) {
			if _, err := th.Update(ctx, graph.Update[S]{}, graph.AsNode(graph.END), graph.UpdateFrom(rc.checkpointID)); err != nil {
				return nil, err
			}
			rc.latest, rc.latestKnown = nil, false
			rc.checkpointID, rc.head = "", false
		}
	}
	if commanded && len(rc.resume) == 0 {
		// A command whose goto added no task, on a state with no next
		// step, takes no step: the run's result is the updated state.
		ignored = a.nothingPending(ctx, th, rc)
	}
	if rc.begin != nil {
		if err := rc.begin(); err != nil {
			return nil, err
		}
	}
	if ignored {
		// LangGraph ignores a resume that answers no interrupt (without
		// strict_resume): the run has no step to take, and its result is
		// the thread's state as it is.
		return a.unchanged(ctx, rc, emit)
	}
	if rc.checkpointID != "" {
		opts = append(opts, graph.FromCheckpoint(rc.checkpointID))
	}
	if hasInput && rc.modes["values"] && rc.checkpointID == "" {
		// The first values event is the input merged into the state, as
		// LangGraph sends it, so a client shows its message at once.
		if err := a.emitInput(ctx, th, rc, input, emit); err != nil {
			return nil, err
		}
	}
	if rc.msgs != nil {
		// The messages the run starts with, input included, are not
		// new: the messages modes send those its steps add.
		b, ok, err := a.inputValues(ctx, th, rc, input, hasInput)
		if err != nil {
			return nil, err
		}
		if ok {
			_ = rc.msgs.values(b, nil, func(string, any) error { return nil })
		}
	}
	ctx = graph.WithConfig(ctx, graph.RunConfig{RunID: rc.runID, ThreadID: rc.threadID, Tags: rc.tags, Metadata: rc.metadata})
	if rc.context != nil {
		ctx = context.WithValue(ctx, runContextKey{}, rc.context)
	}
	// The state after the run's last step, from its values events: a run
	// that finished (no interrupt, no breakpoint that could pause it)
	// leaves its thread in that state with no next task, which the
	// thread's record takes without reading the checkpoint just saved.
	// The record then holds the state as the run left it in memory; GET
	// /threads/{id}/state decodes the checkpoint. They are the same
	// values for a state that the checkpointer's serializer gives back
	// unchanged (TestThreadValuesMatchState); a field of type any holding
	// an integer beyond 2^53, say, reads back as a float from the
	// checkpoint but not in the record.
	if rc.checkpointID == "" && rc.latestKnown {
		// The thread's latest state as the server read it: the engine
		// starts from it instead of reading it again, and fails the run
		// with checkpoint.ErrConflict if the thread moved on since.
		if snap, ok := rc.latest.(graph.StateSnapshot[S]); ok {
			opts = append(opts, graph.ContinueFrom(snap))
		}
	}
	var last S
	finished := len(rc.before) == 0 && len(rc.after) == 0
	stepped := false
	for ev, err := range th.Stream(ctx, input, opts...) {
		var sl *graph.StepLimitError
		if errors.As(err, &sl) {
			return nil, &recursionError{limit: sl.Limit, graphID: a.id, err: err}
		}
		if err != nil {
			return nil, err
		}
		switch {
		case ev.Mode == graph.StreamInterrupt:
			finished = false
		case ev.Mode == graph.StreamValues && len(ev.Namespace) == 0 && ev.Payload == nil:
			last, stepped = ev.State, true
		}
		if err := a.emitEvent(rc, ev, emit); err != nil {
			return nil, err
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if finished && stepped {
		vals, err := a.values(last)
		if err != nil {
			return nil, err
		}
		return &runResult{state: &threadState{Values: vals, Next: []string{}, Tasks: []stateTask{}, Interrupts: []Interrupt{}}}, nil
	}
	st, err := a.state(context.WithoutCancel(ctx), rc.threadID, "")
	if err != nil {
		return nil, err
	}
	return &runResult{state: st}, nil
}

// commandSaved reports whether the run, starting again (rc.again), finds
// its command's update saved by its earlier execution: the thread's
// latest checkpoint is an update whose parent is the run's start, which
// only the run makes while it is active (droppedFrom), and which a
// command run makes only of its command. The run then goes on from it
// without applying the command again.
func (a *adapter[S]) commandSaved(ctx context.Context, th graph.Thread[S], rc *runCall) bool {
	if !rc.again || rc.start == "" {
		return false
	}
	snap, err := th.State(ctx)
	return err == nil && snap.CheckpointID != rc.start && snap.ParentID == rc.start && snap.Metadata[graph.MetaSource] == "update"
}

// emitInput emits the thread's state with input merged, through the
// fields' reducers, as a values event.
func (a *adapter[S]) emitInput(ctx context.Context, th graph.Thread[S], rc *runCall, input S, emit func(string, any) error) error {
	b, ok, err := a.inputValues(ctx, th, rc, input, true)
	if err != nil || !ok {
		return err // !ok: a field without a handle: the engine replaces it; skip the preview
	}
	return emit("values", b)
}

// inputValues returns, as JSON, the state the run starts from (see
// startOf) with the run's input, when hasInput, merged in; ok is false
// when a field of the input has no handle (the engine replaces it).
func (a *adapter[S]) inputValues(ctx context.Context, th graph.Thread[S], rc *runCall, input S, hasInput bool) (json.RawMessage, bool, error) {
	var cur S
	if snap, err := a.startOf(ctx, th, rc); err == nil {
		cur = snap.Values
	} else if !errors.Is(err, checkpoint.ErrNotFound) {
		return nil, false, err
	}
	if hasInput {
		v := reflect.ValueOf(input)
		var fields []string
		for goName := range a.keys {
			if f := v.FieldByName(goName); f.IsValid() && !f.IsZero() {
				fields = append(fields, goName)
			}
		}
		u, err := a.g.UpdateOf(input, fields...)
		if err != nil {
			return nil, false, nil
		}
		u.ApplyTo(&cur)
	}
	b, err := a.values(cur)
	return b, err == nil, err
}

// resumeOption turns command.resume into Resume or, for an object keyed by
// interrupt ids the run's starting state waits on, ResumeByID. A strict
// resume (rc.strictResume) is checked against those interrupts. Without
// strict_resume, a resume on a state that waits on no interrupt (a
// thread that finished, has no checkpoint, or was moved past its
// interrupt by POST /threads/{id}/state) is ignored, as LangGraph ignores
// it: the option is nil and the run goes on as with no input. The
// engine's graph.Resume stays strict (ErrNothingToResume) for callers of
// the graph package; the leniency is the HTTP API's.
func (a *adapter[S]) resumeOption(ctx context.Context, th graph.Thread[S], rc *runCall, raw json.RawMessage) (graph.RunOption, error) {
	snap, err := a.startOf(ctx, th, rc)
	if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
		return nil, err
	}
	if !rc.strictResume && !hasRaised(snap.Interrupts) {
		return nil, nil
	}
	o, _, err := resumeFor(snap, err, rc, raw)
	return o, err
}

// hasRaised reports whether ins holds an interrupt a node raised, one a
// resume answers (not a breakpoint's).
func hasRaised(ins []graph.InterruptInfo) bool {
	for _, in := range ins {
		if in.Kind == graph.InterruptRaised {
			return true
		}
	}
	return false
}

// nothingPending reports whether the state the run starts from has no
// step to take: a thread without checkpoint, or one that finished.
func (a *adapter[S]) nothingPending(ctx context.Context, th graph.Thread[S], rc *runCall) bool {
	snap, err := a.startOf(ctx, th, rc)
	return errors.Is(err, checkpoint.ErrNotFound) || err == nil && len(snap.Next) == 0
}

// unchanged is the result of a run that takes no step: the thread's
// state, emitted as one values event when the run streams values.
func (a *adapter[S]) unchanged(ctx context.Context, rc *runCall, emit func(string, any) error) (*runResult, error) {
	st, err := a.state(context.WithoutCancel(ctx), rc.threadID, "")
	if err != nil {
		return nil, err
	}
	if st == nil { // no checkpoint: the empty state of GET /threads/{id}/state
		st = &threadState{Values: json.RawMessage(`{}`), Next: []string{}, Tasks: []stateTask{}, Interrupts: []Interrupt{}}
	}
	if rc.modes["values"] {
		if err := emit("values", st.Values); err != nil {
			return nil, err
		}
	}
	return &runResult{state: st}, nil
}

// resumeFor is resumeOption on the state the run starts from, snap (read
// with error readErr: checkpoint.ErrNotFound or nil). byID reports
// whether the option is ResumeByID; otherwise it is Resume, one value.
func resumeFor[S any](snap graph.StateSnapshot[S], readErr error, rc *runCall, raw json.RawMessage) (o graph.RunOption, byIDs bool, err error) {
	var byID map[string]json.RawMessage
	isObject := json.Unmarshal(raw, &byID) == nil && len(byID) > 0
	err = readErr
	pending := make([]string, 0, len(snap.Interrupts))
	for _, in := range snap.Interrupts {
		pending = append(pending, in.ID)
	}
	slices.Sort(pending)
	if rc.strictResume {
		if err := checkResume(raw, pending); err != nil {
			return nil, false, err
		}
	}
	if isObject && err == nil {
		all := true
		for id := range byID {
			all = all && slices.Contains(pending, id)
		}
		if all {
			m := make(map[string]any, len(byID))
			for k, v := range byID {
				m[k] = v
			}
			return graph.ResumeByID(m), true, nil
		}
	}
	return graph.Resume(raw), false, nil
}

// startOf reads the state the run starts from: the checkpoint it names
// (rc.checkpointID: the request's checkpoint, or the one a rollback
// returned the thread to), else the thread's latest.
func (a *adapter[S]) startOf(ctx context.Context, th graph.Thread[S], rc *runCall) (graph.StateSnapshot[S], error) {
	if rc.checkpointID != "" {
		return th.StateAt(ctx, rc.checkpointID)
	}
	return a.latestOf(ctx, th, rc)
}

// copyStart copies the checkpoint the run starts from, rc.checkpointID,
// as the thread's latest (an empty update keeping its next tasks,
// interrupts and pending writes, on a new branch from it), and makes the
// run go on from the copy as from the latest. A resume is checked first
// against the checkpoint, before the copy is saved (checkResume).
func (a *adapter[S]) copyStart(ctx context.Context, th graph.Thread[S], rc *runCall) error {
	if err := a.checkResume(ctx, th, rc, false); err != nil {
		return err
	}
	if _, err := th.Update(ctx, graph.Update[S]{}, graph.UpdateFrom(rc.checkpointID), graph.KeepWrites()); err != nil {
		return err
	}
	rc.latest, rc.latestKnown = nil, false
	rc.checkpointID, rc.head = "", false
	return nil
}

// checkResume checks the run's command.resume, if any, against the state
// the run starts from, before the run saves anything there (a copy, a
// command's update), as the graph checks it when the run starts: strict,
// an object read by interrupt id, and one value (graph.Resume), which
// needs exactly one pending interrupt. A resume refused after a save
// would leave the save, as the thread's latest, at every retry. lenient
// passes a resume the run will ignore (resumeOption: no strict_resume,
// and no interrupt a node raised).
func (a *adapter[S]) checkResume(ctx context.Context, th graph.Thread[S], rc *runCall, lenient bool) error {
	if len(rc.resume) == 0 {
		return nil
	}
	snap, err := a.startOf(ctx, th, rc)
	if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
		return err
	}
	if lenient && !rc.strictResume && !hasRaised(snap.Interrupts) {
		return nil
	}
	_, byID, err := resumeFor(snap, err, rc, rc.resume)
	if err != nil {
		return err
	}
	if !byID && snap.CheckpointID != "" {
		var ids []string
		for _, in := range snap.Interrupts {
			if in.Kind == graph.InterruptRaised {
				ids = append(ids, in.ID)
			}
		}
		switch {
		case len(snap.Next) == 0:
			return fmt.Errorf("%w: checkpoint %q of thread %q is not paused", graph.ErrNothingToResume, snap.CheckpointID, rc.threadID)
		case len(ids) != 1:
			return fmt.Errorf("%w: graph.Resume needs exactly one pending interrupt, thread %q has %d %v; give command.resume as an object keyed by interrupt id", graph.ErrNothingToResume, rc.threadID, len(ids), ids)
		}
	}
	return nil
}

func (a *adapter[S]) nodesFor(names []string) []string {
	for _, n := range names {
		if n == "*" {
			return a.g.Nodes()
		}
	}
	return names
}

// namespace gives the API's name of a subgraph path: node:task-id segments.
func namespace(runID string, ns []string) string {
	segs := make([]string, len(ns))
	for i, n := range ns {
		id := uuid.NewSHA1(uuid.NameSpaceOID, []byte(runID+"|"+strings.Join(ns[:i+1], "|")))
		segs[i] = n + ":" + id.String()
	}
	return strings.Join(segs, "|")
}

func (a *adapter[S]) emitEvent(rc *runCall, ev graph.Event[S], emit func(string, any) error) error {
	name := func(mode string) string {
		if len(ev.Namespace) == 0 {
			return mode
		}
		return mode + "|" + namespace(rc.runID, ev.Namespace)
	}
	if len(ev.Namespace) > 0 && !rc.subgraphs {
		return nil
	}
	if len(ev.Namespace) == 0 && ev.Payload != nil && (ev.Mode == graph.StreamValues || ev.Mode == graph.StreamUpdates) {
		// A values or updates event of the graph's own run carries its
		// state or update in State or Update, never in Payload: this
		// one is another run's (a graph's whole event), whose state
		// the graph's does not hold. Encoding ev.State would send the
		// graph's zero state, blanking a client's view mid-run.
		return nil
	}
	switch ev.Mode {
	case graph.StreamValues:
		if !rc.modes["values"] && (rc.msgs == nil || len(ev.Namespace) > 0) {
			return nil
		}
		if len(ev.Namespace) > 0 {
			return emit(name("values"), subgraphField(ev.Payload, "State"))
		}
		v, err := a.values(ev.State)
		if err != nil {
			return err
		}
		if rc.msgs != nil {
			meta := func(node string) map[string]any { return tupleMeta(rc, node, ev.Step, "") }
			if err := rc.msgs.values(v, meta, emit); err != nil {
				return err
			}
		}
		if !rc.modes["values"] {
			return nil
		}
		return emit("values", v)
	case graph.StreamUpdates:
		if rc.msgs != nil && len(ev.Namespace) == 0 {
			rc.msgs.ran(ev.Node)
		}
		if !rc.modes["updates"] {
			return nil
		}
		if len(ev.Namespace) > 0 {
			node, upd := subgraphUpdate(ev.Payload)
			return emit(name("updates"), map[string]any{node: upd})
		}
		var zero S
		ev.Update.ApplyTo(&zero)
		full, err := a.values(zero)
		if err != nil {
			return err
		}
		return emit("updates", map[string]json.RawMessage{ev.Node: encodeUpdate(ev.Update.Fields(), full, a.keys)})
	case graph.StreamCustom:
		if !rc.modes["custom"] {
			return nil
		}
		return emit(name("custom"), ev.Payload)
	case graph.StreamMessages:
		c, ok := ev.Chunk()
		if !ok || !(rc.modes["messages-tuple"] || rc.modes["messages"]) {
			return nil
		}
		if c.Kind == model.ChunkDone {
			rc.msgs.done(replyID(rc.runID, ev.Task, c))
			return nil
		}
		msg, ok := messageChunk(rc.runID, ev.Task, c)
		if !ok {
			return nil
		}
		ns := ""
		if len(ev.Namespace) > 0 {
			ns = namespace(rc.runID, ev.Namespace)
		}
		meta := tupleMeta(rc, ev.Node, ev.Step, ns)
		return rc.msgs.chunk(msg, meta, func(mode string, data any) error { return emit(name(mode), data) })
	case graph.StreamInterrupt:
		ins := interruptsJSON(ev.Interrupts)
		if rc.modes["values"] {
			if err := emit("values", map[string]any{"__interrupt__": ins}); err != nil {
				return err
			}
		}
		if rc.modes["updates"] {
			return emit("updates", map[string]any{"__interrupt__": ins})
		}
	}
	return nil
}

// jsonLabels is the checkpoint label listing, as a JSON array, the labels
// that hold a run metadata value other than a string as its JSON text.
const jsonLabels = "__json_labels__"

// MaxCheckpointMetadataBytes bounds the run metadata each checkpoint a
// run saves holds, counted as the bytes of its labels' keys and values
// (a value that is not a string as its JSON text). The thread's metadata
// and the run's may each reach a request body's size, and each
// checkpoint would keep a copy outside Config.MaxThreadBytes: beyond this
// bound the checkpoints hold only run_id, thread_id, graph_id,
// assistant_id and run_name, and the server logs a warning naming the
// run. The run's and the thread's own metadata keep every key.
const MaxCheckpointMetadataBytes = 16 << 10

// runLabels are the keys of the run's metadata its checkpoints keep
// when the whole of it is beyond MaxCheckpointMetadataBytes.
var runLabels = [...]string{"run_id", "thread_id", "graph_id", "assistant_id", "run_name"}

// checkpointLabels gives the run's metadata (the thread's and the run's
// own, with run_id, thread_id, graph_id and assistant_id) as the labels
// of the checkpoints the run saves, as LangGraph puts them in each
// checkpoint's metadata: a string as it is, another JSON value as its
// JSON text, its key listed in jsonLabels so that reads give the value
// back. Keys the checkpoint's own metadata uses (source, step, parents)
// are left out. Labels beyond MaxCheckpointMetadataBytes are cut to
// runLabels (cut reports it), each kept while the total fits.
func checkpointLabels(md map[string]any) (labels map[string]string, cut bool) {
	out := make(map[string]string, len(md)+1)
	size := 0
	var js []string
	for k, v := range md {
		switch k {
		case graph.MetaSource, "step", "parents", jsonLabels:
			continue
		}
		if s, ok := v.(string); ok {
			out[k] = s
			size += len(k) + len(s)
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			continue
		}
		out[k] = string(b)
		size += len(k) + len(b)
		js = append(js, k)
	}
	if size > MaxCheckpointMetadataBytes {
		ids := make(map[string]string, len(runLabels))
		size = 0
		for _, k := range runLabels {
			// run_name that is not a string (the thread's or the
			// run's metadata under that key) is left out with the
			// rest; the server sets the ids as strings.
			if v, ok := md[k].(string); ok && size+len(k)+len(v) <= MaxCheckpointMetadataBytes {
				ids[k] = v
				size += len(k) + len(v)
			}
		}
		return ids, true
	}
	if len(js) > 0 {
		slices.Sort(js)
		b, _ := json.Marshal(js)
		out[jsonLabels] = string(b)
	}
	return out, false
}

// tupleMeta is the metadata of a messages-tuple event of node's step:
// the run's metadata with LangGraph's langgraph_* keys.
func tupleMeta(rc *runCall, node string, step int, ns string) map[string]any {
	meta := make(map[string]any, len(rc.metadata)+8)
	for k, v := range rc.metadata {
		meta[k] = v
	}
	tags := rc.tags
	if tags == nil {
		tags = []string{}
	}
	meta["langgraph_node"] = node
	meta["langgraph_step"] = step
	meta["langgraph_checkpoint_ns"] = ns
	meta["checkpoint_ns"] = ns
	meta["langgraph_triggers"] = []string{}
	meta["langgraph_path"] = []string{"__pregel_pull", node}
	meta["tags"] = tags
	return meta
}

// subgraphField returns a field of a subgraph's event (a graph.Event of
// the subgraph's state type, carried in Payload).
func subgraphField(payload any, field string) any {
	v := reflect.ValueOf(payload)
	if v.Kind() != reflect.Struct {
		return payload
	}
	f := v.FieldByName(field)
	if !f.IsValid() {
		return nil
	}
	return f.Interface()
}

// subgraphUpdate returns a subgraph's update event as its node and the
// fields it writes.
func subgraphUpdate(payload any) (string, any) {
	v := reflect.ValueOf(payload)
	if v.Kind() != reflect.Struct {
		return "", payload
	}
	node := v.FieldByName("Node").String()
	u := v.FieldByName("Update")
	st := v.FieldByName("State")
	if !u.IsValid() || !st.IsValid() {
		return node, nil
	}
	zero := reflect.New(st.Type())
	u.MethodByName("ApplyTo").Call([]reflect.Value{zero})
	fields, _ := u.MethodByName("Fields").Call(nil)[0].Interface().([]string)
	full, err := json.Marshal(zero.Elem().Interface())
	if err != nil {
		return node, nil
	}
	return node, encodeUpdate(fields, full, jsonKeys(st.Type()))
}

// messageChunk gives a model chunk as a LangChain message chunk; the
// chunks of one reply share its id (replyID).
func messageChunk(runID string, t graph.TaskInfo, c model.Chunk) (map[string]any, bool) {
	m := map[string]any{"id": replyID(runID, t, c), "type": "AIMessageChunk", "content": "", "tool_call_chunks": []any{}, "additional_kwargs": map[string]any{}, "response_metadata": map[string]any{}}
	switch c.Kind {
	case model.ChunkText:
		m["content"] = c.Text
	case model.ChunkToolCall:
		if c.ToolCall == nil {
			return nil, false
		}
		m["tool_call_chunks"] = []any{map[string]any{"index": c.ToolCall.Index, "id": nilIfEmpty(c.ToolCall.ID), "name": nilIfEmpty(c.ToolCall.Name), "args": c.ToolCall.Arguments, "type": "tool_call_chunk"}}
	default:
		return nil, false
	}
	return m, true
}

// replyID is the id of the streamed chunk c of a model reply of task t of
// run runID: the id the reply will have in the state (c.MessageID, which
// graph.Generate sets), else one made from the run and the task.
func replyID(runID string, t graph.TaskInfo, c model.Chunk) string {
	if c.MessageID != "" {
		return c.MessageID
	}
	return "run-" + uuid.NewSHA1(uuid.NameSpaceOID, []byte(runID+"|"+t.ID())).String()
}

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

func interruptsJSON(ins []graph.InterruptInfo) []Interrupt {
	out := make([]Interrupt, 0, len(ins))
	for _, in := range ins {
		v := json.RawMessage(in.Payload)
		if len(v) == 0 || !json.Valid(v) {
			v = json.RawMessage("null")
		}
		out = append(out, Interrupt{ID: in.ID, Value: v})
	}
	return out
}

func taskID(checkpointID, node string, i int) string {
	return uuid.NewSHA1(uuid.NameSpaceOID, []byte(fmt.Sprintf("%s|%s|%d", checkpointID, node, i))).String()
}

func (a *adapter[S]) snapshot(threadID string, snap graph.StateSnapshot[S]) (*threadState, error) {
	vals, err := a.values(snap.Values)
	if err != nil {
		return nil, err
	}
	ins := interruptsJSON(snap.Interrupts)
	st := &threadState{Values: vals, Next: append([]string{}, snap.Next...), Tasks: []stateTask{}, Interrupts: ins}
	used := map[int]bool{}
	for i, n := range snap.Next {
		t := stateTask{ID: taskID(snap.CheckpointID, n, i), Name: n, Interrupts: []Interrupt{}, Path: []string{"__pregel_pull", n}}
		for j, in := range snap.Interrupts {
			if in.Node == n && !used[j] {
				t.Interrupts = append(t.Interrupts, ins[j])
				used[j] = true
			}
		}
		st.Tasks = append(st.Tasks, t)
	}
	st.Metadata = map[string]any{"step": snap.Step, "parents": map[string]any{}}
	for k, v := range snap.Metadata {
		st.Metadata[k] = v
	}
	if js, ok := snap.Metadata[jsonLabels]; ok {
		delete(st.Metadata, jsonLabels)
		var keys []string
		_ = json.Unmarshal([]byte(js), &keys)
		for _, k := range keys {
			var v any
			// Numbers as json.Number: a float64 would round an integer
			// beyond 2^53 (12345678901234567 to 12345678901234568).
			if decodeNumbers([]byte(snap.Metadata[k]), &v) == nil {
				st.Metadata[k] = v
			}
		}
	}
	created := snap.CreatedAt.UTC().Format(timeFormat)
	st.CreatedAt = &created
	st.Checkpoint = &checkpointRef{ThreadID: threadID, CheckpointID: snap.CheckpointID, CheckpointMap: map[string]any{}}
	if snap.ParentID != "" {
		st.ParentCheckpoint = &checkpointRef{ThreadID: threadID, CheckpointID: snap.ParentID, CheckpointMap: map[string]any{}}
	}
	return st, nil
}

// latestOf returns the thread's latest snapshot: rc.latest when the
// server read it, else read now (and kept in rc). A thread without a
// checkpoint gives an error that wraps checkpoint.ErrNotFound.
func (a *adapter[S]) latestOf(ctx context.Context, th graph.Thread[S], rc *runCall) (graph.StateSnapshot[S], error) {
	if rc.latestKnown {
		if snap, ok := rc.latest.(graph.StateSnapshot[S]); ok {
			return snap, nil
		}
		if rc.latest == nil {
			return graph.StateSnapshot[S]{}, fmt.Errorf("thread %s: %w", rc.threadID, checkpoint.ErrNotFound)
		}
	}
	snap, err := th.State(ctx)
	if err == nil {
		rc.latest, rc.latestKnown = snap, true
	}
	return snap, err
}

// latest implements runner.
func (a *adapter[S]) latest(ctx context.Context, threadID string) (string, any, error) {
	snap, err := a.g.Thread(threadID).State(ctx)
	if errors.Is(err, checkpoint.ErrNotFound) {
		return "", nil, nil
	}
	if err != nil {
		return "", nil, err
	}
	return snap.CheckpointID, snap, nil
}

func (a *adapter[S]) state(ctx context.Context, threadID, checkpointID string) (*threadState, error) {
	snap, err := a.g.Thread(threadID).StateAt(ctx, checkpointID)
	if errors.Is(err, checkpoint.ErrNotFound) {
		if checkpointID != "" {
			return nil, &requestError{status: 404, msg: fmt.Sprintf("checkpoint %q of thread %s not found", checkpointID, threadID)}
		}
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return a.snapshot(threadID, snap)
}

// historyQuery selects the checkpoints of a thread's history.
type historyQuery struct {
	limit  int    // at most this many, newest first
	before string // only checkpoints older than this one ("": from the latest)
	// checkpointID, when set, selects that checkpoint alone.
	checkpointID string
	// head is the thread's head, when a rollback returned the thread to
	// that earlier checkpoint: without before, the history starts there
	// (with it), not at the rolled-back run's later checkpoints.
	head string
	// metadata keeps the checkpoints whose metadata (as the API shows it:
	// step and the checkpoint's labels) holds every one of these pairs:
	// step a number, the labels strings (postHistory checks it).
	metadata map[string]any
	// saver is the checkpointer the thread's graph is compiled with, read
	// for a step filter.
	saver checkpoint.Saver
	// maxBytes bounds the states' estimated size (threadState.size): the
	// history stops before the state that would pass it, but for the
	// first.
	maxBytes int
	// sizeHint estimates the size of the thread's states before any is
	// read (the thread's latest values, as its record keeps them), to
	// size the first page; zero when unknown.
	sizeHint int
}

// maxHistoryScan bounds the checkpoints one history request filtering on
// step reads.
var maxHistoryScan = 10000 // a variable for the tests

func (a *adapter[S]) history(ctx context.Context, threadID string, q historyQuery) ([]*threadState, bool, error) {
	out := []*threadState{}
	total := 0
	// add appends st, unless it would take the answer past q.maxBytes
	// (the first state is always added): then it reports false, and the
	// history is cut there.
	add := func(st *threadState) bool {
		if total += st.size(); len(out) > 0 && total > q.maxBytes {
			return false
		}
		out = append(out, st)
		return true
	}
	if q.checkpointID != "" {
		st, err := a.state(ctx, threadID, q.checkpointID)
		if err != nil {
			return nil, false, err
		}
		if st != nil && containsAll(st.Metadata, q.metadata) {
			out = append(out, st)
		}
		return out, false, nil
	}
	if q.before == "" && q.head != "" {
		// The thread's current checkpoint is its head: the history is the
		// head's, then that of the checkpoints before it.
		st, err := a.state(ctx, threadID, q.head)
		if err != nil {
			return nil, false, err
		}
		if st != nil && containsAll(st.Metadata, q.metadata) {
			if out = append(out, st); len(out) == q.limit {
				return out, false, nil
			}
			total = st.size()
		}
		q.before = q.head
	}
	// The checkpointer filters on the labels itself; step, which is not a
	// label, is compared here, on the checkpoints' descriptions, before
	// any state is read.
	opts := checkpoint.ListOptions{Before: q.before, Limit: q.limit - len(out)}
	var step any
	for k, v := range q.metadata {
		if k == "step" {
			step = v
			continue
		}
		if opts.Metadata == nil {
			opts.Metadata = map[string]string{}
		}
		opts.Metadata[k], _ = v.(string)
	}
	notFound := func() error {
		return &requestError{status: 404, msg: fmt.Sprintf("before: checkpoint %q of thread %s not found", q.before, threadID)}
	}
	// full reports whether the answer can hold no more state: less than
	// minStateSize, the least a state takes, is left of q.maxBytes.
	full := func() bool { return len(out) > 0 && q.maxBytes-total < minStateSize }
	if step != nil {
		opts.Limit = 0
		scanned := 0
		last := "" // the oldest checkpoint compared
		for cp, err := range checkpoint.All(ctx, q.saver, threadID, opts) {
			if errors.Is(err, checkpoint.ErrNotFound) {
				return nil, false, notFound()
			}
			if err != nil {
				return nil, false, err
			}
			if scanned++; scanned > maxHistoryScan {
				// The matches found are a page: the client pages on
				// before the last of them. With none, it pages on
				// before the oldest checkpoint compared.
				if len(out) > 0 {
					return out, true, nil
				}
				return nil, false, &requestError{status: 422, msg: fmt.Sprintf("metadata.step: %d checkpoints scanned, the most one request reads, and none matched; page on with before %q (the oldest scanned)", maxHistoryScan, last)}
			}
			last = cp.ID
			if !containsAll(map[string]any{"step": cp.Step}, map[string]any{"step": step}) {
				continue
			}
			if full() {
				return out, true, nil // cp matches, and is left for the next page
			}
			st, err := a.state(ctx, threadID, cp.ID)
			if err != nil {
				return nil, false, err
			}
			if st != nil && !add(st) {
				return out, true, nil
			}
			if len(out) == q.limit {
				break
			}
		}
		return out, false, nil
	}
	// Pages sized to what is left of q.maxBytes, as estimated from the
	// states read so far (before any is read, from q.sizeHint, or 10), so
	// that a page of large states is not read whole only to be cut. A
	// page reads one state more than are estimated to fit, to find where
	// the answer stops: the checkpointer keeps no sizes that would tell
	// whether a state fits before it is read; but once the answer is
	// full, whether more follow is read from the checkpoints'
	// descriptions, without reading a state.
	for {
		if full() {
			cps, err := q.saver.List(ctx, threadID, checkpoint.ListOptions{Before: opts.Before, Limit: 1, Metadata: opts.Metadata})
			if err != nil && !errors.Is(err, checkpoint.ErrNotFound) {
				return nil, false, err
			}
			// A checkpoint deleted since it was read: the client paging
			// on is told so.
			return out, len(cps) > 0 || err != nil, nil
		}
		remaining := q.limit - len(out)
		page := min(remaining, 10)
		switch {
		case len(out) > 0:
			avg := max(total/len(out), 1)
			page = min(remaining, max(1, (q.maxBytes-total)/avg+1))
		case q.sizeHint > 0:
			page = min(page, max(1, q.maxBytes/q.sizeHint+1))
		}
		opts.Limit = page
		n := 0
		for snap, err := range a.g.Thread(threadID).History(ctx, opts) {
			if errors.Is(err, checkpoint.ErrNotFound) {
				return nil, false, notFound()
			}
			if err != nil {
				return nil, false, err
			}
			st, err := a.snapshot(threadID, snap)
			if err != nil {
				return nil, false, err
			}
			if !add(st) {
				return out, true, nil
			}
			opts.Before = snap.CheckpointID
			if n++; n == page || full() {
				break
			}
		}
		if len(out) == q.limit || n < page && !full() {
			return out, false, nil
		}
	}
}

// updateOf decodes values, a JSON object of state fields (the values of
// a state update, or a run's command.update: at names the field in
// errors), into an update of the fields it names.
func (a *adapter[S]) updateOf(at string, values json.RawMessage) (graph.Update[S], error) {
	var u graph.Update[S]
	if len(values) == 0 || string(values) == "null" {
		return u, nil
	}
	var keys map[string]json.RawMessage
	if err := json.Unmarshal(values, &keys); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return u, &requestError{status: 422, msg: fmt.Sprintf("%s: must be a JSON object of state fields, not a JSON %s; give {\"<field>\": <value>, ...}", at, te.Value)}
		}
		return u, &requestError{status: 422, msg: at + ": must be a JSON object of state fields: " + err.Error()}
	}
	s, err := a.codec.Input(values)
	if e := a.keyError(at, err); e != nil {
		return u, e
	}
	if err != nil {
		return u, &requestError{status: 422, msg: fmt.Sprintf("%s: do not decode into the state of graph %q: %v", at, a.id, err)}
	}
	var fields []string
	for goName, key := range a.keys {
		for k := range keys {
			if strings.EqualFold(k, key) {
				fields = append(fields, goName)
			}
		}
	}
	if len(fields) < len(keys) {
		var known []string
		for _, k := range a.keys {
			known = append(known, k)
		}
		return u, &requestError{status: 422, msg: fmt.Sprintf("%s: names a key that is not a field of the state of graph %q (fields: %s)", at, a.id, strings.Join(known, ", "))}
	}
	u, err = a.g.UpdateOf(s, fields...)
	if err != nil {
		return u, &requestError{status: 422, msg: at + ": " + err.Error()}
	}
	return u, nil
}

// command decodes a run's command.update and command.goto (LangGraph's
// Command given as a run's input) into an update of the graph's state
// and its routing; ok is false when the command has neither. update is
// an object of state fields or a list of [field, value] pairs; goto is a
// node name, a Send {"node", "input"} to a task node of the graph, or a
// list of them. A goto on a graph registered without WithGoto, to a node
// WithGoto does not list, or of more items than its MaxSends is refused
// with 422, as is a node the graph does not have (naming the graph's
// nodes).
func (a *adapter[S]) command(update, goTo json.RawMessage) (u graph.Update[S], ok bool, err error) {
	if isNull(update) && isNull(goTo) {
		return u, false, nil
	}
	if !isNull(update) {
		obj, err := pairsObject(update)
		if err != nil {
			return u, false, err
		}
		if u, err = a.updateOf("command.update", obj); err != nil {
			return u, false, err
		}
	}
	if isNull(goTo) {
		return u, true, nil
	}
	p := a.gotoPolicy
	if p == nil {
		return u, false, errorf(422, "command.goto: graph %q takes no goto; the server registers it with server.WithGoto listing the nodes clients may goto to allow it", a.id)
	}
	var items []json.RawMessage
	list := bytes.HasPrefix(bytes.TrimSpace(goTo), []byte("["))
	if !list {
		items = []json.RawMessage{goTo}
	} else {
		// Into a nil slice: decoding into goTo's own element would
		// write over goTo (a RawMessage decodes into its old bytes).
		if err := json.Unmarshal(goTo, &items); err != nil {
			return u, false, errorf(422, "command.goto: must be a node name, a Send {\"node\": ..., \"input\": ...} or a list of them: %v", err)
		}
	}
	if len(items) > p.MaxSends {
		return u, false, errorf(422, "command.goto: has %d items, more than the %d graph %q takes (WithGoto's MaxSends); give at most %d", len(items), p.MaxSends, a.id, p.MaxSends)
	}
	nodes := a.g.Nodes()
	unknown := func(at, node string) error {
		return errorf(422, "%s: graph %q has no node %q; give one of %s, or %q", at, a.id, node, strings.Join(nodes, ", "), graph.END)
	}
	unlisted := func(at, node string) error {
		return errorf(422, "%s: node %q of graph %q is not one clients may goto; give one of %s (WithGoto)", at, node, a.id, strings.Join(p.Nodes, ", "))
	}
	for i, raw := range items {
		at := "command.goto"
		if list {
			at = fmt.Sprintf("command.goto[%d]", i)
		}
		var name string
		if json.Unmarshal(raw, &name) == nil {
			if name != graph.END && !slices.Contains(nodes, name) {
				return u, false, unknown(at, name)
			}
			if !slices.Contains(p.Nodes, name) {
				return u, false, unlisted(at, name)
			}
			if _, err := a.g.SendTo(name, func(any) error { return errTaskNode }); errors.Is(err, errTaskNode) {
				return u, false, errorf(422, "%s: node %q is a task node, which takes its input from a Send; give {\"node\": %q, \"input\": <its input>}", at, name, name)
			}
			u = u.Goto(name)
			continue
		}
		var send struct {
			Node  *string         `json:"node"`
			Input json.RawMessage `json:"input"`
		}
		if err := json.Unmarshal(raw, &send); err != nil || send.Node == nil {
			return u, false, errorf(422, "%s: must be a node name or a Send {\"node\": <task node>, \"input\": <its input>}", at)
		}
		if !slices.Contains(nodes, *send.Node) {
			return u, false, unknown(at+".node", *send.Node)
		}
		if !slices.Contains(p.Nodes, *send.Node) {
			return u, false, unlisted(at+".node", *send.Node)
		}
		in := send.Input
		if len(in) == 0 {
			in = json.RawMessage("null")
		}
		sd, err := a.g.SendTo(*send.Node, func(p any) error { return json.Unmarshal(in, p) })
		if err != nil {
			return u, false, errorf(422, "%s: %v", at, err)
		}
		u = u.Send(sd)
	}
	return u, true, nil
}

// errTaskNode is what command's probe of a goto target returns from the
// decode SendTo calls only for a task node.
var errTaskNode = errors.New("task node")

// checkCommand implements runner.
func (a *adapter[S]) checkCommand(update, goTo json.RawMessage) error {
	_, _, err := a.command(update, goTo)
	return err
}

// pairsObject gives command.update as a JSON object: as it is when it is
// one, and made of its pairs when it is a list of [field, value] pairs
// (a field given twice is refused: a JSON object has each key once).
func pairsObject(raw json.RawMessage) (json.RawMessage, error) {
	if !bytes.HasPrefix(bytes.TrimSpace(raw), []byte("[")) {
		return raw, nil
	}
	var pairs []json.RawMessage
	if err := json.Unmarshal(raw, &pairs); err != nil {
		return nil, errorf(422, "command.update: must be an object of state fields or a list of [field, value] pairs: %v", err)
	}
	obj := make(map[string]json.RawMessage, len(pairs))
	for i, p := range pairs {
		var kv []json.RawMessage
		var key string
		if json.Unmarshal(p, &kv) != nil || len(kv) != 2 || json.Unmarshal(kv[0], &key) != nil {
			return nil, errorf(422, "command.update[%d]: must be a [field, value] pair", i)
		}
		if _, dup := obj[key]; dup {
			return nil, errorf(422, "command.update[%d]: field %q is given twice; give each field once", i, key)
		}
		obj[key] = kv[1]
	}
	b, err := json.Marshal(obj)
	return b, err
}

func (a *adapter[S]) update(ctx context.Context, threadID string, values json.RawMessage, asNode, from string) (string, error) {
	u, err := a.updateOf("values", values)
	if err != nil {
		return "", err
	}
	var opts []graph.UpdateOption
	if asNode != "" {
		if !slices.Contains(a.g.Nodes(), asNode) {
			return "", &requestError{status: 422, msg: fmt.Sprintf("as_node: graph %q has no node %q (nodes: %s)", a.id, asNode, strings.Join(a.g.Nodes(), ", "))}
		}
		opts = append(opts, graph.AsNode(asNode))
	}
	if from != "" {
		opts = append(opts, graph.UpdateFrom(from))
	}
	id, err := a.g.Thread(threadID).Update(ctx, u, opts...)
	if from != "" && errors.Is(err, checkpoint.ErrNotFound) {
		return "", &requestError{status: 404, msg: fmt.Sprintf("checkpoint_id: checkpoint %q of thread %s not found", from, threadID)}
	}
	return id, err
}
