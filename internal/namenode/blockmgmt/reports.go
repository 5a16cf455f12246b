package blockmgmt

import (
	"fmt"
	"slices"
	"sort"

	"github.com/stratafs/strata/internal/storage"
)

// Registration is a DataNode's registration.
type Registration struct {
	UUID string
	// IP is what the node says; the connection's address overrides it
	// (NodeIP). Hostname is for display only.
	IP, Hostname                string
	XferPort, InfoPort, IPCPort uint32
	Storages                    []StorageReport
	// Rack is the node's network location, resolved by the caller
	// ("": the default rack).
	Rack string
}

// ProtocolError is a DataNode protocol request the Manager refuses (an
// unregistered node, an unknown storage); the NameNode answers it as an
// IOException.
type ProtocolError struct{ msg string }

func (e *ProtocolError) Error() string { return e.msg }

func protocolErr(format string, args ...any) error {
	return &ProtocolError{msg: fmt.Sprintf(format, args...)}
}

// NodeIP is the address a registering DataNode is known by: the
// connection's remote address, as Hadoop's registerDatanode overwrites
// the self-reported one (which a node could set to an included host's);
// the registration's IP only when there is no connection (in-process
// callers, tests).
func NodeIP(reg Registration, remoteIP string) string {
	if remoteIP != "" {
		return remoteIP
	}
	return reg.IP
}

// Admits reports whether the hosts files let a DataNode at remoteIP
// register (nil), else the DisallowedError. Only the address is matched
// (host-file names by their resolved addresses, as Hadoop's
// HostFileManager): the self-reported host name proves nothing.
func (m *Manager) Admits(reg Registration, remoteIP string) error {
	probe := &Datanode{UUID: reg.UUID, IP: NodeIP(reg, remoteIP), XferPort: reg.XferPort}
	if !m.hosts.Included(probe) {
		return &DisallowedError{Node: probe.String()}
	}
	return nil
}

// RegisterDatanode adds (or re-adds) a DataNode at NodeIP(reg, remoteIP).
// A re-registering node's replica locations are forgotten: its full block
// report follows.
func (m *Manager) RegisterDatanode(reg Registration, remoteIP string) error {
	if reg.UUID == "" || reg.XferPort == 0 {
		return protocolErr("registration without a DataNode UUID or transfer port")
	}
	if err := m.Admits(reg, remoteIP); err != nil {
		return err
	}
	d := m.dns.byUUID[reg.UUID]
	if d != nil {
		m.removeReplicasOf(d)
		m.queued.dropStorages(d.SortedStorages()...)
	} else {
		d = &Datanode{UUID: reg.UUID, Storages: map[string]*Storage{}}
		m.dns.byUUID[d.UUID] = d
	}
	d.IP = NodeIP(reg, remoteIP)
	d.Host = reg.Hostname
	if d.Host == "" {
		d.Host = d.IP
	}
	d.XferPort, d.InfoPort, d.IPCPort = reg.XferPort, reg.InfoPort, reg.IPCPort
	d.Dead = false
	d.Disallowed = false
	d.reported = false
	if d.Rack != reg.Rack {
		m.recheckNode(d)
	}
	d.Rack = reg.Rack
	m.dns.byIP[d.IP] = d
	d.LastHeartbeat = m.now()
	d.commands = nil
	for _, st := range m.dns.updateStorages(d, reg.Storages) {
		m.recheckStorage(st)
	}
	m.applyAdmin(d, m.now())
	m.log.Info("namenode: datanode registered", "datanode", d.String(), "storages", len(d.Storages))
	return nil
}

// Heartbeat is a DataNode's periodic report.
type Heartbeat struct {
	UUID     string
	Xceivers int
	Storages []StorageReport
}

// Heartbeat records a DataNode's liveness and storage, and returns its
// queued commands. An unknown or dead DataNode is told to re-register.
func (m *Manager) Heartbeat(hb Heartbeat) []Command {
	d := m.dns.byUUID[hb.UUID]
	if d == nil || d.Dead {
		return []Command{{Kind: Reregister}}
	}
	d.LastHeartbeat = m.now()
	d.Xceivers = hb.Xceivers
	for _, st := range m.dns.updateStorages(d, hb.Storages) {
		m.recheckStorage(st)
	}
	return takeCommands(d)
}

// ReportedReplica is a replica as a DataNode reports it.
type ReportedReplica struct {
	ID, GenStamp uint64
	NumBytes     int64
	Finalized    bool // else being written or waiting for recovery
	// Writing: not finalized, and a writer holds it now (RBW; an
	// unfinalized replica found at the DataNode's start is RWR).
	Writing bool
	// DelHint, for a received replica, names the DataNode (uuid) whose
	// replica it replaces (a balancer move): the excess pass deletes
	// that one.
	DelHint string
}

// StorageBlockReport lists every replica on one storage.
type StorageBlockReport struct {
	StorageID string
	Replicas  []ReportedReplica
}

// BlockReport replaces what the NameNode knows of a DataNode's storages
// with a full report, and returns the node's queued commands. An unknown
// or dead node is told to re-register; an unknown storage is an error.
func (m *Manager) BlockReport(uuid string, reports []StorageBlockReport) ([]Command, error) {
	d := m.dns.byUUID[uuid]
	if d == nil || d.Dead {
		return []Command{{Kind: Reregister}}, nil
	}
	total := 0
	for _, rep := range reports {
		st := d.Storages[rep.StorageID]
		if st == nil {
			return nil, protocolErr("block report for unknown storage %s of %s", rep.StorageID, d)
		}
		m.queued.dropStorages(st) // this report is newer than any held back
		// The report replaces what st held: a replica it records again
		// unchanged stays as it was (and its block is not rechecked, so a
		// periodic report of a healthy node queues no work for the
		// replication monitor); one it does not record is removed.
		recorded := make([]uint64, 0, len(rep.Replicas))
		for _, r := range rep.Replicas {
			if m.reportReplica(st, r) {
				recorded = append(recorded, r.ID)
			}
		}
		slices.Sort(recorded)
		for id := range st.Blocks {
			if _, ok := slices.BinarySearch(recorded, id); !ok {
				m.removeReplica(st, id)
			}
		}
		total += len(rep.Replicas)
	}
	d.LastReport = m.now()
	d.reported = true
	m.log.Info("namenode: block report", "datanode", d.String(), "replicas", total)
	return takeCommands(d), nil
}

// StorageReceivedDeleted is an incremental report for one storage.
type StorageReceivedDeleted struct {
	StorageID string
	Received  []ReportedReplica
	Deleted   []uint64 // block ids
}

// ReceivedDeleted applies an incremental block report. Reports for
// unknown storages are ignored; an unregistered node is an error.
func (m *Manager) ReceivedDeleted(uuid string, reports []StorageReceivedDeleted) error {
	d := m.dns.byUUID[uuid]
	if d == nil || d.Dead {
		return protocolErr("incremental block report from unregistered DataNode %s", uuid)
	}
	for _, sr := range reports {
		st := d.Storages[sr.StorageID]
		if st == nil {
			continue
		}
		for _, r := range sr.Received {
			if r.DelHint != "" {
				m.delHints[r.ID] = r.DelHint
			}
			m.reportReplica(st, r)
		}
		for _, id := range sr.Deleted {
			m.queued.dropPair(id, st)
			if b := m.blocks.Get(id); b != nil {
				delete(b.Deleting, d.UUID)
			}
			m.removeReplica(st, id)
		}
	}
	return nil
}

// DatanodeReportBadReplicas marks the replicas of blocks ids on storage
// storageID corrupt, as the DataNode that holds them found them. A
// standby that does not know the replica yet holds the report back.
func (m *Manager) DatanodeReportBadReplicas(storageID string, ids []uint64, reason string) {
	st := m.dns.byStorage[storageID]
	if st == nil {
		return
	}
	for _, id := range ids {
		q := &queuedReport{st: st, rep: ReportedReplica{ID: id}, bad: true, reason: reason}
		if m.standby && (len(m.queued.byBlock[id]) > 0 || m.holdBack(q)) {
			m.hold(q)
			continue
		}
		m.markBad(st, id, reason)
	}
}

func (m *Manager) markBad(st *Storage, id uint64, reason string) {
	if b := m.blocks.Get(id); b != nil {
		if r := b.Replicas.Of(st.ID); r != nil && !r.Corrupt {
			r.Corrupt = true
			m.recheckBlock(b)
			m.log.Warn("namenode: datanode reports corrupt replica", "block", b.String(), "datanode", st.DN.String(), "reason", reason)
		}
	}
}

// addReplica records that storage st holds rep, or asks the DataNode to
// delete it when it is not wanted: a replica of no file, or an unfinished
// leftover of a block finished elsewhere (one being written with the
// block's generation stamp is left alone). A finalized replica with an older
// generation stamp, or the wrong length for a committed block, is recorded
// as corrupt, and so is a new report of a copy already marked corrupt.
// It reports whether st now holds a replica of rep's block.
func (m *Manager) addReplica(st *Storage, rep ReportedReplica) bool {
	b := m.blocks.Get(rep.ID)
	if b == nil {
		m.invalidate(st, rep.ID, rep.GenStamp)
		return false
	}
	final := rep.Finalized
	if !final && b.Committed {
		if rep.Writing && rep.GenStamp == b.GenStamp {
			// A copy being received — a re-replication, or a pipeline
			// that has not finalized yet when the report was made — of
			// a block already committed: its finalized report follows.
			// Deleting it would kill the transfer (Hadoop ignores it
			// too, HDFS-2791).
			return false
		}
		m.invalidate(st, b.ID, rep.GenStamp)
		return false
	}
	r := &Replica{Storage: st, GenStamp: rep.GenStamp, NumBytes: rep.NumBytes, Final: final}
	if final && (r.GenStamp < b.GenStamp || b.Committed && r.GenStamp == b.GenStamp && r.NumBytes != b.NumBytes) {
		r.Corrupt = true
		m.log.Warn("namenode: replica does not match its block", "block", b.String(), "replica_gs", r.GenStamp, "replica_len", r.NumBytes, "block_len", b.NumBytes, "datanode", st.DN.String())
	}
	old := b.Replicas.Of(st.ID)
	if old != nil && old.Corrupt && old.GenStamp == r.GenStamp && old.NumBytes == r.NumBytes {
		r.Corrupt = true
	}
	if old == nil || *old != *r || st.Blocks[b.ID] != b {
		b.Replicas.set(r)
		st.Blocks[b.ID] = b
		m.recheckBlock(b)
	}
	if p := m.pending[b.ID]; p != nil {
		p.arrived(st.DN.UUID)
		if p.done() {
			m.finishPending(b.ID)
		}
	}
	return true
}

// ReportType selects DataNodes for DatanodeReport.
type ReportType int

const (
	ReportAll ReportType = iota
	ReportLive
	ReportDead
	ReportDecommissioning     // decommission in progress
	ReportEnteringMaintenance // entering maintenance
	ReportInMaintenance       // in maintenance
)

func (t ReportType) wants(d *Datanode) bool {
	switch t {
	case ReportLive:
		return !d.Dead
	case ReportDead:
		return d.Dead
	case ReportDecommissioning:
		return d.AdminState == DecommissionInProgress
	case ReportEnteringMaintenance:
		return d.AdminState == EnteringMaintenance
	case ReportInMaintenance:
		return d.AdminState == InMaintenance
	}
	return true
}

// DatanodeReport describes the DataNodes of type t, by uuid.
func (m *Manager) DatanodeReport(t ReportType) []DatanodeInfo {
	var out []DatanodeInfo
	for _, d := range m.sortedDatanodes() {
		if t.wants(d) {
			out = append(out, d.Info())
		}
	}
	return out
}

// DatanodeStorages is a DataNode with its storages, for
// getDatanodeStorageReport.
type DatanodeStorages struct {
	Node     DatanodeInfo
	Storages []StorageStat
}

// DatanodeStorageReport describes the DataNodes of type t with each of
// their storages, by uuid then storage id.
func (m *Manager) DatanodeStorageReport(t ReportType) []DatanodeStorages {
	var out []DatanodeStorages
	for _, d := range m.sortedDatanodes() {
		if !t.wants(d) {
			continue
		}
		r := DatanodeStorages{Node: d.Info()}
		for _, st := range d.SortedStorages() {
			r.Storages = append(r.Storages, storageStat(st))
		}
		out = append(out, r)
	}
	return out
}

func (m *Manager) sortedDatanodes() []*Datanode {
	out := make([]*Datanode, 0, len(m.dns.byUUID))
	for _, d := range m.dns.byUUID {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UUID < out[j].UUID })
	return out
}

// StorageStat describes one storage, for dfsadmin -report and metrics.
type StorageStat struct {
	DatanodeUUID, Addr, StorageID string
	Type                          storage.Type
	Capacity, Used, Remaining     int64
	Blocks                        int
	Failed, Dead                  bool
}

func storageStat(st *Storage) StorageStat {
	d := st.DN
	return StorageStat{DatanodeUUID: d.UUID, Addr: d.XferAddr(), StorageID: st.ID, Type: st.Type,
		Capacity: st.Capacity, Used: st.Used, Remaining: st.Remaining, Blocks: len(st.Blocks), Failed: st.Failed, Dead: d.Dead}
}

// Storages lists every storage of every DataNode, by address then id.
func (m *Manager) Storages() []StorageStat {
	var out []StorageStat
	for _, d := range m.dns.byUUID {
		for _, st := range d.Storages {
			out = append(out, storageStat(st))
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Addr != out[j].Addr {
			return out[i].Addr < out[j].Addr
		}
		return out[i].StorageID < out[j].StorageID
	})
	return out
}

// Live returns the live DataNodes by uuid.
func (m *Manager) Live() []*Datanode { return m.dns.live() }

// Storage returns the storage with id, or nil.
func (m *Manager) Storage(id string) *Storage { return m.dns.byStorage[id] }
