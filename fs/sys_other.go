//go:build !linux && !darwin

package fs

import (
	"errors"
	"os"
	"time"
)

func sysInfo(fi os.FileInfo) (uid, gid uint32, atime time.Time, ok bool) {
	return 0, 0, time.Time{}, false
}

func statfs(p string) (FsStatus, error) {
	return FsStatus{}, errors.ErrUnsupported
}

// access approximates from the owner bits: the process owns what it sees.
func access(op string, fi os.FileInfo, mode uint8) error {
	if uint8(fi.Mode().Perm()>>6)&mode != mode {
		return os.ErrPermission
	}
	return nil
}

// startWriteback and awaitWriteback are Linux's sync_file_range; elsewhere
// Close's fsync does all the work.
func startWriteback(f *os.File, off, n int64) error { return nil }
func awaitWriteback(f *os.File, off, n int64) error { return nil }
