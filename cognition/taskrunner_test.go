package cognition_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentgraph/agentgraph/cognition"
	"github.com/agentgraph/agentgraph/memory"
	"github.com/agentgraph/agentgraph/resilience"
)

// TestTasksDeadLetter learns through a task queue: a turn whose learning
// keeps failing ends dead after its attempts, one failing for good at
// once, and both show in TaskCounts; a good turn is learned.
func TestTasksDeadLetter(t *testing.T) {
	q := cognition.NewMemoryTaskQueue(0, nil)
	learner := cognition.LearnerFunc(func(_ context.Context, in cognition.LearnInput) (cognition.Learning, error) {
		switch in.Interaction.Messages[0].Content {
		case "flaky":
			return cognition.Learning{}, errors.New("model unavailable")
		case "bad":
			return cognition.Learning{}, resilience.MarkPermanent(errors.New("reply never fits"))
		}
		return cognition.Learning{Profile: cognition.ProfileUpdate{Expertise: cognition.Expert}}, nil
	})
	svc, err := cognition.New(cognition.Config{Learner: learner, Tasks: q, TaskAttempts: 2, TaskPoll: 10 * time.Millisecond, ContextTimeout: -1})
	if err != nil {
		t.Fatal(err)
	}
	defer svc.Close(t.Context())
	for _, text := range []string{"flaky", "bad", "good"} {
		in := cognition.Interaction{UserID: "u", Messages: []memory.Message{{Role: memory.RoleUser, Content: text}}}
		if err := svc.Observe(in); err != nil {
			t.Fatal(err)
		}
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Minute)
	defer cancel()
	if err := svc.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	c, err := svc.TaskCounts(t.Context())
	if err != nil || c != (cognition.TaskCounts{Dead: 2}) {
		t.Errorf("TaskCounts = %+v, %v; want 2 dead", c, err)
	}
	dead, _ := q.Dead(t.Context(), 10)
	if len(dead) != 2 || dead[0].Attempts != 2 || dead[1].Attempts != 1 {
		t.Errorf("dead tasks = %+v; want the flaky turn after 2 attempts and the bad one after 1", dead)
	}
	cc, _ := svc.Context(t.Context(), "u", "")
	if cc.Profile.Expertise != cognition.Expert {
		t.Errorf("profile = %+v; want the good turn learned", cc.Profile)
	}
	if err := svc.Close(t.Context()); err != nil {
		t.Fatal(err)
	}
	in := cognition.Interaction{UserID: "u", Messages: []memory.Message{{Role: memory.RoleUser, Content: "late"}}}
	if err := svc.Observe(in); !errors.Is(err, cognition.ErrClosed) {
		t.Errorf("Observe after Close = %v, want ErrClosed", err)
	}
}
