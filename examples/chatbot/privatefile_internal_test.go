package chatbot

import (
	"io/fs"
	"os"
	"path/filepath"
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
