package namenode

import (
	"fmt"
	"log/slog"
	"os"
	"os/user"
	"path/filepath"
	"runtime/debug"
	"strings"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/httpauth"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/security"
	"github.com/stratafs/strata/internal/vfs"
)

// The configuration keys the NameNode reads. Their defaults live in conf's
// table of known keys (conf/keys.go) and nowhere else.
const (
	keyNameDir            = "dfs.namenode.name.dir"
	keyRPCAddress         = "dfs.namenode.rpc-address"
	keyDefaultFS          = "fs.defaultFS"
	keyHTTPAddress        = "dfs.namenode.http-address"
	keySuperGroup         = "dfs.permissions.superusergroup"
	keyPermissions        = "dfs.permissions.enabled"
	keyReplication        = "dfs.replication"
	keyMaxReplication     = "dfs.replication.max"
	keyMinReplication     = "dfs.namenode.replication.min"
	keyBlockSize          = "dfs.blocksize"
	keyMinBlockSize       = "dfs.namenode.fs-limits.min-block-size"
	keyBytesPerChecksum   = "dfs.bytes-per-checksum"
	keyFileBufferSize     = "io.file.buffer.size"
	keyMaxComponentLength = "dfs.namenode.fs-limits.max-component-length"
	keyMaxDirItems        = "dfs.namenode.fs-limits.max-directory-items"
	keyListLimit          = "dfs.ls.limit"
	keyMaxDataLength      = "ipc.maximum.data.length"
	keyCheckpointPeriod   = "dfs.namenode.checkpoint.period"
	keyCheckpointTxns     = "dfs.namenode.checkpoint.txns"
	keyHeartbeatInterval  = "dfs.heartbeat.interval"
	keyHeartbeatRecheck   = "dfs.namenode.heartbeat.recheck-interval"
	keyReplInterval       = "dfs.namenode.redundancy.interval.seconds"
	keyReplStreams        = "dfs.namenode.replication.max-streams"
	keyReplTimeout        = "dfs.namenode.reconstruction.pending.timeout-sec"
	keySafeModeThreshold  = "dfs.namenode.safemode.threshold-pct"
	keySafeModeExtension  = "dfs.namenode.safemode.extension"
	keyHTTPIdleTimeout    = "hadoop.http.idle_timeout.ms"
	keyBlockTokenEnable   = "dfs.block.access.token.enable"
	keyBlockKeyInterval   = "dfs.block.access.key.update.interval"
	keyBlockTokenLifetime = "dfs.block.access.token.lifetime"
	keyRetryCache         = "dfs.namenode.enable.retrycache"
	keyRetryCacheExpiry   = "dfs.namenode.retrycache.expirytime.millis"
	keyRetryCacheHeap     = "dfs.namenode.retrycache.heap.percent"

	keyXAttrsEnabled          = "dfs.namenode.xattrs.enabled"
	keyMaxXAttrsPerInode      = "dfs.namenode.fs-limits.max-xattrs-per-inode"
	keyMaxXAttrSize           = "dfs.namenode.fs-limits.max-xattr-size"
	keyACLsEnabled            = "dfs.namenode.acls.enabled"
	keyACLInheritance         = "dfs.namenode.posix.acl.inheritance.enabled"
	keySnapshotDiffLimit      = "dfs.snapshotdiff-report.limit"
	keySnapshotMaxCopied      = "strata.namenode.snapshot.max-copied-inodes"
	keySnapshotMaxTotalInodes = "strata.namenode.snapshot.max-total-inodes"
)

// maxXAttrSizeHardLimit is the most dfs.namenode.fs-limits.max-xattr-size
// may be set to (Hadoop's DFS_NAMENODE_MAX_XATTR_SIZE_HARD_LIMIT).
const maxXAttrSizeHardLimit = 32768

// Lease limits have no key in Hadoop either (HdfsConstants).
const (
	defaultLeaseSoftLimit = time.Minute
	defaultLeaseHardLimit = 20 * time.Minute
)

// Config configures a NameNode. DefaultConfig gives the defaults of conf's
// key table; ConfigFrom reads the keys named on each field. None of the
// fields can change while the NameNode runs. New and Format call Validate.
type Config struct {
	// NameDirs are the storage directories for the image and edit log
	// (dfs.namenode.name.dir, a comma-separated list of paths or file://
	// URIs; the prefix is dropped). Every one holds the whole namespace:
	// each edit and image is written to all (Hadoop's redundant name
	// directories, which also hold the edits: dfs.namenode.edits.dir is
	// not read). One that fails leaves service and the NameNode goes on
	// with the others. NameDir is the first of them; a caller may set
	// NameDir alone for a single directory (StorageDirs). DefaultConfig
	// leaves both empty: they must be set.
	NameDir  string
	NameDirs []string
	// RPCAddr is host:port for client and DataNode RPC
	// (dfs.namenode.rpc-address, else the authority of an hdfs://
	// fs.defaultFS; default 127.0.0.1:8020); port 0 picks a free port.
	RPCAddr string
	// HTTPAddr is host:port of the web UI, WebHDFS, fsck and /metrics
	// (dfs.namenode.http-address, default 127.0.0.1:9870); "" disables it.
	HTTPAddr string
	// Superuser is the user with every privilege: the user who starts the
	// NameNode, as in HDFS ($HADOOP_USER_NAME, else the OS user). It has no
	// key.
	Superuser string
	// SuperGroup's members are superusers too
	// (dfs.permissions.superusergroup, default supergroup).
	SuperGroup string
	// Permissions turns permission checking on (dfs.permissions.enabled,
	// default true).
	Permissions bool
	// DefaultReplication applies when a client asks for none
	// (dfs.replication, default 3); MaxReplication is the largest a file
	// may have (dfs.replication.max, 512); MinReplication the good replicas
	// a block needs before its file can be closed
	// (dfs.namenode.replication.min, 1).
	DefaultReplication int
	MaxReplication     int
	MinReplication     int
	// DefaultBlockSize in bytes applies when a client asks for none
	// (dfs.blocksize, default 128 MiB); MinBlockSize is the smallest a
	// file may have (dfs.namenode.fs-limits.min-block-size, 1 MiB).
	DefaultBlockSize int64
	MinBlockSize     int64
	// BytesPerChecksum and FileBufferSize (bytes) are reported to clients
	// in the server defaults (dfs.bytes-per-checksum, 512;
	// io.file.buffer.size, 4096).
	BytesPerChecksum int
	FileBufferSize   int
	// MaxComponentLength is the longest path component in bytes, 0 for no
	// limit (dfs.namenode.fs-limits.max-component-length, 255);
	// MaxDirItems the most entries a directory may hold
	// (dfs.namenode.fs-limits.max-directory-items, 1048576).
	MaxComponentLength int
	MaxDirItems        int
	// XAttrsEnabled and ACLsEnabled switch extended attributes and ACLs
	// on (dfs.namenode.xattrs.enabled, dfs.namenode.acls.enabled, both
	// true); MaxXAttrsPerInode and MaxXAttrSize are the limits
	// (dfs.namenode.fs-limits.max-xattrs-per-inode, 32;
	// dfs.namenode.fs-limits.max-xattr-size, 16384 bytes of name and value).
	XAttrsEnabled bool
	ACLsEnabled   bool
	// ACLInheritance makes a child of a directory with a default ACL
	// take the client's unmasked permission
	// (dfs.namenode.posix.acl.inheritance.enabled, true).
	ACLInheritance    bool
	MaxXAttrsPerInode int
	MaxXAttrSize      int
	// ListLimit is the number of entries per getListing page (dfs.ls.limit,
	// 1000).
	ListLimit int
	// SnapshotDiffLimit is the most entries per
	// getSnapshotDiffReportListing reply (dfs.snapshotdiff-report.limit,
	// 1000; 0 or less means 1000, as in Hadoop). SnapshotMaxCopied bounds the inodes one createSnapshot copies
	// and SnapshotMaxTotalInodes those all snapshots hold
	// (strata.namenode.snapshot.max-copied-inodes, 1000000;
	// strata.namenode.snapshot.max-total-inodes, 10000000): strata's
	// snapshots copy their subtree, so their cost is bounded up front.
	SnapshotDiffLimit      int
	SnapshotMaxCopied      int
	SnapshotMaxTotalInodes int
	// CheckpointPeriod and CheckpointTxns decide when an image is saved
	// (dfs.namenode.checkpoint.period, 1 h; dfs.namenode.checkpoint.txns,
	// 1000000 uncheckpointed edits); one is also saved on Close.
	CheckpointPeriod time.Duration
	CheckpointTxns   uint64
	// LeaseSoftLimit lets another writer take over a file; past
	// LeaseHardLimit the NameNode closes it (60 s and 20 min, as HDFS; no
	// keys).
	LeaseSoftLimit time.Duration
	LeaseHardLimit time.Duration
	// TrashInterval is how long the trash emptier keeps a trash
	// checkpoint (fs.trash.interval, minutes, default 0: no trash, no
	// emptier), reported to clients in the server defaults;
	// TrashCheckpointInterval is how often it makes one
	// (fs.trash.checkpoint.interval, minutes; 0 or more than
	// TrashInterval: TrashInterval). See trash.go.
	TrashInterval           time.Duration
	TrashCheckpointInterval time.Duration
	// MaxDataLength bounds an RPC frame in bytes (ipc.maximum.data.length,
	// 128 MiB).
	MaxDataLength int
	// HeartbeatInterval is told to DataNodes (dfs.heartbeat.interval, 3 s);
	// a DataNode is dead after HeartbeatExpiry without one: 2 ×
	// dfs.namenode.heartbeat.recheck-interval + 10 × dfs.heartbeat.interval
	// (10.5 min by default), as in HDFS.
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
	// SafeModeThreshold is the fraction of blocks that must be reported
	// before the startup safe mode ends (dfs.namenode.safemode.threshold-pct,
	// 0.999; <= 0 leaves at once, > 1 never), SafeModeExtension how long it
	// lasts after that (dfs.namenode.safemode.extension, 30 s).
	SafeModeThreshold float64
	SafeModeExtension time.Duration
	// HTTPIdleTimeout closes an idle keep-alive HTTP connection
	// (hadoop.http.idle_timeout.ms, 60 s). The HTTP server's other
	// timeouts are fixed (see http.go).
	HTTPIdleTimeout time.Duration
	// PProf serves Go's profiler at /debug/pprof/ on the HTTP port
	// (strata.http.pprof.enabled; default false).
	PProf bool
	// HTTPAuth authenticates the web UI, /jmx, /fsck and WebHDFS
	// (hadoop.http.authentication.*; the zero value is simple, as before).
	HTTPAuth httpauth.Config
	// WebHDFSAuth, when its Type is kerberos, authenticates WebHDFS by
	// itself: as Hadoop's NameNode, WebHDFS needs SPNEGO whenever
	// hadoop.security.authentication is kerberos, whatever HTTPAuth says,
	// with dfs.web.authentication.kerberos.principal and .keytab
	// (defaults: HTTPAuth's). Zero: WebHDFS is under HTTPAuth.
	WebHDFSAuth httpauth.Config
	// NNPrincipal and NNKeytab (dfs.namenode.kerberos.principal, _HOST
	// allowed, and dfs.namenode.keytab.file): in secure mode the
	// NameNode-to-NameNode HTTP endpoints accept only these principals
	// and peers call them logged in from the keytab (ha_http_auth.go).
	NNPrincipal, NNKeytab string
	// HA is the nameservice this NameNode is a member of (ha_config.go);
	// nil for a single NameNode.
	HA *HAConfig
	// Nodes are the hosts files and the rack topology (nodes.go).
	Nodes NodesConfig
	// Delegation is the delegation token setup (delegation.go).
	Delegation DelegationConfig
	// IPC are the RPC server's limits (ipc.maximum.data.length,
	// ipc.server.max.connections, ipc.client.connection.maxidletime,
	// ipc.client.idlethreshold, strata.ipc.server.*; see
	// ipc.ServerConfigFrom). A zero field takes ipc's default; IPC's
	// MaxDataLength is MaxDataLength's.
	IPC ipc.ServerConfig
	// Security are the secure-mode settings (hadoop.security.*, the
	// NameNode's principal and keytab); it logs in when it starts.
	Security security.Settings
	// BlockTokens makes the NameNode put a block access token in every
	// located block it returns and tell DataNodes to require them
	// (dfs.block.access.token.enable, default false as in Hadoop). Block
	// keys exist either way: WebHDFS redirects are always signed.
	BlockTokens bool
	// EncryptDataTransfer is dfs.encrypt.data.transfer (default false):
	// getDataEncryptionKey hands out keys (with BlockTokens) and the
	// server defaults tell clients to encrypt; EncryptDataTransferAlgorithm
	// is dfs.encrypt.data.transfer.algorithm, carried in the keys.
	EncryptDataTransfer          bool
	EncryptDataTransferAlgorithm string
	// BlockKeyUpdateInterval is how often the block key rolls
	// (dfs.block.access.key.update.interval, in minutes, default 600);
	// BlockTokenLifetime how long a token is good for
	// (dfs.block.access.token.lifetime, in minutes, default 600).
	BlockKeyUpdateInterval time.Duration
	BlockTokenLifetime     time.Duration
	// RetryCache makes a retried @AtMostOnce call get its first answer
	// (dfs.namenode.enable.retrycache, default true; see retrycache.go).
	// RetryCacheExpiry is how long an entry is kept
	// (dfs.namenode.retrycache.expirytime.millis, 10 min);
	// RetryCacheHeapPercent bounds the entries as Hadoop does
	// (dfs.namenode.retrycache.heap.percent, 0.03): the power of two
	// nearest that percent of the Go memory limit (GOMEMLIMIT, 1 GiB
	// when unset) divided by 8, so 32768 entries per GiB.
	RetryCache            bool
	RetryCacheExpiry      time.Duration
	RetryCacheHeapPercent float64
	// FS is the file system of the storage directory; nil is the
	// operating system's. Tests inject faults with vfs/errorfs. No key.
	FS vfs.FS
	// Recover truncates the in-progress edit log at its first damaged
	// record instead of refusing to start (Hadoop's namenode -recover).
	// Records after the damage are lost. No key: a command-line flag.
	Recover bool
	// Logger receives the daemon's logs; nil means slog.Default().
	Logger *slog.Logger
}

// DefaultConfig returns the defaults of conf's key table, with the current
// user as superuser and no storage directory.
func DefaultConfig() Config {
	cfg, err := ConfigFrom(conf.New())
	if err != nil {
		// conf's tests check that every default parses.
		panic(fmt.Sprintf("namenode: the default configuration does not parse: %v", err))
	}
	cfg.NameDir, cfg.NameDirs = "", nil
	return cfg
}

// StorageDirs returns the storage directories: NameDirs, or NameDir
// alone if NameDirs is empty.
func (c Config) StorageDirs() []string {
	if len(c.NameDirs) > 0 {
		return c.NameDirs
	}
	if c.NameDir == "" {
		return nil
	}
	return []string{c.NameDir}
}

// parseNameDirs reads dfs.namenode.name.dir's entries: local paths, or
// file:// URIs as Hadoop writes them (file:///data/nn).
func parseNameDirs(entries []string) ([]string, error) {
	var dirs []string
	for _, e := range entries {
		d := e
		if rest, ok := strings.CutPrefix(e, "file://"); ok {
			d = rest
		} else if strings.Contains(e, "://") {
			return nil, fmt.Errorf("namenode: %s: %q: only local directories (paths or file:// URIs) are supported", keyNameDir, e)
		}
		if d == "" {
			return nil, fmt.Errorf("namenode: %s: %q names no directory", keyNameDir, e)
		}
		dirs = append(dirs, d)
	}
	return dirs, nil
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

// ConfigFrom reads a Config from Hadoop configuration keys. Keys not set
// take conf's defaults; a value that does not parse is an error naming
// the key.
func ConfigFrom(c *conf.Configuration) (Config, error) {
	cfg := Config{Superuser: currentUser(), LeaseSoftLimit: defaultLeaseSoftLimit, LeaseHardLimit: defaultLeaseHardLimit}
	r := conf.NewReader(c, "")
	num := func(key string) int { return int(r.Int(key)) }
	dirs, err := parseNameDirs(c.GetStrings(keyNameDir))
	if err != nil {
		return cfg, err
	}
	if len(dirs) == 0 {
		return cfg, fmt.Errorf("namenode: %s is empty", keyNameDir)
	}
	cfg.NameDir, cfg.NameDirs = dirs[0], dirs
	cfg.RPCAddr = RPCAddress(c)
	cfg.HTTPAddr = c.Get(keyHTTPAddress)
	cfg.SuperGroup = c.Get(keySuperGroup)
	cfg.Permissions = r.Bool(keyPermissions)
	cfg.DefaultReplication = num(keyReplication)
	cfg.MaxReplication = num(keyMaxReplication)
	cfg.MinReplication = num(keyMinReplication)
	cfg.DefaultBlockSize = r.Bytes(keyBlockSize)
	cfg.MinBlockSize = r.Bytes(keyMinBlockSize)
	cfg.BytesPerChecksum = num(keyBytesPerChecksum)
	cfg.FileBufferSize = num(keyFileBufferSize)
	cfg.MaxComponentLength = num(keyMaxComponentLength)
	cfg.MaxDirItems = num(keyMaxDirItems)
	cfg.XAttrsEnabled = r.Bool(keyXAttrsEnabled)
	cfg.ACLsEnabled = r.Bool(keyACLsEnabled)
	cfg.ACLInheritance = r.Bool(keyACLInheritance)
	cfg.MaxXAttrsPerInode = num(keyMaxXAttrsPerInode)
	cfg.MaxXAttrSize = num(keyMaxXAttrSize)
	cfg.ListLimit = num(keyListLimit)
	cfg.SnapshotDiffLimit = num(keySnapshotDiffLimit)
	cfg.SnapshotMaxCopied = num(keySnapshotMaxCopied)
	cfg.SnapshotMaxTotalInodes = num(keySnapshotMaxTotalInodes)
	cfg.MaxDataLength = num(keyMaxDataLength)
	cfg.CheckpointPeriod = r.Duration(keyCheckpointPeriod, time.Second)
	if txns := r.Int(keyCheckpointTxns); txns > 0 {
		cfg.CheckpointTxns = uint64(txns)
	}
	cfg.HeartbeatInterval = r.Duration(keyHeartbeatInterval, time.Second)
	cfg.HeartbeatExpiry = 2*r.Duration(keyHeartbeatRecheck, time.Millisecond) + 10*cfg.HeartbeatInterval
	cfg.ReplicationInterval = r.Duration(keyReplInterval, time.Second)
	cfg.MaxReplicationStreams = num(keyReplStreams)
	cfg.ReplicationTimeout = r.Duration(keyReplTimeout, time.Second)
	cfg.SafeModeExtension = r.Duration(keySafeModeExtension, time.Millisecond)
	cfg.SafeModeThreshold = r.Float(keySafeModeThreshold)
	cfg.HTTPIdleTimeout = r.Duration(keyHTTPIdleTimeout, time.Millisecond)
	cfg.PProf = r.Bool("strata.http.pprof.enabled")
	cfg.HTTPAuth, err = httpauth.ConfigFrom(c)
	r.AddAs(err)
	if strings.EqualFold(c.GetTrimmed(httpauth.KeySecurityAuthentication), "kerberos") {
		w := cfg.HTTPAuth
		w.Type = httpauth.TypeKerberos
		if p := c.GetTrimmed(httpauth.KeyWebHDFSPrincipal); p != "" {
			w.Principal = p
		}
		if k := c.GetTrimmed(httpauth.KeyWebHDFSKeytab); k != "" {
			w.Keytab = k
		}
		cfg.WebHDFSAuth = w
	}
	cfg.NNPrincipal, cfg.NNKeytab = c.GetTrimmed(keyNNPrincipal), c.GetTrimmed(keyNNKeytab)
	ipcCfg, err := ipc.ServerConfigFrom(c)
	r.AddAs(err)
	cfg.IPC = ipcCfg
	r.AddAs(secureConfig(c, &cfg))
	cfg.BlockTokens = r.Bool(keyBlockTokenEnable)
	cfg.EncryptDataTransfer = r.Bool("dfs.encrypt.data.transfer")
	cfg.EncryptDataTransferAlgorithm = c.Get("dfs.encrypt.data.transfer.algorithm")
	cfg.BlockKeyUpdateInterval = r.Duration(keyBlockKeyInterval, time.Minute)
	cfg.BlockTokenLifetime = r.Duration(keyBlockTokenLifetime, time.Minute)
	cfg.RetryCache = r.Bool(keyRetryCache)
	cfg.RetryCacheExpiry = r.Duration(keyRetryCacheExpiry, time.Millisecond)
	cfg.RetryCacheHeapPercent = r.Float(keyRetryCacheHeap)
	haConfigFrom(c, r, &cfg)
	trashConfigFrom(r, &cfg)
	nodesConfigFrom(c, r, &cfg)
	if err := delegationConfigFrom(c, r, &cfg); err != nil {
		return cfg, fmt.Errorf("namenode: %w", err)
	}
	return cfg, r.Err()
}

// duplicateDir returns a directory named twice in dirs, or "".
func duplicateDir(dirs []string) string {
	seen := make(map[string]bool, len(dirs))
	for _, d := range dirs {
		c := filepath.Clean(d)
		if seen[c] {
			return d
		}
		seen[c] = true
	}
	return ""
}

// Validate reports the first setting New cannot run with, naming the key
// that sets it.
func (c Config) Validate() error {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("namenode: "+format, args...)
	}
	switch {
	case len(c.StorageDirs()) == 0:
		return bad("no storage directory (%s)", keyNameDir)
	case len(c.NameDirs) > 0 && c.NameDir != c.NameDirs[0]:
		return bad("NameDir %s is not the first of NameDirs %v (%s)", c.NameDir, c.NameDirs, keyNameDir)
	case duplicateDir(c.NameDirs) != "":
		return bad("%s lists %s twice", keyNameDir, duplicateDir(c.NameDirs))
	case c.RPCAddr == "":
		return bad("no RPC address (%s)", keyRPCAddress)
	case c.Superuser == "":
		return bad("no superuser")
	case c.MaxReplication < 1:
		return bad("%s must be at least 1, got %d", keyMaxReplication, c.MaxReplication)
	case c.DefaultReplication < 1 || c.DefaultReplication > c.MaxReplication:
		return bad("%s must be between 1 and %s (%d), got %d", keyReplication, keyMaxReplication, c.MaxReplication, c.DefaultReplication)
	case c.MinReplication < 1 || c.MinReplication > c.MaxReplication:
		return bad("%s must be between 1 and %s (%d), got %d", keyMinReplication, keyMaxReplication, c.MaxReplication, c.MinReplication)
	case c.BytesPerChecksum < 1:
		return bad("%s must be at least 1, got %d", keyBytesPerChecksum, c.BytesPerChecksum)
	case c.MinBlockSize < 0:
		return bad("%s must not be negative, got %d", keyMinBlockSize, c.MinBlockSize)
	case c.DefaultBlockSize < 1 || c.DefaultBlockSize < c.MinBlockSize:
		return bad("%s must be at least 1 and at least %s (%d), got %d", keyBlockSize, keyMinBlockSize, c.MinBlockSize, c.DefaultBlockSize)
	case c.DefaultBlockSize%int64(c.BytesPerChecksum) != 0:
		return bad("%s (%d) must be a multiple of %s (%d)", keyBlockSize, c.DefaultBlockSize, keyBytesPerChecksum, c.BytesPerChecksum)
	case c.FileBufferSize < 1:
		return bad("%s must be at least 1, got %d", keyFileBufferSize, c.FileBufferSize)
	case c.MaxComponentLength < 0:
		return bad("%s must not be negative (0 disables the check), got %d", keyMaxComponentLength, c.MaxComponentLength)
	case c.MaxDirItems < 1:
		return bad("%s must be at least 1, got %d", keyMaxDirItems, c.MaxDirItems)
	// Hadoop would roll keys, expire or renew tokens in a busy loop or at
	// once; checked only when tokens are issued.
	case c.Delegation.Issuing() && c.Delegation.Timing.KeyUpdateInterval <= 0:
		return bad("%s must be positive, got %d", keyDelegationKeyUpdate, c.Delegation.Timing.KeyUpdateInterval)
	case c.Delegation.Issuing() && c.Delegation.Timing.MaxLifetime <= 0:
		return bad("%s must be positive, got %d", keyDelegationMaxLifetime, c.Delegation.Timing.MaxLifetime)
	case c.Delegation.Issuing() && c.Delegation.Timing.RenewInterval <= 0:
		return bad("%s must be positive, got %d", keyDelegationRenewInterval, c.Delegation.Timing.RenewInterval)
	// FSDirectory's preconditions, in Hadoop's words. Per inode, 0 is a
	// valid limit (no xattrs); a size of 0 would refuse every xattr.
	case c.MaxXAttrsPerInode < 0:
		return bad("Cannot set a negative limit on the number of xattrs per inode (%s).", keyMaxXAttrsPerInode)
	case c.MaxXAttrSize <= 0:
		return bad("The maximum size of an xattr should be > 0: (%s).", keyMaxXAttrSize)
	case c.MaxXAttrSize > maxXAttrSizeHardLimit:
		return bad("The maximum size of an xattr should be <= maximum size hard limit %d: (%s).", maxXAttrSizeHardLimit, keyMaxXAttrSize)
	case c.ListLimit < 1:
		return bad("%s must be at least 1, got %d", keyListLimit, c.ListLimit)
	case c.SnapshotMaxCopied < 1 || c.SnapshotMaxTotalInodes < c.SnapshotMaxCopied:
		return bad("%s must be at least 1 and %s at least as large, got %d and %d", keySnapshotMaxCopied, keySnapshotMaxTotalInodes, c.SnapshotMaxCopied, c.SnapshotMaxTotalInodes)
	case c.MaxDataLength < 1:
		return bad("%s must be at least 1, got %d", keyMaxDataLength, c.MaxDataLength)
	case c.CheckpointPeriod <= 0:
		return bad("%s must be positive, got %v", keyCheckpointPeriod, c.CheckpointPeriod)
	case c.CheckpointTxns < 1:
		return bad("%s must be at least 1, got %d", keyCheckpointTxns, c.CheckpointTxns)
	case c.LeaseSoftLimit <= 0 || c.LeaseHardLimit < c.LeaseSoftLimit:
		return bad("lease limits must be positive with the hard limit at least the soft one, got soft %v hard %v", c.LeaseSoftLimit, c.LeaseHardLimit)
	case c.HeartbeatInterval <= 0:
		return bad("%s must be positive, got %v", keyHeartbeatInterval, c.HeartbeatInterval)
	case c.HeartbeatExpiry <= 0:
		return bad("the heartbeat expiry (2 × %s + 10 × %s) must be positive, got %v", keyHeartbeatRecheck, keyHeartbeatInterval, c.HeartbeatExpiry)
	case c.ReplicationInterval <= 0:
		return bad("%s must be positive, got %v", keyReplInterval, c.ReplicationInterval)
	case c.MaxReplicationStreams < 1:
		return bad("%s must be at least 1, got %d", keyReplStreams, c.MaxReplicationStreams)
	case c.ReplicationTimeout <= 0:
		return bad("%s must be positive, got %v", keyReplTimeout, c.ReplicationTimeout)
	case c.SafeModeExtension < 0:
		return bad("%s must not be negative, got %v", keySafeModeExtension, c.SafeModeExtension)
	case c.SafeModeThreshold != c.SafeModeThreshold:
		return bad("%s is not a number", keySafeModeThreshold)
	case c.HTTPIdleTimeout < 0:
		return bad("%s must not be negative, got %v", keyHTTPIdleTimeout, c.HTTPIdleTimeout)
	case c.BlockKeyUpdateInterval <= 0:
		return bad("%s must be positive, got %v", keyBlockKeyInterval, c.BlockKeyUpdateInterval)
	case c.BlockTokenLifetime <= 0:
		return bad("%s must be positive, got %v", keyBlockTokenLifetime, c.BlockTokenLifetime)
	case c.RetryCache && c.RetryCacheExpiry <= 0:
		return bad("%s must be positive, got %v", keyRetryCacheExpiry, c.RetryCacheExpiry)
	case c.RetryCache && !(c.RetryCacheHeapPercent >= 0 && c.RetryCacheHeapPercent <= 100):
		return bad("%s must be between 0 and 100, got %v", keyRetryCacheHeap, c.RetryCacheHeapPercent)
	}
	if err := c.IPC.Validate(); err != nil {
		return fmt.Errorf("namenode: %w", err)
	}
	if c.HA != nil {
		return c.HA.validate()
	}
	return nil
}

// retryCacheEntries is the retry cache's bound, 0 when it is off.
func (c Config) retryCacheEntries() int {
	if !c.RetryCache {
		return 0
	}
	return retryCacheCapacity(c.RetryCacheHeapPercent, debug.SetMemoryLimit(-1))
}

// RPCAddress is the NameNode's client RPC address from configuration:
// dfs.namenode.rpc-address if set, else the authority of an hdfs://
// fs.defaultFS, else dfs.namenode.rpc-address's default.
func RPCAddress(c *conf.Configuration) string {
	if c.IsSet(keyRPCAddress) {
		return c.Get(keyRPCAddress)
	}
	if d := c.Get(keyDefaultFS); strings.HasPrefix(d, "hdfs://") {
		host := strings.TrimSuffix(strings.TrimPrefix(d, "hdfs://"), "/")
		if !strings.Contains(host, ":") {
			host += ":8020"
		}
		return host
	}
	return c.Get(keyRPCAddress)
}
