package main

import (
	"strings"
	"testing"
)

func TestReport(t *testing.T) {
	in := strings.Join([]string{
		`{"Action":"run","Package":"p","Test":"TestA"}`,
		`{"Action":"output","Package":"p","Test":"TestA","Output":"=== RUN   TestA\n"}`,
		`{"Action":"pass","Package":"p","Test":"TestA","Elapsed":0.1}`,
		`{"Action":"output","Package":"p","Test":"TestB","Output":"    b_test.go:9: want 2, got 3\n"}`,
		`{"Action":"fail","Package":"p","Test":"TestB","Elapsed":0.1}`,
		`{"Action":"output","Package":"p","Test":"TestC/sub","Output":"=== RUN   TestC/sub\n"}`,
		`{"Action":"output","Package":"p","Test":"TestC/sub","Output":"    c_test.go:5: NATS is not reachable; start nats-server\n"}`,
		`{"Action":"output","Package":"p","Test":"TestC/sub","Output":"--- SKIP: TestC/sub (0.00s)\n"}`,
		`{"Action":"skip","Package":"p","Test":"TestC/sub","Elapsed":0}`,
		`{"Action":"pass","Package":"p","Test":"TestC","Elapsed":0}`,
		`{"Action":"fail","Package":"p","Elapsed":1.5}`,
		`# q`,
		`{"Action":"output","Package":"q","Output":"q.go:3: undefined: x\n"}`,
		`{"Action":"fail","Package":"q","Elapsed":0}`,
	}, "\n")
	var out strings.Builder
	c, err := report(strings.NewReader(in), &out)
	if err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if c.passed != 2 || c.failed != 1 || c.skipped != 1 || c.pkgFailed != 2 {
		t.Errorf("counts = %+v; want 2 passed, 1 failed, 1 skipped, 2 packages failed", c)
	}
	for _, want := range []string{
		"want 2, got 3",
		"SKIP p TestC/sub: c_test.go:5: NATS is not reachable; start nats-server",
		"q.go:3: undefined: x", "FAIL\tq",
		"\n2 passed, 1 failed, 1 skipped\n",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("report lacks %q:\n%s", want, got)
		}
	}
	if !strings.HasSuffix(got, "skipped\n") {
		t.Errorf("the count is not the last line:\n%s", got)
	}
}
