package hdfs

import (
	"context"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// Snapshots, as Hadoop's DistributedFileSystem has them. A snapshot of
// directory d called s is read at d/.snapshot/s with the ordinary read
// calls (Stat, ReadDir, Open).

// AllowSnapshot makes directory p snapshottable (superuser only).
func (c *Client) AllowSnapshot(ctx context.Context, p string) error {
	var resp hdfspb.AllowSnapshotResponseProto
	return pathErr("allowSnapshot", p, c.call(ctx, "allowSnapshot", &hdfspb.AllowSnapshotRequestProto{SnapshotRoot: proto.String(p)}, &resp))
}

// DisallowSnapshot makes directory p, which must have no snapshots, no
// longer snapshottable (superuser only).
func (c *Client) DisallowSnapshot(ctx context.Context, p string) error {
	var resp hdfspb.DisallowSnapshotResponseProto
	return pathErr("disallowSnapshot", p, c.call(ctx, "disallowSnapshot", &hdfspb.DisallowSnapshotRequestProto{SnapshotRoot: proto.String(p)}, &resp))
}

// CreateSnapshot takes a snapshot of p called name ("" for the NameNode's
// default, "s" + yyyyMMdd-HHmmss.SSS) and returns its path.
func (c *Client) CreateSnapshot(ctx context.Context, p, name string) (string, error) {
	req := &hdfspb.CreateSnapshotRequestProto{SnapshotRoot: proto.String(p)}
	if name != "" {
		req.SnapshotName = proto.String(name)
	}
	var resp hdfspb.CreateSnapshotResponseProto
	if err := c.call(ctx, "createSnapshot", req, &resp); err != nil {
		return "", pathErr("createSnapshot", p, err)
	}
	return resp.GetSnapshotPath(), nil
}

// DeleteSnapshot deletes snapshot name of p.
func (c *Client) DeleteSnapshot(ctx context.Context, p, name string) error {
	var resp hdfspb.DeleteSnapshotResponseProto
	req := &hdfspb.DeleteSnapshotRequestProto{SnapshotRoot: proto.String(p), SnapshotName: proto.String(name)}
	return pathErr("deleteSnapshot", p, c.call(ctx, "deleteSnapshot", req, &resp))
}

// RenameSnapshot renames snapshot oldName of p to newName.
func (c *Client) RenameSnapshot(ctx context.Context, p, oldName, newName string) error {
	var resp hdfspb.RenameSnapshotResponseProto
	req := &hdfspb.RenameSnapshotRequestProto{SnapshotRoot: proto.String(p), SnapshotOldName: proto.String(oldName), SnapshotNewName: proto.String(newName)}
	return pathErr("renameSnapshot", p, c.call(ctx, "renameSnapshot", req, &resp))
}

// SnapshottableDir is one snapshottable directory (Hadoop's
// SnapshottableDirectoryStatus).
type SnapshottableDir struct {
	Path         string
	Owner, Group string
	Mode         uint16
	Mtime        int64 // ms since the epoch
	Snapshots    int
	Quota        int
}

// SnapshottableDirs lists the snapshottable directories the caller owns
// (all of them for the superuser).
func (c *Client) SnapshottableDirs(ctx context.Context) ([]SnapshottableDir, error) {
	var resp hdfspb.GetSnapshottableDirListingResponseProto
	if err := c.call(ctx, "getSnapshottableDirListing", &hdfspb.GetSnapshottableDirListingRequestProto{}, &resp); err != nil {
		return nil, wrapErr(err)
	}
	var out []SnapshottableDir
	for _, d := range resp.GetSnapshottableDirList().GetSnapshottableDirListing() {
		st := d.GetDirStatus()
		name := string(st.GetPath())
		parent := string(d.GetParentFullpath())
		p := joinPath(parent, name)
		if parent == "" {
			p = "/"
		}
		out = append(out, SnapshottableDir{
			Path: p, Owner: st.GetOwner(), Group: st.GetGroup(), Mode: uint16(st.GetPermission().GetPerm()),
			Mtime: int64(st.GetModificationTime()), Snapshots: int(d.GetSnapshotNumber()), Quota: int(d.GetSnapshotQuota()),
		})
	}
	return out, nil
}

// SnapshotDiffEntry is one entry of a snapshot diff report: Type is "M"
// (modified), "+" (created), "-" (deleted) or "R" (renamed to Target);
// paths are relative to the snapshottable directory ("" for itself).
type SnapshotDiffEntry struct {
	Type, Path, Target string
}

// SnapshotDiff reports the differences under directory p from snapshot
// from to snapshot to ("" for the current tree).
func (c *Client) SnapshotDiff(ctx context.Context, p, from, to string) ([]SnapshotDiffEntry, error) {
	var resp hdfspb.GetSnapshotDiffReportResponseProto
	req := &hdfspb.GetSnapshotDiffReportRequestProto{SnapshotRoot: proto.String(p), FromSnapshot: proto.String(from), ToSnapshot: proto.String(to)}
	if err := c.call(ctx, "getSnapshotDiffReport", req, &resp); err != nil {
		return nil, pathErr("snapshotDiff", p, err)
	}
	var out []SnapshotDiffEntry
	for _, e := range resp.GetDiffReport().GetDiffReportEntries() {
		out = append(out, SnapshotDiffEntry{Type: e.GetModificationLabel(), Path: string(e.GetFullpath()), Target: string(e.GetTargetPath())})
	}
	return out, nil
}
