package datanode

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/httpauth"
	"github.com/stratafs/strata/internal/webui"
)

// DataNode is the DataNode daemon. Lifecycle: New (opens the volumes) →
// Start (listens, registers with the NameNode) → Close.
type DataNode struct {
	cfg Config
	// origins caches the origins the browse page's uploads may come from.
	origins originCache
	log     *slog.Logger
	data    *fsdataset.Dataset

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	xferLn   net.Listener
	unixLn   net.Listener
	httpLn   net.Listener
	httpSrv  *http.Server
	actors   []*nnActor // one per NameNode, in Config.NameNodeAddrs order
	ha       haState
	xceivers atomic.Int64
	slots    chan struct{}

	// heartbeat is the interval each actor starts with, until its
	// NameNode's arrives at registration.
	heartbeat time.Duration

	poolMu    sync.Mutex
	poolID    string
	clusterID string

	connsMu sync.Mutex
	conns   map[net.Conn]struct{}

	// tokens is the block pool's token state, nil until a NameNode
	// hands keys over (tokensMu orders the updates); registeredOnce is set
	// at the first registration.
	tokens         atomic.Pointer[poolTokens]
	tokensMu       sync.Mutex
	registeredOnce atomic.Bool
	// refuseNextToken makes the next token check refuse, whatever the
	// token (a test's fault point: a token that expired in flight).
	refuseNextToken atomic.Bool

	closeOnce sync.Once
	closeErr  error
	ready     chan struct{}

	// copying holds the new block ids of copy-on-truncates in progress
	// (copytruncate.go): one copy per block at a time.
	copyingMu sync.Mutex
	copying   map[uint64]bool

	stats Stats

	// errs keeps the latest warnings and errors for the web page; scan is
	// the block scanner's progress (webui.go).
	errs *webui.RecentErrors
	scan scanProgress
	// balance bounds and throttles balancer moves (balance.go).
	balance *balancing
}

// Stats are the DataNode's counters.
type Stats struct {
	BytesWritten, BytesRead, BlocksWritten, BlocksRead, BlocksReplicated, ChecksumErrors, ShortCircuitReads atomic.Int64
	// TokenRefusals counts ops and WebHDFS requests refused for their
	// block or redirect token; Panics counts recovered panics.
	TokenRefusals, Panics atomic.Int64
	// SASLRefusals counts connections dropped at the data transfer
	// protection handshake (sasl.go).
	SASLRefusals atomic.Int64
}

// New validates cfg (after giving its zero fields their defaults, see
// Config) and opens the volumes. It does not listen until Start.
func New(cfg Config) (*DataNode, error) {
	cfg = cfg.withDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.secureLogin(); err != nil {
		return nil, err
	}
	errs := webui.NewRecentErrors(recentErrors)
	cfg.Logger = slog.New(errs.Wrap(cfg.Logger.Handler()))
	dn := &DataNode{cfg: cfg, log: cfg.Logger, errs: errs, slots: make(chan struct{}, cfg.MaxTransferThreads), conns: map[net.Conn]struct{}{}, ready: make(chan struct{})}
	dn.heartbeat = cfg.HeartbeatInterval
	dn.balance = newBalancing(cfg.BalanceBandwidth, cfg.MaxConcurrentMoves, time.Now)
	if dn.heartbeat <= 0 {
		dn.heartbeat = defaultHeartbeat // until the NameNode's, at registration
	}
	for i, addr := range cfg.NameNodeAddrs {
		dn.actors = append(dn.actors, newActor(dn, i, addr))
	}
	data, err := fsdataset.Open(fsdataset.Config{
		Volumes: cfg.Volumes, FailedVolumesTolerated: cfg.FailedVolumesTolerated, Choosing: cfg.VolumeChoosing,
		AvailableSpaceThreshold: cfg.AvailableSpaceThreshold, AvailableSpacePreference: cfg.AvailableSpacePreference,
		BytesPerChecksum: fsdataset.DefaultBytesPerChecksum, Reserved: cfg.Reserved, DirectIO: cfg.DirectIO,
		DropBehindWrites: cfg.DropBehindWrites, Logger: cfg.Logger,
		OnChange: dn.onChange, FS: cfg.FS,
	})
	if err != nil {
		return nil, err
	}
	dn.data = data
	dn.ctx, dn.cancel = context.WithCancel(context.Background())
	return dn, nil
}

// Dataset returns the replica store, for tests and tools.
func (d *DataNode) Dataset() *fsdataset.Dataset { return d.data }

// UUID is the DataNode's stable identity.
func (d *DataNode) UUID() string { return d.data.DatanodeUUID() }

// Start listens and begins talking to the NameNodes.
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
		hc := d.cfg.HTTPAuth
		hc.Addr = d.cfg.HTTPAddr
		if hc.Log == nil {
			hc.Log = d.log
		}
		auth, err := httpauth.New(hc)
		if err != nil {
			ln.Close()
			return fmt.Errorf("datanode: HTTP authentication: %w", err)
		}
		hl, err := net.Listen("tcp", d.cfg.HTTPAddr)
		if err != nil {
			ln.Close()
			return fmt.Errorf("datanode: HTTP address %s: %w", d.cfg.HTTPAddr, err)
		}
		d.httpLn = hl
		// Whole-request bounds for the small handlers; WebHDFS streams
		// extend them chunk by chunk (idleTimeout), so a transfer of any
		// size runs while it moves and fails once it stalls.
		d.httpSrv = &http.Server{Handler: d.httpHandler(auth), ReadHeaderTimeout: 10 * time.Second,
			ReadTimeout: idleTimeout, WriteTimeout: idleTimeout, IdleTimeout: idleTimeout,
			ErrorLog: slog.NewLogLogger(d.log.Handler(), slog.LevelWarn)}
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			d.httpSrv.Serve(hl)
		}()
	}
	d.wg.Add(3 + len(d.actors))
	go func() {
		defer d.wg.Done()
		d.acceptLoop(d.xferLn)
	}()
	go func() {
		defer d.wg.Done()
		d.scanBlocks()
	}()
	for _, a := range d.actors {
		go func() {
			defer d.wg.Done()
			a.run(d.ctx)
		}()
	}
	go func() {
		defer d.wg.Done()
		d.checkVolumes()
	}()
	d.log.Info("datanode: serving", "xfer", ln.Addr().String(), "http", d.HTTPAddr(), "namenodes", d.cfg.NameNodeAddrs, "volumes", len(d.cfg.Volumes))
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

// setPool records the block pool and cluster the NameNodes serve. The
// NameNodes of one nameservice share them; a NameNode naming another pool
// than the one already served is refused, as Hadoop's BPOfferService
// does.
func (d *DataNode) setPool(pool, cluster string) error {
	d.poolMu.Lock()
	defer d.poolMu.Unlock()
	if d.poolID != "" && (pool != d.poolID || cluster != d.clusterID) {
		return fmt.Errorf("datanode: namenode serves block pool %s of cluster %s, not %s of %s", pool, cluster, d.poolID, d.clusterID)
	}
	d.poolID, d.clusterID = pool, cluster
	return nil
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
		for _, a := range d.actors {
			a.nn.Close()
		}
		d.wg.Wait()
		d.closeErr = d.data.Close()
	})
	return d.closeErr
}
