package ipc

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"
)

// Wire constants of Hadoop IPC.
const (
	// Version is the IPC protocol version this package speaks.
	Version = 9
	// AuthSimple and AuthSASL are the auth protocol bytes of the header.
	AuthSimple = 0x00
	AuthSASL   = 0xDF

	callIDConnectionContext = -3
	callIDPing              = -4
	callIDSASL              = -33

	// DefaultMaxDataLength is ipc.maximum.data.length's default.
	DefaultMaxDataLength = 128 << 20
)

var headerMagic = [4]byte{'h', 'r', 'p', 'c'}

// ErrFrameTooLarge is returned for a frame whose length exceeds the limit.
var ErrFrameTooLarge = errors.New("ipc: frame exceeds maximum data length")

// readFrame reads one length-prefixed packet, refusing lengths above max
// before allocating anything.
func readFrame(r io.Reader, max int) ([]byte, error) {
	var lenBuf [4]byte
	if _, err := io.ReadFull(r, lenBuf[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(lenBuf[:])
	if int64(n) > int64(max) {
		return nil, fmt.Errorf("%w: RPC data length of %d exceeds maximum data length of %d", ErrFrameTooLarge, n, max)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}

// appendFrame appends a frame holding the given messages, each
// varint-length-delimited, to dst.
func appendFrame(dst []byte, msgs ...proto.Message) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	opts := proto.MarshalOptions{}
	for _, m := range msgs {
		if m == nil {
			continue
		}
		size := opts.Size(m)
		dst = protowire.AppendVarint(dst, uint64(size))
		var err error
		dst, err = opts.MarshalAppend(dst, m)
		if err != nil {
			return nil, err
		}
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst, nil
}

// nextDelimited splits one varint-length-delimited message off buf.
func nextDelimited(buf []byte) (msg, rest []byte, err error) {
	n, vlen := protowire.ConsumeVarint(buf)
	if vlen < 0 {
		return nil, nil, errors.New("ipc: bad message length prefix")
	}
	if n > uint64(len(buf)-vlen) {
		return nil, nil, fmt.Errorf("ipc: message length %d exceeds frame (%d bytes left)", n, len(buf)-vlen)
	}
	end := vlen + int(n)
	return buf[vlen:end], buf[end:], nil
}

// unmarshalDelimited decodes the next delimited message of buf into m.
func unmarshalDelimited(buf []byte, m proto.Message) (rest []byte, err error) {
	msg, rest, err := nextDelimited(buf)
	if err != nil {
		return nil, err
	}
	if err := proto.Unmarshal(msg, m); err != nil {
		return nil, fmt.Errorf("ipc: decoding %s: %w", m.ProtoReflect().Descriptor().Name(), err)
	}
	return rest, nil
}

func bufioReader(r io.Reader) *bufio.Reader { return bufio.NewReaderSize(r, 64<<10) }
