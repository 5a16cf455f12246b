package namespace

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/namenode/blockmgmt"
	"github.com/stratafs/strata/internal/proto/namenodepb"
	"github.com/stratafs/strata/internal/storage"
)

// Inode ids: the root is 16385 as in HDFS; later inodes count up from it.
const rootInodeID = 16385

// Inode is a file or directory. Directories keep their children sorted by
// name (byte order), which is the order of listings.
//
// An inode is kept small, since a namespace holds millions: what only
// files have is in file (nil for a directory), what few inodes have
// (quotas, extended attributes, ACLs, snapshots) in extra (nil when none
// is set); their accessors below read a nil side struct as the zero
// values. Owner and group strings are interned by the Tree.
type Inode struct {
	ID       uint64
	Name     string
	Parent   *Inode
	Children []*Inode // directories only, sorted by name

	Owner, Group string
	Mtime, Atime int64 // ms since the epoch

	file  *fileFields
	extra *inodeExtra

	Mode          uint16 // 0o7777
	IsDir         bool
	StoragePolicy uint8
}

// fileFields are the attributes only files have.
type fileFields struct {
	replication uint16
	blockSize   uint64
	blocks      []*blockmgmt.Block
	uc          *UnderConstruction
}

// inodeExtra are the attributes few inodes have.
type inodeExtra struct {
	quota *Quota // directories with a quota set (quota.go); nil otherwise
	// xattrs are the extended attributes (xattr.go), nil when none; acl
	// the entries beside the mode bits (acl.go), nil without an ACL.
	xattrs []XAttr
	acl    []ACLEntry
	// Snapshots (snapshot.go). snap is set on a snapshottable directory;
	// frozen on every inode of a snapshot copy and on ".snapshot"
	// directories, which are read-only; frozenLen is a copied file's
	// length when its snapshot was taken.
	snap      *Snapshottable
	frozen    *Snapshot
	frozenLen int64
}

// fileOf returns n's file attributes, allocating them on first use.
func (n *Inode) fileOf() *fileFields {
	if n.file == nil {
		n.file = &fileFields{}
	}
	return n.file
}

// extraOf returns n's rare attributes, allocating them on first use.
func (n *Inode) extraOf() *inodeExtra {
	if n.extra == nil {
		n.extra = &inodeExtra{}
	}
	return n.extra
}

// Replication is the file's target replication (0 for a directory).
func (n *Inode) Replication() uint16 {
	if n.file == nil {
		return 0
	}
	return n.file.replication
}

// SetReplication sets the file's target replication.
func (n *Inode) SetReplication(r uint16) { n.fileOf().replication = r }

// BlockSize is the file's block size (0 for a directory).
func (n *Inode) BlockSize() uint64 {
	if n.file == nil {
		return 0
	}
	return n.file.blockSize
}

// SetBlockSize sets the file's block size.
func (n *Inode) SetBlockSize(s uint64) { n.fileOf().blockSize = s }

// Blocks are the file's blocks in order (nil for a directory).
func (n *Inode) Blocks() []*blockmgmt.Block {
	if n.file == nil {
		return nil
	}
	return n.file.blocks
}

// SetBlockList replaces the file's block list (the block map is the
// caller's business).
func (n *Inode) SetBlockList(bs []*blockmgmt.Block) {
	if bs == nil && n.file == nil {
		return
	}
	n.fileOf().blocks = bs
}

// UC is the file's writer while it is open, else nil.
func (n *Inode) UC() *UnderConstruction {
	if n.file == nil {
		return nil
	}
	return n.file.uc
}

// SetUC sets (or, with nil, clears) the file's writer.
func (n *Inode) SetUC(uc *UnderConstruction) {
	if uc == nil && n.file == nil {
		return
	}
	n.fileOf().uc = uc
}

// Quota is the directory's quota, nil when none is set (quota.go).
func (n *Inode) Quota() *Quota {
	if n.extra == nil {
		return nil
	}
	return n.extra.quota
}

func (n *Inode) setQuota(q *Quota) {
	if q == nil && n.extra == nil {
		return
	}
	n.extraOf().quota = q
}

// XAttrs are the extended attributes (xattr.go), nil when none.
func (n *Inode) XAttrs() []XAttr {
	if n.extra == nil {
		return nil
	}
	return n.extra.xattrs
}

func (n *Inode) setXAttrs(xs []XAttr) {
	if xs == nil && n.extra == nil {
		return
	}
	n.extraOf().xattrs = xs
}

// ACL are the ACL entries beside the mode bits (acl.go), nil without.
func (n *Inode) ACL() []ACLEntry {
	if n.extra == nil {
		return nil
	}
	return n.extra.acl
}

func (n *Inode) setACL(acl []ACLEntry) {
	if acl == nil && n.extra == nil {
		return
	}
	n.extraOf().acl = acl
}

// Snap is the directory's snapshot state when it is snapshottable, else
// nil (snapshot.go).
func (n *Inode) Snap() *Snapshottable {
	if n.extra == nil {
		return nil
	}
	return n.extra.snap
}

func (n *Inode) setSnap(s *Snapshottable) {
	if s == nil && n.extra == nil {
		return
	}
	n.extraOf().snap = s
}

func (n *Inode) frozen() *Snapshot {
	if n.extra == nil {
		return nil
	}
	return n.extra.frozen
}

func (n *Inode) setFrozen(s *Snapshot) {
	if s == nil && n.extra == nil {
		return
	}
	n.extraOf().frozen = s
}

func (n *Inode) frozenLen() int64 {
	if n.extra == nil {
		return 0
	}
	return n.extra.frozenLen
}

func (n *Inode) setFrozenLen(l int64) {
	if l == 0 && n.extra == nil {
		return
	}
	n.extraOf().frozenLen = l
}

// Copy returns a copy of n (a shallow one, as `c := *n` was before the
// side structs) whose fields can be set without changing n's: its own
// are the file and rare-attribute side structs and the block list slice.
// Shared with n are everything those hold by pointer or slice — the
// blocks, the UnderConstruction, the Quota, the Snapshottable and frozen
// Snapshot, the XAttrs and ACL entries — and Parent and the Children
// slice: change those through the copy only by replacing them.
func (n *Inode) Copy() *Inode {
	c := *n
	if n.file != nil {
		f := *n.file
		f.blocks = append([]*blockmgmt.Block(nil), n.file.blocks...)
		c.file = &f
	}
	if n.extra != nil {
		e := *n.extra
		c.extra = &e
	}
	return &c
}

// UnderConstruction is the writer of a file being written.
type UnderConstruction struct {
	ClientName, ClientMachine string

	// CopySource is set while the last block is a copy-on-truncate of
	// this block, which a snapshot holds (snapshot.go).
	CopySource *BlockInfo
}

// Path returns the inode's absolute Path.
func (n *Inode) Path() string {
	if n.Parent == nil {
		return "/"
	}
	var parts []string
	for p := n; p.Parent != nil; p = p.Parent {
		parts = append(parts, p.Name)
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(parts[i])
	}
	return b.String()
}

// ChildIndex returns the index of name in n.children, or where it would go.
func (n *Inode) ChildIndex(name string) (int, bool) {
	i := sort.Search(len(n.Children), func(i int) bool { return n.Children[i].Name >= name })
	return i, i < len(n.Children) && n.Children[i].Name == name
}

// Child returns n's child called name, or nil.
func (n *Inode) Child(name string) *Inode {
	if i, ok := n.ChildIndex(name); ok {
		return n.Children[i]
	}
	return nil
}

func (n *Inode) addChild(c *Inode) {
	i, _ := n.ChildIndex(c.Name)
	n.Children = append(n.Children, nil)
	copy(n.Children[i+1:], n.Children[i:])
	n.Children[i] = c
	c.Parent = n
}

func (n *Inode) removeChild(c *Inode) {
	if i, ok := n.ChildIndex(c.Name); ok && n.Children[i] == c {
		n.Children = append(n.Children[:i], n.Children[i+1:]...)
	}
	c.Parent = nil
}

// isAncestorOf reports whether n is c or one of c's ancestors.
func (n *Inode) isAncestorOf(c *Inode) bool {
	for p := c; p != nil; p = p.Parent {
		if p == n {
			return true
		}
	}
	return false
}

// Tree is the directory tree with its inodes by id, and the map of the
// blocks its files hold. It is not safe for concurrent use: the caller (the
// NameNode's Namesystem) serializes access with its lock.
type Tree struct {
	// Blocks holds every block of every file. The tree adds and drops
	// blocks as edits change files; block management owns the rest of
	// each block's state (replicas).
	Blocks    *blockmgmt.BlockMap
	Root      *Inode
	byID      inodeIndex
	lastID    uint64
	fileCount int64
	dirCount  int64

	names     interner  // owners and groups
	quotaSeen bool      // a quota was set: edits keep usage (quota.go)
	snaps     snapshots // snapshot.go

	tokens *delegation.State // delegation tokens (delegation.go)
}

// New returns a tree holding only the root directory, owned by superuser
// and supergroup, whose files keep their blocks in blocks.
func New(superuser, supergroup string, blocks *blockmgmt.BlockMap) *Tree {
	names := interner{}
	root := &Inode{ID: rootInodeID, IsDir: true, Owner: names.of(superuser), Group: names.of(supergroup), Mode: 0o755}
	t := &Tree{Blocks: blocks, Root: root, lastID: rootInodeID, dirCount: 1, names: names, tokens: delegation.NewState()}
	t.byID.put(rootInodeID, root)
	return t
}

// Inode returns the inode with id, or nil.
func (ns *Tree) Inode(id uint64) *Inode { return ns.byID.get(id) }

// AllocInodeID hands out the next inode id for an edit being built.
func (ns *Tree) AllocInodeID() uint64 {
	ns.lastID++
	return ns.lastID
}

// LastInodeID is the highest inode id handed out.
func (ns *Tree) LastInodeID() uint64 { return ns.lastID }

// Counts returns the number of files and directories (the root included).
func (ns *Tree) Counts() (files, dirs int64) { return ns.fileCount, ns.dirCount }

// OpenFiles calls f for every file under construction, in no order.
func (ns *Tree) OpenFiles(f func(*Inode)) {
	ns.byID.each(func(n *Inode) {
		if n.UC() != nil {
			f(n)
		}
	})
}

// SplitPath splits an absolute, validated path into components; "/" has none.
func SplitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// Resolved is the result of walking a path: the inodes of every existing
// prefix. Inodes[0] is the root; if the whole path exists, the last inode is
// its target and len(Inodes) == len(Names)+1.
type Resolved struct {
	path   string
	Names  []string
	Inodes []*Inode
}

// Exists reports whether the whole path exists.
func (r *Resolved) Exists() bool { return len(r.Inodes) == len(r.Names)+1 }

// Target is the inode the path names, or nil when it does not exist.
func (r *Resolved) Target() *Inode {
	if r.Exists() {
		return r.Inodes[len(r.Inodes)-1]
	}
	return nil
}

// LastExisting is the deepest existing inode on the path.
func (r *Resolved) LastExisting() *Inode { return r.Inodes[len(r.Inodes)-1] }

// Parent is the target's Parent directory if it exists (nil for "/").
func (r *Resolved) Parent() *Inode {
	if len(r.Names) == 0 {
		return nil
	}
	if len(r.Inodes) >= len(r.Names) {
		return r.Inodes[len(r.Names)-1]
	}
	return nil
}

// Resolve walks p as far as it exists. A file in the middle of the path
// stops the walk there (the caller reports ParentNotDirectory).
func (ns *Tree) Resolve(p string) *Resolved {
	r := &Resolved{path: p, Names: SplitPath(p), Inodes: []*Inode{ns.Root}}
	cur := ns.Root
	for _, name := range r.Names {
		if !cur.IsDir {
			break
		}
		next := cur.Child(name)
		if next == nil && name == DotSnapshot {
			next = cur.dotSnapshot()
		}
		if next == nil {
			break
		}
		r.Inodes = append(r.Inodes, next)
		cur = next
	}
	return r
}

// leafName is a copy of the path's last component: a substring would
// keep the whole path (the edit's, the request's) alive with the inode.
func (r *Resolved) leafName() string { return strings.Clone(r.Names[len(r.Names)-1]) }

// Lookup returns the inode at p, or nil.
func (ns *Tree) Lookup(p string) *Inode { return ns.Resolve(p).Target() }

// ErrReplay marks an edit that does not fit the namespace it is replayed
// on: the log and image disagree, which must stop the NameNode.
var ErrReplay = errors.New("namenode: edit does not apply to the namespace")

func replayErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrReplay, fmt.Sprintf(format, args...))
}

func (ns *Tree) newInode(id uint64, name string, dir bool, perm *namenodepb.PermStatus, mtime int64) *Inode {
	n := &Inode{ID: id, Name: name, IsDir: dir, Owner: ns.names.of(perm.GetOwner()), Group: ns.names.of(perm.GetGroup()), Mode: uint16(perm.GetMode() & 0o7777), Mtime: mtime}
	ns.addInode(n)
	return n
}

// addInode indexes new inode n by its id and counts it.
func (ns *Tree) addInode(n *Inode) {
	id, dir := n.ID, n.IsDir
	if id > ns.lastID {
		ns.lastID = id
	}
	ns.byID.put(id, n)
	if dir {
		ns.dirCount++
	} else {
		ns.fileCount++
	}
}

// apply applies one edit-log operation. Live mutations build the op after
// their checks and call apply; replay calls it for each logged op, so both
// change the tree through the same code.
func (ns *Tree) Apply(e Edit) error {
	if e.op == nil {
		return replayErr("empty edit")
	}
	defer ns.chargeQuota(e)()
	switch o := e.op.Op.(type) {
	case *namenodepb.EditOp_SetQuota:
		return ns.applySetQuota(o.SetQuota)
	case *namenodepb.EditOp_Concat:
		return ns.applyConcat(o.Concat)
	case *namenodepb.EditOp_Mkdir:
		return ns.applyMkdir(o.Mkdir)
	case *namenodepb.EditOp_AddFile:
		return ns.applyAddFile(o.AddFile)
	case *namenodepb.EditOp_CloseFile:
		n := ns.Lookup(o.CloseFile.GetPath())
		if n == nil || n.IsDir {
			return replayErr("close of missing file %s", o.CloseFile.GetPath())
		}
		ns.endCopy(n)
		n.SetUC(nil)
		n.Mtime = o.CloseFile.GetMtime()
		n.Atime = o.CloseFile.GetAtime()
		ns.setBlocks(n, blockInfos(o.CloseFile.GetBlocks()), true)
		return nil
	case *namenodepb.EditOp_AddBlock:
		n := ns.Lookup(o.AddBlock.GetPath())
		if n == nil || n.IsDir || n.UC() == nil {
			return replayErr("addBlock to %s, which is not being written", o.AddBlock.GetPath())
		}
		bs := BlockInfos(n.Blocks())
		if len(bs) > 0 {
			bs[len(bs)-1].NumBytes = int64(o.AddBlock.GetPreviousNumBytes())
		}
		ns.setBlocks(n, append(bs, blockInfos([]*namenodepb.Block{o.AddBlock.GetBlock()})...), false)
		return nil
	case *namenodepb.EditOp_UpdateBlocks:
		n := ns.Lookup(o.UpdateBlocks.GetPath())
		if n == nil || n.IsDir {
			return replayErr("updateBlocks of missing file %s", o.UpdateBlocks.GetPath())
		}
		ns.setBlocks(n, blockInfos(o.UpdateBlocks.GetBlocks()), n.UC() == nil)
		if k := len(n.Blocks()); k > 0 && o.UpdateBlocks.GetLastCommitted() {
			n.Blocks()[k-1].Committed = true
		}
		return nil
	case *namenodepb.EditOp_SetGenStamp:
		ns.Blocks.Note(0, o.SetGenStamp.GetGenStamp())
		return nil
	case *namenodepb.EditOp_ReopenFile:
		n := ns.Lookup(o.ReopenFile.GetPath())
		if n == nil || n.IsDir || n.UC() != nil {
			return replayErr("reopen of %s, which is missing or open", o.ReopenFile.GetPath())
		}
		n.SetUC(&UnderConstruction{ClientName: o.ReopenFile.GetClientName(), ClientMachine: o.ReopenFile.GetClientMachine()})
		n.Mtime = o.ReopenFile.GetMtime()
		if k := len(n.Blocks()); k > 0 {
			n.Blocks()[k-1].Committed = false
			n.Blocks()[k-1].Complete = false
		}
		return nil
	case *namenodepb.EditOp_Delete:
		return ns.applyDelete(o.Delete)
	case *namenodepb.EditOp_Rename:
		return ns.applyRename(o.Rename)
	case *namenodepb.EditOp_SetPermission:
		n := ns.Lookup(o.SetPermission.GetPath())
		if n == nil {
			return replayErr("setPermission of missing %s", o.SetPermission.GetPath())
		}
		n.Mode = uint16(o.SetPermission.GetMode() & 0o7777)
		return nil
	case *namenodepb.EditOp_SetOwner:
		n := ns.Lookup(o.SetOwner.GetPath())
		if n == nil {
			return replayErr("setOwner of missing %s", o.SetOwner.GetPath())
		}
		if o.SetOwner.Owner != nil {
			n.Owner = ns.names.of(o.SetOwner.GetOwner())
		}
		if o.SetOwner.Group != nil {
			n.Group = ns.names.of(o.SetOwner.GetGroup())
		}
		return nil
	case *namenodepb.EditOp_SetTimes:
		n := ns.Lookup(o.SetTimes.GetPath())
		if n == nil {
			return replayErr("setTimes of missing %s", o.SetTimes.GetPath())
		}
		if t := o.SetTimes.GetMtime(); t >= 0 {
			n.Mtime = t
		}
		if t := o.SetTimes.GetAtime(); t >= 0 {
			n.Atime = t
		}
		return nil
	case *namenodepb.EditOp_SetReplication:
		n := ns.Lookup(o.SetReplication.GetPath())
		if n == nil || n.IsDir {
			return replayErr("setReplication of missing file %s", o.SetReplication.GetPath())
		}
		n.SetReplication(uint16(o.SetReplication.GetReplication()))
		ns.blocksChanged(n)
		return nil
	case *namenodepb.EditOp_SetXattr:
		return ns.applySetXAttr(o.SetXattr)
	case *namenodepb.EditOp_RemoveXattr:
		return ns.applyRemoveXAttr(o.RemoveXattr)
	case *namenodepb.EditOp_SetAcl:
		return ns.applySetACL(o.SetAcl)
	case *namenodepb.EditOp_AllowSnapshot, *namenodepb.EditOp_DisallowSnapshot, *namenodepb.EditOp_CreateSnapshot,
		*namenodepb.EditOp_DeleteSnapshot, *namenodepb.EditOp_RenameSnapshot, *namenodepb.EditOp_CopyOnTruncate:
		return ns.applySnapshotOp(e.op)
	case *namenodepb.EditOp_UpdateMasterKey, *namenodepb.EditOp_GetDelegationToken,
		*namenodepb.EditOp_RenewDelegationToken, *namenodepb.EditOp_CancelDelegationToken:
		return ns.applyDelegationOp(e.op)
	case *namenodepb.EditOp_SetStoragePolicy:
		n := ns.Lookup(o.SetStoragePolicy.GetPath())
		if n == nil {
			return replayErr("setStoragePolicy of missing %s", o.SetStoragePolicy.GetPath())
		}
		n.StoragePolicy = uint8(o.SetStoragePolicy.GetPolicy())
		ns.blocksChanged(n)
		return nil
	}
	return replayErr("unknown edit op %T", e.op.Op)
}

func (ns *Tree) applyMkdir(o *namenodepb.OpMkdir) error {
	r := ns.Resolve(o.GetPath())
	if r.Exists() || len(r.Inodes) != len(r.Names) || !r.LastExisting().IsDir {
		return replayErr("mkdir %s: parent missing or target exists", o.GetPath())
	}
	parent := r.LastExisting()
	n := ns.newInode(o.GetId(), r.leafName(), true, o.GetPerm(), o.GetMtime())
	parent.addChild(n)
	parent.Mtime = o.GetMtime()
	inheritDefaultACL(n)
	return nil
}

func (ns *Tree) applyAddFile(o *namenodepb.OpAddFile) error {
	r := ns.Resolve(o.GetPath())
	if old := r.Target(); old != nil {
		if !o.GetOverwrite() || old.IsDir {
			return replayErr("add %s: exists", o.GetPath())
		}
		ns.removeSubtree(old)
		r = ns.Resolve(o.GetPath())
	}
	if len(r.Inodes) != len(r.Names) || !r.LastExisting().IsDir {
		return replayErr("add %s: parent missing", o.GetPath())
	}
	parent := r.LastExisting()
	n := ns.newInode(o.GetId(), r.leafName(), false, o.GetPerm(), o.GetMtime())
	n.Atime = o.GetMtime()
	n.SetReplication(uint16(o.GetReplication()))
	n.SetBlockSize(o.GetBlockSize())
	n.StoragePolicy = uint8(o.GetStoragePolicy())
	n.SetUC(&UnderConstruction{ClientName: o.GetClientName(), ClientMachine: o.GetClientMachine()})
	parent.addChild(n)
	parent.Mtime = o.GetMtime()
	inheritDefaultACL(n)
	return nil
}

// blocksChanged tells block management that what the blocks of the files
// at and under n need may have changed (their replication or storage
// policy): it lists them, skipping directories and files below n that set
// their own storage policy (what n's change cannot reach), unless block
// management would ignore the list, or the list would pass
// blocksChangedMax inodes and blocks: then it asks for one pass over every
// block instead.
func (ns *Tree) blocksChanged(n *Inode) {
	if !ns.Blocks.Watched() {
		return
	}
	budget := blocksChangedMax
	var walk func(x *Inode) bool
	walk = func(x *Inode) bool {
		bs := x.Blocks()
		if budget -= 1 + len(bs); budget < 0 {
			return false
		}
		for _, b := range bs {
			ns.Blocks.Changed(b.ID)
		}
		for _, c := range x.Children {
			if c.StoragePolicy == storage.Unspecified && !walk(c) {
				return false
			}
		}
		return true
	}
	if !walk(n) {
		ns.Blocks.ChangedAll()
	}
}

// blocksChangedMax bounds the inodes and blocks blocksChanged lists (a
// variable for tests).
var blocksChangedMax = 1 << 20

// removeSubtree unlinks n and forgets every inode below it.
func (ns *Tree) removeSubtree(n *Inode) {
	if n.Parent != nil {
		n.Parent.removeChild(n)
	}
	ns.dropFile(n)
	var walk func(*Inode)
	walk = func(x *Inode) {
		ns.byID.del(x.ID)
		ns.forgetSnapshottable(x)
		if x.IsDir {
			ns.dirCount--
			for _, c := range x.Children {
				walk(c)
			}
		} else {
			ns.fileCount--
		}
	}
	walk(n)
}

func (ns *Tree) applyDelete(o *namenodepb.OpDelete) error {
	n := ns.Lookup(o.GetPath())
	if n == nil || n.Parent == nil {
		return replayErr("delete of missing %s", o.GetPath())
	}
	parent := n.Parent
	ns.removeSubtree(n)
	parent.Mtime = o.GetMtime()
	return nil
}

func (ns *Tree) applyRename(o *namenodepb.OpRename) error {
	src := ns.Lookup(o.GetSrc())
	if src == nil || src.Parent == nil {
		return replayErr("rename of missing %s", o.GetSrc())
	}
	if dst := ns.Lookup(o.GetDst()); dst != nil {
		if !o.GetOverwrite() {
			return replayErr("rename %s onto existing %s", o.GetSrc(), o.GetDst())
		}
		ns.removeSubtree(dst)
	}
	r := ns.Resolve(o.GetDst())
	if len(r.Inodes) != len(r.Names) || !r.LastExisting().IsDir {
		return replayErr("rename to %s: parent missing", o.GetDst())
	}
	dstParent := r.LastExisting()
	if src.isAncestorOf(dstParent) {
		return replayErr("rename %s under itself", o.GetSrc())
	}
	srcParent := src.Parent
	oldPolicy := src.EffectivePolicyID()
	srcParent.removeChild(src)
	src.Name = r.leafName()
	dstParent.addChild(src)
	if src.EffectivePolicyID() != oldPolicy {
		ns.blocksChanged(src) // under another storage policy
	}
	srcParent.Mtime = o.GetMtime()
	dstParent.Mtime = o.GetMtime()
	return nil
}
