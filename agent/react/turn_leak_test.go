package react

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"unsafe"
	"weak"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/internal/toolcall"
	"github.com/agentgraph/agentgraph/operator"
)

// bigTool is a tool that writes its results into its caller's storage
// (toolcall.Into) and whose results do not fit a room: kind "image" is a
// binary part, "text" a text longer than a room and "structured" a short
// text written into the room with Structured JSON outside it. It keeps a
// weak pointer to the memory of its last result outside the room.
type bigTool struct {
	kind string
	size int
	last weak.Pointer[byte]
}

func (t *bigTool) Definition() model.ToolDef {
	return model.ToolDef{Name: "big", Description: "Returns a large result.", Parameters: json.RawMessage(`{"type":"object"}`)}
}

func (t *bigTool) Call(ctx context.Context, args json.RawMessage) (*model.ToolResult, error) {
	var res model.ToolResult
	err := t.CallInto(ctx, args, &res, nil)
	return &res, err
}

func (t *bigTool) CallInto(_ context.Context, _ json.RawMessage, res *model.ToolResult, room *toolcall.Room) error {
	switch t.kind {
	case "image":
		data := make([]byte, t.size)
		t.last = weak.Make(&data[0])
		*res = model.ToolResult{Content: []model.Part{model.BinaryPart("image/png", data)}}
	case "text":
		text := strings.Repeat("x", t.size)
		t.last = weak.Make(unsafe.StringData(text))
		*res = model.ToolResult{Content: []model.Part{model.TextPart(text)}}
	case "structured":
		raw := json.RawMessage(`"` + strings.Repeat("y", t.size-2) + `"`)
		t.last = weak.Make(&raw[0])
		*res = model.ToolResult{Content: []model.Part{model.TextPart("ok")}, Structured: raw}
		if room != nil {
			n := copy(room.Text[:], "ok")
			room.Parts[0] = model.TextPart(unsafe.String(&room.Text[0], n))
			res.Content = room.Parts[:]
		}
	}
	return nil
}

// callOnly is a tool that does not write its results into its caller's
// storage: only Call is promoted.
type callOnly struct{ operator.Tool }

// A turn's allocation keeps no result that does not live in its room: a
// large result removed from the conversation can be collected while the
// turn's reply, which holds the turn by its id, is still held.
func TestTurnLetsGoOfLargeResult(t *testing.T) {
	for _, tc := range []struct {
		kind string
		size int
		// into says whether the tool is a toolcall.Into.
		into bool
	}{
		{"image", 10 << 20, true},
		{"text", 4 << 10, true},
		{"structured", 4 << 10, true},
		{"image", 10 << 20, false},
	} {
		t.Run(fmt.Sprintf("%s/into=%v", tc.kind, tc.into), func(t *testing.T) {
			tool := &bigTool{kind: tc.kind, size: tc.size}
			var tools []operator.Tool
			if tc.into {
				tools = []operator.Tool{tool}
			} else {
				tools = []operator.Tool{callOnly{tool}}
			}
			asked := &model.Response{Message: model.Message{Role: model.RoleAssistant, Parts: []model.Part{
				{Kind: model.PartToolCall, ToolCall: &model.ToolCall{ID: "c1", Name: "big", Arguments: json.RawMessage(`{}`)}},
			}}, FinishReason: model.FinishToolCalls}
			done := &model.Response{Message: model.Assistant("done"), FinishReason: model.FinishStop}
			g, err := New(Config{Model: fixedModel{asked, done}, Tools: tools})
			if err != nil {
				t.Fatal(err)
			}
			out, err := g.Invoke(t.Context(), Input("look"))
			if err != nil {
				t.Fatal(err)
			}
			if len(out.Messages) != 4 || out.Messages[2].Role != model.RoleTool {
				t.Fatalf("messages %+v", out.Messages)
			}
			res := out.Messages[2].Parts[0].ToolResult
			if text, data := resultSize(res); text+data < tc.size || tc.kind == "structured" && res.Text() != "ok" {
				t.Fatalf("result of %d bytes of text and %d of data, text %.10q", text, data, res.Text())
			}
			// The result is replaced in the conversation; the reply
			// stays, and with it its turn.
			conv := out.Messages.Merge(model.Messages{model.Remove(out.Messages[2].ID)})
			out = State{}
			res = nil
			if len(conv) != 3 || conv[1].Role != model.RoleAssistant {
				t.Fatalf("conversation %+v", conv)
			}
			// The reply's id is the start of its turn's ids.
			tn := (*turn)(unsafe.Add(unsafe.Pointer(unsafe.StringData(conv[1].ID)), -int(unsafe.Offsetof(turn{}.ids))))
			if tn.msgs[0].ID != conv[1].ID {
				t.Fatalf("the reply's id is not held by its turn")
			}
			tn = nil
			for i := 0; tool.last.Value() != nil; i++ {
				if i == 20 {
					t.Fatalf("the %s result is still reachable after %d collections while its turn's reply is held", tc.kind, i)
				}
				runtime.GC()
			}
			runtime.KeepAlive(conv)
		})
	}
}
