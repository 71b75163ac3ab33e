package servertest

import (
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/agent/server"
)

// testAssistants checks an AssistantStore: creation, versions made by
// updates, the current version set back, listing by owner, usage and
// deletion.
func testAssistants(t *testing.T, st server.Store) {
	as := st.(server.AssistantStore)
	ctx := t.Context()
	at := time.Date(2026, 1, 2, 3, 4, 5, 6000, time.UTC)
	desc := "first"
	a := &server.Assistant{ID: "0190a4f1-0000-7000-8000-000000000001", GraphID: "agent", Owner: "alice",
		Config:   map[string]any{"configurable": map[string]any{"prompt": "be brief"}},
		Context:  map[string]any{"n": json.Number("9007199254740993")},
		Metadata: map[string]any{"team": "x"}, Version: 1, Name: "brief", Description: &desc, CreatedAt: at, UpdatedAt: at}
	if err := as.CreateAssistant(ctx, a); err != nil {
		t.Fatal(err)
	}
	if err := as.CreateAssistant(ctx, a); !errors.Is(err, server.ErrExists) {
		t.Fatalf("CreateAssistant of a taken id: %v; want ErrExists", err)
	}
	b := &server.Assistant{ID: "0190a4f1-0000-7000-8000-000000000002", GraphID: "agent", Owner: "alice", Version: 1, Name: "second",
		CreatedAt: at.Add(time.Second), UpdatedAt: at.Add(time.Second)}
	c := &server.Assistant{ID: "0190a4f1-0000-7000-8000-000000000003", GraphID: "agent", Owner: "bob", Version: 1, Name: "bob's",
		CreatedAt: at, UpdatedAt: at}
	for _, x := range []*server.Assistant{b, c} {
		if err := as.CreateAssistant(ctx, x); err != nil {
			t.Fatal(err)
		}
	}
	got, err := as.Assistant(ctx, a.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Owner != "alice" || got.Name != "brief" || got.Version != 1 || got.Description == nil || *got.Description != "first" ||
		!got.CreatedAt.Equal(at) || got.Context["n"] != json.Number("9007199254740993") {
		t.Errorf("Assistant: %+v; want the assistant as created, its big number exact", got)
	}
	if _, err := as.Assistant(ctx, "0190a4f1-0000-7000-8000-0000000000ff"); !errors.Is(err, server.ErrNotFound) {
		t.Errorf("Assistant of a missing id: %v; want ErrNotFound", err)
	}
	up, err := as.UpdateAssistant(ctx, a.ID, func(x *server.Assistant) error {
		x.Name = "terse"
		return nil
	})
	if err != nil || up.Version != 2 || up.Name != "terse" {
		t.Fatalf("UpdateAssistant: %+v, %v; want version 2 named terse", up, err)
	}
	boom := errors.New("boom")
	if _, err := as.UpdateAssistant(ctx, a.ID, func(*server.Assistant) error { return boom }); !errors.Is(err, boom) {
		t.Errorf("UpdateAssistant whose fn fails: %v; want fn's error", err)
	}
	// Another owner's calls find nothing and change nothing.
	if _, err := as.AssistantVersions(ctx, "bob", a.ID); !errors.Is(err, server.ErrNotFound) {
		t.Errorf("AssistantVersions of another owner's assistant: %v; want ErrNotFound", err)
	}
	if _, err := as.SetAssistantVersion(ctx, "bob", a.ID, 1); !errors.Is(err, server.ErrNotFound) {
		t.Errorf("SetAssistantVersion of another owner's assistant: %v; want ErrNotFound", err)
	}
	if err := as.DeleteAssistant(ctx, "bob", a.ID); err != nil {
		t.Errorf("DeleteAssistant of another owner's assistant: %v; want nil", err)
	}
	if cur, err := as.Assistant(ctx, a.ID); err != nil || cur.Version != 2 {
		t.Errorf("after another owner's calls: %+v, %v; want the assistant at version 2", cur, err)
	}
	vs, err := as.AssistantVersions(ctx, "alice", a.ID)
	if err != nil || len(vs) != 2 || vs[0].Version != 2 || vs[1].Version != 1 || vs[1].Name != "brief" {
		t.Fatalf("AssistantVersions: %d versions, %v; want 2 then 1", len(vs), err)
	}
	back, err := as.SetAssistantVersion(ctx, "alice", a.ID, 1)
	if err != nil || back.Version != 1 || back.Name != "brief" {
		t.Fatalf("SetAssistantVersion 1: %+v, %v", back, err)
	}
	if cur, _ := as.Assistant(ctx, a.ID); cur == nil || cur.Version != 1 {
		t.Errorf("after SetAssistantVersion 1 the current version is %+v; want 1", cur)
	}
	if _, err := as.SetAssistantVersion(ctx, "alice", a.ID, 7); !errors.Is(err, server.ErrNotFound) {
		t.Errorf("SetAssistantVersion of a missing version: %v; want ErrNotFound", err)
	}
	// A new version is one above the highest, not the current.
	if up, err := as.UpdateAssistant(ctx, a.ID, func(*server.Assistant) error { return nil }); err != nil || up.Version != 3 || up.Name != "brief" {
		t.Errorf("UpdateAssistant from version 1 of 2: %+v, %v; want version 3 from version 1", up, err)
	}
	list, err := as.Assistants(ctx, "alice")
	if err != nil || len(list) != 2 || list[0].ID != a.ID || list[1].ID != b.ID || list[0].Version != 3 {
		t.Errorf("Assistants(alice): %v, %v; want a (at version 3) then b", list, err)
	}
	n, bytes, err := as.AssistantUsage(ctx, "alice")
	if err != nil || n != 2 || bytes <= 0 {
		t.Errorf("AssistantUsage(alice): %d, %d, %v; want 2 assistants and their bytes", n, bytes, err)
	}
	if err := as.DeleteAssistant(ctx, "alice", a.ID); err != nil {
		t.Fatal(err)
	}
	if err := as.DeleteAssistant(ctx, "alice", a.ID); err != nil {
		t.Errorf("DeleteAssistant of a missing assistant: %v; want nil", err)
	}
	if _, err := as.AssistantVersions(ctx, "alice", a.ID); !errors.Is(err, server.ErrNotFound) {
		t.Errorf("AssistantVersions after the delete: %v; want ErrNotFound", err)
	}
	n2, bytes2, err := as.AssistantUsage(ctx, "alice")
	if err != nil || n2 != 1 || bytes2 >= bytes {
		t.Errorf("AssistantUsage(alice) after a delete: %d, %d, %v; want 1 and fewer bytes than %d", n2, bytes2, err, bytes)
	}
}
