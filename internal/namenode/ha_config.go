package namenode

import (
	"fmt"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/nameservice"
)

const (
	keyHAHeartbeatTimeout   = "strata.ha.raft.heartbeat.timeout.ms"
	keyHAElectionTimeout    = "strata.ha.raft.election.timeout.ms"
	keyHALeaderLeaseTimeout = "strata.ha.raft.leader-lease.timeout.ms"
	keyHASnapshotInterval   = "strata.ha.raft.snapshot.interval.ms"
	keyHATrailingLogs       = "strata.ha.raft.trailing-logs"
)

// HAConfig is this NameNode's place in an HA nameservice. Members' RPC
// addresses are also their Raft addresses (one port, two protocols).
type HAConfig struct {
	Nameservice string
	ID          string // this member (dfs.ha.namenode.id or found by address)
	Members     []nameservice.NameNode

	// Raft timing: a standby that hears no leader for HeartbeatTimeout
	// starts an election; an active that reaches no quorum for
	// LeaderLeaseTimeout steps down (it must be shorter than
	// HeartbeatTimeout so that a deposed active stops serving before a
	// new one is elected).
	HeartbeatTimeout   time.Duration
	ElectionTimeout    time.Duration
	LeaderLeaseTimeout time.Duration
	// SnapshotInterval is how often the member checks whether
	// dfs.namenode.checkpoint.txns edits accumulated since its last
	// snapshot.
	SnapshotInterval time.Duration
	// TrailingLogs is how many entries a snapshot leaves in the log, for
	// members that lag a little; one further behind gets the snapshot.
	TrailingLogs uint64
}

// haConfigFrom sets cfg.HA (and the RPC and HTTP addresses, which are the
// member's) when c configures a nameservice this NameNode belongs to.
func haConfigFrom(c *conf.Configuration, r *conf.Reader, cfg *Config) {
	self, ns, ok, err := nameservice.Self(c, "", nil)
	if err != nil {
		r.Add(err)
		return
	}
	if !ok {
		return
	}
	cfg.HA = &HAConfig{
		Nameservice: ns.ID, ID: self.ID, Members: ns.NameNodes,
		HeartbeatTimeout:   r.Duration(keyHAHeartbeatTimeout, time.Millisecond),
		ElectionTimeout:    r.Duration(keyHAElectionTimeout, time.Millisecond),
		LeaderLeaseTimeout: r.Duration(keyHALeaderLeaseTimeout, time.Millisecond),
		SnapshotInterval:   r.Duration(keyHASnapshotInterval, time.Millisecond),
		TrailingLogs:       uint64(max(0, r.Int(keyHATrailingLogs))),
	}
	cfg.RPCAddr = self.RPCAddr
	if self.HTTPAddr != "" {
		cfg.HTTPAddr = self.HTTPAddr
	}
}

func (h *HAConfig) validate() error {
	switch {
	case h.TrailingLogs == 0:
		return fmt.Errorf("namenode: %s must be at least 1", keyHATrailingLogs)
	case h.HeartbeatTimeout <= 0 || h.ElectionTimeout <= 0 || h.LeaderLeaseTimeout <= 0 || h.SnapshotInterval <= 0:
		return fmt.Errorf("namenode: "+"%s, %s, %s and %s must be positive", keyHAHeartbeatTimeout, keyHAElectionTimeout, keyHALeaderLeaseTimeout, keyHASnapshotInterval)
	case h.LeaderLeaseTimeout >= h.HeartbeatTimeout:
		return fmt.Errorf("namenode: "+"%s (%v) must be shorter than %s (%v)", keyHALeaderLeaseTimeout, h.LeaderLeaseTimeout, keyHAHeartbeatTimeout, h.HeartbeatTimeout)
	}
	return nil
}
