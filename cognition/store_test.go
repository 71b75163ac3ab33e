package cognition_test

import (
	"context"
	"testing"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/google/go-cmp/cmp"
)

// The in-memory store copies values in and out: changing what a method
// returned, or what fn was given, after it returned does not change what
// the store holds.
func TestInMemoryStoreCopies(t *testing.T) {
	ctx := context.Background()
	s := cognition.NewInMemoryStore()
	var given *cognition.Profile
	p, err := s.UpdateProfile(ctx, "ada", func(p *cognition.Profile) error {
		p.Interests = []string{"go"}
		p.Preferences = map[string]cognition.Preference{"format": {Value: "short"}}
		given = p
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := cognition.Profile{UserID: "ada", Interests: []string{"go"}, Preferences: map[string]cognition.Preference{"format": {Value: "short"}}}
	p.Interests[0] = "changed"
	p.Preferences["format"] = cognition.Preference{Value: "changed"}
	given.Interests = append(given.Interests[:0], "changed too")
	got, err := s.Profile(ctx, "ada")
	if err != nil {
		t.Fatal(err)
	}
	got.Interests[0] = "changed by the reader"
	got.Preferences["other"] = cognition.Preference{Value: "added by the reader"}
	if got, err = s.Profile(ctx, "ada"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("profile after its copies were changed (-want +got):\n%s", diff)
	}

	id, err := s.UpdateIdentity(ctx, "bot", func(id *cognition.Identity) error {
		id.Goals = []string{"help"}
		id.Gaps = []string{"pricing"}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	id.Goals[0] = "changed"
	read, err := s.Identity(ctx, "bot")
	if err != nil {
		t.Fatal(err)
	}
	read.Gaps[0] = "changed by the reader"
	if read, err = s.Identity(ctx, "bot"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(cognition.Identity{Agent: "bot", Goals: []string{"help"}, Gaps: []string{"pricing"}}, read); diff != "" {
		t.Errorf("identity after its copies were changed (-want +got):\n%s", diff)
	}
}
