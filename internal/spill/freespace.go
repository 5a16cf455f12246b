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

// pickDir returns dirs[seq mod len] or, when its file system has less
// than need bytes free (with an eighth and 1 MiB to spare), the next dir
// round-robin that has them; if none has, the one with the most: Hadoop's
// LocalDirAllocator. dirs must not be empty.
func pickDir(fsys vfs.FS, dirs []string, seq int, need int64) string {
	best, bestFree := 0, int64(-1)
	for i := range dirs {
		d := (seq + i) % len(dirs)
		free := freeSpace(fsys, dirs[d])
		if free < 0 || free >= need+need/8+(1<<20) {
			return dirs[d]
		}
		if free > bestFree {
			best, bestFree = d, free
		}
	}
	return dirs[best]
}
