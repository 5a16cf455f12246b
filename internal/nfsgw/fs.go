package nfsgw

import (
	"context"
	"errors"
	"io"
	iofs "io/fs"
	"os"
	"path"
	"sync"
	"syscall"
	"time"

	billy "github.com/go-git/go-billy/v5"
	nfsfile "github.com/willscott/go-nfs/file"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
)

// userFS is the billy.Filesystem go-nfs serves for one user: every call
// goes to the NameNode as that user, so HDFS checks the permissions. Paths
// are absolute HDFS paths. It also implements billy.Change (setattr).
type userFS struct {
	g    *Gateway
	user string
	c    *hdfs.Client

	// recent keeps the statuses the NameNode gave this user in the last
	// statTTL (from GETATTR, LOOKUP, READDIR and handle resolution), so the
	// several looks go-nfs takes at one file in one call, and the handles
	// of a READDIRPLUS page, cost one NameNode call. Bounded by maxRecent;
	// cleared on every change made through this file system.
	mu     sync.Mutex
	recent map[string]cachedStatus
}

type cachedStatus struct {
	st fs.FileStatus
	at time.Time
}

const (
	statTTL   = time.Second
	maxRecent = 8192
)

var (
	_ billy.Filesystem = (*userFS)(nil)
	_ billy.Change     = (*userFS)(nil)
)

func newUserFS(g *Gateway, user string, c *hdfs.Client) *userFS {
	return &userFS{g: g, user: user, c: c, recent: map[string]cachedStatus{}}
}

func (u *userFS) ctx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(u.g.ctx, u.g.opts.CallTimeout)
}

// Capabilities implements billy.Capable: no locks.
func (u *userFS) Capabilities() billy.Capability {
	return billy.WriteCapability | billy.ReadCapability | billy.ReadAndWriteCapability |
		billy.SeekCapability | billy.TruncateCapability
}

// Join implements billy.Basic: an absolute, clean path.
func (u *userFS) Join(elem ...string) string { return path.Join(append([]string{"/"}, elem...)...) }

func (u *userFS) remember(st fs.FileStatus) {
	u.mu.Lock()
	if len(u.recent) >= maxRecent {
		clear(u.recent)
	}
	u.recent[st.Path] = cachedStatus{st: st, at: time.Now()}
	u.mu.Unlock()
}

func (u *userFS) forget() {
	u.mu.Lock()
	clear(u.recent)
	u.mu.Unlock()
}

// idOf returns the inode id of p.
func (u *userFS) idOf(p string) (uint64, error) {
	st, err := u.stat(p)
	return st.FileID, err
}

// stat returns p's status, at most statTTL old, with the length of an open
// write stream, which is ahead of what the NameNode knows.
func (u *userFS) stat(p string) (fs.FileStatus, error) {
	u.mu.Lock()
	e, ok := u.recent[p]
	u.mu.Unlock()
	if ok && time.Since(e.at) < statTTL {
		u.g.writes.adjust(&e.st)
		return e.st, nil
	}
	return u.statFresh(p)
}

// statFresh is stat straight from the NameNode.
func (u *userFS) statFresh(p string) (fs.FileStatus, error) {
	ctx, cancel := u.ctx()
	defer cancel()
	st, err := u.c.Stat(ctx, p)
	if err != nil {
		return st, osErr("stat", p, err)
	}
	u.remember(st)
	u.g.writes.adjust(&st)
	return st, nil
}

// Stat implements billy.Basic.
func (u *userFS) Stat(p string) (os.FileInfo, error) {
	st, err := u.stat(p)
	if err != nil {
		return nil, err
	}
	return u.g.info(st), nil
}

// Lstat implements billy.Symlink: HDFS has no links.
func (u *userFS) Lstat(p string) (os.FileInfo, error) { return u.Stat(p) }

// ReadDir implements billy.Dir.
func (u *userFS) ReadDir(p string) ([]os.FileInfo, error) {
	ctx, cancel := u.ctx()
	defer cancel()
	list, err := u.c.List(ctx, p)
	if err != nil {
		return nil, osErr("readdir", p, err)
	}
	out := make([]os.FileInfo, 0, len(list))
	for i := range list {
		u.remember(list[i])
		u.g.writes.adjust(&list[i])
		out = append(out, u.g.info(list[i]))
	}
	return out, nil
}

// MkdirAll implements billy.Dir. NFS clients send the final mode (their
// umask already applied), so the mode is set exactly.
func (u *userFS) MkdirAll(p string, perm os.FileMode) error {
	defer u.forget()
	ctx, cancel := u.ctx()
	defer cancel()
	mode := unixPerm(perm)
	if err := u.c.Mkdirs(ctx, p, mode); err != nil {
		return osErr("mkdir", p, err)
	}
	if mode&^0o755 != 0 {
		if err := u.c.SetPermission(ctx, p, mode); err != nil {
			return osErr("chmod", p, err)
		}
	}
	return nil
}

// Create implements billy.Basic: a new HDFS file whose output stream
// stays open in the gateway for the WRITEs that follow. An existing file
// is left as it is (NFS's UNCHECKED create; a client that wants it empty
// sends size 0 in the same call, which SETATTR's truncate applies).
func (u *userFS) Create(p string) (billy.File, error) {
	defer u.forget()
	if st, err := u.statFresh(p); err == nil && !st.IsDir {
		return &createdFile{name: p}, nil
	}
	w, err := u.c.CreateFile(u.g.ctx, p, fs.CreateOptions{Perm: 0o644})
	if err != nil {
		return nil, osErr("create", p, err)
	}
	ctx, cancel := u.ctx()
	defer cancel()
	st, err := u.c.Stat(ctx, p)
	if err != nil {
		w.Close()
		return nil, osErr("create", p, err)
	}
	u.g.writes.adopt(u, st, w)
	return &createdFile{name: p}, nil
}

// createdFile is what Create returns: go-nfs only closes it; the stream
// lives on in the gateway's open-file table.
type createdFile struct {
	name string
	unsupportedFile
}

func (f *createdFile) Name() string { return f.name }
func (f *createdFile) Close() error { return nil }

// Open implements billy.Basic: a reader. A file with an open write
// stream is flushed first so the reader sees what was acknowledged.
func (u *userFS) Open(p string) (billy.File, error) {
	u.g.writes.flushPath(p)
	return u.g.readers.open(u, p)
}

// OpenFile implements billy.Basic. go-nfs uses it only for SETATTR's size
// (O_WRONLY|O_EXCL); WRITE is served by the gateway itself.
func (u *userFS) OpenFile(p string, flag int, perm os.FileMode) (billy.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR) == 0 {
		return u.Open(p)
	}
	return &truncFile{u: u, name: p}, nil
}

// Rename implements billy.Basic with POSIX semantics: an existing target
// file is replaced.
func (u *userFS) Rename(from, to string) error {
	defer u.forget()
	u.g.writes.closePath(u, from)
	ctx, cancel := u.ctx()
	defer cancel()
	if err := u.c.Rename2(ctx, from, to, true); err != nil {
		return osErr("rename", from, err)
	}
	return nil
}

// Remove implements billy.Basic: a file or an empty directory.
func (u *userFS) Remove(p string) error {
	defer u.forget()
	u.g.writes.closePath(u, p)
	ctx, cancel := u.ctx()
	defer cancel()
	if err := u.c.Delete(ctx, p, false); err != nil {
		return osErr("remove", p, err)
	}
	return nil
}

// TempFile implements billy.TempFile; NFS never asks for one.
func (u *userFS) TempFile(dir, prefix string) (billy.File, error) { return nil, billy.ErrNotSupported }

// Symlink implements billy.Symlink: HDFS has no symbolic links.
func (u *userFS) Symlink(target, link string) error { return billy.ErrNotSupported }

// Readlink implements billy.Symlink.
func (u *userFS) Readlink(link string) (string, error) { return "", billy.ErrNotSupported }

// Chroot implements billy.Chroot; the gateway exports the whole namespace.
func (u *userFS) Chroot(p string) (billy.Filesystem, error) { return nil, billy.ErrNotSupported }

// Root implements billy.Chroot.
func (u *userFS) Root() string { return "/" }

// Chmod implements billy.Change.
func (u *userFS) Chmod(p string, mode os.FileMode) error {
	defer u.forget()
	ctx, cancel := u.ctx()
	defer cancel()
	return osErr("chmod", p, u.c.SetPermission(ctx, p, unixPerm(mode)))
}

// Lchown implements billy.Change: uid and gid become names through the
// gateway's user mapping; an id equal to the current owner's (group's)
// leaves that part unchanged.
func (u *userFS) Lchown(p string, uid, gid int) error {
	defer u.forget()
	st, err := u.stat(p)
	if err != nil {
		return err
	}
	owner, group := "", ""
	if uint32(uid) != u.g.ids.uidOf(st.Owner) {
		if owner = u.g.ids.userName(uint32(uid)); owner == "" {
			return &os.PathError{Op: "chown", Path: p, Err: syscall.EINVAL}
		}
	}
	if uint32(gid) != u.g.ids.gidOf(st.Group) {
		if group = u.g.ids.groupName(uint32(gid)); group == "" {
			return &os.PathError{Op: "chown", Path: p, Err: syscall.EINVAL}
		}
	}
	if owner == "" && group == "" {
		return nil
	}
	ctx, cancel := u.ctx()
	defer cancel()
	return osErr("chown", p, u.c.SetOwner(ctx, p, owner, group))
}

// Chown implements billy.Change.
func (u *userFS) Chown(p string, uid, gid int) error { return u.Lchown(p, uid, gid) }

// Chtimes implements billy.Change.
func (u *userFS) Chtimes(p string, atime, mtime time.Time) error {
	defer u.forget()
	ctx, cancel := u.ctx()
	defer cancel()
	return osErr("utimes", p, u.c.SetTimes(ctx, p, mtime, atime))
}

// unixPerm keeps the permission and sticky bits of an os.FileMode.
func unixPerm(m os.FileMode) uint16 {
	p := uint16(m.Perm())
	if m&os.ModeSticky != 0 {
		p |= 0o1000
	}
	return p
}

// osErr turns an HDFS error into an *os.PathError over a syscall errno,
// the form go-nfs recognises (os.IsNotExist, os.IsPermission) when it
// chooses the NFS status.
func osErr(op, p string, err error) error {
	if err == nil {
		return nil
	}
	var errno syscall.Errno
	switch {
	case errors.Is(err, os.ErrNotExist):
		errno = syscall.ENOENT
	case errors.Is(err, os.ErrPermission):
		errno = syscall.EACCES
	case errors.Is(err, os.ErrExist):
		errno = syscall.EEXIST
	case errors.Is(err, fs.ErrNotEmpty):
		errno = syscall.ENOTEMPTY
	case errors.Is(err, fs.ErrNotDir):
		errno = syscall.ENOTDIR
	default:
		return err
	}
	return &os.PathError{Op: op, Path: p, Err: errno}
}

// fileInfo is an HDFS status as an os.FileInfo; Sys carries what go-nfs
// puts in fattr3 (inode id, numeric owner and group).
type fileInfo struct {
	st  fs.FileStatus
	sys nfsfile.FileInfo
}

func (g *Gateway) info(st fs.FileStatus) *fileInfo {
	nlink := uint32(1)
	if st.IsDir {
		nlink = 2
	}
	return &fileInfo{st: st, sys: nfsfile.FileInfo{
		Nlink: nlink, UID: g.ids.uidOf(st.Owner), GID: g.ids.gidOf(st.Group), Fileid: st.FileID,
	}}
}

func (i *fileInfo) Name() string {
	if i.st.Path == "/" {
		return "/"
	}
	return path.Base(i.st.Path)
}
func (i *fileInfo) Size() int64 { return i.st.Length }
func (i *fileInfo) Mode() iofs.FileMode {
	m := iofs.FileMode(i.st.Perm & 0o777)
	if i.st.Perm&0o1000 != 0 {
		m |= iofs.ModeSticky
	}
	if i.st.IsDir {
		m |= iofs.ModeDir
	}
	return m
}
func (i *fileInfo) ModTime() time.Time { return i.st.ModTime }
func (i *fileInfo) IsDir() bool        { return i.st.IsDir }
func (i *fileInfo) Sys() any           { return i.sys }

// unsupportedFile answers the billy.File calls a kind of file does not serve.
type unsupportedFile struct{}

func (unsupportedFile) Write([]byte) (int, error)         { return 0, billy.ErrNotSupported }
func (unsupportedFile) Read([]byte) (int, error)          { return 0, billy.ErrNotSupported }
func (unsupportedFile) ReadAt([]byte, int64) (int, error) { return 0, billy.ErrNotSupported }
func (unsupportedFile) Seek(int64, int) (int64, error)    { return 0, billy.ErrNotSupported }
func (unsupportedFile) Lock() error                       { return billy.ErrNotSupported }
func (unsupportedFile) Unlock() error                     { return billy.ErrNotSupported }
func (unsupportedFile) Truncate(int64) error              { return billy.ErrNotSupported }

// readFull fills p from off unless the file ends first (io.EOF).
func readFull(r io.ReaderAt, p []byte, off int64) (int, error) {
	n := 0
	for n < len(p) {
		k, err := r.ReadAt(p[n:], off+int64(n))
		n += k
		if err != nil {
			return n, err
		}
		if k == 0 {
			return n, io.ErrNoProgress
		}
	}
	return n, nil
}

// truncFile serves SETATTR's size: HDFS truncate cuts a file shorter
// (keeping its inode id, so handles stay valid); growing one is refused.
type truncFile struct {
	u    *userFS
	name string
	unsupportedFile
}

func (f *truncFile) Name() string { return f.name }
func (f *truncFile) Close() error { return nil }
func (f *truncFile) Truncate(size int64) error {
	u := f.u
	defer u.forget()
	u.g.writes.closePath(u, f.name)
	st, err := u.statFresh(f.name)
	if err != nil {
		return err
	}
	switch {
	case size == st.Length:
		return nil
	case size > st.Length:
		u.g.log.Warn("nfs3: refusing to extend a file", "path", f.name, "user", u.user, "size", st.Length, "requested", size)
		return errNotSupp
	}
	ctx, cancel := u.ctx()
	defer cancel()
	done, err := u.c.Truncate(ctx, f.name, size)
	if err != nil {
		return osErr("truncate", f.name, err)
	}
	if !done {
		if err := u.c.WaitTruncated(ctx, f.name); err != nil {
			return osErr("truncate", f.name, err)
		}
	}
	return nil
}
