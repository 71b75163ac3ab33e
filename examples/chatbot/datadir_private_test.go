package chatbot_test

import (
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/agentgraph/agentgraph/examples/chatbot"
)

// TestDataDirPrivate: the data directory and its SQLite files (every
// principal's conversations, documents and what cognition learned) are
// the service user's only: a new directory has mode 0700, the files and
// their -wal and -shm files 0600, and a directory (0755) and files an
// earlier version left readable by others are made private.
func TestDataDirPrivate(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix file modes")
	}
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	// An earlier version's conversations.db, readable by anyone.
	if err := os.WriteFile(filepath.Join(dir, "conversations.db"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	fresh := filepath.Join(t.TempDir(), "fresh")
	for _, d := range []string{dir, fresh} {
		_, srv := newServer(t, chatbot.Config{DataDir: d, Cognition: &chatbot.CognitionConfig{}})
		status(t, srv, "POST", "/api/v1/chat/sync", "", `{"message": "Hello!", "user_id": "ada"}`)
		status(t, srv, "POST", "/api/v1/documents", "", `{"conversation_id": "c1", "name": "a.txt", "content_type": "text/plain", "content": "hello"}`)
	}
	for name, d := range map[string]string{"a new DataDir": fresh, "an existing DataDir of mode 0755": dir} {
		if st, err := os.Stat(d); err != nil {
			t.Errorf("%s: %v", name, err)
		} else if st.Mode().Perm() != 0o700 {
			t.Errorf("%s: mode %v, want 0700", name, st.Mode().Perm())
		}
	}
	for _, d := range []string{dir, fresh} {
		files, _ := filepath.Glob(filepath.Join(d, "*"))
		if len(files) < 3 {
			t.Errorf("%s holds %v, want the SQLite files", d, files)
		}
		for _, f := range files {
			st, err := os.Stat(f)
			if err != nil {
				t.Fatal(err)
			}
			if st.Mode().Perm()&0o077 != 0 {
				t.Errorf("%s: mode %v, want no access for group and others", f, st.Mode().Perm())
			}
		}
	}
}
