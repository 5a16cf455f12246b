package namenode

import (
	"context"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/namespace"
)

// fileUnderConstruction finds the file a client is writing, by id when
// given (paths may have been renamed since).
func (s *Namesystem) fileUnderConstruction(p string, fileID uint64, client string) (*namespace.Inode, error) {
	var n *namespace.Inode
	if fileID != 0 {
		n = s.tree.Inode(fileID)
	} else {
		n = s.tree.Lookup(p)
	}
	if n == nil || n.IsDir {
		return nil, ipc.Errorf(ipc.ClassFileNotFound, "File does not exist: %s [Lease.  Holder: %s, pending creates: %d]", p, client, s.leases.Count(client))
	}
	if n.UC() == nil {
		return n, ipc.Errorf(ipc.ClassLeaseExpired, "No lease on %s: File is not open for writing. Holder %s does not have any open files.", p, client)
	}
	if n.UC().ClientName != client {
		return n, ipc.Errorf(ipc.ClassLeaseExpired, "Client (=%s) is not the lease owner (=%s) of %s", client, n.UC().ClientName, p)
	}
	return n, nil
}

// RenewLease renews every lease held by client.
func (s *Namesystem) RenewLease(ctx context.Context, client string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.leases.Renew(client, s.now())
	return nil
}

// RecoverLease closes the file if its writer's lease can be taken over: at
// once when its last block is complete, else after the DataNodes have
// finished the last block's replicas. It returns true once the file is
// closed; clients call it again until then.
func (s *Namesystem) RecoverLease(ctx context.Context, p, client string) (bool, error) {
	if err := s.checkPath(p); err != nil {
		return false, err
	}
	pc := s.checker(ctx)
	closed := false
	var holder string
	err := s.mutateThen(ctx, func() ([]namespace.Edit, func(), error) {
		r := s.tree.Resolve(p)
		if err := pc.Traverse(r); err != nil {
			return nil, nil, err
		}
		n := r.Target()
		if n == nil || n.IsDir {
			return nil, nil, notFound(p)
		}
		if err := pc.Check(n, namespace.AccessWrite); err != nil {
			return nil, nil, err
		}
		if n.UC() == nil {
			closed = true
			return nil, nil, nil
		}
		ops, then, now := s.recoverFileOps(n)
		if now {
			closed = true
			holder = n.UC().ClientName
		}
		return ops, then, nil
	})
	if err == nil && holder != "" {
		s.mu.Lock()
		s.leases.Remove(holder, p)
		s.mu.Unlock()
	}
	return closed, err
}

// expireLeases closes the files of writers whose leases passed the hard
// limit, as Hadoop's LeaseManager.Monitor does.
func (s *Namesystem) expireLeases(ctx context.Context) {
	s.mu.RLock()
	expired := s.leases.Expired(s.now(), s.cfg.leaseHardLimit)
	s.mu.RUnlock()
	for _, e := range expired {
		for _, p := range e.Paths {
			err := s.mutateThen(ctx, func() ([]namespace.Edit, func(), error) {
				n := s.tree.Lookup(p)
				if n == nil || n.UC() == nil || n.UC().ClientName != e.Holder {
					return nil, nil, nil
				}
				s.log.Info("namenode: lease expired; recovering file", "holder", e.Holder, "path", p)
				ops, then, _ := s.recoverFileOps(n)
				return ops, then, nil
			})
			if err != nil {
				s.log.Warn("namenode: closing file of expired lease", "path", p, "err", err)
			}
		}
		s.mu.Lock()
		s.leases.Drop(e.Holder)
		s.mu.Unlock()
	}
}
