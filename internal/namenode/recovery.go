package namenode

import (
	"context"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/dnpb"
	"github.com/stratafs/strata/internal/proto/namenodepb"
)

// blockRecovery is a last block whose replicas the DataNodes are finishing
// with a new generation stamp: cut to a length (truncate) or finalized at
// what they hold (lease recovery). The file stays open until it is done.
type blockRecovery struct {
	truncate bool
	newLen   int64 // truncate: the block's new length
	holders  map[string]bool
	deadline time.Time
}

// recoveryTimeout bounds the wait for every holder to report; after it the
// recovery finishes with the replicas that did.
const recoveryTimeout = 30 * time.Second

// startRecovery sends RecoverCommands for the last block b of a file to
// every live DataNode that has (or is writing) a replica. Lock held.
func (s *Namesystem) startRecovery(b *block, oldGS uint64, truncate bool, now time.Time) {
	rec := &blockRecovery{truncate: truncate, newLen: b.numBytes, holders: map[string]bool{}, deadline: now.Add(recoveryTimeout)}
	if !truncate {
		rec.newLen = -1
	}
	targets := map[string]*datanodeDesc{}
	for _, r := range b.replicas {
		if !r.storage.dn.dead {
			targets[r.storage.dn.uuid] = r.storage.dn
		}
	}
	for _, st := range b.expected {
		if !st.dn.dead {
			targets[st.dn.uuid] = st.dn
		}
	}
	for uuid, d := range targets {
		rec.holders[uuid] = true
		d.commands = append(d.commands, &dnpb.Command{Command: &dnpb.Command_Recover{Recover: &dnpb.RecoverCommand{
			Block:       &dnpb.Replica{BlockId: proto.Uint64(b.id), GenStamp: proto.Uint64(oldGS)},
			NewGenStamp: proto.Uint64(b.gs), NewLength: proto.Int64(rec.newLen),
		}}})
	}
	s.recovering[b.id] = rec
	s.log.Info("namenode: recovering block", "block", b.String(), "file", pathOf(b), "truncate", truncate, "length", rec.newLen, "replicas", len(targets))
}

// finishedRecoveries returns the ops that close files whose last block
// recovery is done. Lock held.
func (s *Namesystem) finishedRecoveries(now time.Time) (paths []string, ops [][]*namenodepb.EditOp) {
	for id, rec := range s.recovering {
		b := s.ns.blocks.m[id]
		if b == nil || b.file == nil || b.file.uc == nil {
			delete(s.recovering, id)
			continue
		}
		var got []*replica
		for _, r := range b.replicas {
			if r.final && !r.corrupt && r.gs == b.gs && !r.storage.dn.dead {
				got = append(got, r)
			}
		}
		all := len(got) >= len(rec.holders)
		if !all && !(now.After(rec.deadline) && len(got) > 0) {
			continue
		}
		if len(got) == 0 && len(rec.holders) > 0 {
			continue
		}
		length := rec.newLen
		if !rec.truncate {
			// Every byte acknowledged to the writer is on every node of
			// its pipeline, so the shortest replica still holds them all.
			length = -1
			for _, r := range got {
				if length < 0 || r.numBytes < length {
					length = r.numBytes
				}
			}
			if length < 0 {
				length = 0
			}
		}
		n := b.file
		bs := blocksProto(n.blocks)
		bs[len(bs)-1].NumBytes = proto.Uint64(uint64(length))
		if length == 0 && len(got) == 0 {
			bs = bs[:len(bs)-1] // nothing was ever written to it
		}
		now := nowMillis(s.now())
		paths = append(paths, n.path())
		ops = append(ops, []*namenodepb.EditOp{{Op: &namenodepb.EditOp_CloseFile{CloseFile: &namenodepb.OpCloseFile{
			Path: proto.String(n.path()), Mtime: proto.Int64(now), Atime: proto.Int64(now), Blocks: bs,
		}}}})
		delete(s.recovering, id)
		s.log.Info("namenode: block recovery done; closing file", "block", b.String(), "file", n.path(), "length", length, "replicas", len(got))
	}
	return paths, ops
}

// closeRecovered logs and applies the closing of recovered files.
func (s *Namesystem) closeRecovered(ctx context.Context, paths []string, ops [][]*namenodepb.EditOp) {
	for i := range ops {
		op := ops[i]
		p := paths[i]
		err := s.mutate(ctx, func() ([]*namenodepb.EditOp, error) {
			if n := s.ns.lookup(p); n == nil || n.uc == nil {
				return nil, nil
			}
			return op, nil
		})
		if err != nil {
			s.log.Warn("namenode: closing recovered file", "file", p, "err", err)
			continue
		}
		s.mu.Lock()
		for holder, l := range s.leases.leases {
			if _, ok := l.paths[p]; ok {
				s.leases.remove(holder, p)
			}
		}
		s.mu.Unlock()
	}
}

// recoverFileOps returns what closing open file n takes: nil ops and true
// when it can close at once (closeOp), or the ops starting a recovery of
// its last block. Lock held.
func (s *Namesystem) recoverFileOps(n *inode) ([]*namenodepb.EditOp, func(), bool) {
	k := len(n.blocks)
	if k == 0 {
		return []*namenodepb.EditOp{s.closeOp(n)}, nil, true
	}
	last := n.blocks[k-1]
	if _, busy := s.recovering[last.id]; busy {
		return nil, nil, false
	}
	if last.committed && (len(s.goodReplicas(last)) >= s.cfg.minReplication || last.numBytes == 0) {
		if last.numBytes == 0 && len(last.replicas) == 0 {
			op := s.closeOp(n)
			op.GetCloseFile().Blocks = blocksProto(n.blocks[:k-1])
			return []*namenodepb.EditOp{op}, nil, true
		}
		return []*namenodepb.EditOp{s.closeOp(n)}, nil, true
	}
	// The last block is being written (or a truncate of it was
	// interrupted): finish its replicas with a new generation stamp.
	oldGS := last.gs
	newGS := s.ns.blocks.lastGS + 1
	truncate := last.committed
	bs := blocksProto(n.blocks)
	bs[k-1].GenStamp = proto.Uint64(newGS)
	op := &namenodepb.EditOp{Op: &namenodepb.EditOp_UpdateBlocks{UpdateBlocks: &namenodepb.OpUpdateBlocks{
		Path: proto.String(n.path()), Blocks: bs, LastCommitted: proto.Bool(truncate),
	}}}
	then := func() { s.startRecovery(n.blocks[k-1], oldGS, truncate, s.now()) }
	return []*namenodepb.EditOp{op}, then, false
}

// Truncate shortens p to newLength. At a block boundary it is done at
// once (true); inside a block the file stays open for client while the
// DataNodes cut the block, and closes when they are done (false).
func (s *Namesystem) Truncate(ctx context.Context, p string, newLength int64, client string) (bool, error) {
	if err := s.checkPath(p); err != nil {
		return false, err
	}
	pc := s.checker(ctx)
	done := false
	err := s.mutateThen(ctx, func() ([]*namenodepb.EditOp, func(), error) {
		r := s.ns.resolve(p)
		if err := pc.traverse(r); err != nil {
			return nil, nil, err
		}
		n := r.target()
		if n == nil {
			return nil, nil, notFound(p)
		}
		if n.isDir {
			return nil, nil, ipc.Errorf(ipc.ClassFileNotFound, "Path is not a file: %s", p)
		}
		if err := pc.check(n, accessWrite); err != nil {
			return nil, nil, err
		}
		if n.uc != nil {
			return nil, nil, ipc.Errorf(ipc.ClassAlreadyBeingCreated, "Failed to TRUNCATE_FILE %s for %s because this file lease is currently owned by %s on %s", p, client, n.uc.clientName, n.uc.clientMachine)
		}
		cur := fileLength(n)
		if newLength < 0 || newLength > cur {
			return nil, nil, ipc.Errorf(ipc.ClassIllegalArgument, "Cannot truncate to a larger file size. Current size: %d, truncate size: %d.", cur, newLength)
		}
		now := nowMillis(s.now())
		if newLength == cur {
			done = true
			return nil, nil, nil
		}
		var pos int64
		i := 0
		for ; i < len(n.blocks) && pos+n.blocks[i].numBytes <= newLength; i++ {
			pos += n.blocks[i].numBytes
		}
		bs := blocksProto(n.blocks)
		if pos == newLength {
			done = true
			return []*namenodepb.EditOp{
				{Op: &namenodepb.EditOp_UpdateBlocks{UpdateBlocks: &namenodepb.OpUpdateBlocks{Path: proto.String(p), Blocks: bs[:i]}}},
				{Op: &namenodepb.EditOp_SetTimes{SetTimes: &namenodepb.OpSetTimes{Path: proto.String(p), Mtime: proto.Int64(now), Atime: proto.Int64(-1)}}},
			}, nil, nil
		}
		// Cut block i in the middle: the DataNodes do it under a new
		// generation stamp while the file is open for the caller.
		oldGS := n.blocks[i].gs
		newGS := s.ns.blocks.lastGS + 1
		bs = bs[:i+1]
		bs[i].GenStamp = proto.Uint64(newGS)
		bs[i].NumBytes = proto.Uint64(uint64(newLength - pos))
		ops := []*namenodepb.EditOp{
			{Op: &namenodepb.EditOp_ReopenFile{ReopenFile: &namenodepb.OpReopenFile{
				Path: proto.String(p), ClientName: proto.String(client), ClientMachine: proto.String(clientMachine(ctx)), Mtime: proto.Int64(now),
			}}},
			{Op: &namenodepb.EditOp_UpdateBlocks{UpdateBlocks: &namenodepb.OpUpdateBlocks{Path: proto.String(p), Blocks: bs, LastCommitted: proto.Bool(true)}}},
		}
		then := func() {
			s.leases.add(client, p, s.now())
			b := n.blocks[len(n.blocks)-1]
			// The replicas still carry the old stamp and length until the
			// DataNodes cut them.
			s.startRecovery(b, oldGS, true, s.now())
		}
		return ops, then, nil
	})
	return done, err
}
