package datatransfer

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"sync"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// BlockSource is a replica as SendBlock reads it: data and the stored
// CRC32C of each 512-byte chunk.
type BlockSource interface {
	// ReadAt reads block data, as io.ReaderAt.
	io.ReaderAt
	// ReadChecksumsAt fills p with the big-endian CRC32C values of
	// len(p)/4 consecutive chunks, the first being chunk index first
	// (block bytes first×512 onwards). The checksum of the replica's last,
	// partial chunk must cover exactly the bytes readers may see.
	ReadChecksumsAt(p []byte, first int64) error
}

// FileSource is a BlockSource whose data is a plain file, which SendBlock
// then sends with sendfile(2) when the destination is a *net.TCPConn.
type FileSource interface {
	BlockSource
	// DataFile returns the file holding the block's data and the file
	// offset of block byte 0. SendBlock seeks and reads the file through
	// its own offset, so the file must not be used concurrently.
	DataFile() (f *os.File, base int64)
}

// A ReadaheadSource is a FileSource that asks SendBlock to keep the kernel
// reading its data file this many bytes ahead of what it sends
// (posix_fadvise WILLNEED, as Hadoop's dfs.datanode.readahead.bytes), so
// the disk works while the network sends; 0 leaves it to the kernel's own
// readahead.
type ReadaheadSource interface {
	FileSource
	Readahead() int64
}

// A Corker holds partial segments back while SendBlock streams packets
// (TCP_CORK, SetCork) and sends them when uncorked.
type Corker interface {
	Cork(on bool) error
}

// ReadRange checks a READ_BLOCK request for offset and length against a
// replica of which blockLen bytes are readable and returns the range a
// DataNode sends, as Hadoop's BlockSender computes it: start is offset
// rounded down to a chunk boundary, end is offset+length rounded up to one
// but at most blockLen. An invalid request returns an error whose text is
// fit for the reply's message.
func ReadRange(blockLen, offset, length int64) (start, end int64, err error) {
	if offset < 0 || length < 0 || offset > blockLen || length > blockLen-offset {
		return 0, 0, fmt.Errorf("offset %d and length %d don't match block (blockLen %d)",
			offset, length, blockLen)
	}
	start = offset - offset%BytesPerChecksum
	end = offset + length
	if r := end % BytesPerChecksum; r != 0 {
		end += BytesPerChecksum - r
	}
	return start, min(end, blockLen), nil
}

// sendBufs pools the ReadAt path's packet buffers.
var sendBufs = sync.Pool{New: func() any {
	b := make([]byte, sendBufSize)
	return &b
}}

const sendBufSize = packetLengthsLen + maxEncodedHeaderLen +
	PacketDataSize/BytesPerChecksum*ChecksumSize + PacketDataSize

// SendBlock writes block bytes [start, end) of src as READ_BLOCK packets —
// seqnos from 0, PacketDataSize bytes each, start on a chunk boundary —
// followed by the empty last packet. With checksums false the packets
// carry none (the request's sendChecksums=false, CHECKSUM_NULL).
//
// When src is a FileSource and w a *net.TCPConn, each packet's header and
// checksums are written first and its data follows with sendfile(2)
// ((*net.TCPConn).ReadFrom of an io.LimitedReader over the *os.File: the
// form Go hands to sendfile; an io.SectionReader is copied through user
// space). Otherwise data is read with ReadAt into a pooled buffer and each
// packet goes out in one Write.
//
// An error leaves w mid-packet: close the connection.
func SendBlock(w io.Writer, src BlockSource, start, end int64, checksums bool) error {
	if start < 0 || start%BytesPerChecksum != 0 || end < start {
		return fmt.Errorf("datatransfer: SendBlock range [%d, %d) is not chunk-aligned", start, end)
	}
	bp := sendBufs.Get().(*[]byte)
	defer sendBufs.Put(bp)
	buf := *bp

	var file *os.File
	var base int64
	var rf io.ReaderFrom
	if fs, ok := src.(FileSource); ok && end > start {
		if r, ok := w.(io.ReaderFrom); ok && isSocket(w) {
			f, b := fs.DataFile()
			if f != nil {
				if _, err := f.Seek(b+start, io.SeekStart); err != nil {
					return fmt.Errorf("datatransfer: seek block file: %w", err)
				}
				file, base, rf = f, b, r
			}
		}
	}
	var ahead, advised int64 // readahead length; block offset advised up to
	if rs, ok := src.(ReadaheadSource); ok && file != nil {
		ahead, advised = rs.Readahead(), start
	}
	if c, ok := w.(Corker); ok && file != nil {
		if c.Cork(true) == nil {
			defer c.Cork(false)
		}
	}

	seqno := int64(0)
	for off := start; off < end; seqno++ {
		n := int(min(PacketDataSize, end-off))
		sumLen := 0
		if checksums {
			sumLen = ChunkCount(off, n, BytesPerChecksum) * ChecksumSize
		}
		h := PacketHeader{OffsetInBlock: off, Seqno: seqno, DataLen: int32(n)}
		b := appendPacketPrefix(buf[:0], h, sumLen)
		sums := buf[len(b) : len(b)+sumLen]
		if checksums {
			if err := src.ReadChecksumsAt(sums, off/BytesPerChecksum); err != nil {
				return fmt.Errorf("datatransfer: read checksums at offset %d: %w", off, err)
			}
		}
		b = buf[:len(b)+sumLen]
		if ahead > 0 && advised < end && off+ahead/2 >= advised {
			// As Hadoop's ReadaheadPool: once half the last window is
			// sent, ask for the next one.
			n := min(ahead, end-advised)
			adviseWillNeed(file, base+advised, n)
			advised += n
		}
		if file != nil {
			if _, err := w.Write(b); err != nil {
				return err
			}
			lr := &io.LimitedReader{R: file, N: int64(n)}
			sent, err := rf.ReadFrom(lr)
			if err != nil {
				return err
			}
			if sent != int64(n) {
				return fmt.Errorf("datatransfer: block file ended at offset %d, before %d", off+sent, end)
			}
		} else {
			data := buf[len(b) : len(b)+n]
			if got, err := src.ReadAt(data, off); got < n {
				if err == nil || err == io.EOF {
					err = fmt.Errorf("replica ended at offset %d, before %d", off+int64(got), end)
				}
				return fmt.Errorf("datatransfer: read block data: %w", err)
			}
			if _, err := w.Write(buf[:len(b)+n]); err != nil {
				return err
			}
		}
		off += int64(n)
	}
	last := PacketHeader{OffsetInBlock: end, Seqno: seqno, LastPacketInBlock: true}
	_, err := w.Write(appendPacketPrefix(buf[:0], last, 0))
	return err
}

// isSocket reports whether w is a connection whose ReadFrom can use
// sendfile(2) (a TCP or Unix socket). A connection with a SASL security
// layer says NoSendfile: its packets go out in one Write each, one
// wrapped message per packet, as peers expect.
func isSocket(w io.Writer) bool {
	if ns, ok := w.(interface{ NoSendfile() bool }); ok && ns.NoSendfile() {
		return false
	}
	_, ok := w.(interface {
		io.ReaderFrom
		CloseWrite() error
	})
	return ok
}

// ServeReadBlock answers a READ_BLOCK request on a DataNode: it checks the
// range against blockLen (the replica's readable length), replies
// SUCCESS with readOpChecksumInfo{CRC32C, 512, chunkOffset} — or ERROR with
// Hadoop's message — sends the packets with SendBlock, then reads the
// client's ClientReadStatusProto from r (Java clients send CHECKSUM_OK;
// colinmarc/hdfs closes instead, which is not an error). Afterwards the
// connection may carry the client's next op (Java clients keep it alive).
//
// It returns an error when the request was refused or the transfer failed;
// the caller should then close the connection. Set deadlines on the
// connection: reading the final status waits for the client.
func ServeReadBlock(w io.Writer, r *bufio.Reader, op *hdfspb.OpReadBlockProto, src BlockSource, blockLen int64) error {
	if op.GetOffset() > math.MaxInt64 || op.GetLen() > math.MaxInt64 {
		return refuse(w, fmt.Errorf("offset %d and length %d don't match block (blockLen %d)",
			op.GetOffset(), op.GetLen(), blockLen))
	}
	start, end, err := ReadRange(blockLen, int64(op.GetOffset()), int64(op.GetLen()))
	if err != nil {
		return refuse(w, err)
	}
	checksums := op.GetSendChecksums()
	ctype := hdfspb.ChecksumTypeProto_CHECKSUM_CRC32C
	if !checksums {
		ctype = hdfspb.ChecksumTypeProto_CHECKSUM_NULL
	}
	resp := &hdfspb.BlockOpResponseProto{
		Status: hdfspb.Status_SUCCESS.Enum(),
		ReadOpChecksumInfo: &hdfspb.ReadOpChecksumInfoProto{
			Checksum: &hdfspb.ChecksumProto{
				Type:             ctype.Enum(),
				BytesPerChecksum: proto.Uint32(BytesPerChecksum),
			},
			ChunkOffset: proto.Uint64(uint64(start)),
		},
	}
	if err := WriteResponse(w, resp); err != nil {
		return err
	}
	if err := SendBlock(w, src, start, end, checksums); err != nil {
		return err
	}
	var st hdfspb.ClientReadStatusProto
	if err := ReadDelimited(r, &st, MaxAckSize); err != nil && !errors.Is(err, io.EOF) {
		return fmt.Errorf("datatransfer: read client status: %w", err)
	}
	return nil
}

// refuse sends an ERROR reply carrying err's text and returns err.
func refuse(w io.Writer, err error) error {
	resp := &hdfspb.BlockOpResponseProto{
		Status:  hdfspb.Status_ERROR.Enum(),
		Message: proto.String(err.Error()),
	}
	if werr := WriteResponse(w, resp); werr != nil {
		return werr
	}
	return fmt.Errorf("datatransfer: refused READ_BLOCK: %w", err)
}

// NewBlockChecksumResponse builds the SUCCESS reply to BLOCK_CHECKSUM for a
// block whose chunk checksums (big-endian CRC32C, the last over the partial
// chunk) are checksums: bytesPerCrc 512, crcPerBlock = their number,
// blockChecksum = their MD5, crcType CRC32C.
func NewBlockChecksumResponse(checksums []byte) *hdfspb.BlockOpResponseProto {
	return &hdfspb.BlockOpResponseProto{
		Status: hdfspb.Status_SUCCESS.Enum(),
		ChecksumResponse: &hdfspb.OpBlockChecksumResponseProto{
			BytesPerCrc:   proto.Uint32(BytesPerChecksum),
			CrcPerBlock:   proto.Uint64(uint64(len(checksums) / ChecksumSize)),
			BlockChecksum: BlockChecksumMD5(checksums),
			CrcType:       hdfspb.ChecksumTypeProto_CHECKSUM_CRC32C.Enum(),
		},
	}
}

// MirrorWriteOp returns the WRITE_BLOCK op a DataNode forwards to the next
// node of the pipeline (op.Targets[0]): the same op with that node removed
// from targets, targetStorageTypes, targetStorageIds and targetPinnings,
// its storage type, storage ID and pinning moved into storageType,
// storageId and pinning — what Hadoop's DataXceiver sends. It returns nil
// when op has no targets. op is not modified.
func MirrorWriteOp(op *hdfspb.OpWriteBlockProto) *hdfspb.OpWriteBlockProto {
	if len(op.GetTargets()) == 0 {
		return nil
	}
	m := proto.Clone(op).(*hdfspb.OpWriteBlockProto)
	m.Targets = m.Targets[1:]
	m.StorageType = nil
	if len(m.TargetStorageTypes) > 0 {
		m.StorageType = m.TargetStorageTypes[0].Enum()
		m.TargetStorageTypes = m.TargetStorageTypes[1:]
	}
	m.StorageId = nil
	if len(m.TargetStorageIds) > 0 {
		m.StorageId = proto.String(m.TargetStorageIds[0])
		m.TargetStorageIds = m.TargetStorageIds[1:]
	}
	m.Pinning = nil
	if len(m.TargetPinnings) > 0 {
		m.Pinning = proto.Bool(m.TargetPinnings[0])
		m.TargetPinnings = m.TargetPinnings[1:]
	}
	return m
}
