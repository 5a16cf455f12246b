package faultmatrix

import "syscall"

type syscallStatfs struct{ free int64 }

// statfs reports the bytes available to an unprivileged writer on the
// file system of path (root may use a little more).
func statfs(path string, st *syscallStatfs) error {
	var s syscall.Statfs_t
	if err := syscall.Statfs(path, &s); err != nil {
		return err
	}
	st.free = int64(s.Bavail) * int64(s.Bsize)
	return nil
}
