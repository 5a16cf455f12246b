package blockmgmt

import "sort"

// GoodReplicas are the replicas of b that count: finalized, not corrupt,
// on a live DataNode's working storage, with the block's generation stamp
// (and length, once the length is final), by storage id.
func GoodReplicas(b *Block) []*Replica {
	var out []*Replica
	for _, r := range SortedReplicas(b) {
		if isGood(b, r) {
			out = append(out, r)
		}
	}
	return out
}

// isGood reports whether r is a usable copy of b.
func isGood(b *Block, r *Replica) bool {
	if !r.Final || r.Corrupt || r.Storage.Failed || r.Storage.DN.Dead || r.GenStamp != b.GenStamp {
		return false
	}
	return !b.Committed || r.NumBytes == b.NumBytes
}

// SortedReplicas returns every replica of b, good or not, by storage id.
func SortedReplicas(b *Block) []*Replica {
	out := make([]*Replica, 0, len(b.Replicas))
	for _, r := range b.Replicas {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Storage.ID < out[j].Storage.ID })
	return out
}

// Locations orders b's readable replicas for a reader at clientIP: by
// network distance — the reader's own host, its rack, other racks — in
// random order among equals, replicas on nodes being decommissioned or in
// maintenance after the others. A block being written with no finalized replica yet is read from
// its pipeline. When only corrupt copies are left they are returned with
// corrupt set, as HDFS does.
func (m *Manager) Locations(b *Block, clientIP string) (locs []*Storage, corrupt bool) {
	good := GoodReplicas(b)
	if !b.Committed && len(good) == 0 {
		return b.Expected, false
	}
	for _, r := range good {
		locs = append(locs, r.Storage)
	}
	if len(locs) == 0 {
		for _, r := range SortedReplicas(b) {
			if r.Corrupt && !r.Storage.DN.Dead {
				locs = append(locs, r.Storage)
				corrupt = true
			}
		}
	}
	m.rng.Shuffle(len(locs), func(i, j int) { locs[i], locs[j] = locs[j], locs[i] })
	m.sortByDistance(locs, clientIP)
	return locs, corrupt
}

func (m *Manager) removeReplica(st *Storage, id uint64) {
	if b := st.Blocks[id]; b != nil {
		b.Replicas.drop(st.ID)
		m.recheckBlock(b)
	}
	delete(st.Blocks, id)
}

// removeReplicasOf forgets every replica location on d.
func (m *Manager) removeReplicasOf(d *Datanode) {
	for _, st := range d.Storages {
		for id, b := range st.Blocks {
			b.Replicas.drop(st.ID)
			delete(st.Blocks, id)
			m.recheckBlock(b)
		}
	}
}

// invalidate queues a delete of a replica for its DataNode, batching
// deletes into Invalidate commands of at most maxInvalidatePerCommand.
func (m *Manager) invalidate(st *Storage, id, gs uint64) {
	d := st.DN
	ref := BlockRef{ID: id, GenStamp: gs}
	for i := range d.commands {
		if c := &d.commands[i]; c.Kind == Invalidate && len(c.Blocks) < maxInvalidatePerCommand {
			c.Blocks = append(c.Blocks, ref)
			return
		}
	}
	m.queue(d, Command{Kind: Invalidate, Blocks: []BlockRef{ref}})
}

// InvalidateRemoved asks DataNodes to delete the replicas (and the
// pipelines' partial replicas) of blocks that edits removed from files
// since the last call (BlockMap.TakeRemoved).
func (m *Manager) InvalidateRemoved() {
	for _, b := range m.blocks.TakeRemoved() {
		for _, r := range b.Replicas {
			m.invalidate(r.Storage, b.ID, r.GenStamp)
			delete(r.Storage.Blocks, b.ID)
		}
		for _, st := range b.Expected {
			m.invalidate(st, b.ID, b.GenStamp)
		}
		b.Replicas = nil
	}
}

// ForgetRemoved drops the record of removed blocks without invalidating
// anything: after replay, when no DataNode has reported yet.
func (m *Manager) ForgetRemoved() { m.blocks.TakeRemoved() }

// BadReplica names a replica a client found corrupt: by storage id when
// it knows it, else by DataNode.
type BadReplica struct {
	BlockID uint64
	// GenStamp, when not 0, is the generation stamp the reporter read: a
	// report about an older generation of the block is ignored.
	GenStamp     uint64
	StorageID    string
	DatanodeUUID string
}

// ReportBadReplicas marks replicas corrupt; the replication monitor
// replaces them from a good copy and then deletes them.
func (m *Manager) ReportBadReplicas(bad []BadReplica) {
	for _, br := range bad {
		b := m.blocks.Get(br.BlockID)
		if b == nil || br.GenStamp != 0 && br.GenStamp != b.GenStamp {
			continue
		}
		var r *Replica
		if br.StorageID != "" {
			r = b.Replicas.Of(br.StorageID)
		}
		if r == nil {
			for _, x := range b.Replicas {
				if x.Storage.DN.UUID == br.DatanodeUUID {
					r = x
				}
			}
		}
		if r != nil && !r.Corrupt {
			r.Corrupt = true
			m.recheckBlock(b)
			m.log.Warn("namenode: replica reported corrupt", "block", b.String(), "datanode", r.Storage.DN.String(), "file", pathOf(b))
		}
	}
}

func pathOf(b *Block) string {
	if b.File == nil {
		return ""
	}
	return b.File.Path()
}
