package namenode

import (
	"fmt"
	"math/rand/v2"
	"sort"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/dnpb"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/storage"
)

// datanodeDesc is the NameNode's view of one DataNode.
type datanodeDesc struct {
	uuid          string
	ip, host      string
	xferPort      uint32
	infoPort      uint32
	ipcPort       uint32
	storages      map[string]*storageDesc
	lastHeartbeat time.Time
	lastReport    time.Time
	dead          bool
	xceivers      int
	// commands waiting for the next heartbeat.
	commands []*dnpb.Command
	// pendingTransfers counts replication streams scheduled from this node.
	pendingTransfers int
}

func (d *datanodeDesc) xferAddr() string { return fmt.Sprintf("%s:%d", d.ip, d.xferPort) }

func (d *datanodeDesc) String() string { return fmt.Sprintf("%s (%s)", d.xferAddr(), d.uuid) }

// storageDesc is one volume of a DataNode.
type storageDesc struct {
	id        string
	typ       storage.Type
	dn        *datanodeDesc
	capacity  int64
	used      int64
	remaining int64
	failed    bool
	// blocks with a replica on this storage.
	blocks map[uint64]*block
	// scheduled bytes: blocks being written here, not yet in remaining.
	scheduled int64
}

func (d *datanodeDesc) proto() *hdfspb.DatanodeInfoProto {
	var capacity, used, remaining int64
	var nblocks int
	for _, s := range d.storages {
		if s.failed {
			continue
		}
		capacity += s.capacity
		used += s.used
		remaining += s.remaining
		nblocks += len(s.blocks)
	}
	st := hdfspb.DatanodeInfoProto_NORMAL
	return &hdfspb.DatanodeInfoProto{
		Id: &hdfspb.DatanodeIDProto{
			IpAddr: proto.String(d.ip), HostName: proto.String(d.host), DatanodeUuid: proto.String(d.uuid),
			XferPort: proto.Uint32(d.xferPort), InfoPort: proto.Uint32(d.infoPort), IpcPort: proto.Uint32(d.ipcPort),
		},
		Capacity: proto.Uint64(uint64(capacity)), DfsUsed: proto.Uint64(uint64(used)), Remaining: proto.Uint64(uint64(remaining)),
		BlockPoolUsed: proto.Uint64(uint64(used)), LastUpdate: proto.Uint64(uint64(d.lastHeartbeat.UnixMilli())),
		XceiverCount: proto.Uint32(uint32(d.xceivers)), Location: proto.String("/default-rack"),
		AdminState: st.Enum(), NumBlocks: proto.Uint32(uint32(nblocks)),
		LastBlockReportTime: proto.Uint64(uint64(d.lastReport.UnixMilli())),
	}
}

// datanodes is the registry of DataNodes. Guarded by the Namesystem lock.
type datanodes struct {
	byUUID    map[string]*datanodeDesc
	byStorage map[string]*storageDesc
	rng       *rand.Rand
}

func newDatanodes() *datanodes {
	return &datanodes{byUUID: map[string]*datanodeDesc{}, byStorage: map[string]*storageDesc{}, rng: rand.New(rand.NewPCG(1, 2))}
}

func (ds *datanodes) live() []*datanodeDesc {
	out := make([]*datanodeDesc, 0, len(ds.byUUID))
	for _, d := range ds.byUUID {
		if !d.dead {
			out = append(out, d)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].uuid < out[j].uuid })
	return out
}

// updateStorages applies storage reports from a registration or heartbeat.
func (ds *datanodes) updateStorages(d *datanodeDesc, reports []*dnpb.StorageReport) {
	for _, r := range reports {
		s := d.storages[r.GetStorageId()]
		if s == nil {
			s = &storageDesc{id: r.GetStorageId(), dn: d, blocks: map[uint64]*block{}}
			d.storages[s.id] = s
			ds.byStorage[s.id] = s
		}
		s.typ = storage.Type(r.GetStorageType())
		s.capacity = int64(r.GetCapacity())
		s.used = int64(r.GetDfsUsed())
		s.remaining = int64(r.GetRemaining())
		s.failed = r.GetFailed()
		s.scheduled = 0
	}
}

// placement picks storages for new replicas.
type placement struct {
	types    []storage.Type // one wanted type per replica
	policy   storage.Policy
	exclude  map[string]bool // DataNode uuids
	local    string          // the writer's IP, preferred first
	need     int64           // bytes each chosen storage must have free
	creation bool            // creation or replication fallbacks
}

// choose returns up to len(p.types) storages on distinct live DataNodes,
// the writer's own node first when it is one, each of the wanted type or,
// failing that, of the policy's fallback types.
func (ds *datanodes) choose(p placement) []*storageDesc {
	var out []*storageDesc
	used := map[string]bool{}
	for k, v := range p.exclude {
		used[k] = v
	}
	fallbacks := p.policy.ReplicationFallbacks
	if p.creation {
		fallbacks = p.policy.CreationFallbacks
	}
	for i, want := range p.types {
		candidates := append([]storage.Type{want}, fallbacks...)
		var pick *storageDesc
		for _, t := range candidates {
			pick = ds.pick(t, used, p.need, i == 0 && len(out) == 0, p.local)
			if pick != nil {
				break
			}
		}
		if pick == nil {
			continue
		}
		used[pick.dn.uuid] = true
		pick.scheduled += p.need
		out = append(out, pick)
	}
	return out
}

func (ds *datanodes) pick(t storage.Type, used map[string]bool, need int64, preferLocal bool, local string) *storageDesc {
	var all []*storageDesc
	for _, d := range ds.live() {
		if used[d.uuid] {
			continue
		}
		for _, s := range sortedStorages(d) {
			if s.failed || s.typ != t || s.remaining-s.scheduled < need {
				continue
			}
			all = append(all, s)
		}
	}
	if len(all) == 0 {
		return nil
	}
	if preferLocal && local != "" {
		var locals []*storageDesc
		for _, s := range all {
			if s.dn.ip == local {
				locals = append(locals, s)
			}
		}
		if len(locals) > 0 {
			all = locals
		}
	}
	return all[ds.rng.IntN(len(all))]
}

func sortedStorages(d *datanodeDesc) []*storageDesc {
	out := make([]*storageDesc, 0, len(d.storages))
	for _, s := range d.storages {
		out = append(out, s)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].id < out[j].id })
	return out
}
