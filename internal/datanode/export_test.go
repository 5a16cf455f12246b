package datanode

import (
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/proto/dnpb"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// ImportKeys gives d block keys as a NameNode's registration would.
func ImportKeys(d *DataNode, p *dnpb.BlockKeys) error { return d.importKeys(0, d.pool(), p) }

// RedirectToken mints a WebHDFS redirect token with d's current block key
// (as its NameNode would), or "" while d holds no keys.
func RedirectToken(d *DataNode, user, op, path string, mode blocktoken.AccessMode) string {
	pt := d.tokens.Load()
	if pt == nil {
		return ""
	}
	tok, err := pt.signer(d.preferred()).MintRedirect(user, op, path, mode)
	if err != nil {
		panic(err)
	}
	return tok
}

// RefuseNextToken makes d refuse the next op's token, whatever it is.
func RefuseNextToken(d *DataNode) { d.refuseNextToken.Store(true) }

// MintToken mints a token for blockID with d's current key, as d's
// NameNode would (Hadoop's empty token while d checks none).
func MintToken(d *DataNode, user string, blockID uint64, modes ...blocktoken.AccessMode) *hdfspb.TokenProto {
	pt := d.tokens.Load()
	if pt == nil || !pt.enabled {
		return &hdfspb.TokenProto{Identifier: []byte{}, Password: []byte{}, Kind: proto.String(""), Service: proto.String("")}
	}
	t, err := pt.signer(d.preferred()).Mint(user, int64(blockID), modes, nil, nil)
	if err != nil {
		panic(err)
	}
	return blocktoken.TokenProto(t)
}
