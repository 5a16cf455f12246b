package blockmgmt

import (
	"sort"

	"github.com/stratafs/strata/internal/storage"
)

// BlockWithLocations is a block and where its good replicas are, for the
// balancer (Hadoop's BlocksWithLocations).
type BlockWithLocations struct {
	ID, GenStamp              uint64
	NumBytes                  int64
	DatanodeUUIDs, StorageIDs []string
	StorageTypes              []storage.Type
}

// MaxGetBlocks bounds the blocks one GetBlocks returns.
const MaxGetBlocks = 10000

// GetBlocks is NamenodeProtocol.getBlocks: blocks with a good replica on
// DataNode uuid, totalling at least size bytes where it has that many,
// each of at least minBlockSize bytes, starting at a random block so that
// concurrent balancers spread out. Blocks being written are left out (they
// cannot move). An unknown node is a ProtocolError.
func (m *Manager) GetBlocks(uuid string, size, minBlockSize int64) ([]BlockWithLocations, error) {
	d := m.dns.byUUID[uuid]
	if d == nil || d.Dead {
		return nil, protocolErr("Datanode %s not found", uuid)
	}
	var ids []uint64
	for _, st := range d.Storages {
		for id := range st.Blocks {
			ids = append(ids, id)
		}
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	var out []BlockWithLocations
	var total int64
	start := 0
	if len(ids) > 0 {
		start = m.rng.IntN(len(ids))
	}
	for k := 0; k < len(ids) && total < size && len(out) < MaxGetBlocks; k++ {
		b := m.blocks.Get(ids[(start+k)%len(ids)])
		if b == nil || !b.Committed || b.File == nil || b.NumBytes < minBlockSize ||
			b.File.IsUnderConstruction() && b == b.File.LastBlock() {
			continue
		}
		bl := BlockWithLocations{ID: b.ID, GenStamp: b.GenStamp, NumBytes: b.NumBytes}
		onNode := false
		for _, r := range GoodReplicas(b) {
			bl.DatanodeUUIDs = append(bl.DatanodeUUIDs, r.Storage.DN.UUID)
			bl.StorageIDs = append(bl.StorageIDs, r.Storage.ID)
			bl.StorageTypes = append(bl.StorageTypes, r.Storage.Type)
			onNode = onNode || r.Storage.DN == d
		}
		if !onNode {
			continue
		}
		out = append(out, bl)
		total += b.NumBytes
	}
	return out, nil
}
