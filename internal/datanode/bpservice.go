package datanode

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/dnpb"
	"github.com/stratafs/strata/internal/storage"
)

// DatanodeProtocolName is the NameNode protocol DataNodes speak.
const DatanodeProtocolName = "strata.DatanodeProtocol"

// nnCallTimeout bounds one call to a NameNode, so that a NameNode that
// accepts connections but does not answer holds up only its own actor.
const nnCallTimeout = 60 * time.Second

// The DataNode serves one block pool, that of its NameNode or HA
// nameservice, with one nnActor per NameNode (Hadoop's BPOfferService
// with its BPServiceActors). Every actor registers, heartbeats and sends
// full and incremental block reports on its own, so a NameNode that is
// down or slow delays none of the others; every replica event is queued
// for every actor. Commands that change replicas run only when they come
// from the active NameNode: the one that last claimed ACTIVE in a
// heartbeat reply, with a txid above the last claim accepted from another
// (a NameNode claiming with an older txid is a stale active and is
// ignored). Commands from the others are dropped; a ReregisterCommand
// concerns only the actor that got it, whoever sent it.

// haState is the DataNode's view of which NameNode is active.
type haState struct {
	mu      sync.Mutex
	active  *nnActor // nil: none known
	txid    uint64   // of the last accepted claim
	claimed bool     // a claim was ever accepted
}

// nnActor keeps one NameNode informed: it registers, sends heartbeats and
// block reports, relays replica events as incremental reports and passes
// the commands the NameNode returns on. Hadoop calls it BPServiceActor.
type nnActor struct {
	dn   *DataNode
	idx  int // in dn.actors, and the slot of its block keys
	addr string
	nn   *ipc.Client

	mu      sync.Mutex
	pending map[string]*dnpb.StorageReceivedDeleted // by storage id
	kick    chan struct{}
	// accepting is set while the NameNode has us registered: replica
	// events are queued only then, since a registration is followed by a
	// full report covering everything before it.
	accepting atomic.Bool

	// Owned by run's goroutine.
	registered bool
	heartbeat  time.Duration
	lastReport time.Time
}

func newActor(dn *DataNode, idx int, addr string) *nnActor {
	return &nnActor{
		dn: dn, idx: idx, addr: addr,
		nn: ipc.NewClient(ipc.ClientConfig{
			Addr: addr, User: dn.cfg.User, Protocol: DatanodeProtocolName, ProtocolVersion: 1,
			DialTimeout: 5 * time.Second, LocalIP: dn.cfg.sourceIP(),
			Login: dn.cfg.Login, ServerPrincipal: dn.cfg.NameNodePrincipal,
		}),
		pending:   map[string]*dnpb.StorageReceivedDeleted{},
		kick:      make(chan struct{}, 1),
		heartbeat: dn.heartbeat,
	}
}

func (a *nnActor) call(ctx context.Context, method string, req, resp proto.Message) error {
	ctx, cancel := context.WithTimeout(ctx, nnCallTimeout)
	defer cancel()
	return a.nn.Call(ctx, method, req, resp)
}

func replicaProto(info fsdataset.ReplicaInfo) *dnpb.Replica {
	st := dnpb.ReplicaState_FINALIZED
	switch info.State {
	case fsdataset.RBW:
		st = dnpb.ReplicaState_RBW
	case fsdataset.RWR:
		st = dnpb.ReplicaState_RWR
	}
	return &dnpb.Replica{BlockId: proto.Uint64(info.ID), GenStamp: proto.Uint64(info.GenStamp), NumBytes: proto.Uint64(uint64(info.NumBytes)), State: st.Enum()}
}

// onChange receives the dataset's replica events (from any goroutine) and
// queues them for every NameNode's next incremental report.
func (d *DataNode) onChange(ev fsdataset.ReplicaEvent) {
	hint := ""
	if ev.Kind == fsdataset.Received {
		hint = d.takeDelHint(ev.Info.ID) // a balancer move's (balance.go)
	}
	for _, a := range d.actors {
		a.onChange(ev, hint)
	}
}

func (a *nnActor) onChange(ev fsdataset.ReplicaEvent, delHint string) {
	if ev.Kind == fsdataset.Receiving || !a.accepting.Load() {
		return
	}
	a.mu.Lock()
	sr := a.pending[ev.Info.StorageID]
	if sr == nil {
		sr = &dnpb.StorageReceivedDeleted{StorageId: proto.String(ev.Info.StorageID)}
		a.pending[ev.Info.StorageID] = sr
	}
	if ev.Kind == fsdataset.Received {
		rp := replicaProto(ev.Info)
		if delHint != "" {
			rp.DelHint = proto.String(delHint)
		}
		sr.Received = append(sr.Received, rp)
	} else {
		sr.Deleted = append(sr.Deleted, replicaProto(ev.Info))
	}
	a.mu.Unlock()
	select {
	case a.kick <- struct{}{}:
	default:
	}
}

func (a *nnActor) storageReports() []*dnpb.StorageReport {
	var out []*dnpb.StorageReport
	for _, v := range a.dn.data.Volumes() {
		out = append(out, &dnpb.StorageReport{
			StorageId: proto.String(v.StorageID), StorageType: proto.Uint32(uint32(v.Type)),
			Capacity: proto.Uint64(uint64(v.Capacity)), DfsUsed: proto.Uint64(uint64(v.DfsUsed)),
			Remaining: proto.Uint64(uint64(v.Remaining)), Failed: proto.Bool(v.Failed), NumBlocks: proto.Uint64(uint64(v.NumBlocks)),
		})
	}
	return out
}

// disallowedDatanodeClass is the NameNode's refusal of a node its hosts
// files do not include.
const disallowedDatanodeClass = "org.apache.hadoop.hdfs.server.protocol.DisallowedDatanodeException"

// connect registers, learns the NameNode's HA state from a first
// heartbeat (so that the block report's commands are judged by it), and
// sends a full block report.
func (a *nnActor) connect(ctx context.Context) error {
	if err := a.register(ctx); err != nil {
		return err
	}
	if err := a.sendHeartbeat(ctx); err != nil {
		return err
	}
	return a.blockReport(ctx)
}

func (a *nnActor) register(ctx context.Context) error {
	d := a.dn
	hostname, err := d.hostname()
	if err != nil {
		return err
	}
	reg := &dnpb.Registration{
		DatanodeUuid: proto.String(d.data.DatanodeUUID()), Hostname: proto.String(hostname), IpAddr: proto.String(d.advertisedIP()),
		XferPort: proto.Uint32(uint32(d.xferPort())), InfoPort: proto.Uint32(uint32(d.httpPort())), IpcPort: proto.Uint32(uint32(d.ipcPort())),
		Storages: a.storageReports(), SoftwareVersion: proto.String("strata"),
	}
	var resp dnpb.RegisterResponse
	if err := a.call(ctx, "register", &dnpb.RegisterRequest{Registration: reg}, &resp); err != nil {
		return err
	}
	if err := d.setPool(resp.GetBlockPoolId(), resp.GetClusterId()); err != nil {
		return err
	}
	if err := d.importKeys(a.idx, resp.GetBlockPoolId(), resp.GetBlockKeys()); err != nil {
		d.log.Warn("datanode: block keys from registration", "namenode", a.addr, "err", err)
	}
	d.registeredOnce.Store(true)
	if ms := resp.GetHeartbeatIntervalMs(); ms > 0 && d.cfg.HeartbeatInterval <= 0 {
		a.heartbeat = time.Duration(ms) * time.Millisecond
	}
	// Everything not yet reported is in the full report that follows.
	a.mu.Lock()
	a.pending = map[string]*dnpb.StorageReceivedDeleted{}
	a.accepting.Store(true)
	a.mu.Unlock()
	d.log.Info("datanode: registered with namenode", "namenode", a.addr, "uuid", d.data.DatanodeUUID(), "pool", resp.GetBlockPoolId())
	return nil
}

func (a *nnActor) blockReport(ctx context.Context) error {
	req := &dnpb.BlockReportRequest{DatanodeUuid: proto.String(a.dn.data.DatanodeUUID())}
	report := a.dn.data.Report()
	for _, v := range a.dn.data.Volumes() {
		if v.Failed {
			continue
		}
		sbr := &dnpb.StorageBlockReport{StorageId: proto.String(v.StorageID)}
		for _, info := range report[v.StorageID] {
			sbr.Replicas = append(sbr.Replicas, replicaProto(info))
		}
		req.Reports = append(req.Reports, sbr)
	}
	var resp dnpb.BlockReportResponse
	if err := a.call(ctx, "blockReport", req, &resp); err != nil {
		return err
	}
	a.lastReport = time.Now()
	a.handle(ctx, resp.GetCommands())
	return nil
}

func (a *nnActor) sendHeartbeat(ctx context.Context) error {
	failed := 0
	for _, v := range a.dn.data.Volumes() {
		if v.Failed {
			failed++
		}
	}
	req := &dnpb.HeartbeatRequest{
		DatanodeUuid: proto.String(a.dn.data.DatanodeUUID()), Storages: a.storageReports(),
		XceiverCount: proto.Uint32(uint32(a.dn.xceivers.Load())), FailedVolumes: proto.Uint32(uint32(failed)),
	}
	var resp dnpb.HeartbeatResponse
	if err := a.call(ctx, "heartbeat", req, &resp); err != nil {
		return err
	}
	a.dn.updateHAState(a, resp.GetHaStatus())
	if err := a.dn.importKeys(a.idx, a.dn.pool(), resp.GetBlockKeys()); err != nil {
		a.dn.log.Warn("datanode: block keys from heartbeat", "namenode", a.addr, "err", err)
	}
	a.handle(ctx, resp.GetCommands())
	return nil
}

// updateHAState applies a NameNode's HA status from a heartbeat reply, as
// Hadoop's BPOfferService.updateActorStatesFromHeartbeat. A reply without
// one (a NameNode that knows nothing of HA) claims active at txid 0.
func (d *DataNode) updateHAState(a *nnActor, st *dnpb.NNHAStatus) {
	claims := st == nil || st.GetState() == dnpb.NNHAStatus_ACTIVE
	txid := st.GetTxid()
	h := &d.ha
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case claims && h.active != a:
		if h.claimed && txid <= h.txid {
			d.log.Warn("datanode: namenode claims active with a stale txid; ignoring it", "namenode", a.addr, "txid", txid, "last_claim_txid", h.txid)
			return
		}
		if h.active == nil {
			d.log.Info("datanode: acknowledging active namenode", "namenode", a.addr, "txid", txid)
		} else {
			d.log.Info("datanode: namenode takes over as active", "namenode", a.addr, "from", h.active.addr, "txid", txid)
		}
		h.active = a
	case !claims && h.active == a:
		d.log.Info("datanode: namenode relinquishes active state", "namenode", a.addr, "state", st.GetState().String(), "txid", txid)
		h.active = nil
	}
	if h.active == a {
		h.txid, h.claimed = txid, true
	}
}

// activeActor is the actor of the active NameNode, or nil.
func (d *DataNode) activeActor() *nnActor {
	d.ha.mu.Lock()
	defer d.ha.mu.Unlock()
	return d.ha.active
}

// activeNameNode is the active NameNode's RPC address, or the first
// configured while none is known.
func (d *DataNode) activeNameNode() string {
	if a := d.activeActor(); a != nil {
		return a.addr
	}
	return d.cfg.NameNodeAddr
}

// nameNodesActiveFirst lists the NameNodes with the one last known active
// first: the order a client on the DataNode fails over in.
func (d *DataNode) nameNodesActiveFirst() []string {
	active := d.activeNameNode()
	out := []string{active}
	for _, a := range d.cfg.NameNodeAddrs {
		if a != active {
			out = append(out, a)
		}
	}
	return out
}

// sendIncremental sends the queued replica events; on failure they are
// put back for the next try.
func (a *nnActor) sendIncremental(ctx context.Context) error {
	a.mu.Lock()
	if len(a.pending) == 0 {
		a.mu.Unlock()
		return nil
	}
	req := &dnpb.ReceivedDeletedRequest{DatanodeUuid: proto.String(a.dn.data.DatanodeUUID())}
	for _, sr := range a.pending {
		req.Storages = append(req.Storages, sr)
	}
	a.pending = map[string]*dnpb.StorageReceivedDeleted{}
	a.mu.Unlock()
	err := a.call(ctx, "blockReceivedAndDeleted", req, &dnpb.ReceivedDeletedResponse{})
	if err != nil {
		a.mu.Lock()
		for _, sr := range req.Storages {
			cur := a.pending[sr.GetStorageId()]
			if cur == nil {
				a.pending[sr.GetStorageId()] = sr
				continue
			}
			cur.Received = append(sr.Received, cur.Received...)
			cur.Deleted = append(sr.Deleted, cur.Deleted...)
		}
		a.mu.Unlock()
	}
	return err
}

// flushIncremental reports the queued replica events now, before a
// client is told its write is done, so that its complete() finds them:
// to the active NameNode, or, none being known, to every NameNode at
// once. The other NameNodes get them from their actors' loops, which the
// events already woke.
func (d *DataNode) flushIncremental(ctx context.Context) error {
	if a := d.activeActor(); a != nil {
		return a.sendIncremental(ctx)
	}
	return d.eachActor(func(a *nnActor) error { return a.sendIncremental(ctx) })
}

// eachActor runs f for every actor concurrently and returns the first
// error.
func (d *DataNode) eachActor(f func(*nnActor) error) error {
	errs := make([]error, len(d.actors))
	var wg sync.WaitGroup
	for i, a := range d.actors {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(a)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// handle runs NameNode commands: a re-registration whoever asks, the
// others only from the active NameNode.
func (a *nnActor) handle(ctx context.Context, cmds []*dnpb.Command) {
	for _, c := range cmds {
		if c.GetReregister() != nil {
			a.registered = false
			a.accepting.Store(false)
			continue
		}
		if a.dn.activeActor() != a {
			a.dn.log.Debug("datanode: ignoring a command from a namenode that is not active", "namenode", a.addr, "command", fmt.Sprintf("%T", c.GetCommand()))
			continue
		}
		a.dn.runCommand(a, c)
	}
}

// runCommand carries out one command of the active NameNode's.
func (d *DataNode) runCommand(a *nnActor, c *dnpb.Command) {
	switch {
	case c.GetInvalidate() != nil:
		for _, r := range c.GetInvalidate().GetBlocks() {
			b := fsdataset.Block{ID: r.GetBlockId(), GenStamp: r.GetGenStamp()}
			if err := d.data.Delete(b); err != nil && !errors.Is(err, fsdataset.ErrReplicaNotFound) {
				d.log.Warn("datanode: deleting replica", "block", b.String(), "err", err)
			}
		}
	case c.GetTransfer() != nil:
		t := c.GetTransfer()
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			defer d.recoverPanic("transfer command", nil)
			if err := d.transfer(d.ctx, t); err != nil {
				d.log.Warn("datanode: transfer failed", "block", t.GetBlock().GetBlockId(), "err", err)
			}
		}()
	case c.GetMove() != nil:
		m := c.GetMove()
		b := fsdataset.Block{ID: m.GetBlock().GetBlockId(), GenStamp: m.GetBlock().GetGenStamp()}
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			defer d.recoverPanic("move command", nil)
			info, err := d.data.MoveReplica(b, storage.Type(m.GetTargetStorageType()))
			if err != nil {
				d.log.Warn("datanode: move failed", "block", b.String(), "err", err)
				return
			}
			d.log.Info("datanode: moved replica", "block", b.String(), "to", info.StorageType)
		}()
	case c.GetRecover() != nil:
		rc := c.GetRecover()
		d.wg.Add(1)
		go func() {
			defer d.wg.Done()
			defer d.recoverPanic("recover command", nil)
			if err := d.recoverReplica(rc); err != nil {
				d.log.Warn("datanode: replica recovery failed", "block", rc.GetBlock().GetBlockId(), "err", err)
				var ce *fsdataset.CorruptReplicaError
				if rc.GetNewBlockId() != 0 && errors.As(err, &ce) {
					// A copy-on-truncate found its source corrupt: the
					// NameNode copies from another replica next time.
					d.reportBad(ce.Block, err)
				}
			}
		}()
	}
}

// lost marks the NameNode as having lost us (a failed call): register
// again before anything else.
func (a *nnActor) lost() {
	a.registered = false
	a.accepting.Store(false)
}

// run is the actor's loop until ctx ends.
func (a *nnActor) run(ctx context.Context) {
	hb := time.NewTimer(0)
	defer hb.Stop()
	backoff := 100 * time.Millisecond
	for {
		if !a.registered {
			if err := a.connect(ctx); err != nil {
				a.accepting.Store(false)
				if ctx.Err() != nil {
					return
				}
				if re := (*ipc.RemoteError)(nil); errors.As(err, &re) && re.Class == disallowedDatanodeClass {
					// Refused by the hosts files: say so; a later
					// refreshNodes may let it in.
					a.dn.log.Warn("datanode: the NameNode refuses this DataNode; retrying", "namenode", a.addr, "class", re.Class, "err", re.Message)
				} else {
					a.dn.log.Debug("datanode: registration failed; retrying", "namenode", a.addr, "err", err)
				}
				select {
				case <-ctx.Done():
					return
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, 5*time.Second)
				continue
			}
			a.registered = a.accepting.Load() // false if the report's answer asked to re-register
			backoff = 100 * time.Millisecond
			hb.Reset(a.heartbeat)
			continue
		}
		select {
		case <-ctx.Done():
			return
		case <-a.kick:
			// Batch events arriving together (a pipeline finalizes many
			// blocks in a burst), then report them.
			time.Sleep(5 * time.Millisecond)
			if err := a.sendIncremental(ctx); err != nil && ctx.Err() == nil {
				a.dn.log.Debug("datanode: incremental report failed", "namenode", a.addr, "err", err)
				a.lost()
			}
		case <-hb.C:
			if err := a.sendHeartbeat(ctx); err != nil && ctx.Err() == nil {
				a.dn.log.Warn("datanode: heartbeat failed", "namenode", a.addr, "err", err)
				a.lost()
			}
			if a.registered && time.Since(a.lastReport) >= a.dn.cfg.BlockReportInterval {
				if err := a.blockReport(ctx); err != nil && ctx.Err() == nil {
					a.lost()
				}
			}
			if a.registered {
				if err := a.sendIncremental(ctx); err != nil && ctx.Err() == nil {
					a.lost()
				}
			}
			hb.Reset(a.heartbeat)
		}
	}
}
