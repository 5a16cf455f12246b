package namenode

import (
	"fmt"
	"time"

	"github.com/stratafs/strata/internal/proto/namenodepb"
	"google.golang.org/protobuf/proto"
)

// Block ids start above 2^30 and generation stamps at 1001, as in HDFS.
const (
	firstBlockID  = 1<<30 + 1
	firstGenStamp = 1001
)

// block is one block of a file. Its id, generation stamp and length are
// persistent (edit log, image); where its replicas are is not: DataNodes
// report it after every NameNode start.
type block struct {
	id       uint64
	gs       uint64
	numBytes int64
	file     *inode

	// committed: the writer has reported the final length. complete: it
	// has, and enough replicas with that length have been reported.
	committed bool
	complete  bool

	// replicas reported by DataNodes, by storage id.
	replicas map[string]*replica
	// expected are the pipeline's storages while the block is written.
	expected []*storageDesc
	// deleting holds DataNodes told to delete their replica, until they
	// confirm it: no new copy goes there before.
	deleting map[string]time.Time
}

func (b *block) String() string { return fmt.Sprintf("blk_%d_%d", b.id, b.gs) }

func (b *block) proto() *namenodepb.Block {
	return &namenodepb.Block{Id: proto.Uint64(b.id), GenStamp: proto.Uint64(b.gs), NumBytes: proto.Uint64(uint64(b.numBytes))}
}

// replica is a copy of a block on one DataNode storage.
type replica struct {
	storage  *storageDesc
	gs       uint64
	numBytes int64
	final    bool // finalized on the DataNode (not being written)
	corrupt  bool
}

// blockMap is every block of every file, by id.
type blockMap struct {
	m      map[uint64]*block
	lastID uint64
	lastGS uint64
	// removed collects blocks dropped from files by applied edits, so
	// their replicas can be deleted on the DataNodes.
	removed []*block
}

func newBlockMap() *blockMap {
	return &blockMap{m: map[uint64]*block{}, lastID: firstBlockID - 1, lastGS: firstGenStamp - 1}
}

// setBlocks makes file's block list match bs (from an edit or image):
// known blocks are updated in place (keeping their replica locations), new
// ones added, dropped ones removed from the map.
func (bm *blockMap) setBlocks(file *inode, bs []*namenodepb.Block, complete bool) {
	keep := make(map[uint64]bool, len(bs))
	out := make([]*block, 0, len(bs))
	for _, pb := range bs {
		b := bm.m[pb.GetId()]
		if b == nil || b.file != file {
			b = &block{id: pb.GetId(), file: file, replicas: map[string]*replica{}}
			bm.m[b.id] = b
		}
		b.gs = pb.GetGenStamp()
		b.numBytes = int64(pb.GetNumBytes())
		keep[b.id] = true
		out = append(out, b)
		bm.note(b.id, b.gs)
	}
	for _, old := range file.blocks {
		if !keep[old.id] {
			bm.drop(old)
		}
	}
	for i, b := range out {
		// Every block but the last of a file being written is committed;
		// a closed file's blocks are all committed.
		if complete || i < len(out)-1 {
			b.committed = true
		}
	}
	file.blocks = out
}

func (bm *blockMap) note(id, gs uint64) {
	if id > bm.lastID {
		bm.lastID = id
	}
	if gs > bm.lastGS {
		bm.lastGS = gs
	}
}

func (bm *blockMap) drop(b *block) {
	if bm.m[b.id] == b {
		delete(bm.m, b.id)
		bm.removed = append(bm.removed, b)
	}
}

// dropFile removes every block of the files at or under n.
func (bm *blockMap) dropFile(n *inode) {
	if n.isDir {
		for _, c := range n.children {
			bm.dropFile(c)
		}
		return
	}
	for _, b := range n.blocks {
		bm.drop(b)
	}
}

// takeRemoved returns and clears the blocks removed since the last call.
func (bm *blockMap) takeRemoved() []*block {
	r := bm.removed
	bm.removed = nil
	return r
}

func blocksProto(bs []*block) []*namenodepb.Block {
	out := make([]*namenodepb.Block, len(bs))
	for i, b := range bs {
		out[i] = b.proto()
	}
	return out
}

// fileLength is the sum of the file's block lengths.
func fileLength(n *inode) int64 {
	var l int64
	for _, b := range n.blocks {
		l += b.numBytes
	}
	return l
}
