//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
)

type pathError = fs.PathError

func lockFile(path string) (io.Closer, error) {
	return nil, fmt.Errorf("vfs: lock %s: file locking is not supported on this platform: %w", path, errors.ErrUnsupported)
}
