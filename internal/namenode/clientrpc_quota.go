package namenode

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/storage"
)

// typeQuotaInfos is a QuotaUsage's per-type part as Hadoop's PBHelper
// sends it: every type supporting quota, when any type quota is set or any
// type usage is known. Unset quotas travel as -1 in a uint64.
func typeQuotaInfos(qu QuotaUsage) *hdfspb.StorageTypeQuotaInfosProto {
	any := false
	for _, t := range namespace.QuotaTypes {
		any = any || qu.TypeQuota[t] > 0 || qu.TypeConsumed[t] > 0
	}
	if !any {
		return nil
	}
	out := &hdfspb.StorageTypeQuotaInfosProto{}
	for _, t := range namespace.QuotaTypes {
		out.TypeQuotaInfo = append(out.TypeQuotaInfo, &hdfspb.StorageTypeQuotaInfoProto{
			Type: hdfspb.StorageTypeProto(t).Enum(), Quota: proto.Uint64(uint64(qu.TypeQuota[t])), Consumed: proto.Uint64(uint64(qu.TypeConsumed[t])),
		})
	}
	return out
}

func (c *clientProtocol) setQuota(ctx context.Context, req *hdfspb.SetQuotaRequestProto) (*hdfspb.SetQuotaResponseProto, error) {
	var typ storage.Type
	if req.StorageType != nil {
		typ = storage.Type(req.GetStorageType())
	}
	return &hdfspb.SetQuotaResponseProto{}, c.ns.SetQuota(ctx, req.GetPath(), int64(req.GetNamespaceQuota()), int64(req.GetStoragespaceQuota()), typ)
}

// concat is @AtMostOnce, as Hadoop's: a retry after the sources are gone
// gets the first success.
func (c *clientProtocol) concat(ctx context.Context, req *hdfspb.ConcatRequestProto) (*hdfspb.ConcatResponseProto, error) {
	_, err := atMostOnce(ctx, c.ns, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, c.ns.Concat(ctx, req.GetTrg(), req.GetSrcs())
	}, nil, func(any) (struct{}, error) { return struct{}{}, nil })
	return &hdfspb.ConcatResponseProto{}, err
}
