package fs

import (
	"context"
	"time"
)

// QuotaUsage is a directory's quotas and what its subtree uses against
// them (Hadoop's QuotaUsage). Quotas are -1 when unset. TypeQuota and
// TypeConsumed are by storage type name (DISK, SSD, ...); a type missing
// from TypeQuota has no quota.
type QuotaUsage struct {
	FileAndDirectoryCount int64
	Quota                 int64
	SpaceConsumed         int64
	SpaceQuota            int64
	TypeQuota             map[string]int64
	TypeConsumed          map[string]int64
}

// QuotaUsager reports quota usage (Hadoop's FileSystem.getQuotaUsage).
type QuotaUsager interface {
	QuotaUsage(ctx context.Context, path string) (QuotaUsage, error)
}

// TrashIntervaler reports the trash interval the file system's server
// asks clients to use (Hadoop's FsServerDefaults.getTrashInterval); 0
// when the server sets none.
type TrashIntervaler interface {
	TrashInterval(ctx context.Context) (time.Duration, error)
}
