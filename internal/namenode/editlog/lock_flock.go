//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package editlog

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// dirLock is an exclusive flock(2) on <dir>/in_use.lock. flock locks belong
// to the open file description, so a second lockDir of the same directory
// fails even within one process, and the kernel drops the lock when the
// process dies.
type dirLock struct {
	f *os.File
}

func lockDir(dir string) (*dirLock, error) {
	f, err := os.OpenFile(filepath.Join(dir, lockFileName), os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, fmt.Errorf("editlog: lock %s: %w", dir, err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EAGAIN) {
			return nil, &msgError{fmt.Sprintf("editlog: storage directory %s is in use by another process", dir), ErrInUse}
		}
		return nil, fmt.Errorf("editlog: lock %s: %w", dir, err)
	}
	// Like Hadoop, record the holder for the operator; best effort.
	host, _ := os.Hostname()
	if err := f.Truncate(0); err == nil {
		fmt.Fprintf(f, "%d@%s\n", os.Getpid(), host)
	}
	return &dirLock{f: f}, nil
}

func (l *dirLock) release() error {
	if l == nil || l.f == nil {
		return nil
	}
	err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}
