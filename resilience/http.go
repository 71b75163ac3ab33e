package resilience

import (
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"
)

// HTTPError is a failed HTTP exchange: the server answered with a status code
// of 400 or more. [CheckResponse] builds it from an [*http.Response];
// [Classify] classifies it by StatusCode ([ClassifyStatus]) and [RetryAfter]
// reports its RetryAfter.
type HTTPError struct {
	// StatusCode is the response's status code, e.g. 503.
	StatusCode int
	// Status is the response's status line text, e.g. "503 Service
	// Unavailable"; empty means [http.StatusText] of StatusCode.
	Status string
	// RetryAfter is the delay the Retry-After header asked for; zero means
	// the response had no usable header.
	RetryAfter time.Duration
}

// Error returns "resilience: HTTP 503 Service Unavailable (retry after 2s)".
func (e *HTTPError) Error() string {
	status := e.Status
	if status == "" {
		status = strconv.Itoa(e.StatusCode) + " " + http.StatusText(e.StatusCode)
	}
	if e.RetryAfter > 0 {
		return fmt.Sprintf("resilience: HTTP %s (retry after %v)", strings.TrimSpace(status), e.RetryAfter)
	}
	return "resilience: HTTP " + strings.TrimSpace(status)
}

// CheckResponse returns nil if resp's status code is below 400 and an
// [*HTTPError] otherwise, with the delay of its Retry-After header if it has
// one (both the seconds and the HTTP-date forms; a date is measured from the
// response's Date header when present, which cancels clock skew, else from
// now). It neither reads nor closes resp.Body.
func CheckResponse(resp *http.Response) error {
	if resp.StatusCode < 400 {
		return nil
	}
	e := &HTTPError{StatusCode: resp.StatusCode, Status: resp.Status}
	if v := resp.Header.Get("Retry-After"); v != "" {
		now := time.Now()
		if date, err := http.ParseTime(resp.Header.Get("Date")); err == nil {
			now = date
		}
		e.RetryAfter, _ = ParseRetryAfter(v, now)
	}
	return e
}

// ParseRetryAfter parses the value of a Retry-After header, either a number
// of seconds ("120") or an HTTP-date ("Wed, 21 Oct 2015 07:28:00 GMT"),
// into a delay counted from now. A date in the past gives 0. ok is false
// when the value is neither form.
func ParseRetryAfter(value string, now time.Time) (d time.Duration, ok bool) {
	value = strings.TrimSpace(value)
	if value == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(value, 10, 64); err == nil {
		if secs < 0 {
			return 0, false
		}
		const maxSecs = int64(1<<63-1) / int64(time.Second)
		return time.Duration(min(secs, maxSecs)) * time.Second, true
	}
	t, err := http.ParseTime(value)
	if err != nil {
		return 0, false
	}
	return max(t.Sub(now), 0), true
}

// ClassifyStatus classifies an HTTP status code:
//
//   - 429 Too Many Requests is [RateLimited];
//   - 408 Request Timeout, 425 Too Early and the 5xx server errors are
//     [Transient], except those that a retry cannot fix: 501 Not Implemented,
//     505 HTTP Version Not Supported, 506, 508, 510 and 511, which are
//     [Permanent]. Non-standard 5xx codes such as 529 (overloaded) are
//     Transient;
//   - every other code from 400 up is [Permanent] (bad request,
//     authentication, permission, not found, conflict, validation);
//   - codes below 400 are not failures: [Unknown].
func ClassifyStatus(code int) Class {
	switch {
	case code == http.StatusTooManyRequests:
		return RateLimited
	case code == http.StatusRequestTimeout, code == http.StatusTooEarly:
		return Transient
	case code == http.StatusNotImplemented, code == http.StatusHTTPVersionNotSupported,
		code == http.StatusVariantAlsoNegotiates, code == http.StatusLoopDetected,
		code == http.StatusNotExtended, code == http.StatusNetworkAuthenticationRequired:
		return Permanent
	case code >= 500 && code <= 599:
		return Transient
	case code >= 400:
		return Permanent
	default:
		return Unknown
	}
}
