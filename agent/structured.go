package agent

import (
	"context"
	"fmt"
	"reflect"
	"unicode/utf8"

	"github.com/tmc/langchaingo/llms"
	"go.uber.org/zap"
)

// Result is the outcome of a successful Call.
type Result[T any] struct {
	// Value is the validated value.
	Value T
	// Thinking is the extended thinking of the accepted reply, if any.
	Thinking string
	// Usage sums the usage of every attempt, the rejected ones included.
	Usage TokenUsage
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
func Call[T any](ctx context.Context, c *Client, prompt string, opts ...Option) (Result[T], error) {
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
	var extra []llms.CallOption
	switch mode {
	case OutputJSON:
		extra = []llms.CallOption{llms.WithJSONMode()}
	case OutputTool:
		extra = []llms.CallOption{
			llms.WithTools([]llms.Tool{schema.tool}),
			llms.WithToolChoice(llms.ToolChoice{Type: "function", Function: &llms.FunctionReference{Name: schema.tool.Function.Name}}),
		}
	}

	current := prompt
	for n := 1; n <= attempts; n++ {
		resp, err := c.generateWith(ctx, spec, m, withSystem(system, current), &o, extra)
		if err != nil {
			return res, fmt.Errorf("agent: Call[%s] attempt %d: %w", schema.name, n, err)
		}
		res.Usage = res.Usage.Merge(resp.Usage)
		raw := resp.Text
		if mode == OutputTool {
			for _, tc := range resp.ToolCalls {
				if tc.FunctionCall != nil && tc.FunctionCall.Name == schema.tool.Function.Name {
					raw = tc.FunctionCall.Arguments
					break
				}
			}
		}
		var v T
		rej := schema.check(raw, &v)
		if rej == nil {
			res.Value, res.Thinking, res.Response = v, resp.Thinking, resp
			return res, nil
		}
		res.Attempts = append(res.Attempts, Attempt{Number: n, Raw: raw, Kind: rej.kind, Message: rej.message, Usage: resp.Usage})
		c.log.Warn("structured reply rejected", zap.String("type", schema.name), zap.String("model", spec.Name),
			zap.Int("attempt", n), zap.Int("max_attempts", attempts), zap.String("kind", string(rej.kind)),
			zap.String("error", rej.message))
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
