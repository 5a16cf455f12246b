package datanode

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/vfs"
)

// Config configures a DataNode. ConfigFrom reads Hadoop's keys.
type Config struct {
	// Volumes are the data directories with their storage types
	// (dfs.datanode.data.dir, e.g. "[SSD]/data/ssd,[DISK]/data/disk").
	Volumes []fsdataset.VolumeConfig
	// NameNodeAddr is the NameNode's RPC host:port.
	NameNodeAddr string
	// XferAddr is the DataTransferProtocol address (dfs.datanode.address,
	// 0.0.0.0:9866); HTTPAddr the web/metrics address
	// (dfs.datanode.http.address, 0.0.0.0:9864; "" disables it). Port 0
	// picks a free port.
	XferAddr string
	HTTPAddr string
	// Hostname and AdvertisedIP are what the NameNode gives clients; an
	// empty AdvertisedIP makes the NameNode use the address it sees.
	Hostname     string
	AdvertisedIP string
	// User is the user the DataNode acts as towards the NameNode (the
	// NameNode's superuser).
	User string
	// HeartbeatInterval (dfs.heartbeat.interval, 3 s); 0 takes the
	// NameNode's. BlockReportInterval (dfs.blockreport.intervalMsec, 6 h).
	HeartbeatInterval   time.Duration
	BlockReportInterval time.Duration
	// MaxTransferThreads bounds concurrent DataTransferProtocol operations
	// (dfs.datanode.max.transfer.threads, 4096).
	MaxTransferThreads int
	// FailedVolumesTolerated (dfs.datanode.failed.volumes.tolerated, 0).
	FailedVolumesTolerated int
	// DirectIO writes block data with O_DIRECT
	// (strata.datanode.direct-io.write, false).
	DirectIO bool
	// Reserved bytes per volume (dfs.datanode.du.reserved, 0).
	Reserved int64
	// VolumeChoosing is "round-robin" or "available-space"
	// (dfs.datanode.fsdataset.volume.choosing.policy).
	VolumeChoosing string
	// ScanPeriod is how often the block scanner verifies every replica
	// (dfs.datanode.scan.period.hours, 3 weeks; negative disables it), at
	// up to ScanBytesPerSecond (dfs.block.scanner.volume.bytes.per.second,
	// 1 MiB/s).
	ScanPeriod         time.Duration
	ScanBytesPerSecond int64
	// DomainSocketPath is the Unix socket for short-circuit local reads
	// (dfs.domain.socket.path; "_PORT" is replaced by the transfer port;
	// "" disables them).
	DomainSocketPath string
	// SocketKeepalive is how long an idle DataTransferProtocol connection
	// waits for its next op (dfs.datanode.socket.reuse.keepalive, 4 s).
	SocketKeepalive time.Duration
	// FS is the file system the volumes live on; nil means the process's
	// (media.Default(): the OS, with emulated media where configured).
	// Tests inject faults here (vfs/errorfs).
	FS     vfs.FS
	Logger *slog.Logger
}

// ConfigFrom reads a DataNode Config from Hadoop configuration keys.
func ConfigFrom(c *conf.Configuration, nameNodeAddr string) (Config, error) {
	var errs []error
	cfg := Config{NameNodeAddr: nameNodeAddr, XferAddr: c.Get("dfs.datanode.address"), HTTPAddr: c.Get("dfs.datanode.http.address"),
		DomainSocketPath: c.Get("dfs.domain.socket.path")}
	vols, err := fsdataset.ParseDataDirs(c.Get("dfs.datanode.data.dir"))
	if err != nil {
		errs = append(errs, err)
	}
	cfg.Volumes = vols
	if d, err := c.GetDuration("dfs.heartbeat.interval", time.Second); err == nil {
		cfg.HeartbeatInterval = d
	} else {
		errs = append(errs, err)
	}
	if d, err := c.GetDuration("dfs.blockreport.intervalMsec", time.Millisecond); err == nil {
		cfg.BlockReportInterval = d
	} else {
		errs = append(errs, err)
	}
	if v, err := c.GetInt("dfs.datanode.max.transfer.threads"); err == nil {
		cfg.MaxTransferThreads = int(v)
	} else {
		errs = append(errs, err)
	}
	if v, err := c.GetInt("dfs.datanode.failed.volumes.tolerated"); err == nil {
		cfg.FailedVolumesTolerated = int(v)
	} else {
		errs = append(errs, err)
	}
	if v, err := c.GetBool("strata.datanode.direct-io.write"); err == nil {
		cfg.DirectIO = v
	} else {
		errs = append(errs, err)
	}
	if c.Get("dfs.datanode.du.reserved") != "" {
		if v, err := c.GetBytes("dfs.datanode.du.reserved"); err == nil {
			cfg.Reserved = v
		} else {
			errs = append(errs, err)
		}
	}
	if c.Get("dfs.datanode.scan.period.hours") != "" {
		if v, err := c.GetInt("dfs.datanode.scan.period.hours"); err == nil {
			cfg.ScanPeriod = time.Duration(v) * time.Hour
			if v < 0 {
				cfg.ScanPeriod = -1
			}
		} else {
			errs = append(errs, err)
		}
	}
	if c.Get("dfs.block.scanner.volume.bytes.per.second") != "" {
		if v, err := c.GetBytes("dfs.block.scanner.volume.bytes.per.second"); err == nil {
			cfg.ScanBytesPerSecond = v
		} else {
			errs = append(errs, err)
		}
	}
	switch p := c.Get("dfs.datanode.fsdataset.volume.choosing.policy"); {
	case p == "" || strings.HasSuffix(p, "RoundRobinVolumeChoosingPolicy") || p == "round-robin":
		cfg.VolumeChoosing = "round-robin"
	case strings.HasSuffix(p, "AvailableSpaceVolumeChoosingPolicy") || p == "available-space":
		cfg.VolumeChoosing = "available-space"
	default:
		errs = append(errs, fmt.Errorf("datanode: unknown volume choosing policy %q (want round-robin or available-space)", p))
	}
	return cfg, errors.Join(errs...)
}

// DataNode is the DataNode daemon. Lifecycle: New (opens the volumes) →
// Start (listens, registers with the NameNode) → Close.
type DataNode struct {
	cfg  Config
	log  *slog.Logger
	data *fsdataset.Dataset

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	xferLn   net.Listener
	unixLn   net.Listener
	httpLn   net.Listener
	httpSrv  *http.Server
	actor    *nnActor
	xceivers atomic.Int64
	slots    chan struct{}

	heartbeat  time.Duration
	lastReport time.Time

	poolMu    sync.Mutex
	poolID    string
	clusterID string

	connsMu sync.Mutex
	conns   map[net.Conn]struct{}

	closeOnce sync.Once
	closeErr  error
	ready     chan struct{}

	stats Stats
}

// Stats are the DataNode's counters.
type Stats struct {
	BytesWritten, BytesRead, BlocksWritten, BlocksRead, BlocksReplicated, ChecksumErrors, ShortCircuitReads atomic.Int64
}

// New opens the volumes. It does not listen until Start.
func New(cfg Config) (*DataNode, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if len(cfg.Volumes) == 0 {
		return nil, errors.New("datanode: no data directories (dfs.datanode.data.dir)")
	}
	if cfg.NameNodeAddr == "" {
		return nil, errors.New("datanode: no NameNode address (fs.defaultFS or dfs.namenode.rpc-address)")
	}
	if cfg.MaxTransferThreads <= 0 {
		cfg.MaxTransferThreads = 4096
	}
	if cfg.BlockReportInterval <= 0 {
		cfg.BlockReportInterval = 6 * time.Hour
	}
	if cfg.SocketKeepalive <= 0 {
		cfg.SocketKeepalive = 4 * time.Second
	}
	if cfg.Hostname == "" {
		cfg.Hostname, _ = os.Hostname()
	}
	if cfg.User == "" {
		cfg.User = currentUser()
	}
	dn := &DataNode{cfg: cfg, log: cfg.Logger, slots: make(chan struct{}, cfg.MaxTransferThreads), conns: map[net.Conn]struct{}{}, ready: make(chan struct{})}
	dn.heartbeat = cfg.HeartbeatInterval
	if dn.heartbeat <= 0 {
		dn.heartbeat = 3 * time.Second
	}
	dn.actor = newActor(dn)
	data, err := fsdataset.Open(fsdataset.Config{
		Volumes: cfg.Volumes, FailedVolumesTolerated: cfg.FailedVolumesTolerated, Choosing: cfg.VolumeChoosing,
		BytesPerChecksum: 512, Reserved: cfg.Reserved, DirectIO: cfg.DirectIO, Logger: cfg.Logger,
		OnChange: dn.actor.onChange, FS: cfg.FS,
	})
	if err != nil {
		return nil, err
	}
	dn.data = data
	dn.ctx, dn.cancel = context.WithCancel(context.Background())
	return dn, nil
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

// Dataset returns the replica store, for tests and tools.
func (d *DataNode) Dataset() *fsdataset.Dataset { return d.data }

// UUID is the DataNode's stable identity.
func (d *DataNode) UUID() string { return d.data.DatanodeUUID() }

// Start listens and begins talking to the NameNode.
func (d *DataNode) Start() error {
	ln, err := net.Listen("tcp", d.cfg.XferAddr)
	if err != nil {
		return fmt.Errorf("datanode: transfer address %s: %w", d.cfg.XferAddr, err)
	}
	d.xferLn = ln
	if err := d.listenDomainSocket(); err != nil {
		ln.Close()
		return err
	}
	if d.cfg.HTTPAddr != "" {
		hl, err := net.Listen("tcp", d.cfg.HTTPAddr)
		if err != nil {
			ln.Close()
			return fmt.Errorf("datanode: HTTP address %s: %w", d.cfg.HTTPAddr, err)
		}
		d.httpLn = hl
		d.httpSrv = &http.Server{Handler: d.httpHandler(), ReadHeaderTimeout: 10 * time.Second}
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.httpSrv.Serve(hl)
		}()
	}
	d.wg.Add(4)
	go func() {
		defer d.wg.Done()
		d.acceptLoop(d.xferLn)
	}()
	go func() {
		defer d.wg.Done()
		d.scanBlocks()
	}()
	go func() {
		defer d.wg.Done()
		d.actor.run(d.ctx)
	}()
	go func() {
		defer d.wg.Done()
		d.checkVolumes()
	}()
	d.log.Info("datanode: serving", "xfer", ln.Addr().String(), "http", d.HTTPAddr(), "namenode", d.cfg.NameNodeAddr, "volumes", len(d.cfg.Volumes))
	close(d.ready)
	return nil
}

// checkVolumes periodically tests the volumes; too many failures stop
// the DataNode from accepting writes (Hadoop shuts the DataNode down).
func (d *DataNode) checkVolumes() {
	t := time.NewTicker(30 * time.Second)
	defer t.Stop()
	for {
		select {
		case <-d.ctx.Done():
			return
		case <-t.C:
			if err := d.CheckVolumes(); err != nil {
				go d.Close()
				return
			}
		}
	}
}

// CheckVolumes tests every volume now (the DataNode also does it every 30
// s). A failed volume is taken out of service and its replicas reported
// deleted, so the NameNode copies them elsewhere; more failures than
// dfs.datanode.failed.volumes.tolerated return an error, and the DataNode
// then stops.
func (d *DataNode) CheckVolumes() error {
	for _, err := range d.data.CheckVolumes() {
		d.log.Error("datanode: volume failed", "err", err)
	}
	if err := d.data.Failed(); err != nil {
		d.log.Error("datanode: too many failed volumes; stopping", "err", err)
		return err
	}
	return nil
}

// Ready is closed once Start has bound its listeners.
func (d *DataNode) Ready() <-chan struct{} { return d.ready }

// XferAddr is the bound DataTransferProtocol address.
func (d *DataNode) XferAddr() string {
	if d.xferLn == nil {
		return ""
	}
	return d.xferLn.Addr().String()
}

// HTTPAddr is the bound HTTP address, or "".
func (d *DataNode) HTTPAddr() string {
	if d.httpLn == nil {
		return ""
	}
	return d.httpLn.Addr().String()
}

func portOf(addr string) int {
	_, p, _ := net.SplitHostPort(addr)
	n, _ := strconv.Atoi(p)
	return n
}

func (d *DataNode) xferPort() int { return portOf(d.XferAddr()) }
func (d *DataNode) httpPort() int { return portOf(d.HTTPAddr()) }
func (d *DataNode) ipcPort() int  { return 0 }

// advertisedIP is the address clients should connect to: the configured
// one, else the listener's if it is specific, else "" (the NameNode uses
// the address the registration came from).
func (d *DataNode) advertisedIP() string {
	if d.cfg.AdvertisedIP != "" {
		return d.cfg.AdvertisedIP
	}
	host, _, _ := net.SplitHostPort(d.XferAddr())
	if ip := net.ParseIP(host); ip != nil && !ip.IsUnspecified() {
		return host
	}
	return ""
}

func (d *DataNode) setPool(pool, cluster string) {
	d.poolMu.Lock()
	d.poolID, d.clusterID = pool, cluster
	d.poolMu.Unlock()
}

func (d *DataNode) pool() string {
	d.poolMu.Lock()
	defer d.poolMu.Unlock()
	return d.poolID
}

// Close stops serving, closes connections and the volumes. Safe to call
// twice.
func (d *DataNode) Close() error {
	d.closeOnce.Do(func() {
		d.cancel()
		if d.xferLn != nil {
			d.xferLn.Close()
		}
		if d.unixLn != nil {
			d.unixLn.Close()
		}
		if d.httpSrv != nil {
			d.httpSrv.Close()
		}
		d.connsMu.Lock()
		for c := range d.conns {
			c.Close()
		}
		d.connsMu.Unlock()
		d.actor.nn.Close()
		d.wg.Wait()
		d.closeErr = d.data.Close()
	})
	return d.closeErr
}
