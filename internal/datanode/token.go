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
// keeps them in a blocktoken worker for the NameNode's block pool. Each
// NameNode of an HA nameservice has keys of its own, so the DataNode
// keeps one worker per NameNode and a token verifies when the keys of any
// of them do: a client's token from whichever NameNode is active passes.
// When
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

// poolTokens is the token state of one block pool. It is replaced, never
// changed, once stored.
type poolTokens struct {
	pool string
	// mgrs and on are each NameNode's worker and its
	// dfs.block.access.token.enable, by actor index (nil: no keys yet).
	mgrs    []*blocktoken.Manager
	on      []bool
	enabled bool // any NameNode's keys say enabled: fail closed
}

// importKeys takes NameNode idx's block keys for pool (nil: none sent).
func (d *DataNode) importKeys(idx int, pool string, p *dnpb.BlockKeys) error {
	if p == nil {
		return nil
	}
	keys := blocktoken.KeysFromProto(p)
	d.tokensMu.Lock()
	defer d.tokensMu.Unlock()
	cur := d.tokens.Load()
	n := max(len(d.actors), idx+1)
	next := &poolTokens{pool: pool, mgrs: make([]*blocktoken.Manager, n), on: make([]bool, n)}
	if cur != nil && cur.pool == pool {
		copy(next.mgrs, cur.mgrs)
		copy(next.on, cur.on)
	}
	mgr := next.mgrs[idx]
	if mgr == nil {
		mgr = blocktoken.NewWorker(blocktoken.Config{BlockPoolID: pool, Enabled: keys.Enabled})
	}
	if err := mgr.ImportKeys(keys); err != nil {
		return err
	}
	next.mgrs[idx], next.on[idx] = mgr, keys.Enabled
	differ := false
	for i, m := range next.mgrs {
		differ = differ || m != nil && next.on[i] != keys.Enabled
		next.enabled = next.enabled || m != nil && next.on[i]
	}
	if differ {
		d.log.Warn("datanode: the NameNodes' dfs.block.access.token.enable differ; checking tokens", "namenode", idx)
	}
	if cur == nil || cur.enabled != next.enabled || cur.pool != pool {
		d.log.Info("datanode: block keys imported", "pool", pool, "blockTokens", next.enabled, "currentKey", keys.Current.ID)
		if next.enabled != d.cfg.BlockTokens {
			d.log.Warn("datanode: the NameNode's dfs.block.access.token.enable differs from this DataNode's; following the NameNode's", "namenode", next.enabled, "datanode", d.cfg.BlockTokens)
		}
	}
	d.tokens.Store(next)
	return nil
}

// ordered lists the workers holding keys, first the one of NameNode
// prefer (-1: none preferred).
func (pt *poolTokens) ordered(prefer int) []*blocktoken.Manager {
	var out []*blocktoken.Manager
	if prefer >= 0 && prefer < len(pt.mgrs) && pt.mgrs[prefer] != nil {
		out = append(out, pt.mgrs[prefer])
	}
	for i, m := range pt.mgrs {
		if m != nil && i != prefer {
			out = append(out, m)
		}
	}
	return out
}

// preferred is the index of the active NameNode, whose keys are tried
// first and sign the DataNode's own tokens, or -1.
func (d *DataNode) preferred() int {
	if a := d.activeActor(); a != nil {
		return a.idx
	}
	return -1
}

// check verifies tok against every NameNode's keys; the error is that of
// the preferred NameNode's keys.
func (pt *poolTokens) check(prefer int, tok blocktoken.Token, blockID int64, mode blocktoken.AccessMode) error {
	var first error
	for _, m := range pt.ordered(prefer) {
		_, err := m.Check(tok, blockID, mode)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}

// signer is the worker that mints the DataNode's own tokens: the active
// NameNode's when it handed keys over, else any.
func (pt *poolTokens) signer(prefer int) *blocktoken.Manager { return pt.ordered(prefer)[0] }

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
		if err = pt.check(d.preferred(), blocktoken.FromProto(tok), int64(eb.GetBlockId()), mode); err == nil {
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
	// Counted before the answer: a client that retries at once must find
	// the refusal counted.
	d.stats.TokenRefusals.Add(1)
	datatransfer.WriteResponse(w, resp)
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
	t, err := pt.signer(d.preferred()).Mint(d.cfg.User, int64(blockID), []blocktoken.AccessMode{mode}, storageTypes, storageIDs)
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
	var first error
	for _, m := range pt.ordered(d.preferred()) {
		err := m.CheckRedirect(param, user, op, path, mode)
		if err == nil {
			return nil
		}
		if first == nil {
			first = err
		}
	}
	return first
}
