package media

import (
	"os"
	"sync"
	"sync/atomic"

	"github.com/stratafs/strata/internal/vfs"
)

// File is an open file: the inner FS's file outside emulated directories
// (an *os.File over vfs.Default), a wrapper charging the device inside
// them.
type File = vfs.File

// wrap returns f charging d, or f itself when it is a directory.
func wrap(f vfs.File, d *device) (File, error) {
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if fi.IsDir() {
		return f, nil
	}
	return &file{of: f, dev: d, id: fileID(fi), size: fi.Size(), lastRead: -1}, nil
}

// file is a File in an emulated directory.
type file struct {
	of    vfs.File // not embedded: an *os.File's ReadFrom and WriteTo would bypass the device
	dev   *device
	id    uint64
	clock atomic.Int64 // when the handle's last request completes

	mu       sync.Mutex
	size     int64 // at open, grown by writes: bounds readahead
	pos      int64 // of Read, Write and Seek
	lastRead int64 // end of the previous read; -1 before the first
	winStart int64 // [winStart, winEnd) has been charged as read
	winEnd   int64
	wStart   int64 // [wStart, wEnd) written and not yet charged
	wEnd     int64
}

// readCost returns the extent a read of [off, off+n) must charge (n 0
// when the charged window already holds it), and advances the window.
func (f *file) readCost(off, n int64) (int64, int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	end := off + n
	sequential := off == f.lastRead || (f.lastRead < 0 && off == 0)
	f.lastRead = end
	if off >= f.winStart && end <= f.winEnd {
		return 0, 0
	}
	if !sequential {
		f.winStart, f.winEnd = off, end
		return off, n
	}
	from := off
	if off >= f.winStart && off < f.winEnd {
		from = f.winEnd
	}
	to := max(end, min(from+f.dev.reqBytes, f.size))
	f.winStart, f.winEnd = off, to
	return from, to - from
}

// read charges a read of n bytes at off.
func (f *file) read(off int64, n int) {
	if n <= 0 {
		return
	}
	if from, k := f.readCost(off, int64(n)); k > 0 {
		f.dev.charge(&f.clock, f.id, from, k, false)
	}
}

// wrote gathers a write of n bytes at off, charging what is due.
func (f *file) wrote(off int64, n int) {
	if n <= 0 {
		return
	}
	f.mu.Lock()
	var due [][2]int64
	if off != f.wEnd || f.wEnd == f.wStart {
		if f.wEnd > f.wStart {
			due = append(due, [2]int64{f.wStart, f.wEnd - f.wStart})
		}
		f.wStart = off
	}
	f.wEnd = off + int64(n)
	f.size = max(f.size, f.wEnd)
	if f.wEnd-f.wStart >= f.dev.reqBytes {
		k := (f.wEnd - f.wStart) / f.dev.reqBytes * f.dev.reqBytes
		due = append(due, [2]int64{f.wStart, k})
		f.wStart += k
	}
	f.mu.Unlock()
	for _, e := range due {
		f.dev.charge(&f.clock, f.id, e[0], e[1], true)
	}
}

// flush charges the gathered writes.
func (f *file) flush() {
	f.mu.Lock()
	off, n := f.wStart, f.wEnd-f.wStart
	f.wStart = f.wEnd
	f.mu.Unlock()
	if n > 0 {
		f.dev.charge(&f.clock, f.id, off, n, true)
	}
}

// streamed runs op, a Read or Write of the *os.File, at the handle's
// position and returns where it ran.
func (f *file) streamed(op func([]byte) (int, error), p []byte) (int64, int, error) {
	f.mu.Lock()
	off := f.pos
	f.mu.Unlock()
	n, err := op(p)
	f.mu.Lock()
	f.pos = off + int64(n)
	f.mu.Unlock()
	return off, n, err
}

func (f *file) Read(p []byte) (int, error) {
	off, n, err := f.streamed(f.of.Read, p)
	f.read(off, n)
	return n, err
}

func (f *file) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.of.ReadAt(p, off)
	f.read(off, n)
	return n, err
}

func (f *file) Write(p []byte) (int, error) {
	off, n, err := f.streamed(f.of.Write, p)
	f.wrote(off, n)
	return n, err
}

func (f *file) WriteAt(p []byte, off int64) (int, error) {
	n, err := f.of.WriteAt(p, off)
	f.wrote(off, n)
	return n, err
}

// WriteString is io.StringWriter, through Write.
func (f *file) WriteString(s string) (int, error) { return f.Write([]byte(s)) }

func (f *file) Seek(offset int64, whence int) (int64, error) {
	p, err := f.of.Seek(offset, whence)
	if err == nil {
		f.mu.Lock()
		f.pos = p
		f.mu.Unlock()
	}
	return p, err
}

func (f *file) Sync() error {
	f.flush()
	return f.of.Sync()
}

func (f *file) Truncate(size int64) error {
	f.flush()
	err := f.of.Truncate(size)
	if err == nil {
		f.mu.Lock()
		f.size = size
		f.mu.Unlock()
	}
	return err
}

func (f *file) Close() error {
	f.flush()
	return f.of.Close()
}

func (f *file) Name() string               { return f.of.Name() }
func (f *file) Stat() (os.FileInfo, error) { return f.of.Stat() }
func (f *file) Fd() uintptr                { return f.of.Fd() }

// OSFile implements vfs.Raw: the file under f, for sendfile with the
// bytes charged by FS.Charge; nil when the inner FS's file is not one.
func (f *file) OSFile() *os.File {
	of, _ := f.of.(*os.File)
	return of
}
