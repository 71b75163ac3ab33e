package agent

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/agentgraph/agentgraph/agent/internal/lcmodel"
	"github.com/agentgraph/agentgraph/agent/model"
)

var _ model.Model = (*Client)(nil)

// Generate makes the Client a model.Model. The request's Model is resolved
// through the client's registry (a name, alias or "provider:model-id";
// empty means Config.DefaultModel), and the call runs under the client's
// resilience policy, as every call of the client does.
//
// The request maps onto the model's spec: MaxTokens zero means the spec's
// or the client's cap; Thinking nil means the spec's default, Disabled
// turns it off, otherwise it is on with Budget (zero: the spec's budget) and
// needs a thinking-capable model (ErrThinkingUnsupported). Messages, tools,
// tool choice, stop sequences and the response format go to the provider's
// model as they are; the provider model receives the spec's ID as
// Request.Model.
func (c *Client) Generate(ctx context.Context, req *model.Request) (*model.Response, error) {
	return c.generateModel(ctx, req, nil)
}

// Stream makes the Client a model.Model; see Generate. Text, thinking and
// tool-call deltas arrive as chunks of their own kinds, then the complete
// response. An attempt that fails before its first chunk is retried under
// the resilience policy; once a chunk has been yielded, a failure ends the
// stream. Stream does not write into a graph run's stream: the caller
// forwards what it wants (graph.Generate does).
func (c *Client) Stream(ctx context.Context, req *model.Request) iter.Seq2[model.Chunk, error] {
	return lcmodel.Stream(ctx, func(ctx context.Context, emit func(model.Chunk) error) (*model.Response, error) {
		return c.generateModel(ctx, req, emit)
	})
}

func (c *Client) generateModel(ctx context.Context, req *model.Request, emit func(model.Chunk) error) (*model.Response, error) {
	if req == nil {
		return nil, errors.New("agent: Client.Generate: nil request")
	}
	o := c.options(nil)
	if req.Model != "" {
		o.model = req.Model
	}
	spec, m, err := c.resolve(o.model)
	if err != nil {
		return nil, err
	}
	if len(req.Messages) == 0 {
		return nil, fmt.Errorf("agent: model %q: the request has no messages: add at least one user message", spec.Name)
	}
	o.maxTokens = req.MaxTokens
	if req.Temperature != nil {
		o.temperature, o.hasTemperature = *req.Temperature, true
	}
	if t := req.Thinking; t != nil {
		if t.Disabled {
			o.thinking = thinkingOff
		} else {
			o.thinking, o.thinkingBudget = thinkingOn, t.Budget
		}
	}
	o.emit, o.final = emit, emit != nil
	r := *req
	return c.generate(ctx, spec, m, &r, &o)
}
