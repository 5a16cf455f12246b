package mapreduce

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
)

// KeyFixedRecordLength is the record length in bytes of
// FixedLengthInputFormat (Hadoop's fixedlengthinputformat.record.length);
// required, > 0.
const KeyFixedRecordLength = "fixedlengthinputformat.record.length"

// FixedLengthInputFormat reads files of fixed-length binary records, as
// Hadoop's FixedLengthInputFormat: the key is the record's byte offset in
// the file as 8 bytes big-endian, the value the record.
//
// Files are split as FileSplits describes; a split reads the records that
// start inside it (the first at the first record boundary at or after its
// start; the last may cross its end). A partial record at the end of a file
// is an error, as in Hadoop. Files ending in .gz or .deflate are
// decompressed and not split.
type FixedLengthInputFormat struct {
	// RecordLength, if > 0, is the record length; otherwise
	// fixedlengthinputformat.record.length is read.
	RecordLength int
	// KeyLength, if > 0, makes the key the record's first KeyLength bytes
	// and the value the rest (TeraSort's 10-byte keys and 90-byte values)
	// instead of offset and record. A strata extension.
	KeyLength int
}

// recordLength returns the record length in effect.
func (f FixedLengthInputFormat) recordLength(c *conf.Configuration) (int, error) {
	n := int64(f.RecordLength)
	if n <= 0 && c != nil && c.GetTrimmed(KeyFixedRecordLength) != "" {
		v, err := c.GetInt(KeyFixedRecordLength)
		if err != nil {
			return 0, fmt.Errorf("mapreduce: %w", err)
		}
		n = v
	}
	if n <= 0 || n > math.MaxInt32 {
		return 0, fmt.Errorf("mapreduce: fixed record length %d is invalid: set %s to a value greater than zero", n, KeyFixedRecordLength)
	}
	if f.KeyLength > int(n) {
		return 0, fmt.Errorf("mapreduce: key length %d is longer than the record length %d", f.KeyLength, n)
	}
	return int(n), nil
}

// Splits implements InputFormat.
func (f FixedLengthInputFormat) Splits(ctx context.Context, env fs.Env, c *conf.Configuration, paths []string) ([]InputSplit, error) {
	if c == nil {
		c = env.Conf
	}
	if _, err := f.recordLength(c); err != nil {
		return nil, err
	}
	return FileSplits(ctx, env, c, paths, notCompressed)
}

// Open implements InputFormat.
func (f FixedLengthInputFormat) Open(ctx context.Context, env fs.Env, c *conf.Configuration, split InputSplit) (RecordReader, error) {
	if c == nil {
		c = env.Conf
	}
	n, err := f.recordLength(c)
	if err != nil {
		return nil, err
	}
	rl := int64(n)
	start := split.Start
	if rem := start % rl; rem != 0 {
		start += rl - rem
	}
	split2 := split
	if start < split.Start+split.Length {
		split2.Start = start // else no record starts in the split: stay in range
	}
	in, err := openSplitFile(ctx, env, c, split2)
	if err != nil {
		return nil, err
	}
	r := &fixedRecordReader{in: in, keyLen: f.KeyLength, start: start, end: split.Start + split.Length, pos: start, rec: make([]byte, n)}
	if open := decompressorFor(split.Path); open != nil {
		if split.Start != 0 {
			in.Close()
			return nil, fmt.Errorf("mapreduce: %s: a compressed file cannot be read from offset %d", split.Path, split.Start)
		}
		r.raw = &countingReader{r: in.f}
		d, err := open(r.raw)
		if err != nil {
			in.Close()
			return nil, fmt.Errorf("mapreduce: %s: %w", split.Path, err)
		}
		r.dec, r.compressed, r.remaining = d, true, math.MaxInt64
		r.r = bufio.NewReaderSize(d, 64<<10)
		return r, nil
	}
	if start < r.end {
		r.remaining = (r.end - start + rl - 1) / rl
	}
	r.r = bufio.NewReaderSize(in.f, 64<<10)
	return r, nil
}

// fixedRecordReader is Hadoop's FixedLengthRecordReader.
type fixedRecordReader struct {
	in         *splitFile
	dec        io.Closer
	raw        *countingReader
	r          *bufio.Reader
	compressed bool
	keyLen     int
	start, end int64
	pos        int64 // offset of the next record
	remaining  int64 // records left in the split
	rec        []byte
	keyBuf     [8]byte
	key, value []byte
	done       bool
	err        error
}

// Next implements RecordReader.
func (r *fixedRecordReader) Next() bool {
	if r.done || r.err != nil {
		return false
	}
	if r.remaining <= 0 {
		r.done = true
		return false
	}
	// The record is read in place in the reader's buffer when it fits
	// (valid until the next Next, as RecordReader allows): one copy less.
	rec, err := r.r.Peek(len(r.rec))
	if err == nil {
		r.r.Discard(len(rec))
	} else if err == bufio.ErrBufferFull {
		rec = r.rec
		var n int
		n, err = io.ReadFull(r.r, rec)
		if err == io.EOF && n == 0 || err == io.ErrUnexpectedEOF {
			rec, err = rec[:n], io.EOF
		}
	}
	n := len(rec)
	switch {
	case err == io.EOF && n == 0:
		r.done = true
		return false
	case err == io.EOF:
		r.err = fmt.Errorf("mapreduce: %s: partial record of %d bytes at offset %d (record length %d)", r.in.uri, n, r.pos, len(r.rec))
		return false
	case err != nil:
		r.err = fmt.Errorf("mapreduce: read %s at offset %d: %w", r.in.uri, r.pos, err)
		return false
	}
	if r.keyLen > 0 {
		r.key, r.value = rec[:r.keyLen:r.keyLen], rec[r.keyLen:n:n]
	} else {
		binary.BigEndian.PutUint64(r.keyBuf[:], uint64(r.pos))
		r.key, r.value = r.keyBuf[:], rec[:n:n]
	}
	r.pos += int64(n)
	r.remaining--
	return true
}

// Key implements RecordReader.
func (r *fixedRecordReader) Key() []byte { return r.key }

// Value implements RecordReader.
func (r *fixedRecordReader) Value() []byte { return r.value }

// Err implements RecordReader.
func (r *fixedRecordReader) Err() error { return r.err }

// Progress implements RecordReader.
func (r *fixedRecordReader) Progress() float64 {
	if r.done {
		return 1
	}
	if r.compressed {
		if r.in.size <= 0 {
			return 0
		}
		return min(1, float64(r.raw.n)/float64(r.in.size))
	}
	if r.end <= r.start {
		return 0
	}
	return min(1, float64(r.pos-r.start)/float64(r.end-r.start))
}

// Close implements RecordReader.
func (r *fixedRecordReader) Close() error {
	var err error
	if r.dec != nil {
		err = r.dec.Close()
		r.dec = nil
	}
	return errors.Join(err, r.in.Close())
}
