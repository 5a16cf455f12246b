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
	return map[string]ipc.Method{
		"getBlocks":      ipc.Unary(p.getBlocks),
		"getBlockKeys":   ipc.Unary(p.getBlockKeys),
		"versionRequest": ipc.Unary(p.versionRequest),
	}
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

// getBlockKeys hands the block keys to the balancer, which mints its
// REPLACE_BLOCK tokens with them (superuser only). With block tokens off
// the answer says so and carries no secret, as Hadoop's DUMMY_KEYS.
func (p *namenodeProtocol) getBlockKeys(ctx context.Context, _ *hdfspb.GetBlockKeysRequestProto) (*hdfspb.GetBlockKeysResponseProto, error) {
	if err := p.ns.checker(ctx).Superuser("getBlockKeys"); err != nil {
		return nil, err
	}
	k := p.nn.tokens.ExportKeys()
	key := func(id int32, expiry int64, secret []byte) *hdfspb.BlockKeyProto {
		return &hdfspb.BlockKeyProto{KeyId: proto.Uint32(uint32(id)), ExpiryDate: proto.Uint64(uint64(max(expiry, 0))), KeyBytes: secret}
	}
	out := &hdfspb.ExportedBlockKeysProto{
		IsBlockTokenEnabled: proto.Bool(k.Enabled),
		KeyUpdateInterval:   proto.Uint64(uint64(k.UpdateInterval.Milliseconds())),
		TokenLifeTime:       proto.Uint64(uint64(k.TokenLifetime.Milliseconds())),
		CurrentKey:          key(0, 0, nil),
	}
	if k.Enabled {
		out.CurrentKey = key(k.Current.ID, k.Current.Expiry.UnixMilli(), k.Current.Secret)
		for _, a := range k.All {
			out.AllKeys = append(out.AllKeys, key(a.ID, a.Expiry.UnixMilli(), a.Secret))
		}
	}
	return &hdfspb.GetBlockKeysResponseProto{Keys: out}, nil
}

// versionRequest names the namespace and block pool.
func (p *namenodeProtocol) versionRequest(ctx context.Context, _ *hdfspb.VersionRequestProto) (*hdfspb.VersionResponseProto, error) {
	v := p.nn.edit.Version()
	return &hdfspb.VersionResponseProto{Info: &hdfspb.NamespaceInfoProto{
		BuildVersion: proto.String("strata"), BlockPoolID: proto.String(v.BlockPoolID), SoftwareVersion: proto.String("strata"),
		StorageInfo: &hdfspb.StorageInfoProto{LayoutVersion: proto.Uint32(uint32(v.LayoutVersion)), NamespceID: proto.Uint32(v.NamespaceID),
			ClusterID: proto.String(v.ClusterID), CTime: proto.Uint64(uint64(v.CTime))},
	}}, nil
}
