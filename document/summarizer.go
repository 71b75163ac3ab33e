package document

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/agentgraph/agentgraph/agent/model"
)

// Summarizer writes the summaries of a document: one per chunk (the map
// step), then one for the document from the chunk summaries (the reduce
// step). Implementations are safe for concurrent use; the [Processor]
// calls SummarizeChunk for several chunks at once.
type Summarizer interface {
	// SummarizeChunk returns the summary of chunk, a piece of doc.
	SummarizeChunk(ctx context.Context, doc Document, chunk Chunk) (string, error)
	// Combine returns one summary covering summaries, which summarize
	// consecutive parts of doc, in order. The Processor calls it on
	// groups of chunk summaries, then on the results, until one summary
	// is left.
	Combine(ctx context.Context, doc Document, summaries []string) (string, error)
}

// Default prompts of an [LLMSummarizer].
const (
	// DefaultChunkInstructions is the system prompt for a chunk summary.
	DefaultChunkInstructions = `You summarize one part of a document that a user uploaded to a conversation.
Write 2 to 4 sentences that say what this part contains: its topics, key facts, figures, names and conclusions,
so that an assistant can decide whether to read the part to answer a question.
Be factual and concise; do not invent anything; reply with the summary only.`
	// DefaultCombineInstructions is the system prompt for a document
	// summary made from part summaries.
	DefaultCombineInstructions = `You summarize a document that a user uploaded to a conversation, from the summaries of its parts, in order.
Write one summary of at most 6 sentences: what the document is, its main topics and its key facts,
so that an assistant can decide whether the document helps answer a question.
Be factual and concise; do not invent anything; reply with the summary only.`
)

// LLMSummarizer is a [Summarizer] that asks a language model: any
// [model.Model]. An *agent.Client adds the retries, timeouts and circuit
// breaking of package resilience, which summarizing many chunks benefits
// from. A small, fast model is usually enough.
type LLMSummarizer struct {
	// Model writes the summaries. Required.
	Model model.Model
	// ModelName is the request's model (model.Request.Model), such as an
	// alias an *agent.Client resolves ("haiku"). Empty means the model's
	// default.
	ModelName string
	// MaxTokens caps each summary (model.Request.MaxTokens). Zero means
	// the model's default.
	MaxTokens int
	// ChunkInstructions is the system prompt for chunk summaries. Empty
	// means [DefaultChunkInstructions].
	ChunkInstructions string
	// CombineInstructions is the system prompt for combined summaries.
	// Empty means [DefaultCombineInstructions].
	CombineInstructions string
}

// SummarizeChunk implements [Summarizer].
func (s *LLMSummarizer) SummarizeChunk(ctx context.Context, doc Document, chunk Chunk) (string, error) {
	prompt := fmt.Sprintf("Document: %q (%s)\nPart %d of %d:\n\n%s\n\nSummary of this part:",
		doc.Name, doc.ContentType, chunk.Index+1, max(doc.Chunks, chunk.Index+1), chunk.Text)
	return s.generate(ctx, cmpOr(s.ChunkInstructions, DefaultChunkInstructions), prompt)
}

// Combine implements [Summarizer].
func (s *LLMSummarizer) Combine(ctx context.Context, doc Document, summaries []string) (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "Document: %q (%s)\nSummaries of its parts, in order:\n", doc.Name, doc.ContentType)
	for i, sum := range summaries {
		fmt.Fprintf(&b, "\n%d. %s", i+1, sum)
	}
	b.WriteString("\n\nSummary:")
	return s.generate(ctx, cmpOr(s.CombineInstructions, DefaultCombineInstructions), b.String())
}

func (s *LLMSummarizer) generate(ctx context.Context, system, prompt string) (string, error) {
	if s.Model == nil {
		return "", errors.New("document: LLMSummarizer.Model is nil; set it to a model.Model such as a provider model or an *agent.Client")
	}
	resp, err := s.Model.Generate(ctx, &model.Request{
		Model:     s.ModelName,
		MaxTokens: s.MaxTokens,
		Messages:  []model.Message{model.System(system), model.User(prompt)},
	})
	if err != nil {
		return "", err
	}
	out := strings.TrimSpace(resp.Text())
	if out == "" {
		return "", errors.New("document: the summarizer model returned no text")
	}
	return out, nil
}

func cmpOr(s, def string) string {
	if s == "" {
		return def
	}
	return s
}
