package namenode

import (
	"context"
	"net"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/dnpb"
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

// datanodeOnly refuses DataNode calls from users other than the
// superuser: DataNodes run as the same user as the NameNode.
func (p *datanodeProtocol) datanodeOnly(ctx context.Context) error {
	return p.ns.checker(ctx).superuser("DataNode protocol")
}

func (p *datanodeProtocol) register(ctx context.Context, req *dnpb.RegisterRequest) (*dnpb.RegisterResponse, error) {
	if err := p.datanodeOnly(ctx); err != nil {
		return nil, err
	}
	if err := p.ns.RegisterDatanode(req.GetRegistration(), remoteIP(ctx)); err != nil {
		return nil, err
	}
	v := p.nn.edit.Version()
	return &dnpb.RegisterResponse{
		ClusterId: proto.String(v.ClusterID), BlockPoolId: proto.String(v.BlockPoolID), NamespaceId: proto.Uint32(v.NamespaceID),
		HeartbeatIntervalMs: proto.Uint32(uint32(p.nn.cfg.HeartbeatInterval.Milliseconds())),
	}, nil
}

func (p *datanodeProtocol) heartbeat(ctx context.Context, req *dnpb.HeartbeatRequest) (*dnpb.HeartbeatResponse, error) {
	if err := p.datanodeOnly(ctx); err != nil {
		return nil, err
	}
	return &dnpb.HeartbeatResponse{Commands: p.ns.Heartbeat(req)}, nil
}

func (p *datanodeProtocol) blockReport(ctx context.Context, req *dnpb.BlockReportRequest) (*dnpb.BlockReportResponse, error) {
	if err := p.datanodeOnly(ctx); err != nil {
		return nil, err
	}
	cmds, err := p.ns.BlockReport(req)
	return &dnpb.BlockReportResponse{Commands: cmds}, err
}

func (p *datanodeProtocol) receivedDeleted(ctx context.Context, req *dnpb.ReceivedDeletedRequest) (*dnpb.ReceivedDeletedResponse, error) {
	if err := p.datanodeOnly(ctx); err != nil {
		return nil, err
	}
	return &dnpb.ReceivedDeletedResponse{}, p.ns.ReceivedDeleted(req)
}

func (p *datanodeProtocol) reportBadBlocks(ctx context.Context, req *dnpb.ReportBadBlocksRequest) (*dnpb.ReportBadBlocksResponse, error) {
	if err := p.datanodeOnly(ctx); err != nil {
		return nil, err
	}
	p.ns.DatanodeReportBadBlocks(req)
	return &dnpb.ReportBadBlocksResponse{}, nil
}
