package mcp_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/agentgraph/agentgraph/mcp"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

func TestParseConfig(t *testing.T) {
	t.Setenv("MCP_TEST_TOKEN", "s3cret")
	tests := []struct {
		name    string
		json    string
		want    []mcp.Server
		wantErr string
	}{
		{
			name: "all transports",
			json: `{"mcpServers": {
				"files": {"command": "npx", "args": ["-y", "fs"], "env": {"K": "${MCP_TEST_TOKEN}"}, "cwd": "/tmp"},
				"search": {"type": "http", "url": "https://s.example/mcp", "headers": {"Authorization": "Bearer ${MCP_TEST_TOKEN}"}},
				"cursor": {"transport": "streamable-http", "url": "https://c.example/mcp", "noListen": true},
				"old": {"type": "sse", "url": "https://old.example/sse"},
				"off": {"command": "x", "disabled": true},
				"modern": {"url": "https://m.example/mcp", "protocolVersion": "2026-07-28", "maxConcurrent": 3}
			}}`,
			want: []mcp.Server{
				{Name: "cursor", Transport: mcp.TransportHTTP, URL: "https://c.example/mcp", NoListen: true},
				{Name: "files", Command: "npx", Args: []string{"-y", "fs"}, Env: map[string]string{"K": "s3cret"}, Dir: "/tmp"},
				{Name: "modern", URL: "https://m.example/mcp", ProtocolVersion: mcp.ProtocolModern, MaxConcurrent: 3},
				{Name: "old", Transport: mcp.TransportSSE, URL: "https://old.example/sse"},
				{Name: "search", Transport: mcp.TransportHTTP, URL: "https://s.example/mcp", Headers: map[string]string{"Authorization": "Bearer s3cret"}},
			},
		},
		{name: "not json", json: `{`, wantErr: "expected {\"mcpServers\""},
		{name: "no mcpServers", json: `{"servers": {}}`, wantErr: `no "mcpServers" object`},
		{name: "unknown type", json: `{"mcpServers": {"x": {"type": "websocket", "url": "ws://x"}}}`, wantErr: `server "x": unknown type "websocket"`},
		{name: "nothing to start", json: `{"mcpServers": {"x": {}}}`, wantErr: `server "x": http needs URL`},
		{name: "bad url", json: `{"mcpServers": {"x": {"url": "ftp://x"}}}`, wantErr: `must start with http://`},
		{name: "bad protocol", json: `{"mcpServers": {"x": {"url": "http://x", "protocolVersion": "1999"}}}`, wantErr: `unknown protocolVersion "1999"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := mcp.ParseConfig(strings.NewReader(tt.json))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want it to contain %q", err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got, cmpopts.IgnoreUnexported(mcp.Server{})); diff != "" {
				t.Errorf("servers (-want +got):\n%s", diff)
			}
		})
	}
}

func TestLoadConfig(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mcp.json")
	if err := os.WriteFile(path, []byte(`{"mcpServers": {"x": {"command": ""}}}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := mcp.LoadConfig(path); err == nil || !strings.Contains(err.Error(), path) {
		t.Errorf("err = %v, want it to name the file", err)
	}
	if _, err := mcp.LoadConfig(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("missing file: no error")
	}
}
