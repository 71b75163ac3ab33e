package mcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/agentgraph/agentgraph/internal/schemacheck"
	"github.com/agentgraph/agentgraph/operator/elicit"

	mcpgo "github.com/mark3labs/mcp-go/mcp"
	"github.com/santhosh-tekuri/jsonschema/v6"
	"go.uber.org/zap"
)

// elicitor adapts a server's elicitation requests to the session callbacks.
type elicitor struct{ c *conn }

func (e elicitor) Elicit(ctx context.Context, req mcpgo.ElicitationRequest) (res *mcpgo.ElicitationResult, err error) {
	c := e.c
	// The call's context reaches the handler on every transport but legacy
	// stdio; there, attribute the request to the only eliciting call.
	cl, _ := ctx.Value(callKey{}).(*call)
	if cl == nil {
		cl = c.soleElicitingCall()
	}
	in := elicit.Request{Server: c.spec.Name, Message: req.Params.Message, Mode: req.Params.Mode, URL: req.Params.URL, ElicitationID: req.Params.ElicitationID}
	if in.Mode == "" {
		in.Mode = mcpgo.ElicitationModeForm
	}
	if req.Params.RequestedSchema != nil {
		in.Schema, _ = json.Marshal(req.Params.RequestedSchema)
	}
	fn := c.m.cfg.Elicit
	var s *Session
	if cl != nil {
		in.Tool = cl.tool
		s = cl.session
		if s.cb.Elicit != nil {
			fn = s.cb.Elicit
		}
		if t := cl.attemptTimer(); t != nil {
			// Waiting for a person is not the server being slow.
			t.pause()
			defer t.resume()
		}
		if callCtx := cl.ctx; callCtx != nil {
			var cancel context.CancelFunc
			ctx, cancel = context.WithCancel(ctx)
			defer cancel()
			stop := context.AfterFunc(callCtx, cancel)
			defer stop()
		}
		// Nor does the call hold its server's concurrency slot while a
		// person answers: it takes one again before the answer goes back,
		// waiting no longer than this request (its attempt may have ended;
		// a later attempt takes a slot of its own) or the call.
		cl.yieldSlot()
		reclaimCtx := ctx
		defer func() {
			// A cancel goes back as it is: the call ended, and the
			// answer carries nothing it must act on.
			if rerr := cl.reclaimSlot(reclaimCtx); rerr != nil && err == nil && res.Action != mcpgo.ElicitationResponseAction(elicit.Cancel) {
				res, err = nil, fmt.Errorf("mcp: elicitation answered, but the call ended before it could go on: %w", rerr)
			}
		}()
	}
	if fn == nil {
		c.log.Info("mcp elicitation declined: no callback", zap.String("message", in.Message))
		return answer(elicit.Decline, nil), nil
	}
	if s != nil {
		// The call's progress received before the question is delivered
		// before it (unless the question is withdrawn meanwhile).
		if done := s.flushed(); done != nil {
			select {
			case <-done:
			case <-ctx.Done():
			}
		}
	}
	if ctx.Err() != nil || (cl != nil && cl.ctx != nil && cl.ctx.Err() != nil) {
		// Withdrawn (its call ended) before it reached the user.
		return answer(elicit.Cancel, nil), nil
	}
	ctx, cancel := context.WithTimeout(ctx, c.m.cfg.ElicitTimeout)
	defer cancel()
	out, err := fn(ctx, in)
	if err != nil {
		if ctx.Err() != nil {
			return answer(elicit.Cancel, nil), nil
		}
		return nil, fmt.Errorf("elicitation callback: %w", err)
	}
	switch out.Action {
	case elicit.Decline, elicit.Cancel:
		return answer(out.Action, nil), nil
	case elicit.Accept:
	default:
		return nil, fmt.Errorf("mcp: elicitation callback returned action %q; use elicit.Accept, elicit.Decline or elicit.Cancel", out.Action)
	}
	if in.Mode != mcpgo.ElicitationModeForm {
		return answer(elicit.Accept, nil), nil
	}
	content, err := CompleteAnswer(in.Schema, out.Content)
	if err != nil {
		if s != nil {
			s.reportError(&CallError{Server: in.Server, Tool: in.Tool, Kind: KindValidation, Err: err})
		}
		return nil, err
	}
	return answer(elicit.Accept, content), nil
}

func answer(a elicit.Action, content map[string]any) *mcpgo.ElicitationResult {
	r := &mcpgo.ElicitationResult{}
	r.Action = mcpgo.ElicitationResponseAction(a)
	if content != nil {
		r.Content = content
	}
	return r
}

// CompleteAnswer fills the properties of an elicitation answer that the user
// left out with the schema's defaults, then validates the answer against the
// schema. The error names the offending property.
func CompleteAnswer(schema json.RawMessage, content map[string]any) (map[string]any, error) {
	out := map[string]any{}
	// Round-trip through JSON so typed Go values ([]string, int) validate.
	if len(content) > 0 {
		b, err := json.Marshal(content)
		if err != nil {
			return nil, fmt.Errorf("mcp: elicitation answer is not JSON: %w", err)
		}
		if err := json.Unmarshal(b, &out); err != nil {
			return nil, fmt.Errorf("mcp: elicitation answer is not JSON: %w", err)
		}
	}
	if len(schema) == 0 {
		return out, nil
	}
	var shape struct {
		Properties map[string]struct {
			Default any `json:"default"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(schema, &shape); err != nil {
		return nil, fmt.Errorf("mcp: elicitation schema is not an object schema: %w", err)
	}
	for name, p := range shape.Properties {
		if _, ok := out[name]; !ok && p.Default != nil {
			out[name] = p.Default
		}
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("mcp: elicitation schema: %w", err)
	}
	comp := schemacheck.NewCompiler()
	comp.AssertFormat()
	if err := comp.AddResource("elicitation.json", doc); err != nil {
		return nil, fmt.Errorf("mcp: elicitation schema: %w", err)
	}
	sch, err := comp.Compile("elicitation.json")
	if err != nil {
		return nil, fmt.Errorf("mcp: elicitation schema: %w", err)
	}
	if err := sch.Validate(any(out)); err != nil {
		var ve *jsonschema.ValidationError
		if errors.As(err, &ve) {
			return nil, fmt.Errorf("mcp: elicitation answer does not match the requested schema: %v", ve)
		}
		return nil, fmt.Errorf("mcp: elicitation answer does not match the requested schema: %w", err)
	}
	return out, nil
}
