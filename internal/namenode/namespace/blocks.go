package namespace

import (
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/storage"
)

// BlockInfo is the persistent part of a block: what the edit log and the
// image record.
type BlockInfo struct {
	ID       uint64
	GenStamp uint64
	NumBytes int64
}

// BlockInfos returns the persistent part of bs, in order.
func BlockInfos(bs []*blockmgmt.Block) []BlockInfo {
	out := make([]BlockInfo, len(bs))
	for i, b := range bs {
		out[i] = BlockInfo{ID: b.ID, GenStamp: b.GenStamp, NumBytes: b.NumBytes}
	}
	return out
}

// FileOf returns the inode b belongs to, or nil.
func FileOf(b *blockmgmt.Block) *Inode {
	n, _ := b.File.(*Inode)
	return n
}

// setBlocks makes file's block list match bs (from an edit or image):
// known blocks are updated in place (keeping their replica locations), new
// ones added, dropped ones removed from the map. Only the blocks added or
// changed (generation stamp, length, committed) are noted to block
// management: a file being written does not queue all its blocks again on
// every added block.
func (t *Tree) setBlocks(file *Inode, bs []BlockInfo, complete bool) {
	bm := t.Blocks
	old := file.Blocks()
	var keep map[uint64]bool // ids in bs, when there are old blocks to drop
	if len(old) > 0 {
		keep = make(map[uint64]bool, len(bs))
	}
	out := make([]*blockmgmt.Block, 0, len(bs))
	for i, info := range bs {
		b := bm.Get(info.ID)
		added := b == nil || FileOf(b) != file
		if added {
			b = blockmgmt.NewBlock(info.ID, file)
			bm.Put(b)
		}
		// Every block but the last of a file being written is committed;
		// a closed file's blocks are all committed.
		committed := b.Committed || complete || i < len(bs)-1
		if added || b.GenStamp != info.GenStamp || b.NumBytes != info.NumBytes || b.Committed != committed {
			b.GenStamp = info.GenStamp
			b.NumBytes = info.NumBytes
			b.Committed = committed
			bm.Note(b.ID, b.GenStamp)
		}
		if keep != nil {
			keep[b.ID] = true
		}
		out = append(out, b)
	}
	for _, b := range old {
		if !keep[b.ID] {
			t.release(b)
		}
	}
	file.SetBlockList(out)
}

// dropFile removes every block of the files at or under n.
func (t *Tree) dropFile(n *Inode) {
	if n.IsDir {
		for _, c := range n.Children {
			t.dropFile(c)
		}
		return
	}
	t.endCopy(n)
	for _, b := range n.Blocks() {
		t.release(b)
	}
}

// Length is the sum of the file's block lengths (0 for a directory).
func (n *Inode) Length() int64 {
	if n.frozen() != nil {
		return n.frozenLen()
	}
	var l int64
	for _, b := range n.Blocks() {
		l += b.NumBytes
	}
	return l
}

// The blockmgmt.BlockCollection methods.

// InodeID is n.ID.
func (n *Inode) InodeID() uint64 { return n.ID }

// ReplicationFactor is the file's target replication.
func (n *Inode) ReplicationFactor() int { return int(n.Replication()) }

// IsUnderConstruction reports whether a writer holds the file open.
func (n *Inode) IsUnderConstruction() bool { return n.UC() != nil }

// LastBlock is the file's last block, or nil.
func (n *Inode) LastBlock() *blockmgmt.Block {
	if len(n.Blocks()) == 0 {
		return nil
	}
	return n.Blocks()[len(n.Blocks())-1]
}

// EffectivePolicy is the storage policy of n: its own, else the nearest
// ancestor's, else the default (HOT).
func (n *Inode) EffectivePolicy() storage.Policy {
	p, _ := storage.ByID(n.EffectivePolicyID())
	return p
}

// EffectivePolicyID is the id of EffectivePolicy.
func (n *Inode) EffectivePolicyID() uint8 {
	for x := n; x != nil; x = x.Parent {
		if x.StoragePolicy != storage.Unspecified {
			return x.StoragePolicy
		}
	}
	return storage.DefaultID
}
