package errorfs

import (
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/stratafs/strata/internal/vfs"
)

// Op is a set of operation kinds.
type Op uint32

// The operation kinds. A File's operations carry the path it was opened
// as.
const (
	OpOpen     Op = 1 << iota // FS.OpenFile (and so Open, Create)
	OpRead                    // File.Read, File.ReadAt
	OpWrite                   // File.Write, File.WriteAt
	OpSync                    // File.Sync (files and directories)
	OpTruncate                // File.Truncate
	OpClose                   // File.Close (the inner file is closed regardless)
	OpStat                    // FS.Stat, File.Stat
	OpRemove                  // FS.Remove, FS.RemoveAll
	OpRename                  // FS.Rename (the rule sees the old path)
	OpMkdir                   // FS.Mkdir, FS.MkdirAll
	OpReadDir                 // FS.ReadDir
	OpStatfs                  // FS.Statfs
	OpLock                    // FS.Lock

	// OpAll is every operation; a Rule with Ops 0 means it too.
	OpAll Op = 1<<iota - 1
	// OpMutating is what changes the file system.
	OpMutating = OpWrite | OpSync | OpTruncate | OpRemove | OpRename | OpMkdir
)

var opNames = []string{"open", "read", "write", "sync", "truncate", "close", "stat", "remove", "rename", "mkdir", "readdir", "statfs", "lock"}

// String names a single operation kind as the *fs.PathError does.
func (o Op) String() string {
	for i, n := range opNames {
		if o == 1<<i {
			return n
		}
	}
	return "op"
}

// Under matches dir itself and every path below it (lexically, after
// filepath.Clean).
func Under(dir string) func(string) bool {
	dir = filepath.Clean(dir)
	return func(p string) bool {
		p = filepath.Clean(p)
		return p == dir || strings.HasPrefix(p, dir+string(filepath.Separator)) || dir == string(filepath.Separator)
	}
}

// Exact matches one path (after filepath.Clean).
func Exact(path string) func(string) bool {
	path = filepath.Clean(path)
	return func(p string) bool { return filepath.Clean(p) == path }
}

// Rule says which operations to hit and how.
type Rule struct {
	// Ops are the operation kinds the rule applies to; 0 means OpAll.
	Ops Op
	// Path selects the paths; nil matches every path.
	Path func(path string) bool
	// After is how many matching operations pass untouched before the
	// first hit: to fail the N-th, After is N-1.
	After int
	// Times is how many operations are hit; 0 means every matching one
	// after the first After.
	Times int
	// Err is the error a hit returns (wrapped in *fs.PathError); nil
	// means the operation goes ahead (after Latency), unless ShortWrite
	// makes it fail.
	Err error
	// ShortWrite, if > 0, makes a hit write write only the first
	// ShortWrite bytes of its buffer (all of it if shorter) and then
	// fail with Err, or io.ErrShortWrite if Err is nil: a torn write.
	ShortWrite int
	// Latency is added to every hit, before the operation.
	Latency time.Duration
}

// Injection is a Rule added to an FS.
type Injection struct {
	fs   *FS
	rule Rule
	seen int // matching operations
	hits int
	off  bool
}

// Hits returns how many operations the rule has hit.
func (in *Injection) Hits() int {
	in.fs.mu.Lock()
	defer in.fs.mu.Unlock()
	return in.hits
}

// Seen returns how many operations matched the rule, hit or not.
func (in *Injection) Seen() int {
	in.fs.mu.Lock()
	defer in.fs.mu.Unlock()
	return in.seen
}

// Remove stops the rule; later operations are not counted by it.
func (in *Injection) Remove() {
	in.fs.mu.Lock()
	defer in.fs.mu.Unlock()
	in.off = true
}

// FS wraps an inner vfs.FS and injects the faults of its rules.
type FS struct {
	inner vfs.FS
	// Sleep waits out injected latency; time.Sleep if nil. Set it before
	// use.
	Sleep func(time.Duration)

	mu    sync.Mutex
	rules []*Injection
}

var _ vfs.FS = (*FS)(nil)

// Wrap returns inner (nil: vfs.Default) with no rules yet.
func Wrap(inner vfs.FS) *FS { return &FS{inner: vfs.Or(inner)} }

// Inject adds r after the rules already there.
func (f *FS) Inject(r Rule) *Injection {
	if r.Ops == 0 {
		r.Ops = OpAll
	}
	in := &Injection{fs: f, rule: r}
	f.mu.Lock()
	f.rules = append(f.rules, in)
	f.mu.Unlock()
	return in
}

// Clear removes every rule.
func (f *FS) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, in := range f.rules {
		in.off = true
	}
	f.rules = nil
}

// verdict is what the rules decided for one operation.
type verdict struct {
	err   error
	short int // > 0: write this many bytes, then fail with err
	delay time.Duration
}

// decide counts op on path against every rule and returns the outcome.
func (f *FS) decide(op Op, path string) verdict {
	var v verdict
	f.mu.Lock()
	for _, in := range f.rules {
		r := &in.rule
		if in.off || r.Ops&op == 0 || (r.Path != nil && !r.Path(path)) {
			continue
		}
		in.seen++
		if in.seen <= r.After || (r.Times > 0 && in.hits >= r.Times) {
			continue
		}
		in.hits++
		v.delay += r.Latency
		if v.err != nil {
			continue
		}
		err := r.Err
		if op == OpWrite && r.ShortWrite > 0 {
			if err == nil {
				err = io.ErrShortWrite
			}
			v.short = r.ShortWrite
		}
		if err != nil {
			v.err = &fs.PathError{Op: op.String(), Path: path, Err: err}
		}
	}
	f.mu.Unlock()
	if v.delay > 0 {
		if f.Sleep != nil {
			f.Sleep(v.delay)
		} else {
			time.Sleep(v.delay)
		}
	}
	return v
}

// check is decide for operations that cannot be torn.
func (f *FS) check(op Op, path string) error { return f.decide(op, path).err }

// OpenFile implements vfs.FS; the file it returns injects its rules too.
func (f *FS) OpenFile(name string, flag int, perm os.FileMode) (vfs.File, error) {
	if err := f.check(OpOpen, name); err != nil {
		return nil, err
	}
	file, err := f.inner.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &File{inner: file, fs: f, path: name}, nil
}

func (f *FS) Remove(name string) error {
	if err := f.check(OpRemove, name); err != nil {
		return err
	}
	return f.inner.Remove(name)
}

func (f *FS) RemoveAll(path string) error {
	if err := f.check(OpRemove, path); err != nil {
		return err
	}
	return f.inner.RemoveAll(path)
}

func (f *FS) Rename(oldpath, newpath string) error {
	if err := f.check(OpRename, oldpath); err != nil {
		return err
	}
	return f.inner.Rename(oldpath, newpath)
}

func (f *FS) Mkdir(name string, perm os.FileMode) error {
	if err := f.check(OpMkdir, name); err != nil {
		return err
	}
	return f.inner.Mkdir(name, perm)
}

func (f *FS) MkdirAll(path string, perm os.FileMode) error {
	if err := f.check(OpMkdir, path); err != nil {
		return err
	}
	return f.inner.MkdirAll(path, perm)
}

func (f *FS) Stat(name string) (os.FileInfo, error) {
	if err := f.check(OpStat, name); err != nil {
		return nil, err
	}
	return f.inner.Stat(name)
}

func (f *FS) ReadDir(name string) ([]os.DirEntry, error) {
	if err := f.check(OpReadDir, name); err != nil {
		return nil, err
	}
	return f.inner.ReadDir(name)
}

func (f *FS) Statfs(path string) (vfs.DiskUsage, error) {
	if err := f.check(OpStatfs, path); err != nil {
		return vfs.DiskUsage{}, err
	}
	return f.inner.Statfs(path)
}

func (f *FS) Lock(path string) (io.Closer, error) {
	if err := f.check(OpLock, path); err != nil {
		return nil, err
	}
	return f.inner.Lock(path)
}

// File is a file opened through an FS.
type File struct {
	inner vfs.File
	fs    *FS
	path  string
}

var _ vfs.File = (*File)(nil)

func (f *File) Read(p []byte) (int, error) {
	if err := f.fs.check(OpRead, f.path); err != nil {
		return 0, err
	}
	return f.inner.Read(p)
}

func (f *File) ReadAt(p []byte, off int64) (int, error) {
	if err := f.fs.check(OpRead, f.path); err != nil {
		return 0, err
	}
	return f.inner.ReadAt(p, off)
}

// write runs a Write or WriteAt under the rules: a torn hit writes a
// prefix of p and fails.
func (f *File) write(p []byte, do func([]byte) (int, error)) (int, error) {
	v := f.fs.decide(OpWrite, f.path)
	if v.err == nil {
		return do(p)
	}
	if v.short <= 0 {
		return 0, v.err
	}
	n, err := do(p[:min(v.short, len(p))])
	if err != nil {
		return n, err
	}
	return n, v.err
}

func (f *File) Write(p []byte) (int, error) { return f.write(p, f.inner.Write) }

func (f *File) WriteAt(p []byte, off int64) (int, error) {
	return f.write(p, func(b []byte) (int, error) { return f.inner.WriteAt(b, off) })
}

func (f *File) Sync() error {
	if err := f.fs.check(OpSync, f.path); err != nil {
		return err
	}
	return f.inner.Sync()
}

func (f *File) Truncate(size int64) error {
	if err := f.fs.check(OpTruncate, f.path); err != nil {
		return err
	}
	return f.inner.Truncate(size)
}

func (f *File) Stat() (os.FileInfo, error) {
	if err := f.fs.check(OpStat, f.path); err != nil {
		return nil, err
	}
	return f.inner.Stat()
}

// Close closes the inner file even when the rules fail it, so that an
// injected close error leaks no descriptor.
func (f *File) Close() error {
	err := f.fs.check(OpClose, f.path)
	if cerr := f.inner.Close(); err == nil {
		err = cerr
	}
	return err
}

func (f *File) Seek(offset int64, whence int) (int64, error) { return f.inner.Seek(offset, whence) }
func (f *File) Name() string                                 { return f.inner.Name() }
func (f *File) Fd() uintptr                                  { return f.inner.Fd() }
