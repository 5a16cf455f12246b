package spill

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"math"
	"slices"
	"sync"
)

// ErrCorrupt is wrapped by every error that reports a segment or index
// whose bytes are not what was written: a checksum mismatch, a truncated
// segment, impossible lengths, or a compressed stream that does not decode.
var ErrCorrupt = errors.New("spill: corrupt map output")

// MaxFieldLen is the largest key or value, in bytes, a segment can hold
// (Hadoop's IFile uses Java ints for lengths too).
const MaxFieldLen = math.MaxInt32

const (
	trailerLen = 4 // CRC32C of the stored bytes, big-endian
	markerLen  = 2 // the end-of-segment marker: two zero bytes
	// ioBufSize is the bufio size used for every segment read and for
	// spill and merge files.
	ioBufSize = 256 << 10
	// segBufSize is a SegmentWriter's own record buffer.
	segBufSize = 64 << 10
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

var (
	readerPool = sync.Pool{New: func() any { return bufio.NewReaderSize(nil, ioBufSize) }}
	writerPool = sync.Pool{New: func() any { return bufio.NewWriterSize(nil, ioBufSize) }}
	segBufPool = sync.Pool{New: func() any { b := make([]byte, 0, segBufSize); return &b }}
)

func getReader(r io.Reader) *bufio.Reader {
	br := readerPool.Get().(*bufio.Reader)
	br.Reset(r)
	return br
}

func putReader(br *bufio.Reader) {
	br.Reset(nil)
	readerPool.Put(br)
}

func getWriter(w io.Writer) *bufio.Writer {
	bw := writerPool.Get().(*bufio.Writer)
	bw.Reset(w)
	return bw
}

func putWriter(bw *bufio.Writer) {
	bw.Reset(nil)
	writerPool.Put(bw)
}

// crcWriter counts and checksums what passes through it.
type crcWriter struct {
	w   io.Writer
	crc uint32
	n   int64
}

func (c *crcWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.crc = crc32.Update(c.crc, castagnoli, p[:n])
	c.n += int64(n)
	return n, err
}

// SegmentWriter writes one segment: records, the end marker, the
// checksum. It buffers internally; the destination sees large writes.
// Not safe for concurrent use.
type SegmentWriter struct {
	codec Codec
	out   crcWriter
	enc   compressor // nil for None
	buf   *[]byte
	raw   int64
	err   error
	done  bool
}

// NewSegmentWriter starts a segment on w, compressed with codec. Close must
// be called to finish it (and to return pooled buffers); w is not closed.
func NewSegmentWriter(w io.Writer, codec Codec) (*SegmentWriter, error) {
	c, err := codec.canonical()
	if err != nil {
		return nil, err
	}
	s := &SegmentWriter{codec: c, out: crcWriter{w: w}, buf: segBufPool.Get().(*[]byte)}
	if c != None {
		if s.enc, err = getCompressor(c, &s.out); err != nil {
			segBufPool.Put(s.buf)
			return nil, err
		}
	}
	return s, nil
}

func (s *SegmentWriter) sink() io.Writer {
	if s.enc != nil {
		return s.enc
	}
	return &s.out
}

func (s *SegmentWriter) flush() error {
	b := *s.buf
	if len(b) == 0 {
		return nil
	}
	_, err := s.sink().Write(b)
	*s.buf = b[:0]
	if err != nil {
		s.err = fmt.Errorf("spill: writing segment: %w", err)
	}
	return s.err
}

// Append adds a record. Records must be appended in sort order; the writer
// does not check. Key and value are copied before Append returns.
func (s *SegmentWriter) Append(key, value []byte) error {
	if s.err != nil {
		return s.err
	}
	if s.done {
		return errors.New("spill: Append after Close")
	}
	if len(key) > MaxFieldLen || len(value) > MaxFieldLen {
		return fmt.Errorf("spill: record too large (key %d bytes, value %d bytes)", len(key), len(value))
	}
	n := len(key) + len(value)
	const maxHdr = 2 * binary.MaxVarintLen64
	b := *s.buf
	if len(b)+n+maxHdr > cap(b) {
		if err := s.flush(); err != nil {
			return err
		}
		b = *s.buf
		if n+maxHdr > cap(b) {
			// Larger than the buffer: header, then key and value directly.
			b = binary.AppendUvarint(b, uint64(len(key))+1)
			b = binary.AppendUvarint(b, uint64(len(value))+1)
			s.raw += int64(len(b) + n)
			*s.buf = b
			if err := s.flush(); err != nil {
				return err
			}
			for _, p := range [][]byte{key, value} {
				if _, err := s.sink().Write(p); err != nil {
					s.err = fmt.Errorf("spill: writing segment: %w", err)
					return s.err
				}
			}
			return nil
		}
	}
	l := len(b)
	b = binary.AppendUvarint(b, uint64(len(key))+1)
	b = binary.AppendUvarint(b, uint64(len(value))+1)
	b = append(b, key...)
	b = append(b, value...)
	s.raw += int64(len(b) - l)
	*s.buf = b
	return nil
}

// Close writes the end marker and the checksum and returns the segment's
// raw length (record bytes and marker, uncompressed) and its part length
// (bytes written to w, checksum included). Close releases the writer's
// buffers even when it fails; calling it again returns the same error.
func (s *SegmentWriter) Close() (rawLen, partLen int64, err error) {
	if s.done {
		if s.err != nil {
			return 0, 0, s.err
		}
		return s.raw, s.out.n + trailerLen, nil
	}
	s.done = true
	if s.err == nil {
		*s.buf = append(*s.buf, 0, 0)
		s.raw += markerLen
		if s.flush() == nil && s.enc != nil {
			if err := s.enc.Close(); err != nil {
				s.err = fmt.Errorf("spill: finishing %s stream: %w", s.codec, err)
			}
		}
	}
	if s.enc != nil {
		putCompressor(s.codec, s.enc)
		s.enc = nil
	}
	*s.buf = (*s.buf)[:0]
	segBufPool.Put(s.buf)
	s.buf = nil
	if s.err != nil {
		return 0, 0, s.err
	}
	var t [trailerLen]byte
	binary.BigEndian.PutUint32(t[:], s.out.crc)
	if _, err := s.out.w.Write(t[:]); err != nil {
		s.err = fmt.Errorf("spill: writing segment: %w", err)
		return 0, 0, s.err
	}
	return s.raw, s.out.n + trailerLen, nil
}

// Iterator walks sorted records. Key and Value are valid until the next
// call of Next (or Close). After Next returns false, Err tells whether the
// input ended cleanly. Close releases resources and may be called more
// than once; an Iterator is not safe for concurrent use.
type Iterator interface {
	Next() bool
	Key() []byte
	Value() []byte
	Err() error
	Close() error
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// crcReader reads at most left bytes from r, checksumming them; it
// remembers an I/O error of r so that it is not mistaken for corruption.
type crcReader struct {
	r     io.Reader
	left  int64
	crc   uint32
	ioErr error
}

func (c *crcReader) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, io.EOF
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.crc = crc32.Update(c.crc, castagnoli, p[:n])
	c.left -= int64(n)
	if err == io.EOF {
		if c.left > 0 {
			err = io.ErrUnexpectedEOF
		}
	} else if err != nil {
		c.ioErr = err
	}
	return n, err
}

// OpenSegment returns an Iterator over the segment of partLength bytes
// (IndexEntry.PartLength) that r yields. rawLength is IndexEntry.RawLength
// if known, else -1; when known, record lengths are checked against it,
// which bounds what a corrupt length can make the reader allocate. (Without
// it memory still grows only with bytes actually read.)
//
// The checksum covers the stored bytes and is verified when the end of the
// segment is reached: records are returned before that, and a mismatch
// makes Next return false with Err wrapping ErrCorrupt. A caller that must
// not see a single record of a corrupt segment verifies it first
// (NewMemorySegment does; CopySegment verifies while copying). Reads from r
// are large (256 KiB); r is not closed.
func OpenSegment(r io.Reader, codec Codec, partLength, rawLength int64) (Iterator, error) {
	c, err := codec.canonical()
	if err != nil {
		return nil, err
	}
	if partLength < trailerLen+1 {
		return nil, corrupt("segment length %d is too short", partLength)
	}
	if rawLength >= 0 && rawLength < markerLen {
		return nil, corrupt("raw segment length %d is too short", rawLength)
	}
	if c == None && rawLength >= 0 && rawLength != partLength-trailerLen {
		return nil, corrupt("uncompressed segment: raw length %d, stored length %d", rawLength, partLength-trailerLen)
	}
	s := &segReader{codec: c, src: r, lim: crcReader{r: r, left: partLength - trailerLen}, rawLen: rawLength}
	if c == None {
		s.rawLen = partLength - trailerLen
	}
	return s, nil
}

type segReader struct {
	codec    Codec
	src      io.Reader
	lim      crcReader
	rawbuf   *bufio.Reader // compressed: buffers lim for the decoder
	dec      decompressor
	br       *bufio.Reader // the record stream
	rawLen   int64         // expected record-stream length, -1 if unknown
	consumed int64         // record-stream bytes parsed
	pending  int           // bytes of the current record still in br
	key, val []byte
	big      []byte
	started  bool
	done     bool
	err      error
	onClose  func() error
}

func (s *segReader) start() error {
	s.started = true
	if s.codec == None {
		s.br = getReader(&s.lim)
		return nil
	}
	s.rawbuf = getReader(&s.lim)
	d, err := getDecompressor(s.codec, s.rawbuf)
	if err != nil {
		return s.readErr(err, "starting "+s.codec.String()+" stream")
	}
	s.dec = d
	s.br = getReader(d)
	return nil
}

// readErr classifies a failure of the record stream: the underlying
// reader's own error, or corruption.
func (s *segReader) readErr(err error, what string) error {
	if s.lim.ioErr != nil {
		return fmt.Errorf("spill: reading segment: %w", s.lim.ioErr)
	}
	if errors.Is(err, ErrCorrupt) {
		return err
	}
	if err == nil || err == io.EOF || err == bufio.ErrBufferFull {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("%w: %s: %v", ErrCorrupt, what, err)
}

func (s *segReader) fail(err error) bool {
	s.err = err
	s.done = true
	s.release()
	return false
}

func (s *segReader) Next() bool {
	if s.done {
		return false
	}
	if !s.started {
		if err := s.start(); err != nil {
			return s.fail(err)
		}
	}
	if s.pending > 0 {
		s.br.Discard(s.pending) // peeked, so cannot fail
		s.pending = 0
	}
	hdr, perr := s.br.Peek(2 * binary.MaxVarintLen64)
	kl, n1 := binary.Uvarint(hdr)
	if n1 <= 0 {
		return s.fail(s.readErr(perr, "bad key length"))
	}
	vl, n2 := binary.Uvarint(hdr[n1:])
	if n2 <= 0 {
		return s.fail(s.readErr(perr, "bad value length"))
	}
	h := n1 + n2
	if kl == 0 || vl == 0 {
		if kl != 0 || vl != 0 || h != markerLen {
			return s.fail(s.readErr(nil, "bad end-of-segment marker"))
		}
		s.br.Discard(h)
		s.consumed += markerLen
		return s.finish()
	}
	if kl-1 > MaxFieldLen || vl-1 > MaxFieldLen {
		return s.fail(corrupt("record lengths %d/%d out of range", kl-1, vl-1))
	}
	klen, vlen := int(kl-1), int(vl-1)
	total := h + klen + vlen
	if s.rawLen >= 0 && int64(total)+markerLen > s.rawLen-s.consumed {
		return s.fail(corrupt("record of %d bytes at offset %d runs past the segment's %d bytes", total, s.consumed, s.rawLen))
	}
	if total <= s.br.Size() {
		b, err := s.br.Peek(total)
		if err != nil {
			return s.fail(s.readErr(err, "truncated record"))
		}
		s.key = b[h : h+klen : h+klen]
		s.val = b[h+klen : total : total]
		s.pending = total
	} else {
		s.br.Discard(h)
		if err := s.readBig(klen + vlen); err != nil {
			return s.fail(err)
		}
		s.key = s.big[:klen:klen]
		s.val = s.big[klen : klen+vlen : klen+vlen]
	}
	s.consumed += int64(total)
	return true
}

// readBig reads a record larger than the read buffer into s.big, growing
// it only as bytes arrive.
func (s *segReader) readBig(n int) error {
	s.big = s.big[:0]
	for len(s.big) < n {
		step := min(n-len(s.big), max(len(s.big), 1<<20))
		l := len(s.big)
		s.big = slices.Grow(s.big, step)[:l+step]
		if _, err := io.ReadFull(s.br, s.big[l:]); err != nil {
			return s.readErr(err, "truncated record")
		}
	}
	return nil
}

// finish checks what follows the end marker: nothing in the record
// stream, the rest of the stored bytes, and the checksum.
func (s *segReader) finish() bool {
	if b, err := s.br.Peek(1); len(b) > 0 {
		return s.fail(corrupt("data after the end-of-segment marker"))
	} else if err != io.EOF {
		return s.fail(s.readErr(err, "end of "+s.codec.String()+" stream"))
	}
	if s.rawLen >= 0 && s.consumed != s.rawLen {
		return s.fail(corrupt("segment has %d raw bytes, index says %d", s.consumed, s.rawLen))
	}
	if _, err := io.Copy(io.Discard, &s.lim); err != nil {
		return s.fail(s.readErr(err, "truncated segment"))
	}
	var t [trailerLen]byte
	if _, err := io.ReadFull(s.src, t[:]); err != nil {
		if err != io.EOF && err != io.ErrUnexpectedEOF {
			return s.fail(fmt.Errorf("spill: reading segment: %w", err))
		}
		return s.fail(corrupt("segment checksum missing"))
	}
	if got := binary.BigEndian.Uint32(t[:]); got != s.lim.crc {
		return s.fail(corrupt("checksum mismatch: stored %08x, computed %08x", got, s.lim.crc))
	}
	s.done = true
	s.release()
	return false
}

func (s *segReader) release() {
	s.key, s.val, s.big = nil, nil, nil
	s.pending = 0
	if s.br != nil {
		putReader(s.br)
		s.br = nil
	}
	if s.dec != nil {
		putDecompressor(s.codec, s.dec)
		s.dec = nil
	}
	if s.rawbuf != nil {
		putReader(s.rawbuf)
		s.rawbuf = nil
	}
}

func (s *segReader) Key() []byte   { return s.key }
func (s *segReader) Value() []byte { return s.val }
func (s *segReader) Err() error    { return s.err }

func (s *segReader) Close() error {
	if !s.done {
		s.done = true
		s.release()
	}
	if f := s.onClose; f != nil {
		s.onClose = nil
		return f()
	}
	return nil
}

// NewMemorySegment returns an Iterator over a whole segment held in
// memory (as fetched by a reducer). The checksum is verified first, so no
// record of a corrupt segment is ever returned and corrupt bytes are never
// decompressed. Uncompressed segments are not copied: keys and values
// point into data, which must not change while the Iterator is in use.
func NewMemorySegment(data []byte, codec Codec) (Iterator, error) {
	c, err := codec.canonical()
	if err != nil {
		return nil, err
	}
	if len(data) < trailerLen+1 {
		return nil, corrupt("segment length %d is too short", len(data))
	}
	body := data[:len(data)-trailerLen]
	if got, want := binary.BigEndian.Uint32(data[len(body):]), crc32.Checksum(body, castagnoli); got != want {
		return nil, corrupt("checksum mismatch: stored %08x, computed %08x", got, want)
	}
	if c == None {
		return &byteSeg{b: body}, nil
	}
	return OpenSegment(bytes.NewReader(data), c, int64(len(data)), -1)
}

// byteSeg parses an uncompressed, verified segment in place.
type byteSeg struct {
	b        []byte
	pos      int
	key, val []byte
	done     bool
	err      error
}

func (s *byteSeg) fail(err error) bool {
	s.err, s.done, s.key, s.val = err, true, nil, nil
	return false
}

func (s *byteSeg) Next() bool {
	if s.done {
		return false
	}
	kl, n1 := binary.Uvarint(s.b[s.pos:])
	if n1 <= 0 {
		return s.fail(corrupt("bad key length at offset %d", s.pos))
	}
	vl, n2 := binary.Uvarint(s.b[s.pos+n1:])
	if n2 <= 0 {
		return s.fail(corrupt("bad value length at offset %d", s.pos))
	}
	h := s.pos + n1 + n2
	if kl == 0 || vl == 0 {
		if kl != 0 || vl != 0 || n1+n2 != markerLen {
			return s.fail(corrupt("bad end-of-segment marker at offset %d", s.pos))
		}
		if h != len(s.b) {
			return s.fail(corrupt("data after the end-of-segment marker"))
		}
		s.done, s.key, s.val = true, nil, nil
		return false
	}
	left := uint64(len(s.b) - h)
	if kl-1 > left || vl-1 > left-(kl-1) {
		return s.fail(corrupt("record at offset %d runs past the segment", s.pos))
	}
	k := h + int(kl-1)
	v := k + int(vl-1)
	s.key, s.val = s.b[h:k:k], s.b[k:v:v]
	s.pos = v
	return true
}

func (s *byteSeg) Key() []byte   { return s.key }
func (s *byteSeg) Value() []byte { return s.val }
func (s *byteSeg) Err() error    { return s.err }
func (s *byteSeg) Close() error {
	s.done, s.key, s.val = true, nil, nil
	return nil
}

// CopySegment copies a segment of partLength bytes from src to dst,
// verifying its checksum on the way (a reducer fetching to disk). It
// returns an error wrapping ErrCorrupt on a mismatch or a short segment;
// dst has then received bytes that must be discarded.
func CopySegment(dst io.Writer, src io.Reader, partLength int64) error {
	if partLength < trailerLen+1 {
		return corrupt("segment length %d is too short", partLength)
	}
	lim := crcReader{r: src, left: partLength - trailerLen}
	if _, err := io.Copy(dst, &lim); err != nil {
		if lim.ioErr != nil {
			return fmt.Errorf("spill: reading segment: %w", lim.ioErr)
		}
		if err == io.ErrUnexpectedEOF {
			return corrupt("segment truncated")
		}
		return fmt.Errorf("spill: copying segment: %w", err)
	}
	var t [trailerLen]byte
	if _, err := io.ReadFull(src, t[:]); err != nil {
		if err == io.EOF || err == io.ErrUnexpectedEOF {
			return corrupt("segment checksum missing")
		}
		return fmt.Errorf("spill: reading segment: %w", err)
	}
	if got := binary.BigEndian.Uint32(t[:]); got != lim.crc {
		return corrupt("checksum mismatch: stored %08x, computed %08x", got, lim.crc)
	}
	if _, err := dst.Write(t[:]); err != nil {
		return fmt.Errorf("spill: copying segment: %w", err)
	}
	return nil
}
