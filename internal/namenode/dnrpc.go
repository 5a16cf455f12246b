package namenode

import (
	"context"
	"net"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/proto/dnpb"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/storage"
	"github.com/stratafs/strata/internal/topology"
)

// DatanodeProtocolName is the protocol DataNodes speak to the NameNode.
const DatanodeProtocolName = "strata.DatanodeProtocol"

// datanodeProtocol serves strata.DatanodeProtocol over IPC.
type datanodeProtocol struct {
	nn *NameNode
	ns *Namesystem
}

func (p *datanodeProtocol) methods() map[string]ipc.Method {
	return map[string]ipc.Method{
		"register":                ipc.Unary(p.register),
		"heartbeat":               ipc.Unary(p.heartbeat),
		"blockReport":             ipc.Unary(p.blockReport),
		"blockReceivedAndDeleted": ipc.Unary(p.receivedDeleted),
		"reportBadBlocks":         ipc.Unary(p.reportBadBlocks),
	}
}

func remoteIP(ctx context.Context) string {
	if c, ok := ipc.CallerFrom(ctx); ok && c.Remote != nil {
		if host, _, err := net.SplitHostPort(c.Remote.String()); err == nil {
			return host
		}
	}
	return ""
}

// maxStoragesPerDatanode bounds the storages (volumes) one DataNode may
// register or report; Hadoop has no such limit, real DataNodes have a
// few dozen at most.
const maxStoragesPerDatanode = 1024

func checkStorageCount(n int) error {
	if n > maxStoragesPerDatanode {
		return ipc.Errorf(ipc.ClassIllegalArgument, "%d storages exceed the limit of %d per DataNode", n, maxStoragesPerDatanode)
	}
	return nil
}

// datanodeOnly refuses DataNode calls from users other than the
// superuser: DataNodes run as the same user as the NameNode. In kerberos
// mode the DataNode principal (dfs.datanode.kerberos.principal), which
// need not be the superuser's, is admitted too, but only when the IPC
// server's service authorization admitted this very call to this
// protocol (it checks each call by the protocol it is routed by).
func (p *datanodeProtocol) datanodeOnly(ctx context.Context) error {
	if c, ok := ipc.CallerFrom(ctx); ok && c.Auth == ipc.AuthMethodKerberos && p.nn.cfg.Security.Kerberos &&
		c.Authorized && c.Protocol == DatanodeProtocolName {
		return nil
	}
	return p.ns.checker(ctx).Superuser("DataNode protocol")
}

func (p *datanodeProtocol) register(ctx context.Context, req *dnpb.RegisterRequest) (*dnpb.RegisterResponse, error) {
	if err := p.datanodeOnly(ctx); err != nil {
		return nil, err
	}
	if err := checkStorageCount(len(req.GetRegistration().GetStorages())); err != nil {
		return nil, err
	}
	if err := p.ns.RegisterDatanode(registration(req.GetRegistration()), remoteIP(ctx)); err != nil {
		return nil, err
	}
	v := p.nn.edit.Version()
	return &dnpb.RegisterResponse{
		ClusterId: proto.String(v.ClusterID), BlockPoolId: proto.String(v.BlockPoolID), NamespaceId: proto.Uint32(v.NamespaceID),
		HeartbeatIntervalMs: proto.Uint32(uint32(p.nn.cfg.HeartbeatInterval.Milliseconds())),
		BlockKeys:           p.nn.blockKeysFor(req.GetRegistration().GetDatanodeUuid(), true),
	}, nil
}

func (p *datanodeProtocol) heartbeat(ctx context.Context, req *dnpb.HeartbeatRequest) (*dnpb.HeartbeatResponse, error) {
	if err := p.datanodeOnly(ctx); err != nil {
		return nil, err
	}
	if err := checkStorageCount(len(req.GetStorages())); err != nil {
		return nil, err
	}
	cmds := commandProtos(p.ns.Heartbeat(blockmgmt.Heartbeat{
		UUID: req.GetDatanodeUuid(), Xceivers: int(req.GetXceiverCount()), Storages: storageReports(req.GetStorages()),
	}))
	resp := &dnpb.HeartbeatResponse{Commands: cmds, HaStatus: p.nn.haStatusProto()}
	if !reregister(cmds) {
		// An unknown DataNode gets its keys when it registers.
		resp.BlockKeys = p.nn.blockKeysFor(req.GetDatanodeUuid(), false)
	}
	return resp, nil
}

func reregister(cmds []*dnpb.Command) bool {
	for _, c := range cmds {
		if c.GetReregister() != nil {
			return true
		}
	}
	return false
}

func (p *datanodeProtocol) blockReport(ctx context.Context, req *dnpb.BlockReportRequest) (*dnpb.BlockReportResponse, error) {
	if err := p.datanodeOnly(ctx); err != nil {
		return nil, err
	}
	if err := checkStorageCount(len(req.GetReports())); err != nil {
		return nil, err
	}
	reports := make([]blockmgmt.StorageBlockReport, len(req.GetReports()))
	for i, r := range req.GetReports() {
		reports[i] = blockmgmt.StorageBlockReport{StorageID: r.GetStorageId(), Replicas: reportedReplicas(r.GetReplicas())}
	}
	cmds, err := p.ns.BlockReport(req.GetDatanodeUuid(), reports)
	if err != nil {
		return nil, err
	}
	return &dnpb.BlockReportResponse{Commands: commandProtos(cmds)}, nil
}

func (p *datanodeProtocol) receivedDeleted(ctx context.Context, req *dnpb.ReceivedDeletedRequest) (*dnpb.ReceivedDeletedResponse, error) {
	if err := p.datanodeOnly(ctx); err != nil {
		return nil, err
	}
	if err := checkStorageCount(len(req.GetStorages())); err != nil {
		return nil, err
	}
	reports := make([]blockmgmt.StorageReceivedDeleted, len(req.GetStorages()))
	for i, sr := range req.GetStorages() {
		reports[i] = blockmgmt.StorageReceivedDeleted{StorageID: sr.GetStorageId(), Received: reportedReplicas(sr.GetReceived())}
		for _, r := range sr.GetDeleted() {
			reports[i].Deleted = append(reports[i].Deleted, r.GetBlockId())
		}
	}
	return &dnpb.ReceivedDeletedResponse{}, p.ns.ReceivedDeleted(req.GetDatanodeUuid(), reports)
}

func (p *datanodeProtocol) reportBadBlocks(ctx context.Context, req *dnpb.ReportBadBlocksRequest) (*dnpb.ReportBadBlocksResponse, error) {
	if err := p.datanodeOnly(ctx); err != nil {
		return nil, err
	}
	ids := make([]uint64, len(req.GetReplicas()))
	for i, r := range req.GetReplicas() {
		ids[i] = r.GetBlockId()
	}
	p.ns.DatanodeReportBadReplicas(req.GetStorageId(), ids, req.GetReason())
	return &dnpb.ReportBadBlocksResponse{}, nil
}

// Conversions between the DataNode protocol's messages and blockmgmt's
// types.

func registration(r *dnpb.Registration) blockmgmt.Registration {
	return blockmgmt.Registration{
		UUID: r.GetDatanodeUuid(), IP: r.GetIpAddr(), Hostname: r.GetHostname(),
		XferPort: r.GetXferPort(), InfoPort: r.GetInfoPort(), IPCPort: r.GetIpcPort(),
		Storages: storageReports(r.GetStorages()),
	}
}

func storageReports(rs []*dnpb.StorageReport) []blockmgmt.StorageReport {
	out := make([]blockmgmt.StorageReport, len(rs))
	for i, r := range rs {
		out[i] = blockmgmt.StorageReport{
			ID: r.GetStorageId(), Type: storage.Type(r.GetStorageType()),
			Capacity: int64(r.GetCapacity()), Used: int64(r.GetDfsUsed()), Remaining: int64(r.GetRemaining()), Failed: r.GetFailed(),
		}
	}
	return out
}

func reportedReplicas(rs []*dnpb.Replica) []blockmgmt.ReportedReplica {
	out := make([]blockmgmt.ReportedReplica, len(rs))
	for i, r := range rs {
		out[i] = blockmgmt.ReportedReplica{ID: r.GetBlockId(), GenStamp: r.GetGenStamp(), NumBytes: int64(r.GetNumBytes()),
			Finalized: r.GetState() == dnpb.ReplicaState_FINALIZED, Writing: r.GetState() == dnpb.ReplicaState_RBW, DelHint: r.GetDelHint()}
	}
	return out
}

func replicaProto(b blockmgmt.BlockRef, withLength bool) *dnpb.Replica {
	r := &dnpb.Replica{BlockId: proto.Uint64(b.ID), GenStamp: proto.Uint64(b.GenStamp)}
	if withLength {
		r.NumBytes = proto.Uint64(uint64(b.NumBytes))
	}
	return r
}

func commandProtos(cmds []blockmgmt.Command) []*dnpb.Command {
	var out []*dnpb.Command
	for _, c := range cmds {
		out = append(out, commandProto(c))
	}
	return out
}

func commandProto(c blockmgmt.Command) *dnpb.Command {
	switch c.Kind {
	case blockmgmt.Transfer:
		t := &dnpb.TransferCommand{Block: replicaProto(c.Block, true)}
		for _, tg := range c.Targets {
			t.Targets = append(t.Targets, datanodeProto(tg.Node))
			t.TargetStorageTypes = append(t.TargetStorageTypes, uint32(tg.StorageType))
			t.TargetStorageIds = append(t.TargetStorageIds, tg.StorageID)
		}
		return &dnpb.Command{Command: &dnpb.Command_Transfer{Transfer: t}}
	case blockmgmt.Move:
		return &dnpb.Command{Command: &dnpb.Command_Move{Move: &dnpb.MoveCommand{
			Block: replicaProto(c.Block, true), TargetStorageType: proto.Uint32(uint32(c.TargetType)),
		}}}
	case blockmgmt.Invalidate:
		inv := &dnpb.InvalidateCommand{}
		for _, b := range c.Blocks {
			inv.Blocks = append(inv.Blocks, replicaProto(b, false))
		}
		return &dnpb.Command{Command: &dnpb.Command_Invalidate{Invalidate: inv}}
	case blockmgmt.Recover:
		return &dnpb.Command{Command: &dnpb.Command_Recover{Recover: &dnpb.RecoverCommand{
			Block: replicaProto(c.Block, false), NewGenStamp: proto.Uint64(c.NewGenStamp), NewLength: proto.Int64(c.NewLength),
			NewBlockId: newBlockID(c.NewBlockID),
		}}}
	}
	return &dnpb.Command{Command: &dnpb.Command_Reregister{Reregister: &dnpb.ReregisterCommand{}}}
}

// newBlockID is a RecoverCommand's new_block_id: unset unless id != 0.
func newBlockID(id uint64) *uint64 {
	if id == 0 {
		return nil
	}
	return proto.Uint64(id)
}

// datanodeProto is a DataNode as ClientProtocol reports it.
func datanodeProto(d blockmgmt.DatanodeInfo) *hdfspb.DatanodeInfoProto {
	st := adminStateProto(d.AdminState)
	rack := d.Rack
	if rack == "" {
		rack = topology.DefaultRack
	}
	return &hdfspb.DatanodeInfoProto{
		Id: &hdfspb.DatanodeIDProto{
			IpAddr: proto.String(d.IP), HostName: proto.String(d.Host), DatanodeUuid: proto.String(d.UUID),
			XferPort: proto.Uint32(d.XferPort), InfoPort: proto.Uint32(d.InfoPort), IpcPort: proto.Uint32(d.IPCPort),
		},
		Capacity: proto.Uint64(uint64(d.Capacity)), DfsUsed: proto.Uint64(uint64(d.Used)), Remaining: proto.Uint64(uint64(d.Remaining)),
		BlockPoolUsed: proto.Uint64(uint64(d.Used)), LastUpdate: proto.Uint64(uint64(d.LastHeartbeat.UnixMilli())),
		XceiverCount: proto.Uint32(uint32(d.Xceivers)), Location: proto.String(rack),
		AdminState: st.Enum(), NumBlocks: proto.Uint32(uint32(d.Blocks)),
		LastBlockReportTime: proto.Uint64(uint64(d.LastReport.UnixMilli())),
	}
}

func datanodeProtos(ds []blockmgmt.DatanodeInfo) []*hdfspb.DatanodeInfoProto {
	var out []*hdfspb.DatanodeInfoProto
	for _, d := range ds {
		out = append(out, datanodeProto(d))
	}
	return out
}

func reportType(t hdfspb.DatanodeReportTypeProto) blockmgmt.ReportType {
	switch t {
	case hdfspb.DatanodeReportTypeProto_LIVE:
		return blockmgmt.ReportLive
	case hdfspb.DatanodeReportTypeProto_DEAD:
		return blockmgmt.ReportDead
	case hdfspb.DatanodeReportTypeProto_DECOMMISSIONING:
		return blockmgmt.ReportDecommissioning
	case hdfspb.DatanodeReportTypeProto_ENTERING_MAINTENANCE:
		return blockmgmt.ReportEnteringMaintenance
	case hdfspb.DatanodeReportTypeProto_IN_MAINTENANCE:
		return blockmgmt.ReportInMaintenance
	}
	return blockmgmt.ReportAll
}

func adminStateProto(s blockmgmt.AdminState) hdfspb.DatanodeInfoProto_AdminState {
	switch s {
	case blockmgmt.DecommissionInProgress:
		return hdfspb.DatanodeInfoProto_DECOMMISSION_INPROGRESS
	case blockmgmt.Decommissioned:
		return hdfspb.DatanodeInfoProto_DECOMMISSIONED
	case blockmgmt.EnteringMaintenance:
		return hdfspb.DatanodeInfoProto_ENTERING_MAINTENANCE
	case blockmgmt.InMaintenance:
		return hdfspb.DatanodeInfoProto_IN_MAINTENANCE
	}
	return hdfspb.DatanodeInfoProto_NORMAL
}
