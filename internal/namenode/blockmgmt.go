package namenode

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path"
	"sort"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/dnpb"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/proto/namenodepb"
	"github.com/stratafs/strata/internal/storage"
)

// emptyToken is the block access token sent while tokens are off: all four
// required fields present and empty.
func emptyToken() *hdfspb.TokenProto {
	return &hdfspb.TokenProto{Identifier: []byte{}, Password: []byte{}, Kind: proto.String(""), Service: proto.String("")}
}

func (s *Namesystem) extBlock(b *block) *hdfspb.ExtendedBlockProto {
	return &hdfspb.ExtendedBlockProto{PoolId: proto.String(s.blockPoolID), BlockId: proto.Uint64(b.id),
		GenerationStamp: proto.Uint64(b.gs), NumBytes: proto.Uint64(uint64(b.numBytes))}
}

// locatedBlock builds a LocatedBlockProto for b at offset with the given
// storages as locations.
func (s *Namesystem) locatedBlock(b *block, offset int64, locs []*storageDesc, corrupt bool) *hdfspb.LocatedBlockProto {
	lb := &hdfspb.LocatedBlockProto{
		B: s.extBlock(b), Offset: proto.Uint64(uint64(offset)), Corrupt: proto.Bool(corrupt), BlockToken: emptyToken(),
	}
	for _, st := range locs {
		lb.Locs = append(lb.Locs, st.dn.proto())
		lb.IsCached = append(lb.IsCached, false)
		lb.StorageTypes = append(lb.StorageTypes, hdfspb.StorageTypeProto(st.typ))
		lb.StorageIDs = append(lb.StorageIDs, st.id)
	}
	return lb
}

// goodReplicas are the replicas that count: finalized, not corrupt, on a
// live DataNode's working storage, with the block's generation stamp (and
// length, once the length is final).
func (s *Namesystem) goodReplicas(b *block) []*replica {
	var out []*replica
	for _, r := range sortedReplicas(b) {
		if isGood(b, r) {
			out = append(out, r)
		}
	}
	return out
}

// isGood reports whether r is a usable copy of b.
func isGood(b *block, r *replica) bool {
	if !r.final || r.corrupt || r.storage.failed || r.storage.dn.dead || r.gs != b.gs {
		return false
	}
	return !b.committed || r.numBytes == b.numBytes
}

func sortedReplicas(b *block) []*replica {
	out := make([]*replica, 0, len(b.replicas))
	for _, r := range b.replicas {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].storage.id < out[j].storage.id })
	return out
}

// locations orders b's readable replicas for a reader at clientIP: a
// replica on the reader's own host first, then the others.
func (s *Namesystem) locations(b *block, clientIP string) ([]*storageDesc, bool) {
	good := s.goodReplicas(b)
	if !b.committed && len(good) == 0 {
		// Being written: the pipeline's nodes hold the data.
		return b.expected, false
	}
	var locs []*storageDesc
	for _, r := range good {
		locs = append(locs, r.storage)
	}
	corrupt := false
	if len(locs) == 0 {
		// Only corrupt copies left: return them, marked, as HDFS does.
		for _, r := range sortedReplicas(b) {
			if r.corrupt && !r.storage.dn.dead {
				locs = append(locs, r.storage)
				corrupt = true
			}
		}
	}
	rand.Shuffle(len(locs), func(i, j int) { locs[i], locs[j] = locs[j], locs[i] })
	sort.SliceStable(locs, func(i, j int) bool { return locs[i].dn.ip == clientIP && locs[j].dn.ip != clientIP })
	return locs, corrupt
}

// BlockLocations answers getBlockLocations: the blocks of p overlapping
// [offset, offset+length), each with its replicas sorted for the reader.
func (s *Namesystem) BlockLocations(ctx context.Context, p string, offset, length int64, clientIP string) (*hdfspb.LocatedBlocksProto, error) {
	if err := s.checkPath(p); err != nil {
		return nil, err
	}
	pc := s.checker(ctx)
	s.mu.RLock()
	defer s.mu.RUnlock()
	r := s.ns.resolve(p)
	if err := pc.traverse(r); err != nil {
		return nil, err
	}
	n := r.target()
	if n == nil || n.isDir {
		return nil, ipc.Errorf(ipc.ClassFileNotFound, "File does not exist: %s", p)
	}
	if err := pc.check(n, accessRead); err != nil {
		return nil, err
	}
	if offset < 0 || length < 0 {
		return nil, ipc.Errorf(ipc.ClassIllegalArgument, "Negative offset or length: offset=%d length=%d", offset, length)
	}
	lbs := &hdfspb.LocatedBlocksProto{
		FileLength:          proto.Uint64(uint64(fileLength(n))),
		UnderConstruction:   proto.Bool(n.uc != nil),
		IsLastBlockComplete: proto.Bool(true),
	}
	var pos int64
	for i, b := range n.blocks {
		end := pos + b.numBytes
		inRange := end > offset && pos < offset+length || (b.numBytes == 0 && pos >= offset && pos <= offset+length)
		if inRange {
			locs, corrupt := s.locations(b, clientIP)
			lbs.Blocks = append(lbs.Blocks, s.locatedBlock(b, pos, locs, corrupt))
		}
		if i == len(n.blocks)-1 && n.uc != nil {
			locs, corrupt := s.locations(b, clientIP)
			lbs.LastBlock = s.locatedBlock(b, pos, locs, corrupt)
			lbs.IsLastBlockComplete = proto.Bool(b.committed)
		}
		pos = end
	}
	return lbs, nil
}

// AddBlockRequest is what a writer sends to get its next block.
type AddBlockRequest struct {
	Path, Client string
	FileID       uint64
	Previous     *hdfspb.ExtendedBlockProto
	Exclude      map[string]bool // DataNode uuids
	ClientIP     string
}

func (s *Namesystem) policyOf(n *inode) storage.Policy {
	p, _ := storage.ByID(effectivePolicy(n))
	return p
}

// AddBlock commits the previous block's length and allocates a new block
// with pipeline targets chosen by the file's storage policy.
func (s *Namesystem) AddBlock(ctx context.Context, req AddBlockRequest) (*hdfspb.LocatedBlockProto, error) {
	if err := s.checkPath(req.Path); err != nil {
		return nil, err
	}
	var lb *hdfspb.LocatedBlockProto
	err := s.mutateThen(ctx, func() ([]*namenodepb.EditOp, func(), error) {
		n, err := s.fileUnderConstruction(req.Path, req.FileID, req.Client)
		if err != nil {
			return nil, nil, err
		}
		var offset int64
		for _, b := range n.blocks {
			offset += b.numBytes
		}
		k := len(n.blocks)
		prevLen := int64(0)
		switch {
		case req.Previous == nil && k > 0 && k == 1 && n.blocks[0].numBytes == 0 && !n.blocks[0].committed:
			// A retried first addBlock: hand out the same block again.
			b := n.blocks[0]
			lb = s.locatedBlock(b, 0, b.expected, false)
			return nil, nil, nil
		case req.Previous != nil && k >= 2 && n.blocks[k-2].id == req.Previous.GetBlockId() && !n.blocks[k-1].committed && n.blocks[k-1].numBytes == 0:
			b := n.blocks[k-1]
			lb = s.locatedBlock(b, offset, b.expected, false)
			return nil, nil, nil
		case req.Previous == nil && k > 0 && n.blocks[k-1].committed && n.blocks[k-1].numBytes >= int64(n.blockSize):
			// Appending to a file whose last block is full: the client
			// need not name it (as Hadoop's NameNode allows).
			prevLen = n.blocks[k-1].numBytes
		case req.Previous == nil && k > 0:
			return nil, nil, ipc.Errorf(ipc.ClassIOException, "addBlock for %s without the previous block, but the file has %d blocks", req.Path, k)
		case req.Previous != nil:
			if k == 0 || n.blocks[k-1].id != req.Previous.GetBlockId() {
				return nil, nil, ipc.Errorf(ipc.ClassIOException, "addBlock for %s: previous block blk_%d is not the file's last block", req.Path, req.Previous.GetBlockId())
			}
			prevLen = int64(req.Previous.GetNumBytes())
			offset += prevLen - n.blocks[k-1].numBytes
		}
		pol := s.policyOf(n)
		targets := s.dns.choose(placement{
			types: pol.ChooseTypes(int(n.replication)), policy: pol, exclude: req.Exclude,
			local: req.ClientIP, need: int64(n.blockSize), creation: true,
		})
		if len(targets) == 0 {
			live := len(s.dns.live())
			return nil, nil, ipc.Errorf(ipc.ClassIOException, "File %s could only be written to 0 of the 1 minReplication nodes. There are %d datanode(s) running and %d node(s) are excluded in this operation.", req.Path, live, len(req.Exclude))
		}
		id := s.ns.blocks.lastID + 1
		gs := s.ns.blocks.lastGS + 1
		op := &namenodepb.EditOp{Op: &namenodepb.EditOp_AddBlock{AddBlock: &namenodepb.OpAddBlock{
			Path:             proto.String(n.path()),
			Block:            &namenodepb.Block{Id: proto.Uint64(id), GenStamp: proto.Uint64(gs), NumBytes: proto.Uint64(0)},
			PreviousNumBytes: proto.Uint64(uint64(prevLen)),
		}}}
		then := func() {
			b := s.ns.blocks.m[id]
			b.expected = targets
			lb = s.locatedBlock(b, offset, targets, false)
		}
		return []*namenodepb.EditOp{op}, then, nil
	})
	return lb, err
}

// Complete finishes a file being written: it commits the last block's
// length and closes the file once every block has a good replica. It
// returns false (and the client retries) while replicas are still
// being reported.
func (s *Namesystem) CompleteFile(ctx context.Context, p string, fileID uint64, client string, last *hdfspb.ExtendedBlockProto) (bool, error) {
	if err := s.checkPath(p); err != nil {
		return false, err
	}
	done := false
	var holderPath string
	err := s.mutate(ctx, func() ([]*namenodepb.EditOp, error) {
		n, err := s.fileUnderConstruction(p, fileID, client)
		if err != nil {
			if n != nil && n.uc == nil {
				done = true // already closed: a retried call
				return nil, nil
			}
			return nil, err
		}
		if k := len(n.blocks); k > 0 {
			lb := n.blocks[k-1]
			if last == nil || last.GetBlockId() != lb.id {
				return nil, ipc.Errorf(ipc.ClassIOException, "complete %s: last block blk_%d does not match the file's blk_%d", p, last.GetBlockId(), lb.id)
			}
			lb.numBytes = int64(last.GetNumBytes())
			lb.committed = true
			blocks := n.blocks
			if lb.numBytes == 0 && len(lb.replicas) == 0 {
				// An empty last block that no DataNode ever received (a
				// client allocated it and wrote nothing): it holds no data,
				// so the file is closed without it.
				blocks = blocks[:k-1]
			}
			for _, b := range blocks {
				if len(s.goodReplicas(b)) < s.cfg.minReplication {
					return nil, nil // not yet: the client retries
				}
			}
			op := s.closeOp(n)
			op.GetCloseFile().Blocks = blocksProto(blocks)
			done = true
			holderPath = n.path()
			return []*namenodepb.EditOp{op}, nil
		}
		done = true
		holderPath = n.path()
		return []*namenodepb.EditOp{s.closeOp(n)}, nil
	})
	if err == nil && holderPath != "" {
		s.mu.Lock()
		s.leases.remove(client, holderPath)
		s.mu.Unlock()
	}
	return done, err
}

// AbandonBlock drops the last block of a file being written (the client
// could not set up a pipeline for it).
func (s *Namesystem) AbandonBlock(ctx context.Context, p string, fileID uint64, client string, b *hdfspb.ExtendedBlockProto) error {
	return s.mutate(ctx, func() ([]*namenodepb.EditOp, error) {
		n, err := s.fileUnderConstruction(p, fileID, client)
		if err != nil {
			return nil, err
		}
		k := len(n.blocks)
		if k == 0 || n.blocks[k-1].id != b.GetBlockId() {
			return nil, nil // already abandoned
		}
		return []*namenodepb.EditOp{{Op: &namenodepb.EditOp_UpdateBlocks{UpdateBlocks: &namenodepb.OpUpdateBlocks{
			Path: proto.String(n.path()), Blocks: blocksProto(n.blocks[:k-1]),
		}}}}, nil
	})
}

// blockUnderConstruction finds the file a client writes b of.
func (s *Namesystem) blockUnderConstruction(b *hdfspb.ExtendedBlockProto, client string) (*block, error) {
	blk := s.ns.blocks.m[b.GetBlockId()]
	if blk == nil || blk.file == nil {
		return nil, ipc.Errorf(ipc.ClassIOException, "blk_%d does not exist or is not under construction", b.GetBlockId())
	}
	n := blk.file
	if n.uc == nil || n.uc.clientName != client {
		return nil, ipc.Errorf(ipc.ClassLeaseExpired, "blk_%d: file %s is not being written by %s", b.GetBlockId(), n.path(), client)
	}
	return blk, nil
}

// UpdateBlockForPipeline hands out a new generation stamp for a block
// whose pipeline is being rebuilt (or reopened for append).
func (s *Namesystem) UpdateBlockForPipeline(ctx context.Context, b *hdfspb.ExtendedBlockProto, client string) (*hdfspb.LocatedBlockProto, error) {
	var lb *hdfspb.LocatedBlockProto
	err := s.mutateThen(ctx, func() ([]*namenodepb.EditOp, func(), error) {
		blk, err := s.blockUnderConstruction(b, client)
		if err != nil {
			return nil, nil, err
		}
		gs := s.ns.blocks.lastGS + 1
		op := &namenodepb.EditOp{Op: &namenodepb.EditOp_SetGenStamp{SetGenStamp: &namenodepb.OpSetGenStamp{GenStamp: proto.Uint64(gs)}}}
		then := func() {
			eb := s.extBlock(blk)
			eb.GenerationStamp = proto.Uint64(gs)
			eb.NumBytes = proto.Uint64(b.GetNumBytes())
			lb = &hdfspb.LocatedBlockProto{B: eb, Offset: proto.Uint64(0), Corrupt: proto.Bool(false), BlockToken: emptyToken()}
		}
		return []*namenodepb.EditOp{op}, then, nil
	})
	return lb, err
}

// UpdatePipeline records a rebuilt pipeline: the block's new generation
// stamp, acknowledged length and nodes.
func (s *Namesystem) UpdatePipeline(ctx context.Context, client string, oldB, newB *hdfspb.ExtendedBlockProto, storageIDs []string) error {
	return s.mutateThen(ctx, func() ([]*namenodepb.EditOp, func(), error) {
		blk, err := s.blockUnderConstruction(oldB, client)
		if err != nil {
			return nil, nil, err
		}
		if newB.GetBlockId() != blk.id || newB.GetGenerationStamp() <= blk.gs || newB.GetGenerationStamp() > s.ns.blocks.lastGS {
			return nil, nil, ipc.Errorf(ipc.ClassIOException, "updatePipeline: bad new block blk_%d_%d for %s", newB.GetBlockId(), newB.GetGenerationStamp(), blk)
		}
		bs := blocksProto(blk.file.blocks)
		for _, pb := range bs {
			if pb.GetId() == blk.id {
				pb.GenStamp = proto.Uint64(newB.GetGenerationStamp())
				pb.NumBytes = proto.Uint64(newB.GetNumBytes())
			}
		}
		op := &namenodepb.EditOp{Op: &namenodepb.EditOp_UpdateBlocks{UpdateBlocks: &namenodepb.OpUpdateBlocks{
			Path: proto.String(blk.file.path()), Blocks: bs,
		}}}
		then := func() {
			var exp []*storageDesc
			for _, id := range storageIDs {
				if st := s.dns.byStorage[id]; st != nil {
					exp = append(exp, st)
				}
			}
			blk.expected = exp
		}
		return []*namenodepb.EditOp{op}, then, nil
	})
}

// AdditionalDatanodes picks n more nodes for a pipeline being repaired.
func (s *Namesystem) AdditionalDatanodes(ctx context.Context, p string, b *hdfspb.ExtendedBlockProto, existing []string, exclude map[string]bool, n int, client, clientIP string) (*hdfspb.LocatedBlockProto, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	blk := s.ns.blocks.m[b.GetBlockId()]
	if blk == nil || blk.file == nil {
		return nil, ipc.Errorf(ipc.ClassIOException, "blk_%d does not exist", b.GetBlockId())
	}
	var have []*storageDesc
	ex := map[string]bool{}
	for k := range exclude {
		ex[k] = true
	}
	for _, id := range existing {
		if st := s.dns.byStorage[id]; st != nil {
			have = append(have, st)
			ex[st.dn.uuid] = true
		}
	}
	pol := s.policyOf(blk.file)
	types := pol.ChooseTypes(len(have) + n)[len(have):]
	more := s.dns.choose(placement{types: types, policy: pol, exclude: ex, local: clientIP, need: int64(blk.file.blockSize), creation: true})
	lb := s.locatedBlock(blk, 0, append(have, more...), false)
	lb.B.NumBytes = proto.Uint64(b.GetNumBytes())
	lb.B.GenerationStamp = proto.Uint64(b.GetGenerationStamp())
	return lb, nil
}

// Fsync records the length of the last block a writer has flushed.
func (s *Namesystem) Fsync(ctx context.Context, p string, fileID uint64, client string, lastBlockLength int64) error {
	return s.mutate(ctx, func() ([]*namenodepb.EditOp, error) {
		n, err := s.fileUnderConstruction(p, fileID, client)
		if err != nil {
			return nil, err
		}
		k := len(n.blocks)
		if lastBlockLength < 0 || k == 0 || n.blocks[k-1].numBytes >= lastBlockLength {
			return nil, nil
		}
		bs := blocksProto(n.blocks)
		bs[k-1].NumBytes = proto.Uint64(uint64(lastBlockLength))
		return []*namenodepb.EditOp{{Op: &namenodepb.EditOp_UpdateBlocks{UpdateBlocks: &namenodepb.OpUpdateBlocks{Path: proto.String(n.path()), Blocks: bs}}}}, nil
	})
}

// Append reopens a closed file for writing by client. It returns the
// partial last block (to continue in place) or nil when the next write
// starts a new block.
func (s *Namesystem) Append(ctx context.Context, p, client, clientMachine string) (*hdfspb.LocatedBlockProto, *FileStatus, error) {
	if err := s.checkPath(p); err != nil {
		return nil, nil, err
	}
	pc := s.checker(ctx)
	var lb *hdfspb.LocatedBlockProto
	var st FileStatus
	err := s.mutateThen(ctx, func() ([]*namenodepb.EditOp, func(), error) {
		r := s.ns.resolve(p)
		if err := pc.traverse(r); err != nil {
			return nil, nil, err
		}
		n := r.target()
		if n == nil {
			return nil, nil, ipc.Errorf(ipc.ClassFileNotFound, "failed to append to non-existent file %s for client %s", p, clientMachine)
		}
		if n.isDir {
			return nil, nil, ipc.Errorf(ipc.ClassFileNotFound, "failed to append to directory %s", p)
		}
		if err := pc.check(n, accessWrite); err != nil {
			return nil, nil, err
		}
		if n.uc != nil {
			if k := len(n.blocks); k > 0 && s.recovering[n.blocks[k-1].id] != nil {
				return nil, nil, ipc.Errorf(ipc.ClassAlreadyBeingCreated, "Failed to APPEND_FILE %s for %s on %s because lease recovery is in progress. Try again later.", p, client, clientMachine)
			}
			if n.uc.clientName == client || !s.leases.softExpired(n.uc.clientName, s.now(), s.cfg.leaseSoftLimit) {
				return nil, nil, ipc.Errorf(ipc.ClassAlreadyBeingCreated, "Failed to APPEND_FILE %s for %s on %s because this file lease is currently owned by %s on %s",
					p, client, clientMachine, n.uc.clientName, n.uc.clientMachine)
			}
			return nil, nil, ipc.Errorf(ipc.ClassAlreadyBeingCreated, "Failed to APPEND_FILE %s for %s: the file is being recovered from %s; retry later", p, client, n.uc.clientName)
		}
		op := &namenodepb.EditOp{Op: &namenodepb.EditOp_ReopenFile{ReopenFile: &namenodepb.OpReopenFile{
			Path: proto.String(p), ClientName: proto.String(client), ClientMachine: proto.String(clientMachine), Mtime: proto.Int64(nowMillis(s.now())),
		}}}
		then := func() {
			k := len(n.blocks)
			if k > 0 && n.blocks[k-1].numBytes%int64(n.blockSize) != 0 {
				b := n.blocks[k-1]
				var locs []*storageDesc
				for _, r := range s.goodReplicas(&block{id: b.id, gs: b.gs, numBytes: b.numBytes, committed: true, replicas: b.replicas}) {
					locs = append(locs, r.storage)
				}
				b.expected = locs
				lb = s.locatedBlock(b, fileLength(n)-b.numBytes, locs, false)
			} else if k > 0 {
				n.blocks[k-1].committed = true // a full last block stays as it is
			}
			st = s.status(n)
		}
		return []*namenodepb.EditOp{op}, then, nil
	})
	if err != nil {
		return nil, nil, err
	}
	s.mu.Lock()
	s.leases.add(client, p, s.now())
	s.mu.Unlock()
	return lb, &st, nil
}

// ReportBadBlocks marks the named replicas corrupt; the replication
// monitor replaces them from a good copy and then deletes them.
func (s *Namesystem) ReportBadBlocks(blocks []*hdfspb.LocatedBlockProto) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, lb := range blocks {
		b := s.ns.blocks.m[lb.GetB().GetBlockId()]
		if b == nil {
			continue
		}
		for i, loc := range lb.GetLocs() {
			var r *replica
			if i < len(lb.GetStorageIDs()) {
				r = b.replicas[lb.GetStorageIDs()[i]]
			}
			if r == nil {
				for _, x := range b.replicas {
					if x.storage.dn.uuid == loc.GetId().GetDatanodeUuid() {
						r = x
					}
				}
			}
			if r != nil && !r.corrupt {
				r.corrupt = true
				s.log.Warn("namenode: replica reported corrupt", "block", b.String(), "datanode", r.storage.dn.String(), "file", pathOf(b))
			}
		}
	}
}

func pathOf(b *block) string {
	if b.file == nil {
		return ""
	}
	return b.file.path()
}

// invalidateRemoved asks DataNodes to delete the replicas of blocks that
// edits removed from files. Called with the lock held.
func (s *Namesystem) invalidateRemoved() {
	for _, b := range s.ns.blocks.takeRemoved() {
		for _, r := range b.replicas {
			s.invalidate(r.storage, b.id, r.gs)
			delete(r.storage.blocks, b.id)
		}
		for _, st := range b.expected {
			// Replicas still being written on the pipeline.
			s.invalidate(st, b.id, b.gs)
		}
		b.replicas = nil
	}
}

// invalidate queues a delete of a replica for its DataNode.
func (s *Namesystem) invalidate(st *storageDesc, id, gs uint64) {
	d := st.dn
	rep := &dnpb.Replica{BlockId: proto.Uint64(id), GenStamp: proto.Uint64(gs)}
	for _, c := range d.commands {
		if inv := c.GetInvalidate(); inv != nil && len(inv.Blocks) < 1000 {
			inv.Blocks = append(inv.Blocks, rep)
			return
		}
	}
	d.commands = append(d.commands, &dnpb.Command{Command: &dnpb.Command_Invalidate{Invalidate: &dnpb.InvalidateCommand{Blocks: []*dnpb.Replica{rep}}}})
}

// ---- DataNode protocol ----

// RegisterDatanode adds (or re-adds) a DataNode.
func (s *Namesystem) RegisterDatanode(reg *dnpb.Registration, remoteIP string) error {
	if reg.GetDatanodeUuid() == "" || reg.GetXferPort() == 0 {
		return ipc.Errorf(ipc.ClassIllegalArgument, "registration without a DataNode UUID or transfer port")
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dns.byUUID[reg.GetDatanodeUuid()]
	if d != nil {
		s.removeReplicasOf(d) // its full block report follows
	} else {
		d = &datanodeDesc{uuid: reg.GetDatanodeUuid(), storages: map[string]*storageDesc{}}
		s.dns.byUUID[d.uuid] = d
	}
	d.ip = reg.GetIpAddr()
	if d.ip == "" {
		d.ip = remoteIP
	}
	d.host = reg.GetHostname()
	if d.host == "" {
		d.host = d.ip
	}
	d.xferPort, d.infoPort, d.ipcPort = reg.GetXferPort(), reg.GetInfoPort(), reg.GetIpcPort()
	d.dead = false
	d.lastHeartbeat = s.now()
	d.commands = nil
	s.dns.updateStorages(d, reg.GetStorages())
	s.log.Info("namenode: datanode registered", "datanode", d.String(), "storages", len(d.storages))
	return nil
}

// removeReplicasOf forgets every replica location on d.
func (s *Namesystem) removeReplicasOf(d *datanodeDesc) {
	for _, st := range d.storages {
		for id, b := range st.blocks {
			delete(b.replicas, st.id)
			delete(st.blocks, id)
		}
	}
}

// Heartbeat records a DataNode's liveness and storage, and returns its
// pending commands. An unknown or dead DataNode is told to re-register.
func (s *Namesystem) Heartbeat(req *dnpb.HeartbeatRequest) []*dnpb.Command {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dns.byUUID[req.GetDatanodeUuid()]
	if d == nil || d.dead {
		return []*dnpb.Command{{Command: &dnpb.Command_Reregister{Reregister: &dnpb.ReregisterCommand{}}}}
	}
	d.lastHeartbeat = s.now()
	d.xceivers = int(req.GetXceiverCount())
	s.dns.updateStorages(d, req.GetStorages())
	cmds := d.commands
	d.commands = nil
	return cmds
}

// addReplica records that storage st holds rep of block b, or asks the
// DataNode to delete it when it is not wanted. Lock held.
func (s *Namesystem) addReplica(st *storageDesc, rep *dnpb.Replica) {
	b := s.ns.blocks.m[rep.GetBlockId()]
	if b == nil {
		// Not part of any file (deleted, or abandoned): remove it.
		s.invalidate(st, rep.GetBlockId(), rep.GetGenStamp())
		return
	}
	final := rep.GetState() == dnpb.ReplicaState_FINALIZED
	if !final && b.committed {
		// A leftover of an interrupted write of a block that was finished
		// elsewhere.
		s.invalidate(st, b.id, rep.GetGenStamp())
		return
	}
	r := &replica{storage: st, gs: rep.GetGenStamp(), numBytes: int64(rep.GetNumBytes()), final: final}
	if final && (r.gs < b.gs || b.committed && r.gs == b.gs && r.numBytes != b.numBytes) {
		r.corrupt = true // stale generation or wrong length
		s.log.Warn("namenode: replica does not match its block", "block", b.String(), "replica_gs", r.gs, "replica_len", r.numBytes, "block_len", b.numBytes, "datanode", st.dn.String())
	}
	if old := b.replicas[st.id]; old != nil && old.corrupt && old.gs == r.gs && old.numBytes == r.numBytes {
		r.corrupt = true // still the copy reported bad
	}
	b.replicas[st.id] = r
	st.blocks[b.id] = b
	if p := s.pending[b.id]; p != nil {
		p.arrived(st.dn.uuid)
		if p.done() {
			s.finishPending(b.id)
		}
	}
}

func (s *Namesystem) removeReplica(st *storageDesc, id uint64) {
	if b := st.blocks[id]; b != nil {
		delete(b.replicas, st.id)
	}
	delete(st.blocks, id)
}

// BlockReport replaces what the NameNode knows of a DataNode's storages
// with a full report.
func (s *Namesystem) BlockReport(req *dnpb.BlockReportRequest) ([]*dnpb.Command, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dns.byUUID[req.GetDatanodeUuid()]
	if d == nil || d.dead {
		return []*dnpb.Command{{Command: &dnpb.Command_Reregister{Reregister: &dnpb.ReregisterCommand{}}}}, nil
	}
	total := 0
	for _, rep := range req.GetReports() {
		st := d.storages[rep.GetStorageId()]
		if st == nil {
			return nil, ipc.Errorf(ipc.ClassIOException, "block report for unknown storage %s of %s", rep.GetStorageId(), d)
		}
		for id := range st.blocks {
			s.removeReplica(st, id)
		}
		for _, r := range rep.GetReplicas() {
			s.addReplica(st, r)
		}
		total += len(rep.GetReplicas())
	}
	d.lastReport = s.now()
	s.log.Info("namenode: block report", "datanode", d.String(), "replicas", total)
	cmds := d.commands
	d.commands = nil
	return cmds, nil
}

// ReceivedDeleted applies an incremental block report.
func (s *Namesystem) ReceivedDeleted(req *dnpb.ReceivedDeletedRequest) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	d := s.dns.byUUID[req.GetDatanodeUuid()]
	if d == nil || d.dead {
		return ipc.Errorf(ipc.ClassIOException, "incremental block report from unregistered DataNode %s", req.GetDatanodeUuid())
	}
	for _, sr := range req.GetStorages() {
		st := d.storages[sr.GetStorageId()]
		if st == nil {
			continue
		}
		for _, r := range sr.GetReceived() {
			s.addReplica(st, r)
		}
		for _, r := range sr.GetDeleted() {
			if b := s.ns.blocks.m[r.GetBlockId()]; b != nil {
				delete(b.deleting, d.uuid)
			}
			s.removeReplica(st, r.GetBlockId())
		}
	}
	return nil
}

// DatanodeReportBadBlocks marks replicas that a DataNode found corrupt.
func (s *Namesystem) DatanodeReportBadBlocks(req *dnpb.ReportBadBlocksRequest) {
	s.mu.Lock()
	defer s.mu.Unlock()
	st := s.dns.byStorage[req.GetStorageId()]
	if st == nil {
		return
	}
	for _, rep := range req.GetReplicas() {
		if b := s.ns.blocks.m[rep.GetBlockId()]; b != nil {
			if r := b.replicas[st.id]; r != nil && !r.corrupt {
				r.corrupt = true
				s.log.Warn("namenode: datanode reports corrupt replica", "block", b.String(), "datanode", st.dn.String(), "reason", req.GetReason())
			}
		}
	}
}

// DatanodeReport lists DataNodes for getDatanodeReport.
func (s *Namesystem) DatanodeReport(which hdfspb.DatanodeReportTypeProto) []*hdfspb.DatanodeInfoProto {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*hdfspb.DatanodeInfoProto
	uuids := make([]string, 0, len(s.dns.byUUID))
	for u := range s.dns.byUUID {
		uuids = append(uuids, u)
	}
	sort.Strings(uuids)
	for _, u := range uuids {
		d := s.dns.byUUID[u]
		switch which {
		case hdfspb.DatanodeReportTypeProto_LIVE:
			if d.dead {
				continue
			}
		case hdfspb.DatanodeReportTypeProto_DEAD:
			if !d.dead {
				continue
			}
		}
		out = append(out, d.proto())
	}
	return out
}

// DatanodeStorages describes every storage, for dfsadmin -report and
// metrics.
type StorageStat struct {
	DatanodeUUID, Addr, StorageID string
	Type                          storage.Type
	Capacity, Used, Remaining     int64
	Blocks                        int
	Failed, Dead                  bool
}

// Storages lists every storage of every DataNode.
func (s *Namesystem) Storages() []StorageStat {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []StorageStat
	for _, d := range s.dns.byUUID {
		for _, st := range d.storages {
			out = append(out, StorageStat{DatanodeUUID: d.uuid, Addr: d.xferAddr(), StorageID: st.id, Type: st.typ,
				Capacity: st.capacity, Used: st.used, Remaining: st.remaining, Blocks: len(st.blocks), Failed: st.failed, Dead: d.dead})
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

func (s *Namesystem) describeBlock(b *block) string {
	return fmt.Sprintf("%s len=%d file=%s", b, b.numBytes, path.Clean(pathOf(b)))
}

var _ = time.Second

// DatanodeStorageReport answers getDatanodeStorageReport: every DataNode
// with each of its storages.
func (s *Namesystem) DatanodeStorageReport(which hdfspb.DatanodeReportTypeProto) []*hdfspb.DatanodeStorageReportProto {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []*hdfspb.DatanodeStorageReportProto
	for _, d := range s.dns.byUUID {
		if which == hdfspb.DatanodeReportTypeProto_LIVE && d.dead || which == hdfspb.DatanodeReportTypeProto_DEAD && !d.dead {
			continue
		}
		r := &hdfspb.DatanodeStorageReportProto{DatanodeInfo: d.proto()}
		for _, st := range sortedStorages(d) {
			r.StorageReports = append(r.StorageReports, &hdfspb.StorageReportProto{
				StorageUuid: proto.String(st.id), Failed: proto.Bool(st.failed),
				Capacity: proto.Uint64(uint64(st.capacity)), DfsUsed: proto.Uint64(uint64(st.used)),
				Remaining: proto.Uint64(uint64(st.remaining)), BlockPoolUsed: proto.Uint64(uint64(st.used)),
				Storage: &hdfspb.DatanodeStorageProto{StorageUuid: proto.String(st.id), StorageType: hdfspb.StorageTypeProto(st.typ).Enum()},
			})
		}
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].GetDatanodeInfo().GetId().GetDatanodeUuid() < out[j].GetDatanodeInfo().GetId().GetDatanodeUuid()
	})
	return out
}
