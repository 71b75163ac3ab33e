package agentgraph_test

import (
	"bufio"
	"bytes"
	"go/importer"
	"go/token"
	"go/types"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// generalPackages are the packages whose exported API speaks the module's
// own vocabulary (agent/model) and no provider SDK's: the general SDK's,
// and the supervisor kit the examples share.
var generalPackages = []string{
	"github.com/agentgraph/agentgraph/agent",
	"github.com/agentgraph/agentgraph/agent/model",
	"github.com/agentgraph/agentgraph/agent/provider",
	"github.com/agentgraph/agentgraph/agent/llmtest",
	"github.com/agentgraph/agentgraph/agent/react",
	"github.com/agentgraph/agentgraph/examples/supervisor",
	"github.com/agentgraph/agentgraph/graph",
	"github.com/agentgraph/agentgraph/operator",
	"github.com/agentgraph/agentgraph/operator/toolresult",
	"github.com/agentgraph/agentgraph/memory",
	"github.com/agentgraph/agentgraph/document",
	"github.com/agentgraph/agentgraph/cognition",
	"github.com/agentgraph/agentgraph/mcp",
}

// foreignSDK is the import path prefix no exported signature may mention.
const foreignSDK = "github.com/tmc/langchaingo"

// TestGeneralAPINamesNoLangchaingo type-checks the general packages from
// their compiled export data and walks every exported identifier: package
// level types, functions, variables and constants, the exported fields of
// exported structs and the exported methods of exported types. None may
// mention a langchaingo type; langchaingo stays an adapter inside
// agent/provider and agent/internal.
func TestGeneralAPINamesNoLangchaingo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the export data of the general packages; run without -short")
	}
	exports := exportData(t, generalPackages)
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		file, ok := exports[path]
		if !ok {
			return nil, os.ErrNotExist
		}
		return os.Open(file)
	})
	for _, path := range generalPackages {
		pkg, err := imp.Import(path)
		if err != nil {
			t.Fatalf("importing %s: %v", path, err)
		}
		for _, bad := range foreignAPI(pkg) {
			t.Errorf("%s: %s", path, bad)
		}
	}
}

// TestForeignAPIFindsLangchaingo checks the walker itself on a package
// whose exported API is langchaingo's own.
func TestForeignAPIFindsLangchaingo(t *testing.T) {
	if testing.Short() {
		t.Skip("builds export data; run without -short")
	}
	const lc = "github.com/tmc/langchaingo/llms"
	exports := exportData(t, []string{lc})
	imp := importer.ForCompiler(token.NewFileSet(), "gc", func(path string) (io.ReadCloser, error) {
		return os.Open(exports[path])
	})
	pkg, err := imp.Import(lc)
	if err != nil {
		t.Fatal(err)
	}
	if len(foreignAPI(pkg)) == 0 {
		t.Error("the walker found no langchaingo type in langchaingo's own API")
	}
}

// exportData builds the packages and returns the export data file of each
// package they depend on, by import path.
func exportData(t *testing.T, pkgs []string) map[string]string {
	t.Helper()
	args := append([]string{"list", "-export", "-deps", "-f", "{{.ImportPath}}\t{{.Export}}"}, pkgs...)
	cmd := exec.Command("go", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list -export: %v\n%s", err, stderr.Bytes())
	}
	exports := map[string]string{}
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		path, file, ok := strings.Cut(sc.Text(), "\t")
		if ok && file != "" {
			exports[path] = file
		}
	}
	return exports
}

// foreignAPI lists the exported identifiers of pkg whose signature mentions
// a langchaingo type.
func foreignAPI(pkg *types.Package) []string {
	var bad []string
	check := func(what string, typ types.Type) {
		if strings.Contains(types.TypeString(typ, nil), foreignSDK) {
			bad = append(bad, what+": "+types.TypeString(typ, types.RelativeTo(pkg)))
		}
	}
	scope := pkg.Scope()
	for _, name := range scope.Names() {
		obj := scope.Lookup(name)
		if !obj.Exported() {
			continue
		}
		tn, ok := obj.(*types.TypeName)
		if !ok {
			check(name, obj.Type())
			continue
		}
		if tn.IsAlias() {
			check(name, obj.Type())
			continue
		}
		named, ok := obj.Type().(*types.Named)
		if !ok {
			continue
		}
		switch u := named.Underlying().(type) {
		case *types.Struct:
			for f := range u.Fields() {
				if f.Exported() {
					check(name+"."+f.Name(), f.Type())
				}
			}
		case *types.Interface:
			for m := range u.Methods() {
				if m.Exported() {
					check(name+"."+m.Name(), m.Type())
				}
			}
		default:
			check(name, u)
		}
		for _, recv := range []types.Type{named, types.NewPointer(named)} {
			ms := types.NewMethodSet(recv)
			for sel := range ms.Methods() {
				if sel.Obj().Exported() {
					check(name+"."+sel.Obj().Name(), sel.Type())
				}
			}
		}
	}
	return bad
}

// TestModelLayerDoesNotImportEngine: the model layer (agent and its model
// vocabulary) does not know the graph engine; a node forwards its model's
// chunks into a run's stream itself.
func TestModelLayerDoesNotImportEngine(t *testing.T) {
	for _, pkg := range []string{"github.com/agentgraph/agentgraph/agent", "github.com/agentgraph/agentgraph/agent/model"} {
		out, err := exec.Command("go", "list", "-deps", pkg).Output()
		if err != nil {
			t.Fatalf("go list -deps %s: %v", pkg, err)
		}
		for dep := range strings.Lines(string(out)) {
			if strings.TrimSpace(dep) == "github.com/agentgraph/agentgraph/graph" {
				t.Errorf("%s imports the graph engine", pkg)
			}
		}
	}
}
