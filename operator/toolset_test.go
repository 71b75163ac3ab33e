package operator_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/operator"
)

type echoArgs struct {
	Text string `json:"text"`
}

func echoTool(name string) operator.Tool {
	return operator.MustFuncTool(name, "Echoes its text", func(_ context.Context, in echoArgs) (string, error) {
		return name + ":" + in.Text, nil
	})
}

func TestToolsetDefinitionsInOrder(t *testing.T) {
	s, err := operator.NewToolset(echoTool("zeta"), echoTool("alpha"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Add(echoTool("mid")); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range s.Definitions() {
		names = append(names, d.Name)
		if d.Description != "Echoes its text" || !json.Valid(d.Parameters) {
			t.Errorf("definition %+v", d)
		}
	}
	if want := []string{"zeta", "alpha", "mid"}; !slices.Equal(names, want) || !slices.Equal(s.Names(), want) {
		t.Errorf("definitions %v, names %v; want %v", names, s.Names(), want)
	}
	if tools := s.Tools(); len(tools) != 3 || tools[2].Definition().Name != "mid" {
		t.Errorf("Tools = %v", tools)
	}
	if s.Len() != 3 {
		t.Errorf("Len = %d", s.Len())
	}
	defs := s.Definitions()
	defs[0].Name = "changed"
	if s.Definitions()[0].Name != "zeta" {
		t.Error("Definitions shares its slice with the toolset")
	}
	if tl, ok := s.Lookup("alpha"); !ok || tl.Definition().Name != "alpha" {
		t.Errorf("Lookup(alpha) = %v, %v", tl, ok)
	}
	if _, ok := s.Lookup("nope"); ok {
		t.Error("Lookup found an unknown tool")
	}
}

func TestToolsetRejectsDuplicates(t *testing.T) {
	s, err := operator.NewToolset(echoTool("a"))
	if err != nil {
		t.Fatal(err)
	}
	err = s.Add(echoTool("b"), echoTool("a"))
	if !errors.Is(err, operator.ErrDuplicate) || !strings.Contains(err.Error(), `two tools are named "a"`) {
		t.Errorf("Add duplicate = %v", err)
	}
	if s.Len() != 1 {
		t.Errorf("a failed Add added tools: %v", s.Names())
	}
	if _, err := operator.NewToolset(echoTool("x"), echoTool("x")); !errors.Is(err, operator.ErrDuplicate) {
		t.Errorf("NewToolset duplicate = %v", err)
	}
	if err := s.Add(nil); err == nil || !strings.Contains(err.Error(), "is nil") {
		t.Errorf("Add(nil) = %v", err)
	}
	if err := s.Add(badName{}); err == nil || !strings.Contains(err.Error(), "use only letters") {
		t.Errorf("Add(bad name) = %v", err)
	}
}

type badName struct{}

func (badName) Definition() model.ToolDef { return model.ToolDef{Name: "a b", Description: "x"} }
func (badName) Call(context.Context, json.RawMessage) (*model.ToolResult, error) {
	return nil, nil
}

func TestToolsetBounded(t *testing.T) {
	var s operator.Toolset
	tools := make([]operator.Tool, operator.MaxTools)
	for i := range tools {
		tools[i] = echoTool(fmt.Sprintf("t%d", i))
	}
	if err := s.Add(tools...); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(echoTool("one_more")); !errors.Is(err, operator.ErrToolsetFull) {
		t.Errorf("Add beyond MaxTools = %v", err)
	}
}

func TestToolsetCall(t *testing.T) {
	s, err := operator.NewToolset(echoTool("echo"), echoTool("shout"))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	res, err := s.Call(ctx, model.ToolCall{ID: "call_1", Name: "echo", Arguments: json.RawMessage(`{"text":"hi"}`)})
	if err != nil || res.CallID != "call_1" || res.Name != "echo" || res.IsError || res.Text() != "echo:hi" {
		t.Errorf("Call = %+v, %v", res, err)
	}

	res, err = s.Call(ctx, model.ToolCall{ID: "call_2", Name: "whisper", Arguments: json.RawMessage(`{}`)})
	if err != nil || !res.IsError || res.CallID != "call_2" || res.Name != "whisper" {
		t.Fatalf("unknown tool = %+v, %v", res, err)
	}
	if want := `There is no tool named "whisper". The available tools are: echo, shout.`; !strings.Contains(res.Text(), want) {
		t.Errorf("unknown tool text = %q, want %q", res.Text(), want)
	}

	res, err = s.Call(ctx, model.ToolCall{ID: "call_3", Name: "echo", Arguments: json.RawMessage(`{"txt":"hi"}`)})
	if err != nil || !res.IsError || res.CallID != "call_3" || !strings.Contains(res.Text(), "- text: is required but missing") {
		t.Errorf("bad arguments = %+v, %v", res, err)
	}

	var empty operator.Toolset
	res, _ = empty.Call(ctx, model.ToolCall{ID: "c", Name: "x"})
	if !res.IsError || !strings.Contains(res.Text(), "no tools are available") {
		t.Errorf("empty toolset = %q", res.Text())
	}
}

type brokenTool struct {
	err      error
	panicked bool
	nilRes   bool
}

func (f brokenTool) Definition() model.ToolDef {
	return model.ToolDef{Name: "failing", Description: "Fails"}
}

func (f brokenTool) Call(context.Context, json.RawMessage) (*model.ToolResult, error) {
	switch {
	case f.panicked:
		panic("oops")
	case f.nilRes:
		return nil, nil
	}
	return nil, f.err
}

func TestToolsetCallFailures(t *testing.T) {
	ctx := context.Background()
	boom := errors.New("database unreachable")
	for _, c := range []struct {
		tool brokenTool
		text string
		is   func(error) bool
	}{
		{brokenTool{err: boom}, "Tool failing failed: database unreachable", func(err error) bool { return errors.Is(err, boom) }},
		{brokenTool{panicked: true}, "Tool failing failed: operator: tool failing panicked: oops", func(err error) bool {
			var pe *operator.PanicError
			return errors.As(err, &pe) && pe.Value == "oops" && len(pe.Stack) > 0
		}},
	} {
		s, _ := operator.NewToolset(c.tool)
		res, err := s.Call(ctx, model.ToolCall{ID: "id", Name: "failing"})
		if !c.is(err) {
			t.Errorf("error = %v", err)
		}
		if res == nil || !res.IsError || res.Text() != c.text || res.CallID != "id" || res.Name != "failing" {
			t.Errorf("result = %+v, want an error result %q", res, c.text)
		}
	}
	s, _ := operator.NewToolset(brokenTool{nilRes: true})
	res, err := s.Call(ctx, model.ToolCall{ID: "id", Name: "failing"})
	if err != nil || res == nil || res.IsError || res.CallID != "id" {
		t.Errorf("nil result = %+v, %v", res, err)
	}
}

func TestToolsetConcurrent(t *testing.T) {
	var s operator.Toolset
	var wg sync.WaitGroup
	for i := range 16 {
		wg.Go(func() {
			if err := s.Add(echoTool(fmt.Sprintf("tool%d", i))); err != nil {
				t.Error(err)
			}
		})
		wg.Go(func() {
			name := fmt.Sprintf("tool%d", i/2)
			res, err := s.Call(context.Background(), model.ToolCall{ID: fmt.Sprint(i), Name: name, Arguments: json.RawMessage(`{"text":"x"}`)})
			if err != nil || res.CallID != fmt.Sprint(i) {
				t.Errorf("Call = %+v, %v", res, err)
			}
			if !res.IsError && res.Text() != name+":x" {
				t.Errorf("Call %s = %q", name, res.Text())
			}
			_ = s.Definitions()
		})
	}
	wg.Wait()
	if s.Len() != 16 {
		t.Errorf("Len = %d", s.Len())
	}
}

// The name of an unknown tool is the model's, of any length: the result
// echoes it cut to MaxToolNameLen bytes (not within a character), saying
// from how many, in its text and its Name; so does an UnknownError.
func TestToolsetUnknownNameClipped(t *testing.T) {
	s, err := operator.NewToolset(echoTool("echo"))
	if err != nil {
		t.Fatal(err)
	}
	name := "a" + strings.Repeat("é", 1<<19) // byte 64 is within an é
	res, err := s.Call(context.Background(), model.ToolCall{ID: "c", Name: name})
	if err != nil || !res.IsError {
		t.Fatalf("Call = %+v, %v", res, err)
	}
	want := fmt.Sprintf("There is no tool named %q (cut from %d bytes). The available tools are: echo.", name[:operator.MaxToolNameLen-1], len(name))
	if text := res.Text(); !strings.Contains(text, want) || len(text) > 1024 {
		t.Errorf("unknown tool text (%d bytes) = %.300q, want %q", len(text), text, want)
	}
	if res.Name != name[:operator.MaxToolNameLen-1] {
		t.Errorf("result name of %d bytes, want the first %d", len(res.Name), operator.MaxToolNameLen-1)
	}
	// Bytes that are not UTF-8 (continuation bytes only) are cut at
	// MaxToolNameLen, not backed over to nothing.
	bad := strings.Repeat("\x80", 100)
	if res, _ := s.Call(context.Background(), model.ToolCall{ID: "c", Name: bad}); res.Name != bad[:operator.MaxToolNameLen] {
		t.Errorf("result name of a name of continuation bytes: %q, want its first %d bytes", res.Name, operator.MaxToolNameLen)
	}
	var empty operator.Toolset
	if res, _ := empty.Call(context.Background(), model.ToolCall{ID: "c", Name: name}); len(res.Text()) > 1024 {
		t.Errorf("unknown tool text of an empty toolset: %d bytes", len(res.Text()))
	}
	e := &operator.UnknownError{Name: name, Kind: "tool", Registered: []string{"echo"}}
	if msg := e.Error(); len(msg) > 1024 || !strings.Contains(msg, fmt.Sprintf("(cut from %d bytes); registered: echo", len(name))) {
		t.Errorf("UnknownError of %d bytes: %.300q", len(msg), msg)
	}
}
