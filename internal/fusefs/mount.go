package fusefs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"os"
	"os/user"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/ipc"
)

// ClientFactory returns a client of the mounted NameNode acting as user.
// The mount calls it once per user and closes the clients when it is
// unmounted.
type ClientFactory func(user string) (*hdfs.Client, error)

// Defaults of Options.
const (
	DefaultTimeout   = time.Second
	DefaultReadAhead = 4 << 20
	DefaultMaxWrite  = fuse.MAX_KERNEL_WRITE
)

// Options shape a mount. The zero value is usable.
type Options struct {
	// User is the HDFS user that uid 0 and the mounting uid act as; ""
	// means fs.CurrentUser().
	User string
	// ReadOnly mounts read-only (-o ro): every change is EROFS.
	ReadOnly bool
	// AllowOther lets users other than the mounting one use the mount
	// (-o allow_other; needs user_allow_other in /etc/fuse.conf unless
	// mounting as root).
	AllowOther bool
	// AttrTimeout and EntryTimeout are how long the kernel and the mount
	// cache attributes, and names and listings. 0 means DefaultTimeout; a
	// negative value turns caching off.
	AttrTimeout  time.Duration
	EntryTimeout time.Duration
	// ReadAhead is each read handle's window in bytes (0: DefaultReadAhead).
	ReadAhead int
	// MaxWrite is the largest FUSE read or write request in bytes (0:
	// DefaultMaxWrite, the kernel's limit of 1 MiB).
	MaxWrite int
	// DirectIO opens files with FOPEN_DIRECT_IO (-o direct_io): reads and
	// writes bypass the kernel's page cache and go to the mount as the
	// program issued them (up to MaxWrite each), which saves a copy of
	// every byte; files cannot be mapped shared (mmap MAP_SHARED fails).
	DirectIO bool
	// FsName is the source shown in /proc/mounts and df (default "strata").
	FsName string
	// Debug logs every FUSE request.
	Debug bool
	// Logger receives refused writes and errors without another channel;
	// nil discards them.
	Logger *slog.Logger
}

func timeout(d time.Duration) time.Duration {
	switch {
	case d == 0:
		return DefaultTimeout
	case d < 0:
		return 0
	}
	return d
}

// Server serves a mounted file system.
type Server struct {
	dir    string
	server *fuse.Server
	fsys   *fsys
	done   chan struct{}
}

// Mount mounts the NameNode that factory's clients talk to on dir (an
// existing directory) and serves it until Unmount, or until it is
// unmounted from outside (fusermount3 -u). ctx bounds the mount itself.
func Mount(ctx context.Context, factory ClientFactory, dir string, o Options) (*Server, error) {
	if o.User == "" {
		o.User = fs.CurrentUser()
	}
	if o.ReadAhead <= 0 {
		o.ReadAhead = DefaultReadAhead
	}
	if o.MaxWrite <= 0 || o.MaxWrite > fuse.MAX_KERNEL_WRITE {
		o.MaxWrite = DefaultMaxWrite
	}
	if o.FsName == "" {
		o.FsName = "strata"
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	mctx, cancel := context.WithCancel(context.Background())
	f := &fsys{
		opts: o, factory: factory, ctx: mctx, cancel: cancel, log: o.Logger,
		clients: map[string]*hdfs.Client{}, uidNames: map[uint32]string{}, gidNames: map[uint32]string{},
		userIDs: map[string]uint32{}, groupIDs: map[string]uint32{}, handles: map[*handle]bool{},
		cache: newStatCache(timeout(o.EntryTimeout)), myUID: uint32(os.Getuid()),
	}
	c, err := f.client(o.User)
	if err != nil {
		f.close()
		return nil, err
	}
	root, err := c.Stat(ctx, "/")
	if err != nil {
		f.close()
		return nil, fmt.Errorf("fusefs: stat / on the NameNode: %w", err)
	}
	attrT, entryT := timeout(o.AttrTimeout), timeout(o.EntryTimeout)
	negT := entryT
	mo := fuse.MountOptions{
		AllowOther:    o.AllowOther,
		FsName:        o.FsName,
		Name:          "strata",
		MaxWrite:      o.MaxWrite,
		MaxBackground: 64,
		DisableXAttrs: true,
		Debug:         o.Debug,
		Logger:        log.New(slogWriter{o.Logger}, "", 0),
	}
	if o.ReadOnly {
		mo.Options = append(mo.Options, "ro")
	}
	gopts := &gofs.Options{
		MountOptions:    mo,
		AttrTimeout:     &attrT,
		EntryTimeout:    &entryT,
		NegativeTimeout: &negT,
		RootStableAttr:  &gofs.StableAttr{Ino: root.FileID},
		Logger:          log.New(slogWriter{o.Logger}, "", 0),
	}
	server, err := gofs.Mount(dir, &node{f: f}, gopts)
	if err != nil {
		f.close()
		return nil, fmt.Errorf("fusefs: mount %s: %w", dir, err)
	}
	m := &Server{dir: dir, server: server, fsys: f, done: make(chan struct{})}
	f.setReadAhead(dir)
	go func() {
		server.Wait()
		f.close()
		close(m.done)
	}()
	return m, nil
}

// setReadAhead raises the kernel's read-ahead for the mount to the
// handles' window: FUSE starts at 128 KiB, which splits a sequential read
// into many small requests. Only root may; others keep the default.
func (f *fsys) setReadAhead(dir string) {
	var st syscall.Stat_t
	if err := syscall.Stat(dir, &st); err != nil {
		return
	}
	p := fmt.Sprintf("/sys/class/bdi/%d:%d/read_ahead_kb", unix.Major(st.Dev), unix.Minor(st.Dev))
	if err := os.WriteFile(p, []byte(strconv.Itoa(f.opts.ReadAhead>>10)), 0); err != nil {
		f.log.Debug("fuse: cannot raise the kernel read-ahead", "file", p, "err", err)
	}
}

// Dir is the mount point.
func (m *Server) Dir() string { return m.dir }

// Unmount unmounts the file system and waits until it is no longer
// served. It fails (and the mount stays) while files in it are open or a
// process has its working directory in it. Safe to call twice.
func (m *Server) Unmount() error {
	select {
	case <-m.done:
		return nil
	default:
	}
	if err := m.server.Unmount(); err != nil {
		return fmt.Errorf("fusefs: unmount %s: %w", m.dir, err)
	}
	<-m.done
	return nil
}

// Wait blocks until the file system is unmounted (by Unmount or from
// outside) and its open files and clients are closed.
func (m *Server) Wait() { <-m.done }

// fsys is the state a mount's nodes share.
type fsys struct {
	opts    Options
	factory ClientFactory
	ctx     context.Context // lives as long as the mount: open readers and writers use it
	cancel  context.CancelFunc
	log     *slog.Logger
	cache   *statCache

	readBufs, writeBufs bufPool
	windowBytes         atomic.Int64 // held in read windows

	mu       sync.Mutex
	clients  map[string]*hdfs.Client
	uidNames map[uint32]string
	gidNames map[uint32]string
	userIDs  map[string]uint32
	groupIDs map[string]uint32
	handles  map[*handle]bool
	myUID    uint32
}

// close finishes what handles are still open and closes the clients.
func (f *fsys) close() {
	f.mu.Lock()
	hs := make([]*handle, 0, len(f.handles))
	for h := range f.handles {
		hs = append(hs, h)
	}
	f.mu.Unlock()
	for _, h := range hs {
		h.release()
	}
	f.cancel()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, c := range f.clients {
		c.Close()
	}
	f.clients = map[string]*hdfs.Client{}
}

// client returns the cached client acting as name.
func (f *fsys) client(name string) (*hdfs.Client, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.clients[name]; c != nil {
		return c, nil
	}
	c, err := f.factory(name)
	if err != nil {
		return nil, fmt.Errorf("fusefs: client for %s: %w", name, err)
	}
	f.clients[name] = c
	return c, nil
}

// caller returns the client acting as the user who made the request.
func (f *fsys) caller(ctx context.Context) (*hdfs.Client, syscall.Errno) {
	name := f.opts.User
	if c, ok := fuse.FromContext(ctx); ok && c.Uid != 0 && c.Uid != f.myUID {
		name = f.userName(c.Uid)
	}
	c, err := f.client(name)
	if err != nil {
		f.log.Error("fuse: no HDFS client", "user", name, "err", err)
		return nil, syscall.EIO
	}
	return c, 0
}

// userName maps a uid to the user name it acts as: its name, or its
// number when it has none.
func (f *fsys) userName(uid uint32) string {
	return memo(&f.mu, f.uidNames, uid, func(uid uint32) string {
		s := strconv.FormatUint(uint64(uid), 10)
		if u, err := user.LookupId(s); err == nil && u.Username != "" {
			return u.Username
		}
		return s
	})
}

// groupName maps a gid to a group name, or its number.
func (f *fsys) groupName(gid uint32) string {
	return memo(&f.mu, f.gidNames, gid, func(gid uint32) string {
		s := strconv.FormatUint(uint64(gid), 10)
		if g, err := user.LookupGroupId(s); err == nil && g.Name != "" {
			return g.Name
		}
		return s
	})
}

// nobody is the overflow uid and gid the kernel shows for unmapped ids.
const nobody = 65534

// uid maps an HDFS owner name to a local uid.
func (f *fsys) uid(name string) uint32 {
	if name == f.opts.User {
		return f.myUID
	}
	return memo(&f.mu, f.userIDs, name, func(name string) uint32 {
		if u, err := user.Lookup(name); err == nil {
			return parseID(u.Uid)
		}
		return parseID(name) // a numeric name an unknown uid acted as
	})
}

// gid maps an HDFS group name to a local gid.
func (f *fsys) gid(name string) uint32 {
	return memo(&f.mu, f.groupIDs, name, func(name string) uint32 {
		if g, err := user.LookupGroup(name); err == nil {
			return parseID(g.Gid)
		}
		return parseID(name)
	})
}

func parseID(s string) uint32 {
	if n, err := strconv.ParseUint(s, 10, 32); err == nil {
		return uint32(n)
	}
	return nobody
}

// memo returns cache[k], filling it with lookup(k) (called without mu
// held: it may ask NSS) the first time. Names and ids are kept for the
// life of the mount.
func memo[K comparable, V any](mu *sync.Mutex, cache map[K]V, k K, lookup func(K) V) V {
	mu.Lock()
	v, ok := cache[k]
	mu.Unlock()
	if ok {
		return v
	}
	v = lookup(k)
	mu.Lock()
	cache[k] = v
	mu.Unlock()
	return v
}

func (f *fsys) addHandle(h *handle) {
	f.mu.Lock()
	f.handles[h] = true
	f.mu.Unlock()
}

func (f *fsys) dropHandle(h *handle) {
	f.mu.Lock()
	delete(f.handles, h)
	f.mu.Unlock()
}

// slogWriter sends go-fuse's log lines to the mount's logger.
type slogWriter struct{ l *slog.Logger }

func (w slogWriter) Write(p []byte) (int, error) {
	w.l.Debug("fuse: " + strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// statCache keeps recent FileStatuses by path for a short time.
type statCache struct {
	ttl time.Duration
	mu  sync.Mutex
	m   map[string]cached
}

type cached struct {
	st  fs.FileStatus
	exp time.Time
}

// maxCached bounds the cache; beyond it expired entries are dropped, and
// if that is not enough, all of them.
const maxCached = 1 << 17

func newStatCache(ttl time.Duration) *statCache {
	return &statCache{ttl: ttl, m: map[string]cached{}}
}

func (c *statCache) get(p string) (fs.FileStatus, bool) {
	if c.ttl <= 0 {
		return fs.FileStatus{}, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.m[p]
	if !ok || time.Now().After(e.exp) {
		return fs.FileStatus{}, false
	}
	return e.st, true
}

func (c *statCache) put(sts ...fs.FileStatus) {
	if c.ttl <= 0 {
		return
	}
	now := time.Now()
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m)+len(sts) > maxCached {
		for p, e := range c.m {
			if now.After(e.exp) {
				delete(c.m, p)
			}
		}
		if len(c.m)+len(sts) > maxCached {
			c.m = map[string]cached{}
		}
	}
	for _, st := range sts {
		c.m[st.Path] = cached{st: st, exp: now.Add(c.ttl)}
	}
}

// drop forgets p and, when tree is set, everything under it.
func (c *statCache) drop(p string, tree bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.m, p)
	if !tree {
		return
	}
	prefix := strings.TrimSuffix(p, "/") + "/"
	for k := range c.m {
		if strings.HasPrefix(k, prefix) {
			delete(c.m, k)
		}
	}
}

// errno turns an hdfs error into the errno a caller sees, logging those
// that have no better code than EIO.
func (f *fsys) errno(op, p string, err error) syscall.Errno {
	if err == nil {
		return 0
	}
	var re *hdfs.RemoteError
	switch {
	case errors.As(err, &re) && re.Class == ipc.ClassAlreadyBeingCreated:
		f.log.Warn("fuse: "+op+": the file is being written by another client", "path", p, "err", err)
		return syscall.EBUSY
	case errors.Is(err, os.ErrNotExist):
		return syscall.ENOENT
	case errors.Is(err, os.ErrPermission):
		return syscall.EACCES
	case errors.Is(err, os.ErrExist):
		return syscall.EEXIST
	case errors.Is(err, fs.ErrNotEmpty):
		return syscall.ENOTEMPTY
	case errors.Is(err, fs.ErrNotDir):
		return syscall.ENOTDIR
	case errors.Is(err, fs.ErrIsDir):
		return syscall.EISDIR
	case errors.Is(err, context.Canceled):
		return syscall.EINTR
	case errors.Is(err, fs.ErrInvalid):
		return syscall.EINVAL
	case errors.As(err, &re):
		switch {
		case strings.HasSuffix(re.Class, "SafeModeException"):
			return syscall.EROFS
		case strings.HasSuffix(re.Class, "QuotaExceededException"):
			return syscall.EDQUOT
		case strings.Contains(re.Message, "is not empty"):
			return syscall.ENOTEMPTY
		}
	}
	f.log.Warn("fuse: "+op+" failed", "path", p, "err", err)
	return syscall.EIO
}
