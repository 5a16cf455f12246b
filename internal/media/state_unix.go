//go:build unix

package media

import (
	"errors"
	"os"
	"path/filepath"
	"syscall"
)

// mapState opens (creating) the state file at path and maps its page
// shared.
func mapState(path string) ([]byte, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return nil, err
	}
	defer f.Close() // the mapping outlives the descriptor
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() < stateSize {
		if err := f.Truncate(stateSize); err != nil {
			return nil, err
		}
	}
	page, err := syscall.Mmap(int(f.Fd()), 0, stateSize, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_SHARED)
	if err != nil {
		return nil, err
	}
	// A new or foreign file gets a clean page (its lock word free) under
	// the file's flock, so that two processes starting together agree.
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		syscall.Munmap(page)
		return nil, err
	}
	initPage(page)
	syscall.Flock(int(f.Fd()), syscall.LOCK_UN)
	return page, nil
}

// processAlive reports whether process pid exists.
func processAlive(pid int) bool {
	if pid <= 0 || pid > 1<<22 { // Linux's PID_MAX_LIMIT
		return false
	}
	err := syscall.Kill(pid, 0)
	return err == nil || errors.Is(err, syscall.EPERM)
}

// fileID identifies the file fi describes on its device: its inode, so
// that a renamed file stays the same file.
func fileID(fi os.FileInfo) uint64 {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return uint64(st.Ino)<<8 ^ uint64(st.Dev) | 1<<63
	}
	return 1
}
