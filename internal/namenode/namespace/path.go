package namespace

import (
	"path"
	"strings"

	"github.com/stratafs/strata/internal/ipc"
)

// MaxPathLength is the longest path accepted, in bytes.
const MaxPathLength = 8000

// CheckPath validates p as HDFS's DFSUtil.isValidName and FSDirectory's
// limits do: absolute, at most MaxPathLength bytes, no empty, ".", ".."
// or ':'-containing components, no NUL, and no component longer than
// maxComponentLength bytes (0 disables that check). Errors are
// InvalidPathException or PathComponentTooLongException.
func CheckPath(p string, maxComponentLength int) error {
	if !strings.HasPrefix(p, "/") {
		return ipc.Errorf(ipc.ClassInvalidPath, "Invalid path name Path is not absolute: %s", p)
	}
	if len(p) > MaxPathLength {
		return ipc.Errorf(ipc.ClassInvalidPath, "Invalid path name: path is longer than 8000 bytes")
	}
	for i, c := range SplitPath(p) {
		if c == "" && i > 0 || c == "." || c == ".." || strings.Contains(c, ":") || strings.ContainsRune(c, 0) {
			return ipc.Errorf(ipc.ClassInvalidPath, "Invalid path name Invalid file name: %s", p)
		}
		if maxComponentLength > 0 && len(c) > maxComponentLength {
			return ipc.Errorf(ipc.ClassPathComponentTooLong, "The maximum path component name limit of %s in directory %s is exceeded: limit=%d length=%d",
				c, path.Dir("/"+strings.Join(SplitPath(p)[:i+1], "/")), maxComponentLength, len(c))
		}
	}
	if strings.Contains(p, "//") {
		return ipc.Errorf(ipc.ClassInvalidPath, "Invalid path name Invalid file name: %s", p)
	}
	return nil
}
