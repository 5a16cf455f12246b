package mapreduce

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
)

// The KV file format, strata's counterpart of Hadoop's SequenceFile: a
// splittable file of binary key/value records. See docs/format/kvfile.md.
const (
	kvMagic     = "SKV1"
	kvVersion   = 1
	kvSyncSize  = 16
	kvHeaderLen = int64(len(kvMagic) + 1 + kvSyncSize)
	// kvSyncEscape is the first byte of a sync entry (a record's first
	// varint is its key length + 1, never 0).
	kvSyncEscape = 0
	// kvSyncEntryLen is the escape byte and the marker.
	kvSyncEntryLen = 1 + kvSyncSize
	// kvMaxField bounds a key or value length when the file size is
	// unknown, so that a corrupt length cannot ask for unbounded memory.
	kvMaxField = 1 << 30
)

// KVSyncInterval is how many bytes a KV file writer writes between sync
// entries, at least: before a record, a sync entry is written once that
// many bytes have been written since the last one.
const KVSyncInterval = 64 << 10

// ErrKVCorrupt is wrapped by the errors of KV file readers for data that is
// not a valid KV file (bad magic, unknown version, wrong sync marker,
// impossible lengths, truncated records).
var ErrKVCorrupt = errors.New("corrupt KV file")

// KVFileWriter writes a KV file to an io.Writer. It buffers: call Flush
// (then close the underlying writer) when done. Not safe for concurrent
// use.
type KVFileWriter struct {
	w        *bufio.Writer
	sync     [kvSyncSize]byte
	pos      int64 // bytes written so far
	lastSync int64 // offset of the last sync entry (0: the header)
	scratch  [2 * binary.MaxVarintLen64]byte
	err      error
}

// NewKVFileWriter writes the header (with a random sync marker) to w and
// returns a writer for the records.
func NewKVFileWriter(w io.Writer) (*KVFileWriter, error) {
	kw := &KVFileWriter{w: bufio.NewWriterSize(w, 64<<10)}
	if _, err := rand.Read(kw.sync[:]); err != nil {
		return nil, fmt.Errorf("mapreduce: KV file sync marker: %w", err)
	}
	kw.w.WriteString(kvMagic)
	kw.w.WriteByte(kvVersion)
	kw.w.Write(kw.sync[:])
	kw.pos = int64(kvHeaderLen)
	return kw, nil
}

// Write appends one record. A nil key or value is written as an empty one.
func (kw *KVFileWriter) Write(key, value []byte) error {
	if kw.err != nil {
		return kw.err
	}
	if kw.pos-kw.lastSync >= KVSyncInterval {
		kw.lastSync = kw.pos
		kw.w.WriteByte(kvSyncEscape)
		kw.w.Write(kw.sync[:])
		kw.pos += kvSyncEntryLen
	}
	n := binary.PutUvarint(kw.scratch[:], uint64(len(key))+1)
	n += binary.PutUvarint(kw.scratch[n:], uint64(len(value)))
	kw.w.Write(kw.scratch[:n])
	kw.w.Write(key)
	_, err := kw.w.Write(value)
	kw.pos += int64(n + len(key) + len(value))
	if err != nil {
		kw.err = fmt.Errorf("mapreduce: write KV file: %w", err)
	}
	return kw.err
}

// Flush writes buffered data to the underlying writer.
func (kw *KVFileWriter) Flush() error {
	if kw.err != nil {
		return kw.err
	}
	if err := kw.w.Flush(); err != nil {
		kw.err = fmt.Errorf("mapreduce: write KV file: %w", err)
	}
	return kw.err
}

// KVFileReader reads the records of a KV file. Not safe for concurrent use.
type KVFileReader struct {
	r     *bufio.Reader
	name  string // for messages
	pos   int64  // offset of the next entry
	end   int64  // stop at the first sync entry at or after end
	size  int64  // file size; -1 if unknown
	sync  [kvSyncSize]byte
	key   []byte
	value []byte
	done  bool
	err   error
}

// NewKVFileReader reads the header of the KV file r and returns a reader
// for all its records.
func NewKVFileReader(r io.Reader) (*KVFileReader, error) {
	var hdr [kvHeaderLen]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		if err == io.ErrUnexpectedEOF || err == io.EOF {
			return nil, fmt.Errorf("mapreduce: KV file: short header: %w", ErrKVCorrupt)
		}
		return nil, fmt.Errorf("mapreduce: KV file: %w", err)
	}
	kr := &KVFileReader{r: bufio.NewReaderSize(r, 64<<10), name: "KV file", pos: kvHeaderLen, end: math.MaxInt64, size: -1}
	if err := kr.parseHeader(hdr[:]); err != nil {
		return nil, err
	}
	return kr, nil
}

func (kr *KVFileReader) parseHeader(hdr []byte) error {
	if string(hdr[:len(kvMagic)]) != kvMagic {
		return fmt.Errorf("mapreduce: %s is not a KV file (magic %q): %w", kr.name, hdr[:len(kvMagic)], ErrKVCorrupt)
	}
	if v := hdr[len(kvMagic)]; v != kvVersion {
		return fmt.Errorf("mapreduce: %s: KV file version %d is not supported (want %d): %w", kr.name, v, kvVersion, ErrKVCorrupt)
	}
	copy(kr.sync[:], hdr[len(kvMagic)+1:])
	return nil
}

func (kr *KVFileReader) corrupt(at int64, format string, args ...any) {
	kr.err = fmt.Errorf("mapreduce: %s: %s at offset %d: %w", kr.name, fmt.Sprintf(format, args...), at, ErrKVCorrupt)
}

// readUvarint reads a varint, counting its bytes into pos.
func (kr *KVFileReader) readUvarint() (uint64, error) {
	var x uint64
	var s uint
	for i := 0; i < binary.MaxVarintLen64; i++ {
		b, err := kr.r.ReadByte()
		if err != nil {
			return 0, err
		}
		kr.pos++
		if b < 0x80 {
			if i == binary.MaxVarintLen64-1 && b > 1 {
				return 0, errVarint
			}
			return x | uint64(b)<<s, nil
		}
		x |= uint64(b&0x7f) << s
		s += 7
	}
	return 0, errVarint
}

var errVarint = errors.New("bad varint")

// readField reads a key or value of n bytes into buf.
func (kr *KVFileReader) readField(buf []byte, n uint64, at int64, what string) ([]byte, bool) {
	limit := uint64(kvMaxField)
	if kr.size >= 0 {
		limit = uint64(max(kr.size-kr.pos, 0))
	}
	if n > limit {
		kr.corrupt(at, "truncated entry: %s length %d is larger than the rest of the file", what, n)
		return nil, false
	}
	if uint64(cap(buf)) < n {
		buf = make([]byte, n)
	}
	buf = buf[:n]
	if _, err := io.ReadFull(kr.r, buf); err != nil {
		kr.readErr(at, err)
		return nil, false
	}
	kr.pos += int64(n)
	return buf, true
}

// readErr records a read error inside the entry at at.
func (kr *KVFileReader) readErr(at int64, err error) {
	if err == io.EOF || err == io.ErrUnexpectedEOF {
		kr.corrupt(at, "truncated entry")
		return
	}
	if err == errVarint {
		kr.corrupt(at, "bad length")
		return
	}
	kr.err = fmt.Errorf("mapreduce: read %s at offset %d: %w", kr.name, at, err)
}

// Next advances to the next record.
func (kr *KVFileReader) Next() bool {
	for !kr.done && kr.err == nil {
		at := kr.pos
		v, err := kr.readUvarint()
		if err != nil {
			if err == io.EOF && kr.pos == at {
				kr.done = true
				return false
			}
			kr.readErr(at, err)
			return false
		}
		if v == kvSyncEscape {
			var m [kvSyncSize]byte
			if _, err := io.ReadFull(kr.r, m[:]); err != nil {
				kr.readErr(at, err)
				return false
			}
			kr.pos += kvSyncSize
			if m != kr.sync {
				kr.corrupt(at, "wrong sync marker")
				return false
			}
			if at >= kr.end {
				kr.done = true
			}
			continue
		}
		vlen, err := kr.readUvarint()
		if err != nil {
			kr.readErr(at, err)
			return false
		}
		var ok bool
		if kr.key, ok = kr.readField(kr.key, v-1, at, "key"); !ok {
			return false
		}
		if kr.value, ok = kr.readField(kr.value, vlen, at, "value"); !ok {
			return false
		}
		return true
	}
	return false
}

// Key returns the current record's key, valid until the next Next.
func (kr *KVFileReader) Key() []byte { return kr.key }

// Value returns the current record's value, valid until the next Next.
func (kr *KVFileReader) Value() []byte { return kr.value }

// Err returns the error that stopped Next, nil at a clean end.
func (kr *KVFileReader) Err() error { return kr.err }

// KVFileInputFormat reads KV files (see KVFileOutputFormat). Files are
// split as FileSplits describes; a split owns the records that follow the
// first sync entry at or after its start (the file header for the split at
// offset 0), up to the first sync entry at or after its end, as Hadoop's
// SequenceFile readers do. Keys and values are the records' bytes.
type KVFileInputFormat struct{}

// Splits implements InputFormat.
func (KVFileInputFormat) Splits(ctx context.Context, env fs.Env, c *conf.Configuration, paths []string) ([]InputSplit, error) {
	return FileSplits(ctx, env, c, paths, nil)
}

// Open implements InputFormat.
func (KVFileInputFormat) Open(ctx context.Context, env fs.Env, c *conf.Configuration, split InputSplit) (RecordReader, error) {
	if c == nil {
		c = env.Conf
	}
	s0 := split
	s0.Start = 0
	in, err := openSplitFile(ctx, env, c, s0)
	if err != nil {
		return nil, err
	}
	r := &kvRecordReader{in: in, start: split.Start, end: split.Start + split.Length}
	r.kr = &KVFileReader{name: split.Path, end: r.end, size: in.size}
	if in.size == 0 {
		r.kr.done = true // an empty file has no records (not even a header)
		return r, nil
	}
	fail := func(err error) (RecordReader, error) {
		in.Close()
		return nil, err
	}
	var hdr [kvHeaderLen]byte
	if n, err := in.f.ReadAt(hdr[:], 0); n < len(hdr) {
		if err == io.EOF {
			return fail(fmt.Errorf("mapreduce: %s: short header: %w", split.Path, ErrKVCorrupt))
		}
		return fail(fmt.Errorf("mapreduce: read %s: %w", split.Path, err))
	}
	if err := r.kr.parseHeader(hdr[:]); err != nil {
		return fail(err)
	}
	at := int64(kvHeaderLen)
	if split.Start > 0 {
		at, err = r.findSync(max(split.Start, kvHeaderLen))
		if err != nil {
			return fail(err)
		}
		if at < 0 || at >= r.end {
			r.kr.done = true // no sync entry in the split: its records belong to an earlier one
			r.kr.pos = r.end
			return r, nil
		}
	}
	if _, err := in.f.Seek(at, io.SeekStart); err != nil {
		return fail(fmt.Errorf("mapreduce: seek %s to %d: %w", split.Path, at, err))
	}
	r.kr.pos = at
	r.kr.r = bufio.NewReaderSize(in.f, 64<<10)
	return r, nil
}

// findSync returns the offset of the first sync entry at or after off
// that starts before the split's end, -1 if there is none.
func (r *kvRecordReader) findSync(off int64) (int64, error) {
	pattern := append([]byte{kvSyncEscape}, r.kr.sync[:]...)
	buf := make([]byte, 64<<10)
	for off < r.end {
		// Read no further than a sync entry starting just before the end.
		chunk := buf[:min(int64(len(buf)), r.end-off+int64(len(pattern))-1)]
		n, err := r.in.f.ReadAt(chunk, off)
		if i := bytes.Index(buf[:n], pattern); i >= 0 {
			return off + int64(i), nil
		}
		if err == io.EOF {
			return -1, nil
		}
		if err != nil {
			return 0, fmt.Errorf("mapreduce: read %s at offset %d: %w", r.in.uri, off, err)
		}
		if n < len(pattern) {
			return -1, nil
		}
		off += int64(n - (len(pattern) - 1))
	}
	return -1, nil
}

// kvRecordReader reads one split of a KV file.
type kvRecordReader struct {
	in         *splitFile
	kr         *KVFileReader
	start, end int64
}

func (r *kvRecordReader) Next() bool    { return r.kr.Next() }
func (r *kvRecordReader) Key() []byte   { return r.kr.Key() }
func (r *kvRecordReader) Value() []byte { return r.kr.Value() }
func (r *kvRecordReader) Err() error    { return r.kr.Err() }
func (r *kvRecordReader) Close() error  { return r.in.Close() }

func (r *kvRecordReader) Progress() float64 {
	if r.kr.done {
		return 1
	}
	if r.end <= r.start {
		return 0
	}
	return min(1, max(0, float64(r.kr.pos-r.start)/float64(r.end-r.start)))
}

// KVFileOutputFormat writes KV files (docs/format/kvfile.md): every
// record's key and value as they are, nil written as empty. Output is not
// compressed (mapreduce.output.fileoutputformat.compress is ignored).
type KVFileOutputFormat struct{}

// Check implements OutputFormat: see CheckOutputDir.
func (KVFileOutputFormat) Check(ctx context.Context, env fs.Env, c *conf.Configuration, dir string) error {
	return CheckOutputDir(ctx, env, c, dir)
}

// Writer implements OutputFormat: the file is name in the attempt's work
// directory (WorkPath).
func (KVFileOutputFormat) Writer(ctx context.Context, att *TaskAttempt, name string) (RecordWriter, error) {
	f, err := createWorkFile(ctx, att, name)
	if err != nil {
		return nil, err
	}
	kw, err := NewKVFileWriter(f)
	if err != nil {
		f.Close()
		return nil, err
	}
	return &kvRecordWriter{f: f, kw: kw}, nil
}

type kvRecordWriter struct {
	f  io.WriteCloser
	kw *KVFileWriter
}

func (w *kvRecordWriter) Write(key, value []byte) error { return w.kw.Write(key, value) }

func (w *kvRecordWriter) Close() error {
	if w.f == nil {
		return nil
	}
	err := errors.Join(w.kw.Flush(), w.f.Close())
	w.f = nil
	return err
}
