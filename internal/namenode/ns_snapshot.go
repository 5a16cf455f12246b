package namenode

import (
	"context"
	"errors"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/namenode/namespace"
	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// Snapshots (namespace/snapshot.go has the representation): the
// ClientProtocol operations with Hadoop's checks and messages, and the
// guard that keeps every modification away from .snapshot paths.
//
// Reads need nothing special: the namespace resolves <dir>/.snapshot and
// <dir>/.snapshot/<name>/... to read-only inodes, so getFileInfo,
// getListing, getContentSummary and getBlockLocations serve snapshots as
// they serve live paths. Every other method that names a path under
// .snapshot is refused by withSnapshotPaths before its handler runs.

// snapshotReadMethods are the ClientProtocol methods that may name paths
// inside snapshots; every other method naming one is refused.
var snapshotReadMethods = map[string]bool{
	"getFileInfo": true, "getFileLinkInfo": true, "getListing": true, "getBlockLocations": true,
	"getContentSummary": true, "getQuotaUsage": true, "getStoragePolicy": true, "checkAccess": true,
	"getPreferredBlockSize": true, "getXAttrs": true, "listXAttrs": true, "getAclStatus": true,
	"getSnapshotDiffReport": true, "getSnapshotDiffReportListing": true, "getSnapshottableDirListing": true,
	"getEZForPath": true, "getLinkTarget": true, "getLocatedFileInfo": true, "getBatchedListing": true,
}

// snapshotPathFields are the request fields that hold paths a
// modification would change.
var snapshotPathFields = []protoreflect.Name{"src", "dst", "path", "trg", "srcs", "snapshotRoot"}

// withSnapshotPaths wraps a protocol's methods so that a modification of
// a path inside a snapshot fails with SnapshotAccessControlException, and
// one that would create a ".snapshot" entry with Hadoop's reserved-name
// error.
func withSnapshotPaths(s *Namesystem, methods map[string]ipc.Method) map[string]ipc.Method {
	out := make(map[string]ipc.Method, len(methods))
	for name, m := range methods {
		if snapshotReadMethods[name] {
			out[name] = m
			continue
		}
		out[name] = m.Around(func(ctx context.Context, req proto.Message, next func(context.Context, proto.Message) (proto.Message, error)) (proto.Message, error) {
			if err := s.checkSnapshotWrite(req); err != nil {
				return nil, err
			}
			return next(ctx, req)
		})
	}
	return out
}

// checkSnapshotWrite checks the path fields of a modifying request.
func (s *Namesystem) checkSnapshotWrite(req proto.Message) error {
	m := req.ProtoReflect()
	fields := m.Descriptor().Fields()
	for _, name := range snapshotPathFields {
		fd := fields.ByName(name)
		if fd == nil || fd.Kind() != protoreflect.StringKind || !m.Has(fd) {
			continue
		}
		if fd.IsList() {
			l := m.Get(fd).List()
			for i := 0; i < l.Len(); i++ {
				if err := s.checkSnapshotWritePath(l.Get(i).String()); err != nil {
					return err
				}
			}
			continue
		}
		if err := s.checkSnapshotWritePath(m.Get(fd).String()); err != nil {
			return err
		}
	}
	return nil
}

func hasDotSnapshot(p string) bool {
	for _, c := range strings.Split(p, "/") {
		if c == namespace.DotSnapshot {
			return true
		}
	}
	return false
}

// checkSnapshotEdits refuses ops that would change a snapshot or create a
// ".snapshot" entry: the guard for requests that do not come through
// ClientProtocol (WebHDFS), run by mutateThen before any op applies.
// Lock held.
func (s *Namesystem) checkSnapshotEdits(ops []namespace.Edit) error {
	for _, op := range ops {
		p, in := s.tree.EditPathInSnapshot(op)
		switch {
		case in:
			return snapshotReadOnly()
		case p != "":
			return ipc.Errorf(ipc.ClassIllegalArgument, "\"%s\" is a reserved name.", namespace.DotSnapshot)
		}
	}
	return nil
}

func (s *Namesystem) checkSnapshotWritePath(p string) error {
	if !hasDotSnapshot(p) {
		return nil
	}
	s.mu.RLock()
	in, reserved := s.tree.WriteCheck(p)
	s.mu.RUnlock()
	switch {
	case in:
		return snapshotReadOnly()
	case reserved:
		return ipc.Errorf(ipc.ClassIllegalArgument, "\"%s\" is a reserved name.", namespace.DotSnapshot)
	}
	return nil
}

func snapshotReadOnly() error {
	return ipc.Errorf(namespace.ClassSnapshotAccessControl, "Modification on a read-only snapshot is disallowed")
}

func notSnapshottable(p string) error {
	return ipc.Errorf(namespace.ClassSnapshot, "Directory is not a snapshottable directory: %s", p)
}

// checkNoSnapshots refuses to delete or rename n when it, or a directory
// below it, is snapshottable with snapshots (Hadoop's checkSnapshot).
func (s *Namesystem) checkNoSnapshots(n *namespace.Inode) error {
	if d := s.tree.HasSnapshots(n); d != nil {
		p := d.Path()
		return ipc.Errorf(namespace.ClassSnapshot, "The directory %s cannot be deleted since %s is snapshottable and already has snapshots", p, p)
	}
	return nil
}

// checkNestedSnapshottable refuses to move sn, which is or holds a
// snapshottable directory, under dparent when dparent is or is below one:
// snapshottable directories are never nested. Hadoop's check
// (validateNestSnapshot) refuses only when the destination's
// snapshottable ancestor has snapshots; strata refuses either way, so the
// invariant holds (an ancestor without snapshots could take one later).
func (s *Namesystem) checkNestedSnapshottable(src string, sn, dparent *namespace.Inode) error {
	inside := false
	for _, d := range s.tree.SnapshotDirs() {
		if sn.IsAncestorOf(d) {
			inside = true
			break
		}
	}
	if !inside {
		return nil
	}
	for a := dparent; a != nil; a = a.Parent {
		if a.Snap() != nil {
			return ipc.Errorf(namespace.ClassSnapshot, "Unable to rename because %s has snapshottable descendant directories and %s is a descendant of a snapshottable directory, and HDFS does not support nested snapshottable directory.", src, dparent.Path())
		}
	}
	return nil
}

// snapshotDir resolves p to a live directory for a snapshot operation,
// checking traverse permission.
func (s *Namesystem) snapshotDir(pc namespace.Checker, p string) (*namespace.Inode, error) {
	r := s.tree.Resolve(p)
	if err := pc.Traverse(r); err != nil {
		return nil, err
	}
	if r.InSnapshot() {
		return nil, snapshotReadOnly()
	}
	n := r.Target()
	if n == nil {
		return nil, ipc.Errorf(ipc.ClassFileNotFound, "Directory does not exist: %s", p)
	}
	if !n.IsDir {
		return nil, ipc.Errorf("org.apache.hadoop.fs.PathIsNotDirectoryException", "`%s': Is not a directory", p)
	}
	return n, nil
}

// AllowSnapshot makes directory p snapshottable (superuser only); it is
// a no-op on a directory that already is.
func (s *Namesystem) AllowSnapshot(ctx context.Context, p string) error {
	if err := s.checkPath(p); err != nil {
		return err
	}
	pc := s.checker(ctx)
	if err := pc.Superuser("allowSnapshot"); err != nil {
		return err
	}
	return s.mutate(ctx, func() ([]namespace.Edit, error) {
		n, err := s.snapshotDir(pc, p)
		if err != nil {
			return nil, err
		}
		if n.Snap() != nil {
			return nil, nil
		}
		if d := s.tree.NestedSnapshottable(n); d != nil {
			rel := "subdirectory"
			if d.IsAncestorOf(n) {
				rel = "ancestor"
			}
			return nil, ipc.Errorf(namespace.ClassSnapshot, "Nested snapshottable directories not allowed: path=%s, the %s %s is already a snapshottable directory.", p, rel, d.Path())
		}
		return []namespace.Edit{namespace.AllowSnapshot(n.Path())}, nil
	})
}

// DisallowSnapshot makes directory p no longer snapshottable (superuser
// only); it fails while p has snapshots.
func (s *Namesystem) DisallowSnapshot(ctx context.Context, p string) error {
	if err := s.checkPath(p); err != nil {
		return err
	}
	pc := s.checker(ctx)
	if err := pc.Superuser("disallowSnapshot"); err != nil {
		return err
	}
	return s.mutate(ctx, func() ([]namespace.Edit, error) {
		n, err := s.snapshotDir(pc, p)
		if err != nil {
			return nil, err
		}
		if n.Snap() == nil {
			return nil, nil
		}
		if len(n.Snap().Snapshots) > 0 {
			return nil, ipc.Errorf(namespace.ClassSnapshot, "The directory %s has snapshot(s). Please redo the operation after removing all the snapshots.", p)
		}
		return []namespace.Edit{namespace.DisallowSnapshot(n.Path())}, nil
	})
}

// snapshottableDir resolves p to a snapshottable directory the caller
// owns.
func (s *Namesystem) snapshottableDir(pc namespace.Checker, p string) (*namespace.Inode, error) {
	n, err := s.snapshotDir(pc, p)
	if err != nil {
		return nil, err
	}
	if err := pc.Owner(n); err != nil {
		return nil, err
	}
	if n.Snap() == nil {
		return nil, notSnapshottable(p)
	}
	return n, nil
}

// CreateSnapshot takes a snapshot of p called name (Hadoop's default name
// when "") and returns its path. The caller must own p.
func (s *Namesystem) CreateSnapshot(ctx context.Context, p, name string) (string, error) {
	if err := s.checkPath(p); err != nil {
		return "", err
	}
	pc := s.checker(ctx)
	if name == "" {
		name = namespace.DefaultSnapshotName(s.now())
	}
	if err := namespace.CheckSnapshotName(name, p, s.cfg.maxComponentLength); err != nil {
		return "", err
	}
	var out string
	err := s.mutate(ctx, func() ([]namespace.Edit, error) {
		n, err := s.snapshottableDir(pc, p)
		if err != nil {
			return nil, err
		}
		if k := len(n.Snap().Snapshots); k >= namespace.SnapshotLimit {
			return nil, ipc.Errorf(namespace.ClassSnapshot, "Failed to add snapshot: there are already %d snapshot(s) and the snapshot quota is %d", k, namespace.SnapshotLimit)
		}
		if n.Snapshot(name) != nil {
			return nil, ipc.Errorf(namespace.ClassSnapshot, "Failed to add snapshot: there is already a snapshot with the same name \"%s\".", name)
		}
		if err := s.checkSnapshotSize(n, name); err != nil {
			return nil, err
		}
		id := s.tree.NextSnapshotID()
		if id > namespace.MaxSnapshotID {
			return nil, ipc.Errorf(namespace.ClassSnapshot, "Failed to create the snapshot. The FileSystem has run out of snapshot IDs and ID rollover is not supported.")
		}
		out = namespace.SnapshotPath(n.Path(), name)
		return []namespace.Edit{namespace.CreateSnapshot(n.Path(), name, id, s.nowMillis())}, nil
	})
	return out, err
}

// Snapshot bounds: the defaults of their keys, for a zero nsConfig.
const (
	defaultSnapshotDiffLimit      = 1000
	defaultSnapshotMaxCopied      = 1000000
	defaultSnapshotMaxTotalInodes = 10000000
	defaultMaxReplyBytes          = 64 << 20
)

func orDefault(v, def int) int {
	if v <= 0 {
		return def
	}
	return v
}

// checkSnapshotSize refuses a snapshot of n that would copy more inodes
// than strata.namenode.snapshot.max-copied-inodes, or take all snapshots
// past strata.namenode.snapshot.max-total-inodes. Hadoop has no such
// limit (its snapshots record only later changes); strata's copy the
// subtree under the write lock, so the size is checked, without walking
// more than the limit, before anything is copied. Lock held.
func (s *Namesystem) checkSnapshotSize(n *namespace.Inode, name string) error {
	maxCopied := orDefault(s.cfg.snapshotMaxCopied, defaultSnapshotMaxCopied)
	maxTotal := orDefault(s.cfg.snapshotMaxTotalInodes, defaultSnapshotMaxTotalInodes)
	limit := min(maxCopied, max(0, maxTotal-s.tree.SnapshotInodes()))
	if k := namespace.SubtreeInodes(n, limit); k > limit {
		if limit < maxCopied {
			return ipc.Errorf(namespace.ClassSnapshot, "Failed to add snapshot %s of %s: snapshots would hold more than %d inodes (strata.namenode.snapshot.max-total-inodes); they hold %d", name, n.Path(), maxTotal, s.tree.SnapshotInodes())
		}
		return ipc.Errorf(namespace.ClassSnapshot, "Failed to add snapshot %s of %s: the directory has more than %d inodes to copy (strata.namenode.snapshot.max-copied-inodes)", name, n.Path(), maxCopied)
	}
	return nil
}

// DeleteSnapshot deletes snapshot name of p; blocks only it held are
// freed. The caller must own p.
func (s *Namesystem) DeleteSnapshot(ctx context.Context, p, name string) error {
	if err := s.checkPath(p); err != nil {
		return err
	}
	pc := s.checker(ctx)
	return s.mutate(ctx, func() ([]namespace.Edit, error) {
		n, err := s.snapshottableDir(pc, p)
		if err != nil {
			return nil, err
		}
		if n.Snapshot(name) == nil {
			return nil, ipc.Errorf(namespace.ClassSnapshot, "Cannot delete snapshot %s from path %s: the snapshot does not exist.", name, p)
		}
		return []namespace.Edit{namespace.DeleteSnapshot(n.Path(), name, s.nowMillis())}, nil
	})
}

// RenameSnapshot renames snapshot oldName of p to newName. The caller
// must own p.
func (s *Namesystem) RenameSnapshot(ctx context.Context, p, oldName, newName string) error {
	if err := s.checkPath(p); err != nil {
		return err
	}
	pc := s.checker(ctx)
	if err := namespace.CheckSnapshotName(newName, p, s.cfg.maxComponentLength); err != nil {
		return err
	}
	return s.mutate(ctx, func() ([]namespace.Edit, error) {
		n, err := s.snapshottableDir(pc, p)
		if err != nil {
			return nil, err
		}
		if n.Snapshot(oldName) == nil {
			return nil, ipc.Errorf(namespace.ClassSnapshot, "The snapshot %s does not exist for directory %s", oldName, p)
		}
		if oldName == newName {
			return nil, nil
		}
		if n.Snapshot(newName) != nil {
			return nil, ipc.Errorf(namespace.ClassSnapshot, "The snapshot %s already exists for directory %s", newName, p)
		}
		return []namespace.Edit{namespace.RenameSnapshot(n.Path(), oldName, newName, s.nowMillis())}, nil
	})
}

// SnapshottableDir is one entry of getSnapshottableDirListing.
type SnapshottableDir struct {
	Status     FileStatus
	Snapshots  int
	Quota      int
	ParentPath string // "" for the root
}

// SnapshottableDirs lists the snapshottable directories the caller owns
// (every one for the superuser), in path order.
func (s *Namesystem) SnapshottableDirs(ctx context.Context) []SnapshottableDir {
	pc := s.checker(ctx)
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []SnapshottableDir
	for _, d := range s.tree.SnapshotDirs() {
		if pc.Enabled && !pc.P.Superuser && d.Owner != pc.P.User {
			continue
		}
		e := SnapshottableDir{Status: s.status(d), Snapshots: len(d.Snap().Snapshots), Quota: namespace.SnapshotLimit}
		if d.Parent != nil {
			e.ParentPath = d.Parent.Path()
		}
		out = append(out, e)
	}
	return out
}

// SnapshotDiffReport is getSnapshotDiffReport's answer.
type SnapshotDiffReport struct {
	Root, From, To string
	Entries        []namespace.DiffEntry
}

// SnapshotDiff compares snapshot from of directory p with snapshot to
// ("" or "." for the current tree). The caller needs read access to p.
func (s *Namesystem) SnapshotDiff(ctx context.Context, p, from, to string) (*SnapshotDiffReport, error) {
	if err := s.checkPath(p); err != nil {
		return nil, err
	}
	pc := s.checker(ctx)
	s.mu.RLock()
	defer s.mu.RUnlock()
	n, err := s.snapshotDir(pc, p)
	if err != nil {
		return nil, err
	}
	if n.Snap() == nil {
		return nil, notSnapshottable(p)
	}
	if err := pc.Check(n, namespace.AccessRead); err != nil {
		return nil, err
	}
	es, err := namespace.SnapshotDiff(n, from, to)
	if errors.Is(err, namespace.ErrNoSnapshot) {
		missing := from
		if from == "" || from == "." || n.Snapshot(from) != nil {
			missing = to
		}
		return nil, ipc.Errorf(namespace.ClassSnapshot, "Cannot find the snapshot of directory %s with name %s", p, missing)
	}
	if err != nil {
		return nil, err
	}
	return &SnapshotDiffReport{Root: p, From: from, To: to, Entries: es}, nil
}

// The ClientProtocol handlers. createSnapshot, deleteSnapshot and
// renameSnapshot are @AtMostOnce in Hadoop: a retry gets the first
// answer from the retry cache.

func (c *clientProtocol) allowSnapshot(ctx context.Context, req *hdfspb.AllowSnapshotRequestProto) (*hdfspb.AllowSnapshotResponseProto, error) {
	return &hdfspb.AllowSnapshotResponseProto{}, c.ns.AllowSnapshot(ctx, req.GetSnapshotRoot())
}

func (c *clientProtocol) disallowSnapshot(ctx context.Context, req *hdfspb.DisallowSnapshotRequestProto) (*hdfspb.DisallowSnapshotResponseProto, error) {
	return &hdfspb.DisallowSnapshotResponseProto{}, c.ns.DisallowSnapshot(ctx, req.GetSnapshotRoot())
}

func (c *clientProtocol) createSnapshot(ctx context.Context, req *hdfspb.CreateSnapshotRequestProto) (*hdfspb.CreateSnapshotResponseProto, error) {
	p, err := atMostOnce(ctx, c.ns, func(ctx context.Context) (string, error) {
		return c.ns.CreateSnapshot(ctx, req.GetSnapshotRoot(), req.GetSnapshotName())
	}, nil, func(payload any) (string, error) {
		if p, ok := payload.(string); ok {
			return p, nil
		}
		return "", retryAnswerMissing("createSnapshot")
	})
	if err != nil {
		return nil, err
	}
	return &hdfspb.CreateSnapshotResponseProto{SnapshotPath: proto.String(p)}, nil
}

func (c *clientProtocol) deleteSnapshot(ctx context.Context, req *hdfspb.DeleteSnapshotRequestProto) (*hdfspb.DeleteSnapshotResponseProto, error) {
	_, err := atMostOnce(ctx, c.ns, func(ctx context.Context) (bool, error) {
		return true, c.ns.DeleteSnapshot(ctx, req.GetSnapshotRoot(), req.GetSnapshotName())
	}, nil, cachedTrue)
	return &hdfspb.DeleteSnapshotResponseProto{}, err
}

func (c *clientProtocol) renameSnapshot(ctx context.Context, req *hdfspb.RenameSnapshotRequestProto) (*hdfspb.RenameSnapshotResponseProto, error) {
	_, err := atMostOnce(ctx, c.ns, func(ctx context.Context) (bool, error) {
		return true, c.ns.RenameSnapshot(ctx, req.GetSnapshotRoot(), req.GetSnapshotOldName(), req.GetSnapshotNewName())
	}, nil, cachedTrue)
	return &hdfspb.RenameSnapshotResponseProto{}, err
}

func (c *clientProtocol) getSnapshottableDirListing(ctx context.Context, _ *hdfspb.GetSnapshottableDirListingRequestProto) (*hdfspb.GetSnapshottableDirListingResponseProto, error) {
	dirs := c.ns.SnapshottableDirs(ctx)
	if len(dirs) == 0 {
		// Hadoop answers null: no listing at all.
		return &hdfspb.GetSnapshottableDirListingResponseProto{}, nil
	}
	l := &hdfspb.SnapshottableDirectoryListingProto{}
	for i := range dirs {
		d := &dirs[i]
		st := fileStatusProto(&d.Status, true)
		l.SnapshottableDirListing = append(l.SnapshottableDirListing, &hdfspb.SnapshottableDirectoryStatusProto{
			DirStatus: st, SnapshotQuota: proto.Uint32(uint32(d.Quota)), SnapshotNumber: proto.Uint32(uint32(d.Snapshots)),
			ParentFullpath: []byte(d.ParentPath),
		})
	}
	return &hdfspb.GetSnapshottableDirListingResponseProto{SnapshottableDirList: l}, nil
}

func (c *clientProtocol) getSnapshotDiffReport(ctx context.Context, req *hdfspb.GetSnapshotDiffReportRequestProto) (*hdfspb.GetSnapshotDiffReportResponseProto, error) {
	r, err := c.ns.SnapshotDiff(ctx, req.GetSnapshotRoot(), req.GetFromSnapshot(), req.GetToSnapshot())
	if err != nil {
		return nil, err
	}
	rep := &hdfspb.SnapshotDiffReportProto{SnapshotRoot: proto.String(r.Root), FromSnapshot: proto.String(r.From), ToSnapshot: proto.String(r.To)}
	for _, e := range r.Entries {
		pe := &hdfspb.SnapshotDiffReportEntryProto{Fullpath: []byte(e.Path), ModificationLabel: proto.String(e.Type)}
		if e.Type == "R" {
			pe.TargetPath = []byte(e.Target)
		}
		rep.DiffReportEntries = append(rep.DiffReportEntries, pe)
	}
	resp := &hdfspb.GetSnapshotDiffReportResponseProto{DiffReport: rep}
	// The whole report is one reply: one larger than a client may read
	// is refused (getSnapshotDiffReportListing pages it).
	if size, most := proto.Size(resp), orDefault(c.ns.cfg.maxReplyBytes, defaultMaxReplyBytes); size > most {
		return nil, ipc.Errorf(ipc.ClassIOException, "The snapshot diff report of %s has %d entries (%d bytes), more than one reply may carry (ipc.maximum.data.length %d); use getSnapshotDiffReportListing", r.Root, len(r.Entries), size, most)
	}
	return resp, nil
}

// snapshotBlockLocations fills lbs for n, a file in a snapshot: its
// blocks as far as its length when the snapshot was taken. A block the
// live file has grown since (append) is reported with the snapshot's
// share of it, so a reader stops at the old end. Lock held.
func (s *Namesystem) snapshotBlockLocations(n *namespace.Inode, lbs *LocatedBlocks, offset, length int64, clientIP string) {
	fileLen := n.Length()
	var pos int64
	for _, b := range n.Blocks() {
		if pos >= fileLen && (pos > 0 || fileLen > 0) {
			break
		}
		size := min(b.NumBytes, fileLen-pos)
		end := pos + size
		if end > offset && pos < offset+length || size == 0 && pos >= offset && pos <= offset+length {
			locs, corrupt := s.bm.Locations(b, clientIP)
			lb := locate(b, pos, locs, corrupt)
			lb.Block.NumBytes = size
			lbs.Blocks = append(lbs.Blocks, *lb)
		}
		pos = end
	}
}

// copyOnTruncateOps truncates closed file n inside block i, which a
// snapshot holds, to keep bytes of it (Hadoop's copy-on-truncate): block
// i is replaced by a new block of keep bytes that the DataNodes holding
// block i copy from it, under a new generation stamp, while the file is
// open for client; block i stays, for the snapshot, as it is. The file
// closes when the copies are reported. Lock held.
func (s *Namesystem) copyOnTruncateOps(ctx context.Context, n *namespace.Inode, client string, i int, keep, now int64) ([]namespace.Edit, func(), error) {
	src := n.Blocks()[i]
	if len(blockmgmt.GoodReplicas(src)) == 0 {
		return nil, nil, ipc.Errorf(ipc.ClassIOException, "Cannot truncate %s inside %s: no live replica to copy the kept part from", n.Path(), src)
	}
	p := n.Path()
	bs := namespace.BlockInfos(n.Blocks()[:i+1])
	bs[i] = namespace.BlockInfo{ID: s.tree.Blocks.LastID() + 1, GenStamp: s.tree.Blocks.LastGenStamp() + 1, NumBytes: keep}
	ops := []namespace.Edit{
		namespace.ReopenFile(p, client, clientMachine(ctx), now),
		// Not committed until the copies are reported, as Hadoop's block
		// under recovery: a restart's safe mode does not wait for it.
		namespace.UpdateBlocks(p, bs, false),
		namespace.CopyOnTruncate(p, namespace.BlockInfo{ID: src.ID, GenStamp: src.GenStamp, NumBytes: src.NumBytes}),
	}
	then := func() {
		s.leases.Add(client, p, s.now())
		s.bm.StartCopyRecovery(n.Blocks()[len(n.Blocks())-1], src)
	}
	return ops, then, nil
}

// resumeCopyOnTruncate starts the copies of an unfinished copy-on-truncate
// again (after a restart, or when its holder's lease expired): the copy
// keeps its block id and generation stamp; a DataNode that finished it
// before does nothing, one that had not starts over. Lock held.
func (s *Namesystem) resumeCopyOnTruncate(n *namespace.Inode) ([]namespace.Edit, func(), bool) {
	src := s.tree.Blocks.Get(n.UC().CopySource.ID)
	last := n.Blocks()[len(n.Blocks())-1]
	if src == nil {
		return nil, nil, false
	}
	// The edit only repeats what the tree has: mutateThen runs then
	// after a logged edit.
	op := namespace.CopyOnTruncate(n.Path(), *n.UC().CopySource)
	return []namespace.Edit{op}, func() { s.bm.StartCopyRecovery(last, src) }, false
}

// getSnapshotDiffReportListing answers Hadoop 3 clients' form of the diff
// (DistributedFileSystem builds the report from it with its
// SnapshotDiffReportGenerator): modified inodes, created children and
// deleted children, each with the directory they changed; a rename is a
// deleted entry marked as a reference with its target path.
//
// Each reply carries at most dfs.snapshotdiff-report.limit entries; its
// cursor names the next entry (its path, and its index in the report's
// order), or is ("", -1) when nothing is left, which ends the client's
// loop. Every page compares the snapshots again (the diff is not kept
// between calls; its cost is bounded by the snapshot size limits), so a
// page after a change of the tree reflects the change, as a Hadoop page
// after a change does.
func (c *clientProtocol) getSnapshotDiffReportListing(ctx context.Context, req *hdfspb.GetSnapshotDiffReportListingRequestProto) (*hdfspb.GetSnapshotDiffReportListingResponseProto, error) {
	r, err := c.ns.SnapshotDiff(ctx, req.GetSnapshotRoot(), req.GetFromSnapshot(), req.GetToSnapshot())
	if err != nil {
		return nil, err
	}
	start := 0
	if cur := req.GetCursor(); cur != nil && cur.GetIndex() >= 0 {
		start = int(cur.GetIndex())
		if start > len(r.Entries) || start < len(r.Entries) && r.Entries[start].Path != string(cur.GetStartPath()) {
			return nil, ipc.Errorf(ipc.ClassIOException, "The snapshot diff of %s changed while it was read: no entry %d at %q; read it again", r.Root, start, cur.GetStartPath())
		}
	}
	end := min(len(r.Entries), start+orDefault(c.ns.cfg.snapshotDiffLimit, defaultSnapshotDiffLimit))
	l := &hdfspb.SnapshotDiffReportListingProto{
		IsFromEarlier: proto.Bool(true),
		Cursor:        &hdfspb.SnapshotDiffReportCursorProto{StartPath: []byte{}, Index: proto.Int32(-1)},
	}
	if end < len(r.Entries) {
		l.Cursor = &hdfspb.SnapshotDiffReportCursorProto{StartPath: []byte(r.Entries[end].Path), Index: proto.Int32(int32(end))}
	}
	for _, e := range r.Entries[start:end] {
		pe := &hdfspb.SnapshotDiffReportListingEntryProto{
			Fullpath: []byte(e.Path), DirId: proto.Uint64(e.Dir), FileId: proto.Uint64(e.ID), IsReference: proto.Bool(false),
		}
		switch e.Type {
		case "M":
			pe.IsReference = proto.Bool(e.IsDir) // its children's changes follow
			l.ModifiedEntries = append(l.ModifiedEntries, pe)
		case "+":
			l.CreatedEntries = append(l.CreatedEntries, pe)
		case "-":
			l.DeletedEntries = append(l.DeletedEntries, pe)
		case "R":
			pe.IsReference = proto.Bool(true)
			pe.TargetPath = []byte(e.Target)
			l.DeletedEntries = append(l.DeletedEntries, pe)
		}
	}
	return &hdfspb.GetSnapshotDiffReportListingResponseProto{DiffReport: l}, nil
}
