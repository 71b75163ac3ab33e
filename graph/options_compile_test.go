package graph_test

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestOptionMisuseDoesNotCompile builds the programs under
// testdata/misuse with the go command. runatcompile passes run options
// (Resume, FromCheckpoint) to New and Compile, compileatrun passes compile
// options (WithCheckpointer, WithSerializer) to runs: both must fail, with
// an error on each line marked "// want:" saying which option type the
// argument is not. both uses options valid in both places in both places,
// and must build.
func TestOptionMisuseDoesNotCompile(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	if _, err := os.Stat(goBin); err != nil {
		t.Skipf("no go command at %s: %v", goBin, err)
	}
	build := func(dir string) (string, error) {
		cmd := exec.CommandContext(t.Context(), goBin, "build", "-o", os.DevNull, "./testdata/misuse/"+dir)
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	if out, err := build("both"); err != nil {
		t.Fatalf("testdata/misuse/both does not build: %v\n%s", err, out)
	}
	for _, tc := range []struct{ dir, want string }{
		{"runatcompile", "graph.RunOption does not implement graph.CompileOption"},
		{"compileatrun", "graph.CompileOption does not implement graph.RunOption"},
	} {
		t.Run(tc.dir, func(t *testing.T) {
			out, err := build(tc.dir)
			if err == nil {
				t.Fatalf("testdata/misuse/%s built; it must not compile", tc.dir)
			}
			lines := wantLines(t, filepath.Join("testdata", "misuse", tc.dir, "main.go"))
			if len(lines) == 0 {
				t.Fatal("no line is marked // want:")
			}
			for _, n := range lines {
				prefix := fmt.Sprintf("main.go:%d:", n)
				found := false
				for _, l := range strings.Split(out, "\n") {
					if strings.Contains(l, prefix) && strings.Contains(l, tc.want) {
						found = true
					}
				}
				if !found {
					t.Errorf("no error %q at line %d; the compiler said:\n%s", tc.want, n, out)
				}
			}
		})
	}
}

// wantLines returns the numbers of the lines of file marked "// want:".
func wantLines(t *testing.T, file string) []int {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []int
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		if strings.Contains(sc.Text(), "// want:") {
			lines = append(lines, n)
		}
	}
	return lines
}
