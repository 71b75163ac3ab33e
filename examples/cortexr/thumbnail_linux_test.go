//go:build linux

package cortexr_test

import (
	"errors"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"unsafe"

	"github.com/agentgraph/agentgraph/mcp"
	"golang.org/x/sys/unix"
)

// create_thumbnail refuses what is not a regular file without opening it:
// opening a FIFO releases its waiting writer, a terminal may become the
// controlling one, a watchdog device arms. inotify reports every open in
// the image directory, and a stat none.
func TestThumbnailDoesNotOpenSpecialFiles(t *testing.T) {
	t.Parallel()
	images := t.TempDir()
	if err := syscall.Mkfifo(filepath.Join(images, "fifo.png"), 0o600); err != nil {
		t.Skipf("mkfifo: %v", err)
	}
	fd, err := unix.InotifyInit1(unix.IN_NONBLOCK | unix.IN_CLOEXEC)
	if err != nil {
		t.Skipf("inotify: %v", err)
	}
	defer unix.Close(fd)
	if _, err := unix.InotifyAddWatch(fd, images, unix.IN_OPEN); err != nil {
		t.Skipf("inotify: %v", err)
	}
	res, err := mathSession(t, images).CallTool(t.Context(), mcp.ToolCall{Name: "create_thumbnail", Arguments: map[string]any{"image_path": "fifo.png"}})
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError {
		t.Fatal("create_thumbnail read a FIFO")
	}
	// The events of the opens during the call are queued by now.
	buf := make([]byte, 64<<10)
	n, err := unix.Read(fd, buf)
	if errors.Is(err, unix.EAGAIN) {
		return // nothing was opened
	}
	if err != nil {
		t.Fatal(err)
	}
	for off := 0; off+unix.SizeofInotifyEvent <= n; {
		ev := (*unix.InotifyEvent)(unsafe.Pointer(&buf[off]))
		name := strings.TrimRight(string(buf[off+unix.SizeofInotifyEvent:off+unix.SizeofInotifyEvent+int(ev.Len)]), "\x00")
		if name == "fifo.png" {
			t.Fatal("create_thumbnail opened the FIFO before refusing it")
		}
		off += unix.SizeofInotifyEvent + int(ev.Len)
	}
}
