package namenode

import (
	"context"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/proto/namenodepb"
	"github.com/stratafs/strata/internal/storage"
)

// journal is what the Namesystem needs of the edit log: Append under the
// namespace lock (so log order is apply order), Sync after releasing it.
type journal interface {
	Append(rec []byte) (uint64, error)
	Sync(ctx context.Context, txid uint64) error
}

// nsConfig is the part of Config the Namesystem uses.
type nsConfig struct {
	superuser          string
	supergroup         string
	permissions        bool
	maxComponentLength int
	maxDirItems        int
	defaultReplication int
	defaultBlockSize   int64
	minBlockSize       int64
	maxReplication     int
	listLimit          int
	leaseSoftLimit     time.Duration
	leaseHardLimit     time.Duration

	minReplication        int
	heartbeatExpiry       time.Duration
	maxReplicationStreams int
	replicationTimeout    time.Duration
	safeModeThreshold     float64
	safeModeExtension     time.Duration
}

// Namesystem is the namespace with its rules: permission checks, limits,
// leases, and logging of every mutation before it is acknowledged. It is
// Hadoop's FSNamesystem (without blocks, which come with DataNodes).
type Namesystem struct {
	cfg    nsConfig
	log    *slog.Logger
	groups *groupCache
	now    func() time.Time

	mu      sync.RWMutex
	ns      *namespace
	journal journal
	leases  *leaseManager
	failed  error // set when the journal failed: no more mutations
	safe    bool  // manual safe mode: the namespace is read-only

	blockPoolID   string
	dns           *datanodes
	pending       map[uint64]*pendingReplication
	recovering    map[uint64]*blockRecovery
	satisfy       map[uint64]bool // files whose replicas the mover asked to place by policy
	startupSafe   bool            // safe mode until enough blocks are reported
	safeReachedAt time.Time
	replStats     ReplicationStats

	ops atomic.Int64 // mutations logged, for metrics
}

func newNamesystem(cfg nsConfig, j journal, logger *slog.Logger) *Namesystem {
	return &Namesystem{
		cfg:        cfg,
		log:        logger,
		groups:     newGroupCache(5 * time.Minute),
		now:        time.Now,
		ns:         newNamespace(cfg.superuser, cfg.supergroup),
		journal:    j,
		leases:     newLeaseManager(),
		dns:        newDatanodes(),
		pending:    map[uint64]*pendingReplication{},
		recovering: map[uint64]*blockRecovery{},
		satisfy:    map[uint64]bool{},
	}
}

func (s *Namesystem) principal(ctx context.Context) *principal {
	c, ok := ipc.CallerFrom(ctx)
	name := s.cfg.superuser
	if ok {
		name = c.User
	}
	p := &principal{user: name}
	if name == s.cfg.superuser {
		p.superuser = true
		return p
	}
	p.groups = s.groups.groups(name)
	p.superuser = p.inGroup(s.cfg.supergroup)
	return p
}

func (s *Namesystem) checker(ctx context.Context) permCheck {
	return permCheck{p: s.principal(ctx), enabled: s.cfg.permissions}
}

func nowMillis(t time.Time) int64 { return t.UnixMilli() }

// mutate runs f under the write lock; f checks and returns the ops to
// apply and log. mutate applies them, appends them to the journal, releases
// the lock and waits for the journal to make them durable before
// returning: a nil error means the change survives a crash.
func (s *Namesystem) mutate(ctx context.Context, f func() ([]*namenodepb.EditOp, error)) error {
	return s.mutateThen(ctx, func() ([]*namenodepb.EditOp, func(), error) {
		ops, err := f()
		return ops, nil, err
	})
}

// mutateThen is mutate where f may also return a function to run under the
// lock after its ops are applied (to set in-memory state on new objects).
func (s *Namesystem) mutateThen(ctx context.Context, f func() ([]*namenodepb.EditOp, func(), error)) error {
	s.mu.Lock()
	if s.failed != nil {
		s.mu.Unlock()
		return ipc.Errorf(ipc.ClassIOException, "NameNode edit log failed: %v", s.failed)
	}
	if s.safe || s.startupSafe {
		startup := s.startupSafe
		s.mu.Unlock()
		if startup {
			return ipc.Errorf(ipc.ClassSafeMode, "Cannot change the namespace. Name node is in safe mode.\n%s", s.SafeModeTip())
		}
		return ipc.Errorf(ipc.ClassSafeMode, "Cannot change the namespace. Name node is in safe mode.\nIt was turned on manually. Use \"strata dfsadmin -safemode leave\" to turn safe mode off.")
	}
	ops, then, err := f()
	if err != nil || len(ops) == 0 {
		s.mu.Unlock()
		return err
	}
	var txid uint64
	for _, op := range ops {
		rec, err := proto.Marshal(op)
		if err != nil {
			s.mu.Unlock()
			return err
		}
		if err := s.ns.apply(op); err != nil {
			// The checks in f passed, so this is a bug; the namespace may
			// be half-changed and must not be logged further.
			s.failed = err
			s.mu.Unlock()
			s.log.Error("namenode: applying a checked edit failed", "err", err)
			return ipc.Errorf(ipc.ClassIOException, "internal error: %v", err)
		}
		if txid, err = s.journal.Append(rec); err != nil {
			// Applied in memory but not logged: stop accepting changes.
			s.failed = err
			s.mu.Unlock()
			s.log.Error("namenode: edit log append failed; refusing further mutations", "err", err)
			return ipc.Errorf(ipc.ClassIOException, "edit log append failed: %v", err)
		}
	}
	s.ops.Add(int64(len(ops)))
	if then != nil {
		then()
	}
	s.invalidateRemoved()
	s.mu.Unlock()
	if err := s.journal.Sync(ctx, txid); err != nil {
		s.mu.Lock()
		if s.failed == nil {
			s.failed = err
		}
		s.mu.Unlock()
		s.log.Error("namenode: edit log sync failed; refusing further mutations", "err", err)
		return ipc.Errorf(ipc.ClassIOException, "edit log sync failed: %v", err)
	}
	return nil
}

// Path validation, as DFSUtil.isValidName and FSDirectory's limits.

func (s *Namesystem) checkPath(p string) error {
	if !strings.HasPrefix(p, "/") {
		return ipc.Errorf(ipc.ClassInvalidPath, "Invalid path name Path is not absolute: %s", p)
	}
	if len(p) > 8000 {
		return ipc.Errorf(ipc.ClassInvalidPath, "Invalid path name: path is longer than 8000 bytes")
	}
	for i, c := range splitPath(p) {
		if c == "" && i > 0 || c == "." || c == ".." || strings.Contains(c, ":") || strings.ContainsRune(c, 0) {
			return ipc.Errorf(ipc.ClassInvalidPath, "Invalid path name Invalid file name: %s", p)
		}
		if len(c) > s.cfg.maxComponentLength {
			return ipc.Errorf(ipc.ClassPathComponentTooLong, "The maximum path component name limit of %s in directory %s is exceeded: limit=%d length=%d",
				c, path.Dir("/"+strings.Join(splitPath(p)[:i+1], "/")), s.cfg.maxComponentLength, len(c))
		}
	}
	if strings.Contains(p, "//") {
		return ipc.Errorf(ipc.ClassInvalidPath, "Invalid path name Invalid file name: %s", p)
	}
	return nil
}

func notFound(p string) error {
	return ipc.Errorf(ipc.ClassFileNotFound, "File does not exist: %s", p)
}

// checkParents returns an error when the path cannot be walked: an
// ancestor is a file (ParentNotDirectory) or traverse permission is missing.
func (s *Namesystem) checkParents(pc permCheck, r *resolved) error {
	if err := pc.traverse(r); err != nil {
		return err
	}
	last := r.lastExisting()
	if !r.exists() && !last.isDir {
		return ipc.Errorf(ipc.ClassParentNotDirectory, "%s (is not a directory)", last.path())
	}
	return nil
}

func (s *Namesystem) checkDirItems(dir *inode) error {
	if len(dir.children) >= s.cfg.maxDirItems {
		return ipc.Errorf(ipc.ClassMaxDirectoryItems, "The directory item limit of %s is exceeded: limit=%d items=%d",
			dir.path(), s.cfg.maxDirItems, len(dir.children))
	}
	return nil
}

// FileInfo returns the status of p, or nil when it does not exist.
func (s *Namesystem) FileInfo(ctx context.Context, p string) (*FileStatus, error) {
	if err := s.checkPath(p); err != nil {
		return nil, err
	}
	pc := s.checker(ctx)
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.ns.resolve(p)
	if err := pc.traverse(r); err != nil {
		return nil, err
	}
	n := r.target()
	if n == nil {
		return nil, nil
	}
	st := s.status(n)
	return &st, nil
}

// Listing is one page of a directory listing.
type Listing struct {
	Entries   []FileStatus
	Remaining int
}

// List returns up to listLimit entries of directory p whose names sort
// after startAfter. A file lists as itself. A missing path returns nil.
func (s *Namesystem) List(ctx context.Context, p string, startAfter string) (*Listing, error) {
	if err := s.checkPath(p); err != nil {
		return nil, err
	}
	pc := s.checker(ctx)
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.ns.resolve(p)
	if err := pc.traverse(r); err != nil {
		return nil, err
	}
	n := r.target()
	if n == nil {
		return nil, nil
	}
	if !n.isDir {
		// A file lists as itself, with an empty name (HDFS's EMPTY_NAME):
		// the caller already has its path.
		st := s.status(n)
		st.Name = ""
		return &Listing{Entries: []FileStatus{st}}, nil
	}
	if err := pc.check(n, accessRX); err != nil {
		return nil, err
	}
	i, found := n.childIndex(startAfter)
	if found {
		i++
	}
	end := min(len(n.children), i+s.cfg.listLimit)
	l := &Listing{Remaining: len(n.children) - end}
	for _, c := range n.children[i:end] {
		l.Entries = append(l.Entries, s.status(c))
	}
	return l, nil
}

// Mkdirs creates p (and, with createParent, its missing ancestors) with
// permission perm (already masked by the client's umask).
func (s *Namesystem) Mkdirs(ctx context.Context, p string, perm uint16, createParent bool) error {
	if err := s.checkPath(p); err != nil {
		return err
	}
	pc := s.checker(ctx)
	return s.mutate(ctx, func() ([]*namenodepb.EditOp, error) {
		r := s.ns.resolve(p)
		if err := s.checkParents(pc, r); err != nil {
			return nil, err
		}
		if n := r.target(); n != nil {
			if !n.isDir {
				return nil, ipc.Errorf(ipc.ClassFileAlreadyExists, "Path is not a directory: %s", p)
			}
			return nil, nil
		}
		missing := len(r.names) - (len(r.inodes) - 1)
		if missing > 1 && !createParent {
			return nil, ipc.Errorf(ipc.ClassFileNotFound, "Parent directory doesn't exist: %s", path.Dir(p))
		}
		parent := r.lastExisting()
		if err := pc.check(parent, accessWX); err != nil {
			return nil, err
		}
		if err := s.checkDirItems(parent); err != nil {
			return nil, err
		}
		now := nowMillis(s.now())
		var ops []*namenodepb.EditOp
		cur := parent.path()
		for i := len(r.inodes) - 1; i < len(r.names); i++ {
			cur = path.Join(cur, r.names[i])
			mode := perm
			if i < len(r.names)-1 {
				mode |= 0o300 // implicit u+wx on created parents, as HDFS
			}
			s.ns.lastID++
			ops = append(ops, &namenodepb.EditOp{Op: &namenodepb.EditOp_Mkdir{Mkdir: &namenodepb.OpMkdir{
				Id: proto.Uint64(s.ns.lastID), Path: proto.String(cur), Mtime: proto.Int64(now),
				Perm: &namenodepb.PermStatus{Owner: proto.String(pc.p.user), Group: proto.String(parent.group), Mode: proto.Uint32(uint32(mode))},
			}}})
		}
		return ops, nil
	})
}

// CreateOptions are the arguments of Create.
type CreateOptions struct {
	Perm          uint16
	ClientName    string
	ClientMachine string
	Overwrite     bool
	CreateParent  bool
	Replication   int
	BlockSize     int64
	StoragePolicy string
}

// Create makes a new empty file under construction, leased to the client.
func (s *Namesystem) Create(ctx context.Context, p string, o CreateOptions) (*FileStatus, error) {
	if err := s.checkPath(p); err != nil {
		return nil, err
	}
	if o.ClientName == "" {
		return nil, ipc.Errorf(ipc.ClassIllegalArgument, "create %s: empty client name", p)
	}
	if o.Replication <= 0 {
		o.Replication = s.cfg.defaultReplication
	}
	if o.Replication > s.cfg.maxReplication {
		return nil, ipc.Errorf(ipc.ClassIOException, "Requested replication factor of %d exceeds maximum of %d for %s", o.Replication, s.cfg.maxReplication, p)
	}
	if o.BlockSize <= 0 {
		o.BlockSize = s.cfg.defaultBlockSize
	}
	if o.BlockSize < s.cfg.minBlockSize {
		return nil, ipc.Errorf(ipc.ClassIOException, "Specified block size is less than configured minimum value (dfs.namenode.fs-limits.min-block-size): %d < %d", o.BlockSize, s.cfg.minBlockSize)
	}
	var policy uint8
	if o.StoragePolicy != "" {
		pol, ok := storage.ByName(o.StoragePolicy)
		if !ok {
			return nil, ipc.Errorf(ipc.ClassIllegalArgument, "Cannot find a block policy with the name %s", o.StoragePolicy)
		}
		policy = pol.ID
	}
	pc := s.checker(ctx)
	var st FileStatus
	err := s.mutate(ctx, func() ([]*namenodepb.EditOp, error) {
		r := s.ns.resolve(p)
		if err := s.checkParents(pc, r); err != nil {
			return nil, err
		}
		var ops []*namenodepb.EditOp
		overwrite := false
		if n := r.target(); n != nil {
			if n.isDir {
				return nil, ipc.Errorf(ipc.ClassFileAlreadyExists, "%s already exists as a directory", p)
			}
			if n.uc != nil {
				if n.uc.clientName == o.ClientName {
					return nil, ipc.Errorf(ipc.ClassAlreadyBeingCreated, "failed to create file %s for %s for client %s because current leaseholder is trying to recreate file.", p, o.ClientName, o.ClientMachine)
				}
				if !s.leases.softExpired(n.uc.clientName, s.now(), s.cfg.leaseSoftLimit) {
					return nil, ipc.Errorf(ipc.ClassAlreadyBeingCreated, "Failed to CREATE_FILE %s for %s on %s because this file lease is currently owned by %s on %s",
						p, o.ClientName, o.ClientMachine, n.uc.clientName, n.uc.clientMachine)
				}
				// The other writer's lease expired: recover the file first.
				ops = append(ops, s.closeOp(n))
			}
			if !o.Overwrite {
				return nil, ipc.Errorf(ipc.ClassFileAlreadyExists, "%s for client %s already exists", p, o.ClientMachine)
			}
			if err := pc.check(n, accessWrite); err != nil {
				return nil, err
			}
			if err := pc.sticky(n.parent, n); err != nil {
				return nil, err
			}
			overwrite = true
		}
		parentPath := path.Dir(p)
		missing := len(r.names) - (len(r.inodes) - 1)
		if r.exists() {
			missing = 0
		}
		if missing > 1 && !o.CreateParent {
			return nil, ipc.Errorf(ipc.ClassFileNotFound, "Parent directory doesn't exist: %s", parentPath)
		}
		parent := r.lastExisting()
		if r.exists() {
			parent = r.target().parent
		}
		if err := pc.check(parent, accessWrite); err != nil {
			return nil, err
		}
		if !overwrite {
			if err := s.checkDirItems(parent); err != nil {
				return nil, err
			}
		}
		now := nowMillis(s.now())
		group := parent.group
		cur := parent.path()
		for i := len(r.inodes) - 1; i < len(r.names)-1 && missing > 0; i++ {
			cur = path.Join(cur, r.names[i])
			s.ns.lastID++
			ops = append(ops, &namenodepb.EditOp{Op: &namenodepb.EditOp_Mkdir{Mkdir: &namenodepb.OpMkdir{
				Id: proto.Uint64(s.ns.lastID), Path: proto.String(cur), Mtime: proto.Int64(now),
				Perm: &namenodepb.PermStatus{Owner: proto.String(pc.p.user), Group: proto.String(group), Mode: proto.Uint32(uint32(o.Perm | 0o300))},
			}}})
		}
		s.ns.lastID++
		ops = append(ops, &namenodepb.EditOp{Op: &namenodepb.EditOp_AddFile{AddFile: &namenodepb.OpAddFile{
			Id: proto.Uint64(s.ns.lastID), Path: proto.String(p), Mtime: proto.Int64(now),
			Perm:        &namenodepb.PermStatus{Owner: proto.String(pc.p.user), Group: proto.String(group), Mode: proto.Uint32(uint32(o.Perm))},
			Replication: proto.Uint32(uint32(o.Replication)), BlockSize: proto.Uint64(uint64(o.BlockSize)),
			ClientName: proto.String(o.ClientName), ClientMachine: proto.String(o.ClientMachine),
			Overwrite: proto.Bool(overwrite), StoragePolicy: proto.Uint32(uint32(policy)),
		}}})
		return ops, nil
	})
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	s.leases.add(o.ClientName, p, s.now())
	if n := s.ns.lookup(p); n != nil {
		st = s.status(n)
	}
	s.mu.Unlock()
	return &st, nil
}

// closeOp returns the op that finishes file n as it stands.
func (s *Namesystem) closeOp(n *inode) *namenodepb.EditOp {
	now := nowMillis(s.now())
	return &namenodepb.EditOp{Op: &namenodepb.EditOp_CloseFile{CloseFile: &namenodepb.OpCloseFile{
		Path: proto.String(n.path()), Mtime: proto.Int64(now), Atime: proto.Int64(now), Blocks: blocksProto(n.blocks),
	}}}
}

// fileUnderConstruction finds the file a client is writing, by id when
// given (paths may have been renamed since).
func (s *Namesystem) fileUnderConstruction(p string, fileID uint64, client string) (*inode, error) {
	var n *inode
	if fileID != 0 {
		n = s.ns.byID[fileID]
	} else {
		n = s.ns.lookup(p)
	}
	if n == nil || n.isDir {
		return nil, ipc.Errorf(ipc.ClassFileNotFound, "File does not exist: %s [Lease.  Holder: %s, pending creates: %d]", p, client, s.leases.count(client))
	}
	if n.uc == nil {
		return n, ipc.Errorf(ipc.ClassLeaseExpired, "No lease on %s: File is not open for writing. Holder %s does not have any open files.", p, client)
	}
	if n.uc.clientName != client {
		return n, ipc.Errorf(ipc.ClassLeaseExpired, "Client (=%s) is not the lease owner (=%s) of %s", client, n.uc.clientName, p)
	}
	return n, nil
}

// RenewLease renews every lease held by client.
func (s *Namesystem) RenewLease(ctx context.Context, client string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.leases.renew(client, s.now())
	return nil
}

// RecoverLease closes the file if its writer's lease can be taken over: at
// once when its last block is complete, else after the DataNodes have
// finished the last block's replicas. It returns true once the file is
// closed; clients call it again until then.
func (s *Namesystem) RecoverLease(ctx context.Context, p, client string) (bool, error) {
	if err := s.checkPath(p); err != nil {
		return false, err
	}
	pc := s.checker(ctx)
	closed := false
	var holder string
	err := s.mutateThen(ctx, func() ([]*namenodepb.EditOp, func(), error) {
		r := s.ns.resolve(p)
		if err := pc.traverse(r); err != nil {
			return nil, nil, err
		}
		n := r.target()
		if n == nil || n.isDir {
			return nil, nil, notFound(p)
		}
		if err := pc.check(n, accessWrite); err != nil {
			return nil, nil, err
		}
		if n.uc == nil {
			closed = true
			return nil, nil, nil
		}
		ops, then, now := s.recoverFileOps(n)
		if now {
			closed = true
			holder = n.uc.clientName
		}
		return ops, then, nil
	})
	if err == nil && holder != "" {
		s.mu.Lock()
		s.leases.remove(holder, p)
		s.mu.Unlock()
	}
	return closed, err
}

// expireLeases closes the files of writers whose leases passed the hard
// limit, as Hadoop's LeaseManager.Monitor does.
func (s *Namesystem) expireLeases(ctx context.Context) {
	s.mu.RLock()
	expired := s.leases.expired(s.now(), s.cfg.leaseHardLimit)
	s.mu.RUnlock()
	for _, e := range expired {
		for _, p := range e.paths {
			err := s.mutateThen(ctx, func() ([]*namenodepb.EditOp, func(), error) {
				n := s.ns.lookup(p)
				if n == nil || n.uc == nil || n.uc.clientName != e.holder {
					return nil, nil, nil
				}
				s.log.Info("namenode: lease expired; recovering file", "holder", e.holder, "path", p)
				ops, then, _ := s.recoverFileOps(n)
				return ops, then, nil
			})
			if err != nil {
				s.log.Warn("namenode: closing file of expired lease", "path", p, "err", err)
			}
		}
		s.mu.Lock()
		s.leases.drop(e.holder)
		s.mu.Unlock()
	}
}

// Delete removes p. A missing path returns false, not an error.
func (s *Namesystem) Delete(ctx context.Context, p string, recursive bool) (bool, error) {
	if err := s.checkPath(p); err != nil {
		return false, err
	}
	pc := s.checker(ctx)
	deleted := false
	var removed []string
	err := s.mutate(ctx, func() ([]*namenodepb.EditOp, error) {
		r := s.ns.resolve(p)
		if err := pc.traverse(r); err != nil {
			return nil, err
		}
		n := r.target()
		if n == nil || n.parent == nil { // missing, or the root
			return nil, nil
		}
		if n.isDir && len(n.children) > 0 && !recursive {
			return nil, ipc.Errorf(ipc.ClassPathIsNotEmptyDir, "`%s is non empty': Directory is not empty", p)
		}
		if err := pc.check(n.parent, accessWX); err != nil {
			return nil, err
		}
		if err := pc.sticky(n.parent, n); err != nil {
			return nil, err
		}
		if err := pc.subtree(n, accessAll, true); err != nil {
			return nil, err
		}
		removed = s.openFilesUnder(n)
		deleted = true
		return []*namenodepb.EditOp{{Op: &namenodepb.EditOp_Delete{Delete: &namenodepb.OpDelete{
			Path: proto.String(p), Mtime: proto.Int64(nowMillis(s.now())),
		}}}}, nil
	})
	if err == nil && len(removed) > 0 {
		s.mu.Lock()
		for _, h := range removed {
			parts := strings.SplitN(h, "\x00", 2)
			s.leases.remove(parts[0], parts[1])
		}
		s.mu.Unlock()
	}
	return deleted, err
}

// openFilesUnder lists "holder\x00path" of files being written under n.
func (s *Namesystem) openFilesUnder(n *inode) []string {
	var out []string
	var walk func(*inode)
	walk = func(x *inode) {
		if x.uc != nil {
			out = append(out, x.uc.clientName+"\x00"+x.path())
		}
		for _, c := range x.children {
			walk(c)
		}
	}
	walk(n)
	return out
}

// Rename moves src to dst. With legacy set it follows the old rename's
// rules (dst an existing directory: move into it; failures return false);
// otherwise rename2's (dst is the exact new name; overwrite replaces a file
// or empty directory; failures are errors).
func (s *Namesystem) Rename(ctx context.Context, src, dst string, legacy, overwrite bool) (bool, error) {
	for _, p := range []string{src, dst} {
		if err := s.checkPath(p); err != nil {
			return false, err
		}
	}
	pc := s.checker(ctx)
	ok := false
	var moved []string
	var target string
	err := s.mutate(ctx, func() ([]*namenodepb.EditOp, error) {
		rs := s.ns.resolve(src)
		if err := pc.traverse(rs); err != nil {
			return nil, err
		}
		sn := rs.target()
		if sn == nil {
			if legacy {
				return nil, nil
			}
			return nil, ipc.Errorf(ipc.ClassFileNotFound, "rename source %s is not found.", src)
		}
		if sn.parent == nil {
			if legacy {
				return nil, nil
			}
			return nil, ipc.Errorf(ipc.ClassIOException, "rename source cannot be the root")
		}
		target = dst
		rd := s.ns.resolve(target)
		if legacy {
			if dn := rd.target(); dn != nil && dn.isDir && dn != sn {
				target = path.Join(dst, sn.name)
				rd = s.ns.resolve(target)
			}
		}
		if err := pc.traverse(rd); err != nil {
			return nil, err
		}
		if src == target {
			if legacy {
				ok = true // renaming a file to itself succeeds
				return nil, nil
			}
			return nil, ipc.Errorf(ipc.ClassFileAlreadyExists, "The source %s and destination %s are the same", src, target)
		}
		if strings.HasPrefix(target, src+"/") {
			if legacy {
				return nil, nil
			}
			return nil, ipc.Errorf(ipc.ClassIOException, "Cannot rename %s to its subdirectory %s", src, target)
		}
		dn := rd.target()
		replaced := false
		if dn != nil {
			if legacy || !overwrite {
				if legacy {
					return nil, nil
				}
				return nil, ipc.Errorf(ipc.ClassFileAlreadyExists, "rename destination %s already exists", target)
			}
			if dn.isDir != sn.isDir {
				kind := "a directory"
				if !dn.isDir {
					kind = "a file"
				}
				return nil, ipc.Errorf(ipc.ClassIOException, "Source %s and destination %s must both be directories or files (destination is %s)", src, target, kind)
			}
			if dn.isDir && len(dn.children) > 0 {
				return nil, ipc.Errorf(ipc.ClassIOException, "rename destination directory is not empty: %s", target)
			}
			if err := pc.sticky(dn.parent, dn); err != nil {
				return nil, err
			}
			replaced = true
		}
		dparent := rd.parent()
		if dparent == nil && !replaced {
			if legacy {
				return nil, nil
			}
			if !rd.lastExisting().isDir {
				return nil, ipc.Errorf(ipc.ClassParentNotDirectory, "rename destination parent %s is a file.", rd.lastExisting().path())
			}
			return nil, ipc.Errorf(ipc.ClassFileNotFound, "rename destination parent %s not found.", path.Dir(target))
		}
		if replaced {
			dparent = dn.parent
		}
		if !dparent.isDir {
			if legacy {
				return nil, nil
			}
			return nil, ipc.Errorf(ipc.ClassParentNotDirectory, "rename destination parent %s is a file.", dparent.path())
		}
		if err := pc.check(sn.parent, accessWX); err != nil {
			return nil, err
		}
		if err := pc.sticky(sn.parent, sn); err != nil {
			return nil, err
		}
		if err := pc.check(dparent, accessWX); err != nil {
			return nil, err
		}
		if !replaced && dparent != sn.parent {
			if err := s.checkDirItems(dparent); err != nil {
				return nil, err
			}
		}
		moved = s.openFilesUnder(sn)
		ok = true
		return []*namenodepb.EditOp{{Op: &namenodepb.EditOp_Rename{Rename: &namenodepb.OpRename{
			Src: proto.String(src), Dst: proto.String(target), Mtime: proto.Int64(nowMillis(s.now())), Overwrite: proto.Bool(replaced),
		}}}}, nil
	})
	if err == nil && len(moved) > 0 {
		s.mu.Lock()
		for _, h := range moved {
			parts := strings.SplitN(h, "\x00", 2)
			s.leases.renamed(parts[0], parts[1], target+strings.TrimPrefix(parts[1], src))
		}
		s.mu.Unlock()
	}
	return ok, err
}

// setAttr runs a single-inode attribute change: resolve, traverse, check,
// then log the op that build returns.
func (s *Namesystem) setAttr(ctx context.Context, p string, check func(pc permCheck, n *inode) error, build func(n *inode) *namenodepb.EditOp) error {
	if err := s.checkPath(p); err != nil {
		return err
	}
	pc := s.checker(ctx)
	return s.mutate(ctx, func() ([]*namenodepb.EditOp, error) {
		r := s.ns.resolve(p)
		if err := pc.traverse(r); err != nil {
			return nil, err
		}
		n := r.target()
		if n == nil {
			return nil, notFound(p)
		}
		if err := check(pc, n); err != nil {
			return nil, err
		}
		op := build(n)
		if op == nil {
			return nil, nil
		}
		return []*namenodepb.EditOp{op}, nil
	})
}

// SetPermission sets p's mode bits (0o7777).
func (s *Namesystem) SetPermission(ctx context.Context, p string, mode uint16) error {
	return s.setAttr(ctx, p, permCheck.owner, func(n *inode) *namenodepb.EditOp {
		return &namenodepb.EditOp{Op: &namenodepb.EditOp_SetPermission{SetPermission: &namenodepb.OpSetPermission{
			Path: proto.String(p), Mode: proto.Uint32(uint32(mode & 0o7777)),
		}}}
	})
}

// SetOwner changes owner and/or group ("" leaves one unchanged). Only the
// superuser may change the owner; an owner may change the group to one of
// their own groups.
func (s *Namesystem) SetOwner(ctx context.Context, p, owner, group string) error {
	if owner == "" && group == "" {
		return ipc.Errorf(ipc.ClassIllegalArgument, "Both owner and group are empty: %s", p)
	}
	check := func(pc permCheck, n *inode) error {
		if err := pc.owner(n); err != nil {
			return err
		}
		if !pc.enabled || pc.p.superuser {
			return nil
		}
		if owner != "" && owner != n.owner {
			return ipc.Errorf(ipc.ClassAccessControl, "User %s is not a super user (non-super user cannot change owner).", pc.p.user)
		}
		if group != "" && !pc.p.inGroup(group) {
			return ipc.Errorf(ipc.ClassAccessControl, "User %s does not belong to %s", pc.p.user, group)
		}
		return nil
	}
	return s.setAttr(ctx, p, check, func(n *inode) *namenodepb.EditOp {
		o := &namenodepb.OpSetOwner{Path: proto.String(p)}
		if owner != "" {
			o.Owner = proto.String(owner)
		}
		if group != "" {
			o.Group = proto.String(group)
		}
		return &namenodepb.EditOp{Op: &namenodepb.EditOp_SetOwner{SetOwner: o}}
	})
}

// SetTimes sets modification and access times in ms; -1 leaves one as is.
func (s *Namesystem) SetTimes(ctx context.Context, p string, mtime, atime int64) error {
	check := func(pc permCheck, n *inode) error {
		if pc.has(n, accessWrite) {
			return nil
		}
		return pc.owner(n)
	}
	return s.setAttr(ctx, p, check, func(n *inode) *namenodepb.EditOp {
		return &namenodepb.EditOp{Op: &namenodepb.EditOp_SetTimes{SetTimes: &namenodepb.OpSetTimes{
			Path: proto.String(p), Mtime: proto.Int64(mtime), Atime: proto.Int64(atime),
		}}}
	})
}

// SetReplication changes a file's target replication; it returns false for
// a directory, as HDFS does.
func (s *Namesystem) SetReplication(ctx context.Context, p string, repl int) (bool, error) {
	if repl < 1 || repl > s.cfg.maxReplication {
		return false, ipc.Errorf(ipc.ClassIOException, "Requested replication factor of %d is out of range [1, %d] for %s", repl, s.cfg.maxReplication, p)
	}
	isFile := false
	err := s.setAttr(ctx, p, func(pc permCheck, n *inode) error { return pc.check(n, accessWrite) }, func(n *inode) *namenodepb.EditOp {
		if n.isDir {
			return nil
		}
		isFile = true
		return &namenodepb.EditOp{Op: &namenodepb.EditOp_SetReplication{SetReplication: &namenodepb.OpSetReplication{
			Path: proto.String(p), Replication: proto.Uint32(uint32(repl)),
		}}}
	})
	return isFile, err
}

// SetStoragePolicy sets (name != "") or unsets (name == "") p's policy.
func (s *Namesystem) SetStoragePolicy(ctx context.Context, p, name string) error {
	var id uint8
	if name != "" {
		pol, ok := storage.ByName(name)
		if !ok {
			return ipc.Errorf(ipc.ClassIllegalArgument, "Cannot find a block policy with the name %s", name)
		}
		id = pol.ID
	}
	return s.setAttr(ctx, p, func(pc permCheck, n *inode) error { return pc.check(n, accessWrite) }, func(n *inode) *namenodepb.EditOp {
		return &namenodepb.EditOp{Op: &namenodepb.EditOp_SetStoragePolicy{SetStoragePolicy: &namenodepb.OpSetStoragePolicy{
			Path: proto.String(p), Policy: proto.Uint32(uint32(id)),
		}}}
	})
}

// StoragePolicy returns the effective policy of p: its own, else the
// nearest ancestor's, else the default (HOT).
func (s *Namesystem) StoragePolicy(ctx context.Context, p string) (storage.Policy, error) {
	if err := s.checkPath(p); err != nil {
		return storage.Policy{}, err
	}
	pc := s.checker(ctx)
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.ns.resolve(p)
	if err := pc.traverse(r); err != nil {
		return storage.Policy{}, err
	}
	n := r.target()
	if n == nil {
		return storage.Policy{}, notFound(p)
	}
	pol, _ := storage.ByID(effectivePolicy(n))
	return pol, nil
}

func effectivePolicy(n *inode) uint8 {
	for x := n; x != nil; x = x.parent {
		if x.storagePolicy != storage.Unspecified {
			return x.storagePolicy
		}
	}
	return storage.DefaultID
}

// Summary is a ContentSummary.
type Summary struct {
	Length, Files, Dirs, SpaceConsumed int64
}

// ContentSummary counts everything under p.
func (s *Namesystem) ContentSummary(ctx context.Context, p string) (Summary, error) {
	if err := s.checkPath(p); err != nil {
		return Summary{}, err
	}
	pc := s.checker(ctx)
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.ns.resolve(p)
	if err := pc.traverse(r); err != nil {
		return Summary{}, err
	}
	n := r.target()
	if n == nil {
		return Summary{}, ipc.Errorf(ipc.ClassFileNotFound, "File does not exist: %s", p)
	}
	if err := pc.subtree(n, accessRX, false); err != nil {
		return Summary{}, err
	}
	var sum Summary
	var walk func(*inode)
	walk = func(x *inode) {
		if x.isDir {
			sum.Dirs++
			for _, c := range x.children {
				walk(c)
			}
			return
		}
		sum.Files++
		l := x.length()
		sum.Length += l
		sum.SpaceConsumed += l * int64(x.replication)
	}
	walk(n)
	return sum, nil
}

// Counts returns the number of files and directories.
func (s *Namesystem) Counts() (files, dirs int64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.ns.fileCount, s.ns.dirCount
}

// FileStatus is what getFileInfo and getListing report for an inode.
type FileStatus struct {
	Name          string
	IsDir         bool
	Length        int64
	Mode          uint16
	Owner, Group  string
	Mtime, Atime  int64
	Replication   uint16
	BlockSize     uint64
	FileID        uint64
	Children      int
	StoragePolicy uint8
}

func (s *Namesystem) status(n *inode) FileStatus {
	st := FileStatus{
		Name: n.name, IsDir: n.isDir, Mode: n.mode, Owner: n.owner, Group: n.group,
		Mtime: n.mtime, Atime: n.atime, FileID: n.id, StoragePolicy: n.storagePolicy, Children: -1,
	}
	if n.isDir {
		st.Children = len(n.children)
	} else {
		st.Length = n.length()
		st.Replication = n.replication
		st.BlockSize = n.blockSize
	}
	return st
}

func (s *Namesystem) String() string {
	f, d := s.Counts()
	return fmt.Sprintf("Namesystem{files=%d dirs=%d}", f, d)
}

// SafeMode performs a dfsadmin -safemode action and reports whether safe
// mode is on afterwards. Entering and leaving need the superuser.
func (s *Namesystem) SafeMode(ctx context.Context, action hdfspb.SafeModeActionProto) (bool, error) {
	if action != hdfspb.SafeModeActionProto_SAFEMODE_GET {
		if err := s.checker(ctx).superuser("setSafeMode"); err != nil {
			return false, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch action {
	case hdfspb.SafeModeActionProto_SAFEMODE_ENTER:
		s.safe = true
	case hdfspb.SafeModeActionProto_SAFEMODE_LEAVE, hdfspb.SafeModeActionProto_SAFEMODE_FORCE_EXIT:
		s.safe = false
		s.startupSafe = false
	}
	return s.safe || s.startupSafe, nil
}

// InSafeMode reports whether the namespace is read-only.
func (s *Namesystem) InSafeMode() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.safe || s.startupSafe
}

// CheckAccess returns an AccessControlException unless the caller has
// access a to p.
func (s *Namesystem) CheckAccess(ctx context.Context, p string, a access) error {
	if err := s.checkPath(p); err != nil {
		return err
	}
	pc := s.checker(ctx)
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.ns.resolve(p)
	if err := pc.traverse(r); err != nil {
		return err
	}
	n := r.target()
	if n == nil {
		return notFound(p)
	}
	return pc.check(n, a&accessAll)
}
