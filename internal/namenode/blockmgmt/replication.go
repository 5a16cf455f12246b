package blockmgmt

import (
	"fmt"
	"time"

	"github.com/stratafs/strata/internal/storage"
)

// pendingReplication is a transfer scheduled but not yet reported done.
type pendingReplication struct {
	source   *Datanode
	targets  map[string]bool // DataNode uuids still to report the replica
	deadline time.Time
}

func (p *pendingReplication) arrived(uuid string) { delete(p.targets, uuid) }
func (p *pendingReplication) done() bool          { return len(p.targets) == 0 }

func (m *Manager) finishPending(id uint64) {
	m.recheck(id)
	if p := m.pending[id]; p != nil {
		if p.source.pendingTransfers > 0 {
			p.source.pendingTransfers--
		}
		delete(m.pending, id)
	}
}

// ReplicationStats are the counts fsck, metrics and getFsStats report.
type ReplicationStats struct {
	Blocks, UnderReplicated, Corrupt, Missing, PendingReplication, Misplaced int
}

// CheckHeartbeats declares DataNodes dead whose last heartbeat is older
// than the expiry at now, and forgets their replicas so that the blocks
// are copied elsewhere.
func (m *Manager) CheckHeartbeats(now time.Time) {
	for _, d := range m.dns.byUUID {
		if d.Dead || now.Sub(d.LastHeartbeat) <= m.cfg.HeartbeatExpiry {
			continue
		}
		m.markDead(d)
		m.log.Warn("namenode: datanode is dead", "datanode", d.String(), "last_heartbeat", d.LastHeartbeat.Format(time.RFC3339))
	}
}

// markDead takes d out of service. Its replicas are forgotten, so that
// their blocks are copied elsewhere, except on a node in maintenance:
// that is what maintenance is for.
func (m *Manager) markDead(d *Datanode) {
	d.Dead = true
	d.commands = nil
	d.pendingTransfers = 0
	if d.AdminState != InMaintenance {
		m.removeReplicasOf(d)
	} else {
		m.recheckNode(d)
	}
	m.queued.dropStorages(d.SortedStorages()...)
}

// wantedTypes is the storage type each of a file's replicas should have.
func wantedTypes(b *Block) []storage.Type {
	return b.File.EffectivePolicy().ChooseTypes(b.WantReplicas())
}

// Misplaced returns the good replicas whose storage type the policy does
// not want (want has one type per wanted replica), and the wanted types
// that no replica has.
func Misplaced(good []*Replica, want []storage.Type) (extra []*Replica, missing []storage.Type) {
	need := map[storage.Type]int{}
	for _, t := range want {
		need[t]++
	}
	for _, r := range good {
		if need[r.Storage.Type] > 0 {
			need[r.Storage.Type]--
		} else {
			extra = append(extra, r)
		}
	}
	for _, t := range want {
		if need[t] > 0 {
			missing = append(missing, t)
			need[t]--
		}
	}
	return extra, missing
}

// Replicate is one pass of the replication monitor at now, over the
// queued blocks (queue.go) in id order: it re-schedules copies whose
// pending deadline passed, schedules copies of under-replicated blocks
// (from the good replica whose node has the fewest streams, to storages
// chosen by the file's policy), moves for files whose storage policy asks
// for it (SatisfyStoragePolicy), and deletes excess and, once a good copy
// exists, bad replicas. Blocks being written are left alone. It returns
// (and keeps, for Stats) the counts of blocks in trouble. A standby only
// advances admin states (which need no command: a node it sees go down in
// maintenance keeps its replicas, and after a failover is not
// re-replicated) and returns the last counts: the active replicates.
func (m *Manager) Replicate(now time.Time) ReplicationStats {
	if m.standby {
		m.checkAdmin(now)
		return m.replStats
	}
	for id, p := range m.pending {
		if now.After(p.deadline) {
			m.log.Warn("namenode: replication timed out; will retry", "block", fmt.Sprintf("blk_%d", id))
			m.finishPending(id)
		}
	}
	pending := len(m.pending) // before this pass schedules more
	m.passRacks = 0
	m.passRacks = m.numRacks()
	defer func() { m.passRacks = 0 }()
	if m.passRacks != m.needed.racks {
		// Which blocks are spread over enough racks changed with the racks.
		m.needed.racks = m.passRacks
		m.recheckAll()
	}
	if !m.needed.all {
		m.sweepStep()
	}
	for _, id := range m.needed.take(m.blocks) {
		b := m.blocks.Get(id)
		if b == nil {
			m.needed.set(id, 0)
			continue
		}
		trouble, settled := m.check(b, now)
		m.needed.set(id, trouble)
		if !settled {
			m.recheckBlock(b)
		}
	}
	m.checkAdmin(now)
	st := ReplicationStats{
		Blocks:             m.blocks.Len(),
		PendingReplication: pending,
		UnderReplicated:    m.needed.counts[0],
		Corrupt:            m.needed.counts[1],
		Missing:            m.needed.counts[2],
		Misplaced:          m.needed.counts[3],
	}
	m.replStats = st
	return st
}

// check is Replicate's work on one block: it returns what is wrong with
// b, and whether b is settled — nothing to do, nothing wrong, nothing in
// flight — so that it leaves the queue until an event queues it again.
func (m *Manager) check(b *Block, now time.Time) (trouble blockTrouble, settled bool) {
	id := b.ID
	if !b.Committed || b.File == nil || b.File.IsUnderConstruction() && b == b.File.LastBlock() {
		return 0, true // being written (or recovered): not the monitor's; the edit closing it queues it
	}
	good := GoodReplicas(b)
	want := b.WantReplicas()
	corrupt := 0
	for _, r := range b.Replicas {
		if r.Corrupt && !r.Storage.DN.Dead {
			corrupt++
		}
	}
	if corrupt > 0 {
		trouble |= troubleCorrupt
	}
	if len(good) == 0 {
		if b.NumBytes > 0 || corrupt > 0 {
			trouble |= troubleMissing
		}
		return trouble, trouble == 0
	}
	// Replicas on nodes being decommissioned or in maintenance are
	// read and copied but do not count (decommission.go).
	live, maint := m.countReplicas(b)
	required := m.requiredLive(want, maint)
	if len(live) < required {
		trouble |= troubleUnder
	}
	// Copies that are not good — corrupt, of an older generation, or
	// of the wrong length — go as soon as a good copy exists: they
	// hold no data worth keeping and they block their node from
	// receiving a good replica.
	deleted := false
	for _, r := range SortedReplicas(b) {
		if r.Final && !r.Storage.DN.Dead && !isGood(b, r) {
			m.log.Info("namenode: deleting bad replica", "block", b.String(), "datanode", r.Storage.DN.String(),
				"corrupt", r.Corrupt, "replica_gs", r.GenStamp, "replica_len", r.NumBytes)
			m.deleteReplica(r, b, now)
			deleted = true
		}
	}
	_, inPending := m.pending[id]
	fileID := b.File.InodeID()
	extra, missingTypes := Misplaced(live, wantedTypes(b))
	if m.satisfy[fileID] && len(missingTypes) > 0 {
		trouble |= troubleMisplaced
	}
	switch {
	case inPending:
	case len(live) < required:
		m.scheduleTransfer(b, good, live, missingTypes[:min(len(missingTypes), required-len(live))], false, now)
	case len(live) > 0 && !m.rackSatisfied(want, live):
		// Mis-replicated: one more copy on a new rack; the excess
		// pass then deletes one from a crowded rack.
		m.scheduleTransfer(b, good, live, []storage.Type{live[0].Storage.Type}, true, now)
	case m.satisfy[fileID] && len(extra) > 0 && len(missingTypes) > 0:
		// A move: on the same node when it has a volume of the missing
		// type, else a copy elsewhere (the excess pass then deletes the
		// misplaced copy).
		if !m.scheduleLocalMove(b, extra, missingTypes, now) {
			m.scheduleTransfer(b, good, live, missingTypes[:1], false, now)
		}
	case len(live) > want:
		m.removeExcess(b, live, want, now)
	default:
		delete(m.delHints, id)
		return trouble, trouble == 0 && !deleted
	}
	return trouble, false
}

// Stats returns the counts of the latest Replicate, with the current
// number of blocks.
func (m *Manager) Stats() ReplicationStats {
	st := m.replStats
	st.Blocks = m.blocks.Len()
	return st
}

// Pending is the number of blocks with a copy scheduled.
func (m *Manager) Pending() int { return len(m.pending) }

// scheduleTransfer asks a DataNode holding a good replica to copy it to
// new storages of the given types. It skips nodes that already hold a
// replica, and nodes told to delete one less than ReplicationTimeout ago.
func (m *Manager) scheduleTransfer(b *Block, good, live []*Replica, types []storage.Type, newRack bool, now time.Time) {
	if len(types) == 0 {
		return
	}
	// The source: a node on its way out first (it takes no writes, and
	// may exceed the soft stream limit up to twice it, as Hadoop's hard
	// limit), else the one with the fewest streams.
	var src *Replica
	leaving := func(r *Replica) bool {
		s := r.Storage.DN.AdminState
		return s == DecommissionInProgress || s == EnteringMaintenance
	}
	for _, r := range good {
		limit := m.cfg.MaxReplicationStreams
		if leaving(r) {
			limit *= 2
		}
		if r.Storage.DN.pendingTransfers >= limit {
			continue
		}
		switch {
		case src == nil, leaving(r) && !leaving(src):
			src = r
		case leaving(r) == leaving(src) && r.Storage.DN.pendingTransfers < src.Storage.DN.pendingTransfers:
			src = r
		}
	}
	if src == nil {
		return
	}
	exclude := map[string]bool{}
	for _, r := range b.Replicas {
		exclude[r.Storage.DN.UUID] = true
	}
	for uuid, at := range b.Deleting {
		if now.Sub(at) < m.cfg.ReplicationTimeout {
			exclude[uuid] = true
		} else {
			delete(b.Deleting, uuid)
		}
	}
	var existing []*Datanode
	for _, r := range live {
		existing = append(existing, r.Storage.DN)
	}
	targets := m.dns.choose(Placement{Types: types, Policy: b.File.EffectivePolicy(), Exclude: exclude, Need: b.NumBytes,
		Existing: existing, Writer: src.Storage.DN, NewRack: newRack})
	if len(targets) == 0 {
		return
	}
	cmd := Command{Kind: Transfer, Block: BlockRef{ID: b.ID, GenStamp: b.GenStamp, NumBytes: b.NumBytes}}
	p := &pendingReplication{source: src.Storage.DN, targets: map[string]bool{}, deadline: now.Add(m.cfg.ReplicationTimeout)}
	for _, t := range targets {
		cmd.Targets = append(cmd.Targets, Target{Node: t.DN.Info(), StorageType: t.Type, StorageID: t.ID})
		p.targets[t.DN.UUID] = true
	}
	m.queue(src.Storage.DN, cmd)
	src.Storage.DN.pendingTransfers++
	m.pending[b.ID] = p
	m.log.Info("namenode: scheduling replication", "block", b.String(), "from", src.Storage.DN.String(), "to", len(targets), "file", pathOf(b))
}

// removeExcess deletes live replicas beyond the wanted count: first
// those the storage policy does not want, then the one a balancer move
// replaced (delete hint), then those on racks with more than one, least
// space remaining first (racks.go). Replicas on nodes out of service are
// kept: they are not counted.
func (m *Manager) removeExcess(b *Block, live []*Replica, want int, now time.Time) {
	// Replicas of a type the policy wants fewer of than there are go
	// first; among them (and among the rest) the rack and space rules
	// choose.
	wantN := map[storage.Type]int{}
	for _, t := range wantedTypes(b) {
		wantN[t]++
	}
	haveN := map[storage.Type]int{}
	for _, r := range live {
		haveN[r.Storage.Type]++
	}
	isExtra := map[*Replica]bool{}
	for _, r := range live {
		isExtra[r] = haveN[r.Storage.Type] > wantN[r.Storage.Type]
	}
	cands := append([]*Replica(nil), live...)
	for len(cands) > want {
		r := m.excessOrder(b, cands, isExtra)[0]
		m.log.Info("namenode: deleting excess replica", "block", b.String(), "datanode", r.Storage.DN.String(), "type", r.Storage.Type)
		m.deleteReplica(r, b, now)
		cands = cands[1:]
		if haveN[r.Storage.Type]--; haveN[r.Storage.Type] <= wantN[r.Storage.Type] {
			for _, c := range cands {
				if c.Storage.Type == r.Storage.Type {
					isExtra[c] = false
				}
			}
		}
	}
	delete(m.delHints, b.ID)
}

// deleteReplica tells r's DataNode to delete it and forgets it; the node
// gets no new copy of b until it confirms the deletion.
func (m *Manager) deleteReplica(r *Replica, b *Block, now time.Time) {
	m.invalidate(r.Storage, b.ID, r.GenStamp)
	m.removeReplica(r.Storage, b.ID)
	if b.Deleting == nil {
		b.Deleting = map[string]time.Time{}
	}
	b.Deleting[r.Storage.DN.UUID] = now
}

// SatisfyStoragePolicy marks file fileID so that the replication monitor
// moves replicas whose storage type its policy does not want (the mover's
// request). blocks are the file's blocks, which the Manager does not
// know: the next pass checks them.
func (m *Manager) SatisfyStoragePolicy(fileID uint64, blocks []*Block) {
	m.satisfy[fileID] = true
	for _, b := range blocks {
		m.recheckBlock(b)
	}
}

// scheduleLocalMove asks a DataNode holding a misplaced replica to move it
// to one of its own volumes of a missing type. It reports whether it found
// one.
func (m *Manager) scheduleLocalMove(b *Block, extra []*Replica, missing []storage.Type, now time.Time) bool {
	for _, r := range extra {
		for _, t := range missing {
			for _, st := range r.Storage.DN.SortedStorages() {
				if st.Failed || st.Type != t || st.Remaining-st.scheduled < b.NumBytes {
					continue
				}
				d := r.Storage.DN
				m.queue(d, Command{Kind: Move, Block: BlockRef{ID: b.ID, GenStamp: b.GenStamp, NumBytes: b.NumBytes}, TargetType: t})
				st.scheduled += b.NumBytes
				d.pendingTransfers++
				m.pending[b.ID] = &pendingReplication{source: d, targets: map[string]bool{d.UUID: true}, deadline: now.Add(m.cfg.ReplicationTimeout)}
				m.log.Info("namenode: scheduling move", "block", b.String(), "datanode", d.String(), "from", r.Storage.Type, "to", t, "file", pathOf(b))
				return true
			}
		}
	}
	return false
}
