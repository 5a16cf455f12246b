package namespace

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/proto/namenodepb"
)

// Snapshots, as HDFS has them: a snapshottable directory's snapshots are
// read-only images of its subtree at the moment each was taken, reached
// at <dir>/.snapshot/<name>/...
//
// Representation: createSnapshot copies the metadata of the whole subtree
// (every inode below the directory; Hadoop instead keeps per-inode diff
// lists recording only what changed after a snapshot). The copies share
// the live files' blockmgmt.Block objects; they are not in the tree's id
// index and nothing but snapshot creation and deletion changes them. The
// memory cost is one Inode (about 200 bytes plus its name and a slice of
// block pointers) per inode of the subtree per snapshot, whether or not it
// changes afterwards, against Hadoop's cost proportional to the changes.
// Creating a snapshot is O(subtree) under the namespace lock.
//
// Blocks: a block stays in the BlockMap while a live file or any snapshot
// copy holds it. snaps.refs lists, for every block some copy holds, the
// copies holding it, oldest snapshot first. A block's File is the live
// file holding it if there is one, else the oldest copy (the same after
// edits and after an image); block management keeps it at the most
// replicas any holder asks for (Block.HeldReplication). A block a copy
// takes over is committed. The source of an unfinished copy-on-truncate
// stays while the copy runs, even when its last snapshot is deleted
// (snaps.copies). When the last holder goes the block is dropped and its
// replicas are deleted.
//
// Invariants:
//   - Snapshottable directories are never nested (Hadoop's default): no
//     ancestor or descendant of one is snapshottable.
//   - A snapshottable directory's Snapshots are sorted by name; names are
//     unique in the directory; snapshot ids are unique and only grow.
//   - An inode with frozen set is never changed by an edit: every edit
//     path resolves through live inodes only (the NameNode refuses an
//     edit naming a path under .snapshot before applying it, see
//     EditPathInSnapshot, whoever asked for it).
//   - A copied file's frozenLen never exceeds the sum of its blocks'
//     lengths: blocks shared with the live file only grow (append) or
//     keep their length; a live truncate inside a block a snapshot holds
//     makes a new block, copied by the DataNodes from the held one
//     (copy-on-truncate, UnderConstruction.CopySource), and never cuts
//     the held block.

// The exceptions of snapshot operations, as Hadoop names them.
const (
	ClassSnapshot              = "org.apache.hadoop.hdfs.protocol.SnapshotException"
	ClassSnapshotAccessControl = "org.apache.hadoop.hdfs.protocol.SnapshotAccessControlException"
)

// DotSnapshot is the reserved path component naming a snapshottable
// directory's snapshots.
const DotSnapshot = ".snapshot"

// SnapshotLimit is the most snapshots one directory may have (Hadoop's
// DirectorySnapshottableFeature.SNAPSHOT_QUOTA_DEFAULT).
const SnapshotLimit = 65536

// MaxSnapshotID is the highest snapshot id (Hadoop's 24-bit limit).
const MaxSnapshotID = 1<<24 - 1

// Snapshottable is the snapshot state of a snapshottable directory.
type Snapshottable struct {
	// Snapshots sorted by name.
	Snapshots []*Snapshot
	// dot is the ".snapshot" directory: the parent of every snapshot's
	// root, so that inode paths read <dir>/.snapshot/<name>/...
	dot *Inode
}

// Snapshot is one snapshot of a directory.
type Snapshot struct {
	ID    uint32
	Name  string
	Ctime int64 // ms since the epoch
	// Root is the copy of the directory as it was; its Name is the
	// snapshot's name and its parent the ".snapshot" directory.
	Root *Inode
}

// dotMarker marks ".snapshot" directories read-only.
var dotMarker = &Snapshot{}

// snapshots is the tree's snapshot bookkeeping.
type snapshots struct {
	dirs map[uint64]*Inode // snapshottable directories by id
	// refs lists, by block id, the snapshot copies holding the block in
	// snapshot id order (the oldest first), whether built by edits or an
	// image: the first is the block's owner when no live file holds it.
	refs map[uint64][]*Inode
	// copies maps the source block of each unfinished copy-on-truncate
	// to the open file copying it: the source stays (held by a copyHolder
	// when no snapshot is left holding it) until the file closes or goes,
	// as Hadoop keeps the truncate block of a deleted snapshot.
	copies map[uint64]*Inode
	lastID uint32 // last snapshot id handed out
	count  int    // snapshots in the tree
	inodes int    // inodes of every snapshot copy
}

func (s *snapshots) init() {
	if s.dirs == nil {
		s.dirs = map[uint64]*Inode{}
		s.refs = map[uint64][]*Inode{}
		s.copies = map[uint64]*Inode{}
	}
}

// copyMarker marks the holders of copy-on-truncate sources that no
// snapshot holds any more.
var copyMarker = &Snapshot{}

// IsAncestorOf reports whether n is c or one of c's ancestors.
func (n *Inode) IsAncestorOf(c *Inode) bool { return n.isAncestorOf(c) }

// SnapshotPath is the path of snapshot name of directory dir.
func SnapshotPath(dir, name string) string {
	if dir == "/" {
		return "/" + DotSnapshot + "/" + name
	}
	return dir + "/" + DotSnapshot + "/" + name
}

// CreatedSnapshot returns the path of the snapshot a CreateSnapshot edit
// takes; ok is false for every other edit.
func (e Edit) CreatedSnapshot() (path string, ok bool) {
	c := e.op.GetCreateSnapshot()
	if c == nil {
		return "", false
	}
	return SnapshotPath(c.GetPath(), c.GetName()), true
}

// ReadOnly reports whether n is part of a snapshot (or a ".snapshot"
// directory).
func (n *Inode) ReadOnly() bool { return n.frozen() != nil }

// dotSnapshot returns n's ".snapshot" directory as the resolver sees it:
// a fresh copy carrying n's current owner, group, mode and times, whose
// children are the snapshot roots. nil unless n is snapshottable.
func (n *Inode) dotSnapshot() *Inode {
	if n.Snap() == nil || n.frozen() != nil {
		return nil
	}
	d := *n.Snap().dot
	d.Owner, d.Group, d.Mode, d.Mtime, d.Atime = n.Owner, n.Group, n.Mode, n.Mtime, n.Atime
	d.Children = n.Snap().dot.Children
	return &d
}

// InSnapshot reports whether the path goes through a ".snapshot"
// directory (it names a snapshot, a path inside one, or ".snapshot"
// itself).
func (r *Resolved) InSnapshot() bool {
	for _, n := range r.Inodes {
		if n.frozen() != nil {
			return true
		}
	}
	return false
}

// SnapshotDirs returns the snapshottable directories in path order.
func (ns *Tree) SnapshotDirs() []*Inode {
	out := make([]*Inode, 0, len(ns.snaps.dirs))
	for _, d := range ns.snaps.dirs {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path() < out[j].Path() })
	return out
}

// SnapshotCount is the number of snapshots in the tree.
func (ns *Tree) SnapshotCount() int { return ns.snaps.count }

// Snapshot returns dir's snapshot called name, or nil.
func (n *Inode) Snapshot(name string) *Snapshot {
	if n.Snap() == nil {
		return nil
	}
	if i, ok := n.Snap().index(name); ok {
		return n.Snap().Snapshots[i]
	}
	return nil
}

func (s *Snapshottable) index(name string) (int, bool) {
	i := sort.Search(len(s.Snapshots), func(i int) bool { return s.Snapshots[i].Name >= name })
	return i, i < len(s.Snapshots) && s.Snapshots[i].Name == name
}

// HasSnapshots reports whether n or a directory below it is snapshottable
// with snapshots; it returns the first such directory.
func (ns *Tree) HasSnapshots(n *Inode) *Inode {
	for _, d := range ns.snaps.dirs {
		if len(d.Snap().Snapshots) > 0 && n.isAncestorOf(d) {
			return d
		}
	}
	return nil
}

// NestedSnapshottable returns a snapshottable ancestor or descendant of
// n (n itself excluded), or nil.
func (ns *Tree) NestedSnapshottable(n *Inode) *Inode {
	for _, d := range ns.snaps.dirs {
		if d != n && (n.isAncestorOf(d) || d.isAncestorOf(n)) {
			return d
		}
	}
	return nil
}

// SnapshotInodes is the number of inodes all snapshots hold.
func (ns *Tree) SnapshotInodes() int { return ns.snaps.inodes }

// SubtreeInodes counts n and the inodes below it, stopping once the
// count passes limit (it then returns limit+1): what a snapshot of n
// would copy, found without walking more than limit+1 inodes.
func SubtreeInodes(n *Inode, limit int) int {
	count := 0
	var walk func(*Inode) bool
	walk = func(x *Inode) bool {
		count++
		if count > limit {
			return false
		}
		for _, c := range x.Children {
			if !walk(c) {
				return false
			}
		}
		return true
	}
	walk(n)
	return count
}

// NextSnapshotID is the id the next snapshot gets.
func (ns *Tree) NextSnapshotID() uint32 { return ns.snaps.lastID + 1 }

// DefaultSnapshotName is Hadoop's default snapshot name for time t:
// "s" + yyyyMMdd-HHmmss.SSS in the NameNode's local time zone.
func DefaultSnapshotName(t time.Time) string {
	return "s" + t.Format("20060102-150405.000")
}

// WriteCheck reports what a modification of path p would do wrong:
// inSnapshot when p goes into a snapshot (or is a ".snapshot"
// directory), reserved when it would make a new entry called
// ".snapshot" (a live one left from before snapshots existed may still be
// renamed or deleted, as Hadoop asks before an upgrade).
func (ns *Tree) WriteCheck(p string) (inSnapshot, reserved bool) {
	if !hasDotSnapshot(p) {
		return false, false
	}
	r := ns.Resolve(p)
	if r.InSnapshot() {
		return true, false
	}
	for i := len(r.Inodes) - 1; i < len(r.Names); i++ {
		if r.Names[i] == DotSnapshot {
			return false, true
		}
	}
	return false, false
}

// EditPathInSnapshot checks the paths an edit names (its path, src and
// dst fields) with WriteCheck: it returns the first that goes into a
// snapshot (inSnapshot true) or would make a ".snapshot" entry
// (inSnapshot false); "" when none does. The NameNode refuses such an
// edit before applying it, whichever way the request came (RPC, WebHDFS).
func (ns *Tree) EditPathInSnapshot(e Edit) (path string, inSnapshot bool) {
	if e.op == nil || e.op.Op == nil {
		return "", false
	}
	m := e.op.ProtoReflect().WhichOneof(e.op.ProtoReflect().Descriptor().Oneofs().ByName("op"))
	if m == nil {
		return "", false
	}
	msg := e.op.ProtoReflect().Get(m).Message()
	fields := msg.Descriptor().Fields()
	for _, name := range []protoreflect.Name{"path", "src", "dst"} {
		fd := fields.ByName(name)
		if fd == nil || fd.Kind() != protoreflect.StringKind || !msg.Has(fd) {
			continue
		}
		p := msg.Get(fd).String()
		if in, reserved := ns.WriteCheck(p); in || reserved {
			return p, in
		}
	}
	return "", false
}

func hasDotSnapshot(p string) bool {
	for _, c := range SplitPath(p) {
		if c == DotSnapshot {
			return true
		}
	}
	return false
}

// SnapshotHolds reports whether a snapshot copy holds b: the NameNode
// must not cut it in place (truncate).
func (ns *Tree) SnapshotHolds(b *blockmgmt.Block) bool { return len(ns.snaps.refs[b.ID]) > 0 }

// The edits.

// AllowSnapshot makes directory path snapshottable.
func AllowSnapshot(path string) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_AllowSnapshot{AllowSnapshot: &namenodepb.OpAllowSnapshot{Path: proto.String(path)}}}}
}

// DisallowSnapshot makes directory path, which has no snapshots, no
// longer snapshottable.
func DisallowSnapshot(path string) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_DisallowSnapshot{DisallowSnapshot: &namenodepb.OpDisallowSnapshot{Path: proto.String(path)}}}}
}

// CreateSnapshot takes snapshot id, called name, of directory path at
// ctime (ms), which becomes the directory's and the snapshot root's
// modification time (as Hadoop 3 sets them).
func CreateSnapshot(path, name string, id uint32, ctime int64) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_CreateSnapshot{CreateSnapshot: &namenodepb.OpCreateSnapshot{
		Path: proto.String(path), Name: proto.String(name), Id: proto.Uint32(id), Ctime: proto.Int64(ctime),
	}}}}
}

// DeleteSnapshot deletes snapshot name of directory path, whose
// modification time becomes mtime (ms).
func DeleteSnapshot(path, name string, mtime int64) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_DeleteSnapshot{DeleteSnapshot: &namenodepb.OpDeleteSnapshot{
		Path: proto.String(path), Name: proto.String(name), Mtime: proto.Int64(mtime),
	}}}}
}

// RenameSnapshot renames snapshot oldName of directory path to newName;
// the directory's and the snapshot root's modification time becomes
// mtime (ms).
func RenameSnapshot(path, oldName, newName string, mtime int64) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_RenameSnapshot{RenameSnapshot: &namenodepb.OpRenameSnapshot{
		Path: proto.String(path), OldName: proto.String(oldName), NewName: proto.String(newName), Mtime: proto.Int64(mtime),
	}}}}
}

// CopyOnTruncate records that the last block of open file path is a
// copy-on-truncate of source, a block a snapshot holds.
func CopyOnTruncate(path string, source BlockInfo) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_CopyOnTruncate{CopyOnTruncate: &namenodepb.OpCopyOnTruncate{
		Path: proto.String(path), Source: blocksProto([]BlockInfo{source})[0],
	}}}}
}

// liveDir returns the live directory at p, for a snapshot edit.
func (ns *Tree) liveDir(p string) (*Inode, error) {
	r := ns.Resolve(p)
	n := r.Target()
	if n == nil || !n.IsDir || r.InSnapshot() {
		return nil, replayErr("snapshot op on %s, which is not a live directory", p)
	}
	return n, nil
}

func (ns *Tree) applySnapshotOp(op *namenodepb.EditOp) error {
	ns.snaps.init()
	switch o := op.Op.(type) {
	case *namenodepb.EditOp_AllowSnapshot:
		n, err := ns.liveDir(o.AllowSnapshot.GetPath())
		if err != nil {
			return err
		}
		ns.allow(n)
		return nil
	case *namenodepb.EditOp_DisallowSnapshot:
		n, err := ns.liveDir(o.DisallowSnapshot.GetPath())
		if err != nil {
			return err
		}
		if n.Snap() == nil {
			return nil
		}
		if len(n.Snap().Snapshots) > 0 {
			return replayErr("disallowSnapshot of %s, which has snapshots", o.DisallowSnapshot.GetPath())
		}
		n.setSnap(nil)
		delete(ns.snaps.dirs, n.ID)
		return nil
	case *namenodepb.EditOp_CreateSnapshot:
		c := o.CreateSnapshot
		n, err := ns.liveDir(c.GetPath())
		if err != nil {
			return err
		}
		if n.Snap() == nil || n.Snapshot(c.GetName()) != nil || c.GetName() == "" {
			return replayErr("createSnapshot %s of %s: not snapshottable or the name exists", c.GetName(), c.GetPath())
		}
		s := &Snapshot{ID: c.GetId(), Name: c.GetName(), Ctime: c.GetCtime()}
		n.Mtime = c.GetCtime()
		s.Root = ns.freeze(n, n.Snap().dot, s)
		s.Root.Name = s.Name
		n.Snap().add(s)
		ns.snaps.count++
		if s.ID > ns.snaps.lastID {
			ns.snaps.lastID = s.ID
		}
		return nil
	case *namenodepb.EditOp_DeleteSnapshot:
		d := o.DeleteSnapshot
		n, err := ns.liveDir(d.GetPath())
		if err != nil {
			return err
		}
		s := n.Snapshot(d.GetName())
		if s == nil {
			return replayErr("deleteSnapshot of missing %s in %s", d.GetName(), d.GetPath())
		}
		n.Snap().remove(s.Name)
		ns.snaps.count--
		ns.unfreeze(s.Root)
		if d.Mtime != nil {
			n.Mtime = d.GetMtime()
		}
		return nil
	case *namenodepb.EditOp_CopyOnTruncate:
		c := o.CopyOnTruncate
		n := ns.Lookup(c.GetPath())
		if n == nil || n.IsDir || n.UC() == nil || n.ReadOnly() || c.GetSource() == nil {
			return replayErr("copyOnTruncate of %s, which is not open", c.GetPath())
		}
		n.UC().CopySource = &blockInfos([]*namenodepb.Block{c.GetSource()})[0]
		ns.snaps.copies[n.UC().CopySource.ID] = n
		return nil
	case *namenodepb.EditOp_RenameSnapshot:
		r := o.RenameSnapshot
		n, err := ns.liveDir(r.GetPath())
		if err != nil {
			return err
		}
		s := n.Snapshot(r.GetOldName())
		if s == nil || n.Snapshot(r.GetNewName()) != nil || r.GetNewName() == "" {
			return replayErr("renameSnapshot %s to %s in %s: missing or taken", r.GetOldName(), r.GetNewName(), r.GetPath())
		}
		n.Snap().remove(s.Name)
		s.Name = r.GetNewName()
		s.Root.Name = s.Name
		n.Snap().add(s)
		if r.Mtime != nil {
			n.Mtime = r.GetMtime()
			s.Root.Mtime = r.GetMtime()
		}
		return nil
	}
	return replayErr("unknown snapshot op %T", op.Op)
}

func (ns *Tree) allow(n *Inode) {
	if n.Snap() != nil {
		return
	}
	dot := &Inode{ID: n.ID, Name: DotSnapshot, Parent: n, IsDir: true, extra: &inodeExtra{frozen: dotMarker}}
	n.setSnap(&Snapshottable{dot: dot})
	ns.snaps.dirs[n.ID] = n
}

func (s *Snapshottable) add(sn *Snapshot) {
	i, _ := s.index(sn.Name)
	s.Snapshots = append(s.Snapshots, nil)
	copy(s.Snapshots[i+1:], s.Snapshots[i:])
	s.Snapshots[i] = sn
	s.syncDot()
}

func (s *Snapshottable) remove(name string) {
	if i, ok := s.index(name); ok {
		s.Snapshots = append(s.Snapshots[:i], s.Snapshots[i+1:]...)
	}
	s.syncDot()
}

// syncDot makes the ".snapshot" directory list the snapshot roots, in
// name order. The slice is replaced, never changed in place: resolvers
// may hold the old one.
func (s *Snapshottable) syncDot() {
	roots := make([]*Inode, len(s.Snapshots))
	for i, sn := range s.Snapshots {
		roots[i] = sn.Root
	}
	s.dot.Children = roots
}

// forgetSnapshottable drops n from the snapshottable directories when it
// is removed from the tree (it has no snapshots: the NameNode refuses to
// delete or replace a directory that has).
func (ns *Tree) forgetSnapshottable(n *Inode) {
	if n.Snap() != nil {
		delete(ns.snaps.dirs, n.ID)
	}
}

// freeze copies n and everything below it for snapshot s, parented to
// parent. The copies share n's blocks, each noted in snaps.refs.
func (ns *Tree) freeze(n, parent *Inode, s *Snapshot) *Inode {
	c := n.Copy() // every attribute, whoever added it; its own block list
	c.Parent = parent
	c.Children = nil
	c.SetUC(nil)
	c.setSnap(nil)
	c.setQuota(nil) // quotas are the live directory's; its XAttrs and ACL slices are shared, and never changed in place
	c.setFrozen(s)
	ns.snaps.inodes++
	if !n.IsDir {
		c.setFrozenLen(n.Length())
		for _, b := range c.Blocks() {
			ns.snaps.refs[b.ID] = append(ns.snaps.refs[b.ID], c)
			ns.syncHeld(b)
		}
		return c
	}
	c.Children = make([]*Inode, 0, len(n.Children))
	for _, ch := range n.Children {
		c.Children = append(c.Children, ns.freeze(ch, c, s))
	}
	return c
}

// unfreeze releases the blocks held by the copies at and below n, a
// deleted snapshot's root.
func (ns *Tree) unfreeze(n *Inode) {
	ns.snaps.inodes--
	for _, ch := range n.Children {
		ns.unfreeze(ch)
	}
	for _, b := range n.Blocks() {
		hs := ns.snaps.refs[b.ID]
		for i, h := range hs {
			if h == n {
				hs = append(hs[:i:i], hs[i+1:]...)
				break
			}
		}
		if len(hs) == 0 {
			delete(ns.snaps.refs, b.ID)
		} else {
			ns.snaps.refs[b.ID] = hs
		}
		ns.syncHeld(b)
		if f := FileOf(b); f != nil && f.frozen() != nil {
			// No live file holds b: hand it to another copy, or drop it.
			ns.orphaned(b)
		}
	}
}

// orphaned gives b, which no live file holds, its owner: the oldest
// snapshot copy holding it, else the holder of an unfinished
// copy-on-truncate reading it; with neither, b is dropped and its
// replicas deleted.
func (ns *Tree) orphaned(b *blockmgmt.Block) {
	// A snapshot copy only ever takes over a finished block: nothing
	// writes it any more, and block management (the replication monitor,
	// safe mode) only looks after committed blocks. An image marks it so.
	b.Committed = true
	ns.Blocks.Changed(b.ID)
	if hs := ns.snaps.refs[b.ID]; len(hs) > 0 {
		b.File = hs[0]
		return
	}
	if f := ns.snaps.copies[b.ID]; f != nil {
		b.File = copyHolder(f, b)
		return
	}
	ns.Blocks.Drop(b)
}

// copyHolder is the read-only holder of b, the source of open file f's
// copy-on-truncate, once no snapshot holds it: it keeps b (replicated at
// f's replication) until f closes.
func copyHolder(f *Inode, b *blockmgmt.Block) *Inode {
	return &Inode{ID: f.ID, Name: f.Name, Parent: f.Parent, Owner: f.Owner, Group: f.Group, Mode: f.Mode,
		StoragePolicy: f.StoragePolicy,
		file:          &fileFields{replication: f.Replication(), blockSize: f.BlockSize(), blocks: []*blockmgmt.Block{b}},
		extra:         &inodeExtra{frozen: copyMarker, frozenLen: b.NumBytes}}
}

// endCopy is called when open file n closes or goes: the source of its
// copy-on-truncate, if nothing but the copy held it, is dropped.
func (ns *Tree) endCopy(n *Inode) {
	if n.UC() == nil || n.UC().CopySource == nil || ns.snaps.copies[n.UC().CopySource.ID] != n {
		return
	}
	delete(ns.snaps.copies, n.UC().CopySource.ID)
	if b := ns.Blocks.Get(n.UC().CopySource.ID); b != nil {
		if f := FileOf(b); f != nil && f.frozen() == copyMarker {
			ns.Blocks.Drop(b)
		}
	}
}

// syncHeld sets b.HeldReplication, the most replicas a snapshot copy
// holding b asks for: block management keeps the largest of it and the
// owner's replication (Hadoop's getPreferredBlockReplication), so
// lowering a live file's replication keeps what its snapshots need, and
// the answer does not depend on which holder owns the block.
func (ns *Tree) syncHeld(b *blockmgmt.Block) {
	held := 0
	for _, h := range ns.snaps.refs[b.ID] {
		held = max(held, int(h.Replication()))
	}
	if b.HeldReplication != held {
		b.HeldReplication = held
		ns.Blocks.Changed(b.ID)
	}
}

// release is called when a live file lets go of b: b stays, held by a
// snapshot copy, while any copy holds it; otherwise it is dropped.
func (ns *Tree) release(b *blockmgmt.Block) {
	if f := FileOf(b); f != nil && f.frozen() != nil {
		return // already not the live file's (an image's replay)
	}
	ns.orphaned(b)
}

// The image.

// snapshotImageFields sets the snapshot fields of n's image record.
func snapshotImageFields(n *Inode, rec *namenodepb.Inode) {
	if n.UC() != nil && n.UC().CopySource != nil && rec.Uc != nil {
		rec.Uc.CopySource = blocksProto([]BlockInfo{*n.UC().CopySource})[0]
	}
	if n.UC() != nil && rec.Uc != nil && len(n.Blocks()) > 0 && n.Blocks()[len(n.Blocks())-1].Committed {
		rec.Uc.LastCommitted = proto.Bool(true)
	}
	if n.Snap() != nil {
		rec.Snapshottable = proto.Bool(true)
	}
	if n.frozen() != nil && !n.IsDir {
		rec.SnapshotLength = proto.Uint64(uint64(n.frozenLen()))
	}
}

// loadSnapshotFields applies the snapshot fields of a live inode's image
// record.
func (ns *Tree) loadSnapshotFields(n *Inode, rec *namenodepb.Inode) {
	if k := len(n.Blocks()); k > 0 && n.UC() != nil && rec.GetUc().GetLastCommitted() {
		n.Blocks()[k-1].Committed = true
	}
	if src := rec.GetUc().GetCopySource(); src != nil && n.UC() != nil {
		n.UC().CopySource = &blockInfos([]*namenodepb.Block{src})[0]
		ns.snaps.init()
		ns.snaps.copies[src.GetId()] = n
	}
	if rec.GetSnapshottable() && n.IsDir {
		ns.snaps.init()
		ns.allow(n)
	}
}

// snapshotHeader fills the snapshot fields of the image header.
func (ns *Tree) snapshotHeader(h *namenodepb.ImageHeader) {
	if ns.snaps.count > 0 {
		h.SnapshotCount = proto.Uint64(uint64(ns.snaps.count))
	}
	if ns.snaps.lastID > 0 {
		h.LastSnapshotId = proto.Uint32(ns.snaps.lastID)
	}
}

// writeSnapshots writes every snapshot: a SnapshotImage and its copy's
// inodes, parents before children.
func (ns *Tree) writeSnapshots(put func(proto.Message) error) error {
	for _, d := range ns.SnapshotDirs() {
		for _, s := range d.Snap().Snapshots {
			var inodes []*Inode
			var walk func(*Inode)
			walk = func(x *Inode) {
				inodes = append(inodes, x)
				for _, c := range x.Children {
					walk(c)
				}
			}
			walk(s.Root)
			if err := put(&namenodepb.SnapshotImage{
				Id: proto.Uint32(s.ID), Name: []byte(s.Name), Ctime: proto.Int64(s.Ctime),
				Dir: proto.Uint64(d.ID), InodeCount: proto.Uint64(uint64(len(inodes))),
			}); err != nil {
				return err
			}
			for _, x := range inodes {
				rec := inodeRecord(x)
				if x == s.Root {
					rec.Parent = nil
				}
				if err := put(rec); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// readSnapshots reads the header's snapshots after the live inodes.
func (ns *Tree) readSnapshots(hdr *namenodepb.ImageHeader, next func(proto.Message) error) error {
	ns.snaps.init()
	ns.snaps.lastID = hdr.GetLastSnapshotId()
	for i := uint64(0); i < hdr.GetSnapshotCount(); i++ {
		var si namenodepb.SnapshotImage
		if err := next(&si); err != nil {
			return fmt.Errorf("namenode: image snapshot %d of %d: %w", i, hdr.GetSnapshotCount(), err)
		}
		d := ns.byID.get(si.GetDir())
		if d == nil || d.Snap() == nil || len(si.GetName()) == 0 || d.Snapshot(string(si.GetName())) != nil || si.GetInodeCount() == 0 {
			return fmt.Errorf("namenode: image snapshot %q of directory %d does not fit the tree", si.GetName(), si.GetDir())
		}
		s := &Snapshot{ID: si.GetId(), Name: string(si.GetName()), Ctime: si.GetCtime()}
		copies := map[uint64]*Inode{}
		for j := uint64(0); j < si.GetInodeCount(); j++ {
			var rec namenodepb.Inode
			if err := next(&rec); err != nil {
				return fmt.Errorf("namenode: image snapshot %q inode %d: %w", s.Name, j, err)
			}
			perm := rec.GetPerm()
			c := &Inode{ID: rec.GetId(), Name: string(rec.GetName()), IsDir: rec.GetIsDir(), Owner: ns.names.of(perm.GetOwner()), Group: ns.names.of(perm.GetGroup()),
				Mode: uint16(perm.GetMode() & 0o7777), Mtime: rec.GetMtime(), Atime: rec.GetAtime(), StoragePolicy: uint8(rec.GetStoragePolicy()), extra: &inodeExtra{frozen: s}}
			if err := attributesFrom(c, &rec); err != nil {
				return err
			}
			if j == 0 {
				if rec.GetId() != d.ID || !c.IsDir {
					return fmt.Errorf("namenode: image snapshot %q does not start with its directory", s.Name)
				}
				c.Name = s.Name
				c.Parent = d.Snap().dot
				s.Root = c
			} else {
				p := copies[rec.GetParent()]
				if p == nil || !p.IsDir || c.Name == "" {
					return fmt.Errorf("namenode: image snapshot %q inode %d has a bad parent or name", s.Name, c.ID)
				}
				if k := len(p.Children); k > 0 && p.Children[k-1].Name >= c.Name {
					return fmt.Errorf("namenode: image snapshot %q inode %d is out of order", s.Name, c.ID)
				}
				p.Children = append(p.Children, c)
				c.Parent = p
			}
			if copies[c.ID] != nil {
				return fmt.Errorf("namenode: image snapshot %q has inode %d twice", s.Name, c.ID)
			}
			copies[c.ID] = c
			ns.snaps.inodes++
			if !c.IsDir {
				c.SetReplication(uint16(rec.GetReplication()))
				c.SetBlockSize(rec.GetBlockSize())
				c.setFrozenLen(int64(rec.GetSnapshotLength()))
				ns.thawBlocks(c, blockInfos(rec.GetBlocks()))
			}
		}
		d.Snap().add(s)
		ns.snaps.count++
	}
	// The image lists snapshots by directory and name; refs and owners
	// are as the edits made them: by snapshot id, the oldest owning.
	for id, hs := range ns.snaps.refs {
		sort.SliceStable(hs, func(i, j int) bool { return hs[i].frozen().ID < hs[j].frozen().ID })
		if b := ns.Blocks.Get(id); b != nil && FileOf(b) != nil && FileOf(b).frozen() != nil {
			b.File = hs[0]
		}
	}
	// A copy-on-truncate source no snapshot holds any more is in no
	// inode's block list: it comes back with its copy's holder.
	for id, f := range ns.snaps.copies {
		if ns.Blocks.Get(id) == nil {
			src := f.UC().CopySource
			b := blockmgmt.NewBlock(id, nil)
			b.GenStamp, b.NumBytes, b.Committed = src.GenStamp, src.NumBytes, true
			b.File = copyHolder(f, b)
			ns.Blocks.Put(b)
			ns.Blocks.Note(b.ID, b.GenStamp)
		}
	}
	return nil
}

// thawBlocks gives copy c the blocks bs from an image: the live file's
// Block when one holds it, else a block held only by snapshots.
func (ns *Tree) thawBlocks(c *Inode, bs []BlockInfo) {
	for _, info := range bs {
		b := ns.Blocks.Get(info.ID)
		if b == nil {
			b = blockmgmt.NewBlock(info.ID, c)
			b.GenStamp, b.NumBytes, b.Committed = info.GenStamp, info.NumBytes, true
			ns.Blocks.Put(b)
			ns.Blocks.Note(b.ID, b.GenStamp)
		}
		c.SetBlockList(append(c.Blocks(), b))
		ns.snaps.refs[b.ID] = append(ns.snaps.refs[b.ID], c)
		ns.syncHeld(b)
	}
}

// WriteBlockState writes, block by block in id order, what the image
// does not carry but edits and images must agree on: the owner, the
// snapshot copies holding the block (in order), the replicas wanted and
// whether the block is committed (left out for the last block of an open
// file, which the active NameNode commits as clients report it). HA
// members compare it with the image (NamespaceDigest).
func (ns *Tree) WriteBlockState(w io.Writer) error {
	bw := bufio.NewWriter(w)
	for _, id := range ns.Blocks.IDs() {
		b := ns.Blocks.Get(id)
		fmt.Fprintf(bw, "%s want=%d", b, b.WantReplicas())
		if f := FileOf(b); f != nil {
			kind := "live"
			switch {
			case f.frozen() == copyMarker:
				kind = "copy-source"
			case f.frozen() != nil:
				kind = "snapshot"
			}
			fmt.Fprintf(bw, " owner=%s:%s", kind, f.Path())
			if f.frozen() != nil || f.UC() == nil || f.LastBlock() != b {
				fmt.Fprintf(bw, " committed=%v", b.Committed)
			}
		}
		for _, h := range ns.snaps.refs[id] {
			fmt.Fprintf(bw, " held=%s", h.Path())
		}
		bw.WriteByte('\n')
	}
	return bw.Flush()
}

// The diff report.

// DiffEntry is one line of a snapshot diff report: Type is "M", "+", "-"
// or "R"; paths are relative to the snapshot root ("" for the root);
// Target is the new path of a rename. ID is the inode's id; Dir is the
// id of the directory whose children changed (the parent of a created,
// deleted or renamed inode) or, for "M", the inode's own id.
type DiffEntry struct {
	Type   string
	Path   string
	Target string
	ID     uint64
	Dir    uint64
	IsDir  bool
}

// ErrNoSnapshot is wrapped by SnapshotDiff for a missing snapshot name.
var ErrNoSnapshot = errors.New("snapshot does not exist")

// SnapshotDiff compares dir's snapshot from with snapshot to; "" (or
// ".") names the current tree. Inodes are matched by id: an id in both
// at different paths is a rename, an id only in from a deletion, only in
// to a creation (only the topmost of a deleted or created subtree is
// listed), a file whose blocks, length or attributes differ and a
// directory whose children or attributes differ are modified.
//
// The order is Hadoop's: the modified inodes by path (component by
// component), each modified directory followed by its created children
// and then its deleted and renamed ones, in name order.
func SnapshotDiff(dir *Inode, from, to string) ([]DiffEntry, error) {
	root := func(name string) (*Inode, error) {
		if name == "" || name == "." {
			return dir, nil
		}
		s := dir.Snapshot(name)
		if s == nil {
			return nil, fmt.Errorf("%w: %s", ErrNoSnapshot, name)
		}
		return s.Root, nil
	}
	a, err := root(from)
	if err != nil {
		return nil, err
	}
	b, err := root(to)
	if err != nil {
		return nil, err
	}
	if a == b {
		return nil, nil
	}
	type loc struct {
		n    *Inode
		path string
	}
	index := func(r *Inode) map[uint64]loc {
		m := map[uint64]loc{}
		var walk func(x *Inode, p string)
		walk = func(x *Inode, p string) {
			m[x.ID] = loc{x, p}
			for _, c := range x.Children {
				cp := c.Name
				if p != "" {
					cp = p + "/" + c.Name
				}
				walk(c, cp)
			}
		}
		walk(r, "")
		return m
	}
	am, bm := index(a), index(b)
	var modifiedEntries []DiffEntry
	children := map[uint64][]DiffEntry{} // directory id -> its created, deleted, renamed children
	for id, x := range am {
		y, ok := bm[id]
		if !ok || x.n.IsDir != y.n.IsDir {
			if x.n != a && inBoth(x.n.Parent, am, bm) {
				children[x.n.Parent.ID] = append(children[x.n.Parent.ID], DiffEntry{Type: "-", Path: x.path, ID: id, Dir: x.n.Parent.ID, IsDir: x.n.IsDir})
			}
			continue
		}
		if x.path != y.path {
			children[x.n.Parent.ID] = append(children[x.n.Parent.ID], DiffEntry{Type: "R", Path: x.path, Target: y.path, ID: id, Dir: x.n.Parent.ID, IsDir: x.n.IsDir})
		}
		if modified(x.n, y.n) {
			modifiedEntries = append(modifiedEntries, DiffEntry{Type: "M", Path: y.path, ID: id, Dir: id, IsDir: y.n.IsDir})
		}
	}
	for id, y := range bm {
		if x, ok := am[id]; ok && x.n.IsDir == y.n.IsDir {
			continue
		}
		if y.n != b && inBoth(y.n.Parent, am, bm) {
			children[y.n.Parent.ID] = append(children[y.n.Parent.ID], DiffEntry{Type: "+", Path: y.path, ID: id, Dir: y.n.Parent.ID, IsDir: y.n.IsDir})
		}
	}
	sort.Slice(modifiedEntries, func(i, j int) bool { return pathLess(modifiedEntries[i].Path, modifiedEntries[j].Path) })
	var out []DiffEntry
	for _, m := range modifiedEntries {
		out = append(out, m)
		cs := children[m.ID]
		sort.Slice(cs, func(i, j int) bool {
			if ci, cj := cs[i].Type == "+", cs[j].Type == "+"; ci != cj {
				return ci
			}
			return pathLess(cs[i].Path, cs[j].Path)
		})
		out = append(out, cs...)
	}
	return out, nil
}

// pathLess orders relative paths component by component (Hadoop's
// INODE_COMPARATOR), the root ("") first.
func pathLess(a, b string) bool {
	as, bs := SplitPath(a), SplitPath(b)
	for i := 0; i < len(as) && i < len(bs); i++ {
		if as[i] != bs[i] {
			return signedLess(as[i], bs[i])
		}
	}
	return len(as) < len(bs)
}

// signedLess compares names as Java's signed bytes do (bytes from 0x80
// sort before ASCII), as Hadoop's comparator does.
func signedLess(a, b string) bool {
	for i := 0; i < len(a) && i < len(b); i++ {
		if a[i] != b[i] {
			return int8(a[i]) < int8(b[i])
		}
	}
	return len(a) < len(b)
}

// inBoth reports whether directory p (by id) is in both trees of a diff.
func inBoth[T any](p *Inode, am, bm map[uint64]T) bool {
	if p == nil {
		return false
	}
	_, ina := am[p.ID]
	_, inb := bm[p.ID]
	return ina && inb
}

// modified reports whether two versions of one inode differ in what a
// diff report shows as "M".
func modified(x, y *Inode) bool {
	if x.Owner != y.Owner || x.Group != y.Group || x.Mode != y.Mode || x.StoragePolicy != y.StoragePolicy {
		return true
	}
	if x.IsDir {
		if len(x.Children) != len(y.Children) {
			return true
		}
		for i := range x.Children {
			if x.Children[i].ID != y.Children[i].ID || x.Children[i].Name != y.Children[i].Name {
				return true
			}
		}
		return false
	}
	if x.Replication() != y.Replication() || x.Length() != y.Length() || x.Mtime != y.Mtime || len(x.Blocks()) != len(y.Blocks()) {
		return true
	}
	for i := range x.Blocks() {
		if x.Blocks()[i] != y.Blocks()[i] {
			return true
		}
	}
	return false
}

// DiffPath formats a diff entry's path as Hadoop's report does: "." for
// the root, "./" + path below it.
func DiffPath(p string) string {
	if p == "" {
		return "."
	}
	return "./" + p
}

// CheckSnapshotName validates a snapshot name as Hadoop does: a valid path
// component, no "/", not ".snapshot", within the component length limit.
func CheckSnapshotName(name, dir string, maxComponentLength int) error {
	if strings.Contains(name, "/") {
		return ipc.Errorf(ipc.ClassIllegalArgument, "Snapshot name cannot contain \"/\"")
	}
	if name == "" || name == "." || name == ".." || strings.Contains(name, ":") || strings.ContainsRune(name, 0) {
		return ipc.Errorf(ipc.ClassInvalidPath, "Invalid snapshot name: %s", name)
	}
	if name == DotSnapshot {
		return ipc.Errorf(ipc.ClassIllegalArgument, "\"%s\" is a reserved name.", DotSnapshot)
	}
	if maxComponentLength > 0 && len(name) > maxComponentLength {
		return ipc.Errorf(ipc.ClassPathComponentTooLong, "The maximum path component name limit of %s in directory %s is exceeded: limit=%d length=%d",
			name, dir, maxComponentLength, len(name))
	}
	return nil
}
