package agent

import (
	"context"
	"errors"
	"strings"
)

// WriteInput is what Write shows the model.
type WriteInput struct {
	// Query is the user's message. Required.
	Query string
	// Context is the assembled conversation context. Optional.
	Context string
	// Observations are the results to answer from.
	Observations []Observation
	// Draft is an answer to polish: the supervisor's response, a
	// synthesis, or a blocked or clarifying message. Optional.
	Draft string
}

// Write asks the model for the final answer to the user, in free text. It
// renders WritePrompt (with WriterSystem) and calls Client.Complete, so
// WithStreaming delivers the answer as it is written.
func Write(ctx context.Context, c *Client, in WriteInput, opts ...Option) (*Response, error) {
	if strings.TrimSpace(in.Query) == "" {
		return nil, errors.New("agent: Write: WriteInput.Query is empty; pass the user's message")
	}
	prompt, err := WritePrompt(in)
	if err != nil {
		return nil, err
	}
	return c.Complete(ctx, prompt, append([]Option{WithSystem(WriterSystem)}, opts...)...)
}
