package balancer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/blocktoken"
	"github.com/stratafs/strata/internal/datatransfer"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/storage"
)

// NamenodeProtocolName is the protocol of getBlocks.
const NamenodeProtocolName = "org.apache.hadoop.hdfs.server.protocol.NamenodeProtocol"

// Caller is a ClientProtocol connection (the hdfs package's Client).
type Caller interface {
	Call(ctx context.Context, method string, req, resp proto.Message) error
}

// RPCCluster is a Cluster over the NameNode's RPC and DataTransferProtocol.
type RPCCluster struct {
	// Client speaks ClientProtocol (storage reports); NameNodes are the
	// RPC addresses tried, in turn, for NamenodeProtocol (the active
	// answers; standbys refuse).
	Client    Caller
	NameNodes []string
	User      string
	// BlockPool names the pool in REPLACE_BLOCK requests.
	BlockPool string
	// BlockPoolUsed measures usage by block pool (-policy blockpool)
	// rather than DFS used (-policy datanode).
	BlockPoolUsed bool
	// IdleTimeout bounds the wait for the target's next word during a
	// move (it sends IN_PROGRESS while copying, then the answer); the
	// move as a whole has no deadline, since concurrent moves share the
	// balancing bandwidth. 0: 60 s (Hadoop's socket read timeout).
	IdleTimeout time.Duration
	// DataTransferProtection and EncryptDataTransfer are
	// dfs.data.transfer.protection and dfs.encrypt.data.transfer: the
	// SASL handshake of moves (the encryption keys are minted from the
	// NameNode's block keys, as Hadoop's balancer KeyManager does).
	DataTransferProtection string
	EncryptDataTransfer    bool
	nodes                  map[string]*hdfspb.DatanodeInfoProto
	// tokens mints the moves' block tokens from the NameNode's keys
	// (getBlockKeys) when block tokens are on; nil when they are off.
	tokens *blocktoken.Manager
}

// callNN calls a NamenodeProtocol method on the NameNodes in turn until
// one answers (the active; standbys refuse), remembering it.
func (c *RPCCluster) callNN(ctx context.Context, method string, req, resp proto.Message) error {
	var err error
	for i, addr := range c.NameNodes {
		cl := ipc.NewClient(ipc.ClientConfig{Addr: addr, User: c.User, Protocol: NamenodeProtocolName, DialTimeout: 10 * time.Second})
		cctx, cancel := context.WithTimeout(ctx, time.Minute)
		err = cl.Call(cctx, method, req, resp)
		cancel()
		cl.Close()
		if err == nil {
			if i > 0 {
				c.NameNodes[0], c.NameNodes[i] = c.NameNodes[i], c.NameNodes[0]
			}
			return nil
		}
		if ctx.Err() != nil {
			return err
		}
	}
	if err == nil {
		err = errors.New("balancer: no NameNode address")
	}
	return err
}

// refreshKeys learns the block pool (versionRequest) and the block keys
// (getBlockKeys), as Hadoop's balancer KeyManager does each iteration.
func (c *RPCCluster) refreshKeys(ctx context.Context) error {
	var ver hdfspb.VersionResponseProto
	if err := c.callNN(ctx, "versionRequest", &hdfspb.VersionRequestProto{}, &ver); err != nil {
		return err
	}
	c.BlockPool = ver.GetInfo().GetBlockPoolID()
	var kr hdfspb.GetBlockKeysResponseProto
	if err := c.callNN(ctx, "getBlockKeys", &hdfspb.GetBlockKeysRequestProto{}, &kr); err != nil {
		return err
	}
	k := kr.GetKeys()
	if !k.GetIsBlockTokenEnabled() {
		c.tokens = nil
		return nil
	}
	key := func(p *hdfspb.BlockKeyProto) blocktoken.Key {
		return blocktoken.Key{ID: int32(p.GetKeyId()), Expiry: time.UnixMilli(int64(p.GetExpiryDate())), Secret: p.GetKeyBytes()}
	}
	keys := blocktoken.Keys{Enabled: true, UpdateInterval: time.Duration(k.GetKeyUpdateInterval()) * time.Millisecond,
		TokenLifetime: time.Duration(k.GetTokenLifeTime()) * time.Millisecond, Current: key(k.GetCurrentKey())}
	for _, a := range k.GetAllKeys() {
		keys.All = append(keys.All, key(a))
	}
	m := blocktoken.NewWorker(blocktoken.Config{BlockPoolID: c.BlockPool, Enabled: true, TokenLifetime: keys.TokenLifetime})
	if err := m.ImportKeys(keys); err != nil {
		return err
	}
	c.tokens = m
	return nil
}

// token is a move's block token: REPLACE for the target, COPY for the
// proxy it forwards it to.
func (c *RPCCluster) token(blockID uint64) (*hdfspb.TokenProto, error) {
	if c.tokens == nil {
		return &hdfspb.TokenProto{Identifier: []byte{}, Password: []byte{}, Kind: proto.String(""), Service: proto.String("")}, nil
	}
	t, err := c.tokens.Mint(c.User, int64(blockID), []blocktoken.AccessMode{blocktoken.Replace, blocktoken.Copy}, nil, nil)
	if err != nil {
		return nil, err
	}
	return blocktoken.TokenProto(t), nil
}

// Nodes implements Cluster with getDatanodeStorageReport(LIVE), and
// refreshes the block keys.
func (c *RPCCluster) Nodes(ctx context.Context) ([]*Node, error) {
	if err := c.refreshKeys(ctx); err != nil {
		return nil, err
	}
	var rep hdfspb.GetDatanodeStorageReportResponseProto
	if err := c.Client.Call(ctx, "getDatanodeStorageReport", &hdfspb.GetDatanodeStorageReportRequestProto{Type: hdfspb.DatanodeReportTypeProto_LIVE.Enum()}, &rep); err != nil {
		return nil, err
	}
	c.nodes = map[string]*hdfspb.DatanodeInfoProto{}
	var out []*Node
	for _, r := range rep.GetDatanodeStorageReports() {
		d := r.GetDatanodeInfo()
		id := d.GetId()
		n := &Node{
			UUID: id.GetDatanodeUuid(), IP: id.GetIpAddr(), Host: id.GetHostName(), Rack: d.GetLocation(), XferPort: id.GetXferPort(),
			Normal:   d.GetAdminState() == hdfspb.DatanodeInfoProto_NORMAL,
			Capacity: map[storage.Type]int64{}, Used: map[storage.Type]int64{}, Remaining: map[storage.Type]int64{},
		}
		for _, s := range r.GetStorageReports() {
			if s.GetFailed() {
				continue
			}
			t := storage.Type(s.GetStorage().GetStorageType())
			n.Capacity[t] += int64(s.GetCapacity())
			used := s.GetDfsUsed()
			if c.BlockPoolUsed {
				used = s.GetBlockPoolUsed()
			}
			n.Used[t] += int64(used)
			n.Remaining[t] += int64(s.GetRemaining())
		}
		c.nodes[n.UUID] = d
		out = append(out, n)
	}
	return out, nil
}

// Blocks implements Cluster with NamenodeProtocol.getBlocks.
func (c *RPCCluster) Blocks(ctx context.Context, src *Node, size, minBlockSize int64) ([]Block, error) {
	req := &hdfspb.GetBlocksRequestProto{
		Datanode: &hdfspb.DatanodeIDProto{IpAddr: proto.String(src.IP), HostName: proto.String(src.Host), DatanodeUuid: proto.String(src.UUID),
			XferPort: proto.Uint32(src.XferPort), InfoPort: proto.Uint32(0), IpcPort: proto.Uint32(0)},
		Size: proto.Uint64(uint64(size)), MinBlockSize: proto.Uint64(uint64(max(minBlockSize, 0))),
	}
	var resp hdfspb.GetBlocksResponseProto
	if err := c.callNN(ctx, "getBlocks", req, &resp); err != nil {
		return nil, err
	}
	var out []Block
	for _, b := range resp.GetBlocks().GetBlocks() {
		blk := Block{ID: b.GetBlock().GetBlockId(), GenStamp: b.GetBlock().GetGenStamp(), NumBytes: int64(b.GetBlock().GetNumBytes()), Holders: b.GetDatanodeUuids()}
		for _, t := range b.GetStorageTypes() {
			blk.Types = append(blk.Types, storage.Type(t))
		}
		out = append(out, blk)
	}
	return out, nil
}

// Move implements Cluster: REPLACE_BLOCK to the target, naming the proxy
// and the source as delete hint, and waits for its answer.
func (c *RPCCluster) Move(ctx context.Context, m Move) error {
	proxy := c.nodes[m.Proxy.UUID]
	if proxy == nil {
		return fmt.Errorf("proxy %s not in the last report", m.Proxy.Addr())
	}
	idle := c.IdleTimeout
	if idle <= 0 {
		idle = 60 * time.Second
	}
	tok, err := c.token(m.Block.ID)
	if err != nil {
		return err
	}
	dialer, err := c.dialer()
	if err != nil {
		return err
	}
	conn, err := dialer.Dial(ctx, m.Target.Addr(), tok)
	if err != nil {
		return err
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	conn.SetDeadline(time.Now().Add(idle))
	op := &hdfspb.OpReplaceBlockProto{
		Header: &hdfspb.BaseHeaderProto{
			Block: &hdfspb.ExtendedBlockProto{PoolId: proto.String(c.BlockPool), BlockId: proto.Uint64(m.Block.ID),
				GenerationStamp: proto.Uint64(m.Block.GenStamp), NumBytes: proto.Uint64(uint64(m.Block.NumBytes))},
			Token: tok,
		},
		DelHint:     proto.String(m.Source.UUID),
		Source:      proxy,
		StorageType: hdfspb.StorageTypeProto(m.Type).Enum(),
	}
	if err := datatransfer.WriteRequest(conn, datatransfer.OpReplaceBlock, op); err != nil {
		return err
	}
	// Each IN_PROGRESS extends the wait, as Hadoop's Dispatcher.
	in := bufio.NewReader(conn)
	var resp *hdfspb.BlockOpResponseProto
	for {
		if ctx.Err() == nil {
			conn.SetReadDeadline(time.Now().Add(idle))
		}
		resp, err = datatransfer.ReadResponse(in)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return err
		}
		if resp.GetStatus() != hdfspb.Status_IN_PROGRESS {
			break
		}
	}
	if resp.GetStatus() != hdfspb.Status_SUCCESS {
		return fmt.Errorf("%s: %v: %s", m.Target.Addr(), resp.GetStatus(), resp.GetMessage())
	}
	return nil
}

// dialer connects to targets with the configured data transfer
// protection; a protection it cannot parse fails the move rather than
// dialing without the handshake.
func (c *RPCCluster) dialer() (*datatransfer.Dialer, error) {
	qops, err := datatransfer.ParseProtection(c.DataTransferProtection)
	if err != nil {
		return nil, fmt.Errorf("balancer: %w", err)
	}
	d := &datatransfer.Dialer{Timeout: 10 * time.Second}
	if len(qops) == 0 && !c.EncryptDataTransfer {
		return d, nil
	}
	d.SASL = &datatransfer.SASLClient{QOPs: qops}
	if c.EncryptDataTransfer {
		d.SASL.EncryptionKey = func(context.Context) (*hdfspb.DataEncryptionKeyProto, error) {
			if c.tokens == nil {
				return nil, errors.New("balancer: no block keys from the NameNode to make a data encryption key with")
			}
			k, err := c.tokens.MintEncryptionKey("")
			if err != nil {
				return nil, err
			}
			return blocktoken.EncryptionKeyProto(k), nil
		}
	}
	return d, nil
}
