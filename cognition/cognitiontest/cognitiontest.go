// Package cognitiontest checks implementations of [cognition.Store] against
// the contract documented on the interface. Every store in this module
// passes it; run it against your own:
//
//	func TestStore(t *testing.T) {
//		cognitiontest.Run(t, func(t *testing.T) cognition.Store {
//			return newMyStore(t) // empty, cleaned up with t.Cleanup
//		})
//	}
//
// Besides the methods one by one, Run checks a [cognition.Service] with
// several workers learning on the store. It starts goroutines (the
// concurrency checks), all of which have ended when it returns.
package cognitiontest

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/internal/conformance"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/google/go-cmp/cmp"
)

// Run runs the conformance checks as subtests of t. newStore is called once
// per subtest and must return an empty store; release it with t.Cleanup.
func Run(t *testing.T, newStore func(t *testing.T) cognition.Store) {
	t.Helper()
	conformance.Run(t, newStore, []conformance.Check[cognition.Store]{
		{Name: "ProfileMissing", Fn: testProfileMissing},
		{Name: "ProfileRoundTrip", Fn: testProfileRoundTrip},
		{Name: "ProfileUpdateError", Fn: testProfileUpdateError},
		{Name: "ProfileUserIDFixed", Fn: testProfileUserIDFixed},
		{Name: "Episodes", Fn: testEpisodes},
		{Name: "EpisodesUpdateError", Fn: testEpisodesUpdateError},
		{Name: "EpisodesOtherUser", Fn: testEpisodesOtherUser},
		{Name: "BadText", Fn: testBadText},
		{Name: "Isolation", Fn: testIsolation},
		{Name: "Touch", Fn: testTouch},
		{Name: "Identity", Fn: testIdentity},
		{Name: "DeleteUser", Fn: testDeleteUser},
		{Name: "Validation", Fn: testValidation},
		{Name: "Canceled", Fn: testCanceled},
		{Name: "ConcurrentUpdates", Fn: testConcurrent},
		{Name: "ServiceLearning", Fn: testService},
	})
}

// at is a fixed time with microsecond precision, which every SQL store
// keeps.
var at = time.Date(2026, 3, 14, 15, 9, 26, 535897000, time.UTC)

// must(v, err)(t) returns v, or fails t with err.
func must[T any](v T, err error) func(t *testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

func episode(user, id, summary string, importance float64) cognition.Episode {
	return cognition.Episode{
		ID: id, UserID: user, ConversationID: "conv-" + id, Summary: summary,
		Topics: []string{"go", "sql"}, Outcome: cognition.Success, Importance: importance,
		Mentions: 1, Created: at, Updated: at.Add(time.Minute),
	}
}

func put(t *testing.T, s cognition.Store, user string, eps ...cognition.Episode) {
	t.Helper()
	err := s.UpdateEpisodes(t.Context(), user, func([]cognition.Episode) (cognition.EpisodeChanges, error) {
		return cognition.EpisodeChanges{Put: eps}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func byID(eps []cognition.Episode) map[string]cognition.Episode {
	m := make(map[string]cognition.Episode, len(eps))
	for _, e := range eps {
		m[e.ID] = e
	}
	return m
}

func testProfileMissing(t *testing.T, s cognition.Store) {
	got := must(s.Profile(t.Context(), "nobody"))(t)
	if diff := cmp.Diff(cognition.Profile{UserID: "nobody"}, got); diff != "" {
		t.Errorf("missing profile (-want +got):\n%s", diff)
	}
}

func fullProfile(user string) cognition.Profile {
	return cognition.Profile{
		UserID: user, Expertise: cognition.Expert, Style: cognition.Technical,
		Interests:    []string{"go", "databases"},
		Preferences:  map[string]cognition.Preference{"language": {Value: "Go", Updated: at}},
		Interactions: 7, Created: at, Updated: at.Add(time.Hour),
	}
}

func testProfileRoundTrip(t *testing.T, s cognition.Store) {
	want := fullProfile("u1")
	got := must(s.UpdateProfile(t.Context(), "u1", func(p *cognition.Profile) error {
		*p = want
		return nil
	}))(t)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("UpdateProfile result (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, must(s.Profile(t.Context(), "u1"))(t)); diff != "" {
		t.Errorf("Profile after update (-want +got):\n%s", diff)
	}
	// A second update sees the first.
	got = must(s.UpdateProfile(t.Context(), "u1", func(p *cognition.Profile) error {
		if p.Interactions != 7 {
			return fmt.Errorf("fn saw Interactions %d, want 7", p.Interactions)
		}
		p.Interactions++
		return nil
	}))(t)
	if got.Interactions != 8 {
		t.Errorf("Interactions = %d, want 8", got.Interactions)
	}
}

func testProfileUpdateError(t *testing.T, s cognition.Store) {
	boom := errors.New("boom")
	_, err := s.UpdateProfile(t.Context(), "u1", func(p *cognition.Profile) error {
		p.Expertise = cognition.Novice
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("UpdateProfile error = %v, want fn's error", err)
	}
	if got := must(s.Profile(t.Context(), "u1"))(t); !got.IsZero() {
		t.Errorf("profile saved despite fn's error: %+v", got)
	}
}

func testProfileUserIDFixed(t *testing.T, s cognition.Store) {
	_, err := s.UpdateProfile(t.Context(), "u1", func(p *cognition.Profile) error {
		p.UserID = "u2"
		return nil
	})
	if !errors.Is(err, cognition.ErrInvalid) {
		t.Fatalf("UpdateProfile changing UserID: error = %v, want ErrInvalid", err)
	}
	for _, u := range []string{"u1", "u2"} {
		if got := must(s.Profile(t.Context(), u))(t); !got.IsZero() {
			t.Errorf("profile of %s saved: %+v", u, got)
		}
	}
}

func testEpisodes(t *testing.T, s cognition.Store) {
	ctx := t.Context()
	if got := must(s.Episodes(ctx, "u1"))(t); len(got) != 0 {
		t.Fatalf("Episodes of a new user = %v, want none", got)
	}
	a, b := episode("u1", "a", "first", 0.5), episode("u1", "b", "second", 0.7)
	b.LastAccessed, b.AccessCount = at.Add(2*time.Minute), 3
	put(t, s, "u1", a, b)
	if diff := cmp.Diff(map[string]cognition.Episode{"a": a, "b": b}, byID(must(s.Episodes(ctx, "u1"))(t))); diff != "" {
		t.Fatalf("Episodes after put (-want +got):\n%s", diff)
	}
	// fn sees the stored episodes; Put replaces, Delete removes.
	a2 := a
	a2.Summary, a2.Mentions = "first, revised", 2
	err := s.UpdateEpisodes(ctx, "u1", func(cur []cognition.Episode) (cognition.EpisodeChanges, error) {
		if len(cur) != 2 {
			return cognition.EpisodeChanges{}, fmt.Errorf("fn saw %d episodes, want 2", len(cur))
		}
		return cognition.EpisodeChanges{Put: []cognition.Episode{a2}, Delete: []string{"b", "missing"}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]cognition.Episode{"a": a2}, byID(must(s.Episodes(ctx, "u1"))(t))); diff != "" {
		t.Errorf("Episodes after replace and delete (-want +got):\n%s", diff)
	}
}

func testEpisodesUpdateError(t *testing.T, s cognition.Store) {
	boom := errors.New("boom")
	err := s.UpdateEpisodes(t.Context(), "u1", func([]cognition.Episode) (cognition.EpisodeChanges, error) {
		return cognition.EpisodeChanges{Put: []cognition.Episode{episode("u1", "a", "x", 1)}}, boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("UpdateEpisodes error = %v, want fn's error", err)
	}
	if got := must(s.Episodes(t.Context(), "u1"))(t); len(got) != 0 {
		t.Errorf("episodes saved despite fn's error: %v", got)
	}
}

func testEpisodesOtherUser(t *testing.T, s cognition.Store) {
	for name, e := range map[string]cognition.Episode{
		"other user": episode("u2", "a", "x", 1),
		"no ID":      episode("u1", "", "x", 1),
	} {
		err := s.UpdateEpisodes(t.Context(), "u1", func([]cognition.Episode) (cognition.EpisodeChanges, error) {
			return cognition.EpisodeChanges{Put: []cognition.Episode{episode("u1", "ok", "fine", 1), e}}, nil
		})
		if !errors.Is(err, cognition.ErrInvalid) {
			t.Errorf("%s: UpdateEpisodes error = %v, want ErrInvalid", name, err)
		}
	}
	for _, u := range []string{"u1", "u2"} {
		if got := must(s.Episodes(t.Context(), u))(t); len(got) != 0 {
			t.Errorf("episodes of %s saved from an invalid change: %v", u, got)
		}
	}
}

// badTexts are text values no store keeps as given: PostgreSQL refuses a
// NUL byte, and JSON replaces bytes that are not UTF-8.
var badTexts = map[string]string{"a NUL byte": "a\x00b", "bytes not UTF-8": "caf\xe9 \xff"}

// testBadText: every store refuses, with ErrInvalid naming the field, a
// text field that is not valid UTF-8 or holds a NUL byte, and saves
// nothing of the update; valid non-ASCII text round-trips.
func testBadText(t *testing.T, s cognition.Store) {
	ctx := t.Context()
	wantInvalid := func(what, field string, err error) {
		t.Helper()
		if !errors.Is(err, cognition.ErrInvalid) || !strings.Contains(err.Error(), field) {
			t.Errorf("%s: error = %v, want ErrInvalid naming %s", what, err, field)
		}
	}
	for kind, bad := range badTexts {
		for field, set := range map[string]func(*cognition.Episode){
			"Summary":        func(e *cognition.Episode) { e.Summary = bad },
			"ConversationID": func(e *cognition.Episode) { e.ConversationID = bad },
			"Topics[1]":      func(e *cognition.Episode) { e.Topics = []string{"go", bad} },
			"Outcome":        func(e *cognition.Episode) { e.Outcome = cognition.Outcome(bad) },
		} {
			e := episode("u1", "b", "fine", 1)
			set(&e)
			err := s.UpdateEpisodes(ctx, "u1", func([]cognition.Episode) (cognition.EpisodeChanges, error) {
				return cognition.EpisodeChanges{Put: []cognition.Episode{episode("u1", "ok", "fine", 1), e}}, nil
			})
			wantInvalid("episode "+field+" with "+kind, field, err)
		}
		err := s.UpdateEpisodes(ctx, "u1", func([]cognition.Episode) (cognition.EpisodeChanges, error) {
			return cognition.EpisodeChanges{Put: []cognition.Episode{episode("u1", "ok", "fine", 1)}, Delete: []string{bad}}, nil
		})
		wantInvalid("Delete of an ID with "+kind, "Delete[0]", err)
		if got := must(s.Episodes(ctx, "u1"))(t); len(got) != 0 {
			t.Errorf("episodes saved from a change with %s: %v", kind, got)
		}

		for field, set := range map[string]func(*cognition.Profile){
			"Expertise":    func(p *cognition.Profile) { p.Expertise = cognition.Expertise(bad) },
			"Style":        func(p *cognition.Profile) { p.Style = cognition.Style(bad) },
			"Interests[1]": func(p *cognition.Profile) { p.Interests = []string{"go", bad} },
			"Preferences": func(p *cognition.Profile) {
				p.Preferences = map[string]cognition.Preference{bad: {Value: "x", Updated: at}}
			},
			`["language"].Value`: func(p *cognition.Profile) { p.Preferences["language"] = cognition.Preference{Value: bad, Updated: at} },
		} {
			_, err := s.UpdateProfile(ctx, "u1", func(p *cognition.Profile) error {
				*p = fullProfile("u1")
				set(p)
				return nil
			})
			wantInvalid("profile "+field+" with "+kind, field, err)
		}
		if got := must(s.Profile(ctx, "u1"))(t); !got.IsZero() {
			t.Errorf("profile saved from an update with %s: %+v", kind, got)
		}

		for field, set := range map[string]func(*cognition.Identity){
			"Goals[0]":  func(id *cognition.Identity) { id.Goals = []string{bad} },
			"Values[1]": func(id *cognition.Identity) { id.Values = []string{"honest", bad} },
			"Gaps[0]":   func(id *cognition.Identity) { id.Gaps = []string{bad} },
		} {
			_, err := s.UpdateIdentity(ctx, "bot", func(id *cognition.Identity) error { set(id); return nil })
			wantInvalid("identity "+field+" with "+kind, field, err)
		}
		if got := must(s.Identity(ctx, "bot"))(t); len(got.Goals)+len(got.Values)+len(got.Gaps) != 0 {
			t.Errorf("identity saved from an update with %s: %+v", kind, got)
		}
	}

	// Valid text beyond ASCII is kept as given.
	const text = "café ✓ 日本語 \U0001F600"
	e := episode("u1", "u", text, 1)
	e.ConversationID, e.Topics = text, []string{text}
	put(t, s, "u1", e)
	if diff := cmp.Diff(e, byID(must(s.Episodes(ctx, "u1"))(t))["u"]); diff != "" {
		t.Errorf("episode with non-ASCII text (-want +got):\n%s", diff)
	}
	want := fullProfile("u1")
	want.Interests = []string{text}
	want.Preferences[text] = cognition.Preference{Value: text, Updated: at}
	must(s.UpdateProfile(ctx, "u1", func(p *cognition.Profile) error { *p = want; return nil }))(t)
	if diff := cmp.Diff(want, must(s.Profile(ctx, "u1"))(t)); diff != "" {
		t.Errorf("profile with non-ASCII text (-want +got):\n%s", diff)
	}
}

func testIsolation(t *testing.T, s cognition.Store) {
	ctx := t.Context()
	// The same episode ID for two users names two episodes.
	put(t, s, "alice", episode("alice", "e1", "alice's secret", 0.9))
	put(t, s, "bob", episode("bob", "e1", "bob's note", 0.1))
	must(s.UpdateProfile(ctx, "alice", func(p *cognition.Profile) error { p.Interests = []string{"alice-only"}; return nil }))(t)
	if err := s.Touch(ctx, "bob", []string{"e1"}, at); err != nil {
		t.Fatal(err)
	}
	alice, bob := must(s.Episodes(ctx, "alice"))(t), must(s.Episodes(ctx, "bob"))(t)
	if len(alice) != 1 || alice[0].Summary != "alice's secret" || alice[0].AccessCount != 0 {
		t.Errorf("alice's episodes = %+v, want only hers, untouched", alice)
	}
	if len(bob) != 1 || bob[0].Summary != "bob's note" || bob[0].AccessCount != 1 {
		t.Errorf("bob's episodes = %+v, want only his, touched once", bob)
	}
	if p := must(s.Profile(ctx, "bob"))(t); !p.IsZero() {
		t.Errorf("bob's profile = %+v, want none", p)
	}
	err := s.UpdateEpisodes(ctx, "bob", func([]cognition.Episode) (cognition.EpisodeChanges, error) {
		return cognition.EpisodeChanges{Delete: []string{"e1"}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := must(s.Episodes(ctx, "alice"))(t); len(got) != 1 {
		t.Errorf("deleting bob's e1 changed alice's episodes: %v", got)
	}
}

func testTouch(t *testing.T, s cognition.Store) {
	ctx := t.Context()
	put(t, s, "u1", episode("u1", "a", "one", 0.5), episode("u1", "b", "two", 0.5))
	later := at.Add(24 * time.Hour)
	for range 2 {
		if err := s.Touch(ctx, "u1", []string{"a", "gone"}, later); err != nil {
			t.Fatal(err)
		}
	}
	got := byID(must(s.Episodes(ctx, "u1"))(t))
	if a := got["a"]; a.AccessCount != 2 || !a.LastAccessed.Equal(later) {
		t.Errorf("touched episode: AccessCount %d, LastAccessed %v; want 2, %v", a.AccessCount, a.LastAccessed, later)
	}
	if b := got["b"]; b.AccessCount != 0 || !b.LastAccessed.IsZero() {
		t.Errorf("untouched episode changed: %+v", b)
	}
}

func testIdentity(t *testing.T, s cognition.Store) {
	ctx := t.Context()
	if diff := cmp.Diff(cognition.Identity{Agent: "bot"}, must(s.Identity(ctx, "bot"))(t)); diff != "" {
		t.Errorf("missing identity (-want +got):\n%s", diff)
	}
	want := cognition.Identity{
		Agent: "bot", Goals: []string{"be precise"}, Gaps: []string{"kubernetes"},
		Metrics: cognition.Metrics{Turns: 3, Successes: 2, Failures: 1, Latency: 1500 * time.Millisecond, Tokens: 900, ToolCalls: 4, ToolFailures: 1},
		Updated: at,
	}
	got := must(s.UpdateIdentity(ctx, "bot", func(id *cognition.Identity) error { *id = want; return nil }))(t)
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("UpdateIdentity result (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(want, must(s.Identity(ctx, "bot"))(t)); diff != "" {
		t.Errorf("Identity after update (-want +got):\n%s", diff)
	}
	if got := must(s.Identity(ctx, "other"))(t); got.Metrics.Turns != 0 {
		t.Errorf("another agent's identity has metrics: %+v", got)
	}
	boom := errors.New("boom")
	if _, err := s.UpdateIdentity(ctx, "bot", func(id *cognition.Identity) error { id.Metrics.Turns = 99; return boom }); !errors.Is(err, boom) {
		t.Errorf("UpdateIdentity error = %v, want fn's error", err)
	}
	if _, err := s.UpdateIdentity(ctx, "bot", func(id *cognition.Identity) error { id.Agent = "x"; return nil }); !errors.Is(err, cognition.ErrInvalid) {
		t.Errorf("UpdateIdentity changing Agent: error = %v, want ErrInvalid", err)
	}
	if got := must(s.Identity(ctx, "bot"))(t); got.Metrics.Turns != 3 {
		t.Errorf("failed updates changed the identity: %+v", got)
	}
}

func testDeleteUser(t *testing.T, s cognition.Store) {
	ctx := t.Context()
	for _, u := range []string{"u1", "u2"} {
		put(t, s, u, episode(u, "a", "x", 0.5))
		must(s.UpdateProfile(ctx, u, func(p *cognition.Profile) error { p.Interactions = 1; return nil }))(t)
	}
	if err := s.DeleteUser(ctx, "u1"); err != nil {
		t.Fatal(err)
	}
	if err := s.DeleteUser(ctx, "never-seen"); err != nil {
		t.Errorf("DeleteUser of an unknown user: %v", err)
	}
	if p := must(s.Profile(ctx, "u1"))(t); !p.IsZero() {
		t.Errorf("profile of deleted user = %+v", p)
	}
	if e := must(s.Episodes(ctx, "u1"))(t); len(e) != 0 {
		t.Errorf("episodes of deleted user = %v", e)
	}
	if p := must(s.Profile(ctx, "u2"))(t); p.Interactions != 1 {
		t.Errorf("other user's profile lost: %+v", p)
	}
	if e := must(s.Episodes(ctx, "u2"))(t); len(e) != 1 {
		t.Errorf("other user's episodes lost: %v", e)
	}
}

func testValidation(t *testing.T, s cognition.Store) {
	ctx := t.Context()
	// An id as long as a conversation id is a user id.
	if _, err := s.Profile(ctx, strings.Repeat("u", 300)); err != nil {
		t.Errorf("Profile with a 300-byte ID: %v", err)
	}
	long := strings.Repeat("u", cognition.MaxIDBytes+1)
	for _, id := range []string{"", long, "u\x00x", "u\xffx"} {
		checks := map[string]error{}
		_, checks["Profile"] = s.Profile(ctx, id)
		_, checks["UpdateProfile"] = s.UpdateProfile(ctx, id, func(*cognition.Profile) error { return nil })
		_, checks["Episodes"] = s.Episodes(ctx, id)
		checks["UpdateEpisodes"] = s.UpdateEpisodes(ctx, id, func([]cognition.Episode) (cognition.EpisodeChanges, error) {
			return cognition.EpisodeChanges{}, nil
		})
		checks["Touch"] = s.Touch(ctx, id, []string{"a"}, at)
		_, checks["Identity"] = s.Identity(ctx, id)
		_, checks["UpdateIdentity"] = s.UpdateIdentity(ctx, id, func(*cognition.Identity) error { return nil })
		if id == "" {
			checks["DeleteUser"] = s.DeleteUser(ctx, id)
		} else if err := s.DeleteUser(ctx, id); err != nil {
			// DeleteUser takes any id, to forget users stored before
			// the check.
			t.Errorf("DeleteUser with a %d-byte ID: %v, want nil", len(id), err)
		}
		for name, err := range checks {
			if !errors.Is(err, cognition.ErrInvalid) {
				t.Errorf("%s with a %d-byte ID: error = %v, want ErrInvalid", name, len(id), err)
			}
		}
	}
}

func testCanceled(t *testing.T, s cognition.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	checks := map[string]error{}
	_, checks["Profile"] = s.Profile(ctx, "u1")
	_, checks["UpdateProfile"] = s.UpdateProfile(ctx, "u1", func(p *cognition.Profile) error { p.Interactions = 1; return nil })
	_, checks["Episodes"] = s.Episodes(ctx, "u1")
	checks["UpdateEpisodes"] = s.UpdateEpisodes(ctx, "u1", func([]cognition.Episode) (cognition.EpisodeChanges, error) {
		return cognition.EpisodeChanges{Put: []cognition.Episode{episode("u1", "a", "x", 1)}}, nil
	})
	for name, err := range checks {
		if err == nil {
			t.Errorf("%s with a cancelled context succeeded", name)
		}
	}
	if p := must(s.Profile(t.Context(), "u1"))(t); !p.IsZero() {
		t.Errorf("profile saved with a cancelled context: %+v", p)
	}
	if e := must(s.Episodes(t.Context(), "u1"))(t); len(e) != 0 {
		t.Errorf("episodes saved with a cancelled context: %v", e)
	}
}

// testConcurrent checks that Update methods are atomic: concurrent
// read-modify-write updates lose nothing.
func testConcurrent(t *testing.T, s cognition.Store) {
	ctx := t.Context()
	const n = 16
	var wg sync.WaitGroup
	errs := make(chan error, 3*n)
	for i := range n {
		wg.Add(3)
		go func() {
			defer wg.Done()
			_, err := s.UpdateProfile(ctx, "u1", func(p *cognition.Profile) error { p.Interactions++; return nil })
			errs <- err
		}()
		go func() {
			defer wg.Done()
			errs <- s.UpdateEpisodes(ctx, "u1", func(cur []cognition.Episode) (cognition.EpisodeChanges, error) {
				// Each writer adds an episode whose Mentions is the count
				// it saw, so a lost update shows as a repeated count.
				e := episode("u1", fmt.Sprintf("e%02d", i), "x", 0.5)
				e.Mentions = len(cur) + 1
				return cognition.EpisodeChanges{Put: []cognition.Episode{e}}, nil
			})
		}()
		go func() {
			defer wg.Done()
			_, err := s.UpdateIdentity(ctx, "bot", func(id *cognition.Identity) error { id.Metrics.Turns++; return nil })
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if p := must(s.Profile(ctx, "u1"))(t); p.Interactions != n {
		t.Errorf("profile Interactions = %d after %d concurrent increments", p.Interactions, n)
	}
	eps := must(s.Episodes(ctx, "u1"))(t)
	seen := map[int]bool{}
	for _, e := range eps {
		seen[e.Mentions] = true
	}
	if len(eps) != n || len(seen) != n {
		t.Errorf("%d episodes with %d distinct counts after %d concurrent updates, want %d and %d", len(eps), len(seen), n, n, n)
	}
	if id := must(s.Identity(ctx, "bot"))(t); id.Metrics.Turns != n {
		t.Errorf("identity Turns = %d after %d concurrent increments", id.Metrics.Turns, n)
	}
}

// testService runs a cognition.Service with four workers on the store:
// turns of four users learned concurrently, each user's own episodes
// recalled, every turn counted once.
func testService(t *testing.T, s cognition.Store) {
	ctx := t.Context()
	learner := cognition.LearnerFunc(func(_ context.Context, in cognition.LearnInput) (cognition.Learning, error) {
		return cognition.Learning{
			Profile:  cognition.ProfileUpdate{Interests: []string{in.Interaction.UserID}},
			Episodes: []cognition.EpisodeDraft{{Summary: in.Interaction.Messages[0].Content, Topics: []string{in.Interaction.UserID}, Importance: 0.5}},
		}, nil
	})
	// ContextTimeout -1: the test checks what Context returns, not how
	// fast; the default 100 ms budget runs out on a loaded machine.
	svc, err := cognition.New(cognition.Config{Store: s, Learner: learner, Workers: 4, ContextTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	users := []string{"ann", "ben", "cat", "dan"}
	const turns = 5
	for i := range turns {
		for _, u := range users {
			err := svc.Observe(cognition.Interaction{UserID: u, Outcome: cognition.Success, Messages: []memory.Message{
				{Role: memory.RoleUser, Content: fmt.Sprintf("%s asks question number %d about shared topic", u, i)},
			}})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := svc.Close(ctx); err != nil {
		t.Fatal(err)
	}
	if st := svc.QueueStats(); st.Done != int64(turns*len(users)) {
		t.Fatalf("queue stats = %+v, want %d tasks done", st, turns*len(users))
	}
	for _, u := range users {
		p := must(s.Profile(ctx, u))(t)
		if p.Interactions != turns {
			t.Errorf("%s's profile counts %d interactions, want %d", u, p.Interactions, turns)
		}
		cc, err := svc.Context(ctx, u, "shared topic question")
		if err != nil {
			t.Fatal(err)
		}
		if len(cc.Episodes) == 0 {
			t.Errorf("%s's context has no episodes", u)
		}
		for _, e := range cc.Episodes {
			if e.UserID != u || !strings.HasPrefix(e.Summary, u+" ") {
				t.Errorf("%s's context holds %+v", u, e.Episode)
			}
		}
	}
	id := must(s.Identity(ctx, cognition.DefaultAgent))(t)
	if id.Metrics.Turns != turns*len(users) || id.Metrics.Successes != turns*len(users) {
		t.Errorf("identity metrics = %+v, want %d turns, all successes", id.Metrics, turns*len(users))
	}
}
