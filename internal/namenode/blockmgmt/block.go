package blockmgmt

import (
	"fmt"
	"iter"
	"maps"
	"slices"
	"sort"
	"time"

	"github.com/stratafs/strata/internal/storage"
)

// Block ids start above 2^30 and generation stamps at 1001, as in HDFS.
const (
	FirstBlockID  = 1<<30 + 1
	FirstGenStamp = 1001
)

// BlockCollection is what block management needs of the file a block
// belongs to (Hadoop's BlockCollection). The namespace's inodes implement
// it; tests use a small fake.
type BlockCollection interface {
	// InodeID is the file's inode id.
	InodeID() uint64
	// Path is the file's current absolute path, for logs.
	Path() string
	// ReplicationFactor is the number of replicas the file asks for.
	ReplicationFactor() int
	// EffectivePolicy is the storage policy placing the file's replicas.
	EffectivePolicy() storage.Policy
	// IsUnderConstruction reports whether a writer holds the file open.
	IsUnderConstruction() bool
	// LastBlock is the file's last block, or nil.
	LastBlock() *Block
}

// Block is one block of a file. Its id, generation stamp and length are
// persistent (edit log, image) and set by the namespace when it applies an
// edit; where its replicas are is not: DataNodes report it after every
// NameNode start.
type Block struct {
	ID       uint64
	GenStamp uint64
	NumBytes int64
	File     BlockCollection
	// HeldReplication is the most replicas the snapshot copies holding
	// the block ask for (the namespace keeps it); the block is kept at
	// the larger of it and File's replication (WantReplicas).
	HeldReplication int

	// Committed: the writer has reported the final length. Complete: it
	// has, and enough replicas with that length have been reported.
	Committed bool
	Complete  bool
	// queued: the block is in its Manager's replication queue (queue.go).
	queued bool

	// Replicas reported by DataNodes, one per storage.
	Replicas Replicas
	// Expected are the pipeline's storages while the block is written.
	Expected []*Storage
	// Deleting holds DataNodes told to delete their replica, until they
	// confirm it: no new copy goes there before.
	Deleting map[string]time.Time
}

// NewBlock returns a block of file with no replicas.
func NewBlock(id uint64, file BlockCollection) *Block {
	return &Block{ID: id, File: file}
}

// WantReplicas is the number of replicas b should have: the most any of
// its holders asks for (Hadoop's getPreferredBlockReplication).
func (b *Block) WantReplicas() int {
	if b.File == nil {
		return b.HeldReplication
	}
	return max(b.File.ReplicationFactor(), b.HeldReplication)
}

// String names b as HDFS logs do: blk_<id>_<generation stamp>.
func (b *Block) String() string { return fmt.Sprintf("blk_%d_%d", b.ID, b.GenStamp) }

// Replica is a copy of a block on one DataNode storage.
type Replica struct {
	Storage  *Storage
	GenStamp uint64
	NumBytes int64
	Final    bool // finalized on the DataNode (not being written)
	Corrupt  bool
}

// Replicas are a block's reported replicas, at most one per storage, in
// the order they were reported. A block has about its replication's
// number, so a slice searched in turn is as quick as a map and a fraction
// of its size: a one-entry map[string]*Replica takes ~250 bytes, a
// million blocks' worth a quarter of a gigabyte.
type Replicas []*Replica

// Of returns the replica on the storage with id storageID, or nil.
func (rs Replicas) Of(storageID string) *Replica {
	for _, r := range rs {
		if r.Storage.ID == storageID {
			return r
		}
	}
	return nil
}

// set records r, replacing any replica on r's storage.
func (rs *Replicas) set(r *Replica) {
	for i, x := range *rs {
		if x.Storage.ID == r.Storage.ID {
			(*rs)[i] = r
			return
		}
	}
	*rs = append(*rs, r)
}

// drop forgets the replica on the storage with id storageID, if any.
func (rs *Replicas) drop(storageID string) {
	for i, x := range *rs {
		if x.Storage.ID == storageID {
			*rs = slices.Delete(*rs, i, i+1) // clears the freed slot
			if len(*rs) == 0 {
				*rs = nil
			}
			return
		}
	}
}

// BlockMap is every block of every file, by id, with the last block id
// and generation stamp handed out. It is not safe for concurrent use.
type BlockMap struct {
	m      map[uint64]*Block
	lastID uint64
	lastGS uint64
	// removed collects blocks dropped from files by applied edits, so
	// their replicas can be deleted on the DataNodes.
	removed []*Block
	// touched, when set, hears of every block id an edit adds or notes
	// (its Manager's standby queue waits for them).
	touched func(id uint64)
	// changed, when set, hears of every block added, noted, dropped or
	// passed to Changed: its Manager's replication monitor checks it on
	// its next pass.
	changed func(id uint64)
	// changedAll, when set, hears that what any block needs may have
	// changed (ChangedAll); watching reports whether changed and
	// changedAll do anything at the moment (Watched).
	changedAll func()
	watching   func() bool
}

// NewBlockMap returns an empty map whose first block id and generation
// stamp will be FirstBlockID and FirstGenStamp.
func NewBlockMap() *BlockMap {
	return &BlockMap{m: map[uint64]*Block{}, lastID: FirstBlockID - 1, lastGS: FirstGenStamp - 1}
}

// Get returns the block with id, or nil.
func (bm *BlockMap) Get(id uint64) *Block { return bm.m[id] }

// Put adds b (replacing any block with its id).
func (bm *BlockMap) Put(b *Block) {
	bm.m[b.ID] = b
	if bm.touched != nil {
		bm.touched(b.ID)
	}
	bm.Changed(b.ID)
}

// Changed tells block management that what block id needs may have
// changed outside it: its file's replication or storage policy, or the
// replication its snapshot copies hold it at.
func (bm *BlockMap) Changed(id uint64) {
	if bm.changed != nil {
		bm.changed(id)
	}
}

// ChangedAll is Changed for every block: for a change that affects more
// blocks than are worth listing one by one.
func (bm *BlockMap) ChangedAll() {
	if bm.changedAll != nil {
		bm.changedAll()
	}
}

// Watched reports whether Changed and ChangedAll do anything now: they do
// not without a Manager, nor while it is standby (it keeps no queue) or
// has a pass over every block ahead. Callers that walk a subtree to list
// its blocks for Changed can skip the walk when they do not.
func (bm *BlockMap) Watched() bool { return bm.watching != nil && bm.watching() }

// Len is the number of blocks.
func (bm *BlockMap) Len() int { return len(bm.m) }

// IDs returns every block id in ascending order.
func (bm *BlockMap) IDs() []uint64 {
	ids := make([]uint64, 0, len(bm.m))
	for id := range bm.m {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// ids yields every block id, in the map's order. The map may change
// between ids (Go's map iteration allows it): a block dropped is not
// yielded, one added may or may not be.
func (bm *BlockMap) ids() iter.Seq[uint64] { return maps.Keys(bm.m) }

// LastID is the highest block id seen; a new block gets one more.
func (bm *BlockMap) LastID() uint64 { return bm.lastID }

// LastGenStamp is the highest generation stamp seen; a new one is one more.
func (bm *BlockMap) LastGenStamp() uint64 { return bm.lastGS }

// Note raises the last block id and generation stamp to id and gs.
func (bm *BlockMap) Note(id, gs uint64) {
	if bm.touched != nil && id != 0 {
		bm.touched(id)
	}
	if id != 0 {
		bm.Changed(id)
	}
	if id > bm.lastID {
		bm.lastID = id
	}
	if gs > bm.lastGS {
		bm.lastGS = gs
	}
}

// Drop removes b, remembering it for TakeRemoved.
func (bm *BlockMap) Drop(b *Block) {
	if bm.m[b.ID] == b {
		delete(bm.m, b.ID)
		bm.removed = append(bm.removed, b)
		bm.Changed(b.ID)
	}
}

// TakeRemoved returns and clears the blocks removed since the last call.
func (bm *BlockMap) TakeRemoved() []*Block {
	r := bm.removed
	bm.removed = nil
	return r
}
