//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package fsdataset

import (
	"errors"
	"io"
)

func lockFile(path string) (io.Closer, error) {
	return nil, errors.New("fsdataset: volume locking is not supported on this platform")
}
