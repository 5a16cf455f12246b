//go:build darwin

package vfs

import "syscall"

func statfs(p string) (DiskUsage, error) {
	var s syscall.Statfs_t
	if err := syscall.Statfs(p, &s); err != nil {
		return DiskUsage{}, &pathError{Op: "statfs", Path: p, Err: err}
	}
	bs := int64(s.Bsize)
	return DiskUsage{Total: int64(s.Blocks) * bs, Free: int64(s.Bavail) * bs}, nil
}
