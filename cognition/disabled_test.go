package cognition_test

import (
	"context"
	"testing"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/memory"
)

// TestDisabled turns each component off in turn and checks that it is
// neither learned nor shown, while the others still are.
func TestDisabled(t *testing.T) {
	learner := cognition.LearnerFunc(func(_ context.Context, in cognition.LearnInput) (cognition.Learning, error) {
		return cognition.Learning{
			Profile:  cognition.ProfileUpdate{Expertise: cognition.Expert},
			Episodes: []cognition.EpisodeDraft{{Summary: "Asked about kafka partitions", Topics: []string{"kafka"}, Importance: 0.8}},
			Gaps:     []string{"kafka"},
		}, nil
	})
	turn := cognition.Interaction{UserID: "u", Outcome: cognition.Failure,
		Messages: []memory.Message{{Role: memory.RoleUser, Content: "how do kafka partitions work?"}}}
	for _, tc := range []struct {
		name                                         string
		off                                          cognition.Disabled
		wantProfile, wantEpisodes, wantIdentity, any bool
	}{
		{"none", cognition.Disabled{}, true, true, true, true},
		{"cognition", cognition.Disabled{Cognition: true}, false, false, false, false},
		{"theory_of_mind", cognition.Disabled{TheoryOfMind: true}, false, true, true, true},
		{"episodic_memory", cognition.Disabled{EpisodicMemory: true}, true, false, true, true},
		{"identity", cognition.Disabled{Identity: true}, true, true, false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			store := cognition.NewInMemoryStore()
			svc, err := cognition.New(cognition.Config{Store: store, Learner: learner, Disabled: tc.off, Goals: []string{"help with data"}, ContextTimeout: -1})
			if err != nil {
				t.Fatal(err)
			}
			defer svc.Close(t.Context())
			if err := svc.Learn(t.Context(), turn); err != nil {
				t.Fatal(err)
			}
			if err := svc.Observe(turn); err != nil {
				t.Fatal(err)
			}
			if err := svc.Flush(t.Context()); err != nil {
				t.Fatal(err)
			}
			p, _ := store.Profile(t.Context(), "u")
			eps, _ := store.Episodes(t.Context(), "u")
			id, _ := store.Identity(t.Context(), cognition.DefaultAgent)
			if got := p.Expertise == cognition.Expert; got != tc.wantProfile {
				t.Errorf("profile stored = %v, want %v", got, tc.wantProfile)
			}
			if got := len(eps) > 0; got != tc.wantEpisodes {
				t.Errorf("episodes stored = %v, want %v", got, tc.wantEpisodes)
			}
			if got := id.Metrics.Turns == 2 && len(id.Gaps) == 1; got != tc.wantIdentity {
				t.Errorf("identity stored = %+v, want learned %v", id, tc.wantIdentity)
			}
			if got := svc.Monitor().Snapshot().Turns > 0; got != tc.any {
				t.Errorf("monitor recorded turns = %v, want %v", got, tc.any)
			}
			cc, err := svc.Context(t.Context(), "u", "kafka partitions")
			if err != nil {
				t.Fatal(err)
			}
			if got := cc.Profile.Expertise == cognition.Expert; got != tc.wantProfile {
				t.Errorf("context profile = %v, want %v", got, tc.wantProfile)
			}
			if got := len(cc.Episodes) > 0; got != tc.wantEpisodes {
				t.Errorf("context episodes = %v, want %v", got, tc.wantEpisodes)
			}
			if got := len(cc.Identity.Gaps) > 0 && len(cc.Identity.Goals) > 0; got != tc.wantIdentity {
				t.Errorf("context identity = %+v, want shown %v", cc.Identity, tc.wantIdentity)
			}
			if got := cc.Render() != ""; got != tc.any {
				t.Errorf("Render() = %q, want non-empty %v", cc.Render(), tc.any)
			}
		})
	}
}
