package mapreduce

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
)

// Configuration keys of the text input formats.
const (
	// KeyLineMaxLength bounds the length of a line in bytes (without its
	// terminator). When set, longer lines are skipped, as Hadoop's
	// LineRecordReader does. When unset, a line longer than
	// DefaultMaxLineLength is an error rather than unbounded memory.
	KeyLineMaxLength = "mapreduce.input.linerecordreader.line.maxlength"
	// KeyKeyValueSeparator is the byte KeyValueTextInputFormat splits lines
	// at (only its first byte counts; default tab).
	KeyKeyValueSeparator = "mapreduce.input.keyvaluelinerecordreader.key.value.separator"
)

// DefaultMaxLineLength is the longest line the text input formats read
// when mapreduce.input.linerecordreader.line.maxlength is not set.
const DefaultMaxLineLength = 64 << 20

// defaultMaxLine is DefaultMaxLineLength; tests lower it.
var defaultMaxLine int64 = DefaultMaxLineLength

// TextInputFormat reads text files line by line, as Hadoop's
// TextInputFormat: the key is the byte offset of the line's start in the
// file as 8 bytes big-endian (decode with binary.BigEndian.Uint64), the
// value is the line without its terminator. Lines end at "\n", "\r\n" or a
// lone "\r" (Hadoop's LineReader rules); the last line may lack one. A UTF-8
// byte order mark at the start of the file is dropped.
//
// Files are split as FileSplits describes. A split that does not start at
// offset 0 begins after the first line terminator at or after its start,
// and every split reads the lines that start at or before its end (the last
// one may cross it), so each line is read by exactly one split. Files
// ending in .gz (gzip) or .deflate (zlib, Hadoop's DefaultCodec) are
// decompressed and not split; their keys are offsets in the decompressed
// text. A custom record delimiter (textinputformat.record.delimiter) is not
// supported.
type TextInputFormat struct{}

// Splits implements InputFormat.
func (TextInputFormat) Splits(ctx context.Context, env fs.Env, c *conf.Configuration, paths []string) ([]InputSplit, error) {
	return FileSplits(ctx, env, c, paths, notCompressed)
}

// Open implements InputFormat.
func (TextInputFormat) Open(ctx context.Context, env fs.Env, c *conf.Configuration, split InputSplit) (RecordReader, error) {
	return openLines(ctx, env, c, split, false)
}

// KeyValueTextInputFormat reads text files as TextInputFormat does, but
// splits each line at the first separator byte
// (mapreduce.input.keyvaluelinerecordreader.key.value.separator, default
// tab) into key and value; a line without one is all key, with an empty
// value.
type KeyValueTextInputFormat struct{}

// Splits implements InputFormat.
func (KeyValueTextInputFormat) Splits(ctx context.Context, env fs.Env, c *conf.Configuration, paths []string) ([]InputSplit, error) {
	return FileSplits(ctx, env, c, paths, notCompressed)
}

// Open implements InputFormat.
func (KeyValueTextInputFormat) Open(ctx context.Context, env fs.Env, c *conf.Configuration, split InputSplit) (RecordReader, error) {
	return openLines(ctx, env, c, split, true)
}

// decompressors are the input codecs, chosen by file name suffix as
// Hadoop's CompressionCodecFactory does.
var decompressors = []struct {
	suffix string
	open   func(io.Reader) (io.ReadCloser, error)
}{
	{".gz", func(r io.Reader) (io.ReadCloser, error) { return gzip.NewReader(r) }},
	{".deflate", zlib.NewReader},
}

// decompressorFor returns the decompressor for name, nil if it is not
// compressed.
func decompressorFor(name string) func(io.Reader) (io.ReadCloser, error) {
	for _, d := range decompressors {
		if strings.HasSuffix(name, d.suffix) {
			return d.open
		}
	}
	return nil
}

// notCompressed is the splittable test of the formats that read raw bytes:
// compressed files cannot be split.
func notCompressed(uri string) bool { return decompressorFor(uri) == nil }

// splitFile is the open file of a split, with the file system it was
// opened on.
type splitFile struct {
	uri  string
	fsys fs.FileSystem
	f    fs.File
	size int64
}

// openSplitFile opens split's file and positions it at split.Start.
func openSplitFile(ctx context.Context, env fs.Env, c *conf.Configuration, split InputSplit) (*splitFile, error) {
	if env.Conf == nil {
		env.Conf = c
	}
	fsys, p, err := fs.Resolve(ctx, split.Path, env)
	if err != nil {
		return nil, fmt.Errorf("mapreduce: open split %s: %w", split.Path, err)
	}
	st, err := fsys.Stat(ctx, p)
	if err != nil {
		fsys.Close()
		return nil, fmt.Errorf("mapreduce: open split %s: %w", split.Path, err)
	}
	f, err := fsys.Open(ctx, p)
	if err != nil {
		fsys.Close()
		return nil, fmt.Errorf("mapreduce: open split %s: %w", split.Path, err)
	}
	sf := &splitFile{uri: split.Path, fsys: fsys, f: f, size: st.Length}
	if split.Start > 0 {
		if _, err := f.Seek(split.Start, io.SeekStart); err != nil {
			sf.Close()
			return nil, fmt.Errorf("mapreduce: seek %s to %d: %w", split.Path, split.Start, err)
		}
	}
	return sf, nil
}

// Close closes the file and its file system; safe to call twice.
func (s *splitFile) Close() error {
	if s.f == nil {
		return nil
	}
	err := errors.Join(s.f.Close(), s.fsys.Close())
	s.f = nil
	return err
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// lineReader reads lines ending in "\n", "\r\n" or "\r" from r, as
// Hadoop's LineReader with the default delimiters.
type lineReader struct {
	r        io.Reader
	buf      []byte
	off, end int
	err      error // sticky read error (io.EOF included)
	line     []byte
}

func newLineReader(r io.Reader) *lineReader {
	return &lineReader{r: r, buf: make([]byte, 64<<10)}
}

// fill reads more data into the empty buffer; it returns the read error
// (io.EOF at the end) when nothing could be read.
func (lr *lineReader) fill() error {
	lr.off, lr.end = 0, 0
	for lr.err == nil {
		n, err := lr.r.Read(lr.buf)
		lr.end = n
		lr.err = err
		if n > 0 {
			return nil
		}
	}
	return lr.err
}

// readLine reads the next line into lr.line (without its terminator),
// keeping at most max bytes of it: tooLong reports a longer line, which is
// consumed whole anyway. n is the number of bytes consumed, terminator
// included; 0 means the end of the input.
func (lr *lineReader) readLine(max int64) (n int64, tooLong bool, err error) {
	lr.line = lr.line[:0]
	keep := func(b []byte) {
		if tooLong {
			return
		}
		if int64(len(lr.line))+int64(len(b)) > max {
			tooLong = true
			return
		}
		lr.line = append(lr.line, b...)
	}
	for {
		if lr.off == lr.end {
			if err := lr.fill(); err != nil {
				if err == io.EOF {
					return n, tooLong, nil
				}
				return n, tooLong, err
			}
		}
		chunk := lr.buf[lr.off:lr.end]
		i := bytes.IndexByte(chunk, '\n')
		before := chunk
		if i >= 0 {
			before = chunk[:i]
		}
		if j := bytes.IndexByte(before, '\r'); j >= 0 {
			i = j
		}
		if i < 0 {
			keep(chunk)
			n += int64(len(chunk))
			lr.off = lr.end
			continue
		}
		keep(chunk[:i])
		n += int64(i) + 1
		lr.off += i + 1
		if chunk[i] == '\r' {
			if lr.off == lr.end {
				if err := lr.fill(); err != nil && err != io.EOF {
					return n, tooLong, err
				}
			}
			if lr.off < lr.end && lr.buf[lr.off] == '\n' {
				lr.off++
				n++
			}
		}
		return n, tooLong, nil
	}
}

var utf8BOM = []byte{0xEF, 0xBB, 0xBF}

// lineRecordReader is Hadoop's LineRecordReader (and, with kv set,
// KeyValueLineRecordReader).
type lineRecordReader struct {
	in         *splitFile
	dec        io.Closer       // the decompressor, if any
	raw        *countingReader // compressed bytes read, for Progress
	lr         *lineReader
	compressed bool
	start, end int64 // the split's range (uncompressed input)
	pos        int64 // offset of the next line
	maxLen     int64
	skipLong   bool
	kv         bool
	sep        byte
	keyBuf     [8]byte
	key, value []byte
	done       bool
	err        error
}

func openLines(ctx context.Context, env fs.Env, c *conf.Configuration, split InputSplit, kv bool) (RecordReader, error) {
	if c == nil {
		c = env.Conf
	}
	r := &lineRecordReader{kv: kv, sep: '\t', maxLen: defaultMaxLine}
	if c != nil && c.GetTrimmed(KeyLineMaxLength) != "" {
		v, err := c.GetInt(KeyLineMaxLength)
		if err != nil {
			return nil, fmt.Errorf("mapreduce: %w", err)
		}
		r.maxLen, r.skipLong = max(v, 0), true
	}
	if c != nil {
		if s := c.Get(KeyKeyValueSeparator); s != "" {
			r.sep = s[0]
		}
	}
	in, err := openSplitFile(ctx, env, c, split)
	if err != nil {
		return nil, err
	}
	r.in = in
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
		r.dec, r.compressed = d, true
		r.lr = newLineReader(d)
		return r, nil
	}
	r.start, r.end, r.pos = split.Start, split.Start+split.Length, split.Start
	r.lr = newLineReader(in.f)
	if r.start != 0 {
		// The previous split reads the line crossing (or starting at) our
		// start; ours begin after it.
		n, _, err := r.lr.readLine(0)
		if err != nil {
			in.Close()
			return nil, fmt.Errorf("mapreduce: read %s at offset %d: %w", split.Path, r.start, err)
		}
		r.pos += n
	}
	return r, nil
}

// Next implements RecordReader.
func (r *lineRecordReader) Next() bool {
	if r.done || r.err != nil {
		return false
	}
	for r.compressed || r.pos <= r.end {
		n, tooLong, err := r.lr.readLine(r.maxLen)
		if err != nil {
			r.err = fmt.Errorf("mapreduce: read %s at offset %d: %w", r.in.uri, r.pos, err)
			return false
		}
		if n == 0 {
			break
		}
		at := r.pos
		r.pos += n
		if tooLong {
			if r.skipLong {
				continue
			}
			r.err = fmt.Errorf("mapreduce: %s: the line at offset %d is longer than %d bytes (set %s to skip long lines)",
				r.in.uri, at, r.maxLen, KeyLineMaxLength)
			return false
		}
		line := r.lr.line
		if at == 0 {
			line = bytes.TrimPrefix(line, utf8BOM)
		}
		if r.kv {
			if i := bytes.IndexByte(line, r.sep); i >= 0 {
				r.key, r.value = line[:i], line[i+1:]
			} else {
				r.key, r.value = line, line[len(line):]
			}
		} else {
			binary.BigEndian.PutUint64(r.keyBuf[:], uint64(at))
			r.key, r.value = r.keyBuf[:], line
		}
		return true
	}
	r.done = true
	return false
}

// Key implements RecordReader.
func (r *lineRecordReader) Key() []byte { return r.key }

// Value implements RecordReader.
func (r *lineRecordReader) Value() []byte { return r.value }

// Err implements RecordReader.
func (r *lineRecordReader) Err() error { return r.err }

// Progress implements RecordReader: the fraction of the split's bytes
// (of the compressed file, for compressed input) consumed.
func (r *lineRecordReader) Progress() float64 {
	if r.done {
		return 1
	}
	if r.compressed {
		if r.in.size <= 0 {
			return 0
		}
		return min(1, float64(r.raw.n)/float64(r.in.size))
	}
	if r.end == r.start {
		return 0
	}
	return min(1, float64(r.pos-r.start)/float64(r.end-r.start))
}

// Close implements RecordReader.
func (r *lineRecordReader) Close() error {
	var err error
	if r.dec != nil {
		err = r.dec.Close()
		r.dec = nil
	}
	return errors.Join(err, r.in.Close())
}
