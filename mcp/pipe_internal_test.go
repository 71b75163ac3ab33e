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
