package blockmgmt

import (
	"time"
)

// AdminState is a DataNode's administrative state (Hadoop's
// DatanodeInfo.AdminStates). The transitions:
//
//	Normal → DecommissionInProgress → Decommissioned    (excluded by the hosts files)
//	Normal → EnteringMaintenance → InMaintenance         (IN_MAINTENANCE in the JSON hosts file)
//	any → Normal                                         (no longer listed, or maintenance expired)
//
// A node leaves DecommissionInProgress (EnteringMaintenance) once every
// block it holds has enough live replicas on in-service nodes elsewhere
// (checkAdmin). Nodes not Normal receive no new replicas; their replicas
// are read, after those of in-service nodes, and serve as copy sources.
type AdminState uint8

const (
	Normal AdminState = iota
	DecommissionInProgress
	Decommissioned
	EnteringMaintenance
	InMaintenance
)

// String is Hadoop's AdminStates value string.
func (s AdminState) String() string {
	switch s {
	case DecommissionInProgress:
		return "Decommission In Progress"
	case Decommissioned:
		return "Decommissioned"
	case EnteringMaintenance:
		return "Entering Maintenance"
	case InMaintenance:
		return "In Maintenance"
	}
	return "In Service"
}

func (s AdminState) decommission() bool {
	return s == DecommissionInProgress || s == Decommissioned
}

func (s AdminState) maintenance() bool { return s == EnteringMaintenance || s == InMaintenance }

// InService reports whether d takes new replicas and its replicas count
// as live.
func (d *Datanode) InService() bool { return !d.Dead && d.AdminState == Normal }

// DisallowedError is a registration or heartbeat of a DataNode the hosts
// files do not include (Hadoop's DisallowedDatanodeException).
type DisallowedError struct{ Node string }

func (e *DisallowedError) Error() string {
	return "Datanode denied communication with namenode because the host is not in the include-list: " + e.Node
}

// SetHosts installs what the hosts files say (refreshNodes, and at
// start) and applies it to every registered DataNode: nodes no longer
// included are disallowed (their next heartbeat is refused and they are
// treated as dead), the others start or stop decommissioning and
// maintenance.
func (m *Manager) SetHosts(h *Hosts) {
	m.hosts = h
	for _, d := range m.sortedDatanodes() {
		if !h.Included(d) {
			if !d.Disallowed {
				m.log.Warn("namenode: datanode no longer in the include list; disallowed", "datanode", d.String())
				d.Disallowed = true
				m.markDead(d)
			}
			continue
		}
		m.applyAdmin(d, m.now())
	}
}

// Hosts returns the hosts configuration in force.
func (m *Manager) Hosts() *Hosts { return m.hosts }

// applyAdmin moves d towards the state the hosts files want of it.
func (m *Manager) applyAdmin(d *Datanode, now time.Time) {
	rule := m.hosts.Wanted(d)
	switch rule.State {
	case Decommissioned:
		if !d.AdminState.decommission() {
			m.setAdmin(d, DecommissionInProgress, now)
		}
	case InMaintenance:
		if !rule.MaintenanceExpire.IsZero() && !rule.MaintenanceExpire.After(now) {
			m.stopAdmin(d, now) // expired before it began
			return
		}
		d.MaintenanceExpire = rule.MaintenanceExpire
		if !d.AdminState.maintenance() {
			m.setAdmin(d, EnteringMaintenance, now)
		}
	default:
		m.stopAdmin(d, now)
	}
}

func (m *Manager) setAdmin(d *Datanode, s AdminState, now time.Time) {
	if d.AdminState == s {
		return
	}
	m.log.Info("namenode: datanode admin state", "datanode", d.String(), "from", d.AdminState.String(), "to", s.String())
	d.AdminState = s
	d.AdminStart = now
	m.recheckNode(d) // its replicas count differently now
}

// stopAdmin returns d to service. A dead node leaving maintenance loses
// the replicas kept for it; surplus replicas of a returning node are
// removed by the excess pass.
func (m *Manager) stopAdmin(d *Datanode, now time.Time) {
	if d.AdminState == Normal {
		return
	}
	m.setAdmin(d, Normal, now)
	d.MaintenanceExpire = time.Time{}
	if d.Dead {
		m.removeReplicasOf(d)
	}
}

// checkAdmin is the admin monitor (Hadoop's DatanodeAdminManager): nodes
// whose maintenance expired return to service; a node decommissioning
// (entering maintenance) whose every block is sufficiently replicated
// elsewhere becomes Decommissioned (InMaintenance) — once its full block
// report since (re-)registration has been processed.
func (m *Manager) checkAdmin(now time.Time) {
	for _, d := range m.sortedDatanodes() {
		if d.AdminState.maintenance() && !d.MaintenanceExpire.IsZero() && now.After(d.MaintenanceExpire) {
			m.log.Info("namenode: maintenance expired", "datanode", d.String())
			m.stopAdmin(d, now)
			continue
		}
		if d.AdminState != DecommissionInProgress && d.AdminState != EnteringMaintenance {
			continue
		}
		// Without a block report since registration the node's blocks
		// are unknown, and an empty list is not "all copied".
		if d.reported && m.allSufficient(d) {
			next := Decommissioned
			if d.AdminState == EnteringMaintenance {
				next = InMaintenance
			}
			m.setAdmin(d, next, now)
		}
	}
}

// allSufficient reports whether every block on d has enough live replicas
// without d.
func (m *Manager) allSufficient(d *Datanode) bool {
	for _, st := range d.Storages {
		for _, b := range st.Blocks {
			if !m.sufficient(b) {
				return false
			}
		}
	}
	return true
}

// sufficient is DatanodeAdminManager.isSufficient: enough live replicas
// with the rack spread; the last block of a file being written needs the
// minimum replication only.
func (m *Manager) sufficient(b *Block) bool {
	if b.File == nil {
		return true // removed: its replicas are being deleted
	}
	live, maint := m.countReplicas(b)
	want := b.File.ReplicationFactor()
	if len(live) >= m.requiredLive(want, maint) && m.rackSatisfied(want, live) {
		return true
	}
	if b.File.IsUnderConstruction() && b == b.File.LastBlock() {
		return len(live) >= m.cfg.MinReplication
	}
	return false
}

// countReplicas returns b's good replicas on in-service nodes, and the
// number of its replicas on nodes entering or in maintenance (those of an
// in-maintenance node count while it is down: that is maintenance).
func (m *Manager) countReplicas(b *Block) (live []*Replica, maint int) {
	for _, r := range SortedReplicas(b) {
		d := r.Storage.DN
		if d.AdminState.maintenance() && (!d.Dead || d.AdminState == InMaintenance) &&
			r.Final && !r.Corrupt && !r.Storage.Failed && r.GenStamp == b.GenStamp {
			maint++
			continue
		}
		if isGood(b, r) && d.AdminState == Normal {
			live = append(live, r)
		}
	}
	return live, maint
}

// requiredLive is BlockManager.getExpectedLiveRedundancyNum: replicas on
// maintenance nodes stand in for live ones down to
// dfs.namenode.maintenance.replication.min.
func (m *Manager) requiredLive(want, maint int) int {
	minMaint := min(m.cfg.MaintenanceMinReplication, want)
	if m.cfg.MaintenanceMinReplication <= 0 {
		minMaint = min(1, want)
	}
	return max(want-maint, minMaint)
}
