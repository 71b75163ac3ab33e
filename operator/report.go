package operator

import (
	"context"

	"github.com/agentgraph/agentgraph/operator/toolresult"
)

// Reporter receives what calls report while they run: a tool starting,
// its progress and content, its end, an operator's direct response, a
// question for the user. The reports are values of this package's report
// types ([ToolStart], [ToolProgress], [ToolOutput], [ToolComplete],
// [ToolFailed], [DirectResponse], [DirectResponseStart],
// [DirectResponseChunk], [DirectResponseDone], [elicit.Request]) and of
// the packages that run operators (the workflow package reports its plan
// and steps with its own types); a Reporter leaves out those it does not
// know. An application maps them to what its users see (an event stream, a
// log, metrics).
//
// Report may block, to slow a producer down to its consumer's pace; its
// error (the consumer went away, ctx ended) is returned by the message
// that caused the report ([Messenger.Progress], [Elicitations.Elicit]),
// while the reports around a call ([Provider.Execute]) are best effort.
// It must be safe for concurrent use: the steps of a workflow run in
// parallel.
type Reporter interface {
	Report(ctx context.Context, r Report) error
}

// Report is one report to a [Reporter]: a value of a report type (see
// [Reporter]), matched with a type switch.
type Report any

// ReporterFunc adapts a function to a [Reporter].
type ReporterFunc func(ctx context.Context, r Report) error

// Report calls f(ctx, r).
func (f ReporterFunc) Report(ctx context.Context, r Report) error { return f(ctx, r) }

// ToolStart reports that a tool (a local tool, an operator, an MCP tool)
// is being called.
type ToolStart struct {
	// Tool is the name the tool was called by.
	Tool string
	// Source is where the tool lives, or empty when the caller does not
	// know (an MCP tool called by an operator is SourceMCP).
	Source Source
	// Args are the call's arguments, or nil. They are the caller's: do
	// not modify them.
	Args map[string]any
}

// ToolProgress reports how far a running tool is.
type ToolProgress struct {
	Tool string
	// Progress is the completed fraction, from 0 to 1.
	Progress float64
	// Message says what the tool is doing, or is empty.
	Message string
}

// ToolOutput reports one content item of a tool's result as soon as the
// tool produces it, before the call returns.
type ToolOutput struct {
	Tool    string
	Content toolresult.Content
}

// ToolComplete reports that a tool finished successfully.
type ToolComplete struct {
	Tool string
	// ContentCount is the number of content items the tool produced: its
	// result's Contents and, for an MCP tool, its structured content,
	// which the MCP session reports as one more [ToolOutput] but the
	// result keeps apart in Structured.
	ContentCount int
}

// ToolFailed reports that a tool failed: the call returned an error, or
// the tool marked its result as an error (toolresult.Result.IsError).
type ToolFailed struct {
	Tool string
	// Err is the failure. For a result marked as an error it is a
	// [*ResultError]; errors.Is(Err, context.DeadlineExceeded) tells a
	// timeout.
	Err error
}

// ResultError is a tool's failure reported in its result
// (toolresult.Result.IsError) rather than by an error.
type ResultError struct {
	// Tool is the name of the tool that failed.
	Tool string
	// Message is the error text the tool put in its result.
	Message string
}

// Error reports the tool and its message.
func (e *ResultError) Error() string { return "operator: " + e.Tool + " failed: " + e.Message }

// DirectResponse reports a complete answer an operator sends to the user
// itself ([Messenger.Content] with direct set).
type DirectResponse struct {
	Operator    string
	ContentType string
	Text        string
}

// DirectResponseStart reports that an operator starts streaming a direct
// answer ([Messenger.Stream]).
type DirectResponseStart struct {
	Operator    string
	ContentType string
}

// DirectResponseChunk reports a piece of a streamed direct answer.
type DirectResponseChunk struct {
	Operator string
	Text     string
}

// DirectResponseDone reports that a streamed direct answer is complete.
type DirectResponseDone struct {
	Operator string
}

// reportingCaller is the ToolCaller an operator gets: it reports each call
// of a tool as a tool of its own (start, then complete or failure), so
// that the progress and content the MCP session reports for it come
// between a start and an end.
type reportingCaller struct {
	tc ToolCaller
	r  Reporter
}

func (c reportingCaller) CallTool(ctx context.Context, name string, args map[string]any) (*toolresult.Result, error) {
	_ = c.r.Report(ctx, ToolStart{Tool: name, Source: SourceMCP, Args: args})
	res, err := c.tc.CallTool(ctx, name, args)
	reportEnd(ctx, c.r, name, SourceMCP, res, err)
	return res, err
}

// reportEnd reports how a call of name ended.
func reportEnd(ctx context.Context, r Reporter, name string, src Source, res *toolresult.Result, err error) {
	switch {
	case err != nil:
		_ = r.Report(ctx, ToolFailed{Tool: name, Err: err})
	case res == nil:
		_ = r.Report(ctx, ToolComplete{Tool: name})
	case res.IsError:
		_ = r.Report(ctx, ToolFailed{Tool: name, Err: &ResultError{Tool: name, Message: res.Error}})
	default:
		n := len(res.Contents)
		if src == SourceMCP && res.Structured != nil {
			n++
		}
		_ = r.Report(ctx, ToolComplete{Tool: name, ContentCount: n})
	}
}
