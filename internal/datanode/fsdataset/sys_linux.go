//go:build linux

package fsdataset

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

const oDirect = syscall.O_DIRECT

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

// dropCache tells the kernel that [off, off+n) of f (n 0: to the end)
// will not be read soon: its clean pages leave the page cache
// (posix_fadvise POSIX_FADV_DONTNEED). Advice only; dirty pages stay.
func dropCache(f *os.File, off, n int64) {
	_ = unix.Fadvise(int(f.Fd()), off, n, unix.FADV_DONTNEED)
}
