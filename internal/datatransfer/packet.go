package datatransfer

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"

	"google.golang.org/protobuf/encoding/protowire"
)

// Packet geometry.
const (
	// BytesPerChecksum is the chunk size strata writes and serves: one
	// CRC32C per 512 data bytes (dfs.bytes-per-checksum).
	BytesPerChecksum = 512
	// ChecksumSize is the size of one CRC32 or CRC32C on the wire.
	ChecksumSize = 4
	// PacketDataSize is the data carried by a full packet, 128 chunks, in
	// both directions.
	PacketDataSize = 64 << 10
	// HeartbeatSeqno is the seqno of heartbeat packets and their acks.
	HeartbeatSeqno = -1

	// packetLengthsLen is the uint32 payload length plus the uint16 header
	// length in front of every packet.
	packetLengthsLen = 6
	// maxEncodedHeaderLen is the size of PacketHeaderProto with syncBlock.
	maxEncodedHeaderLen = 27
)

// PacketHeader is the decoded PacketHeaderProto of a packet.
type PacketHeader struct {
	// OffsetInBlock is the block offset of the packet's first data byte.
	OffsetInBlock int64
	// Seqno numbers packets from 0 (reads, Java writers) or 1 (the Go
	// client's writes); heartbeats have HeartbeatSeqno.
	Seqno int64
	// LastPacketInBlock marks the empty packet that ends a block.
	LastPacketInBlock bool
	// DataLen is the number of data bytes.
	DataLen int32
	// SyncBlock asks the DataNodes to fsync before acking (hsync).
	SyncBlock bool
}

// IsHeartbeat reports whether h is a keepalive: seqno -1 and no data.
func (h PacketHeader) IsHeartbeat() bool {
	return h.Seqno == HeartbeatSeqno && h.DataLen == 0 && !h.LastPacketInBlock
}

// appendHeader encodes h as PacketHeaderProto: fields 1–4 always, all of
// fixed width (25 bytes), syncBlock only when set (27 bytes), as Hadoop's
// PacketHeader does.
func appendHeader(b []byte, h PacketHeader) []byte {
	b = protowire.AppendTag(b, 1, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, uint64(h.OffsetInBlock))
	b = protowire.AppendTag(b, 2, protowire.Fixed64Type)
	b = protowire.AppendFixed64(b, uint64(h.Seqno))
	b = protowire.AppendTag(b, 3, protowire.VarintType)
	b = protowire.AppendVarint(b, protowire.EncodeBool(h.LastPacketInBlock))
	b = protowire.AppendTag(b, 4, protowire.Fixed32Type)
	b = protowire.AppendFixed32(b, uint32(h.DataLen))
	if h.SyncBlock {
		b = protowire.AppendTag(b, 5, protowire.VarintType)
		b = protowire.AppendVarint(b, 1)
	}
	return b
}

func headerLen(h PacketHeader) int {
	if h.SyncBlock {
		return maxEncodedHeaderLen
	}
	return maxEncodedHeaderLen - 2
}

var errBadHeader = fmt.Errorf("%w: malformed header", ErrBadPacket)

// parseHeader decodes a PacketHeaderProto. Unknown fields are skipped; the
// four required fields must be present.
func parseHeader(b []byte) (PacketHeader, error) {
	var h PacketHeader
	var seen uint8
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return h, errBadHeader
		}
		b = b[n:]
		switch {
		case num == 1 && typ == protowire.Fixed64Type:
			v, n := protowire.ConsumeFixed64(b)
			if n < 0 {
				return h, errBadHeader
			}
			h.OffsetInBlock, b, seen = int64(v), b[n:], seen|1
		case num == 2 && typ == protowire.Fixed64Type:
			v, n := protowire.ConsumeFixed64(b)
			if n < 0 {
				return h, errBadHeader
			}
			h.Seqno, b, seen = int64(v), b[n:], seen|2
		case num == 3 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return h, errBadHeader
			}
			h.LastPacketInBlock, b, seen = v != 0, b[n:], seen|4
		case num == 4 && typ == protowire.Fixed32Type:
			v, n := protowire.ConsumeFixed32(b)
			if n < 0 {
				return h, errBadHeader
			}
			h.DataLen, b, seen = int32(v), b[n:], seen|8
		case num == 5 && typ == protowire.VarintType:
			v, n := protowire.ConsumeVarint(b)
			if n < 0 {
				return h, errBadHeader
			}
			h.SyncBlock, b = v != 0, b[n:]
		case num >= 1 && num <= 5:
			return h, fmt.Errorf("%w: field %d has wire type %d", errBadHeader, num, typ)
		default:
			n := protowire.ConsumeFieldValue(num, typ, b)
			if n < 0 {
				return h, errBadHeader
			}
			b = b[n:]
		}
	}
	if seen != 15 {
		return h, fmt.Errorf("%w: required field missing", errBadHeader)
	}
	return h, nil
}

// Packet is one packet as read by a PacketReader. Checksums, Data and Raw
// alias the reader's buffer and are valid until its next call to Next.
type Packet struct {
	PacketHeader
	// Checksums holds the packet's checksums, ChecksumSize bytes each.
	Checksums []byte
	// Data holds DataLen bytes of block data.
	Data []byte
	// Raw is the whole packet as received, from the payload length through
	// the last data byte: a DataNode forwards it to the next node of a
	// write pipeline with one Write, without re-encoding.
	Raw []byte
}

// PacketReader reads packets from a stream, bounding what it accepts.
// It is not safe for concurrent use.
type PacketReader struct {
	// BytesPerChecksum and ChecksumSize describe the checksums the stream
	// carries (from OpWriteBlockProto.requestedChecksum or a read reply's
	// readOpChecksumInfo). When BytesPerChecksum > 0, Next refuses a packet
	// whose checksum bytes are not ChunkCount(offset, dataLen) ×
	// ChecksumSize; ChecksumSize 0 means the stream has no checksums
	// (CHECKSUM_NULL). NewPacketReader sets 512 and 4.
	BytesPerChecksum int
	ChecksumSize     int

	r   io.Reader
	max int
	buf []byte
}

// NewPacketReader returns a reader of packets from r whose payload length
// plus header length is at most maxPacket bytes (DefaultMaxPacketSize if
// maxPacket <= 0). The buffer grows with what actually arrives, so a
// length prefix alone never makes it allocate much.
func NewPacketReader(r io.Reader, maxPacket int) *PacketReader {
	if maxPacket <= 0 {
		maxPacket = DefaultMaxPacketSize
	}
	return &PacketReader{
		BytesPerChecksum: BytesPerChecksum,
		ChecksumSize:     ChecksumSize,
		r:                r,
		max:              maxPacket,
	}
}

// ErrBadPacket is wrapped by every error about a packet's framing.
var ErrBadPacket = errors.New("datatransfer: bad packet")

// Next reads the next packet. It returns io.EOF if the stream ends cleanly
// before a packet, io.ErrUnexpectedEOF if it ends inside one, and an error
// wrapping ErrBadPacket for a packet that is malformed or over the limit;
// after an error the stream is unusable.
func (pr *PacketReader) Next() (Packet, error) {
	return pr.NextInto(nil)
}

// NextInto is Next, except that a packet whose data fits in dst has its
// data read straight into dst (Packet.Data is then dst[:DataLen], and
// Packet.Raw holds only the lengths, header and checksums): a reader that
// hands the data on saves a copy. dst nil or too small reads as Next.
func (pr *PacketReader) NextInto(dst []byte) (Packet, error) {
	if cap(pr.buf) < packetLengthsLen {
		pr.buf = make([]byte, 0, 4096)
	}
	buf := pr.buf[:packetLengthsLen]
	if _, err := io.ReadFull(pr.r, buf); err != nil {
		return Packet{}, err
	}
	payloadLen := binary.BigEndian.Uint32(buf)
	hlen := int(binary.BigEndian.Uint16(buf[4:]))
	if payloadLen < 4 {
		return Packet{}, fmt.Errorf("%w: payload length %d < 4", ErrBadPacket, payloadLen)
	}
	if hlen > MaxPacketHeaderLen {
		return Packet{}, fmt.Errorf("%w: header length %d > %d", ErrBadPacket, hlen, MaxPacketHeaderLen)
	}
	if uint64(payloadLen)+uint64(hlen) > uint64(pr.max) {
		return Packet{}, fmt.Errorf("%w: payload length %d + header %d exceeds limit %d",
			ErrBadPacket, payloadLen, hlen, pr.max)
	}
	total := packetLengthsLen + hlen + int(payloadLen) - 4
	if dst != nil {
		return pr.nextInto(buf, hlen, total, dst)
	}
	buf, err := pr.fill(buf, total)
	if err != nil {
		return Packet{}, noEOF(err)
	}
	h, err := parseHeader(buf[packetLengthsLen : packetLengthsLen+hlen])
	if err != nil {
		return Packet{}, err
	}
	body := buf[packetLengthsLen+hlen:]
	if h.DataLen < 0 || int(h.DataLen) > len(body) {
		return Packet{}, fmt.Errorf("%w: data length %d with %d bytes of checksums and data",
			ErrBadPacket, h.DataLen, len(body))
	}
	return pr.finishPacket(h, buf, body[:len(body)-int(h.DataLen)], body[len(body)-int(h.DataLen):])
}

// nextInto reads the rest of a packet whose lengths are in buf: header
// and checksums into pr.buf, the data into dst when it fits.
func (pr *PacketReader) nextInto(buf []byte, hlen, total int, dst []byte) (Packet, error) {
	buf, err := pr.fill(buf, packetLengthsLen+hlen)
	if err != nil {
		return Packet{}, noEOF(err)
	}
	h, err := parseHeader(buf[packetLengthsLen : packetLengthsLen+hlen])
	if err != nil {
		return Packet{}, err
	}
	bodyLen := total - packetLengthsLen - hlen
	if h.DataLen < 0 || int(h.DataLen) > bodyLen {
		return Packet{}, fmt.Errorf("%w: data length %d with %d bytes of checksums and data",
			ErrBadPacket, h.DataLen, bodyLen)
	}
	if int(h.DataLen) > len(dst) {
		// Does not fit: read the whole packet into pr.buf.
		buf, err = pr.fill(buf, total)
		if err != nil {
			return Packet{}, noEOF(err)
		}
		body := buf[packetLengthsLen+hlen:]
		return pr.finishPacket(h, buf, body[:len(body)-int(h.DataLen)], body[len(body)-int(h.DataLen):])
	}
	sumEnd := total - int(h.DataLen)
	buf, err = pr.fill(buf, sumEnd)
	if err != nil {
		return Packet{}, noEOF(err)
	}
	data := dst[:h.DataLen]
	if _, err := io.ReadFull(pr.r, data); err != nil {
		return Packet{}, noEOF(err)
	}
	return pr.finishPacket(h, buf, buf[packetLengthsLen+hlen:], data)
}

// finishPacket checks a packet read whole and returns it.
func (pr *PacketReader) finishPacket(h PacketHeader, raw, sums, data []byte) (Packet, error) {
	if h.OffsetInBlock < 0 {
		return Packet{}, fmt.Errorf("%w: negative offset %d", ErrBadPacket, h.OffsetInBlock)
	}
	if h.LastPacketInBlock && h.DataLen != 0 {
		return Packet{}, fmt.Errorf("%w: last packet carries %d bytes", ErrBadPacket, h.DataLen)
	}
	if pr.BytesPerChecksum > 0 {
		want := ChunkCount(h.OffsetInBlock, int(h.DataLen), pr.BytesPerChecksum) * pr.ChecksumSize
		if len(sums) != want {
			return Packet{}, fmt.Errorf("%w: %d checksum bytes for %d data bytes at offset %d (want %d)",
				ErrBadPacket, len(sums), h.DataLen, h.OffsetInBlock, want)
		}
	}
	return Packet{
		PacketHeader: h,
		Checksums:    sums,
		Data:         data,
		Raw:          raw,
	}, nil
}

// fill reads until buf holds total bytes, growing the buffer at most to
// twice what has arrived so far.
func (pr *PacketReader) fill(buf []byte, total int) ([]byte, error) {
	for len(buf) < total {
		if len(buf) == cap(buf) {
			newCap := max(2*cap(buf), 64<<10)
			newCap = min(newCap, total)
			nb := make([]byte, len(buf), newCap)
			copy(nb, buf)
			buf = nb
			pr.buf = nb
		}
		end := min(total, cap(buf))
		n, err := io.ReadFull(pr.r, buf[len(buf):end])
		buf = buf[:len(buf)+n]
		if err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// smallPacket is the largest packet WritePacket copies into one buffer;
// larger ones go out with net.Buffers (writev on a TCP connection).
const smallPacket = 128 << 10

var packetPool = sync.Pool{New: func() any {
	b := make([]byte, 0, smallPacket)
	return &b
}}

// WritePacket writes one packet: payload length (4 + checksums + data),
// header length, the encoded header, checksums and data. h.DataLen is set
// from len(data). A packet of up to 128 KiB is assembled in a pooled buffer
// and written with a single Write.
func WritePacket(w io.Writer, h PacketHeader, checksums, data []byte) error {
	h.DataLen = int32(len(data))
	hdr := make([]byte, 0, packetLengthsLen+maxEncodedHeaderLen)
	hdr = appendPacketPrefix(hdr, h, len(checksums))
	total := len(hdr) + len(checksums) + len(data)
	if total <= smallPacket {
		bp := packetPool.Get().(*[]byte)
		b := append((*bp)[:0], hdr...)
		b = append(b, checksums...)
		b = append(b, data...)
		_, err := w.Write(b)
		*bp = b[:0]
		packetPool.Put(bp)
		return err
	}
	bufs := net.Buffers{hdr, checksums, data}
	_, err := bufs.WriteTo(w)
	return err
}

// appendPacketPrefix appends the payload length, header length and header
// of a packet with sumLen checksum bytes and h.DataLen data bytes.
func appendPacketPrefix(b []byte, h PacketHeader, sumLen int) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(4+sumLen+int(h.DataLen)))
	b = binary.BigEndian.AppendUint16(b, uint16(headerLen(h)))
	return appendHeader(b, h)
}
