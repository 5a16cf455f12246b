package datanode

import (
	"context"
	"errors"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/datanode/fsdataset"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/dnpb"
	"github.com/stratafs/strata/internal/storage"
)

// DatanodeProtocolName is the NameNode protocol DataNodes speak.
const DatanodeProtocolName = "strata.DatanodeProtocol"

// nnActor keeps one NameNode informed: it registers, sends heartbeats and
// block reports, relays replica events as incremental reports and runs the
// commands the NameNode returns. Hadoop calls it BPServiceActor.
type nnActor struct {
	dn *DataNode
	nn *ipc.Client

	mu      sync.Mutex
	pending map[string]*dnpb.StorageReceivedDeleted // by storage id
	kick    chan struct{}

	registered bool
}

func newActor(dn *DataNode) *nnActor {
	return &nnActor{
		dn: dn,
		nn: ipc.NewClient(ipc.ClientConfig{
			Addr: dn.cfg.NameNodeAddr, User: dn.cfg.User, Protocol: DatanodeProtocolName, ProtocolVersion: 1,
			DialTimeout: 5 * time.Second,
		}),
		pending: map[string]*dnpb.StorageReceivedDeleted{},
		kick:    make(chan struct{}, 1),
	}
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
// queues them for the next incremental report.
func (a *nnActor) onChange(ev fsdataset.ReplicaEvent) {
	if ev.Kind == fsdataset.Receiving {
		return
	}
	a.mu.Lock()
	sr := a.pending[ev.Info.StorageID]
	if sr == nil {
		sr = &dnpb.StorageReceivedDeleted{StorageId: proto.String(ev.Info.StorageID)}
		a.pending[ev.Info.StorageID] = sr
	}
	if ev.Kind == fsdataset.Received {
		sr.Received = append(sr.Received, replicaProto(ev.Info))
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
	if err := a.nn.Call(ctx, "register", &dnpb.RegisterRequest{Registration: reg}, &resp); err != nil {
		return err
	}
	d.setPool(resp.GetBlockPoolId(), resp.GetClusterId())
	if err := d.importKeys(resp.GetBlockPoolId(), resp.GetBlockKeys()); err != nil {
		d.log.Warn("datanode: block keys from registration", "err", err)
	}
	d.registeredOnce.Store(true)
	if ms := resp.GetHeartbeatIntervalMs(); ms > 0 && d.cfg.HeartbeatInterval <= 0 {
		d.heartbeat = time.Duration(ms) * time.Millisecond
	}
	// Everything not yet reported is in the full report that follows.
	a.mu.Lock()
	a.pending = map[string]*dnpb.StorageReceivedDeleted{}
	a.mu.Unlock()
	d.log.Info("datanode: registered with namenode", "namenode", d.cfg.NameNodeAddr, "uuid", d.data.DatanodeUUID(), "pool", resp.GetBlockPoolId())
	return a.blockReport(ctx)
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
	if err := a.nn.Call(ctx, "blockReport", req, &resp); err != nil {
		return err
	}
	a.dn.lastReport = time.Now()
	a.handle(ctx, resp.GetCommands())
	return nil
}

func (a *nnActor) heartbeat(ctx context.Context) error {
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
	if err := a.nn.Call(ctx, "heartbeat", req, &resp); err != nil {
		return err
	}
	if err := a.dn.importKeys(a.dn.pool(), resp.GetBlockKeys()); err != nil {
		a.dn.log.Warn("datanode: block keys from heartbeat", "err", err)
	}
	a.handle(ctx, resp.GetCommands())
	return nil
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
	err := a.nn.Call(ctx, "blockReceivedAndDeleted", req, &dnpb.ReceivedDeletedResponse{})
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

// handle runs NameNode commands.
func (a *nnActor) handle(ctx context.Context, cmds []*dnpb.Command) {
	for _, c := range cmds {
		switch {
		case c.GetInvalidate() != nil:
			for _, r := range c.GetInvalidate().GetBlocks() {
				b := fsdataset.Block{ID: r.GetBlockId(), GenStamp: r.GetGenStamp()}
				if err := a.dn.data.Delete(b); err != nil && !errors.Is(err, fsdataset.ErrReplicaNotFound) {
					a.dn.log.Warn("datanode: deleting replica", "block", b.String(), "err", err)
				}
			}
		case c.GetTransfer() != nil:
			t := c.GetTransfer()
			a.dn.wg.Add(1)
			go func() {
				defer a.dn.wg.Done()
				defer a.dn.recoverPanic("transfer command", nil)
				if err := a.dn.transfer(a.dn.ctx, t); err != nil {
					a.dn.log.Warn("datanode: transfer failed", "block", t.GetBlock().GetBlockId(), "err", err)
				}
			}()
		case c.GetMove() != nil:
			m := c.GetMove()
			b := fsdataset.Block{ID: m.GetBlock().GetBlockId(), GenStamp: m.GetBlock().GetGenStamp()}
			a.dn.wg.Add(1)
			go func() {
				defer a.dn.wg.Done()
				defer a.dn.recoverPanic("move command", nil)
				info, err := a.dn.data.MoveReplica(b, storage.Type(m.GetTargetStorageType()))
				if err != nil {
					a.dn.log.Warn("datanode: move failed", "block", b.String(), "err", err)
					return
				}
				a.dn.log.Info("datanode: moved replica", "block", b.String(), "to", info.StorageType)
			}()
		case c.GetRecover() != nil:
			rc := c.GetRecover()
			a.dn.wg.Add(1)
			go func() {
				defer a.dn.wg.Done()
				defer a.dn.recoverPanic("recover command", nil)
				if err := a.dn.recoverReplica(rc); err != nil {
					a.dn.log.Warn("datanode: replica recovery failed", "block", rc.GetBlock().GetBlockId(), "err", err)
				}
			}()
		case c.GetReregister() != nil:
			a.registered = false
		}
	}
}

// run is the actor's loop until ctx ends.
func (a *nnActor) run(ctx context.Context) {
	hb := time.NewTimer(0)
	defer hb.Stop()
	backoff := 100 * time.Millisecond
	for {
		if !a.registered {
			if err := a.register(ctx); err != nil {
				if ctx.Err() != nil {
					return
				}
				a.dn.log.Debug("datanode: registration failed; retrying", "namenode", a.dn.cfg.NameNodeAddr, "err", err)
				select {
				case <-ctx.Done():
					return
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, 5*time.Second)
				continue
			}
			a.registered = true
			backoff = 100 * time.Millisecond
		}
		select {
		case <-ctx.Done():
			return
		case <-a.kick:
			// Batch events arriving together (a pipeline finalizes many
			// blocks in a burst), then report them.
			time.Sleep(5 * time.Millisecond)
			if err := a.sendIncremental(ctx); err != nil && ctx.Err() == nil {
				a.dn.log.Debug("datanode: incremental report failed", "err", err)
				a.registered = false
			}
		case <-hb.C:
			if err := a.heartbeat(ctx); err != nil && ctx.Err() == nil {
				a.dn.log.Warn("datanode: heartbeat failed", "namenode", a.dn.cfg.NameNodeAddr, "err", err)
				a.registered = false
			}
			if time.Since(a.dn.lastReport) >= a.dn.cfg.BlockReportInterval {
				if err := a.blockReport(ctx); err != nil && ctx.Err() == nil {
					a.registered = false
				}
			}
			if err := a.sendIncremental(ctx); err != nil && ctx.Err() == nil {
				a.registered = false
			}
			hb.Reset(a.dn.heartbeat)
		}
	}
}
