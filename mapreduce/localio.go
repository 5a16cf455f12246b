package mapreduce

import (
	"os"
	"sync/atomic"

	"github.com/stratafs/strata/internal/media"
	"github.com/stratafs/strata/internal/vfs"
)

// localIO is the file system of an attempt's intermediate data (spills,
// merges, map output, shuffled segments on disk): the process's
// (media.Default, emulated media included) counting every byte read and
// written through it, for the attempt's FILE_BYTES_READ and
// FILE_BYTES_WRITTEN. Its files do not hand out their descriptors
// (vfs.Raw), so no byte moves past the count.
type localIO struct {
	vfs.FS
	read, written atomic.Int64
}

func newLocalIO() *localIO { return &localIO{FS: media.Default()} }

func (l *localIO) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	f, err := l.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &countedFile{File: f, io: l}, nil
}

// addTo adds the bytes counted so far to c and restarts the count.
func (l *localIO) addTo(c *Counters) {
	c.Add(GroupFileSystem, FileBytesRead, l.read.Swap(0))
	c.Add(GroupFileSystem, FileBytesWritten, l.written.Swap(0))
}

type countedFile struct {
	vfs.File
	io *localIO
}

func (f *countedFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	f.io.read.Add(int64(n))
	return n, err
}

func (f *countedFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	f.io.read.Add(int64(n))
	return n, err
}

func (f *countedFile) Write(p []byte) (int, error) {
	n, err := f.File.Write(p)
	f.io.written.Add(int64(n))
	return n, err
}

func (f *countedFile) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.File.WriteAt(p, off)
	f.io.written.Add(int64(n))
	return n, err
}
