package datatransfer

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"net"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// ErrClosed is returned by calls on a closed BlockReader or BlockWriter.
var ErrClosed = errors.New("datatransfer: use of closed block stream")

// ErrProtocol is wrapped by errors about a peer that broke the protocol
// (packets out of sequence, at the wrong offset, beyond the range).
var ErrProtocol = errors.New("datatransfer: protocol violation")

// BlockReader reads a range of one block from one DataNode (READ_BLOCK),
// verifying every packet's checksums before returning any of its bytes.
// It is not safe for concurrent use, except Close.
type BlockReader struct {
	conn net.Conn
	ctx  context.Context
	stop func() bool
	pr   *PacketReader

	tab        *crc32.Table // nil when the DataNode sends no checksums
	bpc        int
	offset     int64 // block offset of the next byte Read returns
	end        int64 // offset + length as requested
	alignedEnd int64 // end rounded up to a chunk: the DataNode sends no further
	nextOff    int64 // offsetInBlock the next packet must have
	seqno      int64 // seqno of the last packet read
	cur        []byte
	err        error
}

// NewBlockReader sends READ_BLOCK for length bytes of block at offset over
// conn (to a DataNode's transfer port) and reads the reply. It takes
// ownership of conn: the reader closes it in Close, and NewBlockReader
// closes it on error. ctx bounds the whole read — its deadline applies to
// conn and cancelling it interrupts a blocked Read.
//
// A refusal is a *ResponseError (errors.Is ErrAccessToken for a bad
// token). clientName names the client in the DataNode's logs.
func NewBlockReader(ctx context.Context, conn net.Conn, clientName string, block *hdfspb.ExtendedBlockProto,
	token *hdfspb.TokenProto, offset, length int64) (*BlockReader, error) {
	if offset < 0 || length < 0 {
		conn.Close()
		return nil, fmt.Errorf("datatransfer: bad read range offset %d length %d", offset, length)
	}
	stop := bindContext(ctx, conn)
	br, err := startRead(conn, clientName, block, token, offset, length)
	if err != nil {
		stop()
		conn.Close()
		return nil, ctxError(ctx, err)
	}
	br.ctx, br.stop = ctx, stop
	return br, nil
}

func startRead(conn net.Conn, clientName string, block *hdfspb.ExtendedBlockProto,
	token *hdfspb.TokenProto, offset, length int64) (*BlockReader, error) {
	if token == nil {
		token = emptyToken()
	}
	op := &hdfspb.OpReadBlockProto{
		Header: &hdfspb.ClientOperationHeaderProto{
			BaseHeader: &hdfspb.BaseHeaderProto{Block: block, Token: token},
			ClientName: proto.String(clientName),
		},
		Offset:        proto.Uint64(uint64(offset)),
		Len:           proto.Uint64(uint64(length)),
		SendChecksums: proto.Bool(true),
	}
	if err := WriteRequest(conn, OpReadBlock, op); err != nil {
		return nil, err
	}
	return readReply(conn, OpReadBlock, offset, length)
}

// NewCopyBlockReader sends COPY_BLOCK for the whole of block (of
// block.NumBytes bytes) over conn and reads the reply: the balancer's
// copy from a proxy DataNode, read and verified as a READ_BLOCK is. It
// takes ownership of conn as NewBlockReader does.
func NewCopyBlockReader(ctx context.Context, conn net.Conn, block *hdfspb.ExtendedBlockProto, token *hdfspb.TokenProto) (*BlockReader, error) {
	if token == nil {
		token = emptyToken()
	}
	stop := bindContext(ctx, conn)
	fail := func(err error) (*BlockReader, error) {
		stop()
		conn.Close()
		return nil, ctxError(ctx, err)
	}
	op := &hdfspb.OpCopyBlockProto{Header: &hdfspb.BaseHeaderProto{Block: block, Token: token}}
	if err := WriteRequest(conn, OpCopyBlock, op); err != nil {
		return fail(err)
	}
	br, err := readReply(conn, OpCopyBlock, 0, int64(block.GetNumBytes()))
	if err != nil {
		return fail(err)
	}
	br.ctx, br.stop = ctx, stop
	return br, nil
}

// readReply reads the reply to a READ_BLOCK or COPY_BLOCK of length bytes
// at offset.
func readReply(conn net.Conn, opc Op, offset, length int64) (*BlockReader, error) {
	r := bufio.NewReaderSize(conn, 32<<10)
	resp, err := ReadResponse(r)
	if err != nil {
		return nil, err
	}
	if resp.GetStatus() != hdfspb.Status_SUCCESS {
		return nil, &ResponseError{Op: opc, Status: resp.GetStatus(), Message: resp.GetMessage()}
	}
	info := resp.GetReadOpChecksumInfo()
	if info == nil {
		return nil, fmt.Errorf("%w: %v reply without readOpChecksumInfo", ErrProtocol, opc)
	}
	br := &BlockReader{conn: conn, offset: offset, end: offset + length, seqno: -1}
	br.bpc = int(info.GetChecksum().GetBytesPerChecksum())
	if br.bpc <= 0 || br.bpc > PacketDataSize {
		return nil, fmt.Errorf("%w: bytesPerChecksum %d", ErrProtocol, br.bpc)
	}
	sumSize := ChecksumSize
	switch t := info.GetChecksum().GetType(); t {
	case hdfspb.ChecksumTypeProto_CHECKSUM_CRC32C:
		br.tab = castagnoli
	case hdfspb.ChecksumTypeProto_CHECKSUM_CRC32:
		br.tab = crc32.IEEETable
	case hdfspb.ChecksumTypeProto_CHECKSUM_NULL:
		sumSize = 0
	default:
		return nil, fmt.Errorf("%w: unsupported checksum type %v", ErrProtocol, t)
	}
	chunkOff := info.GetChunkOffset()
	if chunkOff > uint64(offset) || uint64(offset)-chunkOff >= uint64(br.bpc) {
		return nil, fmt.Errorf("%w: first chunk offset %d for read at %d", ErrProtocol, chunkOff, offset)
	}
	br.nextOff = int64(chunkOff)
	br.alignedEnd = br.end
	if rem := br.end % int64(br.bpc); rem != 0 {
		br.alignedEnd += int64(br.bpc) - rem
	}
	br.pr = NewPacketReader(r, DefaultMaxPacketSize)
	br.pr.BytesPerChecksum, br.pr.ChecksumSize = br.bpc, sumSize
	return br, nil
}

// emptyToken is the token Hadoop clients send when security is off.
func emptyToken() *hdfspb.TokenProto {
	return &hdfspb.TokenProto{
		Identifier: []byte{},
		Password:   []byte{},
		Kind:       proto.String(""),
		Service:    proto.String(""),
	}
}

// Read reads verified block data from the requested offset on, and io.EOF
// after the requested length. A corrupt chunk yields a *ChecksumError
// naming its block offset: report the replica and read the rest from
// another DataNode. Once Read has returned an error it returns the same
// error again.
func (br *BlockReader) Read(p []byte) (int, error) {
	if br.err != nil {
		return 0, br.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	for len(br.cur) == 0 {
		if br.offset >= br.end {
			if err := br.finish(); err != nil {
				br.err = err
				return 0, err
			}
			br.err = io.EOF
			return 0, io.EOF
		}
		var dst []byte
		if len(p) >= PacketDataSize {
			// Room for a whole packet: its data goes straight into p.
			dst = p
		}
		n, err := br.nextPacket(dst)
		if err != nil {
			br.err = err
			return 0, err
		}
		if n > 0 {
			br.offset += int64(n)
			return n, nil
		}
	}
	n := copy(p, br.cur)
	br.cur = br.cur[n:]
	br.offset += int64(n)
	return n, nil
}

// Offset returns the block offset of the next byte Read returns.
func (br *BlockReader) Offset() int64 { return br.offset }

// SetDeadline sets the deadline for the reader's I/O, as net.Conn's.
func (br *BlockReader) SetDeadline(t time.Time) error { return br.conn.SetDeadline(t) }

// Close closes the connection. It is safe to call more than once and
// concurrently with Read (which then fails).
func (br *BlockReader) Close() error {
	br.stop()
	err := br.conn.Close()
	if errors.Is(err, net.ErrClosed) {
		err = nil
	}
	return err
}

// next reads one packet and checks its place in the stream; its data is
// read into dst if it fits (PacketReader.NextInto).
func (br *BlockReader) next(dst []byte) (Packet, error) {
	pkt, err := br.pr.NextInto(dst)
	if err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return pkt, ctxError(br.ctx, fmt.Errorf("datatransfer: read packet: %w", err))
	}
	if pkt.Seqno != br.seqno+1 {
		return pkt, fmt.Errorf("%w: packet seqno %d after %d", ErrProtocol, pkt.Seqno, br.seqno)
	}
	br.seqno = pkt.Seqno
	if pkt.OffsetInBlock != br.nextOff {
		return pkt, fmt.Errorf("%w: packet at offset %d, expected %d", ErrProtocol, pkt.OffsetInBlock, br.nextOff)
	}
	if pkt.LastPacketInBlock {
		return pkt, nil
	}
	if pkt.DataLen == 0 {
		return pkt, fmt.Errorf("%w: empty packet %d before the end", ErrProtocol, pkt.Seqno)
	}
	pktEnd := pkt.OffsetInBlock + int64(pkt.DataLen)
	if pktEnd > br.alignedEnd {
		return pkt, fmt.Errorf("%w: packet ends at offset %d, beyond the range end %d", ErrProtocol, pktEnd, br.alignedEnd)
	}
	if br.tab != nil {
		if err := verifyChunks(br.tab, pkt.OffsetInBlock, pkt.Data, pkt.Checksums, br.bpc); err != nil {
			return pkt, err
		}
	}
	br.nextOff = pktEnd
	return pkt, nil
}

// nextPacket reads the next packet. Its verified bytes within
// [offset, end) become current, or, if its data was read into dst, are
// moved to the start of dst and counted in n.
func (br *BlockReader) nextPacket(dst []byte) (n int, err error) {
	pkt, err := br.next(dst)
	if err != nil {
		return 0, err
	}
	if pkt.LastPacketInBlock {
		return 0, fmt.Errorf("datatransfer: block ended at offset %d, before %d: %w",
			pkt.OffsetInBlock, br.end, io.ErrUnexpectedEOF)
	}
	lo := max(br.offset, pkt.OffsetInBlock) - pkt.OffsetInBlock
	hi := min(br.end, br.nextOff) - pkt.OffsetInBlock
	if lo >= hi {
		return 0, nil
	}
	if len(dst) > 0 && &pkt.Data[0] == &dst[0] {
		return copy(dst, pkt.Data[lo:hi]), nil
	}
	br.cur = pkt.Data[lo:hi]
	return 0, nil
}

// finish reads the rest of the stream up to the empty last packet and
// tells the DataNode the checksums were good, as Hadoop's clients do.
func (br *BlockReader) finish() error {
	for {
		pkt, err := br.next(nil)
		if err != nil {
			return err
		}
		if pkt.LastPacketInBlock {
			break
		}
	}
	status := hdfspb.Status_CHECKSUM_OK
	if br.tab == nil {
		status = hdfspb.Status_SUCCESS
	}
	// Like Hadoop, a client that got all its data ignores a failure here.
	_ = WriteDelimited(br.conn, &hdfspb.ClientReadStatusProto{Status: status.Enum()})
	return nil
}
