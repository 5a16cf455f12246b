package spill

import "github.com/stratafs/strata/internal/vfs"

// freeSpace returns the bytes available to an unprivileged user on dir's
// file system, or -1 if unknown.
func freeSpace(fsys vfs.FS, dir string) int64 {
	du, err := fsys.Statfs(dir)
	if err != nil {
		return -1
	}
	return du.Free
}
