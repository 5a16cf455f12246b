package blockmgmt

import "container/list"

// Standby mode. A standby NameNode applies the edit log a little after
// the active one writes it, while the DataNodes report to both at once:
// a standby hears of replicas of blocks it does not know yet, or with a
// generation stamp or length its namespace has not caught up with. Like
// Hadoop's PendingDataNodeMessages, it holds such reports back instead
// of judging them (no invalidation, no corrupt marking) and re-applies
// them once the edits that explain them are in (ProcessQueued). A
// standby issues no commands at all: it queues none for DataNodes (they
// would ignore them anyway), schedules no replication, starts and
// finishes no recoveries. Becoming active (SetStandby(false)) applies
// what is still held back as an active NameNode would: a replica of a
// block it still does not know is then deleted.
//
// Invariants of the queue:
//   - Reports of one block are kept in arrival order, and the oldest of
//     all is the first of its block's (so dropping the oldest is O(1)).
//   - A newer report about the same replica (block and storage)
//     supersedes the queued ones: an incremental report of it drops them,
//     a full report of the storage drops every queued report of the
//     storage, a re-registration or death of the DataNode all of its.
//   - At most Config.MaxQueuedReports are held; beyond, the oldest is
//     dropped and counted (the DataNode's next full report restores it).

// DefaultMaxQueuedReports bounds the held-back reports of a standby when
// Config.MaxQueuedReports is 0.
const DefaultMaxQueuedReports = 1 << 20

// queuedReport is a DataNode's report a standby holds back: a replica
// (full or incremental report) or, with bad, the DataNode's own finding
// that its replica is corrupt.
type queuedReport struct {
	st     *Storage
	rep    ReportedReplica
	bad    bool
	reason string
}

// reportQueue holds a standby's postponed reports.
type reportQueue struct {
	all        list.List // of *queuedReport, oldest first
	byBlock    map[uint64][]*list.Element
	perStorage map[*Storage]int
	// ready are blocks with queued reports that an edit added or changed
	// since the last ProcessQueued.
	ready   map[uint64]struct{}
	max     int
	dropped int64
}

func newReportQueue(max int) *reportQueue {
	if max <= 0 {
		max = DefaultMaxQueuedReports
	}
	return &reportQueue{byBlock: map[uint64][]*list.Element{}, perStorage: map[*Storage]int{}, ready: map[uint64]struct{}{}, max: max}
}

// push appends q, dropping the oldest report when full; it reports
// whether it dropped one.
func (rq *reportQueue) push(q *queuedReport) (dropped bool) {
	if rq.all.Len() >= rq.max {
		front := rq.all.Front()
		old := front.Value.(*queuedReport)
		rq.byBlock[old.rep.ID] = rq.byBlock[old.rep.ID][1:] // the oldest of all is its block's first
		rq.forget(front, old)
		rq.dropped++
		dropped = true
	}
	e := rq.all.PushBack(q)
	rq.byBlock[q.rep.ID] = append(rq.byBlock[q.rep.ID], e)
	rq.perStorage[q.st]++
	return dropped
}

// forget removes e from the list and the counts; the caller fixes
// byBlock.
func (rq *reportQueue) forget(e *list.Element, q *queuedReport) {
	rq.all.Remove(e)
	if len(rq.byBlock[q.rep.ID]) == 0 {
		delete(rq.byBlock, q.rep.ID)
		delete(rq.ready, q.rep.ID)
	}
	if rq.perStorage[q.st]--; rq.perStorage[q.st] <= 0 {
		delete(rq.perStorage, q.st)
	}
}

// take removes and returns the queued reports of block id, in order.
func (rq *reportQueue) take(id uint64) []*queuedReport {
	es := rq.byBlock[id]
	out := make([]*queuedReport, len(es))
	delete(rq.byBlock, id)
	for i, e := range es {
		out[i] = e.Value.(*queuedReport)
		rq.forget(e, out[i])
	}
	return out
}

// dropPair drops the queued reports of block id on storage st.
func (rq *reportQueue) dropPair(id uint64, st *Storage) {
	es := rq.byBlock[id]
	if len(es) == 0 {
		return
	}
	keep := es[:0]
	var gone []*list.Element
	for _, e := range es {
		if e.Value.(*queuedReport).st == st {
			gone = append(gone, e)
		} else {
			keep = append(keep, e)
		}
	}
	rq.byBlock[id] = keep
	for _, e := range gone {
		rq.forget(e, e.Value.(*queuedReport))
	}
}

// dropStorages drops every queued report of the storages in sts.
func (rq *reportQueue) dropStorages(sts ...*Storage) {
	any := false
	for _, st := range sts {
		any = any || rq.perStorage[st] > 0
	}
	if !any {
		return
	}
	drop := map[*Storage]bool{}
	for _, st := range sts {
		drop[st] = true
	}
	for e := rq.all.Front(); e != nil; {
		next := e.Next()
		if q := e.Value.(*queuedReport); drop[q.st] {
			rq.dropPair(q.rep.ID, q.st)
		}
		e = next
	}
}

// SetStandby switches between standby and active. Entering standby drops
// the work queued for DataNodes, the scheduled copies and the recoveries
// (the active NameNode owns them); leaving it applies every held-back
// report, oldest first, as an active NameNode judges them.
func (m *Manager) SetStandby(standby bool) {
	if standby == m.standby {
		return
	}
	if standby {
		m.standby = true
		for _, d := range m.dns.byUUID {
			d.commands = nil
			d.pendingTransfers = 0
		}
		m.pending = map[uint64]*pendingReplication{}
		m.recovering = map[uint64]*blockRecovery{}
		m.recheckAll() // no queue while standby; every block when active
		m.log.Info("namenode: block management in standby: postponing reports of replicas it cannot place, issuing no commands")
		return
	}
	m.standby = false
	n := m.queued.all.Len()
	for e := m.queued.all.Front(); e != nil; e = e.Next() {
		m.applyQueued(e.Value.(*queuedReport))
	}
	dropped := m.queued.dropped
	m.queued = newReportQueue(m.cfg.MaxQueuedReports)
	m.queued.dropped = dropped
	m.log.Info("namenode: block management active; applied postponed reports", "reports", n)
}

// Standby reports whether the Manager is in standby mode.
func (m *Manager) Standby() bool { return m.standby }

// QueuedReports is how many DataNode reports a standby holds back, and how
// many it dropped for want of room.
func (m *Manager) QueuedReports() (queued int, dropped int64) {
	return m.queued.all.Len(), m.queued.dropped
}

// ProcessQueued applies the held-back reports of blocks that edits added
// or changed since the last call and that the namespace now explains;
// the others stay queued. The namesystem calls it after applying edits,
// with its lock held. It returns the number of reports applied.
func (m *Manager) ProcessQueued() int {
	if !m.standby || len(m.queued.ready) == 0 {
		return 0
	}
	applied := 0
	for id := range m.queued.ready {
		delete(m.queued.ready, id)
		for _, q := range m.queued.take(id) {
			if m.holdBack(q) {
				m.queued.push(q) // order within the block is kept: the others follow it
				continue
			}
			m.applyQueued(q)
			applied++
		}
	}
	return applied
}

// touched is the BlockMap's hook: an edit added block id or raised its
// generation stamp.
func (m *Manager) touched(id uint64) {
	if m.standby && len(m.queued.byBlock[id]) > 0 {
		m.queued.ready[id] = struct{}{}
	}
}

// holdBack reports whether a standby cannot judge q yet.
func (m *Manager) holdBack(q *queuedReport) bool {
	if q.bad {
		b := m.blocks.Get(q.rep.ID)
		return b == nil || b.Replicas.Of(q.st.ID) == nil
	}
	return m.postponed(q.rep)
}

// postponed reports whether a standby holds rep back: its block is not
// known yet, its generation stamp is newer, or an active NameNode would
// delete it or mark it corrupt (an older generation stamp, an unfinished
// copy of a committed block, the wrong length) — all of which the edits
// still to come may explain.
func (m *Manager) postponed(rep ReportedReplica) bool {
	b := m.blocks.Get(rep.ID)
	switch {
	case b == nil || rep.GenStamp > b.GenStamp:
		return true
	case !rep.Finalized:
		return b.Committed
	}
	return rep.GenStamp < b.GenStamp || b.Committed && rep.NumBytes != b.NumBytes
}

// applyQueued applies a held-back report, unless its storage is gone.
func (m *Manager) applyQueued(q *queuedReport) {
	d := q.st.DN
	if d.Dead || d.Storages[q.st.ID] != q.st {
		return
	}
	if q.bad {
		m.markBad(q.st, q.rep.ID, q.reason)
		return
	}
	m.addReplica(q.st, q.rep)
}

// hold queues q; the caller checked that the Manager is in standby.
func (m *Manager) hold(q *queuedReport) {
	if m.queued.push(q) && m.queued.dropped == 1 {
		m.log.Warn("namenode: standby's queue of postponed datanode reports is full; dropping the oldest", "max", m.queued.max)
	}
}

// reportReplica takes one reported replica of storage st: held back by a
// standby that cannot judge it (or that holds an earlier report of the
// replica it must follow), else recorded. It reports whether st now
// holds a replica of the block (addReplica).
func (m *Manager) reportReplica(st *Storage, rep ReportedReplica) bool {
	if m.standby {
		m.queued.dropPair(rep.ID, st)
		if m.postponed(rep) {
			m.hold(&queuedReport{st: st, rep: rep})
			return false
		}
	}
	return m.addReplica(st, rep)
}
