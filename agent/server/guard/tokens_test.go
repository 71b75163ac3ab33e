package guard_test

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/agentgraph/agentgraph/agent/server/guard"
)

// TestLoadTokens reads tokens from a file and from pairs, and names where a
// bad entry stands.
func TestLoadTokens(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte("# team\nalice alice-token-0123456789\n\nbob bob-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := guard.LoadTokens(path, " carol=carol-token-0123456789 ,", "APP_TOKENS")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"alice-token-0123456789": "alice", "bob-token-0123456789": "bob", "carol-token-0123456789": "carol"}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("tokens (-want +got):\n%s", d)
	}
	if got, err := guard.LoadTokens("", "", "APP_TOKENS"); got != nil || err != nil {
		t.Errorf("no tokens: %v, %v; want nil, nil", got, err)
	}
	bad := filepath.Join(t.TempDir(), "bad")
	if err := os.WriteFile(bad, []byte("alice\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ path, pairs, want string }{
		{bad, "", bad + ":1"},
		{"", "dave", "APP_TOKENS"},
		{"", "a=same-token-0123456789,b=same-token-0123456789", "given twice"},
		{filepath.Join(t.TempDir(), "missing"), "", "-tokens"},
	} {
		if _, err := guard.LoadTokens(c.path, c.pairs, "APP_TOKENS"); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("LoadTokens(%q, %q) = %v; want an error naming %q", c.path, c.pairs, err, c.want)
		}
	}
}

// TestLoadTokensRefusesASharedFile: a tokens file others may read, or
// its group or others may write, is refused (but on Windows), naming it,
// the fix and the environment variable; one of mode 0600, 0400, or with
// group read (0640, 0440: a Kubernetes secret with an fsGroup) is read.
func TestLoadTokensRefusesASharedFile(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no group or other permissions on Windows")
	}
	for _, c := range []struct {
		mode os.FileMode
		ok   bool
	}{{0o644, false}, {0o604, false}, {0o660, false}, {0o602, false}, {0o600, true}, {0o400, true}, {0o640, true}, {0o440, true}} {
		path := filepath.Join(t.TempDir(), "tokens")
		if err := os.WriteFile(path, []byte("alice alice-token-0123456789\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, c.mode); err != nil {
			t.Fatal(err)
		}
		got, err := guard.LoadTokens(path, "", "APP_TOKENS")
		switch {
		case c.ok && (err != nil || got["alice-token-0123456789"] != "alice"):
			t.Errorf("a tokens file of mode %v: %v, %v; want its token", c.mode, got, err)
		case !c.ok && (err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "chmod 600") ||
			!strings.Contains(err.Error(), "defaultMode 0400") || !strings.Contains(err.Error(), "APP_TOKENS")):
			t.Errorf("a tokens file of mode %v: %v; want an error naming it, chmod 600, defaultMode 0400 and APP_TOKENS", c.mode, err)
		}
	}
}

// TestLoadTokensRefusesAnotherUsersFile checks that a tokens file owned
// by a user other than this process's and root is refused, naming the
// file and the fix. It needs root to give the file away.
func TestLoadTokensRefusesAnotherUsersFile(t *testing.T) {
	if runtime.GOOS == "windows" || os.Geteuid() != 0 {
		t.Skip("giving a file to another user needs root on a Unix system")
	}
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte("alice alice-token-0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if got, err := guard.LoadTokens(path, "", "APP_TOKENS"); err != nil || got["alice-token-0123456789"] != "alice" {
		t.Fatalf("a tokens file of root's: %v, %v; want its token", got, err)
	}
	if err := os.Chown(path, 12345, -1); err != nil {
		t.Fatal(err)
	}
	_, err := guard.LoadTokens(path, "", "APP_TOKENS")
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "chown") || !strings.Contains(err.Error(), "APP_TOKENS") {
		t.Errorf("a tokens file of user 12345: %v; want an error naming it, chown and APP_TOKENS", err)
	}
}
