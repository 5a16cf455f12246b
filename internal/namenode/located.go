package namenode

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/blocktoken"
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

// blockToken is the access token for lb with mode, minted for the
// caller's user when block tokens are enabled (Hadoop's
// BlockManager.setBlockToken: the block, the mode, and the located
// block's storage types and ids), else the empty token.
func (c *clientProtocol) blockToken(ctx context.Context, lb *LocatedBlock, mode blocktoken.AccessMode) *hdfspb.TokenProto {
	if !c.nn.cfg.BlockTokens {
		return emptyToken()
	}
	types := make([]string, len(lb.Locs))
	ids := make([]string, len(lb.Locs))
	for i, t := range lb.Locs {
		types[i], ids[i] = t.StorageType.String(), t.StorageID
	}
	t, err := c.nn.tokens.Mint(c.ns.callerName(ctx), int64(lb.Block.ID), []blocktoken.AccessMode{mode}, types, ids)
	if err != nil {
		// A master always has a key; a DataNode refuses the empty token
		// and the client asks again.
		c.nn.log.Error("namenode: minting a block token", "block", lb.Block.ID, "err", err)
		return emptyToken()
	}
	return blocktoken.TokenProto(t)
}

// locatedBlockProto converts lb, with a token for mode.
func (c *clientProtocol) locatedBlockProto(ctx context.Context, lb *LocatedBlock, mode blocktoken.AccessMode) *hdfspb.LocatedBlockProto {
	if lb == nil {
		return nil
	}
	out := &hdfspb.LocatedBlockProto{
		B: c.extBlock(lb.Block), Offset: proto.Uint64(uint64(lb.Offset)), Corrupt: proto.Bool(lb.Corrupt), BlockToken: c.blockToken(ctx, lb, mode),
	}
	for _, t := range lb.Locs {
		out.Locs = append(out.Locs, datanodeProto(t.Node))
		out.IsCached = append(out.IsCached, false)
		out.StorageTypes = append(out.StorageTypes, hdfspb.StorageTypeProto(t.StorageType))
		out.StorageIDs = append(out.StorageIDs, t.StorageID)
	}
	return out
}

// locatedBlocksProto converts a getBlockLocations answer; its tokens are
// for reading.
func (c *clientProtocol) locatedBlocksProto(ctx context.Context, lbs *LocatedBlocks) *hdfspb.LocatedBlocksProto {
	out := &hdfspb.LocatedBlocksProto{
		FileLength:          proto.Uint64(uint64(lbs.FileLength)),
		UnderConstruction:   proto.Bool(lbs.UnderConstruction),
		IsLastBlockComplete: proto.Bool(lbs.LastBlockComplete),
		LastBlock:           c.locatedBlockProto(ctx, lbs.LastBlock, blocktoken.Read),
	}
	for i := range lbs.Blocks {
		out.Blocks = append(out.Blocks, c.locatedBlockProto(ctx, &lbs.Blocks[i], blocktoken.Read))
	}
	return out
}
