package namenode

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/stratafs/strata/internal/proto/namenodepb"
	"google.golang.org/protobuf/proto"
)

// Inode ids: the root is 16385 as in HDFS; later inodes count up from it.
const rootInodeID = 16385

// inode is a file or directory. Directories keep their children sorted by
// name (byte order), which is the order of listings.
type inode struct {
	id       uint64
	name     string
	parent   *inode
	isDir    bool
	children []*inode // directories only, sorted by name

	owner, group string
	mode         uint16 // 0o7777
	mtime, atime int64  // ms since the epoch

	// Files only.
	replication uint16
	blockSize   uint64
	blocks      []*block
	uc          *underConstruction

	storagePolicy uint8
}

type underConstruction struct {
	clientName, clientMachine string
}

func (n *inode) length() int64 { return fileLength(n) }

// path returns the inode's absolute path.
func (n *inode) path() string {
	if n.parent == nil {
		return "/"
	}
	var parts []string
	for p := n; p.parent != nil; p = p.parent {
		parts = append(parts, p.name)
	}
	var b strings.Builder
	for i := len(parts) - 1; i >= 0; i-- {
		b.WriteByte('/')
		b.WriteString(parts[i])
	}
	return b.String()
}

// childIndex returns the index of name in n.children, or where it would go.
func (n *inode) childIndex(name string) (int, bool) {
	i := sort.Search(len(n.children), func(i int) bool { return n.children[i].name >= name })
	return i, i < len(n.children) && n.children[i].name == name
}

func (n *inode) child(name string) *inode {
	if i, ok := n.childIndex(name); ok {
		return n.children[i]
	}
	return nil
}

func (n *inode) addChild(c *inode) {
	i, _ := n.childIndex(c.name)
	n.children = append(n.children, nil)
	copy(n.children[i+1:], n.children[i:])
	n.children[i] = c
	c.parent = n
}

func (n *inode) removeChild(c *inode) {
	if i, ok := n.childIndex(c.name); ok && n.children[i] == c {
		n.children = append(n.children[:i], n.children[i+1:]...)
	}
	c.parent = nil
}

// isAncestorOf reports whether n is c or one of c's ancestors.
func (n *inode) isAncestorOf(c *inode) bool {
	for p := c; p != nil; p = p.parent {
		if p == n {
			return true
		}
	}
	return false
}

// namespace is the tree. It is not safe for concurrent use: the
// Namesystem's lock guards it.
type namespace struct {
	blocks    *blockMap
	root      *inode
	byID      map[uint64]*inode
	lastID    uint64
	fileCount int64
	dirCount  int64
}

func newNamespace(superuser, supergroup string) *namespace {
	root := &inode{id: rootInodeID, isDir: true, owner: superuser, group: supergroup, mode: 0o755}
	return &namespace{blocks: newBlockMap(), root: root, byID: map[uint64]*inode{rootInodeID: root}, lastID: rootInodeID, dirCount: 1}
}

// splitPath splits an absolute, validated path into components; "/" has none.
func splitPath(p string) []string {
	p = strings.Trim(p, "/")
	if p == "" {
		return nil
	}
	return strings.Split(p, "/")
}

// resolved is the result of walking a path: the inodes of every existing
// prefix. inodes[0] is the root; if the whole path exists, the last inode is
// its target and len(inodes) == len(names)+1.
type resolved struct {
	path   string
	names  []string
	inodes []*inode
}

func (r *resolved) exists() bool { return len(r.inodes) == len(r.names)+1 }
func (r *resolved) target() *inode {
	if r.exists() {
		return r.inodes[len(r.inodes)-1]
	}
	return nil
}

// lastExisting is the deepest existing inode on the path.
func (r *resolved) lastExisting() *inode { return r.inodes[len(r.inodes)-1] }

// parent is the target's parent directory if it exists (nil for "/").
func (r *resolved) parent() *inode {
	if len(r.names) == 0 {
		return nil
	}
	if len(r.inodes) >= len(r.names) {
		return r.inodes[len(r.names)-1]
	}
	return nil
}

// resolve walks p as far as it exists. A file in the middle of the path
// stops the walk there (the caller reports ParentNotDirectory).
func (ns *namespace) resolve(p string) *resolved {
	r := &resolved{path: p, names: splitPath(p), inodes: []*inode{ns.root}}
	cur := ns.root
	for _, name := range r.names {
		if !cur.isDir {
			break
		}
		next := cur.child(name)
		if next == nil {
			break
		}
		r.inodes = append(r.inodes, next)
		cur = next
	}
	return r
}

func (ns *namespace) lookup(p string) *inode { return ns.resolve(p).target() }

// errReplay marks an edit that does not fit the namespace it is replayed
// on: the log and image disagree, which must stop the NameNode.
var errReplay = errors.New("namenode: edit does not apply to the namespace")

func replayErr(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errReplay, fmt.Sprintf(format, args...))
}

func (ns *namespace) newInode(id uint64, name string, dir bool, perm *namenodepb.PermStatus, mtime int64) *inode {
	n := &inode{id: id, name: name, isDir: dir, owner: perm.GetOwner(), group: perm.GetGroup(), mode: uint16(perm.GetMode() & 0o7777), mtime: mtime}
	if id > ns.lastID {
		ns.lastID = id
	}
	ns.byID[id] = n
	if dir {
		ns.dirCount++
	} else {
		ns.fileCount++
	}
	return n
}

// apply applies one edit-log operation. Live mutations build the op after
// their checks and call apply; replay calls it for each logged op, so both
// change the tree through the same code.
func (ns *namespace) apply(op *namenodepb.EditOp) error {
	switch o := op.Op.(type) {
	case *namenodepb.EditOp_Mkdir:
		return ns.applyMkdir(o.Mkdir)
	case *namenodepb.EditOp_AddFile:
		return ns.applyAddFile(o.AddFile)
	case *namenodepb.EditOp_CloseFile:
		n := ns.lookup(o.CloseFile.GetPath())
		if n == nil || n.isDir {
			return replayErr("close of missing file %s", o.CloseFile.GetPath())
		}
		n.uc = nil
		n.mtime = o.CloseFile.GetMtime()
		n.atime = o.CloseFile.GetAtime()
		ns.blocks.setBlocks(n, o.CloseFile.GetBlocks(), true)
		return nil
	case *namenodepb.EditOp_AddBlock:
		n := ns.lookup(o.AddBlock.GetPath())
		if n == nil || n.isDir || n.uc == nil {
			return replayErr("addBlock to %s, which is not being written", o.AddBlock.GetPath())
		}
		bs := blocksProto(n.blocks)
		if len(bs) > 0 {
			bs[len(bs)-1].NumBytes = proto.Uint64(o.AddBlock.GetPreviousNumBytes())
		}
		ns.blocks.setBlocks(n, append(bs, o.AddBlock.GetBlock()), false)
		return nil
	case *namenodepb.EditOp_UpdateBlocks:
		n := ns.lookup(o.UpdateBlocks.GetPath())
		if n == nil || n.isDir {
			return replayErr("updateBlocks of missing file %s", o.UpdateBlocks.GetPath())
		}
		ns.blocks.setBlocks(n, o.UpdateBlocks.GetBlocks(), n.uc == nil)
		if k := len(n.blocks); k > 0 && o.UpdateBlocks.GetLastCommitted() {
			n.blocks[k-1].committed = true
		}
		return nil
	case *namenodepb.EditOp_SetGenStamp:
		ns.blocks.note(0, o.SetGenStamp.GetGenStamp())
		return nil
	case *namenodepb.EditOp_ReopenFile:
		n := ns.lookup(o.ReopenFile.GetPath())
		if n == nil || n.isDir || n.uc != nil {
			return replayErr("reopen of %s, which is missing or open", o.ReopenFile.GetPath())
		}
		n.uc = &underConstruction{clientName: o.ReopenFile.GetClientName(), clientMachine: o.ReopenFile.GetClientMachine()}
		n.mtime = o.ReopenFile.GetMtime()
		if k := len(n.blocks); k > 0 {
			n.blocks[k-1].committed = false
			n.blocks[k-1].complete = false
		}
		return nil
	case *namenodepb.EditOp_Delete:
		return ns.applyDelete(o.Delete)
	case *namenodepb.EditOp_Rename:
		return ns.applyRename(o.Rename)
	case *namenodepb.EditOp_SetPermission:
		n := ns.lookup(o.SetPermission.GetPath())
		if n == nil {
			return replayErr("setPermission of missing %s", o.SetPermission.GetPath())
		}
		n.mode = uint16(o.SetPermission.GetMode() & 0o7777)
		return nil
	case *namenodepb.EditOp_SetOwner:
		n := ns.lookup(o.SetOwner.GetPath())
		if n == nil {
			return replayErr("setOwner of missing %s", o.SetOwner.GetPath())
		}
		if o.SetOwner.Owner != nil {
			n.owner = o.SetOwner.GetOwner()
		}
		if o.SetOwner.Group != nil {
			n.group = o.SetOwner.GetGroup()
		}
		return nil
	case *namenodepb.EditOp_SetTimes:
		n := ns.lookup(o.SetTimes.GetPath())
		if n == nil {
			return replayErr("setTimes of missing %s", o.SetTimes.GetPath())
		}
		if t := o.SetTimes.GetMtime(); t >= 0 {
			n.mtime = t
		}
		if t := o.SetTimes.GetAtime(); t >= 0 {
			n.atime = t
		}
		return nil
	case *namenodepb.EditOp_SetReplication:
		n := ns.lookup(o.SetReplication.GetPath())
		if n == nil || n.isDir {
			return replayErr("setReplication of missing file %s", o.SetReplication.GetPath())
		}
		n.replication = uint16(o.SetReplication.GetReplication())
		return nil
	case *namenodepb.EditOp_SetStoragePolicy:
		n := ns.lookup(o.SetStoragePolicy.GetPath())
		if n == nil {
			return replayErr("setStoragePolicy of missing %s", o.SetStoragePolicy.GetPath())
		}
		n.storagePolicy = uint8(o.SetStoragePolicy.GetPolicy())
		return nil
	}
	return replayErr("unknown edit op %T", op.Op)
}

func (ns *namespace) applyMkdir(o *namenodepb.OpMkdir) error {
	r := ns.resolve(o.GetPath())
	if r.exists() || len(r.inodes) != len(r.names) || !r.lastExisting().isDir {
		return replayErr("mkdir %s: parent missing or target exists", o.GetPath())
	}
	parent := r.lastExisting()
	n := ns.newInode(o.GetId(), r.names[len(r.names)-1], true, o.GetPerm(), o.GetMtime())
	parent.addChild(n)
	parent.mtime = o.GetMtime()
	return nil
}

func (ns *namespace) applyAddFile(o *namenodepb.OpAddFile) error {
	r := ns.resolve(o.GetPath())
	if old := r.target(); old != nil {
		if !o.GetOverwrite() || old.isDir {
			return replayErr("add %s: exists", o.GetPath())
		}
		ns.removeSubtree(old)
		r = ns.resolve(o.GetPath())
	}
	if len(r.inodes) != len(r.names) || !r.lastExisting().isDir {
		return replayErr("add %s: parent missing", o.GetPath())
	}
	parent := r.lastExisting()
	n := ns.newInode(o.GetId(), r.names[len(r.names)-1], false, o.GetPerm(), o.GetMtime())
	n.atime = o.GetMtime()
	n.replication = uint16(o.GetReplication())
	n.blockSize = o.GetBlockSize()
	n.storagePolicy = uint8(o.GetStoragePolicy())
	n.uc = &underConstruction{clientName: o.GetClientName(), clientMachine: o.GetClientMachine()}
	parent.addChild(n)
	parent.mtime = o.GetMtime()
	return nil
}

// removeSubtree unlinks n and forgets every inode below it.
func (ns *namespace) removeSubtree(n *inode) {
	if n.parent != nil {
		n.parent.removeChild(n)
	}
	ns.blocks.dropFile(n)
	var walk func(*inode)
	walk = func(x *inode) {
		delete(ns.byID, x.id)
		if x.isDir {
			ns.dirCount--
			for _, c := range x.children {
				walk(c)
			}
		} else {
			ns.fileCount--
		}
	}
	walk(n)
}

func (ns *namespace) applyDelete(o *namenodepb.OpDelete) error {
	n := ns.lookup(o.GetPath())
	if n == nil || n.parent == nil {
		return replayErr("delete of missing %s", o.GetPath())
	}
	parent := n.parent
	ns.removeSubtree(n)
	parent.mtime = o.GetMtime()
	return nil
}

func (ns *namespace) applyRename(o *namenodepb.OpRename) error {
	src := ns.lookup(o.GetSrc())
	if src == nil || src.parent == nil {
		return replayErr("rename of missing %s", o.GetSrc())
	}
	if dst := ns.lookup(o.GetDst()); dst != nil {
		if !o.GetOverwrite() {
			return replayErr("rename %s onto existing %s", o.GetSrc(), o.GetDst())
		}
		ns.removeSubtree(dst)
	}
	r := ns.resolve(o.GetDst())
	if len(r.inodes) != len(r.names) || !r.lastExisting().isDir {
		return replayErr("rename to %s: parent missing", o.GetDst())
	}
	dstParent := r.lastExisting()
	if src.isAncestorOf(dstParent) {
		return replayErr("rename %s under itself", o.GetSrc())
	}
	srcParent := src.parent
	srcParent.removeChild(src)
	src.name = r.names[len(r.names)-1]
	dstParent.addChild(src)
	srcParent.mtime = o.GetMtime()
	dstParent.mtime = o.GetMtime()
	return nil
}
