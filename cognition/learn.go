package cognition

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/agentgraph/agentgraph/agent"
	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/memory"
)

// Interaction is one finished turn, as [Service.Observe] receives it.
type Interaction struct {
	// UserID is the user the turn was with. Required.
	UserID string
	// ConversationID is the conversation the turn belongs to.
	ConversationID string
	// Messages are the turn's messages (at least the user's query and the
	// answer; earlier ones give the learner context). Required.
	Messages []memory.Message
	// Outcome is how the turn ended; empty if not known.
	Outcome Outcome
	// Latency is how long the turn took.
	Latency time.Duration
	// Tokens is the turn's token usage (model.Usage.Total).
	Tokens int
	// Tools are how the turn's tool calls ended, one per call.
	Tools []ToolOutcome
	// Time is when the turn ended. Zero means when Observe was called.
	Time time.Time
}

// ToolOutcome is how one tool call of a turn ended: which tool, whether it
// failed and how long it took. The call as a model asks for it is
// model.ToolCall; this is what the monitor learns from afterwards.
type ToolOutcome struct {
	// Name is the tool's name.
	Name string
	// Err is the failure message; empty if the call succeeded.
	Err string
	// Latency is how long the call took.
	Latency time.Duration
}

func (in *Interaction) validate() error {
	if in.UserID == "" {
		return fmt.Errorf("%w: Interaction.UserID is empty; set it to the user the turn was with", ErrInvalid)
	}
	if len(in.Messages) == 0 {
		return fmt.Errorf("%w: Interaction.Messages is empty; pass at least the user's query and the answer", ErrInvalid)
	}
	switch in.Outcome {
	case "", Success, Partial, Failure:
	default:
		return fmt.Errorf("%w: Interaction.Outcome %q is not one of %q, %q, %q", ErrInvalid, in.Outcome, Success, Partial, Failure)
	}
	for i, c := range in.Tools {
		if c.Name == "" {
			return fmt.Errorf("%w: Interaction.Tools[%d].Name is empty", ErrInvalid, i)
		}
	}
	return nil
}

// Learning is what a [Learner] draws from one turn: an update to the
// user's profile, episodes worth remembering, and knowledge gaps.
type Learning struct {
	// Profile updates the user's profile; empty fields leave it alone.
	Profile ProfileUpdate `json:"profile"`
	// Episodes are the things worth remembering about this turn; often
	// none or one.
	Episodes []EpisodeDraft `json:"episodes" validate:"max=5,dive"`
	// Gaps are topics the assistant could not help with in this turn.
	Gaps []string `json:"gaps,omitempty" validate:"max=5,dive,min=1,max=60"`
}

// ProfileUpdate is what one turn says about the user.
type ProfileUpdate struct {
	// Expertise is the user's expertise, if the turn shows it.
	Expertise Expertise `json:"expertise,omitempty" jsonschema:"enum=novice,enum=intermediate,enum=expert" validate:"omitempty,oneof=novice intermediate expert"`
	// Style is the user's preferred communication style, if the turn shows
	// it.
	Style Style `json:"style,omitempty" jsonschema:"enum=concise,enum=detailed,enum=technical" validate:"omitempty,oneof=concise detailed technical"`
	// Interests are domain interests the turn shows.
	Interests []string `json:"interests,omitempty" validate:"max=10,dive,min=1,max=60"`
	// Preferences are preferences the user stated, by key.
	Preferences map[string]string `json:"preferences,omitempty" validate:"max=10,dive,keys,min=1,max=40,endkeys,min=1,max=200"`
}

// EpisodeDraft is an episode as a learner proposes it, before it is merged
// with the user's stored episodes.
type EpisodeDraft struct {
	// Summary says what happened in one or two sentences, on one line of
	// at most [MaxSummaryLen] visible characters.
	Summary string `json:"summary" validate:"required,max=500"`
	// Topics are a few lower-case keywords.
	Topics []string `json:"topics,omitempty" validate:"max=10,dive,min=1,max=60"`
	// Outcome is how it ended for the user. Empty means the turn's
	// outcome.
	Outcome Outcome `json:"outcome,omitempty" jsonschema:"enum=success,enum=partial,enum=failure" validate:"omitempty,oneof=success partial failure"`
	// Importance is how much it will matter in later conversations, from
	// 0 to 1.
	Importance float64 `json:"importance" validate:"gte=0,lte=1"`
}

// Validate checks what the validate tags cannot: episode summaries that
// are not blank and are each one line of visible characters within
// [MaxSummaryLen], episode outcomes that are empty or one of the
// [Outcome] values, and interests, preference keys and values and gaps that are each one line of
// visible characters within [MaxInterestLen], [MaxPreferenceKeyLen] and
// [MaxPreferenceValueLen] (learning leaves out those that are not, and
// these are rendered into later prompts).
func (l Learning) Validate() error {
	for i, e := range l.Episodes {
		s := strings.TrimSpace(e.Summary)
		if s == "" {
			return fmt.Errorf("episodes[%d].summary is blank; write what happened or leave the episode out", i)
		}
		if why := checkLearned(s, MaxSummaryLen); why != "" {
			return fmt.Errorf("episodes[%d].summary %s", i, why)
		}
		if !e.Outcome.valid() {
			return fmt.Errorf("episodes[%d].outcome %q is not one of %q, %q, %q; leave it empty for the turn's outcome", i, e.Outcome, Success, Partial, Failure)
		}
	}
	for i, s := range l.Profile.Interests {
		if why := checkLearned(strings.TrimSpace(s), MaxInterestLen); why != "" {
			return fmt.Errorf("profile.interests[%d] %s", i, why)
		}
	}
	if len(l.Profile.Preferences) > MaxPreferences {
		return fmt.Errorf("profile.preferences has %d keys, more than %d; keep the ones the user stated", len(l.Profile.Preferences), MaxPreferences)
	}
	for k, v := range l.Profile.Preferences {
		if why := checkLearned(strings.TrimSpace(k), MaxPreferenceKeyLen); why != "" {
			return fmt.Errorf("profile.preferences key %q %s", k, why)
		}
		if why := checkLearned(strings.TrimSpace(v), MaxPreferenceValueLen); why != "" {
			return fmt.Errorf("profile.preferences[%q] %s", k, why)
		}
	}
	for i, s := range l.Gaps {
		if why := checkLearned(strings.TrimSpace(s), MaxInterestLen); why != "" {
			return fmt.Errorf("gaps[%d] %s", i, why)
		}
	}
	return nil
}

// A Learner draws a [Learning] from a turn, together with what is already
// known about the user. [LLMLearner] asks a language model; tests and
// rule-based deployments implement it directly. Implementations are safe
// for concurrent use.
type Learner interface {
	Learn(ctx context.Context, in LearnInput) (Learning, error)
}

// LearnInput is what a [Learner] sees.
type LearnInput struct {
	// Interaction is the turn.
	Interaction Interaction
	// Profile is the user's current profile.
	Profile Profile
	// Related are the user's stored episodes most related to the turn, so
	// the learner can avoid repeating them.
	Related []Recalled
}

// LLMLearner is a [Learner] that asks a language model for a [Learning]
// through [agent.Call], which validates the reply against the schema and
// the validate tags and asks again with the error when it does not fit.
type LLMLearner struct {
	// Model answers: any model.Model, such as an *agent.Client or a
	// provider model. Required.
	Model model.Model
	// Options are passed to every call (agent.WithModel("haiku") picks a
	// cheap model; agent.WithSystem replaces [LearnerSystem]).
	Options []agent.Option
}

// LearnerSystem is the system prompt of [LLMLearner].
const LearnerSystem = `You maintain long-term memory for an assistant. From one conversation turn, extract:
- profile: the user's expertise (novice, intermediate, expert), preferred style (concise, detailed, technical), domain interests, and preferences they stated. Leave out what the turn does not show.
- episodes: facts or events worth remembering in later conversations with this user, each a self-contained summary of one or two sentences with topics and an importance from 0 to 1. Do not repeat what is already remembered unless it changed. Return none when nothing is worth keeping.
- gaps: topics the assistant could not help with, if any.`

// MarkerLearn starts every prompt of [LLMLearner], so that a rule-based
// model can recognise it.
const MarkerLearn = "# Learn from turn"

// Learn implements [Learner].
func (l *LLMLearner) Learn(ctx context.Context, in LearnInput) (Learning, error) {
	if l.Model == nil {
		return Learning{}, errors.New("cognition: LLMLearner.Model is nil; set it to a model.Model such as an *agent.Client")
	}
	opts := append([]agent.Option{agent.WithSystem(LearnerSystem)}, l.Options...)
	res, err := agent.Call[Learning](ctx, l.Model, LearnPrompt(in), opts...)
	if err != nil {
		return Learning{}, err
	}
	return res.Value, nil
}

// LearnPrompt renders the prompt [LLMLearner] sends: the marker line, then
// "## " sections for the current profile, what is remembered, and the turn.
// Text that came from users, tools or the model (what is remembered, the
// turn's outcome, its tools' names and errors, its messages and their
// roles) is quoted as Go strings, one line each, so that none of it can
// pose as a section or an instruction of the prompt: a message reads
// "user": "...", a tool's error Tool "name" failed: "...".
func LearnPrompt(in LearnInput) string {
	var b strings.Builder
	b.WriteString(MarkerLearn)
	b.WriteString("\n\n## Profile\n")
	if p := in.Profile.Render(); p != "" {
		b.WriteString(p)
	} else {
		b.WriteString("(nothing known yet)")
	}
	b.WriteString("\n\n## Remembered\n")
	if len(in.Related) == 0 {
		b.WriteString("(nothing related)")
	}
	for i, r := range in.Related {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "- %q", r.Summary)
	}
	b.WriteString("\n\n## Turn\n")
	if in.Interaction.Outcome != "" {
		fmt.Fprintf(&b, "Outcome: %q\n", in.Interaction.Outcome)
	}
	for _, c := range in.Interaction.Tools {
		if c.Err != "" {
			fmt.Fprintf(&b, "Tool %q failed: %q\n", c.Name, c.Err)
		}
	}
	for i, m := range in.Interaction.Messages {
		if i > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "%q: %q", m.Role, m.Content)
	}
	return b.String()
}

// LearnerFunc adapts a function to the [Learner] interface.
type LearnerFunc func(ctx context.Context, in LearnInput) (Learning, error)

// Learn calls f.
func (f LearnerFunc) Learn(ctx context.Context, in LearnInput) (Learning, error) { return f(ctx, in) }
