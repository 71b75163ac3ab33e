package memory

import (
	"context"
	"errors"
	"strings"

	"github.com/tmc/langchaingo/llms"
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

// LLMSummarizer is a [Summarizer] that asks a language model, through
// langchaingo's [llms.Model] interface, to fold the dropped messages into
// the previous summary. Any langchaingo model works (OpenAI, Anthropic,
// Ollama, ...), and so does any model of the agent package. A small, fast
// model is usually enough.
type LLMSummarizer struct {
	// Model writes the summary. Required.
	Model llms.Model
	// Instructions is the system prompt. Empty means
	// [DefaultSummaryInstructions].
	Instructions string
	// Options are passed to every call, e.g. llms.WithMaxTokens(400) or
	// llms.WithModel("claude-3-haiku-20240307").
	Options []llms.CallOption
}

// Summarize implements [Summarizer]. It sends the instructions as a system
// message and the previous summary plus the dropped messages, one per line,
// as a user message. An empty reply is an error, so that a broken model
// never replaces a summary with nothing.
func (s *LLMSummarizer) Summarize(ctx context.Context, previous string, dropped []Message) (string, error) {
	if s.Model == nil {
		return "", errors.New("memory: LLMSummarizer.Model is nil; set it to a langchaingo llms.Model")
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
	resp, err := s.Model.GenerateContent(ctx, []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, instr),
		llms.TextParts(llms.ChatMessageTypeHuman, b.String()),
	}, s.Options...)
	if err != nil {
		return "", err
	}
	// Providers may return several choices (Anthropic returns a thinking
	// block with empty Content before the answer); keep the text ones.
	var out []string
	if resp != nil {
		for _, c := range resp.Choices {
			if c != nil && strings.TrimSpace(c.Content) != "" {
				out = append(out, strings.TrimSpace(c.Content))
			}
		}
	}
	if len(out) == 0 {
		return "", errors.New("memory: the summarizer model returned no text")
	}
	return strings.Join(out, "\n"), nil
}
