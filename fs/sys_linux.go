//go:build linux

package fs

import (
	"os"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

func sysInfo(fi os.FileInfo) (uid, gid uint32, atime time.Time, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, 0, time.Time{}, false
	}
	return st.Uid, st.Gid, time.Unix(int64(st.Atim.Sec), int64(st.Atim.Nsec)), true
}

func statfs(p string) (FsStatus, error) {
	var s syscall.Statfs_t
	if err := syscall.Statfs(p, &s); err != nil {
		return FsStatus{}, err
	}
	bs := int64(s.Frsize)
	if bs == 0 {
		bs = int64(s.Bsize)
	}
	total := int64(s.Blocks) * bs
	free := int64(s.Bfree) * bs
	// As Hadoop's RawLocalFileSystem: used = total - free, remaining = free.
	return FsStatus{Capacity: total, Used: total - free, Remaining: free}, nil
}

func access(op string, _ os.FileInfo, mode uint8) error {
	return syscall.Access(op, uint32(mode))
}

// startWriteback asks the kernel to start writing [off, off+n) of f to
// disk now, without waiting (sync_file_range SYNC_FILE_RANGE_WRITE).
func startWriteback(f *os.File, off, n int64) error {
	return unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}

// awaitWriteback waits until [off, off+n) of f is written out. It reports
// a write error once (the kernel then clears it for the file: the caller
// must keep it, or a later fsync succeeds without the data).
func awaitWriteback(f *os.File, off, n int64) error {
	return unix.SyncFileRange(int(f.Fd()), off, n,
		unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
}
