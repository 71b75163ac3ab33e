package agentserver_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/agentgraph/agentgraph/examples/agentserver"
)

// TestDirPrivate: Config.Dir and its SQLite files (every principal's
// threads and checkpoints) are the service user's only: a new directory
// has mode 0700 and its files 0600, and a directory (0755) and files an
// earlier version left readable by others are made private.
func TestDirPrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix file modes")
	}
	fresh := filepath.Join(t.TempDir(), "data")
	old := filepath.Join(t.TempDir(), "old")
	if err := os.Mkdir(old, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(old, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(old, "server.db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(filepath.Join(old, "server.db"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, dir := range []string{fresh, old} {
		app, err := agentserver.New(t.Context(), agentserver.Config{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		if err := app.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(dir); err != nil || st.Mode().Perm() != 0o700 {
			t.Errorf("%s: %v %v; want mode 0700", dir, st.Mode().Perm(), err)
		}
		files, _ := filepath.Glob(filepath.Join(dir, "*.db*"))
		if len(files) < 2 {
			t.Errorf("%s holds %v; want server.db and checkpoints.db", dir, files)
		}
		for _, f := range files {
			if st, err := os.Stat(f); err != nil || st.Mode().Perm()&0o077 != 0 {
				t.Errorf("%s: %v %v; want no access for group and others", f, st.Mode().Perm(), err)
			}
		}
	}
}
