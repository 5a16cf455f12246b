package namenode

import (
	"context"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/namenode/namespace"
)

// LocatedBlock is a block with the storages to read or write it (Hadoop's
// LocatedBlock): a snapshot, safe to use after the lock is released.
type LocatedBlock struct {
	Block   namespace.BlockInfo
	Offset  int64 // of the block's first byte in the file
	Locs    []blockmgmt.Target
	Corrupt bool // only corrupt replicas are left
}

// LocatedBlocks answers getBlockLocations.
type LocatedBlocks struct {
	FileLength        int64
	UnderConstruction bool
	Blocks            []LocatedBlock
	// LastBlock is the last block of a file being written, and
	// LastBlockComplete whether its length is final.
	LastBlock         *LocatedBlock
	LastBlockComplete bool
}

// locate snapshots b at offset with locs as its locations. Lock held.
func locate(b *blockmgmt.Block, offset int64, locs []*blockmgmt.Storage, corrupt bool) *LocatedBlock {
	lb := &LocatedBlock{Block: namespace.BlockInfo{ID: b.ID, GenStamp: b.GenStamp, NumBytes: b.NumBytes}, Offset: offset, Corrupt: corrupt}
	for _, st := range locs {
		lb.Locs = append(lb.Locs, blockmgmt.Target{Node: st.DN.Info(), StorageType: st.Type, StorageID: st.ID})
	}
	return lb
}

// BlockLocations answers getBlockLocations: the blocks of p overlapping
// [offset, offset+length), each with its replicas sorted for the reader.
func (s *Namesystem) BlockLocations(ctx context.Context, p string, offset, length int64, clientIP string) (*LocatedBlocks, error) {
	if err := s.checkPath(p); err != nil {
		return nil, err
	}
	pc := s.checker(ctx)
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.tree.Resolve(p)
	if err := pc.Traverse(r); err != nil {
		return nil, err
	}
	n := r.Target()
	if n == nil || n.IsDir {
		return nil, ipc.Errorf(ipc.ClassFileNotFound, "File does not exist: %s", p)
	}
	if err := pc.Check(n, namespace.AccessRead); err != nil {
		return nil, err
	}
	if err := pc.UnreadableBySuperuser(n); err != nil {
		return nil, err
	}
	if offset < 0 || length < 0 {
		return nil, ipc.Errorf(ipc.ClassIllegalArgument, "Negative offset or length: offset=%d length=%d", offset, length)
	}
	lbs := &LocatedBlocks{FileLength: n.Length(), UnderConstruction: n.UC() != nil, LastBlockComplete: true}
	if n.ReadOnly() {
		s.snapshotBlockLocations(n, lbs, offset, length, clientIP)
		return lbs, nil
	}
	var pos int64
	for i, b := range n.Blocks() {
		end := pos + b.NumBytes
		inRange := end > offset && pos < offset+length || (b.NumBytes == 0 && pos >= offset && pos <= offset+length)
		if inRange {
			locs, corrupt := s.bm.Locations(b, clientIP)
			lbs.Blocks = append(lbs.Blocks, *locate(b, pos, locs, corrupt))
		}
		if i == len(n.Blocks())-1 && n.UC() != nil {
			locs, corrupt := s.bm.Locations(b, clientIP)
			lbs.LastBlock = locate(b, pos, locs, corrupt)
			lbs.LastBlockComplete = b.Committed
		}
		pos = end
	}
	return lbs, nil
}

// AddBlockRequest is what a writer sends to get its next block.
type AddBlockRequest struct {
	Path, Client string
	FileID       uint64
	Previous     *namespace.BlockInfo // nil for the first block
	Exclude      map[string]bool      // DataNode uuids
	ClientIP     string
}

// AddBlock commits the previous block's length and allocates a new block
// with pipeline targets chosen by the file's storage policy.
func (s *Namesystem) AddBlock(ctx context.Context, req AddBlockRequest) (*LocatedBlock, error) {
	if err := s.checkPath(req.Path); err != nil {
		return nil, err
	}
	var lb *LocatedBlock
	err := s.mutateThen(ctx, func() ([]namespace.Edit, func(), error) {
		n, err := s.fileUnderConstruction(req.Path, req.FileID, req.Client)
		if err != nil {
			return nil, nil, err
		}
		var offset int64
		for _, b := range n.Blocks() {
			offset += b.NumBytes
		}
		k := len(n.Blocks())
		prevLen := int64(0)
		switch {
		case req.Previous == nil && k > 0 && k == 1 && n.Blocks()[0].NumBytes == 0 && !n.Blocks()[0].Committed:
			// A retried first addBlock: hand out the same block again.
			b := n.Blocks()[0]
			if err := s.retargetLocked(n, b, req); err != nil {
				return nil, nil, err
			}
			lb = locate(b, 0, b.Expected, false)
			return nil, nil, nil
		case req.Previous != nil && k >= 2 && n.Blocks()[k-2].ID == req.Previous.ID && !n.Blocks()[k-1].Committed && n.Blocks()[k-1].NumBytes == 0:
			b := n.Blocks()[k-1]
			if err := s.retargetLocked(n, b, req); err != nil {
				return nil, nil, err
			}
			lb = locate(b, offset, b.Expected, false)
			return nil, nil, nil
		case req.Previous == nil && k > 0 && n.Blocks()[k-1].Committed && n.Blocks()[k-1].NumBytes >= int64(n.BlockSize()):
			// Appending to a file whose last block is full: the client
			// need not name it (as Hadoop's NameNode allows).
			prevLen = n.Blocks()[k-1].NumBytes
		case req.Previous == nil && k > 0:
			return nil, nil, ipc.Errorf(ipc.ClassIOException, "addBlock for %s without the previous block, but the file has %d blocks", req.Path, k)
		case req.Previous != nil:
			if k == 0 || n.Blocks()[k-1].ID != req.Previous.ID {
				return nil, nil, ipc.Errorf(ipc.ClassIOException, "addBlock for %s: previous block blk_%d is not the file's last block", req.Path, req.Previous.ID)
			}
			prevLen = req.Previous.NumBytes
			offset += prevLen - n.Blocks()[k-1].NumBytes
		}
		if err := s.checkAddBlockQuota(n, prevLen); err != nil {
			return nil, nil, err
		}
		targets, err := s.chooseTargetsLocked(n, req)
		if err != nil {
			return nil, nil, err
		}
		id := s.tree.Blocks.LastID() + 1
		gs := s.tree.Blocks.LastGenStamp() + 1
		op := namespace.AddBlock(n.Path(), namespace.BlockInfo{ID: id, GenStamp: gs}, prevLen)
		then := func() {
			b := s.tree.Blocks.Get(id)
			b.Expected = targets
			lb = locate(b, offset, targets, false)
		}
		return []namespace.Edit{op}, then, nil
	})
	return lb, err
}

// chooseTargetsLocked picks a new block's pipeline for file n.
func (s *Namesystem) chooseTargetsLocked(n *namespace.Inode, req AddBlockRequest) ([]*blockmgmt.Storage, error) {
	pol := n.EffectivePolicy()
	targets := s.bm.Choose(blockmgmt.Placement{
		Types: pol.ChooseTypes(int(n.Replication())), Policy: pol, Exclude: req.Exclude,
		Local: req.ClientIP, Need: int64(n.BlockSize()), Creation: true,
	})
	if len(targets) == 0 {
		live := len(s.bm.Live())
		return nil, ipc.Errorf(ipc.ClassIOException, "File %s could only be written to 0 of the 1 minReplication nodes. There are %d datanode(s) running and %d node(s) are excluded in this operation.", req.Path, live, len(req.Exclude))
	}
	return targets, nil
}

// retargetLocked gives an allocated, still empty block a pipeline again
// when its chosen targets are gone: they live in memory only, so a
// NameNode that learnt of the block from the log (a new active answering
// a retried addBlock after a failover) has none.
func (s *Namesystem) retargetLocked(n *namespace.Inode, b *blockmgmt.Block, req AddBlockRequest) error {
	if len(b.Expected) > 0 {
		return nil
	}
	targets, err := s.chooseTargetsLocked(n, req)
	if err != nil {
		return err
	}
	b.Expected = targets
	return nil
}

// CompleteFile finishes a file being written: it commits the last block's
// length and closes the file once every block has a good replica. It
// returns false (and the client retries) while replicas are still
// being reported.
func (s *Namesystem) CompleteFile(ctx context.Context, p string, fileID uint64, client string, last *namespace.BlockInfo) (bool, error) {
	if err := s.checkPath(p); err != nil {
		return false, err
	}
	done := false
	var holderPath string
	err := s.mutate(ctx, func() ([]namespace.Edit, error) {
		n, err := s.fileUnderConstruction(p, fileID, client)
		if err != nil {
			if n != nil && n.UC() == nil {
				done = true // already closed: a retried call
				return nil, nil
			}
			return nil, err
		}
		if k := len(n.Blocks()); k > 0 {
			lb := n.Blocks()[k-1]
			if last == nil || last.ID != lb.ID {
				var id uint64
				if last != nil {
					id = last.ID
				}
				return nil, ipc.Errorf(ipc.ClassIOException, "complete %s: last block blk_%d does not match the file's blk_%d", p, id, lb.ID)
			}
			lb.NumBytes = last.NumBytes
			lb.Committed = true
			blocks := n.Blocks()
			if lb.NumBytes == 0 && len(lb.Replicas) == 0 {
				// An empty last block that no DataNode ever received (a
				// client allocated it and wrote nothing): it holds no data,
				// so the file is closed without it.
				blocks = blocks[:k-1]
			}
			for _, b := range blocks {
				if len(blockmgmt.GoodReplicas(b)) < s.cfg.minReplication {
					return nil, nil // not yet: the client retries
				}
			}
			op := s.closeOp(n, blocks)
			done = true
			holderPath = n.Path()
			return []namespace.Edit{op}, nil
		}
		done = true
		holderPath = n.Path()
		return []namespace.Edit{s.closeOp(n, n.Blocks())}, nil
	})
	if err == nil && holderPath != "" {
		s.mu.Lock()
		s.leases.Remove(client, holderPath)
		s.mu.Unlock()
	}
	return done, err
}

// AbandonBlock drops the last block of a file being written (the client
// could not set up a pipeline for it).
func (s *Namesystem) AbandonBlock(ctx context.Context, p string, fileID uint64, client string, b namespace.BlockInfo) error {
	return s.mutate(ctx, func() ([]namespace.Edit, error) {
		n, err := s.fileUnderConstruction(p, fileID, client)
		if err != nil {
			return nil, err
		}
		k := len(n.Blocks())
		if k == 0 || n.Blocks()[k-1].ID != b.ID {
			return nil, nil // already abandoned
		}
		return []namespace.Edit{namespace.UpdateBlocks(n.Path(), namespace.BlockInfos(n.Blocks()[:k-1]), false)}, nil
	})
}

// blockUnderConstruction finds the file a client writes b of.
func (s *Namesystem) blockUnderConstruction(b namespace.BlockInfo, client string) (*blockmgmt.Block, error) {
	blk := s.tree.Blocks.Get(b.ID)
	if blk == nil || blk.File == nil {
		return nil, ipc.Errorf(ipc.ClassIOException, "blk_%d does not exist or is not under construction", b.ID)
	}
	n := namespace.FileOf(blk)
	if n.UC() == nil || n.UC().ClientName != client {
		return nil, ipc.Errorf(ipc.ClassLeaseExpired, "blk_%d: file %s is not being written by %s", b.ID, n.Path(), client)
	}
	return blk, nil
}

// UpdateBlockForPipeline hands out a new generation stamp for a block
// whose pipeline is being rebuilt (or reopened for append).
func (s *Namesystem) UpdateBlockForPipeline(ctx context.Context, b namespace.BlockInfo, client string) (*LocatedBlock, error) {
	var lb *LocatedBlock
	err := s.mutateThen(ctx, func() ([]namespace.Edit, func(), error) {
		blk, err := s.blockUnderConstruction(b, client)
		if err != nil {
			return nil, nil, err
		}
		gs := s.tree.Blocks.LastGenStamp() + 1
		op := namespace.SetGenStamp(gs)
		then := func() {
			lb = &LocatedBlock{Block: namespace.BlockInfo{ID: blk.ID, GenStamp: gs, NumBytes: b.NumBytes}}
		}
		return []namespace.Edit{op}, then, nil
	})
	return lb, err
}

// UpdatePipeline records a rebuilt pipeline: the block's new generation
// stamp, acknowledged length and nodes.
func (s *Namesystem) UpdatePipeline(ctx context.Context, client string, oldB, newB namespace.BlockInfo, storageIDs []string) error {
	return s.mutateThen(ctx, func() ([]namespace.Edit, func(), error) {
		blk, err := s.blockUnderConstruction(oldB, client)
		if err != nil {
			return nil, nil, err
		}
		if newB.ID != blk.ID || newB.GenStamp <= blk.GenStamp || newB.GenStamp > s.tree.Blocks.LastGenStamp() {
			return nil, nil, ipc.Errorf(ipc.ClassIOException, "updatePipeline: bad new block blk_%d_%d for %s", newB.ID, newB.GenStamp, blk)
		}
		file := namespace.FileOf(blk)
		bs := namespace.BlockInfos(file.Blocks())
		for i := range bs {
			if bs[i].ID == blk.ID {
				bs[i].GenStamp = newB.GenStamp
				bs[i].NumBytes = newB.NumBytes
			}
		}
		op := namespace.UpdateBlocks(file.Path(), bs, false)
		then := func() {
			var exp []*blockmgmt.Storage
			for _, id := range storageIDs {
				if st := s.bm.Storage(id); st != nil {
					exp = append(exp, st)
				}
			}
			blk.Expected = exp
		}
		return []namespace.Edit{op}, then, nil
	})
}

// maxExcludedNodes bounds the DataNodes a client may exclude in one
// addBlock or getAdditionalDatanode call. Hadoop has no such limit; a
// real client excludes the nodes that failed it, a few at a time.
const maxExcludedNodes = 4096

// checkNodeLists bounds the DataNode lists a writer sends before any work
// is done for them: a pipeline is at most dfs.replication.max nodes long.
func (s *Namesystem) checkNodeLists(existing, excluded int) error {
	switch {
	case existing > s.cfg.maxReplication:
		return ipc.Errorf(ipc.ClassIllegalArgument, "%d existing pipeline nodes exceed dfs.replication.max (%d)", existing, s.cfg.maxReplication)
	case excluded > maxExcludedNodes:
		return ipc.Errorf(ipc.ClassIllegalArgument, "%d excluded nodes exceed the limit of %d", excluded, maxExcludedNodes)
	}
	return nil
}

// AdditionalDatanodes picks n more nodes for a pipeline being repaired
// (Hadoop's getAdditionalDatanode). As Hadoop's, the caller must hold the
// file's lease; b must be the file's last block. n is bounded by
// dfs.replication.max before the lock is taken, and by the live
// DataNodes not already in the pipeline under it.
func (s *Namesystem) AdditionalDatanodes(ctx context.Context, p string, fileID uint64, b namespace.BlockInfo, existing []string, exclude map[string]bool, n int, client, clientIP string) (*LocatedBlock, error) {
	if n < 0 || n > s.cfg.maxReplication {
		return nil, ipc.Errorf(ipc.ClassIllegalArgument, "numAdditionalNodes = %d is out of range [0, %d] (dfs.replication.max)", n, s.cfg.maxReplication)
	}
	if err := s.checkNodeLists(len(existing), len(exclude)); err != nil {
		return nil, err
	}
	if fileID == 0 {
		if err := s.checkPath(p); err != nil {
			return nil, err
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.bm.InSafeMode() {
		return nil, ipc.Errorf(ipc.ClassSafeMode, "Cannot add datanode; src=%s, blk=blk_%d_%d. Name node is in safe mode.", p, b.ID, b.GenStamp)
	}
	file, err := s.fileUnderConstruction(p, fileID, client)
	if err != nil {
		return nil, err
	}
	k := len(file.Blocks())
	if k == 0 || file.Blocks()[k-1].ID != b.ID {
		return nil, ipc.Errorf(ipc.ClassIOException, "getAdditionalDatanode for %s: blk_%d is not the file's last block", file.Path(), b.ID)
	}
	blk := file.Blocks()[k-1]
	var have []*blockmgmt.Storage
	ex := map[string]bool{}
	for k := range exclude {
		ex[k] = true
	}
	for _, id := range existing {
		if st := s.bm.Storage(id); st != nil {
			have = append(have, st)
			ex[st.DN.UUID] = true
		}
	}
	n = min(n, max(len(s.bm.Live())-len(have), 0))
	pol := file.EffectivePolicy()
	types := pol.ChooseTypes(len(have) + n)[len(have):]
	var haveNodes []*blockmgmt.Datanode
	for _, st := range have {
		haveNodes = append(haveNodes, st.DN)
	}
	more := s.bm.Choose(blockmgmt.Placement{Types: types, Policy: pol, Exclude: ex, Local: clientIP, Need: int64(file.BlockSize()), Creation: true, Existing: haveNodes})
	lb := locate(blk, 0, append(have, more...), false)
	lb.Block.NumBytes = b.NumBytes
	lb.Block.GenStamp = b.GenStamp
	return lb, nil
}

// Fsync records the length of the last block a writer has flushed.
func (s *Namesystem) Fsync(ctx context.Context, p string, fileID uint64, client string, lastBlockLength int64) error {
	return s.mutate(ctx, func() ([]namespace.Edit, error) {
		n, err := s.fileUnderConstruction(p, fileID, client)
		if err != nil {
			return nil, err
		}
		k := len(n.Blocks())
		if lastBlockLength < 0 || k == 0 || n.Blocks()[k-1].NumBytes >= lastBlockLength {
			return nil, nil
		}
		bs := namespace.BlockInfos(n.Blocks())
		bs[k-1].NumBytes = lastBlockLength
		return []namespace.Edit{namespace.UpdateBlocks(n.Path(), bs, false)}, nil
	})
}

// Append reopens a closed file for writing by client. It returns the
// partial last block (to continue in place) or nil when the next write
// starts a new block.
func (s *Namesystem) Append(ctx context.Context, p, client, clientMachine string) (*LocatedBlock, *FileStatus, error) {
	if err := s.checkPath(p); err != nil {
		return nil, nil, err
	}
	pc := s.checker(ctx)
	var lb *LocatedBlock
	var st FileStatus
	err := s.mutateThen(ctx, func() ([]namespace.Edit, func(), error) {
		r := s.tree.Resolve(p)
		if err := pc.Traverse(r); err != nil {
			return nil, nil, err
		}
		n := r.Target()
		if n == nil {
			return nil, nil, ipc.Errorf(ipc.ClassFileNotFound, "failed to append to non-existent file %s for client %s", p, clientMachine)
		}
		if n.IsDir {
			return nil, nil, ipc.Errorf(ipc.ClassFileNotFound, "failed to append to directory %s", p)
		}
		if err := pc.Check(n, namespace.AccessWrite); err != nil {
			return nil, nil, err
		}
		if n.UC() != nil {
			if k := len(n.Blocks()); k > 0 && s.bm.Recovering(n.Blocks()[k-1].ID) {
				return nil, nil, ipc.Errorf(ipc.ClassAlreadyBeingCreated, "Failed to APPEND_FILE %s for %s on %s because lease recovery is in progress. Try again later.", p, client, clientMachine)
			}
			if n.UC().ClientName == client || !s.leases.SoftExpired(n.UC().ClientName, s.now(), s.cfg.leaseSoftLimit) {
				return nil, nil, ipc.Errorf(ipc.ClassAlreadyBeingCreated, "Failed to APPEND_FILE %s for %s on %s because this file lease is currently owned by %s on %s",
					p, client, clientMachine, n.UC().ClientName, n.UC().ClientMachine)
			}
			return nil, nil, ipc.Errorf(ipc.ClassAlreadyBeingCreated, "Failed to APPEND_FILE %s for %s: the file is being recovered from %s; retry later", p, client, n.UC().ClientName)
		}
		if err := s.checkAppendQuota(n); err != nil {
			return nil, nil, err
		}
		op := namespace.ReopenFile(p, client, clientMachine, s.nowMillis())
		then := func() {
			k := len(n.Blocks())
			var locs []*blockmgmt.Storage
			if lb, locs = appendLastBlock(n); lb != nil {
				n.Blocks()[k-1].Expected = locs
			} else if k > 0 {
				n.Blocks()[k-1].Committed = true // a full last block stays as it is
			}
			st = s.status(n)
		}
		return []namespace.Edit{op}, then, nil
	})
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	s.leases.Add(client, p, s.now())
	s.mu.Unlock()
	return lb, &st, nil
}

// appendLastBlock is where an append to file n continues: its partial
// last block, located at the storages of its good replicas (also
// returned), or nil when the next write starts a new block.
func appendLastBlock(n *namespace.Inode) (*LocatedBlock, []*blockmgmt.Storage) {
	k := len(n.Blocks())
	if k == 0 || n.Blocks()[k-1].NumBytes%int64(n.BlockSize()) == 0 {
		return nil, nil
	}
	b := n.Blocks()[k-1]
	var locs []*blockmgmt.Storage
	for _, r := range blockmgmt.GoodReplicas(&blockmgmt.Block{ID: b.ID, GenStamp: b.GenStamp, NumBytes: b.NumBytes, Committed: true, Replicas: b.Replicas}) {
		locs = append(locs, r.Storage)
	}
	return locate(b, n.Length()-b.NumBytes, locs, false), locs
}

// ReportBadBlocks marks the replicas a client names corrupt; the
// replication monitor replaces them from a good copy and then deletes
// them (Hadoop's ClientProtocol.reportBadBlocks).
//
// Hadoop checks nothing here: its clients can only have read a replica
// with a READ block token, which the NameNode minted after checking read
// permission. strata asks for that permission directly, so that a client
// cannot have the replicas of a file it cannot read deleted: the caller
// needs traverse and read access to the file of every block it names
// (the superuser passes), else nothing is marked and it gets an
// AccessControlException. A report about an older generation stamp than
// the block's is ignored, as is one about a block that no longer exists.
func (s *Namesystem) ReportBadBlocks(ctx context.Context, bad []blockmgmt.BadReplica) error {
	pc := s.checker(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	checked := map[uint64]bool{}
	for _, br := range bad {
		blk := s.tree.Blocks.Get(br.BlockID)
		if blk == nil || blk.File == nil || checked[br.BlockID] {
			continue
		}
		file := namespace.FileOf(blk)
		r := s.tree.Resolve(file.Path())
		if err := pc.Traverse(r); err != nil {
			return err
		}
		if err := pc.Check(file, namespace.AccessRead); err != nil {
			return err
		}
		checked[br.BlockID] = true
	}
	s.bm.ReportBadReplicas(bad)
	return nil
}
