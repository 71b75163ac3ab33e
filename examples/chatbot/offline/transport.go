package offline

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// Transport returns an http.RoundTripper that serves every request with
// m's [Model.Handler] in-process, without a listener or a socket: give it
// to an OpenAI client (as its http.Client's Transport, with any base URL
// such as "http://offline/v1") and the requests, the JSON bodies, the
// streamed server-sent events and the usage chunk go through the same wire
// protocol as over the network, minus the TCP round trips.
//
// The handler runs in a goroutine of its own per request and writes the
// response through a pipe: a streamed answer reaches the client chunk by
// chunk as the handler flushes. Cancelling the request's context, or
// closing the response body, stops the handler's writes (they fail) and
// ends its goroutine; reading the body then fails with the context's
// error. A response body that is neither read to the end nor closed keeps
// its handler waiting, as a connection would.
func (m *Model) Transport() http.RoundTripper { return handlerTransport{h: m.Handler()} }

type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if err := req.Context().Err(); err != nil {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	ctx, cancel := context.WithCancel(req.Context())
	sreq := req.Clone(ctx) // the handler's request: its own context and headers
	if sreq.Body == nil {
		sreq.Body = http.NoBody
	}
	sreq.RequestURI = req.URL.RequestURI()
	sreq.RemoteAddr = "offline"
	pr, pw := io.Pipe()
	rw := &pipeResponse{header: http.Header{}, pw: pw, ready: make(chan struct{})}
	rw.bw = bufio.NewWriterSize(pw, 4096)
	// Cancelling the request fails the handler's writes and the client's
	// reads with the context's error.
	stopped := func() error {
		if err := req.Context().Err(); err != nil {
			return err
		}
		return errBodyClosed // the client closed the body
	}
	stop := context.AfterFunc(ctx, func() { pw.CloseWithError(stopped()) })
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer func() {
			stop()
			cancel()
			if req.Body != nil {
				req.Body.Close() // the request body is the transport's to close
			}
		}()
		defer func() {
			if v := recover(); v != nil {
				rw.fail(fmt.Errorf("offline: the handler of %s %s panicked: %v", req.Method, req.URL.Path, v))
			}
		}()
		t.h.ServeHTTP(rw, sreq)
		if ctx.Err() != nil {
			// The handler returned because it was stopped: the client must
			// not take the answer for a complete one.
			rw.fail(stopped())
			return
		}
		rw.finish()
	}()
	select {
	case <-rw.ready:
	case <-req.Context().Done():
		cancel()
		<-done
		return nil, req.Context().Err()
	}
	if rw.err != nil {
		cancel()
		return nil, rw.err
	}
	return &http.Response{
		Status:        fmt.Sprintf("%d %s", rw.status, http.StatusText(rw.status)),
		StatusCode:    rw.status,
		Proto:         "HTTP/1.1",
		ProtoMajor:    1,
		ProtoMinor:    1,
		Header:        rw.sent,
		Body:          &pipeBody{pr: pr, cancel: cancel},
		ContentLength: -1,
		Request:       req,
	}, nil
}

var errBodyClosed = errors.New("offline: response body closed")

// pipeResponse is the handler's http.ResponseWriter: the status and
// headers go to RoundTrip when the handler first writes, flushes or
// returns; the body goes through a buffer into the pipe the client reads.
type pipeResponse struct {
	header http.Header
	bw     *bufio.Writer
	pw     *io.PipeWriter

	once   sync.Once
	ready  chan struct{} // closed when status and sent (or err) are set
	status int
	sent   http.Header // the headers as of WriteHeader
	err    error       // the handler failed before answering
}

func (w *pipeResponse) Header() http.Header { return w.header }

func (w *pipeResponse) WriteHeader(code int) {
	w.once.Do(func() {
		w.status, w.sent = code, w.header.Clone()
		close(w.ready)
	})
}

func (w *pipeResponse) Write(p []byte) (int, error) {
	w.WriteHeader(http.StatusOK)
	return w.bw.Write(p)
}

// Flush sends what the handler wrote so far to the client.
func (w *pipeResponse) Flush() {
	w.WriteHeader(http.StatusOK)
	_ = w.bw.Flush()
}

// finish ends the response after the handler returned.
func (w *pipeResponse) finish() {
	w.WriteHeader(http.StatusOK)
	if err := w.bw.Flush(); err != nil {
		w.pw.CloseWithError(err)
		return
	}
	w.pw.Close()
}

// fail ends the response with err: RoundTrip returns it if the handler had
// not answered yet, the body's reader gets it otherwise.
func (w *pipeResponse) fail(err error) {
	w.once.Do(func() {
		w.err = err
		close(w.ready)
	})
	w.pw.CloseWithError(err)
}

// pipeBody is the client's response body.
type pipeBody struct {
	pr     *io.PipeReader
	cancel context.CancelFunc
}

func (b *pipeBody) Read(p []byte) (int, error) { return b.pr.Read(p) }

// Close stops the handler, which may still be writing.
func (b *pipeBody) Close() error {
	b.cancel()
	return b.pr.Close()
}
