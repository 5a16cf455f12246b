//go:build !(linux || darwin || freebsd || netbsd || openbsd || dragonfly)

package editlog

import "errors"

type dirLock struct{}

func lockDir(dir string) (*dirLock, error) {
	return nil, errors.New("editlog: storage directory locking is not supported on this platform")
}

func (l *dirLock) release() error { return nil }
