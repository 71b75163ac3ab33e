package agent

import (
	"github.com/agentgraph/agentgraph/agent/model"

	"errors"
	"fmt"
	"strings"
	"time"
)

// Errors callers can test with errors.Is.
var (
	// ErrUnknownModel: the model name is neither registered nor of the form
	// "provider:model-id".
	ErrUnknownModel = errors.New("agent: unknown model")
	// ErrNoProvider: the model's provider has no configured client.
	ErrNoProvider = errors.New("agent: no provider configured")
	// ErrThinkingUnsupported: extended thinking was asked of a model whose spec
	// does not support it.
	ErrThinkingUnsupported = errors.New("agent: model does not support extended thinking")
	// ErrEmptyResponse: the provider answered with no choices.
	ErrEmptyResponse = errors.New("agent: model returned an empty response")
	// ErrStructuredOutput matches every *StructuredOutputError.
	ErrStructuredOutput = errors.New("agent: no valid structured output")
)

// ProviderError is a failed model call, with what the provider's HTTP answer
// said about retrying. The client classifies it for the resilience policy:
// 429 is a rate limit (honouring RetryAfter), 408, 409, 5xx and network
// failures are transient, other 4xx are permanent.
type ProviderError struct {
	// Provider names the provider, such as "openai".
	Provider string
	// Model is the provider's model id.
	Model string
	// StatusCode is the HTTP status of the failed answer; 0 when there was
	// none (network failure, timeout).
	StatusCode int
	// RetryAfter is the provider's Retry-After hint; 0 when it gave none.
	RetryAfter time.Duration
	// Err is the error the provider model returned.
	Err error
}

// Error reports the provider, the HTTP status when there is one, and the cause.
func (e *ProviderError) Error() string {
	var b strings.Builder
	b.WriteString("agent: ")
	b.WriteString(e.Provider)
	if e.Model != "" {
		fmt.Fprintf(&b, " model %q", e.Model)
	}
	if e.StatusCode != 0 {
		fmt.Fprintf(&b, ": HTTP %d", e.StatusCode)
	}
	if e.RetryAfter > 0 {
		fmt.Fprintf(&b, " (retry after %s)", e.RetryAfter)
	}
	if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	return b.String()
}

// Unwrap returns the provider's own error.
func (e *ProviderError) Unwrap() error { return e.Err }

// FailureKind says why a structured-output attempt was rejected.
type FailureKind string

const (
	// FailureJSONParse means no JSON could be extracted or parsed from the
	// reply.
	FailureJSONParse FailureKind = "json_parse"
	// FailureSchemaValidation means the JSON did not match the schema, the
	// validate tags, or the type's Validate method.
	FailureSchemaValidation FailureKind = "schema_validation"
)

// Attempt records one rejected reply of a structured call.
type Attempt struct {
	// Number counts attempts from 1.
	Number int `json:"attempt"`
	// Raw is the model's complete reply.
	Raw string `json:"raw_output"`
	// Kind says which check rejected it.
	Kind FailureKind `json:"error_type"`
	// Message is the feedback given to the model, one line per problem.
	Message string `json:"error"`
	// Usage counts the tokens of this attempt.
	Usage model.Usage `json:"usage"`
}

// StructuredOutputError is returned by Call when no attempt produced a valid
// value. It carries every attempt and the usage of all of them.
type StructuredOutputError struct {
	// Type names the Go type that was asked for.
	Type string
	// Attempts holds every rejected attempt, in order.
	Attempts []Attempt
	// Usage sums the usage of all attempts.
	Usage model.Usage
}

// Error summarises the failure: how many attempts were made and why the last
// one was rejected.
func (e *StructuredOutputError) Error() string {
	msg := fmt.Sprintf("agent: no valid structured output for %s after %d attempts", e.Type, len(e.Attempts))
	if n := len(e.Attempts); n > 0 {
		last := e.Attempts[n-1]
		msg += fmt.Sprintf("; last failure (%s): %s", last.Kind, strings.ReplaceAll(last.Message, "\n", "; "))
	}
	return msg
}

// Is makes errors.Is(err, ErrStructuredOutput) true.
func (e *StructuredOutputError) Is(target error) bool { return target == ErrStructuredOutput }

// FieldError is a validation problem with one field. A type's Validate method
// returns it (alone or joined with errors.Join) so that the feedback to the
// model names the field, the way schema and tag failures do.
type FieldError struct {
	// Field is the JSON name (or path, such as "steps[0].tool") of the field.
	Field string
	// Message says what is wrong, in words the model can act on.
	Message string
}

// Error names the field and what is wrong with it.
func (e *FieldError) Error() string { return fmt.Sprintf("field '%s': %s", e.Field, e.Message) }
