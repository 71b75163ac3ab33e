package mcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/google/go-cmp/cmp"
)

func TestCompleteAnswer(t *testing.T) {
	schema := json.RawMessage(`{"type": "object", "properties": {
		"name": {"type": "string", "minLength": 1},
		"email": {"type": "string", "format": "email"},
		"count": {"type": "integer", "default": 3, "minimum": 1},
		"tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}, "default": ["a"]}
	}, "required": ["name"]}`)
	tests := []struct {
		name    string
		answer  map[string]any
		want    map[string]any
		wantErr string
	}{
		{name: "defaults fill the gaps", answer: map[string]any{"name": "ada"},
			want: map[string]any{"name": "ada", "count": float64(3), "tags": []any{"a"}}},
		{name: "typed Go values", answer: map[string]any{"name": "ada", "count": 7, "tags": []string{"b"}},
			want: map[string]any{"name": "ada", "count": float64(7), "tags": []any{"b"}}},
		{name: "missing required", answer: map[string]any{}, wantErr: "name"},
		{name: "wrong type", answer: map[string]any{"name": "ada", "count": "many"}, wantErr: "/count"},
		{name: "bad format", answer: map[string]any{"name": "ada", "email": "not-an-address"}, wantErr: "/email"},
		{name: "not in enum", answer: map[string]any{"name": "ada", "tags": []string{"z"}}, wantErr: "/tags/0"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mcp.CompleteAnswer(schema, tt.answer)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to name %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s", diff)
			}
		})
	}
}
