package media

import (
	"io"
	"os"
	"sync/atomic"

	"github.com/stratafs/strata/internal/vfs"
)

// FS is a file system wrapping another (its inner FS) in which the files
// under a table's emulated directories pay their device's model: every
// read and write of a File opened in one, and every Charge of a path in
// one. Outside them (and on a ram device) OpenFile returns the inner FS's
// file itself, so over vfs.Default it is an *os.File and zero-copy paths
// keep working. The operations other than OpenFile are the inner FS's.
// The devices' shared state pages (docs/format/media-state.md) are
// mapped from the operating system's file system whatever the inner FS.
// An FS is safe for concurrent use.
type FS struct {
	inner vfs.FS
	s     *state
}

var (
	_ vfs.FS      = (*FS)(nil)
	_ vfs.Charger = (*FS)(nil)
)

// New returns inner with t's devices emulated (a nil inner is
// vfs.Default). A nil or empty table emulates nothing. The table's
// directories must be absolute and its parameters valid.
func New(inner vfs.FS, t *Table) (*FS, error) {
	if t == nil {
		t = &Table{}
	}
	s, err := newState(t)
	if err != nil {
		return nil, err
	}
	return &FS{inner: vfs.Or(inner), s: s}, nil
}

// Table returns the emulated devices.
func (m *FS) Table() Table {
	t := m.s.table
	t.Devices = append([]Device(nil), t.Devices...)
	return t
}

// Lookup returns the emulated device holding path, if any. Devices whose
// model costs nothing (the ram preset) are reported too.
func (m *FS) Lookup(path string) (Device, bool) {
	d := m.s.find(path)
	if d == nil {
		return Device{}, false
	}
	return d.Device, true
}

// OpenFile is the inner FS's OpenFile. Outside emulated directories (and
// in a ram device) it returns the inner file itself; inside, a File whose
// reads and writes the directory's device pays for: reads that continue
// the handle's previous read are charged as readahead extents of
// strata.media.request.bytes, other reads exactly; writes are gathered
// into contiguous extents of up to strata.media.request.bytes, charged
// when full, when a write does not continue them, and on Sync, Truncate
// and Close. Each charge waits until the device would have served it.
func (m *FS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	f, err := m.inner.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	d := m.s.lookup(name)
	if d == nil {
		return f, nil
	}
	return wrap(f, d)
}

// Charge makes the device holding path pay for n bytes at offset off of
// that file, as the requests a transfer of them would make, and returns
// when the device would have finished them. It is for code that moves
// bytes without going through a File (sendfile; see vfs.OSFile). Outside
// emulated directories it returns nil at once.
func (m *FS) Charge(path string, off, n int64, write bool) error {
	d := m.s.lookup(path)
	if d == nil || n <= 0 {
		return nil
	}
	fi, err := m.inner.Stat(path)
	if err != nil {
		return err
	}
	var clock atomic.Int64
	d.charge(&clock, fileID(fi), off, n, write)
	return nil
}

func (m *FS) Remove(name string) error                     { return m.inner.Remove(name) }
func (m *FS) RemoveAll(path string) error                  { return m.inner.RemoveAll(path) }
func (m *FS) Rename(oldpath, newpath string) error         { return m.inner.Rename(oldpath, newpath) }
func (m *FS) Mkdir(name string, perm os.FileMode) error    { return m.inner.Mkdir(name, perm) }
func (m *FS) MkdirAll(path string, perm os.FileMode) error { return m.inner.MkdirAll(path, perm) }
func (m *FS) Stat(name string) (os.FileInfo, error)        { return m.inner.Stat(name) }
func (m *FS) ReadDir(name string) ([]os.DirEntry, error)   { return m.inner.ReadDir(name) }
func (m *FS) Chmod(name string, mode os.FileMode) error    { return vfs.Chmod(m.inner, name, mode) }
func (m *FS) Statfs(path string) (vfs.DiskUsage, error)    { return m.inner.Statfs(path) }
func (m *FS) Lock(path string) (io.Closer, error)          { return m.inner.Lock(path) }

// Default returns the process's file system: vfs.Default with the
// devices of the table installed by Configure or Install (or read from
// $STRATA_MEDIA) emulated. It looks the table up on every call, so a value
// taken before Configure emulates the devices installed later, as the
// package-level functions always have; with emulation off it is
// vfs.Default's behaviour exactly. Daemons and task children use it as
// the default FS of their data path.
func Default() vfs.FS { return processFS{} }

// processFS is Default: the installed FS, or vfs.Default.
type processFS struct{}

func (processFS) fs() vfs.FS {
	if m := load(); m != nil {
		return m
	}
	return vfs.Default
}

func (p processFS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	return p.fs().OpenFile(name, flag, perm)
}

// Charge implements vfs.Charger for the installed table.
func (processFS) Charge(path string, off, n int64, write bool) error {
	return Charge(path, off, n, write)
}

func (p processFS) Remove(name string) error                     { return p.fs().Remove(name) }
func (p processFS) RemoveAll(path string) error                  { return p.fs().RemoveAll(path) }
func (p processFS) Rename(oldpath, newpath string) error         { return p.fs().Rename(oldpath, newpath) }
func (p processFS) Mkdir(name string, perm os.FileMode) error    { return p.fs().Mkdir(name, perm) }
func (p processFS) MkdirAll(path string, perm os.FileMode) error { return p.fs().MkdirAll(path, perm) }
func (p processFS) Stat(name string) (os.FileInfo, error)        { return p.fs().Stat(name) }
func (p processFS) ReadDir(name string) ([]os.DirEntry, error)   { return p.fs().ReadDir(name) }
func (p processFS) Statfs(path string) (vfs.DiskUsage, error)    { return p.fs().Statfs(path) }
func (p processFS) Lock(path string) (io.Closer, error)          { return p.fs().Lock(path) }
func (p processFS) Chmod(name string, mode os.FileMode) error    { return vfs.Chmod(p.fs(), name, mode) }

// OpenFile is Default().OpenFile: os.OpenFile, paying the process's
// emulated device inside its directories.
func OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	return Default().OpenFile(name, flag, perm)
}

// Open is OpenFile(name, os.O_RDONLY, 0), as os.Open.
func Open(name string) (File, error) { return vfs.Open(Default(), name) }

// Create is OpenFile(name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666), as
// os.Create.
func Create(name string) (File, error) { return vfs.Create(Default(), name) }

// WriteFile is os.WriteFile through OpenFile.
func WriteFile(name string, data []byte, perm os.FileMode) error {
	return vfs.WriteFile(Default(), name, data, perm)
}
