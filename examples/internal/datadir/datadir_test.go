package datadir

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
)

// TestPrivateFileRefusesALink: a database file (or its -wal file) that
// is a symbolic link is refused, naming it and the setting, and its
// target keeps its mode: chmod and SQLite would follow the link to a
// file elsewhere.
func TestPrivateFileRefusesALink(t *testing.T) {
	for _, name := range []string{"server.db", "server.db-wal"} {
		dir, elsewhere := t.TempDir(), t.TempDir()
		target := filepath.Join(elsewhere, "target")
		if err := os.WriteFile(target, nil, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "server.db"), nil, 0o600); err != nil {
			t.Fatal(err)
		}
		link := filepath.Join(dir, name)
		_ = os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			t.Skipf("no symbolic links here: %v", err)
		}
		chmod := func(p string, m os.FileMode) error {
			if p == link {
				t.Errorf("chmod %s, a symbolic link", p)
			}
			return os.Chmod(p, m)
		}
		err := PrivateFile(filepath.Join(dir, "server.db"), "test: Dir", zap.NewNop(), chmod)
		if err == nil || !strings.Contains(err.Error(), link) || !strings.Contains(err.Error(), "test: Dir") {
			t.Errorf("%s a symbolic link: %v; want an error naming it and the setting", name, err)
		}
		if st, err := os.Stat(target); err != nil {
			t.Fatal(err)
		} else if st.Mode().Perm() != 0o644 && st.Mode().Perm() != 0o666 {
			t.Errorf("the link's target: %v; want its mode kept", st.Mode())
		}
	}
}
