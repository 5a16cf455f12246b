package namenode

import (
	"bufio"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/namenodepb"
)

// imageLayoutVersion versions the image payload (docs/format/namenode-storage.md).
const imageLayoutVersion = 1

// maxImageRecord bounds one record of an image so that a corrupt length
// cannot make the loader allocate without limit.
const maxImageRecord = 64 << 20

// writeImage writes the namespace as an ImageHeader followed by every
// inode, parents before children, each varint-length-delimited.
func (ns *namespace) writeImage(w io.Writer) error {
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
		LastBlockId:   proto.Uint64(ns.blocks.lastID),
		GenStamp:      proto.Uint64(ns.blocks.lastGS),
		InodeCount:    proto.Uint64(uint64(len(ns.byID))),
	}
	if err := put(hdr); err != nil {
		return err
	}
	var walk func(n *inode) error
	walk = func(n *inode) error {
		rec := &namenodepb.Inode{
			Id: proto.Uint64(n.id), Name: []byte(n.name), IsDir: proto.Bool(n.isDir),
			Perm:  &namenodepb.PermStatus{Owner: proto.String(n.owner), Group: proto.String(n.group), Mode: proto.Uint32(uint32(n.mode))},
			Mtime: proto.Int64(n.mtime), Atime: proto.Int64(n.atime),
			StoragePolicy: proto.Uint32(uint32(n.storagePolicy)),
		}
		if n.parent != nil {
			rec.Parent = proto.Uint64(n.parent.id)
		}
		if !n.isDir {
			rec.Replication = proto.Uint32(uint32(n.replication))
			rec.BlockSize = proto.Uint64(n.blockSize)
			rec.Blocks = blocksProto(n.blocks)
			if n.uc != nil {
				rec.Uc = &namenodepb.FileUnderConstruction{ClientName: proto.String(n.uc.clientName), ClientMachine: proto.String(n.uc.clientMachine)}
			}
		}
		if err := put(rec); err != nil {
			return err
		}
		for _, c := range n.children {
			if err := walk(c); err != nil {
				return err
			}
		}
		return nil
	}
	if err := walk(ns.root); err != nil {
		return err
	}
	return bw.Flush()
}

// readImage rebuilds a namespace from writeImage's output.
func readImage(r io.Reader) (*namespace, error) {
	br := bufio.NewReaderSize(r, 1<<20)
	var buf []byte
	next := func(m proto.Message) error {
		n, err := readUvarint(br)
		if err != nil {
			return err
		}
		if n > maxImageRecord {
			return fmt.Errorf("image record of %d bytes exceeds the %d limit", n, maxImageRecord)
		}
		if uint64(cap(buf)) < n {
			buf = make([]byte, n)
		}
		buf = buf[:n]
		if _, err := io.ReadFull(br, buf); err != nil {
			return err
		}
		return proto.Unmarshal(buf, m)
	}
	var hdr namenodepb.ImageHeader
	if err := next(&hdr); err != nil {
		return nil, fmt.Errorf("namenode: image header: %w", err)
	}
	if hdr.GetLayoutVersion() != imageLayoutVersion {
		return nil, fmt.Errorf("namenode: image layout version %d not supported (want %d)", hdr.GetLayoutVersion(), imageLayoutVersion)
	}
	ns := &namespace{byID: map[uint64]*inode{}, blocks: newBlockMap()}
	for i := uint64(0); i < hdr.GetInodeCount(); i++ {
		var rec namenodepb.Inode
		if err := next(&rec); err != nil {
			return nil, fmt.Errorf("namenode: image inode %d of %d: %w", i, hdr.GetInodeCount(), err)
		}
		n := ns.newInode(rec.GetId(), string(rec.GetName()), rec.GetIsDir(), rec.GetPerm(), rec.GetMtime())
		n.atime = rec.GetAtime()
		n.storagePolicy = uint8(rec.GetStoragePolicy())
		if !n.isDir {
			n.replication = uint16(rec.GetReplication())
			n.blockSize = rec.GetBlockSize()
			if uc := rec.GetUc(); uc != nil {
				n.uc = &underConstruction{clientName: uc.GetClientName(), clientMachine: uc.GetClientMachine()}
			}
			ns.blocks.setBlocks(n, rec.GetBlocks(), n.uc == nil)
		}
		if i == 0 {
			if rec.GetId() != rootInodeID || rec.Parent != nil {
				return nil, errors.New("namenode: image does not start with the root directory")
			}
			ns.root = n
			continue
		}
		parent := ns.byID[rec.GetParent()]
		if parent == nil || !parent.isDir {
			return nil, fmt.Errorf("namenode: image inode %d (%q) has a bad parent %d", n.id, n.name, rec.GetParent())
		}
		// Siblings are written in name order; lookups rely on it.
		if k := len(parent.children); k > 0 && parent.children[k-1].name >= n.name {
			return nil, fmt.Errorf("namenode: image inode %d (%q) is out of order or duplicated in directory %d", n.id, n.name, parent.id)
		}
		if n.name == "" {
			return nil, fmt.Errorf("namenode: image inode %d has an empty name", n.id)
		}
		parent.children = append(parent.children, n)
		n.parent = parent
	}
	if ns.root == nil {
		return nil, errors.New("namenode: image has no root")
	}
	if hdr.GetLastInodeId() > ns.lastID {
		ns.lastID = hdr.GetLastInodeId()
	}
	ns.blocks.note(hdr.GetLastBlockId(), hdr.GetGenStamp())
	return ns, nil
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
