package blockmgmt

import (
	"iter"
	"slices"
)

// replicationQueue is the replication monitor's work (Hadoop's
// neededReplications, UnderReplicatedBlocks): the blocks to check on the
// next pass, and what the last check of each block found. A block is
// queued by whatever may change what it needs — a replica reported,
// removed or found corrupt, its DataNode dead, decommissioning or in
// maintenance, a storage failed, a transfer done or timed out, an edit
// that adds, closes or drops it or changes its file's replication or
// policy (BlockMap.Changed), the mover's SatisfyStoragePolicy — and stays queued, checked on every pass,
// while it needs anything: copies, deletions, a move, a transfer to
// finish, or while it is missing or corrupt. A pass therefore costs the
// blocks with work to do, not every block. Events whose effect is not
// confined to known blocks — the number of racks changing, the Manager
// becoming active, a storage policy set on a directory with very many
// blocks below it — ask for one pass over every block.
//
// A missed event would leave a block unchecked until the next full pass,
// which may never come; so each pass also sweeps a slice of the block
// map (sweepSize), round-robin, queueing the blocks it meets: every block
// is checked at least every ten minutes or so at the default one-second
// interval, up to a bound on what one pass may add.
type replicationQueue struct {
	// ids are the blocks to check on the next pass. A block in the map
	// is listed once (its queued flag); ids of blocks since dropped or
	// replaced may repeat, and take drops the repeats.
	ids    []uint64
	all    bool // the next pass checks every block
	found  map[uint64]blockTrouble
	counts [troubleKinds]int // blocks in found with each trouble
	racks  int               // racks in service at the last pass
	// sweep yields the block map's ids in the map's order, a slice per
	// pass; stop ends it. Both are nil between rounds.
	sweep     func() (uint64, bool)
	stopSweep func()
}

// The sweep's slice of the block map per pass: one six-hundredth of the
// blocks (ten minutes of one-second passes), at least sweepMin and at most
// sweepMax, so a pass adds at most sweepMax checks (at 20M blocks and
// more a round takes longer than ten minutes: 100M blocks, some 83).
const (
	sweepPasses = 600
	sweepMin    = 1000
	sweepMax    = 20000
)

func sweepSize(blocks int) int {
	return min(max(blocks/sweepPasses, sweepMin), sweepMax)
}

// sweepStep queues the next sweepSize blocks of the round-robin sweep,
// starting a new round when the last one ended. Blocks added during a
// round may be missed by it (their adding queued them); the next round
// meets them.
func (m *Manager) sweepStep() {
	q := &m.needed
	for n := sweepSize(m.blocks.Len()); n > 0; n-- {
		if q.sweep == nil {
			q.sweep, q.stopSweep = iter.Pull(m.blocks.ids())
		}
		id, ok := q.sweep()
		if !ok {
			q.stopSweep()
			q.sweep, q.stopSweep = nil, nil
			return // the next pass starts the next round
		}
		if b := m.blocks.Get(id); b != nil {
			m.recheckBlock(b)
		}
	}
}

// blockTrouble is what a check found wrong with a block, a bit per kind.
type blockTrouble uint8

const (
	troubleUnder blockTrouble = 1 << iota
	troubleCorrupt
	troubleMissing
	troubleMisplaced
	troubleKinds = iota
)

func (q *replicationQueue) init() {
	q.found = map[uint64]blockTrouble{}
	q.all = true // the blocks were loaded before the Manager heard of them
}

// set records the trouble a check of block id found.
func (q *replicationQueue) set(id uint64, t blockTrouble) {
	old := q.found[id]
	if old == t {
		return
	}
	for k := 0; k < troubleKinds; k++ {
		if old&(1<<k) != 0 {
			q.counts[k]--
		}
		if t&(1<<k) != 0 {
			q.counts[k]++
		}
	}
	if t == 0 {
		delete(q.found, id)
	} else {
		q.found[id] = t
	}
}

// take returns the blocks to check this pass, in id order, and empties
// the queue for the next.
func (q *replicationQueue) take(bm *BlockMap) []uint64 {
	ids := q.ids
	q.ids = nil
	for _, id := range ids {
		if b := bm.Get(id); b != nil {
			b.queued = false
		}
	}
	if q.all {
		q.all = false
		// Forget what earlier checks found of blocks since dropped.
		for id := range q.found {
			if bm.Get(id) == nil {
				q.set(id, 0)
			}
		}
		return bm.IDs()
	}
	slices.Sort(ids)
	return slices.Compact(ids)
}

// recheck queues block id for the next pass. A standby keeps no queue:
// it checks every block when it becomes active.
func (m *Manager) recheck(id uint64) {
	if m.standby || m.needed.all {
		return
	}
	if b := m.blocks.Get(id); b != nil {
		m.recheckBlock(b)
	} else {
		m.needed.ids = append(m.needed.ids, id) // dropped: forget what was found
	}
}

// recheckBlock queues b for the next pass.
func (m *Manager) recheckBlock(b *Block) {
	if m.standby || m.needed.all || b.queued {
		return
	}
	b.queued = true
	m.needed.ids = append(m.needed.ids, b.ID)
}

// recheckStorage queues every block with a replica on st.
func (m *Manager) recheckStorage(st *Storage) {
	for _, b := range st.Blocks {
		m.recheckBlock(b)
	}
}

// recheckNode queues every block with a replica on d.
func (m *Manager) recheckNode(d *Datanode) {
	for _, st := range d.Storages {
		m.recheckStorage(st)
	}
}

// recheckAll has the next pass check every block.
func (m *Manager) recheckAll() { m.needed.all = true }

// Queued is the number of blocks the next replication pass will check
// (every block after an event that asks for a full pass).
func (m *Manager) Queued() int {
	if m.needed.all {
		return m.blocks.Len()
	}
	return len(m.needed.ids)
}
