package fs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"os/user"
	"path"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// LocalBlockSize is the block size file:// reports, Hadoop's local default
// (fs.local.block.size, 32 MiB).
const LocalBlockSize = 32 << 20

func init() {
	Register("file", openLocal)
}

func openLocal(ctx context.Context, u *url.URL, env Env) (FileSystem, error) {
	if h := u.Host; h != "" && !strings.EqualFold(h, "localhost") {
		return nil, fmt.Errorf("file://%s: a local file system URI has no authority: %w", h, ErrInvalid)
	}
	return NewLocal(env), nil
}

// NewLocal returns the file:// FileSystem over the os package. Paths map
// directly to the local ones; Home is the process's working directory; new
// files and directories get fs.permissions.umask-mode applied.
func NewLocal(env Env) FileSystem {
	env = env.WithDefaults()
	home, err := os.Getwd()
	if err != nil {
		home = "/"
	}
	home = filepath.ToSlash(home)
	if !strings.HasPrefix(home, "/") {
		home = "/" + home
	}
	return &localFS{user: env.User, home: path.Clean(home), umask: Umask(env.Conf)}
}

type localFS struct {
	user  string
	home  string
	umask uint16
}

var _ Accessor = (*localFS)(nil)
var _ ExactRenamer = (*localFS)(nil)

func (l *localFS) URI() *url.URL { return &url.URL{Scheme: "file", Path: "/"} }
func (l *localFS) Home() string  { return l.home }
func (l *localFS) User() string  { return l.user }
func (l *localFS) Close() error  { return nil }

func osPath(p string) string { return filepath.FromSlash(p) }

// pathErr builds the error operations return: an *os.PathError whose Err
// is one of the sentinels where the cause maps to one.
func pathErr(op, p string, err error) error {
	if err == nil {
		return nil
	}
	return &os.PathError{Op: op, Path: p, Err: sentinel(err)}
}

// sentinel maps an os/syscall error to this package's sentinels.
func sentinel(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		switch errno {
		case syscall.ENOTEMPTY:
			return ErrNotEmpty
		case syscall.ENOTDIR:
			return ErrNotDir
		case syscall.EISDIR:
			return ErrIsDir
		case syscall.EINVAL:
			return ErrInvalid
		}
	}
	for _, s := range []error{os.ErrNotExist, os.ErrExist, os.ErrPermission, ErrNotEmpty, ErrNotDir, ErrIsDir, ErrInvalid} {
		if errors.Is(err, s) {
			return s
		}
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return le.Err
	}
	return err
}

func permOf(m os.FileMode) uint16 {
	p := uint16(m.Perm())
	if m&os.ModeSticky != 0 {
		p |= 0o1000
	}
	if m&os.ModeSetgid != 0 {
		p |= 0o2000
	}
	if m&os.ModeSetuid != 0 {
		p |= 0o4000
	}
	return p
}

func modeOf(p uint16) os.FileMode {
	m := os.FileMode(p & 0o777)
	if p&0o1000 != 0 {
		m |= os.ModeSticky
	}
	if p&0o2000 != 0 {
		m |= os.ModeSetgid
	}
	if p&0o4000 != 0 {
		m |= os.ModeSetuid
	}
	return m
}

// stat follows symlinks, falling back to the link itself when dangling.
func stat(op string) (os.FileInfo, error) {
	fi, err := os.Stat(op)
	if err != nil && errors.Is(err, os.ErrNotExist) {
		if lfi, lerr := os.Lstat(op); lerr == nil {
			return lfi, nil
		}
	}
	return fi, err
}

func (l *localFS) status(p string, fi os.FileInfo) FileStatus {
	st := FileStatus{
		Path:    p,
		IsDir:   fi.IsDir(),
		ModTime: fi.ModTime(),
		Perm:    permOf(fi.Mode()),
	}
	if !st.IsDir {
		st.Length = fi.Size()
		st.Replication = 1
		st.BlockSize = LocalBlockSize
	}
	if uid, gid, atime, ok := sysInfo(fi); ok {
		st.Owner = userName(uid)
		st.Group = groupName(gid)
		st.AccessTime = atime
	} else {
		st.Owner = l.user
	}
	return st
}

var (
	uidNames   sync.Map // uint32 → string
	gidNames   sync.Map // uint32 → string
	userIDs    sync.Map // string → int
	groupIDs   sync.Map // string → int
	errUnknown = errors.New("unknown")
)

func userName(uid uint32) string {
	if v, ok := uidNames.Load(uid); ok {
		return v.(string)
	}
	name := strconv.FormatUint(uint64(uid), 10)
	if u, err := user.LookupId(name); err == nil {
		name = u.Username
	}
	uidNames.Store(uid, name)
	return name
}

func groupName(gid uint32) string {
	if v, ok := gidNames.Load(gid); ok {
		return v.(string)
	}
	name := strconv.FormatUint(uint64(gid), 10)
	if g, err := user.LookupGroupId(name); err == nil {
		name = g.Name
	}
	gidNames.Store(gid, name)
	return name
}

func userID(name string) (int, error) {
	if v, ok := userIDs.Load(name); ok {
		return v.(int), nil
	}
	id := -1
	if u, err := user.Lookup(name); err == nil {
		id, _ = strconv.Atoi(u.Uid)
	} else if n, err := strconv.Atoi(name); err == nil && n >= 0 {
		id = n
	}
	if id < 0 {
		return 0, errUnknown
	}
	userIDs.Store(name, id)
	return id, nil
}

func groupID(name string) (int, error) {
	if v, ok := groupIDs.Load(name); ok {
		return v.(int), nil
	}
	id := -1
	if g, err := user.LookupGroup(name); err == nil {
		id, _ = strconv.Atoi(g.Gid)
	} else if n, err := strconv.Atoi(name); err == nil && n >= 0 {
		id = n
	}
	if id < 0 {
		return 0, errUnknown
	}
	groupIDs.Store(name, id)
	return id, nil
}

func (l *localFS) Stat(ctx context.Context, p string) (FileStatus, error) {
	if err := ctx.Err(); err != nil {
		return FileStatus{}, err
	}
	fi, err := stat(osPath(p))
	if err != nil {
		return FileStatus{}, pathErr("stat", p, err)
	}
	return l.status(p, fi), nil
}

func (l *localFS) List(ctx context.Context, p string) ([]FileStatus, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	op := osPath(p)
	fi, err := stat(op)
	if err != nil {
		return nil, pathErr("list", p, err)
	}
	if !fi.IsDir() {
		return []FileStatus{l.status(p, fi)}, nil
	}
	ents, err := os.ReadDir(op)
	if err != nil {
		return nil, pathErr("list", p, err)
	}
	out := make([]FileStatus, 0, len(ents))
	for _, e := range ents {
		cp := path.Join(p, e.Name())
		cfi, err := stat(osPath(cp))
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				continue // removed meanwhile
			}
			return nil, pathErr("list", cp, err)
		}
		out = append(out, l.status(cp, cfi))
	}
	return out, nil
}

func (l *localFS) Mkdirs(ctx context.Context, p string, perm uint16) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if perm == 0 {
		perm = 0o777
	}
	perm &^= l.umask
	parts := strings.Split(strings.Trim(p, "/"), "/")
	cur := ""
	for i, part := range parts {
		if part == "" {
			continue
		}
		cur += "/" + part
		last := i == len(parts)-1
		for {
			fi, err := os.Stat(osPath(cur))
			if err == nil {
				if fi.IsDir() {
					break
				}
				if last {
					return pathErr("mkdirs", p, os.ErrExist)
				}
				return pathErr("mkdirs", p, ErrNotDir)
			}
			if !errors.Is(err, os.ErrNotExist) {
				return pathErr("mkdirs", p, err)
			}
			if err := os.Mkdir(osPath(cur), 0o700); err != nil {
				if errors.Is(err, os.ErrExist) {
					continue // created concurrently: look again
				}
				return pathErr("mkdirs", p, err)
			}
			// Like HDFS, parents made on the way get u+wx so that the
			// children can be made.
			mode := perm
			if !last {
				mode |= 0o300
			}
			if err := os.Chmod(osPath(cur), modeOf(mode)); err != nil {
				return pathErr("mkdirs", p, err)
			}
			break
		}
	}
	return nil
}

func (l *localFS) Delete(ctx context.Context, p string, recursive bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if p == "/" {
		return &os.PathError{Op: "delete", Path: p, Err: fmt.Errorf("the root may not be deleted: %w", ErrInvalid)}
	}
	op := osPath(p)
	fi, err := os.Lstat(op)
	if err != nil {
		return pathErr("delete", p, err)
	}
	if fi.IsDir() {
		if recursive {
			return pathErr("delete", p, os.RemoveAll(op))
		}
		if err := os.Remove(op); err != nil {
			var errno syscall.Errno
			if errors.As(err, &errno) && (errno == syscall.EEXIST || errno == syscall.ENOTEMPTY) {
				return pathErr("delete", p, ErrNotEmpty)
			}
			return pathErr("delete", p, err)
		}
		return nil
	}
	return pathErr("delete", p, os.Remove(op))
}

func (l *localFS) Rename(ctx context.Context, src, dst string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if src == "/" {
		return &os.LinkError{Op: "rename", Old: src, New: dst, Err: ErrInvalid}
	}
	lerr := func(err error) error {
		return &os.LinkError{Op: "rename", Old: src, New: dst, Err: sentinel(err)}
	}
	if _, err := os.Lstat(osPath(src)); err != nil {
		return lerr(err)
	}
	dfi, err := os.Stat(osPath(dst))
	switch {
	case err == nil && dfi.IsDir():
		dst = path.Join(dst, path.Base(src))
		if _, err := os.Lstat(osPath(dst)); err == nil {
			return lerr(os.ErrExist)
		} else if !errors.Is(err, os.ErrNotExist) {
			return lerr(err)
		}
	case err == nil:
		if dst == src {
			return nil
		}
		return lerr(os.ErrExist)
	case errors.Is(err, os.ErrNotExist):
		pfi, err := os.Stat(osPath(path.Dir(dst)))
		if err != nil {
			return lerr(err)
		}
		if !pfi.IsDir() {
			return lerr(ErrNotDir)
		}
	default:
		return lerr(err)
	}
	if dst == src || strings.HasPrefix(dst, src+"/") {
		return &os.LinkError{Op: "rename", Old: src, New: dst,
			Err: fmt.Errorf("a directory cannot be moved into itself: %w", ErrInvalid)}
	}
	if err := os.Rename(osPath(src), osPath(dst)); err != nil {
		return lerr(err)
	}
	return nil
}

// Rename2 implements ExactRenamer. Without overwrite, an existing dst is
// checked for first, so a dst created at that moment by another process
// may be replaced (the local file system has no atomic no-replace rename
// here); HDFS's rename2 is atomic.
func (l *localFS) Rename2(ctx context.Context, src, dst string, overwrite bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	lerr := func(err error) error {
		return &os.LinkError{Op: "rename", Old: src, New: dst, Err: sentinel(err)}
	}
	if src == "/" || dst == src || strings.HasPrefix(dst, src+"/") {
		return lerr(ErrInvalid)
	}
	if _, err := os.Lstat(osPath(src)); err != nil {
		return lerr(err)
	}
	if _, err := os.Lstat(osPath(dst)); err == nil && !overwrite {
		return lerr(os.ErrExist)
	} else if err != nil && !errors.Is(err, os.ErrNotExist) {
		return lerr(err)
	}
	pfi, err := os.Stat(osPath(path.Dir(dst)))
	if err != nil {
		return lerr(err)
	}
	if !pfi.IsDir() {
		return lerr(ErrNotDir)
	}
	if err := os.Rename(osPath(src), osPath(dst)); err != nil {
		return lerr(err)
	}
	return nil
}

func (l *localFS) SetPermission(ctx context.Context, p string, perm uint16) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	return pathErr("chmod", p, os.Chmod(osPath(p), modeOf(perm)))
}

func (l *localFS) SetOwner(ctx context.Context, p, owner, group string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	uid, gid := -1, -1
	var err error
	if owner != "" {
		if uid, err = userID(owner); err != nil {
			return &os.PathError{Op: "chown", Path: p, Err: fmt.Errorf("invalid user %q: %w", owner, ErrInvalid)}
		}
	}
	if group != "" {
		if gid, err = groupID(group); err != nil {
			return &os.PathError{Op: "chown", Path: p, Err: fmt.Errorf("invalid group %q: %w", group, ErrInvalid)}
		}
	}
	if uid < 0 && gid < 0 {
		return nil
	}
	return pathErr("chown", p, os.Lchown(osPath(p), uid, gid))
}

func (l *localFS) SetTimes(ctx context.Context, p string, mtime, atime time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if mtime.IsZero() && atime.IsZero() {
		if _, err := os.Stat(osPath(p)); err != nil {
			return pathErr("chtimes", p, err)
		}
		return nil
	}
	// A zero time leaves that time unchanged (os.Chtimes semantics).
	return pathErr("chtimes", p, os.Chtimes(osPath(p), atime, mtime))
}

func (l *localFS) ContentSummary(ctx context.Context, p string) (ContentSummary, error) {
	cs := ContentSummary{Quota: -1, SpaceQuota: -1}
	op := osPath(p)
	fi, err := stat(op)
	if err != nil {
		return cs, pathErr("getContentSummary", p, err)
	}
	if !fi.IsDir() {
		cs.FileCount, cs.Length = 1, fi.Size()
		cs.SpaceConsumed = cs.Length
		return cs, nil
	}
	err = filepath.WalkDir(op, func(fp string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if d.IsDir() {
			cs.DirectoryCount++
			return nil
		}
		info, err := d.Info()
		if err != nil {
			if errors.Is(err, os.ErrNotExist) {
				return nil
			}
			return err
		}
		if info.Mode()&os.ModeSymlink != 0 {
			// Count a link as what it points to, without descending.
			if t, err := os.Stat(fp); err == nil {
				if t.IsDir() {
					cs.DirectoryCount++
					return nil
				}
				info = t
			}
		}
		cs.FileCount++
		cs.Length += info.Size()
		return nil
	})
	if err != nil {
		if ctx.Err() != nil {
			return cs, ctx.Err()
		}
		return cs, pathErr("getContentSummary", p, err)
	}
	cs.SpaceConsumed = cs.Length
	return cs, nil
}

func (l *localFS) Status(ctx context.Context) (FsStatus, error) {
	if err := ctx.Err(); err != nil {
		return FsStatus{}, err
	}
	st, err := statfs("/")
	if err != nil {
		return FsStatus{}, pathErr("statfs", "/", err)
	}
	return st, nil
}

func (l *localFS) Create(ctx context.Context, p string, opts CreateOptions) (io.WriteCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if p == "/" {
		return nil, pathErr("create", p, ErrIsDir)
	}
	parent := path.Dir(p)
	if opts.CreateParent {
		if err := l.Mkdirs(ctx, parent, 0); err != nil {
			if errors.Is(err, os.ErrExist) {
				err = ErrNotDir // the parent is a file
			}
			return nil, pathErr("create", p, err)
		}
	} else {
		pfi, err := os.Stat(osPath(parent))
		if err != nil {
			return nil, pathErr("create", p, err)
		}
		if !pfi.IsDir() {
			return nil, pathErr("create", p, ErrNotDir)
		}
	}
	op := osPath(p)
	if fi, err := os.Stat(op); err == nil && fi.IsDir() {
		return nil, pathErr("create", p, ErrIsDir)
	}
	flags := os.O_WRONLY | os.O_CREATE | os.O_TRUNC
	if !opts.Overwrite {
		flags |= os.O_EXCL
	}
	f, err := os.OpenFile(op, flags, 0o600)
	if err != nil {
		return nil, pathErr("create", p, err)
	}
	perm := opts.Perm
	if perm == 0 {
		perm = 0o644
	}
	if err := f.Chmod(modeOf(perm &^ l.umask)); err != nil {
		f.Close()
		return nil, pathErr("create", p, err)
	}
	return &localWriter{f: f, p: p, nosync: opts.NoSync}, nil
}

// localWriter syncs the file on Close so that the data is durable once
// Close returns nil (unless CreateOptions.NoSync). So that the sync does not write the whole file only
// then (a file smaller than the kernel's dirty threshold would otherwise
// sit in memory until Close), it starts writeback of every
// writeBehindWindow bytes as they are written and, to bound the dirty
// pages, waits for the window two behind: the disk works while the
// writer's source is still being read.
type localWriter struct {
	f       *os.File
	p       string
	nosync  bool  // CreateOptions.NoSync: no write-behind, no fsync
	written int64 // bytes written
	started int64 // writeback started for [0, started)
	// wbErr is the first error writeback reported: the kernel reports a
	// write error once, so it is kept for every later Write and Close.
	wbErr error
}

const writeBehindWindow = 8 << 20

func (w *localWriter) Write(b []byte) (int, error) {
	if w.wbErr != nil {
		return 0, pathErr("write", w.p, w.wbErr)
	}
	n, err := w.f.Write(b)
	CountWritten("file", n)
	w.wrote(n)
	return n, err
}

func (w *localWriter) wrote(n int) {
	w.written += int64(n)
	if w.nosync {
		return
	}
	for w.written-w.started >= writeBehindWindow && w.wbErr == nil {
		err := startWriteback(w.f, w.started, writeBehindWindow)
		if back := w.started - 2*writeBehindWindow; back >= 0 && err == nil {
			err = awaitWriteback(w.f, back, writeBehindWindow)
		}
		if err != nil && !errors.Is(err, syscall.ENOSYS) && !errors.Is(err, syscall.EINVAL) && !errors.Is(err, syscall.ESPIPE) {
			w.wbErr = err // EINVAL/ESPIPE/ENOSYS: not a file that has writeback
		}
		w.started += writeBehindWindow
	}
}

func (w *localWriter) ReadFrom(r io.Reader) (int64, error) {
	if c, ok := r.(countingFile); ok {
		r = c.File // keep copy_file_range; the bytes count as read below
		n, err := w.f.ReadFrom(r)
		CountRead("file", int(n))
		CountWritten("file", int(n))
		w.written += n
		return n, err
	}
	// Anything else is copied through Write (and its write-behind).
	n, err := io.CopyBuffer(writerOnly{w}, r, make([]byte, 1<<20))
	return n, err
}

// writerOnly hides ReadFrom so io.CopyBuffer uses Write.
type writerOnly struct{ io.Writer }

func (w *localWriter) Close() error {
	if w.nosync {
		return pathErr("close", w.p, w.f.Close())
	}
	if w.wbErr != nil {
		w.f.Close()
		return pathErr("close", w.p, w.wbErr)
	}
	serr := w.f.Sync()
	cerr := w.f.Close()
	if serr != nil && !errors.Is(serr, syscall.EINVAL) { // EINVAL: not syncable (e.g. a pipe)
		return pathErr("close", w.p, serr)
	}
	return pathErr("close", w.p, cerr)
}

func (l *localFS) Open(ctx context.Context, p string) (File, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	op := osPath(p)
	fi, err := os.Stat(op)
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	if fi.IsDir() {
		return nil, pathErr("open", p, ErrIsDir)
	}
	f, err := os.Open(op)
	if err != nil {
		return nil, pathErr("open", p, err)
	}
	return countingFile{f}, nil
}

// Access checks the process's access to p with access(2) where available,
// else from the permission bits.
func (l *localFS) Access(ctx context.Context, p string, mode uint8) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	op := osPath(p)
	fi, err := os.Stat(op)
	if err != nil {
		return pathErr("access", p, err)
	}
	if err := access(op, fi, mode); err != nil {
		return pathErr("access", p, err)
	}
	return nil
}
