//go:build darwin

package fs

import (
	"os"
	"syscall"
	"time"
)

func sysInfo(fi os.FileInfo) (uid, gid uint32, atime time.Time, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, time.Time{}, false
	}
	return st.Uid, st.Gid, time.Unix(int64(st.Atimespec.Sec), int64(st.Atimespec.Nsec)), true
}

func statfs(p string) (FsStatus, error) {
	var s syscall.Statfs_t
	if err := syscall.Statfs(p, &s); err != nil {
		return FsStatus{}, err
	}
	bs := int64(s.Bsize)
	total := int64(s.Blocks) * bs
	free := int64(s.Bfree) * bs
	return FsStatus{Capacity: total, Used: total - free, Remaining: free}, nil
}

func access(op string, _ os.FileInfo, mode uint8) error {
	return syscall.Access(op, uint32(mode))
}

// startWriteback and awaitWriteback are Linux's sync_file_range; elsewhere
// Close's fsync does all the work.
func startWriteback(f *os.File, off, n int64) error { return nil }
func awaitWriteback(f *os.File, off, n int64) error { return nil }
