// Package args reads MCP tool-call arguments and turns bad ones into tool
// errors (isError results) whose message names the argument and says what
// is expected, so a model or a person can fix the call.
package args

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"
)

// String returns the non-blank string argument name, or a tool error naming
// it; want describes a good value ("the words to search for").
func String(req mcp.CallToolRequest, name, want string) (string, *mcp.CallToolResult) {
	v, ok := req.GetArguments()[name]
	if !ok || v == nil {
		return "", mcp.NewToolResultErrorf("argument %s is required: give %s", name, want)
	}
	s, ok := v.(string)
	if !ok {
		return "", mcp.NewToolResultErrorf("argument %s must be a string, got %s: give %s", name, jsonType(v), want)
	}
	if strings.TrimSpace(s) == "" {
		return "", mcp.NewToolResultErrorf("argument %s is empty: give %s", name, want)
	}
	return s, nil
}

// OptionalString returns the string argument name, "" when it is absent or
// null, or a tool error when it is not a string.
func OptionalString(req mcp.CallToolRequest, name string) (string, *mcp.CallToolResult) {
	v, ok := req.GetArguments()[name]
	if !ok || v == nil {
		return "", nil
	}
	s, ok := v.(string)
	if !ok {
		return "", mcp.NewToolResultErrorf("argument %s must be a string, got %s", name, jsonType(v))
	}
	return strings.TrimSpace(s), nil
}

// Int returns the optional whole-number argument name in [lo, hi], def when
// it is absent or null, or a tool error naming it.
func Int(req mcp.CallToolRequest, name string, def, lo, hi int) (int, *mcp.CallToolResult) {
	v, ok := req.GetArguments()[name]
	if !ok || v == nil {
		return def, nil
	}
	f, isNum := Number(v)
	if !isNum || f != math.Trunc(f) || f < float64(lo) || f > float64(hi) {
		return 0, mcp.NewToolResultErrorf("argument %s must be a whole number from %d to %d, got %s", name, lo, hi, describe(v))
	}
	return int(f), nil
}

// Number converts a decoded JSON number (or a Go number passed in-process)
// to float64.
func Number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case float32:
		return float64(n), true
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	case int32:
		return float64(n), true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	}
	return 0, false
}

func describe(v any) string {
	if _, ok := Number(v); ok {
		return fmt.Sprint(v)
	}
	return jsonType(v)
}

// jsonType names the JSON type of a decoded value.
func jsonType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	case nil:
		return "null"
	}
	if _, ok := Number(v); ok {
		return "a number"
	}
	return fmt.Sprintf("%T", v)
}
