package namenode

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/topology"
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
	maintenanceMinRepl    int

	// retryCacheEntries bounds the retry cache, 0 turning it off;
	// retryCacheExpiry is how long an entry is kept (retrycache.go).
	retryCacheEntries int
	retryCacheExpiry  time.Duration

	// Extended attributes and ACLs (ns_xattr.go, ns_acl.go): the
	// switches are "disabled" so that the zero value has them on, as
	// Hadoop's defaults do.
	xattrsDisabled bool
	aclsDisabled   bool
	// noACLInheritance: the client's masked permission applies under a
	// default ACL too (dfs.namenode.posix.acl.inheritance.enabled=false).
	noACLInheritance bool
	xattrLimits      namespace.XAttrLimits
	// Snapshot bounds (ns_snapshot.go): entries per diff listing reply, inodes one createSnapshot copies and all snapshots
	// hold; maxReplyBytes bounds a whole diff report's reply. Zero means
	// the default.
	snapshotDiffLimit      int
	snapshotMaxCopied      int
	snapshotMaxTotalInodes int
	maxReplyBytes          int
	// delegation: the delegation token setup (delegation.go).
	delegation DelegationConfig
}

// Namesystem is Hadoop's FSNamesystem: the namespace (package namespace)
// and block management (package blockmgmt) composed under one lock, with
// the rules that span them: permission checks, limits, leases, and logging
// of every mutation before it is acknowledged.
//
// Locking: mu guards tree (with its block map), bm (replicas,
// DataNodes, replication, recovery, safe mode), leases and failed. Reads
// hold mu.RLock; mutations hold mu.Lock while they check, apply and append
// their edits, and release it before waiting for the journal's sync (so
// syncs batch). mu is the only lock of the Namesystem's state. Lock order:
// NameNode.cpMu (checkpoints) before mu, mu before the journal's own lock
// (Append is called with mu held, Sync without it). The group cache has
// its own mutex and is consulted by checker before an operation takes mu;
// blockmgmt's random source has one too, taken with mu held. cfg, log, groups, now and blockPoolID are set
// before the NameNode serves and only read afterwards; ops is atomic.
type Namesystem struct {
	cfg    nsConfig
	log    *slog.Logger
	groups *namespace.GroupCache
	now    func() time.Time

	mu      sync.RWMutex
	tree    *namespace.Tree
	bm      *blockmgmt.Manager
	journal journal
	leases  *namespace.LeaseManager
	failed  error // set when the journal failed: no more mutations

	retry *retryCache // nil when off; has its own (leaf) lock

	blockPoolID string // set once at start, read-only after

	ops atomic.Int64 // mutations logged, for metrics

	// syncs counts the mutations between their append and the end of
	// their sync, whether their caller still waits or not.
	syncs sync.WaitGroup

	// HA (ha.go), guarded by mu. applied is the txid of the last edit in
	// the namespace, committed the last one known committed by the Raft
	// group (equal without HA, and on a standby); epoch marks this
	// activation's proposals; standby refuses mutations; dirty asks for a
	// rebuild from the committed log; rebuilds counts them.
	ha        *haNode
	applied   uint64
	committed uint64
	epoch     uint64
	standby   bool
	dirty     bool
	rebuilds  int
	// rpcEdits are the recent committed edits with rpc ids, which
	// snapshots carry for the retry cache (retrycache.go).
	rpcEdits []rpcEdit
	// hosts, hostsFiles and topo: DataNode membership and racks
	// (nodes.go); hosts is guarded by mu.
	hosts      *blockmgmt.Hosts
	hostsFiles blockmgmt.HostsFiles
	topo       topology.Mapping
}

func newNamesystem(cfg nsConfig, j journal, logger *slog.Logger) *Namesystem {
	blocks := blockmgmt.NewBlockMap()
	s := &Namesystem{
		cfg:     cfg,
		log:     logger,
		groups:  namespace.NewGroupCache(5 * time.Minute),
		now:     time.Now,
		tree:    namespace.New(cfg.superuser, cfg.supergroup, blocks),
		journal: j,
		leases:  namespace.NewLeaseManager(),
	}
	s.bm = s.newBlockManager(blocks)
	if cfg.retryCacheEntries > 0 {
		s.retry = newRetryCache(cfg.retryCacheEntries, cfg.retryCacheExpiry, func() time.Time { return s.now() })
	}
	return s
}

// newBlockManager returns block management for blocks. The Manager reads
// the Namesystem's clock, so that replacing it (in tests) moves both.
func (s *Namesystem) newBlockManager(blocks *blockmgmt.BlockMap) *blockmgmt.Manager {
	cfg := s.cfg
	bm := blockmgmt.New(blockmgmt.Config{
		MinReplication: cfg.minReplication, HeartbeatExpiry: cfg.heartbeatExpiry,
		MaxReplicationStreams: cfg.maxReplicationStreams, ReplicationTimeout: cfg.replicationTimeout,
		SafeModeThreshold: cfg.safeModeThreshold, SafeModeExtension: cfg.safeModeExtension,
		MaintenanceMinReplication: cfg.maintenanceMinRepl,
	}, blocks, blockmgmt.Options{Logger: s.log, Now: func() time.Time { return s.now() }, ClientRack: s.clientRack})
	if s.hosts != nil {
		bm.SetHosts(s.hosts)
	}
	return bm
}

func (s *Namesystem) principal(ctx context.Context) *namespace.Principal {
	c, ok := ipc.CallerFrom(ctx)
	name := s.cfg.superuser
	if ok {
		name = c.User
	}
	p := &namespace.Principal{User: name}
	if name == s.cfg.superuser {
		p.Superuser = true
		return p
	}
	p.Groups = s.groups.Groups(name)
	p.Superuser = p.InGroup(s.cfg.supergroup)
	return p
}

// callerName is the caller's user name (the superuser for in-process
// calls without one).
func (s *Namesystem) callerName(ctx context.Context) string {
	if c, ok := ipc.CallerFrom(ctx); ok {
		return c.User
	}
	return s.cfg.superuser
}

func (s *Namesystem) checker(ctx context.Context) namespace.Checker {
	return namespace.Checker{P: s.principal(ctx), Enabled: s.cfg.permissions}
}

func (s *Namesystem) nowMillis() int64 { return s.now().UnixMilli() }

// mutate runs f under the write lock; f checks and returns the ops to
// apply and log. mutate applies them, appends them to the journal, releases
// the lock and waits for the journal to make them durable before
// returning: a nil error means the change survives a crash.
func (s *Namesystem) mutate(ctx context.Context, f func() ([]namespace.Edit, error)) error {
	return s.mutateThen(ctx, func() ([]namespace.Edit, func(), error) {
		ops, err := f()
		return ops, nil, err
	})
}

// mutateThen is mutate where f may also return a function to run under the
// lock after its ops are applied (to set in-memory state on new objects).
func (s *Namesystem) mutateThen(ctx context.Context, f func() ([]namespace.Edit, func(), error)) error {
	s.mu.Lock()
	if s.standby {
		s.mu.Unlock()
		return standbyError("WRITE")
	}
	if s.failed != nil {
		s.mu.Unlock()
		return ipc.Errorf(ipc.ClassIOException, "NameNode edit log failed: %v", s.failed)
	}
	if s.bm.InSafeMode() {
		startup := s.bm.InStartupSafeMode()
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
	if err := s.checkSnapshotEdits(ops); err != nil {
		s.mu.Unlock()
		return err
	}
	ops = withRPCIDs(ctx, ops)
	var txid uint64
	for _, op := range ops {
		rec, err := op.Marshal()
		if err != nil {
			s.mu.Unlock()
			return err
		}
		if err := s.tree.Apply(op); err != nil {
			// The checks in f passed, so this is a bug; the namespace may
			// be half-changed and must not be logged further.
			s.failed = err
			s.mu.Unlock()
			s.log.Error("namenode: applying a checked edit failed", "err", err)
			return ipc.Errorf(ipc.ClassIOException, "internal error: %v", err)
		}
		if txid, err = s.journal.Append(rec); errors.Is(err, errNotActive) {
			// Applied but not logged (cannot happen while mu orders role
			// changes; kept safe): rebuild before this state is used.
			s.dirty = true
			s.mu.Unlock()
			return standbyError("WRITE")
		} else if err != nil {
			// Applied in memory but not logged: stop accepting changes.
			s.failed = err
			s.mu.Unlock()
			s.log.Error("namenode: edit log append failed; refusing further mutations", "err", err)
			return ipc.Errorf(ipc.ClassIOException, "edit log append failed: %v", err)
		}
	}
	s.applied = txid
	s.ops.Add(int64(len(ops)))
	if then != nil {
		then()
	}
	s.bm.InvalidateRemoved()
	s.syncs.Add(1)
	s.mu.Unlock()
	err = s.journal.Sync(ctx, txid)
	if err != nil && ctx.Err() != nil && errors.Is(err, ctx.Err()) {
		// The caller went away (its connection closed, or it timed out)
		// while its edits waited for a group commit. They are applied
		// and appended, so they must still become durable: that is the
		// journal's business, not the caller's, and the caller's
		// cancellation says nothing about the disk. Sync in the
		// background; only a failure there stops mutations.
		go func() {
			defer s.syncs.Done()
			s.syncOrFail(context.Background(), txid)
		}()
		return err
	}
	defer s.syncs.Done()
	if errors.Is(err, errNotActive) {
		// Not a journal failure: leadership moved while the edit was in
		// flight. The client retries on the new active.
		return standbyError("WRITE")
	}
	if err != nil {
		s.setFailed(err)
		return s.journalError(err)
	}
	noteSynced(ctx, txid)
	return nil
}

// syncOrFail waits for the journal to make txid durable and, when it
// cannot, stops mutations.
func (s *Namesystem) syncOrFail(ctx context.Context, txid uint64) {
	if err := s.journal.Sync(ctx, txid); err != nil && !errors.Is(err, errNotActive) {
		s.setFailed(err)
	}
}

// setFailed records a journal failure: from now on every mutation is
// refused with it.
func (s *Namesystem) setFailed(err error) {
	s.mu.Lock()
	first := s.failed == nil
	if first {
		s.failed = err
	}
	s.mu.Unlock()
	if first {
		s.log.Error("namenode: edit log sync failed; refusing further mutations", "err", err)
	}
}

// journalError is what a caller whose edits could not be synced is told.
func (s *Namesystem) journalError(err error) error {
	return ipc.Errorf(ipc.ClassIOException, "edit log sync failed: %v", err)
}

// waitSyncs waits for the mutations still syncing, including those whose
// callers went away. Call it before closing the journal.
func (s *Namesystem) waitSyncs() { s.syncs.Wait() }

// imageAtRoll calls roll (the edit log's Roll) and writes the image of the
// namespace as it stands at the roll's transaction id, both under the
// write lock, so that no edit falls between them.
func (s *Namesystem) imageAtRoll(roll func() (uint64, error), w io.Writer) (uint64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	txid, err := roll()
	if err != nil {
		return 0, err
	}
	return txid, s.tree.WriteImage(w)
}

// journalFailed returns the journal error that stopped mutations, if any.
func (s *Namesystem) journalFailed() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.failed
}

// checkPath validates p as namespace.CheckPath does, with the configured
// component length limit.
func (s *Namesystem) checkPath(p string) error {
	return namespace.CheckPath(p, s.cfg.maxComponentLength)
}

func notFound(p string) error {
	return ipc.Errorf(ipc.ClassFileNotFound, "File does not exist: %s", p)
}

// resolveTarget returns p's inode once pc may traverse to it;
// FileNotFound if it does not exist. s.mu must be held.
func (s *Namesystem) resolveTarget(pc namespace.Checker, p string) (*namespace.Inode, error) {
	r := s.tree.Resolve(p)
	if err := pc.Traverse(r); err != nil {
		return nil, err
	}
	if n := r.Target(); n != nil {
		return n, nil
	}
	return nil, notFound(p)
}

// resolveExisting is resolveTarget with checkParents' walk checks.
func (s *Namesystem) resolveExisting(pc namespace.Checker, p string) (*namespace.Inode, error) {
	r := s.tree.Resolve(p)
	if err := s.checkParents(pc, r); err != nil {
		return nil, err
	}
	if n := r.Target(); n != nil {
		return n, nil
	}
	return nil, notFound(p)
}

// checkParents returns an error when the path cannot be walked: an
// ancestor is a file (ParentNotDirectory) or traverse permission is missing.
func (s *Namesystem) checkParents(pc namespace.Checker, r *namespace.Resolved) error {
	if err := pc.Traverse(r); err != nil {
		return err
	}
	last := r.LastExisting()
	if !r.Exists() && !last.IsDir {
		return ipc.Errorf(ipc.ClassParentNotDirectory, "%s (is not a directory)", last.Path())
	}
	return nil
}

func (s *Namesystem) checkDirItems(dir *namespace.Inode) error {
	if len(dir.Children) >= s.cfg.maxDirItems {
		return ipc.Errorf(ipc.ClassMaxDirectoryItems, "The directory item limit of %s is exceeded: limit=%d items=%d",
			dir.Path(), s.cfg.maxDirItems, len(dir.Children))
	}
	return nil
}

func (s *Namesystem) String() string {
	f, d := s.Counts()
	return fmt.Sprintf("Namesystem{files=%d dirs=%d}", f, d)
}

// SafeModeAction is a dfsadmin -safemode action.
type SafeModeAction int

const (
	SafeModeGet SafeModeAction = iota
	SafeModeEnter
	SafeModeLeave // also Hadoop's forceExit
)

// SafeMode performs a dfsadmin -safemode action and reports whether safe
// mode is on afterwards. Entering and leaving need the superuser.
func (s *Namesystem) SafeMode(ctx context.Context, action SafeModeAction) (bool, error) {
	if action != SafeModeGet {
		if err := s.checker(ctx).Superuser("setSafeMode"); err != nil {
			return false, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch action {
	case SafeModeEnter:
		s.bm.EnterSafeMode()
	case SafeModeLeave:
		s.bm.LeaveSafeMode()
	}
	return s.bm.InSafeMode(), nil
}

// InSafeMode reports whether the namespace is read-only.
func (s *Namesystem) InSafeMode() bool {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.bm.InSafeMode()
}

// SafeModeTip describes the safe mode, as dfsadmin shows it.
func (s *Namesystem) SafeModeTip() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.bm.SafeModeTip()
}
