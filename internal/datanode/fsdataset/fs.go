package fsdataset

import (
	"errors"
	"io"
	"os"

	"github.com/stratafs/strata/internal/media"
)

// FS is the file system the volumes live on: the few operations the
// dataset needs, so tests can wrap the real one and inject faults (fail the
// N-th write, make a volume return EIO for everything). OSFS is the real
// one. Implementations must be safe for concurrent use.
type FS interface {
	// OpenFile is os.OpenFile. flag may include O_DIRECT; an FS that
	// cannot honour it returns an error wrapping syscall.EINVAL, as Linux
	// does for a file system without direct I/O.
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	Rename(oldpath, newpath string) error
	Remove(name string) error
	MkdirAll(path string, perm os.FileMode) error
	Stat(name string) (os.FileInfo, error)
	ReadDir(name string) ([]os.DirEntry, error)
	// Statfs reports the size and free space of the file system holding
	// path. It returns errors.ErrUnsupported where the platform cannot
	// tell; the dataset then treats the volume as never full.
	Statfs(path string) (DiskUsage, error)
	// Lock takes an exclusive, non-blocking lock on the file at path
	// (creating it), held until the returned Closer is closed. It fails
	// with an error wrapping ErrInUse when someone else holds it.
	Lock(path string) (io.Closer, error)
}

// File is an open file of an FS. *os.File implements it.
type File interface {
	io.ReaderAt
	io.WriterAt
	io.Closer
	Stat() (os.FileInfo, error)
	Sync() error
	Truncate(size int64) error
	Name() string
}

// DiskUsage is a file system's size and the bytes available to the
// DataNode (statfs f_blocks and f_bavail, times the block size).
type DiskUsage struct {
	Total int64
	Free  int64
}

// O_DIRECT is the open flag for direct I/O on this platform; 0 where the
// platform has none (then Config.DirectIO falls back to buffered writes).
const O_DIRECT = oDirect

// OSFS is the operating system's file system.
type OSFS struct{}

var _ FS = OSFS{}

// OpenFile implements FS. Files in a directory with emulated storage
// media (package media) pay its device model on every read and write;
// elsewhere they are *os.File.
func (OSFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := media.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err // a nil File must not become a non-nil File
	}
	return f, nil
}

// Rename implements FS.
func (OSFS) Rename(oldpath, newpath string) error { return os.Rename(oldpath, newpath) }

// Remove implements FS.
func (OSFS) Remove(name string) error { return os.Remove(name) }

// MkdirAll implements FS.
func (OSFS) MkdirAll(path string, perm os.FileMode) error { return os.MkdirAll(path, perm) }

// Stat implements FS.
func (OSFS) Stat(name string) (os.FileInfo, error) { return os.Stat(name) }

// ReadDir implements FS.
func (OSFS) ReadDir(name string) ([]os.DirEntry, error) { return os.ReadDir(name) }

// Statfs implements FS.
func (OSFS) Statfs(path string) (DiskUsage, error) { return statfs(path) }

// Lock implements FS.
func (OSFS) Lock(path string) (io.Closer, error) { return lockFile(path) }

// syncDir fsyncs a directory, making the names in it durable.
func syncDir(fsys FS, dir string) error {
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

// readFile reads a whole (small) file.
func readFile(fsys FS, name string) ([]byte, error) {
	f, err := fsys.OpenFile(name, os.O_RDONLY, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() > 1<<20 {
		return nil, errors.New("file too large")
	}
	b := make([]byte, fi.Size())
	n, err := f.ReadAt(b, 0)
	if err != nil && err != io.EOF {
		return nil, err
	}
	return b[:n], nil
}

// writeFileAtomic writes name through name.tmp, fsync and rename, then
// fsyncs the directory.
func writeFileAtomic(fsys FS, dir, name string, data []byte) error {
	tmp := name + ".tmp"
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	if _, err = f.WriteAt(data, 0); err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(tmp, name)
	}
	if err != nil {
		fsys.Remove(tmp)
		return err
	}
	return syncDir(fsys, dir)
}

// isNotExist reports a missing file.
func isNotExist(err error) bool { return errors.Is(err, os.ErrNotExist) }
