// Command testcount reads `go test -json` on stdin and writes a short
// report: one line per package (as go test prints it), the output of every
// failed test, the reason of every skipped one, and at the end a line
//
//	N passed, N failed, N skipped
//
// counting tests and subtests. It exits with status 1 when a test or a
// package failed (a build error, a panic outside any test), so that
//
//	set -o pipefail; go test -json ./... | go run ./internal/cmd/testcount
//
// fails when the tests do.
package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// event is one line of go test -json (see go doc test2json).
type event struct {
	Action  string
	Package string
	Test    string
	Elapsed float64
	Output  string
}

// counts are the totals of a run.
type counts struct {
	passed, failed, skipped int
	pkgFailed               int
}

func main() {
	c, err := report(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testcount:", err)
		os.Exit(2)
	}
	if c.failed > 0 || c.pkgFailed > 0 {
		os.Exit(1)
	}
}

// report reads go test -json from r and writes the report to w.
func report(r io.Reader, w io.Writer) (counts, error) {
	var c counts
	output := map[string]*strings.Builder{} // "pkg\x00test" -> its output so far
	var skips []string
	in := bufio.NewScanner(r)
	in.Buffer(make([]byte, 0, 64<<10), 16<<20)
	for in.Scan() {
		line := in.Bytes()
		var e event
		if err := json.Unmarshal(line, &e); err != nil || e.Action == "" {
			// Not test2json output (go vet, a build error): pass it on.
			fmt.Fprintln(w, string(line))
			continue
		}
		key := e.Package + "\x00" + e.Test
		switch e.Action {
		case "output", "build-output":
			b := output[key]
			if b == nil {
				b = &strings.Builder{}
				output[key] = b
			}
			if b.Len() < 1<<20 {
				b.WriteString(e.Output)
			}
		case "pass", "fail", "skip":
			out := ""
			if b := output[key]; b != nil {
				out = b.String()
			}
			delete(output, key)
			if e.Test == "" {
				// The package's result.
				switch e.Action {
				case "pass":
					fmt.Fprintf(w, "ok  \t%s\t%.3fs\n", e.Package, e.Elapsed)
				case "skip":
					fmt.Fprintf(w, "?   \t%s\t[no test files]\n", e.Package)
				case "fail":
					c.pkgFailed++
					fmt.Fprint(w, lastLines(out, 200))
					fmt.Fprintf(w, "FAIL\t%s\t%.3fs\n", e.Package, e.Elapsed)
				}
				continue
			}
			switch e.Action {
			case "pass":
				c.passed++
			case "fail":
				c.failed++
				fmt.Fprint(w, lastLines(out, 200))
			case "skip":
				c.skipped++
				skips = append(skips, fmt.Sprintf("SKIP %s %s: %s", e.Package, e.Test, reason(out)))
			}
		case "build-fail":
			c.pkgFailed++
		}
	}
	if err := in.Err(); err != nil {
		return c, err
	}
	if len(skips) > 0 {
		sort.Strings(skips)
		fmt.Fprintf(w, "\nskipped tests and why:\n%s\n", strings.Join(skips, "\n"))
	}
	fmt.Fprintf(w, "%d passed, %d failed, %d skipped\n", c.passed, c.failed, c.skipped)
	return c, nil
}

// reason returns a skipped test's message: its output without go test's
// own lines.
func reason(out string) string {
	var msg []string
	for _, l := range strings.Split(out, "\n") {
		t := strings.TrimSpace(l)
		if t == "" || strings.HasPrefix(t, "=== ") || strings.HasPrefix(t, "--- SKIP") {
			continue
		}
		msg = append(msg, t)
	}
	if len(msg) == 0 {
		return "(no reason given)"
	}
	return strings.Join(msg, " ")
}

// lastLines returns at most the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.SplitAfter(s, "\n")
	if len(lines) > n {
		lines = append([]string{fmt.Sprintf("[%d lines cut]\n", len(lines)-n)}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "")
}
