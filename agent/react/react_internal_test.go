package react

import (
	"context"
	"encoding/json"
	"iter"
	"reflect"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/operator"
)

// TestNewIDs checks the batched ids against model.NewID's form and that
// they differ, for batches held in the turn and larger ones.
func TestNewIDs(t *testing.T) {
	form := regexp.MustCompile(`^m-[0-9a-f]{16}$`)
	for _, n := range []int{1, 3, 4, 9} {
		ids := new(turn).newIDs(n)
		if len(ids) != n*idLen {
			t.Fatalf("newIDs(%d) has length %d, want %d", n, len(ids), n*idLen)
		}
		seen := map[string]bool{}
		for i := range n {
			id := ids[i*idLen : (i+1)*idLen]
			if !form.MatchString(id) {
				t.Errorf("newIDs(%d)[%d] = %q, not of the form m-<16 hex digits>", n, i, id)
			}
			if seen[id] {
				t.Errorf("newIDs(%d) repeats %q", n, id)
			}
			seen[id] = true
		}
	}
}

// A turn's ids are written in the turn itself when they fit: up to
// 1+inlineCalls of them allocate nothing, more allocate once.
func TestNewIDsInTurn(t *testing.T) {
	tn := new(turn)
	for n, want := range map[int]float64{1: 0, 1 + inlineCalls: 0, 2 + inlineCalls: 1} {
		if got := testing.AllocsPerRun(100, func() { _ = tn.newIDs(n) }); got != want {
			t.Errorf("newIDs(%d) allocates %v times, want %v", n, got, want)
		}
	}
	if ids := tn.newIDs(0); ids != "" {
		t.Errorf("newIDs(0) = %q, want \"\"", ids)
	}
}

// Input holds the message, its part and its id's text in one allocation,
// and each input's id is a fresh one of model.NewID's form.
func TestInputAllocatesOnce(t *testing.T) {
	var s State
	if n := testing.AllocsPerRun(100, func() { s = Input("compute please") }); n != 1 {
		t.Errorf("Input allocates %v times, want 1", n)
	}
	form := regexp.MustCompile(`^m-[0-9a-f]{16}$`)
	a, b := Input("a"), Input("b")
	for _, in := range []State{a, b, s} {
		if len(in.Messages) != 1 || !form.MatchString(in.Messages[0].ID) || in.Messages[0].Role != model.RoleUser {
			t.Fatalf("Input gave %+v, want one user message with an id of the form m-<16 hex digits>", in.Messages)
		}
	}
	if a.Messages[0].ID == b.Messages[0].ID || a.Messages[0].Text() != "a" || b.Messages[0].Text() != "b" {
		t.Errorf("two inputs: %+v and %+v", a.Messages[0], b.Messages[0])
	}
}

// replyModel answers every call with a text reply that has no id, so the
// agent gives it one from its turn.
type replyModel struct{}

func (replyModel) Generate(context.Context, *model.Request) (*model.Response, error) {
	return &model.Response{Message: model.Message{Role: model.RoleAssistant, Parts: []model.Part{{Kind: model.PartText, Text: "hi"}}}, FinishReason: model.FinishStop}, nil
}

func (m replyModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		resp, err := m.Generate(ctx, req)
		yield(model.Chunk{Kind: model.ChunkDone, Response: resp}, err)
	}
}

// A reply's id is text held by its turn, so the reply keeps the turn
// reachable; the turn must not keep the request, a copy of the whole
// conversation with the instructions, or a long conversation would hold
// one copy of itself per reply.
func TestTurnLetsGoOfRequest(t *testing.T) {
	g, err := New(Config{Model: replyModel{}, Instructions: "be brief"})
	if err != nil {
		t.Fatal(err)
	}
	out, err := g.Invoke(t.Context(), Input("hello"))
	if err != nil {
		t.Fatal(err)
	}
	reply, ok := out.Messages.Last()
	if !ok || reply.Role != model.RoleAssistant || len(reply.ID) != idLen {
		t.Fatalf("last message %+v, want the assistant's reply with an id of the turn", reply)
	}
	// The id's text is the reply's allocation's id field (a turn
	// without tool calls).
	tn := (*replyMessage)(unsafe.Add(unsafe.Pointer(unsafe.StringData(reply.ID)), -int(unsafe.Offsetof(replyMessage{}.id))))
	if tn.msgs[0].ID != reply.ID {
		t.Fatalf("the reply's id is not held by its turn (turn's message id %q, reply's %q)", tn.msgs[0].ID, reply.ID)
	}
	for _, typ := range []reflect.Type{reflect.TypeFor[turn](), reflect.TypeFor[replyMessage](), reflect.TypeFor[roomyTurn1](),
		reflect.TypeFor[roomyTurn2]()} {
		if holdsRequest(typ) {
			t.Errorf("a %s holds its request", typ)
		}
	}
}

// holdsRequest reports whether a value of type typ holds a model.Request
// or a pointer to one, in its own fields or those of the structs and
// arrays it holds.
func holdsRequest(typ reflect.Type) bool {
	switch typ.Kind() {
	case reflect.Pointer:
		return typ.Elem() == reflect.TypeFor[model.Request]()
	case reflect.Array:
		return holdsRequest(typ.Elem())
	case reflect.Struct:
		if typ == reflect.TypeFor[model.Request]() {
			return true
		}
		for i := range typ.NumField() {
			if holdsRequest(typ.Field(i).Type) {
				return true
			}
		}
	}
	return false
}

// clipResult keeps parts in order while they fit, cuts text at a UTF-8
// boundary, leaves out binary parts and Structured JSON that do not fit,
// and gives Structured as text when no text is kept. Text and binary data
// have their own bounds.
func TestClipResult(t *testing.T) {
	res := model.ToolResult{Content: []model.Part{model.TextPart("ab"), model.TextPart("cé€f"), model.BinaryPart("image/png", make([]byte, 4))}}
	clipResult(&res, 5, 100)
	if len(res.Content) != 4 || res.Content[0].Text != "ab" || res.Content[1].Text != "cé" || len(res.Content[2].Data) != 4 {
		t.Fatalf("cut text: %+v", res.Content)
	}
	if note := res.Content[3].Text; !strings.Contains(note, "its text was 9 bytes") || !strings.Contains(note, "4 bytes were left out") || strings.Contains(note, "binary") {
		t.Fatalf("note: %q", note)
	}

	res = model.ToolResult{Content: []model.Part{model.BinaryPart("image/png", make([]byte, 40))}, Structured: json.RawMessage(`{"a":"bcdefgh"}`)}
	clipResult(&res, 8, 100)
	if len(res.Content) != 3 || len(res.Content[0].Data) != 40 || res.Content[1].Text != `{"a":"bc` || res.Structured != nil {
		t.Fatalf("structured only: %+v", res)
	}

	// Binary parts over their bound are left out, and the text after
	// them kept.
	res = model.ToolResult{Content: []model.Part{model.BinaryPart("image/png", make([]byte, 30)), model.BinaryPart("image/png", make([]byte, 30)),
		model.TextPart("caption"), model.BinaryPart("image/png", make([]byte, 5))}}
	clipResult(&res, 100, 50)
	if len(res.Content) != 3 || len(res.Content[0].Data) != 30 || res.Content[1].Text != "caption" {
		t.Fatalf("binary cut: %+v", res.Content)
	}
	if note := res.Content[2].Text; !strings.Contains(note, "2 binary parts of 35 bytes were left out") || !strings.Contains(note, "MaxResultBinaryBytes") || strings.Contains(note, "its text") {
		t.Fatalf("note: %q", note)
	}
}

// A call of an operator.FuncTool whose result is an integer allocates the
// tool message only: the tool writes its result, and the result's text,
// into the message (toolcall.Into), which then holds what it reads.
func TestFuncToolResultInToolMessage(t *testing.T) {
	type args struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	add := operator.MustFuncTool("add", "Add two integers.", func(_ context.Context, in args) (int, error) { return in.A + in.B, nil })
	a := &agent{names: []string{"add"}, list: []operator.Tool{add}, maxResult: DefaultMaxResultBytes, maxBinary: DefaultMaxResultBinaryBytes}
	c := &call{Call: model.ToolCall{ID: "call_1", Name: "add", Arguments: json.RawMessage(`{"a":2,"b":3}`)}, ResultID: "m-0000000000000001"}
	var m *toolMessage
	var err error
	if n := testing.AllocsPerRun(100, func() { m, err = a.toolMessage(t.Context(), c) }); n != 1 {
		t.Errorf("a FuncTool call allocates %v times, want 1 (its tool message)", n)
	}
	if err != nil {
		t.Fatal(err)
	}
	res := m.msgs[0].Parts[0].ToolResult
	if res.CallID != "call_1" || res.Name != "add" || res.Text() != "5" || string(res.Structured) != "5" || res.IsError {
		t.Fatalf("result %+v, want 5 for call_1 of add", res)
	}
	// The result's JSON is its holder's to modify: the text stays.
	res.Structured[0] = '6'
	if res.Text() != "5" {
		t.Fatalf("the text became %q once Structured was modified", res.Text())
	}
}

// A call of an operator.FuncTool whose result cannot use a room (a
// string, a struct, a tool result) gets a tool message without one: the
// room would be kept, unused, as long as the conversation.
func TestFuncToolMessageWithoutRoom(t *testing.T) {
	type args struct {
		N int `json:"n"`
	}
	tools := []operator.Tool{
		operator.MustFuncTool("say", "Says ok.", func(context.Context, args) (string, error) { return "ok", nil }),
		operator.MustFuncTool("echo", "Echoes.", func(_ context.Context, in args) (args, error) { return in, nil }),
		operator.MustFuncTool("result", "A result.", func(context.Context, args) (*model.ToolResult, error) {
			return &model.ToolResult{Content: []model.Part{model.TextPart("r")}}, nil
		}),
		operator.MustFuncTool("add", "Adds one.", func(_ context.Context, in args) (int, error) { return in.N + 1, nil }),
	}
	a := &agent{names: []string{"say", "echo", "result", "add"}, list: tools, maxResult: DefaultMaxResultBytes, maxBinary: DefaultMaxResultBinaryBytes}
	for _, name := range a.names {
		c := &call{Call: model.ToolCall{ID: "call_1", Name: name, Arguments: json.RawMessage(`{"n":2}`)}, ResultID: "m-0000000000000001"}
		if _, _, room := a.newToolMessage(c); (room != nil) != (name == "add") {
			t.Errorf("tool %s: room %v, want one for the integer result only", name, room != nil)
		}
	}
	// The string result's message: the message, the result, its part and
	// the string boxed for the result's making.
	c := &call{Call: model.ToolCall{ID: "call_1", Name: "say", Arguments: json.RawMessage(`{"n":2}`)}, ResultID: "m-0000000000000001"}
	var m *toolMessage
	var err error
	if n := testing.AllocsPerRun(100, func() { m, err = a.toolMessage(t.Context(), c) }); n != 4 {
		t.Errorf("a string FuncTool call allocates %v times, want 4", n)
	}
	if err != nil || m.res.Text() != "ok" || m.res.CallID != "call_1" {
		t.Fatalf("result %+v, %v; want ok for call_1", m.res, err)
	}
	// The bytes of one call: none for a room (Sizeof(toolcall.Room)).
	size := unsafe.Sizeof(toolMessage{}) + unsafe.Sizeof(model.ToolResult{}) + unsafe.Sizeof(model.Part{})
	room := unsafe.Sizeof(roomyMessage{}) - unsafe.Sizeof(toolMessage{})
	got := allocBytes(func() { m, err = a.toolMessage(t.Context(), c) })
	t.Logf("%d bytes; message, result, part: %d; room: %d", got, size, room)
	if got >= size+room {
		t.Errorf("a string FuncTool call allocates %d bytes, want less than %d (%d and a room of %d)", got, size+room, size, room)
	}
}

// allocBytes returns the bytes f allocates, the least of a few runs (a
// run that a background allocation adds to counts more).
func allocBytes(f func()) uintptr {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	f()
	least := ^uint64(0)
	var before, after runtime.MemStats
	for range 5 {
		runtime.ReadMemStats(&before)
		f()
		runtime.ReadMemStats(&after)
		least = min(least, after.TotalAlloc-before.TotalAlloc)
	}
	return uintptr(least)
}

// fixedModel answers from a fixed list of responses by its turn, the
// number of assistant messages in the request.
type fixedModel []*model.Response

func (m fixedModel) Generate(_ context.Context, req *model.Request) (*model.Response, error) {
	n := 0
	for i := range req.Messages {
		if req.Messages[i].Role == model.RoleAssistant {
			n++
		}
	}
	return m[min(n, len(m)-1)], nil
}

func (m fixedModel) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return func(yield func(model.Chunk, error) bool) {
		resp, err := m.Generate(ctx, req)
		yield(model.Chunk{Kind: model.ChunkDone, Response: resp}, err)
	}
}

// The tool messages of a turn of one or two calls are part of the turn's
// allocation, with room for a small result, when every call's tool writes
// its result into its caller's storage; the other turns allocate them
// apart.
func TestTurnHoldsToolMessages(t *testing.T) {
	type args struct {
		A int `json:"a"`
		B int `json:"b"`
	}
	add := operator.MustFuncTool("add", "Add two integers.", func(_ context.Context, in args) (int, error) { return in.A + in.B, nil })
	say := operator.MustFuncTool("say", "Says ok.", func(context.Context, args) (string, error) { return "ok", nil })
	toolCall := func(id, name string) model.Part {
		return model.Part{Kind: model.PartToolCall, ToolCall: &model.ToolCall{ID: id, Name: name, Arguments: json.RawMessage(`{"a":2,"b":3}`)}}
	}
	calls := func(parts ...model.Part) *model.Response {
		return &model.Response{Message: model.Message{Role: model.RoleAssistant, Parts: parts}, FinishReason: model.FinishToolCalls}
	}
	done := &model.Response{Message: model.Assistant("done"), FinishReason: model.FinishStop}
	for _, tc := range []struct {
		name  string
		parts []model.Part
		// in says whether the results are in the turn's allocation,
		// and turn whether the reply's id is (the turn has room for
		// the ids of its calls' results).
		in, turn bool
		want     []string
	}{
		{"two roomy", []model.Part{toolCall("c1", "add"), toolCall("c2", "add")}, true, true, []string{"5", "5"}},
		{"one roomy", []model.Part{toolCall("c1", "add")}, true, true, []string{"5"}},
		{"two plain", []model.Part{toolCall("c1", "add"), toolCall("c2", "say")}, false, true, []string{"5", "ok"}},
		{"one plain", []model.Part{toolCall("c1", "say")}, false, true, []string{"ok"}},
		{"unknown tool", []model.Part{toolCall("c1", "nope")}, false, true, nil},
		{"three", []model.Part{toolCall("c1", "add"), toolCall("c2", "add"), toolCall("c3", "add")}, false, false, []string{"5", "5", "5"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g, err := New(Config{Model: fixedModel{calls(tc.parts...), done}, Tools: []operator.Tool{add, say}})
			if err != nil {
				t.Fatal(err)
			}
			out, err := g.Invoke(t.Context(), Input("compute"))
			if err != nil {
				t.Fatal(err)
			}
			n := len(tc.parts)
			if len(out.Messages) != n+3 || out.Reply() != "done" {
				t.Fatalf("%d messages, reply %q", len(out.Messages), out.Reply())
			}
			// The reply's id is the start of its turn's ids, unless the
			// turn has more calls than room for their ids.
			var tn *turn
			if asked := out.Messages[1]; tc.turn {
				tn = (*turn)(unsafe.Add(unsafe.Pointer(unsafe.StringData(asked.ID)), -int(unsafe.Offsetof(turn{}.ids))))
				if tn.msgs[0].ID != asked.ID {
					t.Fatalf("the reply's id is not held by its turn")
				}
			}
			for i := range n {
				part := &out.Messages[2+i].Parts[0]
				res := part.ToolResult
				if tc.want != nil && (res.Text() != tc.want[i] || res.IsError) || tc.want == nil && !res.IsError {
					t.Fatalf("result %d: %+v", i, res)
				}
				var slot *model.Part
				switch {
				case tc.in && n == 1:
					slot = &(*roomyTurn1)(unsafe.Pointer(tn)).results[i].parts[0]
				case tc.in:
					slot = &(*roomyTurn2)(unsafe.Pointer(tn)).results[i].parts[0]
				}
				if in := slot != nil && part == slot; in != tc.in {
					t.Errorf("result %d: in its turn's allocation %v, want %v", i, in, tc.in)
				}
			}
		})
	}
}

// The storage a turn holds for a call's tool message is taken by the
// call's first run: a run again allocates its own, and the first
// message stays as it was.
func TestToolMessageStorageTakenOnce(t *testing.T) {
	type args struct {
		A int `json:"a"`
	}
	add := operator.MustFuncTool("add", "Adds one.", func(_ context.Context, in args) (int, error) { return in.A + 1, nil })
	a := &agent{names: []string{"add"}, list: []operator.Tool{add}, maxResult: DefaultMaxResultBytes, maxBinary: DefaultMaxResultBinaryBytes}
	tn := toolTurn(1)
	c := &tn.calls[0]
	c.Call = model.ToolCall{ID: "call_1", Name: "add", Arguments: json.RawMessage(`{"a":1}`)}
	first, err := a.toolMessage(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	if first != &(*roomyTurn1)(unsafe.Pointer(tn)).results[0].toolMessage || c.msg != nil || c.room != nil {
		t.Fatalf("the first run did not take the turn's storage")
	}
	c.Call.Arguments = json.RawMessage(`{"a":5}`)
	second, err := a.toolMessage(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	if second == first || first.res.Text() != "2" || second.res.Text() != "6" {
		t.Fatalf("first %q, second %q (same storage %v)", first.res.Text(), second.res.Text(), second == first)
	}
}

// hasDangling tells whether a call of the last assistant message has no
// result in the tool messages after it, whatever order the results are
// in, as the plain definition does.
func TestHasDangling(t *testing.T) {
	callPart := func(id string) model.Part {
		return model.Part{Kind: model.PartToolCall, ToolCall: &model.ToolCall{ID: id, Name: "f"}}
	}
	asked := func(ids ...string) model.Message {
		m := model.Message{Role: model.RoleAssistant}
		for _, id := range ids {
			m.Parts = append(m.Parts, callPart(id))
		}
		return m
	}
	results := func(ids ...string) model.Message {
		var rs []model.ToolResult
		for _, id := range ids {
			rs = append(rs, model.ToolResult{CallID: id})
		}
		return model.ToolResults(rs...)
	}
	// plain is the definition: some call's id is the CallID of no result
	// of the tool messages that directly follow the assistant message.
	plain := func(msgs model.Messages) bool {
		i := len(msgs) - 1
		for i >= 0 && msgs[i].Role != model.RoleAssistant {
			i--
		}
		if i < 0 {
			return false
		}
		got := map[string]bool{}
		for _, m := range msgs[i+1:] {
			if m.Role != model.RoleTool {
				break
			}
			for _, p := range m.Parts {
				if p.Kind == model.PartToolResult && p.ToolResult != nil {
					got[p.ToolResult.CallID] = true
				}
			}
		}
		for _, c := range msgs[i].ToolCalls() {
			if !got[c.ID] {
				return true
			}
		}
		return false
	}
	withText := asked("c1", "c2")
	withText.Parts = append([]model.Part{model.TextPart("let me see"), {Kind: model.PartToolCall}}, withText.Parts...)
	user := model.User("hi")
	for i, msgs := range []model.Messages{
		{}, {user}, {user, asked()}, {user, asked("c1")}, {user, asked("c1"), results("c1")},
		{user, asked("c1", "c2"), results("c1"), results("c2")}, {user, asked("c1", "c2"), results("c2"), results("c1")},
		{user, asked("c1", "c2"), results("c1", "c2")}, {user, asked("c1", "c2"), results("c2", "c1")},
		{user, asked("c1", "c2"), results("c1")}, {user, asked("c1", "c2"), results("c2")},
		{user, asked("c1", "c2"), results("c1"), user, results("c2")}, {user, asked("c1"), user, results("c1")},
		{user, asked("c1", "c2", "c3"), results("c3", "c1"), results("c2")}, {user, asked("c1", "c1"), results("c1")},
		{user, asked("c1", "c2"), results("c1", "c1")}, {user, withText, results("c1", "c2")}, {user, withText, results("c2")},
		{user, asked("c1"), results("c1"), asked("c2"), results("c1")}, {user, asked("c1"), results("c1"), user},
		{user, asked("c1"), results()}, {user, asked("c1"), results(), results("c1")},
	} {
		if got, want := hasDangling(msgs), plain(msgs); got != want {
			t.Errorf("case %d: hasDangling %v, want %v", i, got, want)
		}
	}
}
