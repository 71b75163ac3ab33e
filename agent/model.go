package agent

import (
	"context"

	"github.com/tmc/langchaingo/llms"
)

var _ llms.Model = (*Client)(nil)

// GenerateContent makes the Client an llms.Model, so that code written
// against langchaingo (chains, agents, a document summariser taking an
// llms.Model) gets model aliases and the resilience policy. The model is
// resolved from llms.WithModel (a registry name, alias or
// "provider:model-id"; Config.DefaultModel when absent); the other options
// go to the provider as they are. Use UsageOf to read the usage of the
// response.
func (c *Client) GenerateContent(ctx context.Context, msgs []llms.MessageContent, options ...llms.CallOption) (*llms.ContentResponse, error) {
	var co llms.CallOptions
	for _, o := range options {
		o(&co)
	}
	o := c.options(nil)
	if co.Model != "" {
		o.model = co.Model
	}
	spec, m, err := c.resolve(o.model)
	if err != nil {
		return nil, err
	}
	opts := append(append([]llms.CallOption(nil), options...), llms.WithModel(spec.ID))
	return c.invoke(ctx, spec, m, msgs, opts, nil, false)
}

// Call makes the Client an llms.Model; see GenerateContent.
func (c *Client) Call(ctx context.Context, prompt string, options ...llms.CallOption) (string, error) {
	return llms.GenerateFromSinglePrompt(ctx, c, prompt, options...)
}
