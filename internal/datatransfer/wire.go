package datatransfer

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/proto/hdfspb"
)

// Version is the DataTransferProtocol version strata speaks (Hadoop 2.x and
// 3.x: DataTransferProtocol.DATA_TRANSFER_VERSION).
const Version = 28

// Limits on what is read from the network.
const (
	// MaxOpSize bounds an op message and a BlockOpResponseProto.
	MaxOpSize = 1 << 20
	// MaxAckSize bounds a PipelineAckProto and a ClientReadStatusProto.
	MaxAckSize = 64 << 10
	// DefaultMaxPacketSize bounds payloadLen + header length of one packet,
	// as Hadoop's dfs.data.transfer.max.packet.size (16 MiB) does.
	DefaultMaxPacketSize = 16 << 20
	// MaxPacketHeaderLen bounds the PacketHeaderProto of one packet. Hadoop's
	// is 25 bytes, 27 with syncBlock.
	MaxPacketHeaderLen = 256
)

// Op is a DataTransferProtocol opcode, the byte after the version.
type Op byte

// Opcodes (Hadoop's protocol.datatransfer.Op).
const (
	OpWriteBlock             Op = 80
	OpReadBlock              Op = 81
	OpReadMetadata           Op = 82
	OpReplaceBlock           Op = 83
	OpCopyBlock              Op = 84
	OpBlockChecksum          Op = 85
	OpTransferBlock          Op = 86
	OpRequestShortCircuitFds Op = 87
	OpReleaseShortCircuitFds Op = 88
	OpRequestShortCircuitShm Op = 89
)

var opNames = map[Op]string{
	OpWriteBlock:             "WRITE_BLOCK",
	OpReadBlock:              "READ_BLOCK",
	OpReadMetadata:           "READ_METADATA",
	OpReplaceBlock:           "REPLACE_BLOCK",
	OpCopyBlock:              "COPY_BLOCK",
	OpBlockChecksum:          "BLOCK_CHECKSUM",
	OpTransferBlock:          "TRANSFER_BLOCK",
	OpRequestShortCircuitFds: "REQUEST_SHORT_CIRCUIT_FDS",
	OpReleaseShortCircuitFds: "RELEASE_SHORT_CIRCUIT_FDS",
	OpRequestShortCircuitShm: "REQUEST_SHORT_CIRCUIT_SHM",
}

// String returns Hadoop's name for the op, e.g. "WRITE_BLOCK".
func (op Op) String() string {
	if s, ok := opNames[op]; ok {
		return s
	}
	return fmt.Sprintf("Op(%d)", byte(op))
}

// Known reports whether op is one of the opcodes above.
func (op Op) Known() bool {
	_, ok := opNames[op]
	return ok
}

// NewMessage returns an empty message of the type that follows op on the
// wire, or nil for READ_METADATA (obsolete, no message type) and unknown
// ops.
func (op Op) NewMessage() proto.Message {
	switch op {
	case OpWriteBlock:
		return &hdfspb.OpWriteBlockProto{}
	case OpReadBlock:
		return &hdfspb.OpReadBlockProto{}
	case OpReplaceBlock:
		return &hdfspb.OpReplaceBlockProto{}
	case OpCopyBlock:
		return &hdfspb.OpCopyBlockProto{}
	case OpBlockChecksum:
		return &hdfspb.OpBlockChecksumProto{}
	case OpTransferBlock:
		return &hdfspb.OpTransferBlockProto{}
	case OpRequestShortCircuitFds:
		return &hdfspb.OpRequestShortCircuitAccessProto{}
	case OpReleaseShortCircuitFds:
		return &hdfspb.ReleaseShortCircuitAccessRequestProto{}
	case OpRequestShortCircuitShm:
		return &hdfspb.ShortCircuitShmRequestProto{}
	}
	return nil
}

// Errors of the framing layer.
var (
	// ErrMessageTooLarge: a length prefix exceeds the limit for its kind.
	ErrMessageTooLarge = errors.New("datatransfer: message exceeds size limit")
	// ErrUnknownOp: the opcode byte is none of the known ops.
	ErrUnknownOp = errors.New("datatransfer: unknown op")
)

// VersionError is returned by ReadRequest when a request carries another
// protocol version than Version.
type VersionError struct {
	Got uint16
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("datatransfer: unsupported protocol version %d (want %d)", e.Got, Version)
}

// WriteRequest writes an op request — 2-byte big-endian Version, the
// opcode, then msg varint-delimited — in a single Write.
func WriteRequest(w io.Writer, op Op, msg proto.Message) error {
	b := make([]byte, 3, 3+binary.MaxVarintLen32+proto.Size(msg))
	binary.BigEndian.PutUint16(b, Version)
	b[2] = byte(op)
	b, err := appendDelimited(b, msg)
	if err != nil {
		return fmt.Errorf("datatransfer: encode %v: %w", op, err)
	}
	_, err = w.Write(b)
	return err
}

// ReadRequest reads an op request header and returns the opcode and the
// op message's bytes (at most MaxOpSize; decode them with op.NewMessage and
// proto.Unmarshal). It returns io.EOF if r is at EOF before the first
// byte, which is how a client ends a kept-alive connection; a different
// version yields a *VersionError, an unknown opcode ErrUnknownOp.
func ReadRequest(r *bufio.Reader) (Op, []byte, error) {
	var hdr [3]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return 0, nil, err
	}
	if v := binary.BigEndian.Uint16(hdr[:2]); v != Version {
		return 0, nil, &VersionError{Got: v}
	}
	op := Op(hdr[2])
	if !op.Known() {
		return op, nil, fmt.Errorf("%w %d", ErrUnknownOp, hdr[2])
	}
	b, err := readDelimitedBytes(r, MaxOpSize)
	if err != nil {
		return op, nil, fmt.Errorf("datatransfer: read %v message: %w", op, noEOF(err))
	}
	return op, b, nil
}

// minReplyLen is the shortest reply colinmarc/hdfs can read: it reads 5
// bytes before decoding and hangs (or fails) on anything shorter.
const minReplyLen = 5

// WriteResponse writes resp varint-delimited in a single Write. A reply
// that would be shorter than 5 bytes (a bare status) gets an explicit empty
// firstBadLink, which Hadoop's DataNode always sets on WRITE_BLOCK replies
// and which the Go client needs to read the reply at all. resp is not
// modified.
func WriteResponse(w io.Writer, resp *hdfspb.BlockOpResponseProto) error {
	if size := proto.Size(resp); size+1 < minReplyLen && resp.FirstBadLink == nil {
		c := proto.Clone(resp).(*hdfspb.BlockOpResponseProto)
		c.FirstBadLink = proto.String("")
		resp = c
	}
	return WriteDelimited(w, resp)
}

// ReadResponse reads a varint-delimited BlockOpResponseProto of at most
// MaxOpSize bytes. It does not interpret the status.
func ReadResponse(r *bufio.Reader) (*hdfspb.BlockOpResponseProto, error) {
	resp := &hdfspb.BlockOpResponseProto{}
	if err := ReadDelimited(r, resp, MaxOpSize); err != nil {
		return nil, noEOF(err)
	}
	return resp, nil
}

// WriteDelimited writes msg preceded by its size as a varint, in a single
// Write.
func WriteDelimited(w io.Writer, msg proto.Message) error {
	b, err := appendDelimited(make([]byte, 0, binary.MaxVarintLen32+proto.Size(msg)), msg)
	if err != nil {
		return fmt.Errorf("datatransfer: encode %T: %w", msg, err)
	}
	_, err = w.Write(b)
	return err
}

// ReadDelimited reads a varint size and then that many bytes into msg. It
// refuses sizes over max with ErrMessageTooLarge before allocating, never
// reads past the message, and returns io.EOF only when r is at EOF before
// the first byte.
func ReadDelimited(r *bufio.Reader, msg proto.Message, max int) error {
	b, err := readDelimitedBytes(r, max)
	if err != nil {
		return err
	}
	if err := proto.Unmarshal(b, msg); err != nil {
		return fmt.Errorf("datatransfer: decode %T: %w", msg, err)
	}
	return nil
}

func appendDelimited(b []byte, msg proto.Message) ([]byte, error) {
	size := proto.Size(msg)
	b = binary.AppendUvarint(b, uint64(size))
	return proto.MarshalOptions{}.MarshalAppend(b, msg)
}

func readDelimitedBytes(r *bufio.Reader, max int) ([]byte, error) {
	n, err := binary.ReadUvarint(r)
	if err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return nil, err
		}
		return nil, fmt.Errorf("datatransfer: bad length prefix: %w", err)
	}
	if n > uint64(max) {
		return nil, fmt.Errorf("%w: %d bytes (limit %d)", ErrMessageTooLarge, n, max)
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(r, b); err != nil {
		return nil, noEOF(err)
	}
	return b, nil
}

// noEOF turns io.EOF into io.ErrUnexpectedEOF, for reads that were expected
// to find data.
func noEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}
