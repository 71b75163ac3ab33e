package operator_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/agent/model"
	"github.com/agentgraph/agentgraph/operator"
	"github.com/agentgraph/agentgraph/operator/toolresult"
)

func TestRegistryToolsNative(t *testing.T) {
	local := operator.NewLocalRegistry()
	var gotArgs map[string]any
	err := local.Register(operator.LocalFunc(operator.LocalInfo{
		Name:        "lookup_city",
		Description: "Looks a city up",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"city":{"type":"string"},"limit":{"type":"integer","minimum":1}},"required":["city"]}`),
	}, func(ctx context.Context, c operator.LocalCall) (*toolresult.Result, error) {
		gotArgs = c.Args
		if c.Args["city"] == "Atlantis" {
			return &toolresult.Result{IsError: true, Error: "no such city"}, nil
		}
		if c.Args["city"] == "Error" {
			return nil, errors.New("directory offline")
		}
		return operator.TextResult("lookup_city", "found "+c.Args["city"].(string), map[string]any{"population": 2100000}), nil
	}))
	if err != nil {
		t.Fatal(err)
	}
	registerLocals(t, local, "Demo 1.0")
	p := operator.NewProvider(operator.ProviderConfig{Local: local})
	tools, err := local.Tools(func(context.Context) operator.LocalCall { return operator.LocalCall{Provider: p} })
	if err != nil {
		t.Fatal(err)
	}
	set, err := operator.NewToolset(tools...)
	if err != nil {
		t.Fatal(err)
	}
	defs := set.Definitions()
	var names []string
	for _, d := range defs {
		names = append(names, d.Name)
	}
	if strings.Join(names, ",") != "about,list_tools,lookup_city" {
		t.Errorf("names = %v", names)
	}
	for _, d := range defs {
		if d.Name == "lookup_city" && (d.Description != "Looks a city up" || !strings.Contains(string(d.Parameters), `"required":["city"]`)) {
			t.Errorf("definition = %+v", d)
		}
	}

	ctx := context.Background()
	res, err := set.Call(ctx, model.ToolCall{ID: "1", Name: "lookup_city", Arguments: json.RawMessage(`{"city":"Paris","limit":2}`)})
	if err != nil || res.IsError || res.Text() != "found Paris" || string(res.Structured) != `{"population":2100000}` || res.Name != "lookup_city" || res.CallID != "1" {
		t.Errorf("call = %+v (%s), %v", res, res.Structured, err)
	}
	if gotArgs["limit"] != float64(2) {
		t.Errorf("args = %#v; numbers decode as float64, as encoding/json gives them", gotArgs)
	}

	gotArgs = nil
	res, err = set.Call(ctx, model.ToolCall{ID: "2", Name: "lookup_city", Arguments: json.RawMessage(`{"limit":0}`)})
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "- city: is required but missing") || !strings.Contains(res.Text(), "- limit: is 0; must be at least 1") {
		t.Errorf("bad call = %q, %v", res.Text(), err)
	}
	if gotArgs != nil {
		t.Error("the tool ran on bad arguments")
	}

	res, err = set.Call(ctx, model.ToolCall{ID: "3", Name: "lookup_city", Arguments: json.RawMessage(`{"city":"Atlantis"}`)})
	if err != nil || !res.IsError || res.Text() != "no such city" {
		t.Errorf("failed result = %+v, %v", res, err)
	}
	res, err = set.Call(ctx, model.ToolCall{ID: "4", Name: "lookup_city", Arguments: json.RawMessage(`{"city":"Error"}`)})
	if err == nil || !strings.Contains(err.Error(), "directory offline") || !res.IsError {
		t.Errorf("error = %+v, %v", res, err)
	}

	res, err = set.Call(ctx, model.ToolCall{ID: "5", Name: "about", Arguments: json.RawMessage(`{}`)})
	if err != nil || res.Text() != "Demo 1.0" {
		t.Errorf("about = %+v, %v", res, err)
	}
	res, err = set.Call(ctx, model.ToolCall{ID: "6", Name: "list_tools"})
	if err != nil || !strings.Contains(res.Text(), "lookup_city") {
		t.Errorf("list_tools through the provider = %q, %v", res.Text(), err)
	}
}

func TestAsToolRejectsBadInfo(t *testing.T) {
	fn := func(context.Context, operator.LocalCall) (*toolresult.Result, error) { return nil, nil }
	if _, err := operator.AsTool(operator.LocalFunc(operator.LocalInfo{Name: strings.Repeat("x", 65), Description: "d"}, fn), nil); err == nil || !strings.Contains(err.Error(), "at most 64") {
		t.Errorf("long name: %v", err)
	}
	if _, err := operator.AsTool(operator.LocalFunc(operator.LocalInfo{Name: "x", Description: "d", InputSchema: json.RawMessage(`{"type":"string"}`)}, fn), nil); err == nil || !strings.Contains(err.Error(), "arguments are an object") {
		t.Errorf("string schema: %v", err)
	}
	tl, err := operator.AsTool(operator.LocalFunc(operator.LocalInfo{Name: "x", Description: "d"}, fn), nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := tl.Call(context.Background(), json.RawMessage(`"text"`))
	if err != nil || !res.IsError || !strings.Contains(res.Text(), "must be a JSON object") {
		t.Errorf("non-object arguments = %+v, %v", res, err)
	}
	res, err = tl.Call(context.Background(), nil)
	if err != nil || res.IsError {
		t.Errorf("nil result = %+v, %v", res, err)
	}
}
