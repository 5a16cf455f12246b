package hdfs

import (
	"context"
	"math"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/proto/hdfspb"
	"github.com/stratafs/strata/internal/storage"
)

// Special quota values of SetQuota (Hadoop's HdfsConstants).
const (
	QuotaDontSet int64 = math.MaxInt64 // leave the quota as it is
	QuotaReset   int64 = -1            // clear the quota
)

// SetQuota sets directory p's namespace quota (files and directories,
// itself included) and space quota (bytes × replication), as Hadoop's
// ClientProtocol.setQuota; QuotaDontSet leaves one, QuotaReset clears it.
// Only the superuser may.
func (c *Client) SetQuota(ctx context.Context, p string, ns, space int64) error {
	req := &hdfspb.SetQuotaRequestProto{Path: proto.String(p), NamespaceQuota: proto.Uint64(uint64(ns)), StoragespaceQuota: proto.Uint64(uint64(space))}
	var resp hdfspb.SetQuotaResponseProto
	return pathErr("setQuota", p, c.call(ctx, "setQuota", req, &resp))
}

// SetQuotaByStorageType sets directory p's space quota on storage type t
// (a name such as "SSD"); QuotaReset clears it.
func (c *Client) SetQuotaByStorageType(ctx context.Context, p, t string, space int64) error {
	st, err := storage.ParseType(t)
	if err != nil {
		return pathErr("setQuota", p, err)
	}
	req := &hdfspb.SetQuotaRequestProto{
		Path: proto.String(p), NamespaceQuota: proto.Uint64(uint64(QuotaDontSet)), StoragespaceQuota: proto.Uint64(uint64(space)),
		StorageType: hdfspb.StorageTypeProto(st).Enum(),
	}
	var resp hdfspb.SetQuotaResponseProto
	return pathErr("setQuota", p, c.call(ctx, "setQuota", req, &resp))
}

// QuotaUsage implements fs.QuotaUsager (Hadoop's getQuotaUsage).
func (c *Client) QuotaUsage(ctx context.Context, p string) (fs.QuotaUsage, error) {
	var resp hdfspb.GetQuotaUsageResponseProto
	if err := c.call(ctx, "getQuotaUsage", &hdfspb.GetQuotaUsageRequestProto{Path: proto.String(p)}, &resp); err != nil {
		return fs.QuotaUsage{}, pathErr("count", p, err)
	}
	u := resp.GetUsage()
	qu := fs.QuotaUsage{
		FileAndDirectoryCount: int64(u.GetFileAndDirectoryCount()), Quota: int64(u.GetQuota()),
		SpaceConsumed: int64(u.GetSpaceConsumed()), SpaceQuota: int64(u.GetSpaceQuota()),
		TypeQuota: map[string]int64{}, TypeConsumed: map[string]int64{},
	}
	for _, ti := range u.GetTypeQuotaInfos().GetTypeQuotaInfo() {
		name := storage.Type(ti.GetType()).String()
		if q := int64(ti.GetQuota()); q >= 0 {
			qu.TypeQuota[name] = q
		}
		qu.TypeConsumed[name] = int64(ti.GetConsumed())
	}
	return qu, nil
}

// TrashInterval implements fs.TrashIntervaler: the NameNode's
// fs.trash.interval from its server defaults.
func (c *Client) TrashInterval(ctx context.Context) (time.Duration, error) {
	d, err := c.serverDefaults(ctx)
	if err != nil {
		return 0, err
	}
	return time.Duration(d.GetTrashInterval()) * time.Minute, nil
}
