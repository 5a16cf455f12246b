package vfs

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
)

// FS is the file system the data path works on. See the package doc for
// the contract every implementation keeps.
type FS interface {
	// OpenFile is os.OpenFile.
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	// Remove is os.Remove.
	Remove(name string) error
	// RemoveAll is os.RemoveAll.
	RemoveAll(path string) error
	// Rename is os.Rename.
	Rename(oldpath, newpath string) error
	// Mkdir is os.Mkdir.
	Mkdir(name string, perm os.FileMode) error
	// MkdirAll is os.MkdirAll.
	MkdirAll(path string, perm os.FileMode) error
	// Stat is os.Stat.
	Stat(name string) (os.FileInfo, error)
	// ReadDir is os.ReadDir: the entries sorted by name.
	ReadDir(name string) ([]os.DirEntry, error)
	// Statfs reports the size and the space available to the process of
	// the file system holding path (statfs(2)); errors.ErrUnsupported
	// where the platform cannot tell.
	Statfs(path string) (DiskUsage, error)
	// Lock takes an exclusive, non-blocking lock on the file at path,
	// creating it, and records the holder (pid@host) in it. The lock is
	// held until the returned Closer is closed or the process dies; a
	// second Lock of the same path fails with an error wrapping ErrLocked,
	// even within one process. Where the platform cannot lock, the error
	// wraps errors.ErrUnsupported.
	Lock(path string) (io.Closer, error)
}

// File is an open file of an FS. *os.File implements it.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.WriterAt
	io.Seeker
	io.Closer
	// Name is the name the file was opened as.
	Name() string
	Stat() (os.FileInfo, error)
	// Sync is fsync(2); see the package doc for what a failure means.
	Sync() error
	Truncate(size int64) error
	// Fd is the operating-system descriptor under the file. A wrapper
	// returns its inner file's; code that hands the descriptor to the
	// kernel (sendfile, fd passing) must check for *os.File instead, as
	// I/O through the descriptor bypasses the wrapper.
	Fd() uintptr
}

var _ File = (*os.File)(nil)

// DiskUsage is a file system's size and the bytes available to the
// process (statfs f_blocks and f_bavail, times the block size).
type DiskUsage struct {
	Total int64
	Free  int64
}

// Chmoder is implemented by an FS that can change a file's permission
// bits (os.Chmod). Default does.
type Chmoder interface {
	Chmod(name string, mode os.FileMode) error
}

// Chmod sets name's permission bits on fsys, or returns an error wrapping
// errors.ErrUnsupported when fsys cannot.
func Chmod(fsys FS, name string, mode os.FileMode) error {
	if c, ok := fsys.(Chmoder); ok {
		return c.Chmod(name, mode)
	}
	return fmt.Errorf("vfs: chmod %s: %w", name, errors.ErrUnsupported)
}

// ErrLocked is wrapped by Lock's error when another holder has the lock.
var ErrLocked = errors.New("vfs: file is locked by another holder")

// Charger is implemented by an FS that accounts for I/O (package media):
// bytes a caller moves around the FS's File, on a descriptor from OSFile
// (sendfile), are charged with it. Charge returns when the device the
// path lives on would have served the n bytes at offset off.
type Charger interface {
	Charge(path string, off, n int64, write bool) error
}

// Raw is implemented by a File that wraps an *os.File only to account for
// its I/O (package media's paced files): OSFile returns the inner file,
// whose I/O the caller then charges with the FS's Charger. Wrappers that
// must see every byte (errorfs) do not implement it.
type Raw interface {
	OSFile() *os.File
}

// OSFile returns the operating-system file for a zero-copy transfer of
// f's bytes, and the Charger the caller must charge them to (nil when
// none is needed); ok is false when f's bytes must go through f.
func OSFile(fsys FS, f File) (of *os.File, c Charger, ok bool) {
	switch f := f.(type) {
	case *os.File:
		c, _ = fsys.(Charger)
		return f, c, true
	case Raw:
		if c, _ = fsys.(Charger); c != nil {
			if of := f.OSFile(); of != nil {
				return of, c, true
			}
		}
	}
	return nil, nil, false
}

// Or returns fsys, or Default when fsys is nil: the rule for every
// optional FS field.
func Or(fsys FS) FS {
	if fsys == nil {
		return Default
	}
	return fsys
}

// Open is OpenFile(name, os.O_RDONLY, 0), as os.Open.
func Open(fsys FS, name string) (File, error) { return fsys.OpenFile(name, os.O_RDONLY, 0) }

// Create is OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666), as
// os.Create.
func Create(fsys FS, name string) (File, error) {
	return fsys.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// ReadFile is os.ReadFile on fsys.
func ReadFile(fsys FS, name string) ([]byte, error) {
	f, err := Open(fsys, name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(f)
}

// WriteFile is os.WriteFile on fsys (not synced).
func WriteFile(fsys FS, name string, data []byte, perm os.FileMode) error {
	f, err := fsys.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// SyncDir fsyncs directory dir, making the names in it durable.
func SyncDir(fsys FS, dir string) error {
	f, err := fsys.OpenFile(dir, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// CreateTemp is os.CreateTemp on fsys: a new file in dir (which must not
// be empty) whose name is pattern with its last "*" (or its end) replaced
// by a random string, opened for reading and writing with O_EXCL.
func CreateTemp(fsys FS, dir, pattern string) (File, error) {
	prefix, suffix := pattern, ""
	for i := len(pattern) - 1; i >= 0; i-- {
		if pattern[i] == '*' {
			prefix, suffix = pattern[:i], pattern[i+1:]
			break
		}
	}
	for try := 0; ; try++ {
		name := dir + string(os.PathSeparator) + prefix + randomName() + suffix
		f, err := fsys.OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		if errors.Is(err, fs.ErrExist) && try < 10000 {
			continue
		}
		return f, err
	}
}
