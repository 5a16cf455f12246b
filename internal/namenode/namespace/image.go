package namespace

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/namenode/blockmgmt"

	"github.com/stratafs/strata/internal/proto/namenodepb"
)

// imageLayoutVersion versions the image payload (docs/format/namenode-storage.md).
const imageLayoutVersion = 1

// maxImageRecord bounds one record of an image so that a corrupt length
// cannot make the loader allocate without limit.
const maxImageRecord = 64 << 20

// WriteImage writes the namespace as an ImageHeader followed by every
// inode, parents before children, the snapshot sections and the live
// delegation tokens, each varint-length-delimited.
func (ns *Tree) WriteImage(w io.Writer) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	var buf []byte
	put := func(m proto.Message) error {
		b, err := proto.Marshal(m)
		if err != nil {
			return err
		}
		buf = protowire.AppendVarint(buf[:0], uint64(len(b)))
		buf = append(buf, b...)
		_, err = bw.Write(buf)
		return err
	}
	hdr := &namenodepb.ImageHeader{
		LayoutVersion: proto.Uint32(imageLayoutVersion),
		LastInodeId:   proto.Uint64(ns.lastID),
		LastBlockId:   proto.Uint64(ns.Blocks.LastID()),
		GenStamp:      proto.Uint64(ns.Blocks.LastGenStamp()),
		InodeCount:    proto.Uint64(uint64(ns.byID.len())),
	}
	ns.snapshotHeader(hdr)
	ns.delegationHeader(hdr)
	if err := put(hdr); err != nil {
		return err
	}
	var walk func(n *Inode) error
	walk = func(n *Inode) error {
		rec := inodeRecord(n)
		if err := put(rec); err != nil {
			return err
		}
		for _, c := range n.Children {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(ns.Root); err != nil {
		return err
	}
	if err := ns.writeSnapshots(put); err != nil {
		return err
	}
	if err := ns.writeDelegationTokens(put); err != nil {
		return err
	}
	return bw.Flush()
}

// inodeRecord is n's image record.
func inodeRecord(n *Inode) *namenodepb.Inode {
	rec := &namenodepb.Inode{
		Id: proto.Uint64(n.ID), Name: []byte(n.Name), IsDir: proto.Bool(n.IsDir),
		Perm:  &namenodepb.PermStatus{Owner: proto.String(n.Owner), Group: proto.String(n.Group), Mode: proto.Uint32(uint32(n.Mode))},
		Mtime: proto.Int64(n.Mtime), Atime: proto.Int64(n.Atime),
		StoragePolicy: proto.Uint32(uint32(n.StoragePolicy)),
	}
	if n.Parent != nil {
		rec.Parent = proto.Uint64(n.Parent.ID)
	}
	if !n.IsDir {
		rec.Replication = proto.Uint32(uint32(n.Replication()))
		rec.BlockSize = proto.Uint64(n.BlockSize())
		rec.Blocks = blocksProto(BlockInfos(n.Blocks()))
		if n.UC() != nil {
			rec.Uc = &namenodepb.FileUnderConstruction{ClientName: proto.String(n.UC().ClientName), ClientMachine: proto.String(n.UC().ClientMachine)}
		}
	}
	quotaToImage(n, rec)
	for _, x := range n.XAttrs() {
		rec.Xattrs = append(rec.Xattrs, xattrProto(x))
	}
	rec.Acl = aclProto(n.ACL())
	snapshotImageFields(n, rec)
	return rec
}

// attributesFrom sets n's extended attributes and ACL from its image
// record (a live inode's or a snapshot copy's).
func attributesFrom(n *Inode, rec *namenodepb.Inode) error {
	if xs := rec.GetXattrs(); len(xs) > 0 {
		n.setXAttrs(make([]XAttr, len(xs)))
		for j, x := range xs {
			n.XAttrs()[j] = xattrFrom(x)
		}
	}
	acl, err := aclFrom(rec.GetAcl())
	if err != nil {
		return fmt.Errorf("namenode: image inode %d: %w", n.ID, err)
	}
	n.setACL(acl)
	return nil
}

// ReadImage rebuilds a tree from WriteImage's output. Its files' blocks go
// into blocks, which should be empty.
func ReadImage(r io.Reader, blocks *blockmgmt.BlockMap) (*Tree, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	var buf []byte
	read := func() ([]byte, error) {
		n, err := readUvarint(br)
		if err != nil {
			return nil, err
		}
		if n > maxImageRecord {
			return nil, fmt.Errorf("image record of %d bytes exceeds the %d limit", n, maxImageRecord)
		}
		if uint64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(br, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	next := func(m proto.Message) error {
		b, err := read()
		if err != nil {
			return err
		}
		return proto.Unmarshal(b, m)
	}
	var hdr namenodepb.ImageHeader
	if err := next(&hdr); err != nil {
		return nil, fmt.Errorf("namenode: image header: %w", err)
	}
	if hdr.GetLayoutVersion() != imageLayoutVersion {
		return nil, fmt.Errorf("namenode: image layout version %d not supported (want %d)", hdr.GetLayoutVersion(), imageLayoutVersion)
	}
	ns := &Tree{Blocks: blocks, names: interner{}}
	var fast imageInode
	for i := uint64(0); i < hdr.GetInodeCount(); i++ {
		b, err := read()
		if err != nil {
			return nil, fmt.Errorf("namenode: image inode %d of %d: %w", i, hdr.GetInodeCount(), err)
		}
		var n *Inode
		var parentID uint64
		var hasParent bool
		if fast.decode(b) {
			n = ns.fastInode(&fast)
			parentID, hasParent = fast.parent, fast.hasParent
		} else {
			var rec namenodepb.Inode
			if err := proto.Unmarshal(b, &rec); err != nil {
				return nil, fmt.Errorf("namenode: image inode %d of %d: %w", i, hdr.GetInodeCount(), err)
			}
			if n, err = ns.imageInode(&rec); err != nil {
				return nil, err
			}
			parentID, hasParent = rec.GetParent(), rec.Parent != nil
		}
		if i == 0 {
			if n.ID != rootInodeID || hasParent {
				return nil, errors.New("namenode: image does not start with the root directory")
			}
			ns.Root = n
			continue
		}
		parent := ns.byID.get(parentID)
		if parent == nil || !parent.IsDir {
			return nil, fmt.Errorf("namenode: image inode %d (%q) has a bad parent %d", n.ID, n.Name, parentID)
		}
		// Siblings are written in name order; lookups rely on it.
		if k := len(parent.Children); k > 0 && parent.Children[k-1].Name >= n.Name {
			return nil, fmt.Errorf("namenode: image inode %d (%q) is out of order or duplicated in directory %d", n.ID, n.Name, parent.ID)
		}
		if n.Name == "" {
			return nil, fmt.Errorf("namenode: image inode %d has an empty name", n.ID)
		}
		parent.Children = append(parent.Children, n)
		n.Parent = parent
	}
	if ns.Root == nil {
		return nil, errors.New("namenode: image has no root")
	}
	if err := ns.readSnapshots(&hdr, next); err != nil {
		return nil, err
	}
	if err := ns.loadDelegation(&hdr, next); err != nil {
		return nil, err
	}
	if hdr.GetLastInodeId() > ns.lastID {
		ns.lastID = hdr.GetLastInodeId()
	}
	ns.Blocks.Note(hdr.GetLastBlockId(), hdr.GetGenStamp())
	ns.RecountQuotas()
	return ns, nil
}

// fastInode adds the inode of a record imageInode decoded.
func (ns *Tree) fastInode(r *imageInode) *Inode {
	n := &Inode{ID: r.id, Name: string(r.name), IsDir: r.isDir, Owner: ns.names.ofBytes(r.owner), Group: ns.names.ofBytes(r.group),
		Mode: uint16(r.mode & 0o7777), Mtime: r.mtime, Atime: r.atime, StoragePolicy: uint8(r.storagePolicy)}
	ns.addInode(n)
	if !n.IsDir {
		n.file = &fileFields{replication: uint16(r.replication), blockSize: r.blockSize}
		ns.setBlocks(n, r.blocks, true)
	}
	return n
}

// imageInode adds the inode of a record proto.Unmarshal decoded.
func (ns *Tree) imageInode(rec *namenodepb.Inode) (*Inode, error) {
	n := ns.newInode(rec.GetId(), string(rec.GetName()), rec.GetIsDir(), rec.GetPerm(), rec.GetMtime())
	n.Atime = rec.GetAtime()
	n.StoragePolicy = uint8(rec.GetStoragePolicy())
	if err := quotaFromImage(n, rec); err != nil {
		return nil, err
	}
	if err := attributesFrom(n, rec); err != nil {
		return nil, err
	}
	if !n.IsDir {
		n.SetReplication(uint16(rec.GetReplication()))
		n.SetBlockSize(rec.GetBlockSize())
		if uc := rec.GetUc(); uc != nil {
			n.SetUC(&UnderConstruction{ClientName: uc.GetClientName(), ClientMachine: uc.GetClientMachine()})
		}
		ns.setBlocks(n, blockInfos(rec.GetBlocks()), n.UC() == nil)
	}
	ns.loadSnapshotFields(n, rec)
	return n, nil
}

func readUvarint(br *bufio.Reader) (uint64, error) {
	var x uint64
	for shift := uint(0); ; shift += 7 {
		if shift >= 64 {
			return 0, errors.New("varint overflows")
		}
		b, err := br.ReadByte()
		if err != nil {
			if err == io.EOF && shift > 0 {
				err = io.ErrUnexpectedEOF
			}
			return 0, err
		}
		x |= uint64(b&0x7f) << shift
		if b < 0x80 {
			return x, nil
		}
	}
}
