package args

import (
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

func request(arguments map[string]any) mcp.CallToolRequest {
	var req mcp.CallToolRequest
	req.Params.Arguments = arguments
	return req
}

func errorText(res *mcp.CallToolResult) string {
	if res == nil {
		return ""
	}
	if !res.IsError {
		return "<not an error>"
	}
	return res.Content[0].(mcp.TextContent).Text
}

func TestString(t *testing.T) {
	tests := []struct {
		name    string
		args    map[string]any
		want    string
		wantErr string
	}{
		{"present", map[string]any{"q": "hello"}, "hello", ""},
		{"missing", map[string]any{}, "", "argument q is required: give words"},
		{"null", map[string]any{"q": nil}, "", "argument q is required: give words"},
		{"blank", map[string]any{"q": " \t"}, "", "argument q is empty: give words"},
		{"number", map[string]any{"q": 1.5}, "", "argument q must be a string, got a number: give words"},
		{"object", map[string]any{"q": map[string]any{}}, "", "argument q must be a string, got an object: give words"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, res := String(request(tt.args), "q", "words")
			if got != tt.want || errorText(res) != tt.wantErr {
				t.Errorf("String = %q, %q; want %q, %q", got, errorText(res), tt.want, tt.wantErr)
			}
		})
	}
}

func TestInt(t *testing.T) {
	tests := []struct {
		name    string
		v       any
		want    int
		wantErr string
	}{
		{"absent", nil, 5, ""},
		{"float64", 3.0, 3, ""},
		{"int", 7, 7, ""},
		{"json.Number", json.Number("2"), 2, ""},
		{"fraction", 2.5, 0, "argument k must be a whole number from 1 to 10, got 2.5"},
		{"too small", 0, 0, "argument k must be a whole number from 1 to 10, got 0"},
		{"too big", 11.0, 0, "argument k must be a whole number from 1 to 10, got 11"},
		{"string", "3", 0, "argument k must be a whole number from 1 to 10, got a string"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			args := map[string]any{}
			if tt.v != nil {
				args["k"] = tt.v
			}
			got, res := Int(request(args), "k", 5, 1, 10)
			if got != tt.want || errorText(res) != tt.wantErr {
				t.Errorf("Int = %d, %q; want %d, %q", got, errorText(res), tt.want, tt.wantErr)
			}
		})
	}
}

func TestOptionalString(t *testing.T) {
	if got, res := OptionalString(request(nil), "x"); got != "" || res != nil {
		t.Errorf("absent: %q, %v", got, res)
	}
	if got, res := OptionalString(request(map[string]any{"x": " a "}), "x"); got != "a" || res != nil {
		t.Errorf("present: %q, %v", got, res)
	}
	if _, res := OptionalString(request(map[string]any{"x": true}), "x"); errorText(res) != "argument x must be a string, got a boolean" {
		t.Errorf("boolean: %q", errorText(res))
	}
}
