package main

import (
	"os"
	"path/filepath"
	"testing"
)

// TestOnlyLateReconnects: the sse-retry timing warning alone is forgiven;
// any other warning or failure, in any scenario's results (auth ones are
// a level deeper), is not.
func TestOnlyLateReconnects(t *testing.T) {
	const late = `{"id":"client-sse-retry-timing","status":"WARNING"}`
	for _, c := range []struct {
		name  string
		files map[string]string
		want  bool
	}{
		{"late only", map[string]string{"sse-retry-1/checks.json": `[{"id":"x","status":"SUCCESS"},` + late + `]`}, true},
		{"all passed", map[string]string{"sse-retry-1/checks.json": `[{"id":"x","status":"SUCCESS"}]`}, false},
		{"no Last-Event-ID", map[string]string{"sse-retry-1/checks.json": `[` + late + `,{"id":"client-sse-last-event-id","status":"WARNING"}]`}, false},
		{"too early", map[string]string{"sse-retry-1/checks.json": `[{"id":"client-sse-retry-timing","status":"FAILURE"}]`}, false},
		{"auth failure", map[string]string{
			"sse-retry-1/checks.json":    `[` + late + `]`,
			"auth/scope-1/checks.json":   `[{"id":"y","status":"FAILURE"}]`,
			"initialize-1/checks.json":   `[{"id":"z","status":"SUCCESS"}]`,
			"auth/metadata-1/stdout.txt": "",
		}, false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range c.files {
				p := filepath.Join(dir, name)
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if got := onlyLateReconnects(t, dir); got != c.want {
				t.Errorf("onlyLateReconnects = %v, want %v", got, c.want)
			}
		})
	}
}
