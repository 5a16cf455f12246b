package datatransfer

import (
	"bytes"
	"crypto/md5"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// rawPacket builds packet bytes by hand: payloadLen, header length, header,
// then body.
func rawPacket(payloadLen uint32, hdr []byte, body []byte) []byte {
	b := binary.BigEndian.AppendUint32(nil, payloadLen)
	b = binary.BigEndian.AppendUint16(b, uint16(len(hdr)))
	b = append(b, hdr...)
	return append(b, body...)
}

func TestPacketReaderErrors(t *testing.T) {
	good := func(h PacketHeader, data []byte) []byte {
		var buf bytes.Buffer
		WritePacket(&buf, h, ComputeChunks(nil, h.OffsetInBlock, data, BytesPerChecksum), data)
		return buf.Bytes()
	}
	data := bytes.Repeat([]byte("x"), 1000)
	full := good(PacketHeader{Seqno: 1}, data)
	hdr := appendHeader(nil, PacketHeader{Seqno: 1, DataLen: 1000})

	for _, tc := range []struct {
		name string
		in   []byte
		want error
	}{
		{"clean eof", nil, io.EOF},
		{"truncated lengths", full[:3], io.ErrUnexpectedEOF},
		{"truncated header", full[:10], io.ErrUnexpectedEOF},
		{"truncated data", full[:len(full)-1], io.ErrUnexpectedEOF},
		{"payload below 4", rawPacket(3, hdr, nil), ErrBadPacket},
		{"header too long", rawPacket(4, make([]byte, MaxPacketHeaderLen+1), nil), ErrBadPacket},
		{"over limit", rawPacket(DefaultMaxPacketSize, hdr, nil), ErrBadPacket},
		{"data beyond payload", rawPacket(4+999, hdr, make([]byte, 999)), ErrBadPacket},
		{"negative data length", rawPacket(4, appendHeader(nil, PacketHeader{DataLen: -1}), nil), ErrBadPacket},
		{"negative offset", rawPacket(4, appendHeader(nil, PacketHeader{OffsetInBlock: -512}), nil), ErrBadPacket},
		{"last packet with data", good(PacketHeader{LastPacketInBlock: true}, []byte("x")), ErrBadPacket},
		{"too few checksums", rawPacket(4+4+1000, hdr, make([]byte, 4+1000)), ErrBadPacket},
		{"too many checksums", rawPacket(4+12+1000, hdr, make([]byte, 12+1000)), ErrBadPacket},
		{"garbage header", rawPacket(4, []byte{0xff, 0xff, 0xff}, nil), errBadHeader},
		{"missing field", rawPacket(4, hdr[:18], nil), errBadHeader},
		{"wrong wire type", rawPacket(4, []byte{0x08, 0x01, 0x11, 0, 0, 0, 0, 0, 0, 0, 0, 0x18, 0, 0x25, 0, 0, 0, 0}, nil), errBadHeader},
	} {
		_, err := NewPacketReader(bytes.NewReader(tc.in), 0).Next()
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: error %v, want %v", tc.name, err, tc.want)
		}
	}

	// A good packet reads back, with unknown header fields skipped.
	hdrX := append(appendHeader(nil, PacketHeader{Seqno: 4, DataLen: 3}), 0x30, 0x07) // field 6 varint
	body := append(ComputeChunks(nil, 0, []byte("abc"), BytesPerChecksum), "abc"...)
	pkt, err := NewPacketReader(bytes.NewReader(rawPacket(uint32(4+len(body)), hdrX, body)), 0).Next()
	if err != nil || string(pkt.Data) != "abc" || pkt.Seqno != 4 || len(pkt.Raw) != 6+len(hdrX)+len(body) {
		t.Fatalf("unknown field: %+v, %v", pkt, err)
	}
}

func TestPacketReaderDoesNotTrustLengths(t *testing.T) {
	// 15 MiB announced, 10 bytes sent: an error, and no 15 MiB buffer.
	in := rawPacket(15<<20, appendHeader(nil, PacketHeader{DataLen: 15<<20 - 4}), make([]byte, 10))
	pr := NewPacketReader(bytes.NewReader(in), 0)
	if _, err := pr.Next(); !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Fatalf("error %v", err)
	}
	if cap(pr.buf) > 128<<10 {
		t.Fatalf("buffer grew to %d bytes for 10 bytes of data", cap(pr.buf))
	}
}

func TestPacketReaderSequence(t *testing.T) {
	// Packets of growing sizes through one reader; Raw is byte-identical.
	var stream bytes.Buffer
	var raws [][]byte
	off := int64(0)
	for i, n := range []int{1, 511, 512, 513, PacketDataSize, 100, 3 << 20} {
		var one bytes.Buffer
		data := make([]byte, n)
		for j := range data {
			data[j] = byte(i + j)
		}
		WritePacket(&one, PacketHeader{OffsetInBlock: off, Seqno: int64(i)}, ComputeChunks(nil, off, data, BytesPerChecksum), data)
		raws = append(raws, bytes.Clone(one.Bytes()))
		stream.Write(one.Bytes())
		off += int64(n)
	}
	pr := NewPacketReader(&stream, 0)
	for i, raw := range raws {
		pkt, err := pr.Next()
		if err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
		if !bytes.Equal(pkt.Raw, raw) {
			t.Fatalf("packet %d: Raw differs", i)
		}
		if err := VerifyChunks(pkt.OffsetInBlock, pkt.Data, pkt.Checksums, BytesPerChecksum); err != nil {
			t.Fatalf("packet %d: %v", i, err)
		}
	}
	if _, err := pr.Next(); err != io.EOF {
		t.Fatalf("after the last packet: %v", err)
	}
}

func FuzzPacketReader(f *testing.F) {
	var buf bytes.Buffer
	WritePacket(&buf, PacketHeader{Seqno: 1}, ComputeChunks(nil, 0, []byte("bar\n"), 512), []byte("bar\n"))
	WritePacket(&buf, PacketHeader{OffsetInBlock: 4, Seqno: 2, LastPacketInBlock: true}, nil, nil)
	f.Add(buf.Bytes())
	buf.Reset()
	data := make([]byte, 1500)
	WritePacket(&buf, PacketHeader{OffsetInBlock: 1000, Seqno: 0, SyncBlock: true}, ComputeChunks(nil, 1000, data, 512), data)
	WritePacket(&buf, PacketHeader{Seqno: HeartbeatSeqno}, nil, nil)
	f.Add(buf.Bytes())
	f.Add(rawPacket(4, []byte{0xff}, nil))
	f.Add([]byte{0, 0, 0, 4, 0, 0})

	f.Fuzz(func(t *testing.T, in []byte) {
		pr := NewPacketReader(bytes.NewReader(in), 1<<20)
		for i := 0; i < 64; i++ {
			pkt, err := pr.Next()
			if err != nil {
				return
			}
			if int(pkt.DataLen) != len(pkt.Data) || pkt.DataLen < 0 || pkt.OffsetInBlock < 0 {
				t.Fatalf("inconsistent packet %+v", pkt.PacketHeader)
			}
			if len(pkt.Checksums) != ChunkCount(pkt.OffsetInBlock, len(pkt.Data), 512)*4 {
				t.Fatalf("checksum count %d for %d bytes", len(pkt.Checksums), len(pkt.Data))
			}
			if len(pkt.Raw) > len(in) || cap(pr.buf) > 2*len(in)+(64<<10) {
				t.Fatalf("raw %d bytes, buffer %d, from %d input bytes", len(pkt.Raw), cap(pr.buf), len(in))
			}
			VerifyChunks(pkt.OffsetInBlock, pkt.Data, pkt.Checksums, 512)
		}
	})
}

func TestChunkCount(t *testing.T) {
	for _, tc := range []struct {
		off       int64
		n, chunks int
	}{
		{0, 0, 0}, {0, 1, 1}, {0, 512, 1}, {0, 513, 2}, {0, 65536, 128},
		{1000, 24, 1}, {1000, 25, 2}, {1000, 100, 2}, {1000, 2000, 5}, {511, 1, 1}, {511, 2, 2},
		{1024, 100, 1}, {700, 0, 0},
	} {
		if got := ChunkCount(tc.off, tc.n, 512); got != tc.chunks {
			t.Errorf("ChunkCount(%d, %d) = %d, want %d", tc.off, tc.n, got, tc.chunks)
		}
		if got := len(ComputeChunks(nil, tc.off, make([]byte, tc.n), 512)) / 4; got != tc.chunks {
			t.Errorf("ComputeChunks(%d, %d) made %d", tc.off, tc.n, got)
		}
	}
}

func TestVerifyChunksMidChunk(t *testing.T) {
	block := make([]byte, 3000)
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range block {
		block[i] = byte(rng.Uint32())
	}
	// Data at block offset 1000: pieces [1000,1024) [1024,1536) [1536,2048) [2048,2560) [2560,3000).
	data := block[1000:]
	sums := ComputeChunks(nil, 1000, data, 512)
	if len(sums) != 5*4 {
		t.Fatalf("%d checksums", len(sums)/4)
	}
	if binary.BigEndian.Uint32(sums) != CRC32C(block[1000:1024]) || binary.BigEndian.Uint32(sums[4:]) != CRC32C(block[1024:1536]) {
		t.Fatal("pieces not cut on chunk boundaries")
	}
	if err := VerifyChunks(1000, data, sums, 512); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ flip, chunk int64 }{{1000, 1000}, {1023, 1000}, {1024, 1024}, {1600, 1536}, {2999, 2560}} {
		bad := bytes.Clone(data)
		bad[tc.flip-1000] ^= 1
		err := VerifyChunks(1000, bad, sums, 512)
		var ce *ChecksumError
		if !errors.As(err, &ce) || ce.Offset != tc.chunk || !errors.Is(err, ErrChecksum) {
			t.Errorf("flip at %d: %v, want chunk at %d", tc.flip, err, tc.chunk)
		}
	}
	if err := VerifyChunks(1000, data, sums[:16], 512); !errors.Is(err, ErrBadPacket) {
		t.Errorf("short checksums: %v", err)
	}

	// The stored CRC of a chunk filled in two packets extends with UpdateCRC32C.
	if UpdateCRC32C(CRC32C(block[512:1000]), block[1000:1024]) != CRC32C(block[512:1024]) {
		t.Error("UpdateCRC32C does not continue a CRC")
	}
	if CRC32C([]byte("123456789")) != 0xe3069283 || crc32.Checksum([]byte("123456789"), castagnoli) != 0xe3069283 {
		t.Error("CRC32C check value")
	}
}

func TestFileChecksumBar(t *testing.T) {
	// A one-block file holding "bar\n": one chunk, one CRC32C.
	blockMD5 := BlockChecksumMD5(ComputeChunks(nil, 0, []byte("bar\n"), BytesPerChecksum))
	got := hex.EncodeToString(FileChecksumMD5([][]byte{blockMD5}))
	if got != "27c076e4987344253650d3335a5d08ce" {
		t.Fatalf("file checksum %s", got)
	}
	empty := md5.Sum(make([]byte, 32))
	if !bytes.Equal(FileChecksumMD5(nil), empty[:]) {
		t.Error("empty file checksum")
	}
	// Three blocks: 48 bytes of MD5s padded to 64.
	three := [][]byte{blockMD5, blockMD5, blockMD5}
	want := md5.Sum(append(bytes.Repeat(blockMD5, 3), make([]byte, 16)...))
	if !bytes.Equal(FileChecksumMD5(three), want[:]) {
		t.Error("three-block padding")
	}
	if a := FileChecksumAlgorithm(0, 512, hdfspb.ChecksumTypeProto_CHECKSUM_CRC32C); a != "MD5-of-0MD5-of-512CRC32C" {
		t.Errorf("algorithm %q", a)
	}
}
