package namenode

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/hashicorp/raft"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/namenode/quorum"
	"github.com/stratafs/strata/internal/nameservice"
)

// High availability (docs/HA.md, docs/format/namenode-ha.md).
//
// The members of a nameservice form one Raft group (package quorum) whose
// log is the edit log. The leader is the active NameNode: it checks and
// applies a mutation under the namesystem lock exactly as a single
// NameNode does, gives the edit the next transaction id and proposes it;
// the mutation is acknowledged once Raft has committed it (a quorum has it
// on disk). Followers are standbys: they apply committed edits in txid
// order and answer clients with StandbyException.
//
// The leader's namespace runs ahead of the committed log by the edits in
// flight ("speculative" edits, txids committed+1..applied, all proposed
// under the current activation's epoch). The FSM tells them apart from
// other leaders' entries by epoch: an own entry only advances committed; a
// foreign entry arriving while speculative edits exist means those edits
// were lost with a leadership change, and the namespace is rebuilt from
// the newest snapshot and the committed log before the entry is applied.
//
// Invariants (with Namesystem.mu held for all of them):
//   - committed <= applied; applied == committed on a standby.
//   - A mutation is only checked and applied while the member is active
//     (standby is false); becoming standby and becoming active happen under
//     mu, so no mutation spans a change of role.
//   - An acknowledged edit is committed: Sync returns nil only once the
//     FSM saw the edit's own entry come back committed.
//   - A snapshot holds only committed edits: Persist waits until the edits
//     its image holds are committed (and no rebuild happened meanwhile),
//     else it is cancelled. Its txid header lets a restore skip entries the
//     image already holds.

// errNotActive is a journal's answer once this member stopped being the
// leader: the edit's outcome is unknown (it may still commit under the new
// leader); the client retries on the new active, whose retry cache knows.
var errNotActive = errors.New("namenode: no longer the active NameNode")

// standbyError is what a client calling a standby is told; clients fail
// over on this class.
func standbyError(op string) error {
	return ipc.Errorf(ipc.ClassStandby, "Operation category %s is not supported in state standby. Visit https://s.apache.org/sbnn-error", op)
}

// haNode is this NameNode's membership in its nameservice's Raft group.
type haNode struct {
	nn      *NameNode
	ns      *Namesystem
	cfg     HAConfig
	log     *slog.Logger
	journal *raftJournal

	node   *quorum.Node
	mux    *quorum.Mux
	notify chan bool

	mu          sync.Mutex
	state       HAState
	term        uint64 // Raft term of the current activation
	activations int
	activeSince time.Time
}

func newHANode(nn *NameNode, cfg HAConfig) *haNode {
	h := &haNode{nn: nn, ns: nn.ns, cfg: cfg, log: nn.log, state: HAInitializing, notify: make(chan bool, 16)}
	h.journal = newRaftJournal(h)
	return h
}

func (h *haNode) serviceState() HAState {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state
}

func (h *haNode) setState(s HAState) {
	h.mu.Lock()
	h.state = s
	if s == HAActive {
		h.activeSince = time.Now()
		h.activations++
	}
	h.mu.Unlock()
}

func (h *haNode) raftDir() string { return filepath.Join(h.nn.cfg.NameDir, "raft") }

func (h *haNode) quorumConfig() quorum.Config {
	return quorumConfig(h.nn.cfg, h.log)
}

func quorumConfig(cfg Config, logger *slog.Logger) quorum.Config {
	q := quorum.Config{
		ID: cfg.HA.ID, Dir: filepath.Join(cfg.NameDir, "raft"),
		HeartbeatTimeout: cfg.HA.HeartbeatTimeout, ElectionTimeout: cfg.HA.ElectionTimeout,
		LeaderLeaseTimeout: cfg.HA.LeaderLeaseTimeout, MaxAppendEntries: 512,
		SnapshotThreshold: cfg.CheckpointTxns, SnapshotInterval: cfg.HA.SnapshotInterval,
		TrailingLogs: cfg.HA.TrailingLogs,
		Logger:       logger,
	}
	for _, m := range cfg.HA.Members {
		q.Members = append(q.Members, quorum.Member{ID: m.ID, Addr: m.RPCAddr})
	}
	return q
}

// start opens the Raft member on ln (the RPC listener) and returns the
// listener the IPC server should serve (the mux's IPC side).
func (h *haNode) start(ln net.Listener) (net.Listener, error) {
	static := peerFilter(h.cfg.Members)
	allowed := func(a net.Addr) bool {
		if static(a) {
			return true
		}
		// Members added since (haadmin -addNameNode) are in the Raft
		// configuration, not in this member's dfs.ha.namenodes.
		if h.node == nil {
			return false
		}
		f := h.node.Raft.GetConfiguration()
		if f.Error() != nil {
			return false
		}
		var added []nameservice.NameNode
		for _, srv := range f.Configuration().Servers {
			added = append(added, nameservice.NameNode{ID: string(srv.ID), RPCAddr: string(srv.Address)})
		}
		return peerFilter(added)(a)
	}
	h.mux = quorum.NewMux(ln, allowed, h.log)
	node, err := quorum.Open(h.quorumConfig(), &haFSM{h: h}, h.mux.Raft(), h.notify)
	if err != nil {
		h.mux.Close()
		return nil, err
	}
	h.node = node
	h.setState(HAStandby)
	h.journal.start()
	h.nn.wg.Add(1)
	go func() {
		defer h.nn.wg.Done()
		h.loop()
	}()
	return h.mux, nil
}

// peerFilter accepts Raft connections from the hosts of members only.
// Host names are resolved once, when the filter is made.
func peerFilter(members []nameservice.NameNode) func(net.Addr) bool {
	var ips []net.IP
	for _, m := range members {
		h, _, err := net.SplitHostPort(m.RPCAddr)
		if err != nil {
			continue
		}
		if ip := net.ParseIP(h); ip != nil {
			ips = append(ips, ip)
			continue
		}
		if found, err := net.LookupIP(h); err == nil {
			ips = append(ips, found...)
		}
	}
	return func(a net.Addr) bool {
		ta, ok := a.(*net.TCPAddr)
		if !ok {
			return false
		}
		for _, ip := range ips {
			if ip.Equal(ta.IP) {
				return true
			}
		}
		return false
	}
}

// loop follows leadership changes in order.
func (h *haNode) loop() {
	for {
		select {
		case <-h.nn.stop:
			return
		case leader := <-h.notify:
			if leader {
				h.becomeActive()
			} else {
				h.becomeStandby()
			}
		}
	}
}

// becomeActive waits until every committed entry is applied (a barrier),
// makes sure no edit lost with an earlier leadership is left in the
// namespace, then starts accepting mutations.
func (h *haNode) becomeActive() {
	start := time.Now()
	for {
		err := h.node.Raft.Barrier(0).Error()
		if err == nil {
			break
		}
		if h.node.Raft.State() != raft.Leader {
			return
		}
		if errors.Is(err, raft.ErrLeadershipTransferInProgress) {
			// A transfer (haadmin -failover) is under way: it ends with
			// another leader or with this one again.
			select {
			case <-h.nn.stop:
				return
			case <-time.After(100 * time.Millisecond):
			}
			continue
		}
		h.giveUpLeadership("could not catch up", err)
		return
	}
	if h.node.Raft.State() != raft.Leader {
		return
	}
	term := h.raftNumber("term")
	s := h.ns
	s.mu.Lock()
	if s.applied != s.committed || s.dirty {
		if err := h.rebuildLocked(h.node.Raft.AppliedIndex()); err != nil {
			s.mu.Unlock()
			h.giveUpLeadership("rebuilding the namespace failed", err)
			return
		}
	}
	epoch := randomEpoch()
	h.journal.activate(epoch, s.applied+1, s.committed)
	s.epoch = epoch
	s.standby = false
	s.bm.SetStandby(false)
	now := s.now()
	s.leases = namespace.NewLeaseManager()
	s.tree.OpenFiles(func(n *namespace.Inode) { s.leases.Add(n.UC().ClientName, n.Path(), now) })
	s.mu.Unlock()
	h.mu.Lock()
	h.term = term
	h.mu.Unlock()
	h.setState(HAActive)
	h.log.Info("namenode: active", "id", h.cfg.ID, "term", term, "txid", s.appliedTxID(), "took", time.Since(start).Round(time.Millisecond))
}

// giveUpLeadership hands leadership to another member when this one won
// an election but cannot serve, so that the nameservice is not left
// without an active.
func (h *haNode) giveUpLeadership(why string, err error) {
	if h.node.Raft.State() != raft.Leader {
		return
	}
	h.log.Error("namenode: cannot become active; handing leadership over", "why", why, "err", err)
	if terr := h.node.Raft.LeadershipTransfer().Error(); terr != nil {
		h.log.Error("namenode: leadership transfer failed", "err", terr)
	}
}

// fence is the journal's report that txid was refused while this member
// was active: it stops accepting mutations, marks the namespace for a
// rebuild (it holds edits that will not commit) and, if Raft still
// elects it, activates again.
func (h *haNode) fence(txid uint64, err error) {
	h.log.Warn("namenode: Raft refused an edit; fencing this member", "txid", txid, "err", err)
	s := h.ns
	s.mu.Lock()
	s.standby = true
	s.dirty = true
	s.bm.SetStandby(true)
	s.mu.Unlock()
	h.setState(HAStandby)
	if h.node.Raft.State() == raft.Leader {
		select {
		case h.notify <- true:
		default:
		}
	}
}

// becomeStandby stops accepting mutations at once; the edits in flight
// fail with errNotActive (their outcome is decided by the new leader).
func (h *haNode) becomeStandby() {
	s := h.ns
	s.mu.Lock()
	wasActive := !s.standby
	s.standby = true
	s.bm.SetStandby(true)
	s.mu.Unlock()
	h.journal.deactivate()
	h.setState(HAStandby)
	if wasActive {
		h.log.Warn("namenode: lost leadership; standby", "id", h.cfg.ID)
	}
}

// rebuildLocked replaces the namespace with the newest snapshot and the
// committed entries after it up to index upTo. Called with s.mu held, on
// the FSM goroutine or while no entry can be applied.
func (h *haNode) rebuildLocked(upTo uint64) error {
	s := h.ns
	blocks := blockmgmt.NewBlockMap()
	tree := namespace.New(s.cfg.superuser, s.cfg.supergroup, blocks)
	var txid uint64
	from := uint64(1)
	meta, r, ok, err := h.node.LatestSnapshot()
	if err != nil {
		return err
	}
	var recs [][]byte
	if ok {
		tree, txid, recs, err = readSnapshot(r, blocks)
		r.Close()
		if err != nil {
			return fmt.Errorf("snapshot %s: %w", meta.ID, err)
		}
		from = meta.Index + 1
	}
	s.replaceState(tree, blocks, txid)
	s.replayRPCEdits(recs)
	if upTo >= from {
		err = h.node.Entries(from, upTo, func(l *raft.Log) error {
			e, err := quorum.DecodeEntry(l.Data)
			if err != nil {
				return fmt.Errorf("entry %d: %w", l.Index, err)
			}
			_, err = s.applyCommittedLocked(e)
			return err
		})
		if err != nil {
			return err
		}
	}
	s.rebuilds++
	h.log.Warn("namenode: namespace rebuilt from the committed log", "txid", s.applied, "index", upTo)
	return nil
}

func randomEpoch() uint64 {
	var b [8]byte
	rand.Read(b[:])
	return binary.BigEndian.Uint64(b[:]) | 1
}

// HAStats is what the web page and /metrics show of the group.
type HAStats struct {
	Nameservice, ID, State          string
	Leader                          string
	Term, CommitIndex, AppliedIndex uint64
	LastLogIndex                    uint64
	AppliedTxID, CommittedTxID      uint64
	LastContact                     string
	Members                         []HAMember
	// Peers are the other members as they report themselves (over
	// HTTP, on the status page): their state and how far their applied
	// index lags this member's commit index.
	Peers []HAPeer `json:",omitempty"`
}

// HAPeer is another member's own report.
type HAPeer struct {
	ID, State    string
	AppliedIndex uint64
	Lag          int64
	Err          string `json:",omitempty"`
}

// HAMember is one member as the local configuration sees it.
type HAMember struct {
	ID, Addr, Suffrage string
}

func (h *haNode) stats() HAStats {
	st := HAStats{Nameservice: h.cfg.Nameservice, ID: h.cfg.ID, State: h.serviceState().String()}
	if h.node == nil {
		return st
	}
	raw := h.node.Raft.Stats()
	num := func(k string) uint64 { return parseStat(raw, k) }
	st.Term, st.CommitIndex, st.AppliedIndex, st.LastLogIndex = num("term"), num("commit_index"), num("applied_index"), num("last_log_index")
	st.LastContact = raw["last_contact"]
	_, id := h.node.Raft.LeaderWithID()
	st.Leader = string(id)
	st.AppliedTxID, st.CommittedTxID = h.ns.txids()
	if f := h.node.Raft.GetConfiguration(); f.Error() == nil {
		for _, m := range f.Configuration().Servers {
			st.Members = append(st.Members, HAMember{ID: string(m.ID), Addr: string(m.Address), Suffrage: m.Suffrage.String()})
		}
	}
	return st
}

// raftNumber is one of Raft's numeric stats ("term", "commit_index"),
// without the rest of stats' work (for gauges).
func (h *haNode) raftNumber(key string) uint64 {
	if h.node == nil {
		return 0
	}
	return parseStat(h.node.Raft.Stats(), key)
}

func parseStat(raw map[string]string, key string) uint64 {
	v, _ := strconv.ParseUint(raw[key], 10, 64)
	return v
}

// haFSM feeds committed entries to the namesystem.
type haFSM struct{ h *haNode }

func (f *haFSM) Apply(l *raft.Log) interface{} {
	return f.ApplyBatch([]*raft.Log{l})[0]
}

// ApplyBatch applies a batch of committed entries under one hold of the
// namesystem lock (raft.BatchingFSM), and wakes the callers waiting for
// this member's own edits once for the batch.
func (f *haFSM) ApplyBatch(logs []*raft.Log) []interface{} {
	out := make([]interface{}, len(logs))
	s := f.h.ns
	s.mu.Lock()
	defer s.mu.Unlock()
	var own uint64
	for i, l := range logs {
		if l.Type != raft.LogCommand {
			continue
		}
		committed, err := f.applyLocked(l)
		if err != nil {
			out[i] = err
			continue
		}
		own = max(own, committed)
	}
	if own > 0 && s.ha != nil {
		s.ha.journal.noteCommitted(own)
	}
	return out
}

// applyLocked applies one committed entry; it returns the entry's txid
// when it was this member's own speculative edit.
func (f *haFSM) applyLocked(l *raft.Log) (uint64, error) {
	e, err := quorum.DecodeEntry(l.Data)
	if err != nil {
		f.h.log.Error("namenode: undecodable committed entry", "index", l.Index, "err", err)
		return 0, err
	}
	s := f.h.ns
	if s.applied > s.committed && e.TxID == s.committed+1 && e.Epoch != s.epoch {
		// Our speculative edits did not make it into the log: a new leader
		// replaced them. Start again from what was committed.
		s.dirty = true
	}
	if s.dirty {
		if err := f.h.rebuildLocked(l.Index - 1); err != nil {
			f.h.log.Error("namenode: rebuilding the namespace failed", "err", err)
			return 0, err
		}
	}
	own, err := s.applyCommittedLocked(e)
	if err != nil {
		f.h.log.Error("namenode: applying a committed entry failed", "index", l.Index, "txid", e.TxID, "err", err)
		s.dirty = true
		return 0, err
	}
	if own {
		return e.TxID, nil
	}
	return 0, nil
}

func (f *haFSM) Snapshot() (raft.FSMSnapshot, error) {
	s := f.h.ns
	s.mu.RLock()
	defer s.mu.RUnlock()
	var buf bytes.Buffer
	buf.Write(snapshotMagic)
	binary.Write(&buf, binary.BigEndian, s.applied)
	recs := s.rpcEditRecords()
	buf.Write(binary.AppendUvarint(nil, uint64(len(recs))))
	for _, r := range recs {
		buf.Write(binary.AppendUvarint(nil, uint64(len(r))))
		buf.Write(r)
	}
	if err := s.tree.WriteImage(&buf); err != nil {
		return nil, err
	}
	return &haSnapshot{h: f.h, data: buf.Bytes(), txid: s.applied, rebuilds: s.rebuilds}, nil
}

func (f *haFSM) Restore(r io.ReadCloser) error {
	defer r.Close()
	s := f.h.ns
	blocks := blockmgmt.NewBlockMap()
	tree, txid, recs, err := readSnapshot(r, blocks)
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.replaceState(tree, blocks, txid)
	s.replayRPCEdits(recs)
	s.rebuilds++
	s.mu.Unlock()
	f.h.log.Info("namenode: namespace restored from a snapshot", "txid", txid)
	return nil
}

// snapshotMagic starts a snapshot: "SNAP", then the txid (8 bytes, big
// endian) of the last edit the image holds, then the image.
var snapshotMagic = []byte("SNAP")

// maxSnapshotRPCEdits bounds the retry-cache edits a snapshot may claim
// to hold, and maxSnapshotRPCEdit one of them.
const (
	maxSnapshotRPCEdits = 1 << 20
	maxSnapshotRPCEdit  = 1 << 20
)

// readSnapshot reads a snapshot: the txid of its content, the recent
// edits with rpc ids (for the retry cache) and the namespace.
func readSnapshot(r io.Reader, blocks *blockmgmt.BlockMap) (*namespace.Tree, uint64, [][]byte, error) {
	br := bufio.NewReader(r)
	head := make([]byte, len(snapshotMagic)+8)
	if _, err := io.ReadFull(br, head); err != nil {
		return nil, 0, nil, fmt.Errorf("snapshot header: %w", err)
	}
	if !bytes.Equal(head[:4], snapshotMagic) {
		return nil, 0, nil, errors.New("not a NameNode snapshot")
	}
	txid := binary.BigEndian.Uint64(head[4:])
	n, err := binary.ReadUvarint(br)
	if err != nil || n > maxSnapshotRPCEdits {
		return nil, 0, nil, fmt.Errorf("snapshot: bad count of retry-cache edits (%d, %v)", n, err)
	}
	var recs [][]byte
	for i := uint64(0); i < n; i++ {
		l, err := binary.ReadUvarint(br)
		if err != nil || l > maxSnapshotRPCEdit {
			return nil, 0, nil, fmt.Errorf("snapshot: bad retry-cache edit (%d bytes, %v)", l, err)
		}
		rec := make([]byte, l)
		if _, err := io.ReadFull(br, rec); err != nil {
			return nil, 0, nil, fmt.Errorf("snapshot: retry-cache edit: %w", err)
		}
		recs = append(recs, rec)
	}
	tree, err := namespace.ReadImage(br, blocks)
	return tree, txid, recs, err
}

// replayRPCEdits fills the retry cache from a snapshot's edits, answering
// from the restored namespace (as a replay at start does).
func (s *Namesystem) replayRPCEdits(recs [][]byte) {
	for _, rec := range recs {
		if e, err := namespace.DecodeEdit(rec); err == nil {
			s.noteApplied(e)
			s.rememberRPCEdit(e, rec)
		}
	}
}

type haSnapshot struct {
	h        *haNode
	data     []byte
	txid     uint64
	rebuilds int
}

// Persist writes the image once every edit it holds is committed.
func (s *haSnapshot) Persist(sink raft.SnapshotSink) error {
	ns := s.h.ns
	deadline := time.Now().Add(30 * time.Second)
	for {
		ns.mu.RLock()
		committed, same := ns.committed, ns.rebuilds == s.rebuilds
		ns.mu.RUnlock()
		if !same {
			sink.Cancel()
			return errors.New("snapshot: the namespace was rebuilt while it was taken")
		}
		if committed >= s.txid {
			break
		}
		if time.Now().After(deadline) {
			sink.Cancel()
			return fmt.Errorf("snapshot at txid %d: its edits did not commit (committed %d)", s.txid, committed)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if _, err := sink.Write(s.data); err != nil {
		sink.Cancel()
		return err
	}
	return sink.Close()
}

func (s *haSnapshot) Release() {}

// raftJournal is the Namesystem's journal in HA mode: Append gives the
// edit the next txid and queues it for Raft (never blocking under the
// namesystem lock), Sync waits until it is committed.
//
// Every activation has a generation; the pump hands Raft only entries of
// the current one, and the first proposal Raft refuses (leadership lost,
// or a leadership transfer in progress while still leader) ends the
// generation: later txids would leave a gap, so the member fences itself
// (standby, rebuild) and, if it still leads, activates again with the
// next txid after what was committed.
type raftJournal struct {
	h *haNode

	mu        sync.Mutex
	queue     []queued // entries not yet handed to Raft
	kick      chan struct{}
	gen       uint64 // current activation; 0 before the first
	next      uint64 // txid of the next Append
	epoch     uint64
	committed uint64 // last own txid seen committed
	lostFrom  uint64 // txids >= this will not be acknowledged (0: none)
	active    bool
	changed   chan struct{}

	futures chan pendingFuture
}

type queued struct {
	gen, txid uint64
	data      []byte
}

type pendingFuture struct {
	gen, txid uint64
	f         raft.ApplyFuture
}

func newRaftJournal(h *haNode) *raftJournal {
	return &raftJournal{h: h, kick: make(chan struct{}, 1), changed: make(chan struct{}), futures: make(chan pendingFuture, 4096)}
}

func (j *raftJournal) start() {
	j.h.nn.wg.Add(2)
	go func() { defer j.h.nn.wg.Done(); j.pump() }()
	go func() { defer j.h.nn.wg.Done(); j.watch() }()
}

func (j *raftJournal) broadcastLocked() {
	close(j.changed)
	j.changed = make(chan struct{})
}

func (j *raftJournal) activate(epoch, next, committed uint64) {
	j.mu.Lock()
	j.gen++
	j.epoch, j.next, j.committed, j.lostFrom, j.active = epoch, next, committed, 0, true
	j.queue = nil
	j.broadcastLocked()
	j.mu.Unlock()
}

func (j *raftJournal) deactivate() {
	j.mu.Lock()
	j.deactivateLocked(j.committed + 1)
	j.mu.Unlock()
}

// deactivateLocked ends the generation: txids from lost on are not
// acknowledged.
func (j *raftJournal) deactivateLocked(lost uint64) {
	if j.lostFrom == 0 || lost < j.lostFrom {
		j.lostFrom = lost
	}
	if j.active {
		j.active = false
		j.queue = nil
	}
	j.broadcastLocked()
}

// Append is called with the namesystem lock held, while active.
func (j *raftJournal) Append(rec []byte) (uint64, error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if !j.active {
		return 0, errNotActive
	}
	txid := j.next
	j.next++
	j.queue = append(j.queue, queued{gen: j.gen, txid: txid, data: quorum.AppendEntry(nil, quorum.Entry{Epoch: j.epoch, TxID: txid, Record: rec})})
	select {
	case j.kick <- struct{}{}:
	default:
	}
	return txid, nil
}

// pump hands queued entries to Raft in order, outside the namesystem lock.
func (j *raftJournal) pump() {
	for {
		select {
		case <-j.h.nn.stop:
			return
		case <-j.kick:
		}
		for {
			j.mu.Lock()
			batch := j.queue
			j.queue = nil
			j.mu.Unlock()
			if len(batch) == 0 {
				break
			}
			for _, q := range batch {
				j.mu.Lock()
				current := j.active && j.gen == q.gen
				j.mu.Unlock()
				if !current {
					continue // its generation ended: it will never be acknowledged
				}
				f := j.h.node.Raft.Apply(q.data, 0)
				select {
				case j.futures <- pendingFuture{gen: q.gen, txid: q.txid, f: f}:
				case <-j.h.nn.stop:
					return
				}
			}
		}
	}
}

// watch notes the proposals Raft refused (leadership lost, a transfer in
// progress, shutdown) or the FSM failed to apply, and fences the member.
func (j *raftJournal) watch() {
	for {
		select {
		case <-j.h.nn.stop:
			return
		case p := <-j.futures:
			err := p.f.Error()
			if err == nil {
				if ferr, ok := p.f.Response().(error); ok && ferr != nil {
					err = ferr
				}
			}
			if err == nil {
				continue
			}
			j.mu.Lock()
			current := j.gen == p.gen && j.active
			if j.gen == p.gen {
				j.deactivateLocked(p.txid)
			}
			j.mu.Unlock()
			if current {
				j.h.fence(p.txid, err)
			}
		}
	}
}

// noteCommitted is the FSM's report that own txid came back committed.
func (j *raftJournal) noteCommitted(txid uint64) {
	j.mu.Lock()
	if txid > j.committed {
		j.committed = txid
		j.broadcastLocked()
	}
	j.mu.Unlock()
}

// Sync waits until txid is committed.
func (j *raftJournal) Sync(ctx context.Context, txid uint64) error {
	return j.waitCommitted(ctx, txid)
}

func (j *raftJournal) waitCommitted(ctx context.Context, txid uint64) error {
	for {
		j.mu.Lock()
		committed, lost, ch := j.committed, j.lostFrom, j.changed
		j.mu.Unlock()
		if committed >= txid {
			return nil
		}
		if lost != 0 && txid >= lost {
			return errNotActive
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		case <-j.h.nn.stop:
			return errNotActive
		}
	}
}

// applyCommittedLocked applies one committed entry in txid order: entries
// the namespace already holds are skipped (the image of a snapshot, or
// this leader's own speculative edits, whose commit it notes).
func (s *Namesystem) applyCommittedLocked(e quorum.Entry) (own bool, err error) {
	switch {
	case e.TxID <= s.committed:
		return false, nil
	case e.TxID != s.committed+1:
		// A proposal after one Raft refused (its leader fenced itself
		// and will propose that txid again): every member skips it alike.
		if e.Epoch == s.epoch && s.applied > s.committed {
			s.dirty = true
		}
		s.log.Warn("namenode: skipping a committed entry after a gap", "txid", e.TxID, "committed", s.committed)
		return false, nil
	}
	ed, err := namespace.DecodeEdit(e.Record)
	if err != nil {
		return false, fmt.Errorf("edit %d does not decode: %w", e.TxID, err)
	}
	if s.applied > s.committed {
		// Our own speculative edit (the FSM checked the epoch): it is in
		// the namespace already. Its rpc ids go to the retry cache, for a
		// client that retries here after this member lost and won back
		// the leadership.
		s.committed = e.TxID
		s.noteApplied(ed)
		s.rememberRPCEdit(ed, e.Record)
		return true, nil
	}
	if err := s.tree.Apply(ed); err != nil {
		return false, fmt.Errorf("edit %d: %w", e.TxID, err)
	}
	s.noteApplied(ed)
	s.rememberRPCEdit(ed, e.Record)
	s.applied, s.committed = e.TxID, e.TxID
	s.bm.ForgetRemoved()
	s.bm.ProcessQueued()
	return false, nil
}

// replaceState swaps in a namespace loaded from a snapshot, with fresh
// block management (DataNodes re-register and report again: a DataNode
// unknown to the new state is told to reregister on its next heartbeat).
func (s *Namesystem) replaceState(tree *namespace.Tree, blocks *blockmgmt.BlockMap, txid uint64) {
	s.tree = tree
	s.bm = s.newBlockManager(blocks)
	s.bm.SetStandby(s.standby)
	// Replica locations start empty: wait for the DataNodes' reports
	// before trusting the counts (they re-register on their next
	// heartbeat).
	s.bm.StartupSafeMode()
	s.leases = namespace.NewLeaseManager()
	s.applied, s.committed = txid, txid
	s.dirty = false
	s.rpcEdits = nil
}

func (s *Namesystem) appliedTxID() uint64 {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.applied
}

func (s *Namesystem) txids() (applied, committed uint64) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.applied, s.committed
}

func (s *Namesystem) rebuildCount() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.rebuilds
}
