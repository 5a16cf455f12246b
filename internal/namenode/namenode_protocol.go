package namenode

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// NamenodeProtocolName is Hadoop's NamenodeProtocol, which the balancer
// speaks to the NameNode (getBlocks).
const NamenodeProtocolName = "org.apache.hadoop.hdfs.server.protocol.NamenodeProtocol"

// namenodeProtocol serves the balancer's part of NamenodeProtocol.
type namenodeProtocol struct {
	nn *NameNode
	ns *Namesystem
}

func (p *namenodeProtocol) methods() map[string]ipc.Method {
	return map[string]ipc.Method{"getBlocks": ipc.Unary(p.getBlocks)}
}

// maxGetBlocksSize bounds the bytes of blocks one getBlocks asks for
// (Hadoop's balancer asks for 2 GB at a time).
const maxGetBlocksSize = 1 << 40

// getBlocks is for the superuser, as Hadoop's (checkSuperuserPrivilege).
func (p *namenodeProtocol) getBlocks(ctx context.Context, req *hdfspb.GetBlocksRequestProto) (*hdfspb.GetBlocksResponseProto, error) {
	if err := p.ns.checker(ctx).Superuser("getBlocks"); err != nil {
		return nil, err
	}
	size := req.GetSize()
	if size == 0 || size > maxGetBlocksSize {
		return nil, ipc.Errorf(ipc.ClassIllegalArgument, "Unexpected not positive size: %d", size)
	}
	uuid := req.GetDatanode().GetDatanodeUuid()
	p.ns.mu.RLock()
	bls, err := p.ns.bm.GetBlocks(uuid, int64(size), int64(req.GetMinBlockSize()))
	p.ns.mu.RUnlock()
	if err != nil {
		return nil, protocolError(err, ipc.ClassIllegalArgument)
	}
	out := &hdfspb.BlocksWithLocationsProto{}
	for _, b := range bls {
		bp := &hdfspb.BlockWithLocationsProto{
			Block:         &hdfspb.BlockProto{BlockId: proto.Uint64(b.ID), GenStamp: proto.Uint64(b.GenStamp), NumBytes: proto.Uint64(uint64(b.NumBytes))},
			DatanodeUuids: b.DatanodeUUIDs, StorageUuids: b.StorageIDs,
		}
		for _, t := range b.StorageTypes {
			bp.StorageTypes = append(bp.StorageTypes, hdfspb.StorageTypeProto(t))
		}
		out.Blocks = append(out.Blocks, bp)
	}
	return &hdfspb.GetBlocksResponseProto{Blocks: out}, nil
}
