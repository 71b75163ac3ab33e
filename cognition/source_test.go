package cognition_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/google/go-cmp/cmp"
)

func TestSource(t *testing.T) {
	t.Parallel()
	learner := cognition.LearnerFunc(func(_ context.Context, in cognition.LearnInput) (cognition.Learning, error) {
		return cognition.Learning{
			Profile:  cognition.ProfileUpdate{Expertise: cognition.Novice, Style: cognition.Detailed},
			Episodes: []cognition.EpisodeDraft{{Summary: in.Interaction.Messages[0].Content, Importance: 0.5}},
		}, nil
	})
	s := newService(t, cognition.Config{Learner: learner, Goals: []string{"teach"}})
	for _, q := range []string{"learning sql joins", "sql window functions explained", "baking bread"} {
		if err := s.Learn(t.Context(), interaction("u1", q)); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Learn(t.Context(), interaction("u2", "sql secrets of u2")); err != nil {
		t.Fatal(err)
	}
	asm := memory.NewAssembler(memory.AssemblerConfig{})
	if err := asm.Register("cognition", s.Source()); err != nil {
		t.Fatal(err)
	}
	if err := asm.Check("cognition.profile", "cognition.memories(2)", "cognition.identity"); err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"cognition.memories(0)", "cognition.profile(1)", "cognition.mood"} {
		if err := asm.Check(bad); err == nil {
			t.Errorf("Check(%q) accepted it", bad)
		}
	}

	turn := memory.NewTurn("c1", "sql joins")
	got, err := asm.Assemble(cognition.WithUser(t.Context(), "u1"), turn, "cognition.profile", "cognition.memories(5)", "cognition.identity")
	if err != nil {
		t.Fatal(err)
	}
	want := `## cognition.profile
Expertise: novice
Style preference: detailed

## cognition.memories(5)
"sql window functions explained" (success)
"learning sql joins" (success)

## cognition.identity
Goals: teach
Success rate: 100% over 4 turns
`
	if diff := cmp.Diff(want, got.String()); diff != "" {
		t.Errorf("assembled (-want +got):\n%s", diff)
	}
	if strings.Contains(got.String(), "u2") {
		t.Error("u1's context holds u2's episode")
	}

	_, err = asm.Assemble(t.Context(), turn, "cognition.profile")
	var re *memory.RequirementError
	if !errors.As(err, &re) || !strings.Contains(err.Error(), "WithUser") {
		t.Errorf("Assemble without a user: %v, want a RequirementError naming WithUser", err)
	}
}
