//go:build linux || darwin || freebsd || netbsd || openbsd || dragonfly

package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"syscall"
)

type pathError = fs.PathError

// flockFile is an exclusive flock(2). flock locks belong to the open file
// description, so a second lock of the same file fails even within one
// process, and the kernel drops the lock when the process dies.
type flockFile struct{ f *os.File }

func lockFile(path string) (io.Closer, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EAGAIN) {
			return nil, &pathError{Op: "lock", Path: path, Err: ErrLocked}
		}
		return nil, &pathError{Op: "flock", Path: path, Err: err}
	}
	// Like Hadoop, record the holder for the operator; best effort.
	host, _ := os.Hostname()
	if err := f.Truncate(0); err == nil {
		fmt.Fprintf(f, "%d@%s\n", os.Getpid(), host)
	}
	return &flockFile{f}, nil
}

func (l *flockFile) Close() error {
	if l.f == nil {
		return nil
	}
	err := syscall.Flock(int(l.f.Fd()), syscall.LOCK_UN)
	if cerr := l.f.Close(); err == nil {
		err = cerr
	}
	l.f = nil
	return err
}
