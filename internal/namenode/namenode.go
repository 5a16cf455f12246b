package namenode

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/namenode/editlog"
	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/security"
)

// Format initialises every storage directory (cfg.StorageDirs) with one
// empty namespace whose root belongs to cfg.Superuser. It refuses if any
// directory is formatted, unless force.
func Format(cfg Config, force bool) (editlog.Version, error) {
	if err := cfg.Validate(); err != nil {
		return editlog.Version{}, err
	}
	v, err := editlog.FormatDirs(cfg.FS, cfg.StorageDirs(), force)
	if err != nil {
		return v, err
	}
	l, err := editlog.OpenDirs(cfg.StorageDirs(), editlog.Options{Logger: cfg.Logger, FS: cfg.FS})
	if err != nil {
		return v, err
	}
	defer l.Close()
	if err := l.Load(func(uint64, io.Reader) error { return nil }, func(uint64, []byte) error { return nil }); err != nil {
		return v, err
	}
	ns := namespace.New(cfg.Superuser, cfg.SuperGroup, blockmgmt.NewBlockMap())
	if err := l.SaveImage(l.LastTxID(), ns.WriteImage); err != nil {
		return v, err
	}
	if cfg.HA != nil {
		return v, formatRaft(cfg, force)
	}
	return v, nil
}

// NameNode is the HDFS NameNode daemon: the namespace behind a Hadoop IPC
// server speaking ClientProtocol, and an HTTP server for status and
// metrics. Lifecycle: New (loads storage) → Start (listens) → Close.
type NameNode struct {
	cfg  Config
	log  *slog.Logger
	ns   *Namesystem
	edit *editlog.Log

	trash *trashEmptier // the emptier goroutine's (trash.go)
	// emptyTrash replaces Namesystem.EmptyTrash in tests; set before Start.
	emptyTrash func(ctx context.Context, now time.Time, keep time.Duration) error

	// tokens mints block access tokens and WebHDFS redirect tokens; its
	// keys go to DataNodes (see keys.go).
	tokens *blocktoken.Manager
	keys   keyExports

	rpc     *ipc.Server
	rpcLn   net.Listener
	httpSrv *http.Server
	httpLn  net.Listener

	peerHTTP peerHTTP // calls to the other members' haPathPrefix endpoints

	started   time.Time
	ready     chan struct{}
	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
	closeErr  error

	cpMu        sync.Mutex
	lastCPTx    uint64
	lastCPAt    time.Time
	checkpoints int

	// ha is the Raft group's member when a nameservice is configured
	// (ha.go); nil for a single NameNode.
	ha *haNode

	// login is the NameNode's Kerberos login in secure mode (secure.go),
	// for its calls to the other members; nil in simple mode.
	login *security.Login
}

// New validates cfg, opens the storage directory, loads the newest image
// and replays the edit log. The NameNode does not listen until Start.
func New(cfg Config) (*NameNode, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	l, err := editlog.OpenDirs(cfg.StorageDirs(), editlog.Options{Logger: cfg.Logger, Recover: cfg.Recover, FS: cfg.FS})
	if err != nil {
		return nil, err
	}
	ns := newNamesystem(nsConfig{
		superuser: cfg.Superuser, supergroup: cfg.SuperGroup, permissions: cfg.Permissions,
		maxComponentLength: cfg.MaxComponentLength, maxDirItems: cfg.MaxDirItems,
		defaultReplication: cfg.DefaultReplication, defaultBlockSize: cfg.DefaultBlockSize,
		minBlockSize: cfg.MinBlockSize, maxReplication: cfg.MaxReplication, listLimit: cfg.ListLimit,
		leaseSoftLimit: cfg.LeaseSoftLimit, leaseHardLimit: cfg.LeaseHardLimit,
		minReplication: cfg.MinReplication, heartbeatExpiry: cfg.HeartbeatExpiry,
		maxReplicationStreams: cfg.MaxReplicationStreams, replicationTimeout: cfg.ReplicationTimeout,
		safeModeThreshold: cfg.SafeModeThreshold, safeModeExtension: cfg.SafeModeExtension,
		retryCacheEntries: cfg.retryCacheEntries(), retryCacheExpiry: cfg.RetryCacheExpiry,
		xattrsDisabled: !cfg.XAttrsEnabled, aclsDisabled: !cfg.ACLsEnabled, noACLInheritance: !cfg.ACLInheritance,
		xattrLimits:        namespace.XAttrLimits{PerInode: cfg.MaxXAttrsPerInode, Size: cfg.MaxXAttrSize},
		maintenanceMinRepl: cfg.Nodes.MaintenanceMinReplication,
		snapshotDiffLimit:  cfg.SnapshotDiffLimit, snapshotMaxCopied: cfg.SnapshotMaxCopied,
		snapshotMaxTotalInodes: cfg.SnapshotMaxTotalInodes, maxReplyBytes: cfg.MaxDataLength,
		delegation: cfg.Delegation,
	}, l, cfg.Logger)
	if err := ns.initNodes(cfg.Nodes); err != nil {
		l.Close()
		return nil, err
	}
	ns.blockPoolID = l.Version().BlockPoolID
	if cfg.HA == nil {
		start := time.Now()
		replayed, err := ns.load(l)
		if err != nil {
			l.Close()
			return nil, err
		}
		files, dirs := ns.Counts()
		cfg.Logger.Info("namenode: namespace loaded", "dir", cfg.NameDir, "files", files, "directories", dirs,
			"edits_replayed", replayed, "last_txid", l.LastTxID(), "took", time.Since(start).Round(time.Millisecond))
	} else {
		// The Raft log is the edit log: Start opens the member, which
		// restores the newest snapshot and applies the committed entries.
		// Until it wins an election the NameNode is a standby.
		ns.standby = true
		ns.bm.SetStandby(true)
		ns.bm.StartupSafeMode()
	}
	tokens, err := blocktoken.NewMaster(blocktoken.Config{
		BlockPoolID: ns.blockPoolID, Enabled: cfg.BlockTokens,
		KeyUpdateInterval: cfg.BlockKeyUpdateInterval, TokenLifetime: cfg.BlockTokenLifetime,
		Now: func() time.Time { return ns.now() },
	})
	if err != nil {
		l.Close()
		return nil, fmt.Errorf("namenode: block keys: %w", err)
	}
	nn := &NameNode{
		cfg: cfg, log: cfg.Logger, ns: ns, edit: l, tokens: tokens,
		ready: make(chan struct{}), stop: make(chan struct{}),
		lastCPTx: l.LastTxID(), lastCPAt: time.Now(),
	}
	if cfg.HA != nil {
		nn.ha = newHANode(nn, *cfg.HA)
		ns.ha = nn.ha
		ns.journal = nn.ha.journal
	}
	rpcCfg := cfg.IPC
	rpcCfg.MaxDataLength = cfg.MaxDataLength
	rpcCfg.Logger = cfg.Logger
	if err := nn.secureRPC(&rpcCfg); err != nil {
		l.Close()
		return nil, err
	}
	nn.rpc = ipc.NewServer(rpcCfg)
	cp := &clientProtocol{nn: nn, ns: ns}
	nn.rpc.Register(ClientProtocolName, nn.inlineReads(nn.withHA(withInodePaths(ns, withSnapshotPaths(ns, cp.methods())))))
	if nn.ha != nil {
		nn.rpc.Register(HAServiceProtocolName, nn.ha.methods())
		nn.rpc.Register(RaftAdminProtocolName, nn.ha.adminMethods())
	}
	dp := &datanodeProtocol{nn: nn, ns: ns}
	nn.rpc.Register(DatanodeProtocolName, dp.methods())
	np := &namenodeProtocol{nn: nn, ns: ns}
	nn.rpc.Register(NamenodeProtocolName, nn.withHA(np.methods()))
	return nn, nil
}

// Namesystem returns the namespace, for in-process callers and tests.
func (n *NameNode) Namesystem() *Namesystem { return n.ns }

// Start listens on the RPC and HTTP addresses and starts serving.
func (n *NameNode) Start() error {
	ln, err := net.Listen("tcp", n.cfg.RPCAddr)
	if err != nil {
		return fmt.Errorf("namenode: RPC address %s: %w", n.cfg.RPCAddr, err)
	}
	if n.ha != nil {
		if ln, err = n.ha.start(ln); err != nil {
			return fmt.Errorf("namenode: starting the Raft member: %w", err)
		}
	}
	n.rpcLn = ln
	n.started = time.Now() // before the HTTP server, whose pages show it
	if n.cfg.HTTPAddr != "" {
		auth, webAuth, err := n.httpFilters()
		if err != nil {
			ln.Close()
			return fmt.Errorf("namenode: HTTP authentication: %w", err)
		}
		hl, err := net.Listen("tcp", n.cfg.HTTPAddr)
		if err != nil {
			ln.Close()
			return fmt.Errorf("namenode: HTTP address %s: %w", n.cfg.HTTPAddr, err)
		}
		n.httpLn = hl
		n.httpSrv = &http.Server{
			Handler:           n.httpHandler(auth, webAuth),
			ReadHeaderTimeout: httpHeaderTimeout,
			ReadTimeout:       httpReadTimeout,
			WriteTimeout:      httpWriteTimeout,
			IdleTimeout:       n.cfg.HTTPIdleTimeout,
			ErrorLog:          slog.NewLogLogger(n.log.Handler(), slog.LevelDebug),
		}
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			if err := n.httpSrv.Serve(hl); err != nil && !errors.Is(err, http.ErrServerClosed) {
				n.log.Error("namenode: HTTP server", "err", err)
			}
		}()
	}
	n.wg.Add(4)
	go func() {
		defer n.wg.Done()
		if err := n.rpc.Serve(ln); err != nil {
			n.log.Error("namenode: RPC server", "err", err)
		}
	}()
	go func() {
		defer n.wg.Done()
		n.monitor()
	}()
	go func() {
		defer n.wg.Done()
		n.emptierLoop(n.monitorTick())
	}()
	go func() {
		defer n.wg.Done()
		n.keyRollLoop() // delegation.go
	}()
	n.log.Info("namenode: serving", "rpc", n.RPCAddr(), "http", n.HTTPAddr())
	close(n.ready)
	return nil
}

// Ready is closed once Start has bound its listeners.
func (n *NameNode) Ready() <-chan struct{} { return n.ready }

// RPCAddr is the bound RPC address ("" before Start).
func (n *NameNode) RPCAddr() string {
	if n.rpcLn == nil {
		return ""
	}
	return n.rpcLn.Addr().String()
}

// HTTPAddr is the bound HTTP address ("" before Start or when disabled).
func (n *NameNode) HTTPAddr() string {
	if n.httpLn == nil {
		return ""
	}
	return n.httpLn.Addr().String()
}

// monitorTick is how often the monitor (and the trash emptier) wake.
func (n *NameNode) monitorTick() time.Duration {
	return min(time.Second, n.cfg.ReplicationInterval)
}

// monitor runs the periodic work: lease expiry and checkpoints. The trash
// emptier has its own goroutine (trash.go).
func (n *NameNode) monitor() {
	t := time.NewTicker(n.monitorTick())
	defer t.Stop()
	lastRepl := time.Time{}
	for {
		select {
		case <-n.stop:
			return
		case now := <-t.C:
			if now.Sub(lastRepl) >= n.cfg.ReplicationInterval && n.ServiceState() == HAActive {
				n.ns.blockMonitor(now)
				lastRepl = now
			}
		}
		n.rollBlockKeys()
		if n.ServiceState() != HAActive {
			continue
		}
		n.ns.expireLeases(context.Background())
		if n.ha != nil {
			continue // checkpoints are Raft snapshots
		}
		n.cpMu.Lock()
		pending := n.edit.LastTxID() - n.lastCPTx
		due := pending >= n.cfg.CheckpointTxns || (pending > 0 && time.Since(n.lastCPAt) >= n.cfg.CheckpointPeriod)
		n.cpMu.Unlock()
		if due {
			if err := n.checkpoint(); err != nil {
				n.log.Error("namenode: checkpoint failed", "err", err)
			}
		}
	}
}

// checkpoint saves an image of the namespace and lets the edit log drop
// the segments it covers.
func (n *NameNode) checkpoint() error {
	n.cpMu.Lock()
	defer n.cpMu.Unlock()
	start := time.Now()
	var buf bytes.Buffer
	txid, err := n.ns.imageAtRoll(n.edit.Roll, &buf)
	if err != nil {
		return err
	}
	if err := n.edit.SaveImage(txid, func(w io.Writer) error {
		_, err := w.Write(buf.Bytes())
		return err
	}); err != nil {
		return err
	}
	n.lastCPTx, n.lastCPAt = txid, time.Now()
	n.checkpoints++
	n.log.Info("namenode: checkpoint saved", "txid", txid, "bytes", buf.Len(), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// Checkpoint saves an image now (as after recovery, or before a backup).
func (n *NameNode) Checkpoint() error { return n.checkpoint() }

// Close stops serving, saves a checkpoint if the log grew since the last
// one, and closes the storage. Safe to call twice.
func (n *NameNode) Close() error {
	n.closeOnce.Do(func() {
		close(n.stop)
		n.rpc.Close()
		if n.httpSrv != nil {
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			n.httpSrv.Shutdown(ctx)
			cancel()
		}
		var errs []error
		if n.ha != nil && n.ha.node != nil {
			errs = append(errs, n.ha.node.Close())
			n.ha.mux.Close()
		}
		n.wg.Wait()
		n.peerHTTP.close()
		n.ns.waitSyncs()
		if n.ha == nil && n.ns.journalFailed() == nil && n.edit.LastTxID() > n.lastCPTx {
			errs = append(errs, n.checkpoint())
		}
		errs = append(errs, n.edit.Close())
		n.closeErr = errors.Join(errs...)
	})
	return n.closeErr
}

// load replaces ns's namespace with l's newest image and replays the edits
// logged after it, then sets up what the log does not hold: the startup
// safe mode (until DataNodes report the blocks) and the leases of files
// left open, so that they are recovered after the hard limit if nobody
// renews them. It returns the number of edits replayed.
func (s *Namesystem) load(l *editlog.Log) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	replayed := 0
	err := l.Load(func(txid uint64, r io.Reader) error {
		t, err := namespace.ReadImage(r, s.bm.Blocks())
		if err != nil {
			return err
		}
		s.tree = t
		return nil
	}, func(txid uint64, rec []byte) error {
		e, err := namespace.DecodeEdit(rec)
		if err != nil {
			return fmt.Errorf("namenode: edit %d does not decode: %w", txid, err)
		}
		replayed++
		if err := s.tree.Apply(e); err != nil {
			return fmt.Errorf("edit %d: %w", txid, err)
		}
		s.noteApplied(e)
		return nil
	})
	if err != nil {
		return replayed, err
	}
	s.bm.ForgetRemoved() // replayed deletions had no replicas yet
	s.bm.StartupSafeMode()
	now := s.now()
	s.tree.OpenFiles(func(n *namespace.Inode) { s.leases.Add(n.UC().ClientName, n.Path(), now) })
	return replayed, nil
}

// HAState is a NameNode's HA service state, Hadoop's HAServiceState.
type HAState int

const (
	HAActive HAState = iota
	HAStandby
	HAInitializing
)

func (s HAState) String() string {
	switch s {
	case HAActive:
		return "active"
	case HAStandby:
		return "standby"
	}
	return "initializing"
}

// ServiceState is the NameNode's HA state: always active without a
// nameservice; with one, active while it leads the Raft group.
func (n *NameNode) ServiceState() HAState {
	if n.ha == nil {
		return HAActive
	}
	return n.ha.serviceState()
}
