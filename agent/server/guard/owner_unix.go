//go:build unix

package guard

import (
	"os"
	"syscall"
)

// ownedHere reports the owner of the file st describes and whether it is
// this process's effective user or root.
func ownedHere(st os.FileInfo) (uid int, ok bool) {
	sys, isStat := st.Sys().(*syscall.Stat_t)
	if !isStat {
		return -1, true
	}
	uid = int(sys.Uid)
	return uid, uid == 0 || uid == os.Geteuid()
}
