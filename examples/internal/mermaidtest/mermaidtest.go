// Package mermaidtest keeps an example's Mermaid diagrams in step with its
// graphs, for its tests: each diagram is kept in a golden file under
// testdata and shown in the example's README.md.
package mermaidtest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// Check fails t unless got, a graph's Mermaid diagram, is the golden file
// testdata/<file> and README.md shows it. With update (go test -update)
// it first rewrites the golden file with got.
func Check(t *testing.T, file, got string, update bool) {
	t.Helper()
	golden := filepath.Join("testdata", file)
	if update {
		if err := os.WriteFile(golden, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(string(want), got); diff != "" {
		t.Errorf("%s (-golden +got):\n%s", file, diff)
	}
	readme, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(readme), strings.TrimSpace(got)) {
		t.Errorf("README.md does not show the current Mermaid diagram of testdata/%s:\n%s", file, got)
	}
}
