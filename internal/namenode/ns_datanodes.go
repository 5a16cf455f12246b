package namenode

import (
	"context"
	"errors"
	"time"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/topology"
)

// The Namesystem's block-management entry points: each takes the lock and
// calls the Manager; DataNode protocol refusals become IPC errors.

func protocolError(err error, class string) error {
	var pe *blockmgmt.ProtocolError
	if errors.As(err, &pe) {
		return ipc.Errorf(class, "%s", pe.Error())
	}
	var de *blockmgmt.DisallowedError
	if errors.As(err, &de) {
		return ipc.Errorf(classDisallowedDatanode, "%s", de.Error())
	}
	return err
}

// RegisterDatanode adds (or re-adds) a DataNode, on the rack the topology
// mapping gives the address it connects from (resolved without the lock:
// a script may run). A node the hosts files do not include is refused
// (DisallowedDatanodeException) before anything is resolved for it, so
// strangers cannot make the NameNode run the script.
func (s *Namesystem) RegisterDatanode(reg blockmgmt.Registration, remoteIP string) error {
	if s.topo != nil {
		s.mu.RLock()
		err := s.bm.Admits(reg, remoteIP)
		s.mu.RUnlock()
		if err != nil {
			return protocolError(err, ipc.ClassIllegalArgument)
		}
		reg.Rack = topology.ResolveNode(s.topo, blockmgmt.NodeIP(reg, remoteIP), reg.XferPort)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return protocolError(s.bm.RegisterDatanode(reg, remoteIP), ipc.ClassIllegalArgument)
}

// Heartbeat records a DataNode's liveness and returns its commands.
func (s *Namesystem) Heartbeat(hb blockmgmt.Heartbeat) []blockmgmt.Command {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.bm.Heartbeat(hb)
}

// BlockReport applies a DataNode's full block report.
func (s *Namesystem) BlockReport(uuid string, reports []blockmgmt.StorageBlockReport) ([]blockmgmt.Command, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	cmds, err := s.bm.BlockReport(uuid, reports)
	return cmds, protocolError(err, ipc.ClassIOException)
}

// ReceivedDeleted applies an incremental block report.
func (s *Namesystem) ReceivedDeleted(uuid string, reports []blockmgmt.StorageReceivedDeleted) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return protocolError(s.bm.ReceivedDeleted(uuid, reports), ipc.ClassIOException)
}

// DatanodeReportBadReplicas marks replicas a DataNode found corrupt.
func (s *Namesystem) DatanodeReportBadReplicas(storageID string, ids []uint64, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.bm.DatanodeReportBadReplicas(storageID, ids, reason)
}

// DatanodeReport describes the DataNodes of type t.
func (s *Namesystem) DatanodeReport(t blockmgmt.ReportType) []blockmgmt.DatanodeInfo {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.bm.DatanodeReport(t)
}

// DatanodeStorageReport describes the DataNodes of type t with their
// storages.
func (s *Namesystem) DatanodeStorageReport(t blockmgmt.ReportType) []blockmgmt.DatanodeStorages {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.bm.DatanodeStorageReport(t)
}

// Storages lists every storage of every DataNode.
func (s *Namesystem) Storages() []blockmgmt.StorageStat {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.bm.Storages()
}

// Stats returns the latest replication counts.
func (s *Namesystem) Stats() blockmgmt.ReplicationStats {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.bm.Stats()
}

// SatisfyStoragePolicy marks every file under p so that the replication
// monitor moves replicas whose storage type its policy does not want (the
// mover's request).
func (s *Namesystem) SatisfyStoragePolicy(p string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.tree.Lookup(p)
	if n == nil {
		return notFound(p)
	}
	var walk func(*namespace.Inode)
	walk = func(x *namespace.Inode) {
		if x.IsDir {
			for _, c := range x.Children {
				walk(c)
			}
			return
		}
		s.bm.SatisfyStoragePolicy(x.ID, x.Blocks())
	}
	walk(n)
	return nil
}

// blockMonitor runs one round of the periodic block work at now: dead
// DataNodes, the startup safe mode, replication (outside safe mode) and
// the closing of files whose last block recovery finished.
func (s *Namesystem) blockMonitor(now time.Time) {
	s.mu.Lock()
	s.bm.CheckHeartbeats(now)
	s.bm.CheckSafeMode(now)
	if s.bm.InSafeMode() {
		s.mu.Unlock()
		return
	}
	s.bm.Replicate(now)
	paths, ops := s.finishedRecoveries(now)
	s.mu.Unlock()
	s.closeRecovered(context.Background(), paths, ops)
}
