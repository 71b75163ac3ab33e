package mcp

import (
	"bytes"
	"fmt"
	"io"
	"sync"
)

// Defaults of the size limits in [ManagerConfig].
const (
	// DefaultMaxMessageBytes bounds one JSON-RPC message from a server.
	DefaultMaxMessageBytes = 32 << 20
	// DefaultMaxResultBytes bounds the content of one tool result.
	DefaultMaxResultBytes = 8 << 20
	// DefaultMaxTools bounds the tools listed per server.
	DefaultMaxTools = 10000
	// DefaultMaxQueuedProgress bounds the progress notifications waiting
	// for one session's Progress callback.
	DefaultMaxQueuedProgress = 256
	// DefaultMaxServerRequests bounds the requests of one server
	// (elicitations, pings, roots and sampling requests) being answered at
	// once.
	DefaultMaxServerRequests = 16
)

// LimitError reports a server that exceeded one of the manager's limits.
type LimitError struct {
	// Server is the server's name.
	Server string
	// Limit names the ManagerConfig field: "MaxMessageBytes",
	// "MaxResultBytes", "MaxTools" or "MaxServerRequests".
	Limit string
	// Max is the limit (in bytes, in tools for MaxTools, in requests for
	// MaxServerRequests); Size is what the server sent, at least Max+1
	// (nothing is read past the limit).
	Max, Size int64

	list bool // the bytes of a tool list, over MaxMessageBytes
}

// Error names the server, the limit and the field that sets it.
func (e *LimitError) Error() string {
	if e.Limit == "MaxServerRequests" {
		return fmt.Sprintf("mcp: server %q sent a request while %d of its requests were being answered, the limit (ManagerConfig.MaxServerRequests); it is refused", e.Server, e.Max)
	}
	if e.Limit == "MaxTools" {
		return fmt.Sprintf("mcp: server %q listed %d tools or more (a page without tools counts as one), over the limit of %d (ManagerConfig.MaxTools)", e.Server, e.Size, e.Max)
	}
	what := "a message"
	switch {
	case e.Limit == "MaxResultBytes":
		what = "a tool result"
	case e.list:
		what = "a tool list"
	}
	return fmt.Sprintf("mcp: server %q sent %s of %d bytes or more, over the limit of %d bytes (ManagerConfig.%s)", e.Server, what, e.Size, e.Max, e.Limit)
}

// framing says how a limitReader finds the end of a message.
type framing int

const (
	// frameLine: a message is a line (stdio).
	frameLine framing = iota
	// frameEvent: a message is a server-sent event, ended by a blank line.
	frameEvent
	// frameBody: the whole stream is one message (a JSON response body).
	frameBody
)

// limitReader passes a stream through and fails it once one message grows
// past max bytes, so that an endless message is never buffered whole: the
// reader gets at most max bytes of it, then the *LimitError (the rest of
// what the underlying Read returned is dropped). The failure is reported
// once to onLimit.
type limitReader struct {
	r       io.Reader
	framing framing
	max     int64
	server  string
	onLimit func(*LimitError)

	mu   sync.Mutex
	n    int64 // bytes of the current message
	line int64 // bytes of the current line (frameEvent)
	err  error
}

func (l *limitReader) Read(p []byte) (int, error) {
	l.mu.Lock()
	if l.err != nil {
		err := l.err
		l.mu.Unlock()
		return 0, err
	}
	l.mu.Unlock()
	n, err := l.r.Read(p)
	l.mu.Lock()
	defer l.mu.Unlock()
	cut := -1 // where the message went past max: the bytes passed on end there
	switch l.framing {
	case frameLine:
		for start := 0; start < n; {
			end := n // the current line's bytes in p end here
			if i := bytes.IndexByte(p[start:n], '\n'); i >= 0 {
				end = start + i
			}
			if l.n+int64(end-start) > l.max {
				cut = start + int(l.max-l.n)
				l.n += int64(end - start)
				break
			}
			l.n += int64(end - start)
			if end == n {
				break
			}
			l.n, start = 0, end+1
		}
	case frameEvent:
		for i, b := range p[:n] {
			switch b {
			case '\n':
				if l.line == 0 {
					l.n = 0
				}
				l.line = 0
			case '\r':
			default:
				l.line++
				l.n++
			}
			if l.n > l.max {
				cut = i
				break
			}
		}
	case frameBody:
		if l.n+int64(n) > l.max {
			cut = int(l.max - l.n)
		}
		l.n += int64(n)
	}
	if cut >= 0 && l.err == nil {
		le := &LimitError{Server: l.server, Limit: "MaxMessageBytes", Max: l.max, Size: l.n}
		l.err = le
		if l.onLimit != nil {
			l.onLimit(le)
		}
		return cut, l.err
	}
	return n, err
}

// Close closes the underlying reader if it is a Closer.
func (l *limitReader) Close() error {
	if c, ok := l.r.(io.Closer); ok {
		return c.Close()
	}
	return nil
}
