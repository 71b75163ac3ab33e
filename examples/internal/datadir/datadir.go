// Package datadir keeps the data directories and database files of the
// example servers private to the user that runs them: their files hold
// every principal's conversations, threads and checkpoints.
package datadir

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"runtime"

	"go.uber.org/zap"
)

// Private makes the data directory dir accessible by its owner only: it
// creates it with mode 0700 when missing; an existing directory that holds
// nothing but the program's own entries (own reports them: an earlier
// version, or the operator, may have made it 0755) loses the group's and
// others' permissions, keeping its setgid and sticky bits. Any other
// directory (one holding other files, such as a home directory or ".",
// or a symbolic link, which is not followed) keeps its mode with a
// warning on log, as does one it may not change (fs.ErrPermission:
// another user's), rather than failing. field names the setting that
// gave dir in errors and warnings ("chatbot: DataDir"). chmod is os.Chmod
// but in tests.
func Private(dir string, own func(fs.DirEntry) bool, field string, log *zap.Logger, chmod func(string, os.FileMode) error) error {
	st, err := os.Lstat(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
		st, err = os.Lstat(dir)
	}
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	link := st.Mode()&fs.ModeSymlink != 0
	if link {
		if st, err = os.Stat(dir); err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
	}
	if !st.IsDir() {
		return fmt.Errorf("%s: %s is not a directory; name a directory for the databases", field, dir)
	}
	perm := st.Mode().Perm()
	if runtime.GOOS == "windows" || perm&0o077 == 0 {
		return nil // Windows has no group or other permissions to take
	}
	mine, err := onlyOwn(dir, own)
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	if !mine || link {
		log.Warn(field+": the data directory keeps its mode, which may let other users of this machine read its files, "+
			"since it is a symbolic link or holds files besides the databases; "+
			"give the program a directory of its own, or set this one's mode to 0700", zap.String("path", dir), zap.Stringer("mode", perm))
		return nil
	}
	lstat, err := os.Lstat(dir)
	if err != nil {
		return fmt.Errorf("%s: %w", field, err)
	}
	if lstat.Mode()&fs.ModeSymlink != 0 {
		return nil // replaced meanwhile: leave it
	}
	keep := st.Mode() & (fs.ModeSetgid | fs.ModeSticky)
	switch err := chmod(dir, perm&^0o077|keep); {
	case err == nil:
		log.Info(field+": took the group's and others' access away from the data directory",
			zap.String("path", dir), zap.Stringer("was", perm), zap.Stringer("now", perm&^0o077))
	case errors.Is(err, fs.ErrPermission):
		log.Warn(field+": the data directory keeps its mode, which may let other users of this machine read its files; "+
			"make the service's user own it, or set its mode to 0700", zap.String("path", dir), zap.Stringer("mode", perm), zap.Error(err))
	default:
		return fmt.Errorf("%s: %w", field, err)
	}
	return nil
}

// onlyOwn reports whether dir holds nothing but entries own reports.
func onlyOwn(dir string, own func(fs.DirEntry) bool) (bool, error) {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false, err
	}
	for _, e := range entries {
		if !own(e) {
			return false, nil
		}
	}
	return true, nil
}

// SQLiteFiles returns an own function for [Private]: it reports the
// regular files of the SQLite databases named dbs, with their -wal, -shm
// and -journal files.
func SQLiteFiles(dbs ...string) func(fs.DirEntry) bool {
	names := map[string]bool{}
	for _, db := range dbs {
		for _, suffix := range []string{"", "-wal", "-shm", "-journal"} {
			names[db+suffix] = true
		}
	}
	return func(e fs.DirEntry) bool { return names[e.Name()] && e.Type().IsRegular() }
}

// PrivateFile makes the SQLite file at path readable by its owner only:
// it creates it empty with mode 0600 when missing (SQLite gives its -wal
// and -shm files the database file's mode), else sets that mode on it and
// on its -wal and -shm files, which earlier versions created by the umask.
// A file it may not change (fs.ErrPermission: another user's, on a shared
// volume) keeps its mode with a warning on log rather than failing. field
// names the setting that gave its directory in errors and warnings.
// A database file, -wal or -shm file that is not a regular file (a
// symbolic link, which chmod and SQLite would follow to a file elsewhere)
// is refused. chmod is os.Chmod but in tests.
func PrivateFile(path, field string, log *zap.Logger, chmod func(string, os.FileMode) error) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		return f.Close()
	}
	if !errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s: %w", field, err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("%s: %w", field, err)
		}
		if !st.Mode().IsRegular() {
			return fmt.Errorf("%s: %s is not a regular file (%s), which the database would follow or fail on; "+
				"remove it, or give the program a directory of its own", field, p, st.Mode().Type())
		}
		err = chmod(p, 0o600)
		switch {
		case err == nil, errors.Is(err, fs.ErrNotExist):
		case errors.Is(err, fs.ErrPermission):
			log.Warn(field+": a database file keeps its mode, which may let other users of this machine read it; "+
				"make the service's user own it, or set its mode to 0600", zap.String("path", p), zap.Error(err))
		default:
			return fmt.Errorf("%s: %w", field, err)
		}
	}
	return nil
}
