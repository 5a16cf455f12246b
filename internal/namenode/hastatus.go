package namenode

import (
	"github.com/hashicorp/raft"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/dnpb"
)

// lastAppliedTxID is the txid a NameNode puts in its heartbeat replies'
// HA status. DataNodes accept a NameNode's claim to be active only with a
// txid above the last claim they accepted from another (Hadoop's rule
// against a stale active), so it must grow with every change of leader:
// a new leader's value is above anything its predecessor reported. With
// HA it is the Raft applied index, which a new leader's first (no-op)
// entry moves past every index its predecessor could have applied.
func (n *NameNode) lastAppliedTxID() uint64 {
	if n.ha != nil && n.ha.node != nil {
		return n.ha.node.Raft.AppliedIndex()
	}
	return n.edit.LastTxID()
}

// haStatusProto is the NameNode's HA state for a heartbeat reply.
func (n *NameNode) haStatusProto() *dnpb.NNHAStatus {
	st := dnpb.NNHAStatus_INITIALIZING
	switch n.ServiceState() {
	case HAActive:
		st = dnpb.NNHAStatus_ACTIVE
		if n.ha != nil && n.ha.node != nil && n.ha.node.Raft.State() != raft.Leader {
			// Deposed, and not yet told: do not make DataNodes switch back.
			st = dnpb.NNHAStatus_STANDBY
		}
	case HAStandby:
		st = dnpb.NNHAStatus_STANDBY
	}
	return &dnpb.NNHAStatus{State: st.Enum(), Txid: proto.Uint64(n.lastAppliedTxID())}
}
