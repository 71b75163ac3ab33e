package chatbot

import (
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
)

// TestPrivateFileOfAnotherUser: a store file the process may not chmod
// (another user's, on a shared volume: EPERM) keeps its mode with a
// warning naming it, instead of failing New; another chmod error still
// fails.
func TestPrivateFileOfAnotherUser(t *testing.T) {
	path := filepath.Join(t.TempDir(), "conversations.db")
	if err := os.WriteFile(path, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.WarnLevel)
	eperm := func(name string, _ os.FileMode) error {
		return &fs.PathError{Op: "chmod", Path: name, Err: syscall.EPERM}
	}
	if err := privateFile(path, zap.New(core), eperm); err != nil {
		t.Fatalf("privateFile of another user's file: %v, want a warning only", err)
	}
	if ws := logs.FilterField(zap.String("path", path)).All(); len(ws) != 1 {
		t.Errorf("warnings naming %s: %v, want 1", path, logs.All())
	}
	eio := func(name string, _ os.FileMode) error {
		return &fs.PathError{Op: "chmod", Path: name, Err: syscall.EIO}
	}
	if err := privateFile(path, zap.NewNop(), eio); err == nil {
		t.Error("privateFile with an I/O error: nil, want the error")
	}
}

// TestPrivateDirOfAnotherUser: a data directory the process may not chmod
// (EPERM) keeps its mode with a warning naming it, instead of failing New;
// another chmod error still fails; a private directory is left alone.
func TestPrivateDirOfAnotherUser(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix file modes")
	}
	dir := filepath.Join(t.TempDir(), "data")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o755); err != nil { // whatever the umask
		t.Fatal(err)
	}
	core, logs := observer.New(zapcore.WarnLevel)
	eperm := func(name string, _ os.FileMode) error {
		return &fs.PathError{Op: "chmod", Path: name, Err: syscall.EPERM}
	}
	if err := privateDir(dir, zap.New(core), eperm); err != nil {
		t.Fatalf("privateDir of another user's directory: %v, want a warning only", err)
	}
	if ws := logs.FilterField(zap.String("path", dir)).All(); len(ws) != 1 {
		t.Errorf("warnings naming %s: %v, want 1", dir, logs.All())
	}
	eio := func(name string, _ os.FileMode) error {
		return &fs.PathError{Op: "chmod", Path: name, Err: syscall.EIO}
	}
	if err := privateDir(dir, zap.NewNop(), eio); err == nil {
		t.Error("privateDir with an I/O error: nil, want the error")
	}
	if err := privateDir(dir, zap.NewNop(), os.Chmod); err != nil {
		t.Fatal(err)
	}
	called := false
	if err := privateDir(dir, zap.NewNop(), func(string, os.FileMode) error { called = true; return nil }); err != nil || called {
		t.Errorf("privateDir of a private directory: err %v, chmod called %v; want neither", err, called)
	}
}

// TestPrivateDirLeavesOthersAlone: privateDir takes the group's and
// others' access only from a directory holding nothing but the bot's own
// files, keeping its setgid bit; a directory holding other files (a home
// directory, ".") and a symbolic link to a directory keep their modes,
// with a warning naming them.
func TestPrivateDirLeavesOthersAlone(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("Unix file modes")
	}
	mkdir := func(mode os.FileMode, files ...string) string {
		dir := filepath.Join(t.TempDir(), "data")
		if err := os.Mkdir(dir, 0o700); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			if err := os.WriteFile(filepath.Join(dir, f), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.Chmod(dir, mode); err != nil { // whatever the umask
			t.Fatal(err)
		}
		return dir
	}
	mode := func(dir string) os.FileMode {
		st, err := os.Stat(dir)
		if err != nil {
			t.Fatal(err)
		}
		return st.Mode() & (fs.ModePerm | fs.ModeSetgid | fs.ModeSticky)
	}
	target := mkdir(0o755, "conversations.db")
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, dir string
		want      os.FileMode
		warn      bool
	}{
		{"a directory holding other files", mkdir(0o755, "conversations.db", "notes.txt"), 0o755, true},
		{"a symbolic link to a directory", link, 0o755, true},
		{"a directory of the bot's files", mkdir(0o755, "conversations.db", "conversations.db-wal", "documents.db"), 0o700, false},
		{"an empty setgid directory", mkdir(0o775 | fs.ModeSetgid), 0o700 | fs.ModeSetgid, false},
	} {
		core, logs := observer.New(zapcore.WarnLevel)
		if err := privateDir(c.dir, zap.New(core), os.Chmod); err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got := mode(c.dir); got != c.want {
			t.Errorf("%s: mode %v, want %v", c.name, got, c.want)
		}
		if warned := len(logs.FilterField(zap.String("path", c.dir)).All()) == 1; warned != c.warn {
			t.Errorf("%s: warned %v, want %v (%v)", c.name, warned, c.warn, logs.All())
		}
	}
}
