package datanode

import (
	"errors"
	"io"
	"net"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/proto/dnpb"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// Block access tokens, the DataNode's side. The NameNode hands its block
// keys over at registration (RegisterResponse.block_keys) and again with
// a heartbeat after each roll (HeartbeatResponse.block_keys); the DataNode
// keeps them in a blocktoken worker for the NameNode's block pool. When
// the keys say enabled (dfs.block.access.token.enable on the NameNode),
// every DataTransferProtocol op must carry a token for its block with the
// access mode Hadoop's DataXceiver.checkAccess asks for:
//
//	READ_BLOCK, BLOCK_CHECKSUM, REQUEST_SHORT_CIRCUIT_FDS  READ
//	WRITE_BLOCK (every stage)                              WRITE
//	TRANSFER_BLOCK, COPY_BLOCK                             COPY
//	REPLACE_BLOCK                                          REPLACE
//
// A refused op is answered ERROR_ACCESS_TOKEN with the token error's
// message (Hadoop's clients raise InvalidBlockTokenException) before the
// DataNode touches a replica or dials a target. The copies the DataNode
// makes itself (TransferCommand re-replication, TRANSFER_BLOCK) carry a
// WRITE token it mints with the current key, as Hadoop's DataTransfer
// does. A MoveCommand moves a replica between this DataNode's own volumes
// (Hadoop's mover would send REPLACE_BLOCK with a REPLACE/COPY token), so
// no token is involved. Client tokens travel unchanged down a write
// pipeline.

// poolTokens is the token state of one block pool.
type poolTokens struct {
	pool    string
	mgr     *blocktoken.Manager
	enabled bool
}

// importKeys takes the NameNode's block keys for pool (nil: none sent).
func (d *DataNode) importKeys(pool string, p *dnpb.BlockKeys) error {
	if p == nil {
		return nil
	}
	keys := blocktoken.KeysFromProto(p)
	cur := d.tokens.Load()
	mgr := (*blocktoken.Manager)(nil)
	if cur != nil && cur.pool == pool {
		mgr = cur.mgr
	} else {
		mgr = blocktoken.NewWorker(blocktoken.Config{BlockPoolID: pool, Enabled: keys.Enabled})
	}
	if err := mgr.ImportKeys(keys); err != nil {
		return err
	}
	if cur == nil || cur.enabled != keys.Enabled || cur.pool != pool {
		d.log.Info("datanode: block keys imported", "pool", pool, "blockTokens", keys.Enabled, "currentKey", keys.Current.ID)
		if keys.Enabled != d.cfg.BlockTokens {
			d.log.Warn("datanode: the NameNode's dfs.block.access.token.enable differs from this DataNode's; following the NameNode's", "namenode", keys.Enabled, "datanode", d.cfg.BlockTokens)
		}
	}
	d.tokens.Store(&poolTokens{pool: pool, mgr: mgr, enabled: keys.Enabled})
	return nil
}

// BlockTokensEnabled reports whether the DataNode checks block access
// tokens: the NameNode's keys, imported, said enabled.
func (d *DataNode) BlockTokensEnabled() bool {
	pt := d.tokens.Load()
	return pt != nil && pt.enabled
}

// checkAccess verifies an op's token for block eb and mode, when tokens
// are on. A refusal is answered ERROR_ACCESS_TOKEN on w (for WRITE with
// this node as the first bad link, as Hadoop's), logged, and returned.
func (d *DataNode) checkAccess(w io.Writer, c net.Conn, op datatransfer.Op, eb *hdfspb.ExtendedBlockProto, tok *hdfspb.TokenProto, mode blocktoken.AccessMode) error {
	pt := d.tokens.Load()
	var err error
	switch {
	case d.refuseNextToken.CompareAndSwap(true, false):
		err = &blocktoken.InvalidTokenError{Msg: "Block token refused by an injected fault"}
	case pt == nil && d.cfg.BlockTokens && !d.registeredOnce.Load():
		err = &blocktoken.InvalidTokenError{Msg: "Block token cannot be verified yet: the DataNode has no block keys from its NameNode"}
	case pt == nil || !pt.enabled:
		return nil
	default:
		if _, err = pt.mgr.Check(blocktoken.FromProto(tok), int64(eb.GetBlockId()), mode); err == nil {
			return nil
		}
	}
	var ite *blocktoken.InvalidTokenError
	if !errors.As(err, &ite) {
		ite = &blocktoken.InvalidTokenError{Msg: err.Error()}
	}
	resp := &hdfspb.BlockOpResponseProto{Status: hdfspb.Status_ERROR_ACCESS_TOKEN.Enum(), Message: proto.String(ite.Msg)}
	if mode == blocktoken.Write {
		resp.FirstBadLink = proto.String(d.XferAddr())
	}
	datatransfer.WriteResponse(w, resp)
	d.stats.TokenRefusals.Add(1)
	d.log.Warn("datanode: block token verification failed", "op", op.String(), "remote", remoteOf(c), "block", eb.GetBlockId(), "message", ite.Msg)
	return ite
}

func remoteOf(c net.Conn) string {
	if c == nil || c.RemoteAddr() == nil {
		return ""
	}
	return c.RemoteAddr().String()
}

// mintToken returns a token for the DataNode's own copy of block id with
// mode (Hadoop's DataTransfer does the same), or Hadoop's empty token
// while tokens are off.
func (d *DataNode) mintToken(blockID uint64, mode blocktoken.AccessMode, storageTypes, storageIDs []string) (*hdfspb.TokenProto, error) {
	pt := d.tokens.Load()
	if pt == nil || !pt.enabled {
		return &hdfspb.TokenProto{Identifier: []byte{}, Password: []byte{}, Kind: proto.String(""), Service: proto.String("")}, nil
	}
	t, err := pt.mgr.Mint(d.cfg.User, int64(blockID), []blocktoken.AccessMode{mode}, storageTypes, storageIDs)
	if err != nil {
		return nil, err
	}
	return blocktoken.TokenProto(t), nil
}

// checkRedirect verifies the NameNode's signature on a WebHDFS redirect
// (blocktoken.RedirectParam). It is required whenever the DataNode holds
// block keys, whether or not DataTransferProtocol tokens are enabled; a
// DataNode not yet registered refuses every redirected operation.
func (d *DataNode) checkRedirect(param, user, op, path string, mode blocktoken.AccessMode) error {
	pt := d.tokens.Load()
	if pt == nil {
		if d.registeredOnce.Load() {
			// The NameNode exported no keys: it signs no redirects
			// either (a NameNode without block keys), so there is
			// nothing to check against.
			return nil
		}
		return &blocktoken.InvalidTokenError{Msg: "DataNode is not registered with its NameNode yet"}
	}
	if param == "" {
		return &blocktoken.InvalidTokenError{Msg: "WebHDFS request without the NameNode's " + blocktoken.RedirectParam + " parameter: send it to the NameNode, which redirects it here"}
	}
	return pt.mgr.CheckRedirect(param, user, op, path, mode)
}
