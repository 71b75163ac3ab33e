package model_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/agent/model"
)

func withID(m model.Message, id string) model.Message { m.ID = id; return m }

func texts(ms model.Messages) string {
	var b []string
	for _, m := range ms {
		b = append(b, m.ID+"="+m.Text())
	}
	return strings.Join(b, " ")
}

func TestMessagesMerge(t *testing.T) {
	base := model.Messages{withID(model.User("hi"), "1"), withID(model.Assistant("hello"), "2")}
	for _, tc := range []struct {
		name   string
		update model.Messages
		want   string
	}{
		{"append", model.Messages{withID(model.User("how are you"), "3")}, "1=hi 2=hello 3=how are you"},
		{"replace in place", model.Messages{withID(model.Assistant("hey"), "2")}, "1=hi 2=hey"},
		{"remove", model.Messages{model.Remove("1")}, "2=hello"},
		{"remove unknown", model.Messages{model.Remove("9")}, "1=hi 2=hello"},
		{"remove then append", model.Messages{model.Remove("2"), withID(model.Assistant("again"), "2")}, "1=hi 2=again"},
		{"remove all", model.Messages{model.Remove(model.RemoveAll), withID(model.User("fresh"), "5")}, "5=fresh"},
		{"mixed", model.Messages{withID(model.User("x"), "3"), model.Remove("1"), withID(model.User("y"), "3")}, "2=hello 3=y"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := texts(base)
			got := base.Merge(tc.update)
			if texts(got) != tc.want {
				t.Fatalf("got %s, want %s", texts(got), tc.want)
			}
			if texts(base) != before {
				t.Fatalf("Merge modified its receiver: %s", texts(base))
			}
		})
	}
}

func TestMessagesMergeAssignsIDs(t *testing.T) {
	got := model.Messages(nil).Merge(model.Messages{model.User("a"), model.User("b")})
	if len(got) != 2 || got[0].ID == "" || got[1].ID == "" || got[0].ID == got[1].ID {
		t.Fatalf("ids %q %q", got[0].ID, got[1].ID)
	}
	// The assigned id is how a later write edits the message.
	edit := got[0]
	edit.Parts = []model.Part{model.TextPart("A")}
	got = got.Merge(model.Messages{edit})
	if got[0].Text() != "A" || len(got) != 2 {
		t.Fatalf("%s", texts(got))
	}
	if got := got.Merge(nil); len(got) != 2 {
		t.Fatal("an empty update changed the conversation")
	}
}

func TestMessagesJSON(t *testing.T) {
	ms := model.Messages{
		withID(model.System("be brief"), "s"),
		withID(model.User("weather?"), "u"),
		{ID: "a", Role: model.RoleAssistant, Parts: []model.Part{
			model.ThinkingPart("look it up", "sig"),
			model.ToolCallPart(model.ToolCall{ID: "c1", Name: "get_weather", Arguments: json.RawMessage(`{"city":"Oslo"}`)}),
		}},
		withID(model.ToolResults(model.ToolResult{CallID: "c1", Name: "get_weather", Content: []model.Part{model.TextPart("3C")}, Structured: json.RawMessage(`{"c":3}`)}), "t"),
		{ID: "i", Role: model.RoleUser, Parts: []model.Part{model.BinaryPart("image/png", []byte{1, 2, 3})}},
	}
	data, err := json.Marshal(ms)
	if err != nil {
		t.Fatal(err)
	}
	var back model.Messages
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ms, back); diff != "" {
		t.Fatalf("round trip (-want +got):\n%s", diff)
	}
}

// Index finds a message by its whole id: not by an id that ends alike, is
// a prefix of it or is longer, and it finds the last message holding it.
func TestMessagesIndex(t *testing.T) {
	m := model.Messages{
		{ID: "m-00000000000000a1", Role: model.RoleUser},
		{ID: "m-10000000000000a1", Role: model.RoleUser},
		{ID: "x", Role: model.RoleUser},
		{ID: "m-00000000000000a1", Role: model.RoleAssistant},
		{Role: model.RoleUser},
	}
	for id, want := range map[string]int{
		"m-00000000000000a1":  3,
		"m-10000000000000a1":  1,
		"m-20000000000000a1":  -1,
		"m-00000000000000a":   -1,
		"m-00000000000000a11": -1,
		"x":                   2,
		"y":                   -1,
		"":                    -1,
	} {
		if got := m.Index(id); got != want {
			t.Errorf("Index(%q) = %d, want %d", id, got, want)
		}
	}
}
