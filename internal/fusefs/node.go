package fusefs

import (
	"context"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// node is one file or directory of the mount.
type node struct {
	gofs.Inode
	f *fsys

	mu      sync.Mutex
	writing int   // handles with an open HDFS writer on this file
	wsize   int64 // the length those writers have reached

	// Open handles by how the kernel caches their data (openFlags).
	cachedOpen    int // handles that use the page cache
	directWriters int // write-only handles that bypass it
}

var (
	_ gofs.NodeLookuper  = (*node)(nil)
	_ gofs.NodeGetattrer = (*node)(nil)
	_ gofs.NodeSetattrer = (*node)(nil)
	_ gofs.NodeReaddirer = (*node)(nil)
	_ gofs.NodeMkdirer   = (*node)(nil)
	_ gofs.NodeCreater   = (*node)(nil)
	_ gofs.NodeOpener    = (*node)(nil)
	_ gofs.NodeUnlinker  = (*node)(nil)
	_ gofs.NodeRmdirer   = (*node)(nil)
	_ gofs.NodeRenamer   = (*node)(nil)
	_ gofs.NodeStatfser  = (*node)(nil)
	_ gofs.NodeAccesser  = (*node)(nil)
)

// path is the node's HDFS path.
func (n *node) path() string { return "/" + n.Path(nil) }

func (n *node) child(name string) string {
	p := n.path()
	if p == "/" {
		return "/" + name
	}
	return p + "/" + name
}

// stat returns p's status from the cache or the NameNode.
func (f *fsys) stat(ctx context.Context, c *hdfs.Client, p string) (fs.FileStatus, error) {
	if st, ok := f.cache.get(p); ok {
		return st, nil
	}
	st, err := c.Stat(ctx, p)
	if err != nil {
		return st, err
	}
	f.cache.put(st)
	return st, nil
}

func typeMode(st fs.FileStatus) uint32 {
	if st.IsDir {
		return syscall.S_IFDIR
	}
	return syscall.S_IFREG
}

// blksize is the st_blksize files report: tools such as cp size their
// buffers by it, and FUSE requests carry up to 1 MiB.
const blksize = 1 << 20

func (f *fsys) fillAttr(st fs.FileStatus, out *fuse.Attr) {
	out.Ino = st.FileID
	out.Size = uint64(st.Length)
	out.Blocks = (out.Size + 511) / 512
	out.Mode = typeMode(st) | uint32(st.Perm&0o7777)
	out.Nlink = 1
	out.Uid = f.uid(st.Owner)
	out.Gid = f.gid(st.Group)
	out.Blksize = blksize
	mt, at := st.ModTime, st.AccessTime
	if at.IsZero() {
		at = mt
	}
	out.SetTimes(&at, &mt, &mt)
}

// setChild makes (or finds) the inode for st under n and fills out.
func (n *node) setChild(ctx context.Context, st fs.FileStatus, out *fuse.EntryOut) *gofs.Inode {
	n.f.fillAttr(st, &out.Attr)
	ch := n.NewInode(ctx, &node{f: n.f}, gofs.StableAttr{Mode: typeMode(st), Ino: st.FileID})
	if cn, ok := ch.Operations().(*node); ok {
		cn.writingSize(&out.Attr)
	}
	return ch
}

// writingSize sets the size in out to what the mount's writers of the
// file have reached, if more than HDFS reports yet: the NameNode counts
// only finished blocks of a file being written.
func (n *node) writingSize(out *fuse.Attr) {
	n.mu.Lock()
	if n.writing > 0 && uint64(n.wsize) > out.Size {
		out.Size = uint64(n.wsize)
		out.Blocks = (out.Size + 511) / 512
	}
	n.mu.Unlock()
}

// Lookup implements gofs.NodeLookuper.
func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	c, e := n.f.caller(ctx)
	if e != 0 {
		return nil, e
	}
	p := n.child(name)
	st, err := n.f.stat(ctx, c, p)
	if err != nil {
		return nil, n.f.errno("lookup", p, err)
	}
	return n.setChild(ctx, st, out), 0
}

// Getattr implements gofs.NodeGetattrer. While the mount writes the file,
// its length is what the writers have reached.
func (n *node) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	c, e := n.f.caller(ctx)
	if e != 0 {
		return e
	}
	p := n.path()
	st, err := n.f.stat(ctx, c, p)
	if err != nil {
		return n.f.errno("getattr", p, err)
	}
	n.f.fillAttr(st, &out.Attr)
	n.writingSize(&out.Attr)
	return 0
}

// Setattr implements gofs.NodeSetattrer: chmod, chown, utimes and
// truncate.
func (n *node) Setattr(ctx context.Context, fh gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if n.f.opts.ReadOnly {
		return syscall.EROFS
	}
	c, e := n.f.caller(ctx)
	if e != 0 {
		return e
	}
	p := n.path()
	defer n.f.cache.drop(p, false)
	if mode, ok := in.GetMode(); ok {
		if err := c.SetPermission(ctx, p, uint16(mode&0o7777)); err != nil {
			return n.f.errno("chmod", p, err)
		}
	}
	uid, uok := in.GetUID()
	gid, gok := in.GetGID()
	if uok || gok {
		var owner, group string
		if uok {
			owner = n.f.ownerName(uid)
		}
		if gok {
			group = n.f.groupName(gid)
		}
		if err := c.SetOwner(ctx, p, owner, group); err != nil {
			return n.f.errno("chown", p, err)
		}
	}
	if size, ok := in.GetSize(); ok {
		h, _ := fh.(*handle)
		if e := n.truncate(ctx, c, h, p, int64(size)); e != 0 {
			return e
		}
	}
	mt, mok := in.GetMTime()
	at, aok := in.GetATime()
	if mok || aok {
		if !mok {
			mt = time.Time{}
		}
		if !aok {
			at = time.Time{}
		}
		if err := c.SetTimes(ctx, p, mt, at); err != nil {
			return n.f.errno("utimes", p, err)
		}
	}
	n.f.cache.drop(p, false)
	return n.Getattr(ctx, fh, out)
}

// ownerName maps a uid given to chown to an HDFS user name: the mounting
// uid and 0 are the mount user.
func (f *fsys) ownerName(uid uint32) string {
	if uid == f.myUID || uid == 0 {
		return f.opts.User
	}
	return f.userName(uid)
}

// truncate cuts p to size with HDFS truncate. A writer of h is closed
// first (HDFS cannot truncate a file being written); the next write
// reopens the file at its new end.
func (n *node) truncate(ctx context.Context, c *hdfs.Client, h *handle, p string, size int64) syscall.Errno {
	if h != nil {
		if done, e := h.truncating(size); done || e != 0 {
			return e
		}
	}
	st, err := c.Stat(ctx, p)
	if err != nil {
		return n.f.errno("truncate", p, err)
	}
	if st.IsDir {
		return syscall.EISDIR
	}
	switch {
	case size == st.Length:
		return 0
	case size > st.Length:
		n.f.log.Warn("fuse: refused to grow a file by truncate (HDFS files are write-once)", "path", p, "length", st.Length, "size", size)
		return syscall.ENOTSUP
	}
	done, err := c.Truncate(ctx, p, size)
	if err == nil && !done {
		err = c.WaitTruncated(ctx, p)
	}
	return n.f.errno("truncate", p, err)
}

// Readdir implements gofs.NodeReaddirer; the statuses it gets are cached
// for the lookups that follow.
func (n *node) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	c, e := n.f.caller(ctx)
	if e != 0 {
		return nil, e
	}
	p := n.path()
	sts, err := c.List(ctx, p)
	if err != nil {
		return nil, n.f.errno("readdir", p, err)
	}
	n.f.cache.put(sts...)
	ents := make([]fuse.DirEntry, 0, len(sts)+2)
	self := n.StableAttr().Ino
	parent := self
	if _, pi := n.Parent(); pi != nil {
		parent = pi.StableAttr().Ino
	}
	ents = append(ents, fuse.DirEntry{Name: ".", Mode: syscall.S_IFDIR, Ino: self}, fuse.DirEntry{Name: "..", Mode: syscall.S_IFDIR, Ino: parent})
	for _, st := range sts {
		ents = append(ents, fuse.DirEntry{Name: st.Name(), Mode: typeMode(st), Ino: st.FileID})
	}
	return gofs.NewListDirStream(ents), 0
}

// Mkdir implements gofs.NodeMkdirer.
func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if n.f.opts.ReadOnly {
		return nil, syscall.EROFS
	}
	c, e := n.f.caller(ctx)
	if e != 0 {
		return nil, e
	}
	p := n.child(name)
	if err := c.Mkdir(ctx, p, uint16(mode&0o7777)); err != nil {
		return nil, n.f.errno("mkdir", p, err)
	}
	n.f.cache.drop(p, false)
	st, err := n.f.stat(ctx, c, p)
	if err != nil {
		return nil, n.f.errno("mkdir", p, err)
	}
	return n.setChild(ctx, st, out), 0
}

// Create implements gofs.NodeCreater: a new HDFS file, written from 0.
func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	if n.f.opts.ReadOnly {
		return nil, nil, 0, syscall.EROFS
	}
	c, e := n.f.caller(ctx)
	if e != 0 {
		return nil, nil, 0, e
	}
	p := n.child(name)
	w, err := c.CreateFile(n.f.ctx, p, fs.CreateOptions{Perm: uint16(mode & 0o7777)})
	if err != nil {
		return nil, nil, 0, n.f.errno("create", p, err)
	}
	n.f.cache.drop(p, false)
	st, err := c.Stat(ctx, p)
	if err != nil {
		w.Close()
		return nil, nil, 0, n.f.errno("create", p, err)
	}
	ch := n.setChild(ctx, st, out)
	h := newHandle(n.f, ch.Operations().(*node), c, flags)
	h.startWriter(w, 0)
	return ch, h, ch.Operations().(*node).openFlags(h, flags), 0
}

// Open implements gofs.NodeOpener. A handle that may read opens the HDFS
// file at once (so a denied read fails here); writing starts at the first
// write.
func (n *node) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	acc := flags & syscall.O_ACCMODE
	if n.f.opts.ReadOnly && acc != syscall.O_RDONLY {
		return nil, 0, syscall.EROFS
	}
	c, e := n.f.caller(ctx)
	if e != 0 {
		return nil, 0, e
	}
	p := n.path()
	h := newHandle(n.f, n, c, flags)
	if acc != syscall.O_WRONLY {
		if e := h.openReader(); e != 0 {
			h.release()
			return nil, 0, e
		}
	}
	if acc != syscall.O_RDONLY {
		if e := n.f.access(ctx, c, p, 2); e != 0 {
			h.release()
			return nil, 0, e
		}
	}
	return h, n.openFlags(h, flags), 0
}

// Cache modes of a handle (handle.cache).
const (
	cacheNone     = iota // not counted (the handle failed to open)
	cacheDirect          // bypasses the page cache
	cacheDirectWO        // write-only, bypasses the page cache
	cachePages           // uses the page cache
)

// openFlags returns the FOPEN flags of h, just opened with flags, and
// counts it. A file opened write-only (as cp opens its target) bypasses
// the page cache (FOPEN_DIRECT_IO): the kernel hands the writer's own
// buffer to the mount instead of copying it into cached pages first, and
// each write(2) reaches the mount as issued, in requests of up to
// MaxWrite. A write-only descriptor cannot be mapped. So that no cached
// page goes stale under such writes, a write-only handle bypasses the
// cache only while no handle of the file uses it, and every handle opened
// while one writes that way bypasses it too. (Pages cached before are
// dropped by the kernel at each open: the mount never keeps them.)
func (n *node) openFlags(h *handle, flags uint32) uint32 {
	if n.f.opts.DirectIO {
		return fuse.FOPEN_DIRECT_IO
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	switch {
	case flags&syscall.O_ACCMODE == syscall.O_WRONLY && n.cachedOpen == 0:
		n.directWriters++
		h.cache = cacheDirectWO
	case n.directWriters > 0:
		h.cache = cacheDirect
	default:
		n.cachedOpen++
		h.cache = cachePages
		return 0
	}
	return fuse.FOPEN_DIRECT_IO
}

// handleClosed forgets h's cache mode.
func (n *node) handleClosed(h *handle) {
	n.mu.Lock()
	switch h.cache {
	case cacheDirectWO:
		n.directWriters--
	case cachePages:
		n.cachedOpen--
	}
	h.cache = cacheNone
	n.mu.Unlock()
}

// Unlink implements gofs.NodeUnlinker.
func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	return n.remove(ctx, "unlink", name)
}

// Rmdir implements gofs.NodeRmdirer: HDFS refuses a non-empty directory.
func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	return n.remove(ctx, "rmdir", name)
}

func (n *node) remove(ctx context.Context, op, name string) syscall.Errno {
	if n.f.opts.ReadOnly {
		return syscall.EROFS
	}
	c, e := n.f.caller(ctx)
	if e != 0 {
		return e
	}
	p := n.child(name)
	n.f.cache.drop(p, true)
	return n.f.errno(op, p, c.Delete(ctx, p, false))
}

// Rename implements gofs.NodeRenamer with HDFS rename2, replacing an
// existing file or empty directory as rename(2) does unless
// RENAME_NOREPLACE. RENAME_EXCHANGE is not supported.
func (n *node) Rename(ctx context.Context, name string, newParent gofs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	if n.f.opts.ReadOnly {
		return syscall.EROFS
	}
	const renameNoReplace, renameExchange = 1, 2
	if flags&renameExchange != 0 {
		return syscall.ENOTSUP
	}
	c, e := n.f.caller(ctx)
	if e != 0 {
		return e
	}
	np, ok := newParent.(*node)
	if !ok {
		return syscall.EXDEV
	}
	src, dst := n.child(name), np.child(newName)
	n.f.cache.drop(src, true)
	n.f.cache.drop(dst, true)
	return n.f.errno("rename", src, c.Rename2(ctx, src, dst, flags&renameNoReplace == 0))
}

// statfsBlock is the block size statfs reports figures in.
const statfsBlock = 4096

// Statfs implements gofs.NodeStatfser from the NameNode's capacity
// figures (getFsStats), as `hdfs dfs -df` shows them.
func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	c, e := n.f.caller(ctx)
	if e != 0 {
		return e
	}
	st, err := c.Status(ctx)
	if err != nil {
		return n.f.errno("statfs", "/", err)
	}
	out.Bsize = statfsBlock
	out.Frsize = statfsBlock
	out.Blocks = uint64(st.Capacity) / statfsBlock
	out.Bfree = uint64(st.Remaining) / statfsBlock
	out.Bavail = out.Bfree
	out.NameLen = 255
	return 0
}

// Access implements gofs.NodeAccesser with the NameNode's checkAccess,
// so access(2) answers for the calling user as HDFS would.
func (n *node) Access(ctx context.Context, mask uint32) syscall.Errno {
	if n.f.opts.ReadOnly && mask&2 != 0 {
		return syscall.EROFS
	}
	c, e := n.f.caller(ctx)
	if e != 0 {
		return e
	}
	p := n.path()
	if mask&7 == 0 {
		_, err := n.f.stat(ctx, c, p)
		return n.f.errno("access", p, err)
	}
	return n.f.access(ctx, c, p, mask&7)
}

// access asks the NameNode whether c's user may act on p (mode: r=4,
// w=2, x=1, HDFS's FsAction bits).
func (f *fsys) access(ctx context.Context, c *hdfs.Client, p string, mode uint32) syscall.Errno {
	req := &hdfspb.CheckAccessRequestProto{Path: proto.String(p), Mode: hdfspb.AclEntryProto_FsActionProto(mode).Enum()}
	return f.errno("access", p, c.Call(ctx, "checkAccess", req, &hdfspb.CheckAccessResponseProto{}))
}

// writerStarted and writerDone keep the node's view of the length its
// writers have reached.
func (n *node) writerStarted(size int64) {
	n.mu.Lock()
	n.writing++
	n.wsize = max(n.wsize, size)
	n.mu.Unlock()
}

func (n *node) wrote(size int64) {
	n.mu.Lock()
	n.wsize = max(n.wsize, size)
	n.mu.Unlock()
}

func (n *node) writerDone() {
	n.mu.Lock()
	n.writing--
	if n.writing == 0 {
		n.wsize = 0
	}
	n.mu.Unlock()
}
