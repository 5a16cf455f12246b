package datanode

import (
	"errors"
	"fmt"
	"log/slog"
	"net"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/httpauth"
	"github.com/stratafs/strata/internal/nameservice"
	"github.com/stratafs/strata/internal/security"
	"github.com/stratafs/strata/internal/vfs"
)

// The keys ConfigFrom reads besides fsdataset.ConfigFrom's; their
// defaults are in conf's table.
const (
	keyAddress            = "dfs.datanode.address"
	keyHTTPAddress        = "dfs.datanode.http.address"
	keyNameNodeHTTP       = "dfs.namenode.http-address"
	keyCORSOrigins        = "strata.datanode.http.cors.allowed-origins"
	keyDomainSocket       = "dfs.domain.socket.path"
	keyHeartbeat          = "dfs.heartbeat.interval"
	keyBlockReport        = "dfs.blockreport.intervalMsec"
	keyMaxTransfer        = "dfs.datanode.max.transfer.threads"
	keyScanPeriod         = "dfs.datanode.scan.period.hours"
	keyScanBytesPerSecond = "dfs.block.scanner.volume.bytes.per.second"
	keyKeepalive          = "dfs.datanode.socket.reuse.keepalive"
	keySocketTimeout      = "dfs.client.socket-timeout"
	keyBlockTokens        = "dfs.block.access.token.enable"
	keyWriteTimeout       = "dfs.datanode.socket.write.timeout"
	keyHostname           = "dfs.datanode.hostname"
	keySlaveHostName      = "slave.host.name"
	keyDNSInterface       = "dfs.datanode.dns.interface"
	keyUseDNHostname      = "dfs.datanode.use.datanode.hostname"
	keyDefaultFS          = "fs.defaultFS"
	keyBalanceBandwidth   = "dfs.datanode.balance.bandwidthPerSec"
	keyBalanceMoves       = "dfs.datanode.balance.max.concurrent.moves"
	keyReadahead          = "dfs.datanode.readahead.bytes"
)

// defaultHeartbeat is the heartbeat of a Config whose HeartbeatInterval
// is 0, until the NameNode's arrives: dfs.heartbeat.interval's default.
const defaultHeartbeat = 3 * time.Second

// Config configures a DataNode. ConfigFrom reads it from Hadoop's keys
// and DefaultConfig is ConfigFrom of an empty configuration, so the
// defaults below are conf's table's. Nothing in it can change after New.
//
// For a hand-built Config, New first gives the fields marked "0 means the
// default" DefaultConfig's value (in withDefaults, the one place that
// does), then Validate rejects what is still out of range.
type Config struct {
	// Volumes are the data directories with their storage types
	// (dfs.datanode.data.dir, default file://${hadoop.tmp.dir}/dfs/data,
	// e.g. "[SSD]/data/ssd,[DISK]/data/disk"; see
	// fsdataset.ParseDataDirs). At least one is required.
	Volumes []fsdataset.VolumeConfig
	// NameNodeAddrs are the RPC host:ports of the NameNodes the DataNode
	// serves: every member of the HA nameservice (dfs.nameservices,
	// dfs.ha.namenodes.<ns>, dfs.namenode.rpc-address.<ns>.<nn>), else the
	// one NameNode of ConfigFrom's argument. NameNodeAddr is the first of
	// them; a hand-built Config may set either (the other follows). One
	// is required, at most nameservice.MaxNameNodes, none twice.
	NameNodeAddrs []string
	NameNodeAddr  string
	// NameNodeHTTPAddrs are the NameNodes' web UI addresses, host:port
	// (dfs.namenode.http-address.<ns>.<nn> of each member, else
	// dfs.namenode.http-address). Pages of exactly these origins
	// (http://host:port, the host also as the addresses it resolves to)
	// may send uploads here across origins (CORS); a harness whose
	// NameNode binds port 0 sets the bound address.
	NameNodeHTTPAddrs []string
	// CORSOrigins are further origins ("https://nn.example:9871") whose
	// pages may call this DataNode's WebHDFS across origins
	// (strata.datanode.http.cors.allowed-origins, comma-separated;
	// default none).
	CORSOrigins []string
	// XferAddr is the DataTransferProtocol address, host:port
	// (dfs.datanode.address, default 127.0.0.1:9866). Port 0 picks a free
	// port; "" is ":0".
	XferAddr string
	// HTTPAddr is the web, metrics and WebHDFS address, host:port
	// (dfs.datanode.http.address, default 127.0.0.1:9864); "" disables it.
	HTTPAddr string
	// PProf serves Go's profiler at /debug/pprof/ on HTTPAddr
	// (strata.http.pprof.enabled; default false).
	PProf bool
	// HTTPAuth authenticates the pages, /jmx and /status
	// (hadoop.http.authentication.*; the zero value is simple). WebHDFS
	// is not under it (see httpHandler).
	HTTPAuth httpauth.Config
	// Hostname is the host name the DataNode reports to the NameNode,
	// which gives it to clients (dfs.datanode.hostname, else
	// slave.host.name as Hadoop's deprecation of it; "" means
	// DNSInterface's address, else the transfer address if bound to a
	// specific one, else the local address of the interface that reaches
	// the NameNode, else os.Hostname()). AdvertisedIP is the IP it
	// reports (no key; "" is the bound transfer address if specific);
	// the NameNode, as Hadoop's, records the address the DataNode
	// connects from instead, so it connects from the transfer address
	// when that is specific (sourceIP).
	Hostname     string
	AdvertisedIP string
	// DNSInterface is the network interface whose first address is
	// Hostname when Hostname is empty (dfs.datanode.dns.interface;
	// default "default": none).
	DNSInterface string
	// UseDatanodeHostname connects to other DataNodes (pipeline mirrors,
	// transfers) by the host names they report rather than their IP
	// addresses (dfs.datanode.use.datanode.hostname; default false).
	UseDatanodeHostname bool
	// User is the user the DataNode acts as towards the NameNode, the
	// NameNode's superuser (no key; "" means $HADOOP_USER_NAME, else
	// $USER, else root).
	User string
	// Security are the secure-mode settings (hadoop.security.*, the
	// DataNode's principal and keytab).
	Security security.Settings
	// Login is the DataNode's Kerberos login in secure mode, made by New
	// from Security; nil in simple mode.
	Login *security.Login
	// NameNodePrincipal is dfs.namenode.kerberos.principal (may hold
	// _HOST), the principal the DataNode asks tickets for.
	NameNodePrincipal string
	// HeartbeatInterval is the time between heartbeats
	// (dfs.heartbeat.interval, in seconds; default 3 s). 0 means the
	// NameNode's, 3 s until it registers us. Not negative.
	HeartbeatInterval time.Duration
	// BlockReportInterval is the time between full block reports
	// (dfs.blockreport.intervalMsec, in ms; default 6 h). 0 means the
	// default.
	BlockReportInterval time.Duration
	// MaxTransferThreads bounds the concurrent DataTransferProtocol
	// operations (dfs.datanode.max.transfer.threads; default 4096). 0
	// means the default.
	MaxTransferThreads int
	// Readahead is how far ahead of a block read's send position the
	// DataNode asks the kernel to read the block file
	// (dfs.datanode.readahead.bytes; default 4 MiB). 0 means the default;
	// negative turns it off (a configured 0, as in Hadoop).
	Readahead int64
	// FailedVolumesTolerated is how many volumes may fail before the
	// DataNode stops (dfs.datanode.failed.volumes.tolerated; default 0);
	// -1 means as long as one works. In [-1, len(Volumes)).
	FailedVolumesTolerated int
	// DirectIO writes block data with O_DIRECT
	// (strata.datanode.direct-io.write; default false).
	DirectIO bool
	// DropBehindWrites drops written block data from the page cache once
	// it is on disk (dfs.datanode.drop.cache.behind.writes; default false).
	DropBehindWrites bool
	// Reserved is the bytes per volume left free for other uses
	// (dfs.datanode.du.reserved, k/m/g suffixes; default 0). Not negative.
	Reserved int64
	// VolumeChoosing is the policy placing new replicas,
	// fsdataset.RoundRobin or fsdataset.AvailableSpace
	// (dfs.datanode.fsdataset.volume.choosing.policy, Hadoop's class names
	// accepted; default round-robin). "" means round-robin.
	VolumeChoosing string
	// AvailableSpaceThreshold and AvailableSpacePreference tune the
	// available-space policy: volumes whose free space differs by less
	// than the threshold, in bytes, count as balanced
	// (dfs.datanode.available-space-volume-choosing-policy.balanced-space-threshold;
	// default 10 GiB), and the preference is the share of new replicas
	// going to the emptier ones otherwise (...balanced-space-preference-fraction;
	// default 0.75). 0 means the default.
	AvailableSpaceThreshold  int64
	AvailableSpacePreference float64
	// ScanPeriod is how often the block scanner verifies every replica
	// (dfs.datanode.scan.period.hours, in hours; default 504 h = 3 weeks).
	// Negative disables the scanner; 0 means the default.
	ScanPeriod time.Duration
	// ScanBytesPerSecond is the scanner's read rate per volume
	// (dfs.block.scanner.volume.bytes.per.second, k/m/g suffixes; default
	// 1 MiB/s). 0 means the default.
	ScanBytesPerSecond int64
	// BalanceBandwidth is the bytes per second balancer moves may take,
	// summed over the moves this node serves
	// (dfs.datanode.balance.bandwidthPerSec, default 100 MiB/s);
	// MaxConcurrentMoves how many it serves at once
	// (dfs.datanode.balance.max.concurrent.moves, 100). 0 means the
	// default.
	BalanceBandwidth   int64
	MaxConcurrentMoves int
	// DomainSocketPath is the Unix socket for short-circuit local reads
	// (dfs.domain.socket.path; default "", which disables them); "_PORT"
	// is replaced by the transfer port.
	DomainSocketPath string
	// SocketKeepalive is how long an idle DataTransferProtocol connection
	// waits for its next op (dfs.datanode.socket.reuse.keepalive, in ms;
	// default 4 s). 0 means the default.
	SocketKeepalive time.Duration
	// SocketTimeout bounds every wait for a peer on a DataTransferProtocol
	// connection: the first op, each packet of a write, each ack from the
	// next node of a pipeline, a reader's final status
	// (dfs.client.socket-timeout, in ms; default 60 s, as Hadoop's
	// DataNode uses it). A peer silent that long loses its connection and
	// the transfer slot it held. 0 means the default.
	SocketTimeout time.Duration
	// SocketWriteTimeout bounds each write to a DataTransferProtocol peer
	// (dfs.datanode.socket.write.timeout, in ms; default 480 s). 0 means
	// the default.
	SocketWriteTimeout time.Duration
	// BlockTokens is this DataNode's dfs.block.access.token.enable
	// (default false). Whether tokens are checked is the NameNode's
	// decision, carried by the block keys it hands over at registration;
	// with BlockTokens set the DataNode refuses every op until it has
	// those keys, so it serves nothing unchecked while its NameNode is
	// out of reach.
	BlockTokens bool
	// SASL is data transfer protection (dfs.data.transfer.protection,
	// dfs.encrypt.data.transfer and its cipher keys; sasl.go). It needs
	// BlockTokens.
	SASL SASLConfig
	// FS is the file system the volumes live on (no key); nil means the
	// process's, media.Default(): the OS, with emulated media where
	// strata.media.dirs says. Tests inject faults here (vfs/errorfs).
	FS vfs.FS
	// Logger receives the DataNode's log (no key); nil means
	// slog.Default().
	Logger *slog.Logger
}

// DefaultConfig returns the defaults of every field: ConfigFrom of an
// empty configuration (conf's table), with no NameNode address, and the
// host name and user of this process.
func DefaultConfig() Config {
	cfg, err := ConfigFrom(conf.New(), "")
	if err != nil {
		panic("datanode: the defaults in conf's table do not parse: " + err.Error())
	}
	return cfg
}

// ConfigFrom reads a DataNode Config from Hadoop configuration keys
// (unset keys take their defaults from conf's table), for the NameNode at
// nameNodeAddr: an hdfs:// authority, host:port or a nameservice id (see
// nameNodeAddrs). Fields without a key take DefaultConfig's values. Bad
// values are reported together; the Config is not validated (New does).
func ConfigFrom(c *conf.Configuration, nameNodeAddr string) (Config, error) {
	r := conf.NewReader(c, "datanode")
	cfg := Config{
		XferAddr: c.Get(keyAddress), HTTPAddr: c.Get(keyHTTPAddress),
		DomainSocketPath: c.Get(keyDomainSocket), User: currentUser(),
	}
	addrs, err := nameNodeAddrs(c, nameNodeAddr)
	r.AddAs(err)
	if len(addrs) > 0 {
		cfg.NameNodeAddrs, cfg.NameNodeAddr = addrs, addrs[0]
	}
	cfg.NameNodeHTTPAddrs = nameNodeHTTPAddrs(c)
	cfg.CORSOrigins = c.GetStrings(keyCORSOrigins)
	cfg.Hostname, cfg.DNSInterface = c.GetTrimmed(keyHostname), c.GetTrimmed(keyDNSInterface)
	cfg.UseDatanodeHostname, _ = c.GetBool(keyUseDNHostname)
	if cfg.Hostname == "" {
		cfg.Hostname = c.GetTrimmed(keySlaveHostName)
	}
	ds, err := fsdataset.ConfigFrom(c)
	r.AddAs(err)
	cfg.Volumes, cfg.FailedVolumesTolerated, cfg.VolumeChoosing = ds.Volumes, ds.FailedVolumesTolerated, ds.Choosing
	cfg.AvailableSpaceThreshold, cfg.AvailableSpacePreference = ds.AvailableSpaceThreshold, ds.AvailableSpacePreference
	cfg.Reserved, cfg.DirectIO, cfg.DropBehindWrites = ds.Reserved, ds.DirectIO, ds.DropBehindWrites
	cfg.HeartbeatInterval = r.Duration(keyHeartbeat, time.Second)
	cfg.BlockReportInterval = r.Duration(keyBlockReport, time.Millisecond)
	cfg.SocketKeepalive = r.Duration(keyKeepalive, time.Millisecond)
	cfg.SocketTimeout = r.Duration(keySocketTimeout, time.Millisecond)
	cfg.SocketWriteTimeout = r.Duration(keyWriteTimeout, time.Millisecond)
	cfg.BlockTokens = r.Bool(keyBlockTokens)
	cfg.SASL = saslConfigFrom(c, r)
	cfg.PProf = r.Bool("strata.http.pprof.enabled")
	httpAuth, err := httpauth.ConfigFrom(c)
	r.AddAs(err)
	cfg.HTTPAuth = httpAuth
	cfg.MaxTransferThreads = int(r.Int(keyMaxTransfer))
	if cfg.Readahead = r.Bytes(keyReadahead); cfg.Readahead == 0 {
		cfg.Readahead = -1
	}
	if hours := r.Int(keyScanPeriod); hours < 0 {
		cfg.ScanPeriod = -1
	} else {
		cfg.ScanPeriod = time.Duration(hours) * time.Hour
	}
	cfg.ScanBytesPerSecond = r.Bytes(keyScanBytesPerSecond)
	cfg.BalanceBandwidth = r.Bytes(keyBalanceBandwidth)
	cfg.MaxConcurrentMoves = int(r.Int(keyBalanceMoves))
	r.AddAs(secureConfig(c, &cfg))
	return cfg, r.Err()
}

// nameNodeAddrs are the NameNodes a DataNode serves, as Hadoop's
// DFSUtil.getNNServiceRpcAddressesForCluster finds them: with
// dfs.nameservices set, every member of the nameservice (the one
// fs.defaultFS or authority names when several are listed: strata
// DataNodes serve one block pool, there is no federation); else the one
// NameNode authority names ("" for none), which may itself be a
// nameservice id.
func nameNodeAddrs(c *conf.Configuration, authority string) ([]string, error) {
	ids := nameservice.IDs(c)
	if len(ids) == 0 {
		if authority == "" {
			return nil, nil
		}
		return nameservice.Resolve(c, authority)
	}
	id := ids[0]
	if len(ids) > 1 {
		id = ""
		def := strings.TrimPrefix(c.Get(keyDefaultFS), "hdfs://")
		def, _, _ = strings.Cut(def, "/")
		for _, want := range []string{authority, def} {
			if slices.Contains(ids, want) {
				id = want
				break
			}
		}
		if id == "" {
			return nil, fmt.Errorf("datanode: %s lists %d nameservices and neither fs.defaultFS nor the NameNode address names one; a DataNode serves one (no federation)", nameservice.KeyNameservices, len(ids))
		}
	}
	ns, ok, err := nameservice.Lookup(c, id)
	if err != nil {
		return nil, err
	}
	if !ok {
		// Listed without dfs.ha.namenodes.<ns>: no HA, one NameNode.
		if authority == "" {
			return nil, nil
		}
		return nameservice.Resolve(c, authority)
	}
	return ns.RPCAddrs(), nil
}

// nameNodeHTTPAddrs are the web UI addresses of the nameservice's
// members that name one, else dfs.namenode.http-address.
func nameNodeHTTPAddrs(c *conf.Configuration) []string {
	var out []string
	for _, id := range nameservice.IDs(c) {
		if ns, ok, err := nameservice.Lookup(c, id); err == nil && ok {
			for _, m := range ns.NameNodes {
				if m.HTTPAddr != "" {
					out = append(out, m.HTTPAddr)
				}
			}
		}
	}
	if len(out) == 0 {
		if a := c.GetTrimmed(keyNameNodeHTTP); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// withDefaults returns c with its "0 means the default" fields (see
// Config) set from DefaultConfig, and a nil Logger made slog.Default().
func (c Config) withDefaults() Config {
	if c.BlockReportInterval == 0 || c.MaxTransferThreads == 0 || c.ScanPeriod == 0 || c.ScanBytesPerSecond == 0 ||
		c.SocketKeepalive == 0 || c.SocketTimeout == 0 || c.SocketWriteTimeout == 0 || c.VolumeChoosing == "" || c.AvailableSpaceThreshold == 0 || c.AvailableSpacePreference == 0 ||
		c.User == "" || c.Readahead == 0 {
		d := DefaultConfig()
		fill(&c.Readahead, d.Readahead)
		fill(&c.BlockReportInterval, d.BlockReportInterval)
		fill(&c.MaxTransferThreads, d.MaxTransferThreads)
		fill(&c.ScanPeriod, d.ScanPeriod)
		fill(&c.ScanBytesPerSecond, d.ScanBytesPerSecond)
		fill(&c.SocketKeepalive, d.SocketKeepalive)
		fill(&c.SocketTimeout, d.SocketTimeout)
		fill(&c.SocketWriteTimeout, d.SocketWriteTimeout)
		fill(&c.VolumeChoosing, d.VolumeChoosing)
		fill(&c.AvailableSpaceThreshold, d.AvailableSpaceThreshold)
		fill(&c.AvailableSpacePreference, d.AvailableSpacePreference)
		fill(&c.User, d.User)
	}
	fill(&c.BalanceBandwidth, defaultBalanceBandwidth)
	fill(&c.MaxConcurrentMoves, defaultMaxConcurrentMoves)
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if len(c.NameNodeAddrs) == 0 && c.NameNodeAddr != "" {
		c.NameNodeAddrs = []string{c.NameNodeAddr}
	}
	if c.NameNodeAddr == "" && len(c.NameNodeAddrs) > 0 {
		c.NameNodeAddr = c.NameNodeAddrs[0]
	}
	return c
}

func fill[T comparable](p *T, v T) {
	var zero T
	if *p == zero {
		*p = v
	}
}

// Validate reports the first field out of range, naming its key.
func (c *Config) Validate() error {
	switch {
	case len(c.Volumes) == 0:
		return fmt.Errorf("datanode: no data directories (%s)", fsdataset.KeyDataDir)
	case c.NameNodeAddr == "" && len(c.NameNodeAddrs) == 0:
		return errors.New("datanode: no NameNode address (fs.defaultFS, dfs.namenode.rpc-address or dfs.nameservices)")
	case len(c.NameNodeAddrs) > nameservice.MaxNameNodes:
		return fmt.Errorf("datanode: %d NameNodes, at most %d", len(c.NameNodeAddrs), nameservice.MaxNameNodes)
	case len(c.NameNodeAddrs) > 0 && c.NameNodeAddr != "" && c.NameNodeAddr != c.NameNodeAddrs[0]:
		return fmt.Errorf("datanode: NameNodeAddr %s is not the first of NameNodeAddrs %v", c.NameNodeAddr, c.NameNodeAddrs)
	case hasDuplicate(c.NameNodeAddrs):
		return fmt.Errorf("datanode: a NameNode address empty or listed twice in %v", c.NameNodeAddrs)
	case c.HeartbeatInterval < 0:
		return fmt.Errorf("datanode: %s must not be negative, got %v", keyHeartbeat, c.HeartbeatInterval)
	case c.BlockReportInterval <= 0:
		return fmt.Errorf("datanode: %s must be positive, got %v", keyBlockReport, c.BlockReportInterval)
	case c.MaxTransferThreads < 1:
		return fmt.Errorf("datanode: %s must be at least 1, got %d", keyMaxTransfer, c.MaxTransferThreads)
	case c.FailedVolumesTolerated < -1 || c.FailedVolumesTolerated >= len(c.Volumes):
		return fmt.Errorf("datanode: %s must be -1 or in [0, %d) for %d volume(s), got %d", fsdataset.KeyFailedTolerated, len(c.Volumes), len(c.Volumes), c.FailedVolumesTolerated)
	case c.Reserved < 0:
		return fmt.Errorf("datanode: %s must not be negative, got %d", fsdataset.KeyReserved, c.Reserved)
	case c.VolumeChoosing != "" && c.VolumeChoosing != fsdataset.RoundRobin && c.VolumeChoosing != fsdataset.AvailableSpace:
		return fmt.Errorf("datanode: %s: unknown volume choosing policy %q (want %s or %s)", fsdataset.KeyChoosingPolicy, c.VolumeChoosing, fsdataset.RoundRobin, fsdataset.AvailableSpace)
	case c.AvailableSpaceThreshold < 0:
		return fmt.Errorf("datanode: %s must be positive, got %d", fsdataset.KeyBalancedThreshold, c.AvailableSpaceThreshold)
	case !(c.AvailableSpacePreference >= 0 && c.AvailableSpacePreference <= 1):
		return fmt.Errorf("datanode: %s must be in (0, 1], got %v", fsdataset.KeyBalancedPreference, c.AvailableSpacePreference)
	case c.ScanBytesPerSecond < 0:
		return fmt.Errorf("datanode: %s must be positive, got %d", keyScanBytesPerSecond, c.ScanBytesPerSecond)
	case c.SocketKeepalive < 0:
		return fmt.Errorf("datanode: %s must not be negative, got %v", keyKeepalive, c.SocketKeepalive)
	case c.SocketTimeout < 0:
		return fmt.Errorf("datanode: %s must be positive, got %v", keySocketTimeout, c.SocketTimeout)
	case c.SocketWriteTimeout < 0:
		return fmt.Errorf("datanode: %s must be positive, got %v", keyWriteTimeout, c.SocketWriteTimeout)
	}
	return c.SASL.validate(c.BlockTokens)
}

func hasDuplicate(s []string) bool {
	seen := map[string]bool{}
	for _, v := range s {
		if seen[v] || v == "" {
			return true
		}
		seen[v] = true
	}
	return false
}

func currentUser() string {
	if u := os.Getenv("HADOOP_USER_NAME"); u != "" {
		return u
	}
	if u := os.Getenv("USER"); u != "" {
		return u
	}
	return "root"
}

// sourceIP is the address the DataNode connects to its NameNodes from:
// the transfer address's host when it is a specific IP, so that the
// NameNode (which knows DataNodes by their connection's address) gives
// clients an address the DataNode serves on; else "" (the system picks).
func (c Config) sourceIP() string {
	host, _, err := net.SplitHostPort(c.XferAddr)
	if err != nil {
		return ""
	}
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
		return host
	}
	return ""
}
