package lcmodel

import (
	"errors"

	"github.com/agentgraph/agentgraph/resilience"
	"github.com/tmc/langchaingo/llms"
)

// Class classifies an error of a langchaingo client by its error code:
// rate limits, transient failures (timeouts, an unavailable provider) and
// permanent ones (authentication, invalid requests, quotas, filters).
// Errors without a code are Unknown.
func Class(err error) resilience.Class {
	var le *llms.Error
	if errors.As(err, &le) {
		switch le.Code {
		case llms.ErrCodeRateLimit:
			return resilience.RateLimited
		case llms.ErrCodeTimeout, llms.ErrCodeProviderUnavailable:
			return resilience.Transient
		case llms.ErrCodeAuthentication, llms.ErrCodeInvalidRequest, llms.ErrCodeResourceNotFound,
			llms.ErrCodeQuotaExceeded, llms.ErrCodeContentFilter, llms.ErrCodeTokenLimit, llms.ErrCodeNotImplemented:
			return resilience.Permanent
		}
	}
	if llms.IsRateLimitError(err) {
		return resilience.RateLimited
	}
	return resilience.Unknown
}

// IsReasoningModel reports whether langchaingo knows the model id to think
// (reason) natively.
func IsReasoningModel(id string) bool { return llms.IsReasoningModel(id) }
