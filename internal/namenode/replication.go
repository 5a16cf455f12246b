package namenode

import (
	"context"
	"fmt"
	"sort"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/dnpb"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/storage"
)

// pendingReplication is a transfer scheduled but not yet reported done.
type pendingReplication struct {
	source   *datanodeDesc
	targets  map[string]bool // DataNode uuids still to report the replica
	deadline time.Time
}

func (p *pendingReplication) arrived(uuid string) { delete(p.targets, uuid) }
func (p *pendingReplication) done() bool          { return len(p.targets) == 0 }

func (s *Namesystem) finishPending(id uint64) {
	if p := s.pending[id]; p != nil {
		if p.source.pendingTransfers > 0 {
			p.source.pendingTransfers--
		}
		delete(s.pending, id)
	}
}

// ReplicationStats are the counts fsck, metrics and getFsStats report.
type ReplicationStats struct {
	Blocks, UnderReplicated, Corrupt, Missing, PendingReplication, Misplaced int
}

// checkHeartbeats declares DataNodes dead whose last heartbeat is older
// than the expiry, and forgets their replicas so the blocks are copied
// elsewhere. Lock held.
func (s *Namesystem) checkHeartbeats(now time.Time) {
	for _, d := range s.dns.byUUID {
		if d.dead || now.Sub(d.lastHeartbeat) <= s.cfg.heartbeatExpiry {
			continue
		}
		d.dead = true
		d.commands = nil
		d.pendingTransfers = 0
		s.removeReplicasOf(d)
		s.log.Warn("namenode: datanode is dead", "datanode", d.String(), "last_heartbeat", d.lastHeartbeat.Format(time.RFC3339))
	}
}

// wantedTypes is the storage type each of a file's replicas should have.
func (s *Namesystem) wantedTypes(b *block) []storage.Type {
	return s.policyOf(b.file).ChooseTypes(int(b.file.replication))
}

// misplaced returns the good replicas whose storage type the policy does
// not want, and the types that are missing.
func misplaced(good []*replica, want []storage.Type) (extra []*replica, missing []storage.Type) {
	need := map[storage.Type]int{}
	for _, t := range want {
		need[t]++
	}
	for _, r := range good {
		if need[r.storage.typ] > 0 {
			need[r.storage.typ]--
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

// replicate is one pass of the replication monitor: it schedules copies of
// under-replicated blocks, moves for files whose storage policy asks for
// it, deletes excess and (once replaced) corrupt replicas. Lock held.
func (s *Namesystem) replicate(now time.Time) ReplicationStats {
	var st ReplicationStats
	for id, p := range s.pending {
		if now.After(p.deadline) {
			s.log.Warn("namenode: replication timed out; will retry", "block", fmt.Sprintf("blk_%d", id))
			s.finishPending(id)
		}
	}
	st.PendingReplication = len(s.pending)
	ids := make([]uint64, 0, len(s.ns.blocks.m))
	for id := range s.ns.blocks.m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	for _, id := range ids {
		b := s.ns.blocks.m[id]
		st.Blocks++
		if !b.committed || b.file == nil || b.file.uc != nil && b == b.file.blocks[len(b.file.blocks)-1] {
			continue // being written (or recovered): not the monitor's
		}
		good := s.goodReplicas(b)
		want := int(b.file.replication)
		corrupt := 0
		for _, r := range b.replicas {
			if r.corrupt && !r.storage.dn.dead {
				corrupt++
			}
		}
		if corrupt > 0 {
			st.Corrupt++
		}
		if len(good) == 0 {
			if b.numBytes > 0 || corrupt > 0 {
				st.Missing++
			}
			continue
		}
		if len(good) < want {
			st.UnderReplicated++
		}
		// Copies that are not good — corrupt, of an older generation, or
		// of the wrong length — go as soon as a good copy exists: they
		// hold no data worth keeping and they block their node from
		// receiving a good replica.
		for _, r := range sortedReplicas(b) {
			if r.final && !r.storage.dn.dead && !isGood(b, r) {
				s.log.Info("namenode: deleting bad replica", "block", b.String(), "datanode", r.storage.dn.String(),
					"corrupt", r.corrupt, "replica_gs", r.gs, "replica_len", r.numBytes)
				s.deleteReplica(r, b, now)
			}
		}
		_, inPending := s.pending[id]
		extra, missingTypes := misplaced(good, s.wantedTypes(b))
		if s.satisfy[b.file.id] && len(missingTypes) > 0 {
			st.Misplaced++
		}
		switch {
		case inPending:
		case len(good) < want:
			s.scheduleTransfer(b, good, missingTypes[:min(len(missingTypes), want-len(good))], now)
		case s.satisfy[b.file.id] && len(extra) > 0 && len(missingTypes) > 0:
			// A move: on the same node when it has a volume of the missing
			// type, else a copy elsewhere (the excess pass then deletes the
			// misplaced copy).
			if !s.scheduleLocalMove(b, extra, missingTypes, now) {
				s.scheduleTransfer(b, good, missingTypes[:1], now)
			}
		case len(good) > want:
			s.removeExcess(b, good, want)
		}
	}
	return st
}

// scheduleTransfer asks a DataNode holding a good replica to copy it to
// new storages of the given types.
func (s *Namesystem) scheduleTransfer(b *block, good []*replica, types []storage.Type, now time.Time) {
	if len(types) == 0 {
		return
	}
	var src *replica
	for _, r := range good {
		if r.storage.dn.pendingTransfers >= s.cfg.maxReplicationStreams {
			continue
		}
		if src == nil || r.storage.dn.pendingTransfers < src.storage.dn.pendingTransfers {
			src = r
		}
	}
	if src == nil {
		return
	}
	exclude := map[string]bool{}
	for _, r := range b.replicas {
		exclude[r.storage.dn.uuid] = true
	}
	for uuid, at := range b.deleting {
		if now.Sub(at) < s.cfg.replicationTimeout {
			exclude[uuid] = true
		} else {
			delete(b.deleting, uuid)
		}
	}
	pol := s.policyOf(b.file)
	targets := s.dns.choose(placement{types: types, policy: pol, exclude: exclude, need: b.numBytes})
	if len(targets) == 0 {
		return
	}
	cmd := &dnpb.TransferCommand{Block: &dnpb.Replica{BlockId: proto.Uint64(b.id), GenStamp: proto.Uint64(b.gs), NumBytes: proto.Uint64(uint64(b.numBytes))}}
	p := &pendingReplication{source: src.storage.dn, targets: map[string]bool{}, deadline: now.Add(s.cfg.replicationTimeout)}
	for _, t := range targets {
		cmd.Targets = append(cmd.Targets, t.dn.proto())
		cmd.TargetStorageTypes = append(cmd.TargetStorageTypes, uint32(t.typ))
		cmd.TargetStorageIds = append(cmd.TargetStorageIds, t.id)
		p.targets[t.dn.uuid] = true
	}
	src.storage.dn.commands = append(src.storage.dn.commands, &dnpb.Command{Command: &dnpb.Command_Transfer{Transfer: cmd}})
	src.storage.dn.pendingTransfers++
	s.pending[b.id] = p
	s.log.Info("namenode: scheduling replication", "block", b.String(), "from", src.storage.dn.String(), "to", len(targets), "file", pathOf(b))
}

// removeExcess deletes replicas beyond the wanted count: first those the
// storage policy does not want, then those on the fullest storages.
func (s *Namesystem) removeExcess(b *block, good []*replica, want int) {
	extra, _ := misplaced(good, s.wantedTypes(b))
	isExtra := map[*replica]bool{}
	for _, r := range extra {
		isExtra[r] = true
	}
	cands := append([]*replica(nil), good...)
	sort.SliceStable(cands, func(i, j int) bool {
		if isExtra[cands[i]] != isExtra[cands[j]] {
			return isExtra[cands[i]]
		}
		return cands[i].storage.remaining < cands[j].storage.remaining
	})
	for _, r := range cands[:len(good)-want] {
		s.log.Info("namenode: deleting excess replica", "block", b.String(), "datanode", r.storage.dn.String(), "type", r.storage.typ)
		s.deleteReplica(r, b, time.Now())
	}
}

// deleteReplica tells r's DataNode to delete it and forgets it; the node
// gets no new copy of b until it confirms the deletion.
func (s *Namesystem) deleteReplica(r *replica, b *block, now time.Time) {
	s.invalidate(r.storage, b.id, r.gs)
	s.removeReplica(r.storage, b.id)
	if b.deleting == nil {
		b.deleting = map[string]time.Time{}
	}
	b.deleting[r.storage.dn.uuid] = now
}

// SatisfyStoragePolicy marks every file under p so that the replication
// monitor moves replicas whose storage type its policy does not want (the
// mover's request).
func (s *Namesystem) SatisfyStoragePolicy(p string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.ns.lookup(p)
	if n == nil {
		return notFound(p)
	}
	var walk func(*inode)
	walk = func(x *inode) {
		if x.isDir {
			for _, c := range x.children {
				walk(c)
			}
			return
		}
		s.satisfy[x.id] = true
	}
	walk(n)
	return nil
}

// safeModeStatus counts blocks with at least one good replica for the
// startup safe mode. Lock held.
func (s *Namesystem) safeBlocks() (safe, total int) {
	for _, b := range s.ns.blocks.m {
		if !b.committed {
			continue
		}
		total++
		if len(s.goodReplicas(b)) > 0 {
			safe++
		}
	}
	return safe, total
}

// checkStartupSafeMode leaves the startup safe mode once the threshold of
// blocks is reported and the extension has passed. Lock held.
func (s *Namesystem) checkStartupSafeMode(now time.Time) {
	if !s.startupSafe {
		return
	}
	safe, total := s.safeBlocks()
	if float64(safe) < s.cfg.safeModeThreshold*float64(total) {
		s.safeReachedAt = time.Time{}
		return
	}
	if s.safeReachedAt.IsZero() {
		s.safeReachedAt = now
	}
	if now.Sub(s.safeReachedAt) >= s.cfg.safeModeExtension {
		s.startupSafe = false
		s.log.Info("namenode: leaving safe mode", "blocks_reported", safe, "blocks_total", total)
	}
}

// SafeModeTip describes the startup safe mode, as dfsadmin shows it.
func (s *Namesystem) SafeModeTip() string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if !s.startupSafe {
		if s.safe {
			return "Safe mode is ON. It was turned on manually."
		}
		return "Safe mode is OFF."
	}
	safe, total := s.safeBlocks()
	need := int(s.cfg.safeModeThreshold*float64(total)+0.999999) - safe
	if need > 0 {
		return fmt.Sprintf("Safe mode is ON. The reported blocks %d needs additional %d blocks to reach the threshold %.4f of total blocks %d.", safe, need, s.cfg.safeModeThreshold, total)
	}
	return fmt.Sprintf("Safe mode is ON. The reported blocks %d has reached the threshold %.4f of total blocks %d. Safe mode will be turned off automatically.", safe, s.cfg.safeModeThreshold, total)
}

// blockMonitor runs one round of the periodic block work.
func (s *Namesystem) blockMonitor(now time.Time) {
	s.mu.Lock()
	s.checkHeartbeats(now)
	s.checkStartupSafeMode(now)
	if s.startupSafe || s.safe {
		s.mu.Unlock()
		return
	}
	s.replStats = s.replicate(now)
	paths, ops := s.finishedRecoveries(now)
	s.mu.Unlock()
	s.closeRecovered(context.Background(), paths, ops)
}

// Stats returns the latest replication counts.
func (s *Namesystem) Stats() ReplicationStats {
	s.mu.RLock()
	defer s.mu.RUnlock()
	st := s.replStats
	st.Blocks = len(s.ns.blocks.m)
	return st
}

var _ = hdfspb.DatanodeReportTypeProto_ALL

// scheduleLocalMove asks a DataNode holding a misplaced replica to move it
// to one of its own volumes of a missing type. It reports whether it found
// one.
func (s *Namesystem) scheduleLocalMove(b *block, extra []*replica, missing []storage.Type, now time.Time) bool {
	for _, r := range extra {
		for _, t := range missing {
			for _, st := range sortedStorages(r.storage.dn) {
				if st.failed || st.typ != t || st.remaining-st.scheduled < b.numBytes {
					continue
				}
				d := r.storage.dn
				d.commands = append(d.commands, &dnpb.Command{Command: &dnpb.Command_Move{Move: &dnpb.MoveCommand{
					Block:             &dnpb.Replica{BlockId: proto.Uint64(b.id), GenStamp: proto.Uint64(b.gs), NumBytes: proto.Uint64(uint64(b.numBytes))},
					TargetStorageType: proto.Uint32(uint32(t)),
				}}})
				st.scheduled += b.numBytes
				d.pendingTransfers++
				s.pending[b.id] = &pendingReplication{source: d, targets: map[string]bool{d.uuid: true}, deadline: now.Add(s.cfg.replicationTimeout)}
				s.log.Info("namenode: scheduling move", "block", b.String(), "datanode", d.String(), "from", r.storage.typ, "to", t, "file", pathOf(b))
				return true
			}
		}
	}
	return false
}
