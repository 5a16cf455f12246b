package ipc

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"sync/atomic"

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

// frameChunk is how much of a frame readFrame allocates ahead of the bytes
// that have arrived: a peer's claimed length costs memory only as it sends.
const frameChunk = 64 << 10

// readFrame reads one length-prefixed packet, refusing lengths above max
// before allocating anything, and growing its buffer as bytes arrive (a
// claim of 128 MiB followed by silence costs 64 KiB, not 128 MiB). If
// beforeChunk is not nil it runs before each read of the frame's body (the
// server sets a stall deadline there).
func readFrame(r io.Reader, max int, beforeChunk func()) ([]byte, error) {
	n, err := readLength(r, max)
	if err != nil {
		return nil, err
	}
	return readBody(r, n, beforeChunk, make([]byte, 0, min(n, frameChunk)))
}

// readPooledFrame is readFrame reading a frame that fits in a pooled
// buffer (maxPooledFrame) into one taken from the pool, which bp then is
// (nil for a larger frame): the caller returns it with putBuffer once done
// with the frame. The buffer is taken only once the length has arrived,
// so a connection waiting for its next frame holds none.
func readPooledFrame(r io.Reader, max int, beforeChunk func()) (frame []byte, bp *[]byte, err error) {
	n, err := readLength(r, max)
	if err != nil {
		return nil, nil, err
	}
	if n > maxPooledFrame {
		frame, err := readBody(r, n, beforeChunk, make([]byte, 0, frameChunk))
		return frame, nil, err
	}
	bp = getBuffer()
	// At most maxPooledFrame (frameChunk) ahead of the bytes, as readFrame.
	frame, err = readBody(r, n, beforeChunk, slices.Grow((*bp)[:0], n))
	if err != nil {
		putBuffer(bp)
		return nil, nil, err
	}
	*bp = frame // a buffer grown to hold the frame goes back grown
	return frame, bp, nil
}

// readLength reads a frame's length prefix and checks it against max.
func readLength(r io.Reader, max int) (int, error) {
	var lenBuf [4]byte
	if _, err := io.ReadFull(r, lenBuf[:]); err != nil {
		return 0, err
	}
	n := int64(binary.BigEndian.Uint32(lenBuf[:]))
	if n > int64(max) {
		return 0, fmt.Errorf("%w: RPC data length of %d exceeds maximum data length of %d", ErrFrameTooLarge, n, max)
	}
	return int(n), nil
}

// readBody reads a frame's n bytes into buf (empty, with some capacity
// unless n is 0), doubling it, never past n, as they arrive.
func readBody(r io.Reader, n int, beforeChunk func(), buf []byte) ([]byte, error) {
	for len(buf) < n {
		if len(buf) == cap(buf) {
			// Double, but never past the claimed length.
			buf = slices.Grow(buf, min(cap(buf), n-len(buf)))
		}
		end := min(cap(buf), n)
		if beforeChunk != nil && !buffered(r, end-len(buf)) {
			beforeChunk()
		}
		m, err := io.ReadFull(r, buf[len(buf):end])
		buf = buf[:len(buf)+m]
		if err != nil {
			if err == io.EOF {
				err = io.ErrUnexpectedEOF
			}
			return nil, err
		}
	}
	return buf, nil
}

// bufferedReader is an input that holds bytes a read returns without
// waiting on the network: a bufio.Reader, or the saslReader over one.
type bufferedReader interface{ Buffered() int }

// buffered reports whether r holds n bytes that a read returns without
// waiting on the network: a chunk already buffered needs no stall deadline
// (and setting one is a runtime timer update per call).
func buffered(r io.Reader, n int) bool {
	b, ok := r.(bufferedReader)
	return ok && b.Buffered() >= n
}

// arriving reports whether any byte of a next frame has reached r: in its
// buffer or, under SASL wrapping, in the connection's buffer beneath.
func arriving(r io.Reader) bool {
	if s, ok := r.(*saslReader); ok {
		return s.Buffered() > 0 || buffered(s.under, 1)
	}
	return buffered(r, 1)
}

// appendFrame appends a frame holding the given messages, each
// varint-length-delimited, to dst.
func appendFrame(dst []byte, msgs ...proto.Message) ([]byte, error) {
	start := len(dst)
	dst = append(dst, 0, 0, 0, 0)
	for _, m := range msgs {
		var err error
		if dst, err = appendMessage(dst, m); err != nil {
			return nil, err
		}
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst, nil
}

// appendMessage appends m, varint-length-delimited, to dst; nil appends
// nothing.
func appendMessage(dst []byte, m proto.Message) ([]byte, error) {
	if m == nil {
		return dst, nil
	}
	size := proto.Size(m)
	dst = protowire.AppendVarint(dst, uint64(size))
	// Size has just computed, and cached in m, every submessage's size.
	return proto.MarshalOptions{UseCachedSize: true}.MarshalAppend(dst, m)
}

// setFrameLength fills in the length prefix of the frame that buf holds
// from its start (reserved as four bytes).
func setFrameLength(buf []byte) {
	binary.BigEndian.PutUint32(buf, uint32(len(buf)-4))
}

// framePool holds frame buffers for reuse: a reply or request is framed
// in one, written, and the buffer returned. Buffers that grew past
// maxPooledFrame are dropped, so a large reply's memory is not kept.
var framePool = sync.Pool{New: func() any { b := make([]byte, 0, 512); return &b }}

const maxPooledFrame = 64 << 10

// countBuffers turns on buffersOut, the count of pooled buffers taken and
// not yet returned (or dropped by putBuffer), for tests.
var (
	countBuffers atomic.Bool
	buffersOut   atomic.Int64
)

func getBuffer() *[]byte {
	if countBuffers.Load() {
		buffersOut.Add(1)
	}
	return framePool.Get().(*[]byte)
}

// putBuffer returns b to the pool; nil is no buffer.
func putBuffer(b *[]byte) {
	if b == nil {
		return
	}
	if countBuffers.Load() {
		buffersOut.Add(-1)
	}
	if cap(*b) <= maxPooledFrame {
		*b = (*b)[:0]
		framePool.Put(b)
	}
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
