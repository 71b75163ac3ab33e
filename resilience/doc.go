// Package resilience keeps calls to remote dependencies (MCP servers,
// language-model APIs, any HTTP service) from failing a request, or a whole
// service, because the dependency is slow, overloaded or briefly down.
//
// # Policies
//
// A [Policy] wraps calls to one dependency. Build it once with [New] from a
// [Config] and share it among all calls to that dependency; it is safe for
// concurrent use, and its breaker and bulkhead only work if they see all the
// traffic. [Policy.Do] runs a function through up to five stages, composed
// in this fixed order from the outside in:
//
//		fallback ⟶ retry ⟶ bulkhead ⟶ circuit breaker ⟶ timeout ⟶ fn
//
//	  - Fallback ([WithFallback]) turns the final failure into a substitute
//	    result: it sees what every inner stage produced.
//	  - Retry ([RetryConfig]) tries failed attempts again with exponential
//	    backoff and jitter, waiting at least as long as a Retry-After hint the
//	    error carries. Each retry goes through the inner stages again.
//	  - Bulkhead ([BulkheadConfig]) bounds the attempts in flight, with an
//	    optional bounded queue. It sits outside the breaker so that a local
//	    rejection never counts against the dependency's health.
//	  - Circuit breaker ([BreakerConfig]) refuses calls for a while after
//	    consecutive failures ([ErrCircuitOpen]), then lets a trial call through
//	    (half-open) and closes again when trials succeed. Retry does not retry
//	    a refused call: failing fast is the point of an open breaker.
//	  - Timeout (Config.Timeout) bounds each attempt, so a hung attempt counts
//	    as a breaker failure and can be retried ([ErrTimeout]).
//
// The zero Config turns every stage off. Presets hold tried starting
// values: [MCP] for tool servers and [LLM] for model APIs; change any field
// of the returned Config before calling New.
//
// # Observing
//
// [WithLogger] logs retries, breaker transitions and rejections through a
// *zap.Logger (nothing by default). [WithObserver] reports every attempt
// (number, error, class, whether and when a retry follows), for metrics or
// progress events. [Policy.Breaker] and [Policy.Bulkhead] return snapshots
// for health endpoints, and BreakerConfig.OnStateChange reports transitions
// as they happen.
//
// # Cancellation
//
// Do stops as soon as the caller's context is done: no further attempt, no
// sleeping out a backoff delay or a bulkhead wait, no fallback; it returns
// ctx.Err(). Cancellation is cooperative, as everywhere in Go: the function
// gets a context and must return when it is done. The Policy never leaves a
// goroutine running behind a call.
//
// # Classification
//
// Whether a failure is worth retrying, and whether it says anything about
// the dependency's health, depends on its [Class]: [Transient],
// [RateLimited], [Permanent], [Canceled] or [Unknown]. [Classify] recognises
// network errors, context errors, HTTP status codes ([CheckResponse],
// [ClassifyStatus], [ParseRetryAfter]) and this package's own errors; code
// that knows better marks its errors with [MarkTransient], [MarkPermanent],
// [RateLimit] or [Mark], or gives a Policy its own rules with
// [WithClassifier]. By default retry tries Transient and RateLimited errors
// again, and the breaker counts Transient, RateLimited and Unknown errors
// as failures.
//
// The stages are built on github.com/failsafe-go/failsafe-go; none of its
// types appear in this package's API.
package resilience
