package blockmgmt

import (
	"fmt"
	"sort"
	"time"

	"github.com/stratafs/strata/internal/storage"
)

// Datanode is the NameNode's view of one DataNode.
type Datanode struct {
	UUID          string
	IP, Host      string
	XferPort      uint32
	InfoPort      uint32
	IPCPort       uint32
	Storages      map[string]*Storage
	LastHeartbeat time.Time
	LastReport    time.Time
	Dead          bool
	Xceivers      int
	// Rack is the node's network location (topology), "" for the
	// default rack.
	Rack string
	// AdminState is decommissioning and maintenance (decommission.go),
	// since AdminStart; MaintenanceExpire ends a maintenance (zero:
	// never). Disallowed: the hosts files no longer include the node.
	AdminState        AdminState
	AdminStart        time.Time
	MaintenanceExpire time.Time
	Disallowed        bool
	// reported: a full block report arrived since the node (re-)registered
	// (Hadoop's checkBlockReportReceived). Until then its replica list is
	// empty, not complete, so it cannot finish decommissioning.
	reported bool
	// commands waiting for the next heartbeat.
	commands []Command
	// pendingTransfers counts replication streams scheduled from this node.
	pendingTransfers int
}

// XferAddr is the node's data-transfer address, ip:port.
func (d *Datanode) XferAddr() string { return fmt.Sprintf("%s:%d", d.IP, d.XferPort) }

// String names d by address and uuid, for logs.
func (d *Datanode) String() string { return fmt.Sprintf("%s (%s)", d.XferAddr(), d.UUID) }

// Storage is one volume of a DataNode.
type Storage struct {
	ID        string
	Type      storage.Type
	DN        *Datanode
	Capacity  int64
	Used      int64
	Remaining int64
	Failed    bool
	// Blocks with a replica on this storage.
	Blocks map[uint64]*Block
	// scheduled bytes: blocks being written here, not yet in Remaining.
	scheduled int64
}

// DatanodeInfo is a snapshot of a DataNode as reports and commands carry
// it (Hadoop's DatanodeInfo): totals over its working storages.
type DatanodeInfo struct {
	UUID, IP, Host              string
	XferPort, InfoPort, IPCPort uint32
	Capacity, Used, Remaining   int64
	LastHeartbeat, LastReport   time.Time
	Xceivers                    int
	Blocks                      int
	Dead                        bool
	Rack                        string
	AdminState                  AdminState
	MaintenanceExpire           time.Time
}

// Info returns a snapshot of d.
func (d *Datanode) Info() DatanodeInfo {
	in := DatanodeInfo{
		UUID: d.UUID, IP: d.IP, Host: d.Host, XferPort: d.XferPort, InfoPort: d.InfoPort, IPCPort: d.IPCPort,
		LastHeartbeat: d.LastHeartbeat, LastReport: d.LastReport, Xceivers: d.Xceivers, Dead: d.Dead,
		Rack: d.rack(), AdminState: d.AdminState, MaintenanceExpire: d.MaintenanceExpire,
	}
	for _, s := range d.Storages {
		if s.Failed {
			continue
		}
		in.Capacity += s.Capacity
		in.Used += s.Used
		in.Remaining += s.Remaining
		in.Blocks += len(s.Blocks)
	}
	return in
}

// SortedStorages returns d's storages by id.
func (d *Datanode) SortedStorages() []*Storage {
	out := make([]*Storage, 0, len(d.Storages))
	for _, s := range d.Storages {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// datanodes is the registry of DataNodes.
type datanodes struct {
	byUUID    map[string]*Datanode
	byStorage map[string]*Storage
	// byIP is the last node registered from each address (a reader's
	// own node, for read order); check the node's IP on use.
	byIP map[string]*Datanode
	rng  *lockedRand
}

func newDatanodes(rng *lockedRand) *datanodes {
	return &datanodes{byUUID: map[string]*Datanode{}, byStorage: map[string]*Storage{}, byIP: map[string]*Datanode{}, rng: rng}
}

func (ds *datanodes) live() []*Datanode {
	out := make([]*Datanode, 0, len(ds.byUUID))
	for _, d := range ds.byUUID {
		if !d.Dead {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].UUID < out[j].UUID })
	return out
}

// StorageReport is what a DataNode says of one of its volumes.
type StorageReport struct {
	ID                        string
	Type                      storage.Type
	Capacity, Used, Remaining int64
	Failed                    bool
}

// updateStorages applies storage reports from a registration or heartbeat.
// It returns the storages that failed, recovered or changed type: what
// their replicas are worth changed.
func (ds *datanodes) updateStorages(d *Datanode, reports []StorageReport) (changed []*Storage) {
	for _, r := range reports {
		s := d.Storages[r.ID]
		if s == nil {
			s = &Storage{ID: r.ID, DN: d, Blocks: map[uint64]*Block{}}
			d.Storages[s.ID] = s
			ds.byStorage[s.ID] = s
		}
		if s.Type != r.Type || s.Failed != r.Failed {
			changed = append(changed, s)
		}
		s.Type = r.Type
		s.Capacity = r.Capacity
		s.Used = r.Used
		s.Remaining = r.Remaining
		s.Failed = r.Failed
		s.scheduled = 0
	}
	return changed
}

// Placement asks for storages for new replicas of one block.
type Placement struct {
	Types    []storage.Type // one wanted type per replica
	Policy   storage.Policy
	Exclude  map[string]bool // DataNode uuids
	Local    string          // the writer's IP, preferred first
	Need     int64           // bytes each chosen storage must have free
	Creation bool            // creation (else replication) fallbacks
	// Existing are the nodes that already hold the block, Writer the
	// copy's source: the rack rules continue from them (racks.go).
	Existing []*Datanode
	Writer   *Datanode
	// NewRack asks for racks none of Existing is on, and nothing else
	// (fixing a block whose replicas share too few racks).
	NewRack bool
}

// Choose returns up to len(p.Types) storages on distinct live,
// in-service DataNodes, spread over racks as the default placement policy
// does (racks.go), the writer's own node first when it is one, each of the
// wanted type or, failing that, of the policy's fallback types, picked at
// random among those with room. It counts p.Need as scheduled on each
// storage chosen until its next storage report.
func (m *Manager) Choose(p Placement) []*Storage { return m.dns.choose(p) }
