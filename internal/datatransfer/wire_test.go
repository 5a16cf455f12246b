package datatransfer

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/hdfspb"
)

func TestRequestBytes(t *testing.T) {
	msg := &hdfspb.OpBlockChecksumProto{Header: &hdfspb.BaseHeaderProto{Block: testBlock(7, 4)}}
	var buf bytes.Buffer
	if err := WriteRequest(&buf, OpBlockChecksum, msg); err != nil {
		t.Fatal(err)
	}
	body, _ := proto.Marshal(msg)
	want := append([]byte{0x00, 0x1c, 0x55, byte(len(body))}, body...)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("request bytes\n got % x\nwant % x", buf.Bytes(), want)
	}

	op, b, err := ReadRequest(bufio.NewReader(&buf))
	if err != nil || op != OpBlockChecksum || !bytes.Equal(b, body) {
		t.Fatalf("ReadRequest = %v, % x, %v", op, b, err)
	}
	if op.String() != "BLOCK_CHECKSUM" || Op(99).String() != "Op(99)" {
		t.Errorf("names: %v %v", op, Op(99))
	}
	for op := OpWriteBlock; op <= OpRequestShortCircuitShm; op++ {
		if op != OpReadMetadata && op.NewMessage() == nil {
			t.Errorf("%v has no message type", op)
		}
	}
}

func TestReadRequestErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want func(error) bool
	}{
		{"eof", nil, func(err error) bool { return err == io.EOF }},
		{"short header", []byte{0x00}, func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }},
		{"old version", []byte{0x00, 0x1b, 0x51, 0x00}, func(err error) bool {
			var ve *VersionError
			return errors.As(err, &ve) && ve.Got == 27 && strings.Contains(err.Error(), "version 27")
		}},
		{"unknown op", []byte{0x00, 0x1c, 0x10, 0x00}, func(err error) bool { return errors.Is(err, ErrUnknownOp) }},
		{"huge message", append([]byte{0x00, 0x1c, 0x51}, binary.AppendUvarint(nil, MaxOpSize+1)...),
			func(err error) bool { return errors.Is(err, ErrMessageTooLarge) }},
		{"truncated message", []byte{0x00, 0x1c, 0x51, 0x05, 0x01}, func(err error) bool { return errors.Is(err, io.ErrUnexpectedEOF) }},
		{"bad varint", []byte{0x00, 0x1c, 0x51, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01},
			func(err error) bool { return err != nil }},
	} {
		_, _, err := ReadRequest(bufio.NewReader(bytes.NewReader(tc.in)))
		if !tc.want(err) {
			t.Errorf("%s: unexpected error %v", tc.name, err)
		}
	}
}

func TestResponseAtLeastFiveBytes(t *testing.T) {
	var buf bytes.Buffer
	resp := &hdfspb.BlockOpResponseProto{Status: hdfspb.Status_SUCCESS.Enum()}
	if err := WriteResponse(&buf, resp); err != nil {
		t.Fatal(err)
	}
	// length 4: status SUCCESS, firstBadLink "".
	if want := []byte{0x04, 0x08, 0x00, 0x12, 0x00}; !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("reply % x, want % x", buf.Bytes(), want)
	}
	if resp.FirstBadLink != nil {
		t.Error("WriteResponse modified its argument")
	}
	got, err := ReadResponse(bufio.NewReader(&buf))
	if err != nil || got.GetStatus() != hdfspb.Status_SUCCESS {
		t.Fatalf("ReadResponse = %v, %v", got, err)
	}
	// An error with a message is long enough as it is.
	buf.Reset()
	WriteResponse(&buf, &hdfspb.BlockOpResponseProto{Status: hdfspb.Status_ERROR.Enum(), Message: proto.String("x")})
	if b := buf.Bytes(); len(b) != 6 || bytes.Contains(b, []byte{0x12, 0x00}) {
		t.Errorf("error reply % x", b)
	}
}

func TestPacketBytes(t *testing.T) {
	data := []byte("bar\n")
	sums := ComputeChunks(nil, 0, data, BytesPerChecksum)
	var buf bytes.Buffer
	h := PacketHeader{OffsetInBlock: 0, Seqno: 1}
	if err := WritePacket(&buf, h, sums, data); err != nil {
		t.Fatal(err)
	}
	hdr, _ := proto.Marshal(&hdfspb.PacketHeaderProto{
		OffsetInBlock: proto.Int64(0), Seqno: proto.Int64(1),
		LastPacketInBlock: proto.Bool(false), DataLen: proto.Int32(4),
	})
	if len(hdr) != 25 {
		t.Fatalf("proto header is %d bytes", len(hdr))
	}
	var want []byte
	want = binary.BigEndian.AppendUint32(want, 4+4+4) // payloadLen = 4 + sums + data
	want = binary.BigEndian.AppendUint16(want, 25)
	want = append(want, hdr...)
	want = binary.BigEndian.AppendUint32(want, CRC32C(data))
	want = append(want, data...)
	if !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("packet\n got % x\nwant % x", buf.Bytes(), want)
	}

	// The empty last packet: payloadLen 4, nothing after the header.
	buf.Reset()
	WritePacket(&buf, PacketHeader{OffsetInBlock: 4, Seqno: 2, LastPacketInBlock: true}, nil, nil)
	b := buf.Bytes()
	if binary.BigEndian.Uint32(b) != 4 || binary.BigEndian.Uint16(b[4:]) != 25 || len(b) != 31 {
		t.Fatalf("last packet % x", b)
	}
	pkt, err := NewPacketReader(bytes.NewReader(b), 0).Next()
	if err != nil || !pkt.LastPacketInBlock || pkt.OffsetInBlock != 4 || pkt.Seqno != 2 || len(pkt.Data) != 0 {
		t.Fatalf("read back %+v, %v", pkt, err)
	}
}

func TestHeaderMatchesProto(t *testing.T) {
	for _, h := range []PacketHeader{
		{},
		{OffsetInBlock: 1 << 40, Seqno: 12345, DataLen: 65536},
		{OffsetInBlock: 512, Seqno: -1},
		{OffsetInBlock: 7, Seqno: 3, LastPacketInBlock: true, SyncBlock: true},
		{OffsetInBlock: 1023, Seqno: 1 << 50, DataLen: 1, SyncBlock: true},
	} {
		m := &hdfspb.PacketHeaderProto{
			OffsetInBlock: proto.Int64(h.OffsetInBlock), Seqno: proto.Int64(h.Seqno),
			LastPacketInBlock: proto.Bool(h.LastPacketInBlock), DataLen: proto.Int32(h.DataLen),
		}
		if h.SyncBlock {
			m.SyncBlock = proto.Bool(true)
		}
		want, _ := proto.Marshal(m)
		got := appendHeader(nil, h)
		if !bytes.Equal(got, want) || len(got) != headerLen(h) {
			t.Errorf("%+v: header % x, proto % x", h, got, want)
		}
		back, err := parseHeader(want)
		if err != nil || back != h {
			t.Errorf("parse %+v: %+v, %v", h, back, err)
		}
	}
}

func TestAckBytes(t *testing.T) {
	var buf bytes.Buffer
	if err := WriteAck(&buf, &Ack{Seqno: -1, Replies: []hdfspb.Status{hdfspb.Status_SUCCESS}}); err != nil {
		t.Fatal(err)
	}
	// seqno is sint64: -1 zigzags to 1. reply unpacked, flag packed.
	if want := []byte{0x07, 0x08, 0x01, 0x10, 0x00, 0x22, 0x01, 0x00}; !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("ack % x, want % x", buf.Bytes(), want)
	}
	buf.Reset()
	WriteAck(&buf, &Ack{Seqno: 5, Replies: []hdfspb.Status{hdfspb.Status_SUCCESS, hdfspb.Status_ERROR}})
	if want := []byte{0x0a, 0x08, 0x0a, 0x10, 0x00, 0x10, 0x01, 0x22, 0x02, 0x00, 0x01}; !bytes.Equal(buf.Bytes(), want) {
		t.Fatalf("ack % x, want % x", buf.Bytes(), want)
	}
	a, err := ReadAck(bufio.NewReader(&buf))
	if err != nil || a.Seqno != 5 || len(a.Replies) != 2 || a.FirstBad() != 1 || a.OK() {
		t.Fatalf("ReadAck = %+v, %v", a, err)
	}

	// Flags win over replies; ECN bits (5-6) are not part of the status.
	m := &hdfspb.PipelineAckProto{Seqno: proto.Int64(9),
		Reply: []hdfspb.Status{hdfspb.Status_SUCCESS, hdfspb.Status_SUCCESS}, Flag: []uint32{1 << 5, 1<<5 | 2}}
	buf.Reset()
	WriteDelimited(&buf, m)
	a, err = ReadAck(bufio.NewReader(&buf))
	if err != nil || a.Replies[0] != hdfspb.Status_SUCCESS || a.Replies[1] != hdfspb.Status_ERROR_CHECKSUM {
		t.Fatalf("flags: %+v, %v", a, err)
	}

	// Upstream: own status first, downstream's flags kept.
	up := UpstreamAck(9, hdfspb.Status_SUCCESS, a)
	if len(up.Replies) != 3 || up.Replies[2] != hdfspb.Status_ERROR_CHECKSUM || up.Flags[2] != 1<<5|2 {
		t.Errorf("UpstreamAck = %+v", up)
	}
	if up := UpstreamAck(3, hdfspb.Status_SUCCESS, MirrorFailed); up.FirstBad() != 1 {
		t.Errorf("mirror failure ack %+v", up)
	}
	if up := UpstreamAck(3, hdfspb.Status_SUCCESS, nil); len(up.Replies) != 1 {
		t.Errorf("last node ack %+v", up)
	}
}

func TestMirrorWriteOp(t *testing.T) {
	op := &hdfspb.OpWriteBlockProto{
		Targets:            []*hdfspb.DatanodeInfoProto{testTarget("10.0.0.2", 1), testTarget("10.0.0.3", 1)},
		StorageType:        hdfspb.StorageTypeProto_SSD.Enum(),
		TargetStorageTypes: []hdfspb.StorageTypeProto{hdfspb.StorageTypeProto_DISK, hdfspb.StorageTypeProto_ARCHIVE},
		StorageId:          proto.String("s1"),
		TargetStorageIds:   []string{"s2", "s3"},
		TargetPinnings:     []bool{true, false},
		PipelineSize:       proto.Uint32(3),
	}
	m := MirrorWriteOp(op)
	if len(m.Targets) != 1 || m.Targets[0].GetId().GetIpAddr() != "10.0.0.3" ||
		m.GetStorageType() != hdfspb.StorageTypeProto_DISK || m.GetStorageId() != "s2" || !m.GetPinning() ||
		len(m.TargetStorageTypes) != 1 || m.TargetStorageIds[0] != "s3" || len(m.TargetPinnings) != 1 ||
		m.GetPipelineSize() != 3 {
		t.Errorf("MirrorWriteOp = %v", m)
	}
	if len(op.Targets) != 2 || op.GetStorageId() != "s1" {
		t.Error("MirrorWriteOp modified its argument")
	}
	if MirrorWriteOp(&hdfspb.OpWriteBlockProto{}) != nil {
		t.Error("MirrorWriteOp without targets")
	}
}

func TestBadIndex(t *testing.T) {
	targets := []*hdfspb.DatanodeInfoProto{testTarget("10.0.0.2", 9866), testTarget("10.0.0.3", 9866)}
	for link, want := range map[string]int{
		"":                   0,
		"10.0.0.2:9866":      1,
		"10.0.0.3:9866":      2,
		"host-10.0.0.3:9866": 2,
		"10.0.0.9:9866":      -1,
	} {
		if got := badIndex(link, targets); got != want {
			t.Errorf("badIndex(%q) = %d, want %d", link, got, want)
		}
	}
}
