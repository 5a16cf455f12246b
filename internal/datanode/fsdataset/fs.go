package fsdataset

import (
	"errors"
	"io"
	"os"

	"github.com/stratafs/strata/internal/media"
	"github.com/stratafs/strata/internal/vfs"
)

// FS is the file system the volumes live on (see package vfs for the
// contract), so tests can wrap the real one and inject faults (fail the
// N-th write, make a volume return EIO for everything; package
// vfs/errorfs). OSFS is the real one.
type FS = vfs.FS

// File is an open file of an FS. *os.File implements it.
type File = vfs.File

// DiskUsage is a file system's size and the bytes available to the
// DataNode (statfs f_blocks and f_bavail, times the block size).
type DiskUsage = vfs.DiskUsage

// O_DIRECT is the open flag for direct I/O on this platform; 0 where the
// platform has none (then Config.DirectIO falls back to buffered writes).
const O_DIRECT = oDirect

// OSFS is the process's file system, media.Default(): the operating
// system's, where files in a directory with emulated storage media
// (package media) pay its device model on every read and write and are
// *os.File elsewhere.
type OSFS struct{}

var _ FS = OSFS{}

func (OSFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	return media.Default().OpenFile(name, flag, perm)
}
func (OSFS) Rename(oldpath, newpath string) error { return media.Default().Rename(oldpath, newpath) }
func (OSFS) Remove(name string) error             { return media.Default().Remove(name) }
func (OSFS) RemoveAll(path string) error          { return media.Default().RemoveAll(path) }
func (OSFS) Mkdir(name string, perm os.FileMode) error {
	return media.Default().Mkdir(name, perm)
}
func (OSFS) MkdirAll(path string, perm os.FileMode) error {
	return media.Default().MkdirAll(path, perm)
}
func (OSFS) Stat(name string) (os.FileInfo, error)      { return media.Default().Stat(name) }
func (OSFS) ReadDir(name string) ([]os.DirEntry, error) { return media.Default().ReadDir(name) }
func (OSFS) Statfs(path string) (DiskUsage, error)      { return media.Default().Statfs(path) }
func (OSFS) Lock(path string) (io.Closer, error)        { return media.Default().Lock(path) }

// Charge implements vfs.Charger, for bytes sent without the File.
func (OSFS) Charge(path string, off, n int64, write bool) error {
	return media.Charge(path, off, n, write)
}

// syncDir fsyncs a directory, making the names in it durable.
func syncDir(fsys FS, dir string) error { return vfs.SyncDir(fsys, dir) }

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
