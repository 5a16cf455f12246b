package namenode

import (
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// Conversions between ClientProtocol's block messages and the
// Namesystem's types.

// blockInfo is the block an ExtendedBlockProto names (its pool is the
// NameNode's only one).
func blockInfo(b *hdfspb.ExtendedBlockProto) namespace.BlockInfo {
	return namespace.BlockInfo{ID: b.GetBlockId(), GenStamp: b.GetGenerationStamp(), NumBytes: int64(b.GetNumBytes())}
}

// blockInfoPtr is blockInfo for an optional field: nil stays nil.
func blockInfoPtr(b *hdfspb.ExtendedBlockProto) *namespace.BlockInfo {
	if b == nil {
		return nil
	}
	bi := blockInfo(b)
	return &bi
}

// emptyToken is the block access token sent while tokens are off: all four
// required fields present and empty.
func emptyToken() *hdfspb.TokenProto {
	return &hdfspb.TokenProto{Identifier: []byte{}, Password: []byte{}, Kind: proto.String(""), Service: proto.String("")}
}

func (c *clientProtocol) extBlock(b namespace.BlockInfo) *hdfspb.ExtendedBlockProto {
	return &hdfspb.ExtendedBlockProto{PoolId: proto.String(c.ns.blockPoolID), BlockId: proto.Uint64(b.ID),
		GenerationStamp: proto.Uint64(b.GenStamp), NumBytes: proto.Uint64(uint64(b.NumBytes))}
}

func (c *clientProtocol) locatedBlockProto(lb *LocatedBlock) *hdfspb.LocatedBlockProto {
	if lb == nil {
		return nil
	}
	out := &hdfspb.LocatedBlockProto{
		B: c.extBlock(lb.Block), Offset: proto.Uint64(uint64(lb.Offset)), Corrupt: proto.Bool(lb.Corrupt), BlockToken: emptyToken(),
	}
	for _, t := range lb.Locs {
		out.Locs = append(out.Locs, datanodeProto(t.Node))
		out.IsCached = append(out.IsCached, false)
		out.StorageTypes = append(out.StorageTypes, hdfspb.StorageTypeProto(t.StorageType))
		out.StorageIDs = append(out.StorageIDs, t.StorageID)
	}
	return out
}

func (c *clientProtocol) locatedBlocksProto(lbs *LocatedBlocks) *hdfspb.LocatedBlocksProto {
	out := &hdfspb.LocatedBlocksProto{
		FileLength:          proto.Uint64(uint64(lbs.FileLength)),
		UnderConstruction:   proto.Bool(lbs.UnderConstruction),
		IsLastBlockComplete: proto.Bool(lbs.LastBlockComplete),
		LastBlock:           c.locatedBlockProto(lbs.LastBlock),
	}
	for i := range lbs.Blocks {
		out.Blocks = append(out.Blocks, c.locatedBlockProto(&lbs.Blocks[i]))
	}
	return out
}
