package vfs

import (
	"io"
	"math/rand/v2"
	"os"
	"strconv"
)

// Default is the operating system's file system: package os, statfs(2)
// and flock(2). Its files are *os.File.
var Default FS = osFS{}

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err // a nil *os.File must not become a non-nil File
	}
	return f, nil
}

func (osFS) Remove(name string) error                     { return os.Remove(name) }
func (osFS) RemoveAll(path string) error                  { return os.RemoveAll(path) }
func (osFS) Rename(oldpath, newpath string) error         { return os.Rename(oldpath, newpath) }
func (osFS) Mkdir(name string, perm os.FileMode) error    { return os.Mkdir(name, perm) }
func (osFS) MkdirAll(path string, perm os.FileMode) error { return os.MkdirAll(path, perm) }
func (osFS) Stat(name string) (os.FileInfo, error)        { return os.Stat(name) }
func (osFS) ReadDir(name string) ([]os.DirEntry, error)   { return os.ReadDir(name) }
func (osFS) Statfs(path string) (DiskUsage, error)        { return statfs(path) }
func (osFS) Lock(path string) (io.Closer, error)          { return lockFile(path) }
func (osFS) Chmod(name string, mode os.FileMode) error    { return os.Chmod(name, mode) }

func randomName() string { return strconv.FormatUint(rand.Uint64()%1e10, 10) }
