package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// -bundled chooses the bundled MCP servers: a list runs those, "none"
// runs none (so the calculator is gone), a misspelt name is refused
// naming the bundled ones.
func TestBundledFlag(t *testing.T) {
	ask := func(bundled string) (stdout, stderr string, err error) {
		var out, errb bytes.Buffer
		err = run(context.Background(), []string{"ask", "-offline", "-data", t.TempDir(), "-bundled", bundled, "What is 15% of 240?"},
			strings.NewReader(""), &out, &errb)
		return out.String(), errb.String(), err
	}
	out, errs, err := ask("calculator")
	if err != nil || !strings.Contains(out, "= 36") || !strings.Contains(errs, "⚙ calculate") {
		t.Errorf("-bundled calculator: %v\nstdout: %s\nstderr: %s", err, out, errs)
	}
	out, errs, err = ask("none")
	if err != nil || strings.Contains(out, "= 36") || strings.Contains(errs, "⚙ calculate") {
		t.Errorf("-bundled none: %v\nstdout: %s\nstderr: %s", err, out, errs)
	}
	if _, _, err := ask("calculator,knowlege"); err == nil || !strings.Contains(err.Error(), `"knowlege" is not a bundled server`) {
		t.Errorf("-bundled with a misspelt name: %v", err)
	}
}
