package namespace

import (
	"fmt"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/namenodepb"
)

// Edit is one namespace change as the edit log records it. Its encoding
// (a namenodepb.EditOp, docs/format/namenode-storage.md) stays inside this
// package: callers build edits with the constructors below, apply them
// with Tree.Apply and store them with Marshal; replay decodes them with
// DecodeEdit or Tree.ApplyRecord. The zero Edit is invalid.
type Edit struct {
	op *namenodepb.EditOp
}

// Perm is an inode's owner, group and mode bits (0o7777).
type Perm struct {
	Owner, Group string
	Mode         uint16
}

func (p Perm) proto() *namenodepb.PermStatus {
	return &namenodepb.PermStatus{Owner: proto.String(p.Owner), Group: proto.String(p.Group), Mode: proto.Uint32(uint32(p.Mode))}
}

func blocksProto(bs []BlockInfo) []*namenodepb.Block {
	out := make([]*namenodepb.Block, len(bs))
	for i, b := range bs {
		out[i] = &namenodepb.Block{Id: proto.Uint64(b.ID), GenStamp: proto.Uint64(b.GenStamp), NumBytes: proto.Uint64(uint64(b.NumBytes))}
	}
	return out
}

func blockInfos(pbs []*namenodepb.Block) []BlockInfo {
	out := make([]BlockInfo, len(pbs))
	for i, b := range pbs {
		out[i] = BlockInfo{ID: b.GetId(), GenStamp: b.GetGenStamp(), NumBytes: int64(b.GetNumBytes())}
	}
	return out
}

// Mkdir creates directory path (whose parent exists) with inode id.
func Mkdir(id uint64, path string, perm Perm, mtime int64) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_Mkdir{Mkdir: &namenodepb.OpMkdir{
		Id: proto.Uint64(id), Path: proto.String(path), Mtime: proto.Int64(mtime), Perm: perm.proto(),
	}}}}
}

// NewFile describes a file created open for writing.
type NewFile struct {
	ID                        uint64
	Path                      string
	Perm                      Perm
	Mtime                     int64 // ms since the epoch; also the access time
	Replication               int
	BlockSize                 int64
	ClientName, ClientMachine string
	Overwrite                 bool  // replace an existing file at Path
	StoragePolicy             uint8 // storage.Unspecified to inherit
}

// AddFile creates the file f describes, under construction by its client.
func AddFile(f NewFile) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_AddFile{AddFile: &namenodepb.OpAddFile{
		Id: proto.Uint64(f.ID), Path: proto.String(f.Path), Mtime: proto.Int64(f.Mtime), Perm: f.Perm.proto(),
		Replication: proto.Uint32(uint32(f.Replication)), BlockSize: proto.Uint64(uint64(f.BlockSize)),
		ClientName: proto.String(f.ClientName), ClientMachine: proto.String(f.ClientMachine),
		Overwrite: proto.Bool(f.Overwrite), StoragePolicy: proto.Uint32(uint32(f.StoragePolicy)),
	}}}}
}

// CloseFile closes path with exactly blocks, all committed.
func CloseFile(path string, mtime, atime int64, blocks []BlockInfo) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_CloseFile{CloseFile: &namenodepb.OpCloseFile{
		Path: proto.String(path), Mtime: proto.Int64(mtime), Atime: proto.Int64(atime), Blocks: blocksProto(blocks),
	}}}}
}

// AddBlock appends b to open file path, first setting the length of the
// file's current last block to previousNumBytes.
func AddBlock(path string, b BlockInfo, previousNumBytes int64) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_AddBlock{AddBlock: &namenodepb.OpAddBlock{
		Path:             proto.String(path),
		Block:            blocksProto([]BlockInfo{b})[0],
		PreviousNumBytes: proto.Uint64(uint64(previousNumBytes)),
	}}}}
}

// UpdateBlocks replaces path's block list. With lastCommitted the last
// block of an open file is committed too.
func UpdateBlocks(path string, blocks []BlockInfo, lastCommitted bool) Edit {
	o := &namenodepb.OpUpdateBlocks{Path: proto.String(path), Blocks: blocksProto(blocks)}
	if lastCommitted {
		o.LastCommitted = proto.Bool(true)
	}
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_UpdateBlocks{UpdateBlocks: o}}}
}

// SetGenStamp records that generation stamp gs was handed out.
func SetGenStamp(gs uint64) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_SetGenStamp{SetGenStamp: &namenodepb.OpSetGenStamp{GenStamp: proto.Uint64(gs)}}}}
}

// ReopenFile opens closed file path for writing by client again.
func ReopenFile(path, client, clientMachine string, mtime int64) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_ReopenFile{ReopenFile: &namenodepb.OpReopenFile{
		Path: proto.String(path), ClientName: proto.String(client), ClientMachine: proto.String(clientMachine), Mtime: proto.Int64(mtime),
	}}}}
}

// Delete removes path and everything under it.
func Delete(path string, mtime int64) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_Delete{Delete: &namenodepb.OpDelete{
		Path: proto.String(path), Mtime: proto.Int64(mtime),
	}}}}
}

// Rename moves src to dst, the exact new name; overwrite replaces dst.
func Rename(src, dst string, mtime int64, overwrite bool) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_Rename{Rename: &namenodepb.OpRename{
		Src: proto.String(src), Dst: proto.String(dst), Mtime: proto.Int64(mtime), Overwrite: proto.Bool(overwrite),
	}}}}
}

// SetPermission sets path's mode bits (masked to 0o7777).
func SetPermission(path string, mode uint16) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_SetPermission{SetPermission: &namenodepb.OpSetPermission{
		Path: proto.String(path), Mode: proto.Uint32(uint32(mode & 0o7777)),
	}}}}
}

// SetOwner sets path's owner and group; "" leaves one unchanged.
func SetOwner(path, owner, group string) Edit {
	o := &namenodepb.OpSetOwner{Path: proto.String(path)}
	if owner != "" {
		o.Owner = proto.String(owner)
	}
	if group != "" {
		o.Group = proto.String(group)
	}
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_SetOwner{SetOwner: o}}}
}

// SetTimes sets path's times in ms; -1 leaves one unchanged.
func SetTimes(path string, mtime, atime int64) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_SetTimes{SetTimes: &namenodepb.OpSetTimes{
		Path: proto.String(path), Mtime: proto.Int64(mtime), Atime: proto.Int64(atime),
	}}}}
}

// SetReplication sets file path's target replication.
func SetReplication(path string, repl int) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_SetReplication{SetReplication: &namenodepb.OpSetReplication{
		Path: proto.String(path), Replication: proto.Uint32(uint32(repl)),
	}}}}
}

// SetStoragePolicy sets path's own storage policy id (storage.Unspecified
// unsets it).
func SetStoragePolicy(path string, id uint8) Edit {
	return Edit{&namenodepb.EditOp{Op: &namenodepb.EditOp_SetStoragePolicy{SetStoragePolicy: &namenodepb.OpSetStoragePolicy{
		Path: proto.String(path), Policy: proto.Uint32(uint32(id)),
	}}}}
}

// WithRPCIDs returns e carrying the client id and call id of the RPC that
// made it (Hadoop's rpcClientId and rpcCallId), for the NameNode's retry
// cache; e itself is unchanged. Tree.Apply ignores them.
func (e Edit) WithRPCIDs(clientID []byte, callID int32) Edit {
	if e.op == nil {
		return e
	}
	op := proto.CloneOf(e.op)
	op.RpcClientId = append([]byte(nil), clientID...)
	op.RpcCallId = proto.Int32(callID)
	return Edit{op}
}

// RPCIDs returns the RPC ids WithRPCIDs attached to e; ok is false when
// it has none.
func (e Edit) RPCIDs() (clientID []byte, callID int32, ok bool) {
	if e.op == nil || e.op.RpcClientId == nil || e.op.RpcCallId == nil {
		return nil, 0, false
	}
	return e.op.RpcClientId, e.op.GetRpcCallId(), true
}

// AddedFile returns the inode id and path of the file an AddFile edit
// creates; ok is false for every other edit.
func (e Edit) AddedFile() (id uint64, path string, ok bool) {
	a := e.op.GetAddFile()
	if a == nil {
		return 0, "", false
	}
	return a.GetId(), a.GetPath(), true
}

// ReopenedFile returns the path of the file a ReopenFile edit reopens for
// append; ok is false for every other edit.
func (e Edit) ReopenedFile() (path string, ok bool) {
	r := e.op.GetReopenFile()
	if r == nil {
		return "", false
	}
	return r.GetPath(), true
}

// Marshal encodes e as an edit log record.
func (e Edit) Marshal() ([]byte, error) {
	if e.op == nil {
		return nil, fmt.Errorf("namespace: marshal of an empty edit")
	}
	return proto.Marshal(e.op)
}

// DecodeEdit decodes an edit log record written by Marshal.
func DecodeEdit(rec []byte) (Edit, error) {
	var op namenodepb.EditOp
	if err := proto.Unmarshal(rec, &op); err != nil {
		return Edit{}, err
	}
	return Edit{&op}, nil
}

// ApplyRecord decodes one edit log record and applies it: the replay of
// the log after its image.
func (t *Tree) ApplyRecord(rec []byte) error {
	e, err := DecodeEdit(rec)
	if err != nil {
		return fmt.Errorf("namespace: edit does not decode: %w", err)
	}
	return t.Apply(e)
}
