//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package vfs

import (
	"errors"
	"io"
	"io/fs"
)

type pathError = fs.PathError

func lockFile(path string) (io.Closer, error) {
	return nil, errors.New("vfs: file locking is not supported on this platform")
}
