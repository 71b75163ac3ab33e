package model_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"slices"
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

// Only a removal marker deletes: a message with an empty role is a message
// like any other, kept when another message is removed, whether the
// update is short (scanned) or long (merged through a set of ids).
func TestMessagesMergeKeepsEmptyRole(t *testing.T) {
	for _, long := range []bool{false, true} {
		conv := model.Messages{withID(model.User("a"), "a"), {ID: "b"}, withID(model.User("c"), "c")}
		update := model.Messages{model.Remove("c")}
		if long {
			for range 40 {
				update = append(update, model.Remove("unknown"))
			}
		}
		got := conv.Merge(update)
		if len(got) != 2 || got[0].ID != "a" || got[1].ID != "b" {
			t.Fatalf("long=%v: merging a removal of c into [a b(no role) c] left %q, want [a b]", long, texts(got))
		}
	}
}

// RemoveAll's id is the marker's: a message that is not a removal marker
// gets a new id in its place, so no message of a merged conversation can be
// mistaken for the marker, and removing "*" removes everything, never one
// message.
func TestMessagesMergeReservesRemoveAll(t *testing.T) {
	for _, tc := range []struct {
		name   string
		update model.Messages
	}{
		{"append", model.Messages{withID(model.User("star"), model.RemoveAll)}},
		{"after a removal", model.Messages{model.Remove("a"), withID(model.User("star"), model.RemoveAll)}},
		{"long", append(conversation("x", 20), withID(model.User("star"), model.RemoveAll))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			conv := model.Messages{withID(model.User("a"), "a")}.Merge(tc.update)
			star := -1
			for i, m := range conv {
				if m.ID == model.RemoveAll {
					t.Fatalf("a merged message has the reserved id %q: %s", model.RemoveAll, texts(conv))
				}
				if m.Text() == "star" {
					star = i
				}
			}
			if star < 0 || conv[star].ID == "" {
				t.Fatalf("the message with the reserved id is not kept with a new id: %s", texts(conv))
			}
			// Its new id is how a later write edits it.
			edit := withID(model.User("edited"), conv[star].ID)
			if got := conv.Merge(model.Messages{edit}); len(got) != len(conv) || got[star].Text() != "edited" {
				t.Fatalf("editing by the new id: %s", texts(got))
			}
		})
	}
}

// A long update (merged through a set of ids) gives the result a short
// one (scanned) would, message by message: the same update merged whole
// and merged in short pieces agree, on appends, edits, removals, repeated
// ids and RemoveAll in any order, also on a conversation that already
// holds an id twice.
func TestMessagesMergeLongUpdates(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 300 {
		conv := conversation("c", rng.IntN(40))
		var dups []string
		if round%3 == 0 && len(conv) > 0 {
			// Repeated ids, which Merge never makes but a caller's
			// slice may hold; the update often names them.
			for k := range 1 + rng.IntN(4) {
				i := rng.IntN(len(conv) + 1)
				dup := withID(model.User(fmt.Sprint("dup", k)), conv[rng.IntN(len(conv))].ID)
				conv = append(conv[:i:i], append(model.Messages{dup}, conv[i:]...)...)
				dups = append(dups, dup.ID)
			}
		}
		var update model.Messages
		for range 17 + rng.IntN(60) {
			id := fmt.Sprintf("%c%d", "cu"[rng.IntN(2)], rng.IntN(50))
			if len(dups) > 0 && rng.IntN(4) == 0 {
				id = dups[rng.IntN(len(dups))]
			}
			switch r := rng.IntN(20); {
			case r == 0:
				update = append(update, model.Remove(model.RemoveAll))
			case r < 6:
				update = append(update, model.Remove(id))
			case r < 8:
				update = append(update, model.Message{Role: model.RoleUser}) // no id
			case r < 9:
				update = append(update, model.Message{ID: id}) // no role
			default:
				update = append(update, withID(model.User(fmt.Sprint(round)), id))
			}
		}
		whole := conv.Merge(update)
		pieces := conv
		for _, m := range update {
			pieces = pieces.Merge(model.Messages{m})
		}
		if got, want := shape(whole), shape(pieces); got != want {
			t.Fatalf("round %d: merged whole %s, in pieces %s", round, got, want)
		}
	}
}

// A conversation holding an id twice merges alike whatever the update's
// length: removing the id twice removes both messages, and removing it
// then writing it again replaces the first one, as a scan finds them.
func TestMessagesMergeRepeatedIDs(t *testing.T) {
	conv := model.Messages{withID(model.User("1"), "x"), withID(model.User("2"), "x")}
	var padding model.Messages
	for i := range 15 {
		padding = append(padding, withID(model.User("p"), fmt.Sprint("p", i)))
	}
	for _, tc := range []struct {
		name   string
		update model.Messages
		want   string
	}{
		{"remove twice", model.Messages{model.Remove("x"), model.Remove("x")}, ""},
		{"remove then write", model.Messages{model.Remove("x"), withID(model.User("3"), "x")}, "x:user:3"},
	} {
		short := conv.Merge(tc.update)
		long := conv.Merge(append(slices.Clone(tc.update), padding...))
		if got := shape(short); got != tc.want {
			t.Errorf("%s, short update: %s, want %s", tc.name, got, tc.want)
		}
		if got, want := shape(long[:len(long)-len(padding)]), tc.want; got != want {
			t.Errorf("%s, long update: %s, want %s", tc.name, got, want)
		}
	}
}

// shape describes a conversation by its ids, the generated ones as "new".
func shape(ms model.Messages) string {
	var b []string
	for _, m := range ms {
		id := m.ID
		if strings.HasPrefix(id, "m-") {
			id = "new"
		}
		b = append(b, id+":"+string(m.Role)+":"+m.Text())
	}
	return strings.Join(b, " ")
}

func TestImageType(t *testing.T) {
	for _, tc := range []struct {
		data string
		want string
	}{
		{"\x89PNG\r\n\x1a\n\x00\x00", "image/png"},
		{"\xff\xd8\xff\xe0", "image/jpeg"},
		{"GIF89a..", "image/gif"},
		{"RIFF\x00\x00\x00\x00WEBPVP8 ", "image/webp"},
		{"RIFF\x00\x00\x00\x00WAVEfmt ", ""},
		{"<svg onload=alert(1)>", ""},
		{"%PDF-1.7", ""},
		{"", ""},
	} {
		got, ok := model.ImageType([]byte(tc.data))
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("ImageType(%q) = %q, %v; want %q", tc.data, got, ok, tc.want)
		}
	}
}
