package hdfspb

import (
	"bytes"
	"testing"

	"google.golang.org/protobuf/proto"
)

func marshal(t *testing.T, m proto.Message) []byte {
	t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		t.Fatalf("marshal %T: %v", m, err)
	}
	return b
}

func expectBytes(t *testing.T, what string, got, want []byte) {
	t.Helper()
	if !bytes.Equal(got, want) {
		t.Errorf("%s:\n got % x\nwant % x", what, got, want)
	}
}

// PacketHeaderProto must use fixed-width encodings (sfixed64/sfixed32), so
// that its length does not depend on the values: datanodes and clients size
// their buffers from it.
func TestPacketHeaderIsFixedWidth(t *testing.T) {
	h := &PacketHeaderProto{
		OffsetInBlock:     proto.Int64(0),
		Seqno:             proto.Int64(1),
		LastPacketInBlock: proto.Bool(false),
		DataLen:           proto.Int32(512),
	}
	want := []byte{
		0x09, 0, 0, 0, 0, 0, 0, 0, 0, // 1: fixed64 0
		0x11, 1, 0, 0, 0, 0, 0, 0, 0, // 2: fixed64 1
		0x18, 0x00, // 3: varint false
		0x25, 0x00, 0x02, 0x00, 0x00, // 4: fixed32 512
	}
	expectBytes(t, "PacketHeaderProto", marshal(t, h), want)

	big := &PacketHeaderProto{
		OffsetInBlock:     proto.Int64(1 << 40),
		Seqno:             proto.Int64(-1),
		LastPacketInBlock: proto.Bool(true),
		DataLen:           proto.Int32(1 << 20),
	}
	if n := len(marshal(t, big)); n != len(want) {
		t.Errorf("header length depends on values: %d vs %d", n, len(want))
	}
	big.SyncBlock = proto.Bool(true)
	if n := len(marshal(t, big)); n != len(want)+2 {
		t.Errorf("header with syncBlock: %d bytes, want %d", n, len(want)+2)
	}
}

// PipelineAckProto.seqno is sint64 (zigzag); reply is an unpacked repeated
// enum; flag is packed.
func TestPipelineAckEncoding(t *testing.T) {
	expectBytes(t, "seqno -1",
		marshal(t, &PipelineAckProto{Seqno: proto.Int64(-1)}),
		[]byte{0x08, 0x01})

	ack := &PipelineAckProto{
		Seqno: proto.Int64(5),
		Reply: []Status{Status_SUCCESS, Status_ERROR_CHECKSUM},
		Flag:  []uint32{0, 0},
	}
	want := []byte{
		0x08, 0x0a, // 1: zigzag(5) = 10
		0x10, 0x00, // 2: SUCCESS, one tag per element
		0x10, 0x02, // 2: ERROR_CHECKSUM
		0x22, 0x02, 0x00, 0x00, // 4: packed [0, 0]
	}
	expectBytes(t, "PipelineAckProto", marshal(t, ack), want)
}

// An empty block token still carries all four (required) fields.
func TestEmptyToken(t *testing.T) {
	tok := &TokenProto{
		Identifier: []byte{},
		Password:   []byte{},
		Kind:       proto.String(""),
		Service:    proto.String(""),
	}
	expectBytes(t, "TokenProto", marshal(t, tok),
		[]byte{0x0a, 0x00, 0x12, 0x00, 0x1a, 0x00, 0x22, 0x00})

	if _, err := proto.Marshal(&TokenProto{}); err == nil {
		t.Error("TokenProto without required fields marshalled without error")
	}
}

func TestLocatedBlockRequiresToken(t *testing.T) {
	lb := &LocatedBlockProto{
		B: &ExtendedBlockProto{
			PoolId:          proto.String("BP-1"),
			BlockId:         proto.Uint64(1073741825),
			GenerationStamp: proto.Uint64(1001),
		},
		Offset:  proto.Uint64(0),
		Corrupt: proto.Bool(false),
	}
	if _, err := proto.Marshal(lb); err == nil {
		t.Fatal("LocatedBlockProto without blockToken marshalled without error")
	}
	lb.BlockToken = &TokenProto{Identifier: []byte{}, Password: []byte{}, Kind: proto.String(""), Service: proto.String("")}
	lb.IsCached = []bool{false, true}
	b := marshal(t, lb)
	// isCached is packed: tag 6, wire type 2 (0x32), length 2.
	if !bytes.HasSuffix(b, []byte{0x32, 0x02, 0x00, 0x01}) {
		t.Errorf("isCached not packed as expected: % x", b)
	}
}

func TestDefaults(t *testing.T) {
	var st HdfsFileStatusProto
	if st.GetFileId() != 0 {
		t.Errorf("fileId default %d, want 0", st.GetFileId())
	}
	if st.GetChildrenNum() != -1 {
		t.Errorf("childrenNum default %d, want -1", st.GetChildrenNum())
	}
	var fs FsyncRequestProto
	if fs.GetLastBlockLength() != -1 {
		t.Errorf("lastBlockLength default %d, want -1", fs.GetLastBlockLength())
	}
	var rb OpReadBlockProto
	if !rb.GetSendChecksums() {
		t.Error("sendChecksums default false, want true")
	}
	var sd FsServerDefaultsProto
	if sd.GetChecksumType() != ChecksumTypeProto_CHECKSUM_CRC32 {
		t.Errorf("checksumType default %v, want CHECKSUM_CRC32", sd.GetChecksumType())
	}
	// FsyncRequestProto.lastBlockLength is sint64: -1 encodes as zigzag 1.
	fs.Src, fs.Client, fs.LastBlockLength = proto.String(""), proto.String(""), proto.Int64(-1)
	expectBytes(t, "FsyncRequestProto", marshal(t, &fs),
		[]byte{0x0a, 0x00, 0x12, 0x00, 0x18, 0x01})
}

// The proto package must not be Hadoop's, or linking a client that registers
// hadoop.hdfs.* would panic.
func TestPackageName(t *testing.T) {
	name := (&HdfsFileStatusProto{}).ProtoReflect().Descriptor().FullName()
	if name != "strata.hadoop.hdfs.HdfsFileStatusProto" {
		t.Errorf("full name %q", name)
	}
}

// The service descriptor maps Hadoop method names to message types.
func TestServiceDescriptor(t *testing.T) {
	svc := File_hdfs_client_namenode_proto.Services().ByName("ClientNamenodeProtocol")
	if svc == nil {
		t.Fatal("no ClientNamenodeProtocol service")
	}
	m := svc.Methods().ByName("getFsStats")
	if m == nil {
		t.Fatal("no getFsStats method")
	}
	if in := m.Input().Name(); in != "GetFsStatusRequestProto" {
		t.Errorf("getFsStats input %s", in)
	}
	if out := m.Output().Name(); out != "GetFsStatsResponseProto" {
		t.Errorf("getFsStats output %s", out)
	}
}
