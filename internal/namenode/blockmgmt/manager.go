package blockmgmt

import (
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"
)

// Config is what block management needs of the NameNode's configuration.
type Config struct {
	// MinReplication is dfs.namenode.replication.min: good replicas a
	// block needs before its file can be closed.
	MinReplication int
	// HeartbeatExpiry is how long a DataNode may stay silent before it is
	// declared dead.
	HeartbeatExpiry time.Duration
	// MaxReplicationStreams bounds the copies scheduled from one DataNode
	// at a time; ReplicationTimeout re-schedules a copy not reported done
	// (and bounds how long a node told to delete a replica is skipped as a
	// copy target).
	MaxReplicationStreams int
	ReplicationTimeout    time.Duration
	// SafeModeThreshold is the fraction of blocks that must have a good
	// replica before the startup safe mode ends, SafeModeExtension how
	// long it lasts after that.
	SafeModeThreshold float64
	SafeModeExtension time.Duration
	// MaxQueuedReports bounds the DataNode reports a standby holds back
	// (see SetStandby); 0 means DefaultMaxQueuedReports.
	MaxQueuedReports int
	// MaintenanceMinReplication is
	// dfs.namenode.maintenance.replication.min: live replicas a block
	// keeps while others are on nodes in maintenance (0: 1).
	MaintenanceMinReplication int
}

// Options are a Manager's collaborators.
type Options struct {
	Logger *slog.Logger // nil: slog.Default()
	// Now is the clock; nil means time.Now. Tests pass a fake.
	Now func() time.Time
	// Rand drives placement and the order of read locations; nil means a
	// fixed-seed PCG, as the NameNode has always used.
	Rand *rand.Rand
	// ClientRack places a reader that is not a DataNode (for the order of
	// read locations); it must not block. nil: readers are on no rack.
	ClientRack func(ip string) string
}

// Manager is block management: the block map's replicas, DataNode
// descriptors, placement, replication, recovery and safe mode.
//
// A Manager is not safe for concurrent use. The NameNode calls it with
// its namesystem lock held (the write lock for every method that changes
// state; the read lock suffices for the read-only ones: GoodReplicas,
// Locations, DatanodeReport, Storages, Stats, SafeModeTip, InSafeMode,
// Live, Datanode, Storage, Recovering, Pending).
type Manager struct {
	cfg    Config
	log    *slog.Logger
	now    func() time.Time
	rng    *lockedRand
	blocks *BlockMap
	dns    *datanodes

	pending       map[uint64]*pendingReplication
	recovering    map[uint64]*blockRecovery
	satisfy       map[uint64]bool // files whose replicas the mover asked to place by policy
	manualSafe    bool            // safe mode entered by an administrator
	startupSafe   bool            // safe mode until enough blocks are reported
	safeReachedAt time.Time
	replStats     ReplicationStats
	standby       bool         // see SetStandby
	queued        *reportQueue // reports a standby holds back
	hosts         *Hosts       // dfs.hosts / dfs.hosts.exclude (SetHosts)
	delHints      map[uint64]string
	clientRack    func(ip string) string
	passRacks     int // racks in service during a Replicate pass, 0 outside one
	needed        replicationQueue
}

// New returns a Manager for the blocks in blocks, with no DataNodes.
func New(cfg Config, blocks *BlockMap, o Options) *Manager {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Rand == nil {
		o.Rand = rand.New(rand.NewPCG(1, 2))
	}
	rng := &lockedRand{r: o.Rand}
	m := &Manager{
		cfg: cfg, log: o.Logger, now: o.Now, rng: rng, blocks: blocks,
		dns:        newDatanodes(rng),
		pending:    map[uint64]*pendingReplication{},
		recovering: map[uint64]*blockRecovery{},
		satisfy:    map[uint64]bool{},
		queued:     newReportQueue(cfg.MaxQueuedReports),
		delHints:   map[uint64]string{},
		clientRack: o.ClientRack,
	}
	m.needed.init()
	blocks.touched = m.touched
	blocks.changed = m.recheck
	blocks.changedAll = m.recheckAll
	blocks.watching = func() bool { return !m.standby && !m.needed.all }
	return m
}

// Blocks is the block map the Manager works on.
func (m *Manager) Blocks() *BlockMap { return m.blocks }

// lockedRand lets readers holding only the namesystem's read lock shuffle
// locations while writers place replicas.
type lockedRand struct {
	mu sync.Mutex
	r  *rand.Rand
}

func (l *lockedRand) IntN(n int) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.r.IntN(n)
}

func (l *lockedRand) Shuffle(n int, swap func(i, j int)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.r.Shuffle(n, swap)
}
