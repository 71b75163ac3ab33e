package memory

import (
	"context"
	"errors"
	"strings"

	"github.com/agentgraph/agentgraph/agent/model"
)

// Summarizer folds messages that left the conversation window into the
// running summary. Implementations are safe for concurrent use.
type Summarizer interface {
	// Summarize returns a new summary that covers previous (the summary so
	// far, empty at first) and dropped (the messages that left the window
	// since, oldest first). An error leaves the summary unchanged and the
	// messages waiting for the next attempt.
	Summarize(ctx context.Context, previous string, dropped []Message) (string, error)
}

// SummarizerFunc adapts a function to the [Summarizer] interface.
type SummarizerFunc func(ctx context.Context, previous string, dropped []Message) (string, error)

// Summarize calls f.
func (f SummarizerFunc) Summarize(ctx context.Context, previous string, dropped []Message) (string, error) {
	return f(ctx, previous, dropped)
}

// DefaultSummaryInstructions is the system prompt of an [LLMSummarizer] whose
// Instructions field is empty.
const DefaultSummaryInstructions = `You maintain the running summary of a conversation between a user and an assistant.
You receive the current summary (possibly empty) and the messages that follow it.
Write one updated summary that keeps everything from the current summary that still matters
and adds what the new messages contribute: the user's goals, facts and preferences they stated,
decisions taken, questions still open, and results the assistant gave.
Be concise and factual; write in the third person; do not invent anything.
Reply with the summary text only.`

// LLMSummarizer is a [Summarizer] that asks a language model (any
// [model.Model]: a provider model, an *agent.Client) to fold the dropped
// messages into the previous summary. A small, fast model is usually
// enough.
type LLMSummarizer struct {
	// Model writes the summary. Required.
	Model model.Model
	// ModelName is the request's model (model.Request.Model), such as an
	// alias an *agent.Client resolves ("haiku"). Empty means the model's
	// default.
	ModelName string
	// MaxTokens caps the summary (model.Request.MaxTokens). Zero means the
	// model's default.
	MaxTokens int
	// Instructions is the system prompt. Empty means
	// [DefaultSummaryInstructions].
	Instructions string
}

// Summarize implements [Summarizer]. It sends the instructions as a system
// message and the previous summary plus the dropped messages, one per line,
// as a user message. An empty reply is an error, so that a broken model
// never replaces a summary with nothing.
func (s *LLMSummarizer) Summarize(ctx context.Context, previous string, dropped []Message) (string, error) {
	if s.Model == nil {
		return "", errors.New("memory: LLMSummarizer.Model is nil; set it to a model.Model such as a provider model or an *agent.Client")
	}
	instr := s.Instructions
	if instr == "" {
		instr = DefaultSummaryInstructions
	}
	var b strings.Builder
	b.WriteString("Current summary:\n")
	if previous == "" {
		b.WriteString("(none yet)\n")
	} else {
		b.WriteString(previous)
		b.WriteString("\n")
	}
	b.WriteString("\nNew messages:\n")
	for _, m := range dropped {
		b.WriteString(m.String())
		b.WriteString("\n")
	}
	b.WriteString("\nUpdated summary:")
	resp, err := s.Model.Generate(ctx, &model.Request{
		Model:     s.ModelName,
		MaxTokens: s.MaxTokens,
		Messages:  []model.Message{model.System(instr), model.User(b.String())},
	})
	if err != nil {
		return "", err
	}
	out := strings.TrimSpace(resp.Text())
	if out == "" {
		return "", errors.New("memory: the summarizer model returned no text")
	}
	return out, nil
}
