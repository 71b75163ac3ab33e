package mcp

import (
	"bufio"
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"go.uber.org/zap"
)

// TestStdioLineOverTheLimitIsNotAnAnswer: an answer padded past
// MaxMessageBytes is cut, and the part read (valid JSON) is not delivered
// as the answer: the request fails with the transport's end.
func TestStdioLineOverTheLimitIsNotAnAnswer(t *testing.T) {
	const max = 8192 // over bufio's buffer, which the limit counts in
	c := &conn{log: zap.NewNop(), requests: make(chan struct{}, 1)}
	stdoutR, stdoutW := io.Pipe()
	stdinR, stdinW := io.Pipe()
	var limited *LimitError
	p := newPipe(c, stdioReader(stdoutR, max, "pad", func(le *LimitError) { limited = le }), stdinW)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	served := make(chan struct{})
	defer func() {
		stdoutR.Close()
		stdinR.Close()
		<-served
	}()
	go func() {
		defer close(served)
		// The server reads the request and answers it with a line of
		// valid JSON padded with spaces past the limit.
		if _, err := bufio.NewReader(stdinR).ReadBytes('\n'); err != nil {
			return
		}
		_, _ = io.WriteString(stdoutW, `{"jsonrpc":"2.0","id":1,"result":{"content":[]}}`+strings.Repeat(" ", 4*max)+"\n")
	}()
	r, err := p.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: mcpgo.JSONRPC_VERSION, ID: mcpgo.NewRequestId(int64(1)), Method: "tools/call"})
	if err == nil {
		t.Fatalf("an answer cut at MaxMessageBytes was delivered: %+v; want the request to fail", r)
	}
	if !errors.Is(err, transport.ErrTransportClosed) {
		t.Fatalf("request whose answer was cut: %v; want transport.ErrTransportClosed", err)
	}
	if limited == nil {
		t.Fatal("onLimit was not called for a line over MaxMessageBytes")
	}
}

// TestStdioEndCancelsTheServersRequests: once the server's stdout ends,
// the requests of it being handled are cancelled (their slots given back);
// once a write failed, its requests are no longer admitted.
func TestStdioEndCancelsTheServersRequests(t *testing.T) {
	c := &conn{log: zap.NewNop(), requests: make(chan struct{}, 1)}
	stdoutR, stdoutW := io.Pipe()
	stdinR, stdinW := io.Pipe()
	defer stdinR.Close()
	p := newPipe(c, stdoutR, stdinW)
	entered, ended := make(chan struct{}, 8), make(chan struct{}, 8)
	p.SetRequestHandler(func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
		entered <- struct{}{}
		<-ctx.Done()
		ended <- struct{}{}
		return nil, ctx.Err()
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := p.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if _, err := io.WriteString(stdoutW, `{"jsonrpc":"2.0","id":7,"method":"ping"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	<-entered
	stdoutW.Close()
	select {
	case <-ended:
	case <-ctx.Done():
		t.Fatal("the server's request still handled after its stdout ended; want it cancelled")
	}
	poll(t, "the request's slot to be given back", func() bool { return len(c.requests) == 0 })

	// A write that fails ends the transport: the reader admits no more.
	stdoutR2, stdoutW2 := io.Pipe()
	stdinR2, stdinW2 := io.Pipe()
	stdinR2.Close()
	p2 := newPipe(c, stdoutR2, stdinW2)
	// A handler that holds its slot until the test ends, whatever its
	// context, so that a request admitted shows in c.requests.
	hold := make(chan struct{})
	defer close(hold)
	p2.SetRequestHandler(func(ctx context.Context, req transport.JSONRPCRequest) (*transport.JSONRPCResponse, error) {
		<-hold
		return nil, ctx.Err()
	})
	if err := p2.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	defer stdoutW2.Close()
	if _, err := p2.SendRequest(ctx, transport.JSONRPCRequest{JSONRPC: mcpgo.JSONRPC_VERSION, ID: mcpgo.NewRequestId(int64(1)), Method: "ping"}); !errors.Is(err, transport.ErrTransportClosed) {
		t.Fatalf("request over a stdin that fails: %v; want transport.ErrTransportClosed", err)
	}
	if _, err := io.WriteString(stdoutW2, `{"jsonrpc":"2.0","id":8,"method":"ping"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	// The reader takes the next line only once it dispatched this one.
	if _, err := io.WriteString(stdoutW2, "\n"); err != nil {
		t.Fatal(err)
	}
	if n := len(c.requests); n != 0 {
		t.Fatalf("a request admitted after the transport ended (%d slots held); want it ignored (its answer cannot be sent)", n)
	}
}

// TestLimitReaderIsExact: a reader of a stream gets at most max bytes of
// a message over the limit, then the *LimitError, even when one Read of
// the stream returns much more; a message of max bytes passes, in each
// framing.
func TestLimitReaderIsExact(t *testing.T) {
	const max = 10
	for _, tc := range []struct {
		name    string
		framing framing
		in      string
		want    string // what the reader gets before the error
	}{
		{"line", frameLine, "0123456789\n" + "abcdefghijklmnop\nmore\n", "0123456789\nabcdefghij"},
		{"line split", frameLine, "0123\n012345" + "6789abcdef", "0123\n0123456789"},
		{"event", frameEvent, "data: 1234\n\n" + "data: 123456789\n\n", "data: 1234\n\ndata: 1234"},
		{"body", frameBody, "0123456789abc", "0123456789"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var limited *LimitError
			l := &limitReader{r: strings.NewReader(tc.in), framing: tc.framing, max: max, server: "s",
				onLimit: func(le *LimitError) { limited = le }}
			got, err := io.ReadAll(l)
			var le *LimitError
			if string(got) != tc.want || !errors.As(err, &le) || le.Max != max || le.Size <= max || limited != le {
				t.Errorf("read %q, %v (onLimit %v); want %q and a *LimitError of a message over %d bytes", got, err, limited, tc.want, max)
			}
			l = &limitReader{r: strings.NewReader(tc.want[:strings.LastIndexByte(tc.want, '\n')+1] + "0123456789"), framing: tc.framing, max: max}
			if got, err := io.ReadAll(l); err != nil {
				t.Errorf("a message of %d bytes: read %q, %v; want it whole", max, got, err)
			}
		})
	}
}
