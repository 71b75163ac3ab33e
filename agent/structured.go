package agent

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"unicode/utf8"

	"github.com/agentgraph/agentgraph/agent/model"
	"go.uber.org/zap"
)

// Result is the outcome of a successful Call.
type Result[T any] struct {
	// Value is the validated value.
	Value T
	// Thinking is the extended thinking of the accepted reply, if any.
	Thinking string
	// Usage sums the usage of every attempt, the rejected ones included.
	Usage model.Usage
	// Attempts are the replies rejected before the accepted one.
	Attempts []Attempt
	// Response is the model response that was accepted.
	Response *Response
}

// Call asks a model for a value of type T and returns it validated.
//
// It builds T's JSON Schema once per type (see SchemaOf) and appends an
// instruction with it to the system prompt. It extracts the JSON from the
// reply (bare, fenced or surrounded by prose; see ExtractJSON), checks it
// against the schema, decodes it strictly into T (unknown fields are an
// error), runs T's validate tags (go-playground/validator) and its Validate
// method if T implements Validator. A rejected reply is retried with the
// error and the reply fed back in the prompt, up to WithMaxAttempts
// (default 3) attempts; then Call returns a *StructuredOutputError holding
// every attempt. Model JSON mode or tool calling is used where available
// (see OutputMode). The usage of all attempts is in the Result, also when
// an error is returned.
//
// Errors of the model call itself (after the resilience policy has given
// up) end Call at once with that error.
//
// m is any model.Model. A *Client resolves WithModel through its registry
// and uses each model's capabilities (JSON mode where the spec has it). Any
// other model gets the request in the model vocabulary: OutputAuto and
// OutputJSON ask for JSON through Request.ResponseFormat with T's schema
// (the adapter uses the provider's JSON mode where it has one), OutputTool
// offers one tool whose parameters are the schema and forces it through
// Request.ToolChoice; WithModel sets Request.Model, and WithStreaming
// streams through Model.Stream. Config defaults do not apply there: without
// WithMaxAttempts, Call makes 3 attempts.
func Call[T any](ctx context.Context, m model.Model, prompt string, opts ...Option) (Result[T], error) {
	if c, ok := m.(*Client); ok && c != nil {
		return callClient[T](ctx, c, prompt, opts)
	}
	if m == nil {
		return Result[T]{}, errors.New("agent: Call: the model is nil: pass a model.Model such as a *Client or a provider model")
	}
	return callModel[T](ctx, m, prompt, opts)
}

// callClient is Call through a Client.
func callClient[T any](ctx context.Context, c *Client, prompt string, opts []Option) (Result[T], error) {
	var res Result[T]
	schema, err := schemaFor(reflect.TypeFor[T]())
	if err != nil {
		return res, err
	}
	o := c.options(opts)
	spec, m, err := c.resolve(o.model)
	if err != nil {
		return res, err
	}
	attempts := o.maxAttempts
	if attempts <= 0 {
		attempts = c.maxAttempts
	}

	system := schema.systemMessage(o.system)
	mode := o.outputMode
	if mode == OutputAuto {
		mode = OutputPrompt
		if spec.Capabilities.JSONMode && schema.want == '{' {
			mode = OutputJSON
		}
	}
	req := model.Request{}
	switch mode {
	case OutputJSON:
		req.ResponseFormat = &model.ResponseFormat{Name: schema.tool.Name, Schema: schema.json}
	case OutputTool:
		req.Tools = []model.ToolDef{schema.tool}
		req.ToolChoice = model.ToolChoice{Mode: model.ToolNamed, Name: schema.tool.Name}
	}

	log := c.log.With(zap.String("type", schema.name), zap.String("model", spec.Name), zap.Int("max_attempts", attempts))
	return attemptLoop[T](ctx, schema, prompt, attempts, o.check, log, func(ctx context.Context, current string) (*Response, string, error) {
		// Each attempt is a request of its own: the model may keep the
		// one it was given (see model.Model).
		req := req
		req.Messages = []model.Message{system, model.User(current)}
		mresp, err := c.generate(ctx, spec, m, &req, &o)
		if err != nil {
			return nil, "", err
		}
		resp := responseOf(spec, mresp)
		raw := resp.Text
		if mode == OutputTool {
			for _, tc := range resp.ToolCalls {
				if tc.Name == schema.tool.Name {
					raw = string(tc.Arguments)
					break
				}
			}
		}
		return resp, raw, nil
	})
}

// attemptLoop is Call's attempt loop, whatever the model: call makes one
// attempt with a prompt and returns the reply and the text to check (the
// reply's text, or the arguments of the forced tool call). A rejected reply
// is logged to log and retried with RetryPrompt, up to attempts attempts.
func attemptLoop[T any](ctx context.Context, schema *typeSchema, prompt string, attempts int, check func(any) error, log *zap.Logger,
	call func(ctx context.Context, prompt string) (*Response, string, error)) (Result[T], error) {
	var res Result[T]
	current := prompt
	for n := 1; n <= attempts; n++ {
		resp, raw, err := call(ctx, current)
		if err != nil {
			return res, fmt.Errorf("agent: Call[%s] attempt %d: %w", schema.name, n, err)
		}
		res.Usage = res.Usage.Merge(resp.Usage)
		var v T
		rej := schema.check(raw, &v)
		if rej == nil && check != nil {
			if err := check(v); err != nil {
				rej = &rejection{FailureSchemaValidation, validateMessage(err)}
			}
		}
		if rej == nil {
			res.Value, res.Thinking, res.Response = v, resp.Thinking, resp
			return res, nil
		}
		res.Attempts = append(res.Attempts, Attempt{Number: n, Raw: raw, Kind: rej.kind, Message: rej.message, Usage: resp.Usage})
		log.Warn("structured reply rejected", zap.Int("attempt", n), zap.String("kind", string(rej.kind)), zap.String("error", rej.message))
		current = RetryPrompt(prompt, rej.kind, rej.message, raw)
	}
	return res, &StructuredOutputError{Type: schema.name, Attempts: res.Attempts, Usage: res.Usage}
}

// RetryPrompt is the prompt of the attempt after a rejected reply: the
// original prompt, then the error and (up to 1000 characters of) the
// rejected output, asking for a corrected reply.
func RetryPrompt(original string, kind FailureKind, details, raw string) string {
	errorType := "Schema Validation Error"
	if kind == FailureJSONParse {
		errorType = "JSON Parse Error"
	}
	return original + "\n\n---\nPREVIOUS ATTEMPT FAILED - Please fix and try again.\n\n" +
		"Error Type: " + errorType + "\n" +
		"Error Details: " + details + "\n\n" +
		"Your previous output was:\n```\n" + truncateRunes(raw, 1000) + "\n```\n\n" +
		"Please provide a corrected JSON response that fixes these issues."
}

func truncateRunes(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}

// callModel is Call through any model.Model, in the model vocabulary.
func callModel[T any](ctx context.Context, m model.Model, prompt string, opts []Option) (Result[T], error) {
	var res Result[T]
	schema, err := schemaFor(reflect.TypeFor[T]())
	if err != nil {
		return res, err
	}
	o := options{}
	for _, f := range opts {
		f(&o)
	}
	attempts := o.maxAttempts
	if attempts <= 0 {
		attempts = defaultMaxAttempts
	}
	req := o.request()
	name := schema.tool.Name
	mode := o.outputMode
	if mode == OutputAuto {
		mode = OutputPrompt
		if schema.want == '{' {
			mode = OutputJSON
		}
	}
	switch mode {
	case OutputJSON:
		req.ResponseFormat = &model.ResponseFormat{Name: name, Schema: schema.json}
	case OutputTool:
		req.Tools = []model.ToolDef{schema.tool}
		req.ToolChoice = model.ToolChoice{Mode: model.ToolNamed, Name: name}
	}
	system := schema.systemMessage(o.system)

	return attemptLoop[T](ctx, schema, prompt, attempts, o.check, zap.NewNop(), func(ctx context.Context, current string) (*Response, string, error) {
		// Each attempt is a request of its own: the model may keep the
		// one it was given (see model.Model).
		req := req
		req.Messages = []model.Message{system, model.User(current)}
		mresp, err := generateOnce(ctx, m, &req, &o)
		if err != nil {
			return nil, "", err
		}
		resp := responseFromModel(o.model, mresp)
		raw := resp.Text
		if mode == OutputTool {
			for _, tc := range mresp.ToolCalls() {
				if tc.Name == name {
					raw = string(tc.Arguments)
					break
				}
			}
		}
		return resp, raw, nil
	})
}

// request returns the model request the options describe, without messages.
func (o *options) request() model.Request {
	req := model.Request{Model: o.model, MaxTokens: o.maxTokens}
	if o.hasTemperature {
		req.Temperature = &o.temperature
	}
	switch o.thinking {
	case thinkingOn:
		req.Thinking = &model.Thinking{Budget: o.thinkingBudget}
	case thinkingOff:
		req.Thinking = &model.Thinking{Disabled: true}
	}
	return req
}

// Complete asks m for a free-text answer to one user prompt, with the
// WithSystem prompt, if any, as the system message. WithStreaming delivers
// the answer as it is written. A *Client resolves WithModel through its
// registry and runs the call under its resilience policy; any other
// model.Model gets the request in the model vocabulary (WithModel sets
// Request.Model).
func Complete(ctx context.Context, m model.Model, text string, opts ...Option) (*Response, error) {
	if c, ok := m.(*Client); ok && c != nil {
		o := c.options(opts)
		spec, m, err := c.resolve(o.model)
		if err != nil {
			return nil, err
		}
		resp, err := c.generate(ctx, spec, m, &model.Request{Messages: prompt(o.system, text)}, &o)
		if err != nil {
			return nil, err
		}
		return responseOf(spec, resp), nil
	}
	if m == nil {
		return nil, errors.New("agent: Complete: the model is nil: pass a model.Model such as a *Client or a provider model")
	}
	o := options{}
	for _, f := range opts {
		f(&o)
	}
	req := o.request()
	if o.system != "" {
		req.Messages = append(req.Messages, model.System(o.system))
	}
	req.Messages = append(req.Messages, model.User(text))
	resp, err := generateOnce(ctx, m, &req, &o)
	if err != nil {
		return nil, err
	}
	return responseFromModel(o.model, resp), nil
}

// generateOnce makes one call of m, streamed to the WithStreaming callback
// when there is one.
func generateOnce(ctx context.Context, m model.Model, req *model.Request, o *options) (*model.Response, error) {
	if !o.stream {
		return m.Generate(ctx, req)
	}
	for c, err := range m.Stream(ctx, req) {
		if err != nil {
			return nil, err
		}
		switch c.Kind {
		case model.ChunkDone:
			if c.Response == nil {
				return nil, model.ErrIncompleteStream
			}
			return c.Response, nil
		case model.ChunkText, model.ChunkThinking:
			if c.Text == "" {
				continue
			}
		case model.ChunkToolCall:
			if c.ToolCall == nil {
				continue
			}
		default:
			continue
		}
		if o.onChunk == nil {
			continue
		}
		if err := o.onChunk(ctx, c); err != nil {
			return nil, err
		}
	}
	return nil, model.ErrIncompleteStream
}

// responseFromModel describes a reply of the model vocabulary as a Response.
func responseFromModel(name string, r *model.Response) *Response {
	resp := &Response{Text: r.Text(), Thinking: r.Message.Thinking(), ToolCalls: r.ToolCalls(),
		StopReason: string(r.FinishReason), Usage: r.Usage, Model: name, ModelID: r.Model, ResponseID: r.ID, Message: r.Message}
	if resp.Model == "" {
		resp.Model = r.Model
	}
	return resp
}
