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
	"os"
	"os/user"
	"strings"
	"sync"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/namenode/editlog"
	"github.com/stratafs/strata/internal/namenode/namespace"
)

// Config configures a NameNode. DefaultConfig gives Hadoop's defaults;
// ConfigFrom reads the Hadoop keys named on each field.
type Config struct {
	// NameDir is the storage directory for the image and edit log
	// (dfs.namenode.name.dir; only the first entry is used).
	NameDir string
	// RPCAddr is host:port for client RPC (dfs.namenode.rpc-address,
	// default 127.0.0.1:8020); port 0 picks a free port.
	RPCAddr string
	// HTTPAddr is host:port of the web UI, JSON and /metrics
	// (dfs.namenode.http-address, default 127.0.0.1:9870); "" disables it.
	HTTPAddr string
	// Superuser is the user with every privilege: the user who starts the
	// NameNode, as in HDFS.
	Superuser string
	// SuperGroup's members are superusers too (dfs.permissions.superusergroup).
	SuperGroup string
	// Permissions turns permission checking on (dfs.permissions.enabled).
	Permissions bool
	// DefaultReplication and DefaultBlockSize apply when a client sends none
	// (dfs.replication, dfs.blocksize). MinBlockSize is
	// dfs.namenode.fs-limits.min-block-size; MaxReplication dfs.replication.max.
	DefaultReplication int
	DefaultBlockSize   int64
	MinBlockSize       int64
	MaxReplication     int
	// BytesPerChecksum and FileBufferSize are reported to clients in the
	// server defaults (dfs.bytes-per-checksum, io.file.buffer.size).
	BytesPerChecksum int
	FileBufferSize   int
	// MaxComponentLength and MaxDirItems are
	// dfs.namenode.fs-limits.max-component-length / max-directory-items.
	MaxComponentLength int
	MaxDirItems        int
	// ListLimit is the number of entries per getListing page (dfs.ls.limit).
	ListLimit int
	// CheckpointPeriod and CheckpointTxns decide when an image is saved
	// (dfs.namenode.checkpoint.period / .txns); one is also saved on Close.
	CheckpointPeriod time.Duration
	CheckpointTxns   uint64
	// LeaseSoftLimit lets another writer take over a file; past
	// LeaseHardLimit the NameNode closes it (HDFS: 60 s and 20 min).
	LeaseSoftLimit time.Duration
	LeaseHardLimit time.Duration
	// MaxDataLength bounds an RPC frame (ipc.maximum.data.length).
	MaxDataLength int
	// MinReplication is dfs.namenode.replication.min: good replicas a block
	// needs before its file can be closed (default 1).
	MinReplication int
	// HeartbeatInterval is dfs.heartbeat.interval (3 s), told to DataNodes;
	// a DataNode is dead after HeartbeatExpiry without one (HDFS: 2 ×
	// dfs.namenode.heartbeat.recheck-interval + 10 × heartbeat = 10.5 min).
	HeartbeatInterval time.Duration
	HeartbeatExpiry   time.Duration
	// ReplicationInterval is how often the replication monitor runs
	// (dfs.namenode.redundancy.interval.seconds, 3 s).
	ReplicationInterval time.Duration
	// MaxReplicationStreams bounds copies scheduled from one DataNode at a
	// time (dfs.namenode.replication.max-streams, 2); ReplicationTimeout
	// re-schedules a copy not reported done
	// (dfs.namenode.reconstruction.pending.timeout-sec, 5 min).
	MaxReplicationStreams int
	ReplicationTimeout    time.Duration
	// SafeModeThreshold and SafeModeExtension control the safe mode at
	// start: the fraction of blocks that must be reported
	// (dfs.namenode.safemode.threshold-pct, 0.999) and how long to wait
	// after that (dfs.namenode.safemode.extension, 30 s).
	SafeModeThreshold float64
	SafeModeExtension time.Duration
	// Recover truncates the in-progress edit log at its first damaged
	// record instead of refusing to start (Hadoop's namenode -recover).
	// Records after the damage are lost.
	Recover bool
	Logger  *slog.Logger
}

// DefaultConfig returns Hadoop's defaults with the current OS user as
// superuser and no storage directory.
func DefaultConfig() Config {
	return Config{
		RPCAddr: "127.0.0.1:8020", HTTPAddr: "127.0.0.1:9870",
		Superuser: currentUser(), SuperGroup: "supergroup", Permissions: true,
		DefaultReplication: 3, DefaultBlockSize: 128 << 20, MinBlockSize: 1 << 20, MaxReplication: 512,
		BytesPerChecksum: 512, FileBufferSize: 4096,
		MaxComponentLength: 255, MaxDirItems: 1024 * 1024, ListLimit: 1000,
		CheckpointPeriod: time.Hour, CheckpointTxns: 1000000,
		LeaseSoftLimit: time.Minute, LeaseHardLimit: 20 * time.Minute,
		MaxDataLength:  ipc.DefaultMaxDataLength,
		MinReplication: 1, HeartbeatInterval: 3 * time.Second, HeartbeatExpiry: 630 * time.Second,
		ReplicationInterval: 3 * time.Second, MaxReplicationStreams: 2, ReplicationTimeout: 5 * time.Minute,
		SafeModeThreshold: 0.999, SafeModeExtension: 30 * time.Second,
	}
}

func currentUser() string {
	if u := os.Getenv("HADOOP_USER_NAME"); u != "" {
		return u
	}
	if u, err := user.Current(); err == nil {
		return u.Username
	}
	return "root"
}

// ConfigFrom reads a Config from Hadoop configuration keys.
func ConfigFrom(c *conf.Configuration) (Config, error) {
	cfg := DefaultConfig()
	var errs []error
	num := func(key string, dst *int) {
		if c.Get(key) == "" {
			return // keep the default
		}
		v, err := c.GetInt(key)
		if err != nil {
			errs = append(errs, err)
			return
		}
		*dst = int(v)
	}
	bytes := func(key string, dst *int64) {
		v, err := c.GetBytes(key)
		if err != nil {
			errs = append(errs, err)
			return
		}
		*dst = v
	}
	dirs := c.GetStrings("dfs.namenode.name.dir")
	if len(dirs) == 0 {
		return cfg, errors.New("namenode: dfs.namenode.name.dir is empty")
	}
	cfg.NameDir = strings.TrimPrefix(dirs[0], "file://")
	cfg.RPCAddr = RPCAddress(c)
	cfg.HTTPAddr = c.Get("dfs.namenode.http-address")
	cfg.SuperGroup = c.Get("dfs.permissions.superusergroup")
	perm, err := c.GetBool("dfs.permissions.enabled")
	if err != nil {
		errs = append(errs, err)
	}
	cfg.Permissions = perm
	num("dfs.replication", &cfg.DefaultReplication)
	num("dfs.replication.max", &cfg.MaxReplication)
	bytes("dfs.blocksize", &cfg.DefaultBlockSize)
	bytes("dfs.namenode.fs-limits.min-block-size", &cfg.MinBlockSize)
	num("dfs.bytes-per-checksum", &cfg.BytesPerChecksum)
	num("io.file.buffer.size", &cfg.FileBufferSize)
	num("dfs.namenode.fs-limits.max-component-length", &cfg.MaxComponentLength)
	num("dfs.namenode.fs-limits.max-directory-items", &cfg.MaxDirItems)
	num("dfs.ls.limit", &cfg.ListLimit)
	num("ipc.maximum.data.length", &cfg.MaxDataLength)
	if d, err := c.GetDuration("dfs.namenode.checkpoint.period", time.Second); err != nil {
		errs = append(errs, err)
	} else {
		cfg.CheckpointPeriod = d
	}
	dur := func(key string, unit time.Duration, dst *time.Duration) {
		if c.Get(key) == "" {
			return
		}
		if d, err := c.GetDuration(key, unit); err != nil {
			errs = append(errs, err)
		} else {
			*dst = d
		}
	}
	hb, recheck := cfg.HeartbeatInterval, 5*time.Minute
	dur("dfs.heartbeat.interval", time.Second, &hb)
	dur("dfs.namenode.heartbeat.recheck-interval", time.Millisecond, &recheck)
	cfg.HeartbeatInterval = hb
	cfg.HeartbeatExpiry = 2*recheck + 10*hb
	dur("dfs.namenode.redundancy.interval.seconds", time.Second, &cfg.ReplicationInterval)
	dur("dfs.namenode.reconstruction.pending.timeout-sec", time.Second, &cfg.ReplicationTimeout)
	dur("dfs.namenode.safemode.extension", time.Millisecond, &cfg.SafeModeExtension)
	num("dfs.namenode.replication.min", &cfg.MinReplication)
	num("dfs.namenode.replication.max-streams", &cfg.MaxReplicationStreams)
	if c.Get("dfs.namenode.safemode.threshold-pct") != "" {
		if v, err := c.GetFloat("dfs.namenode.safemode.threshold-pct"); err != nil {
			errs = append(errs, err)
		} else {
			cfg.SafeModeThreshold = v
		}
	}
	if v, err := c.GetInt("dfs.namenode.checkpoint.txns"); err != nil {
		errs = append(errs, err)
	} else {
		cfg.CheckpointTxns = uint64(v)
	}
	return cfg, errors.Join(errs...)
}

// RPCAddress is the NameNode's client RPC address from configuration:
// dfs.namenode.rpc-address if set, else the authority of an hdfs://
// fs.defaultFS, else 127.0.0.1:8020.
func RPCAddress(c *conf.Configuration) string {
	if c.IsSet("dfs.namenode.rpc-address") {
		return c.Get("dfs.namenode.rpc-address")
	}
	if d := c.Get("fs.defaultFS"); strings.HasPrefix(d, "hdfs://") {
		host := strings.TrimSuffix(strings.TrimPrefix(d, "hdfs://"), "/")
		if !strings.Contains(host, ":") {
			host += ":8020"
		}
		return host
	}
	return c.Get("dfs.namenode.rpc-address")
}

// Format initialises cfg.NameDir with an empty namespace whose root belongs
// to cfg.Superuser. It refuses a formatted directory unless force.
func Format(cfg Config, force bool) (editlog.Version, error) {
	v, err := editlog.Format(cfg.NameDir, force)
	if err != nil {
		return v, err
	}
	l, err := editlog.Open(cfg.NameDir, editlog.Options{Logger: cfg.Logger})
	if err != nil {
		return v, err
	}
	defer l.Close()
	if err := l.Load(func(uint64, io.Reader) error { return nil }, func(uint64, []byte) error { return nil }); err != nil {
		return v, err
	}
	ns := namespace.New(cfg.Superuser, cfg.SuperGroup, blockmgmt.NewBlockMap())
	return v, l.SaveImage(l.LastTxID(), ns.WriteImage)
}

// NameNode is the HDFS NameNode daemon: the namespace behind a Hadoop IPC
// server speaking ClientProtocol, and an HTTP server for status and
// metrics. Lifecycle: New (loads storage) → Start (listens) → Close.
type NameNode struct {
	cfg  Config
	log  *slog.Logger
	ns   *Namesystem
	edit *editlog.Log

	rpc     *ipc.Server
	rpcLn   net.Listener
	httpSrv *http.Server
	httpLn  net.Listener

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
}

// New opens the storage directory, loads the newest image and replays the
// edit log. The NameNode does not listen until Start.
func New(cfg Config) (*NameNode, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.NameDir == "" {
		return nil, errors.New("namenode: no storage directory (dfs.namenode.name.dir)")
	}
	def := DefaultConfig()
	if cfg.ListLimit <= 0 {
		cfg.ListLimit = def.ListLimit
	}
	if cfg.MaxComponentLength <= 0 {
		cfg.MaxComponentLength = def.MaxComponentLength
	}
	if cfg.MaxDirItems <= 0 {
		cfg.MaxDirItems = def.MaxDirItems
	}
	if cfg.MaxReplication <= 0 {
		cfg.MaxReplication = def.MaxReplication
	}
	if cfg.LeaseSoftLimit <= 0 {
		cfg.LeaseSoftLimit = def.LeaseSoftLimit
	}
	if cfg.LeaseHardLimit <= 0 {
		cfg.LeaseHardLimit = def.LeaseHardLimit
	}
	if cfg.CheckpointPeriod <= 0 {
		cfg.CheckpointPeriod = def.CheckpointPeriod
	}
	if cfg.CheckpointTxns == 0 {
		cfg.CheckpointTxns = def.CheckpointTxns
	}
	if cfg.Superuser == "" {
		cfg.Superuser = def.Superuser
	}
	if cfg.MinReplication <= 0 {
		cfg.MinReplication = def.MinReplication
	}
	if cfg.HeartbeatInterval <= 0 {
		cfg.HeartbeatInterval = def.HeartbeatInterval
	}
	if cfg.HeartbeatExpiry <= 0 {
		cfg.HeartbeatExpiry = def.HeartbeatExpiry
	}
	if cfg.ReplicationInterval <= 0 {
		cfg.ReplicationInterval = def.ReplicationInterval
	}
	if cfg.MaxReplicationStreams <= 0 {
		cfg.MaxReplicationStreams = def.MaxReplicationStreams
	}
	if cfg.ReplicationTimeout <= 0 {
		cfg.ReplicationTimeout = def.ReplicationTimeout
	}
	l, err := editlog.Open(cfg.NameDir, editlog.Options{Logger: cfg.Logger, Recover: cfg.Recover})
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
	}, l, cfg.Logger)
	ns.blockPoolID = l.Version().BlockPoolID
	start := time.Now()
	replayed, err := ns.load(l)
	if err != nil {
		l.Close()
		return nil, err
	}
	files, dirs := ns.Counts()
	cfg.Logger.Info("namenode: namespace loaded", "dir", cfg.NameDir, "files", files, "directories", dirs,
		"edits_replayed", replayed, "last_txid", l.LastTxID(), "took", time.Since(start).Round(time.Millisecond))
	nn := &NameNode{
		cfg: cfg, log: cfg.Logger, ns: ns, edit: l,
		ready: make(chan struct{}), stop: make(chan struct{}),
		lastCPTx: l.LastTxID(), lastCPAt: time.Now(),
	}
	nn.rpc = ipc.NewServer(ipc.ServerConfig{MaxDataLength: cfg.MaxDataLength, Logger: cfg.Logger})
	cp := &clientProtocol{nn: nn, ns: ns}
	nn.rpc.Register(ClientProtocolName, withInodePaths(ns, cp.methods()))
	dp := &datanodeProtocol{nn: nn, ns: ns}
	nn.rpc.Register(DatanodeProtocolName, dp.methods())
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
	n.rpcLn = ln
	if n.cfg.HTTPAddr != "" {
		hl, err := net.Listen("tcp", n.cfg.HTTPAddr)
		if err != nil {
			ln.Close()
			return fmt.Errorf("namenode: HTTP address %s: %w", n.cfg.HTTPAddr, err)
		}
		n.httpLn = hl
		n.httpSrv = &http.Server{Handler: n.httpHandler(), ReadHeaderTimeout: 10 * time.Second}
		n.wg.Add(1)
		go func() {
			defer n.wg.Done()
			if err := n.httpSrv.Serve(hl); err != nil && !errors.Is(err, http.ErrServerClosed) {
				n.log.Error("namenode: HTTP server", "err", err)
			}
		}()
	}
	n.started = time.Now()
	n.wg.Add(2)
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

// monitor runs the periodic work: lease expiry and checkpoints.
func (n *NameNode) monitor() {
	tick := min(time.Second, n.cfg.ReplicationInterval)
	t := time.NewTicker(tick)
	defer t.Stop()
	lastRepl := time.Time{}
	for {
		select {
		case <-n.stop:
			return
		case now := <-t.C:
			if now.Sub(lastRepl) >= n.cfg.ReplicationInterval {
				n.ns.blockMonitor(now)
				lastRepl = now
			}
		}
		n.ns.expireLeases(context.Background())
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
	n.ns.mu.Lock()
	txid, err := n.edit.Roll()
	if err == nil {
		err = n.ns.ns.WriteImage(&buf)
	}
	n.ns.mu.Unlock()
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
		n.wg.Wait()
		var errs []error
		if n.ns.journalFailed() == nil && n.edit.LastTxID() > n.lastCPTx {
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
		s.ns = t
		return nil
	}, func(txid uint64, rec []byte) error {
		e, err := namespace.DecodeEdit(rec)
		if err != nil {
			return fmt.Errorf("namenode: edit %d does not decode: %w", txid, err)
		}
		replayed++
		if err := s.ns.Apply(e); err != nil {
			return fmt.Errorf("edit %d: %w", txid, err)
		}
		return nil
	})
	if err != nil {
		return replayed, err
	}
	s.bm.ForgetRemoved() // replayed deletions had no replicas yet
	s.bm.StartupSafeMode()
	now := s.now()
	s.ns.OpenFiles(func(n *namespace.Inode) { s.leases.Add(n.UC.ClientName, n.Path(), now) })
	return replayed, nil
}
