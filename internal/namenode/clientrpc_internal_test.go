package namenode

import (
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// fileStatusProto fills the message from one allocation; it must say what
// a field-by-field construction says.
func TestFileStatusProtoFields(t *testing.T) {
	base := FileStatus{Name: "f", Length: 1 << 40, Mode: 0o1755, Owner: "alice", Group: "staff", Mtime: 1700000000123, Atime: 1700000000456,
		Replication: 3, BlockSize: 128 << 20, FileID: 16390, Children: 7, StoragePolicy: 12}
	for _, tc := range []struct {
		name     string
		mod      func(*FileStatus)
		withName bool
	}{
		{"file", func(*FileStatus) {}, false},
		{"named dir", func(st *FileStatus) { st.IsDir = true }, true},
		{"acl", func(st *FileStatus) { st.HasACL = true }, false},
		{"acl snapshottable dir", func(st *FileStatus) { st.IsDir, st.HasACL, st.SnapshotEnabled = true, true, true }, true},
	} {
		st := base
		tc.mod(&st)
		ft := hdfspb.HdfsFileStatusProto_IS_FILE
		if st.IsDir {
			ft = hdfspb.HdfsFileStatusProto_IS_DIR
		}
		want := &hdfspb.HdfsFileStatusProto{
			FileType: ft.Enum(), Path: []byte{}, Length: proto.Uint64(uint64(st.Length)),
			Permission: &hdfspb.FsPermissionProto{Perm: proto.Uint32(uint32(st.Mode))},
			Owner:      proto.String(st.Owner), Group: proto.String(st.Group),
			ModificationTime: proto.Uint64(uint64(st.Mtime)), AccessTime: proto.Uint64(uint64(st.Atime)),
			BlockReplication: proto.Uint32(uint32(st.Replication)), Blocksize: proto.Uint64(st.BlockSize),
			FileId: proto.Uint64(st.FileID), ChildrenNum: proto.Int32(int32(st.Children)), StoragePolicy: proto.Uint32(uint32(st.StoragePolicy)),
		}
		if tc.withName {
			want.Path = []byte(st.Name)
		}
		var flags uint32
		if st.HasACL {
			flags |= uint32(hdfspb.HdfsFileStatusProto_HAS_ACL)
			want.Permission.Perm = proto.Uint32(uint32(st.Mode) | permACLBit)
		}
		if st.SnapshotEnabled {
			flags |= uint32(hdfspb.HdfsFileStatusProto_SNAPSHOT_ENABLED)
		}
		if flags != 0 {
			want.Flags = proto.Uint32(flags)
		}
		got := fileStatusProto(&st, tc.withName)
		if !proto.Equal(got, want) {
			t.Errorf("%s: got %v, want %v", tc.name, got, want)
		}
		gb, _ := proto.MarshalOptions{Deterministic: true}.Marshal(got)
		wb, _ := proto.MarshalOptions{Deterministic: true}.Marshal(want)
		if string(gb) != string(wb) {
			t.Errorf("%s: encodings differ", tc.name)
		}
	}
}
