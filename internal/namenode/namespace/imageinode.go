package namespace

import "google.golang.org/protobuf/encoding/protowire"

// imageInode is an image's Inode record (docs/format/namenode-storage.md)
// decoded without the protobuf runtime, for the loader: the fields every
// directory and closed file has. Decoding a million records with
// proto.Unmarshal allocates a message, a PermStatus, a pointer per
// optional field and a Block per block for each, all garbage a moment
// later; this decoder allocates nothing (name, owner and group alias the
// record). Records with any other field — a file being written, extended
// attributes, ACLs, quotas, snapshots, or fields this version does not
// know — and malformed records are left to proto.Unmarshal, which
// decodes (or refuses) them as before.
type imageInode struct {
	id, parent    uint64
	hasParent     bool
	name          []byte
	isDir         bool
	hasPerm       bool
	owner, group  []byte
	mode          uint32
	mtime, atime  int64
	replication   uint32
	blockSize     uint64
	storagePolicy uint32
	blocks        []BlockInfo // reused from record to record
}

// Inode field numbers (proto/namenode/fsimage.proto).
const (
	inodeID            = 1
	inodeParent        = 2
	inodeName          = 3
	inodeIsDir         = 4
	inodePerm          = 5
	inodeMtime         = 6
	inodeAtime         = 7
	inodeReplication   = 8
	inodeBlockSize     = 9
	inodeStoragePolicy = 10
	inodeBlocks        = 12
)

// decode parses rec into r. It reports false when rec has a field the
// fast path does not take, or is not well formed; r is then unspecified.
func (r *imageInode) decode(rec []byte) bool {
	*r = imageInode{blocks: r.blocks[:0]}
	for len(rec) > 0 {
		num, typ, k := protowire.ConsumeTag(rec)
		if k < 0 {
			return false
		}
		rec = rec[k:]
		switch typ {
		case protowire.VarintType:
			v, k := protowire.ConsumeVarint(rec)
			if k < 0 {
				return false
			}
			rec = rec[k:]
			switch num {
			case inodeID:
				r.id = v
			case inodeParent:
				r.parent, r.hasParent = v, true
			case inodeIsDir:
				r.isDir = v != 0
			case inodeMtime:
				r.mtime = int64(v)
			case inodeAtime:
				r.atime = int64(v)
			case inodeReplication:
				r.replication = uint32(v)
			case inodeBlockSize:
				r.blockSize = v
			case inodeStoragePolicy:
				r.storagePolicy = uint32(v)
			default:
				return false
			}
		case protowire.BytesType:
			v, k := protowire.ConsumeBytes(rec)
			if k < 0 {
				return false
			}
			rec = rec[k:]
			switch num {
			case inodeName:
				r.name = v
			case inodePerm:
				// A second PermStatus would be merged into the first:
				// proto.Unmarshal's business.
				if r.hasPerm || !r.decodePerm(v) {
					return false
				}
				r.hasPerm = true
			case inodeBlocks:
				b, ok := decodeImageBlock(v)
				if !ok {
					return false
				}
				r.blocks = append(r.blocks, b)
			default:
				return false
			}
		default:
			return false
		}
	}
	return true
}

// decodePerm parses a PermStatus{owner = 1, group = 2, mode = 3}.
func (r *imageInode) decodePerm(b []byte) bool {
	for len(b) > 0 {
		num, typ, k := protowire.ConsumeTag(b)
		if k < 0 {
			return false
		}
		b = b[k:]
		switch {
		case (num == 1 || num == 2) && typ == protowire.BytesType:
			v, k := protowire.ConsumeBytes(b)
			if k < 0 {
				return false
			}
			b = b[k:]
			if num == 1 {
				r.owner = v
			} else {
				r.group = v
			}
		case num == 3 && typ == protowire.VarintType:
			v, k := protowire.ConsumeVarint(b)
			if k < 0 {
				return false
			}
			b = b[k:]
			r.mode = uint32(v)
		default:
			return false
		}
	}
	return true
}

// decodeImageBlock parses a Block{id = 1, gen_stamp = 2, num_bytes = 3}.
func decodeImageBlock(b []byte) (BlockInfo, bool) {
	var info BlockInfo
	for len(b) > 0 {
		num, typ, k := protowire.ConsumeTag(b)
		if k < 0 || typ != protowire.VarintType {
			return info, false
		}
		b = b[k:]
		v, k := protowire.ConsumeVarint(b)
		if k < 0 {
			return info, false
		}
		b = b[k:]
		switch num {
		case 1:
			info.ID = v
		case 2:
			info.GenStamp = v
		case 3:
			info.NumBytes = int64(v)
		default:
			return info, false
		}
	}
	return info, true
}
