package namenode

import (
	"context"
	"time"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/namenode/namespace"
)

// finishedRecoveries returns the edits that close the files whose last
// block recovery is done, with their paths. Lock held.
func (s *Namesystem) finishedRecoveries(now time.Time) (paths []string, ops [][]namespace.Edit) {
	for _, done := range s.bm.FinishedRecoveries(now) {
		n := namespace.FileOf(done.Block)
		bs := namespace.BlockInfos(n.Blocks())
		bs[len(bs)-1].NumBytes = done.Length
		if done.DropLast {
			bs = bs[:len(bs)-1]
		}
		ms := s.nowMillis()
		paths = append(paths, n.Path())
		ops = append(ops, []namespace.Edit{namespace.CloseFile(n.Path(), ms, ms, bs)})
	}
	return paths, ops
}

// closeRecovered logs and applies the closing of recovered files.
func (s *Namesystem) closeRecovered(ctx context.Context, paths []string, ops [][]namespace.Edit) {
	for i := range ops {
		op := ops[i]
		p := paths[i]
		err := s.mutate(ctx, func() ([]namespace.Edit, error) {
			if n := s.tree.Lookup(p); n == nil || n.UC() == nil {
				return nil, nil
			}
			return op, nil
		})
		if err != nil {
			s.log.Warn("namenode: closing recovered file", "file", p, "err", err)
			continue
		}
		s.mu.Lock()
		s.leases.RemovePath(p)
		s.mu.Unlock()
	}
}

// recoverFileOps returns what closing open file n takes: nil ops and true
// when it can close at once (closeOp), or the ops starting a recovery of
// its last block. Lock held.
func (s *Namesystem) recoverFileOps(n *namespace.Inode) ([]namespace.Edit, func(), bool) {
	k := len(n.Blocks())
	if k == 0 {
		return []namespace.Edit{s.closeOp(n, n.Blocks())}, nil, true
	}
	last := n.Blocks()[k-1]
	if s.bm.Recovering(last.ID) {
		return nil, nil, false
	}
	if last.Committed && (len(blockmgmt.GoodReplicas(last)) >= s.cfg.minReplication || last.NumBytes == 0) {
		if last.NumBytes == 0 && len(last.Replicas) == 0 {
			return []namespace.Edit{s.closeOp(n, n.Blocks()[:k-1])}, nil, true
		}
		return []namespace.Edit{s.closeOp(n, n.Blocks())}, nil, true
	}
	if n.UC().CopySource != nil {
		return s.resumeCopyOnTruncate(n)
	}
	// The last block is being written (or a truncate of it was
	// interrupted): finish its replicas with a new generation stamp.
	oldGS := last.GenStamp
	newGS := s.tree.Blocks.LastGenStamp() + 1
	truncate := last.Committed
	bs := namespace.BlockInfos(n.Blocks())
	bs[k-1].GenStamp = newGS
	op := namespace.UpdateBlocks(n.Path(), bs, truncate)
	then := func() { s.bm.StartRecovery(n.Blocks()[k-1], oldGS, truncate) }
	return []namespace.Edit{op}, then, false
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
	err := s.mutateThen(ctx, func() ([]namespace.Edit, func(), error) {
		r := s.tree.Resolve(p)
		if err := pc.Traverse(r); err != nil {
			return nil, nil, err
		}
		n := r.Target()
		if n == nil {
			return nil, nil, notFound(p)
		}
		if n.IsDir {
			return nil, nil, ipc.Errorf(ipc.ClassFileNotFound, "Path is not a file: %s", p)
		}
		if err := pc.Check(n, namespace.AccessWrite); err != nil {
			return nil, nil, err
		}
		if n.UC() != nil {
			return nil, nil, ipc.Errorf(ipc.ClassAlreadyBeingCreated, "Failed to TRUNCATE_FILE %s for %s because this file lease is currently owned by %s on %s", p, client, n.UC().ClientName, n.UC().ClientMachine)
		}
		cur := n.Length()
		if newLength < 0 || newLength > cur {
			return nil, nil, ipc.Errorf(ipc.ClassIllegalArgument, "Cannot truncate to a larger file size. Current size: %d, truncate size: %d.", cur, newLength)
		}
		now := s.nowMillis()
		if newLength == cur {
			done = true
			return nil, nil, nil
		}
		var pos int64
		i := 0
		for ; i < len(n.Blocks()) && pos+n.Blocks()[i].NumBytes <= newLength; i++ {
			pos += n.Blocks()[i].NumBytes
		}
		bs := namespace.BlockInfos(n.Blocks())
		if pos == newLength {
			done = true
			return []namespace.Edit{namespace.UpdateBlocks(p, bs[:i], false), namespace.SetTimes(p, now, -1)}, nil, nil
		}
		if s.tree.SnapshotHolds(n.Blocks()[i]) {
			return s.copyOnTruncateOps(ctx, n, client, i, newLength-pos, now)
		}
		// Cut block i in the middle: the DataNodes do it under a new
		// generation stamp while the file is open for the caller.
		if err := s.checkTruncateQuota(n, i, newLength-pos); err != nil {
			return nil, nil, err
		}
		oldGS := n.Blocks()[i].GenStamp
		newGS := s.tree.Blocks.LastGenStamp() + 1
		bs = bs[:i+1]
		bs[i].GenStamp = newGS
		bs[i].NumBytes = newLength - pos
		ops := []namespace.Edit{
			namespace.ReopenFile(p, client, clientMachine(ctx), now),
			namespace.UpdateBlocks(p, bs, true),
		}
		then := func() {
			s.leases.Add(client, p, s.now())
			b := n.Blocks()[len(n.Blocks())-1]
			// The replicas still carry the old stamp and length until the
			// DataNodes cut them.
			s.bm.StartRecovery(b, oldGS, true)
		}
		return ops, then, nil
	})
	return done, err
}
