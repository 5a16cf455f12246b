package editlog

import (
	"errors"
	"fmt"
	"io"
	"path/filepath"

	"github.com/stratafs/strata/internal/vfs"
)

// dirLock is the FS's exclusive lock on <dir>/in_use.lock (flock(2) on the
// OS: a second lockDir of the same directory fails even within one
// process, and the kernel drops the lock when the process dies).
type dirLock struct {
	c io.Closer
}

func lockDir(fsys vfs.FS, dir string) (*dirLock, error) {
	c, err := fsys.Lock(filepath.Join(dir, lockFileName))
	if errors.Is(err, errors.ErrUnsupported) {
		return &dirLock{}, nil // as before on such platforms: unlocked
	}
	if errors.Is(err, vfs.ErrLocked) {
		return nil, &msgError{fmt.Sprintf("editlog: storage directory %s is in use by another process", dir), ErrInUse}
	}
	if err != nil {
		return nil, fmt.Errorf("editlog: lock %s: %w", dir, err)
	}
	return &dirLock{c: c}, nil
}

func (l *dirLock) release() error {
	if l == nil || l.c == nil {
		return nil
	}
	err := l.c.Close()
	l.c = nil
	return err
}
