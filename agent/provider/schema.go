package provider

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"io"
	"net/http"

	"github.com/agentgraph/agentgraph/agent/model"
)

// langchaingo's OpenAI client sets a response schema per client only, so a
// model with StructuredOutputs passes the request's schema to its HTTP
// transport through the context, and the transport puts it in the body in
// place of the json_object response format langchaingo wrote.

type schemaKey struct{}

func (m *Model) withSchema(ctx context.Context, req *model.Request) context.Context {
	if !m.schemas || req.ResponseFormat == nil || len(req.ResponseFormat.Schema) == 0 {
		return ctx
	}
	return context.WithValue(ctx, schemaKey{}, req.ResponseFormat)
}

type schemaTransport struct{ base http.RoundTripper }

func schemaClient(base *http.Client) *http.Client {
	c := &http.Client{}
	if base != nil {
		*c = *base //nolint:govet // copying the exported configuration is intended
	}
	c.Transport = schemaTransport{base: cmp.Or[http.RoundTripper](c.Transport, http.DefaultTransport)}
	return c
}

func (t schemaTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	rf, ok := r.Context().Value(schemaKey{}).(*model.ResponseFormat)
	if !ok || r.Body == nil {
		return t.base.RoundTrip(r)
	}
	body, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		return nil, err
	}
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) == nil {
		format, err := json.Marshal(map[string]any{"type": "json_schema", "json_schema": map[string]any{
			"name": cmp.Or(rf.Name, "response"), "schema": rf.Schema, "strict": false}})
		if err == nil {
			fields["response_format"] = format
			if b, err := json.Marshal(fields); err == nil {
				body = b
			}
		}
	}
	r = r.Clone(r.Context())
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return t.base.RoundTrip(r)
}
