//go:build linux || darwin || freebsd

package spill

import "syscall"

// freeSpace returns the bytes available to an unprivileged user on dir's
// file system, or -1 if unknown.
func freeSpace(dir string) int64 {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return -1
	}
	return int64(st.Bavail) * int64(st.Bsize)
}
