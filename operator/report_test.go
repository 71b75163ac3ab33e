package operator_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/elicit"
)

// recorder is a Reporter that keeps what it receives; on, if set, sees
// each report as it arrives (to answer questions).
type recorder struct {
	mu      sync.Mutex
	reports []operator.Report
	on      func(operator.Report)
}

func (r *recorder) Report(_ context.Context, rep operator.Report) error {
	r.mu.Lock()
	r.reports = append(r.reports, rep)
	on := r.on
	r.mu.Unlock()
	if on != nil {
		on(rep)
	}
	return nil
}

// lines returns the reports so far, one line each.
func (r *recorder) lines() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, len(r.reports))
	for i, rep := range r.reports {
		out[i] = line(rep)
	}
	return out
}

// line renders a report for comparison.
func line(r operator.Report) string {
	switch r := r.(type) {
	case operator.ToolStart:
		return fmt.Sprintf("start %s %s", r.Tool, r.Source)
	case operator.ToolProgress:
		return fmt.Sprintf("progress %s %.1f %s", r.Tool, r.Progress, r.Message)
	case operator.ToolOutput:
		var data []byte
		switch c := r.Content; {
		case c.IsText():
			data, _ = json.Marshal(c.Text)
		case c.Value != nil:
			data, _ = json.Marshal(c.Value)
		default:
			data, _ = json.Marshal(c.Data)
		}
		return fmt.Sprintf("output %s %s %s", r.Tool, r.Content.MIMEType, data)
	case operator.ToolComplete:
		return fmt.Sprintf("complete %s %d", r.Tool, r.ContentCount)
	case operator.ToolFailed:
		return fmt.Sprintf("failed %s: %v", r.Tool, r.Err)
	case operator.DirectResponse:
		return fmt.Sprintf("direct %s %s %s", r.Operator, r.ContentType, r.Text)
	case operator.DirectResponseStart:
		return fmt.Sprintf("direct.start %s %s", r.Operator, r.ContentType)
	case operator.DirectResponseChunk:
		return fmt.Sprintf("direct.chunk %s %q", r.Operator, r.Text)
	case operator.DirectResponseDone:
		return "direct.done " + r.Operator
	case elicit.Request:
		return fmt.Sprintf("question %s %q %q", r.Tool, r.Message, r.Options)
	}
	return fmt.Sprintf("%T", r)
}
