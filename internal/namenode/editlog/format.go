package editlog

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/stratafs/strata/internal/vfs"
)

// On-disk constants. docs/format/namenode-storage.md describes them byte by
// byte; change both together.
const (
	// LayoutVersion is the storage layout this package writes and reads
	// (the layoutVersion key of VERSION).
	LayoutVersion = 1

	// MaxRecordSize bounds one record's payload. Append refuses larger
	// records, and a reader never allocates more than this for one record,
	// whatever a damaged length field says.
	MaxRecordSize = 64 << 20

	segmentMagic   = "STRATAED"
	segmentVersion = 1
	imageMagic     = "STRATAIM"
	imageVersion   = 1

	// Segment header: magic[8] | version uint32 | firstTxID uint64.
	segmentHeaderSize = 20
	// Record header: length uint32 | crc32c uint32 | txid uint64.
	recordHeaderSize = 16
	// Image header: magic[8] | version uint32 | txid uint64.
	imageHeaderSize = 20
	// Image trailer: payload length uint64 | crc32c uint32.
	imageTrailerSize = 12

	currentDir   = "current"
	lockFileName = "in_use.lock"
	versionFile  = "VERSION"
	seenTxIDFile = "seen_txid"

	imagePrefix      = "fsimage_"
	imageTmpPrefix   = "fsimage.ckpt_"
	inProgressPrefix = "edits_inprogress_"
	finalizedPrefix  = "edits_"
	txidDigits       = 19
)

var (
	be         = binary.BigEndian
	castagnoli = crc32.MakeTable(crc32.Castagnoli)
)

func imageName(txid uint64) string       { return fmt.Sprintf("%s%019d", imagePrefix, txid) }
func imageTmpName(txid uint64) string    { return fmt.Sprintf("%s%019d", imageTmpPrefix, txid) }
func inProgressName(start uint64) string { return fmt.Sprintf("%s%019d", inProgressPrefix, start) }
func finalizedName(start, end uint64) string {
	return fmt.Sprintf("%s%019d-%019d", finalizedPrefix, start, end)
}

// parseTxID parses exactly 19 decimal digits.
func parseTxID(s string) (uint64, bool) {
	if len(s) != txidDigits {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(s, 10, 64)
	return v, err == nil
}

// segmentInfo is one edit log segment file found in current/.
type segmentInfo struct {
	name       string
	start      uint64
	end        uint64 // last txid; meaningful for finalized segments only
	inProgress bool
}

// imageInfo is one image file found in current/.
type imageInfo struct {
	name string
	txid uint64
}

// dirListing is what current/ holds, sorted: segments by start txid
// ascending, images by txid descending.
type dirListing struct {
	segments []segmentInfo
	images   []imageInfo
	tmp      []string // abandoned fsimage.ckpt_* files
}

func listCurrent(fsys vfs.FS, cur string) (dirListing, error) {
	var ls dirListing
	ents, err := fsys.ReadDir(cur)
	if err != nil {
		return ls, err
	}
	for _, e := range ents {
		name := e.Name()
		if !e.Type().IsRegular() {
			continue
		}
		switch {
		case strings.HasPrefix(name, imageTmpPrefix):
			ls.tmp = append(ls.tmp, name)
		case strings.HasPrefix(name, imagePrefix):
			if tx, ok := parseTxID(name[len(imagePrefix):]); ok {
				ls.images = append(ls.images, imageInfo{name: name, txid: tx})
			}
		case strings.HasPrefix(name, inProgressPrefix):
			if tx, ok := parseTxID(name[len(inProgressPrefix):]); ok {
				ls.segments = append(ls.segments, segmentInfo{name: name, start: tx, inProgress: true})
			}
		case strings.HasPrefix(name, finalizedPrefix):
			rest := name[len(finalizedPrefix):]
			a, b, ok := strings.Cut(rest, "-")
			if !ok {
				continue
			}
			s, ok1 := parseTxID(a)
			t, ok2 := parseTxID(b)
			if ok1 && ok2 && s <= t {
				ls.segments = append(ls.segments, segmentInfo{name: name, start: s, end: t})
			}
		}
	}
	sort.Slice(ls.segments, func(i, j int) bool {
		a, b := ls.segments[i], ls.segments[j]
		if a.start != b.start {
			return a.start < b.start
		}
		return !a.inProgress && b.inProgress
	})
	sort.Slice(ls.images, func(i, j int) bool { return ls.images[i].txid > ls.images[j].txid })
	return ls, nil
}

// appendRecord frames rec as one record with the given txid.
func appendRecord(buf []byte, txid uint64, rec []byte) []byte {
	var h [recordHeaderSize]byte
	be.PutUint32(h[0:4], uint32(len(rec)))
	be.PutUint64(h[8:16], txid)
	crc := crc32.Update(crc32.Update(0, castagnoli, h[8:16]), castagnoli, rec)
	be.PutUint32(h[4:8], crc)
	buf = append(buf, h[:]...)
	return append(buf, rec...)
}

func segmentHeader(first uint64) []byte {
	h := make([]byte, segmentHeaderSize)
	copy(h, segmentMagic)
	be.PutUint32(h[8:12], segmentVersion)
	be.PutUint64(h[12:20], first)
	return h
}

// recordError is a damaged record: what a crash in the middle of a write
// leaves at the end of the log, or what bit rot leaves anywhere.
type recordError struct {
	off    int64
	reason string
}

func (e *recordError) Error() string { return fmt.Sprintf("offset %d: %s", e.off, e.reason) }

// recordReader reads the records of one segment, after its header. It never
// allocates more than min(MaxRecordSize, bytes left in the file) for a
// payload.
type recordReader struct {
	r    *bufio.Reader
	off  int64 // offset of the next record
	size int64 // file size
	buf  []byte
}

func newRecordReader(f io.ReaderAt, off, size int64) *recordReader {
	return &recordReader{
		r:    bufio.NewReaderSize(io.NewSectionReader(f, off, size-off), 64<<10),
		off:  off,
		size: size,
	}
}

// errZeroHeader: the next record header is all zeros, which no record has
// (txids start at 1). It is preallocated space if everything after it is
// zero too.
var errZeroHeader = errors.New("zero-filled record header")

// next returns the next record, io.EOF at the end of the file,
// errZeroHeader at zero fill, a *recordError for a damaged record, or an I/O
// error; after anything but a record the reader is unusable. The payload is
// valid until the next call.
func (rr *recordReader) next() (uint64, []byte, error) {
	left := rr.size - rr.off
	if left == 0 {
		return 0, nil, io.EOF
	}
	var h [recordHeaderSize]byte
	if left < recordHeaderSize {
		if _, err := io.ReadFull(rr.r, h[:left]); err != nil {
			return 0, nil, unexpectedEOF(err)
		}
		if allZero(h[:left]) {
			return 0, nil, errZeroHeader
		}
		return 0, nil, &recordError{rr.off, fmt.Sprintf("short record header (%d of %d bytes)", left, recordHeaderSize)}
	}
	if _, err := io.ReadFull(rr.r, h[:]); err != nil {
		return 0, nil, unexpectedEOF(err)
	}
	if allZero(h[:]) {
		return 0, nil, errZeroHeader
	}
	length := int64(be.Uint32(h[0:4]))
	if length > MaxRecordSize {
		return 0, nil, &recordError{rr.off, fmt.Sprintf("record length %d exceeds the maximum %d", length, MaxRecordSize)}
	}
	if length > left-recordHeaderSize {
		return 0, nil, &recordError{rr.off, fmt.Sprintf("short record: length %d but only %d bytes left", length, left-recordHeaderSize)}
	}
	if int64(cap(rr.buf)) < length {
		rr.buf = make([]byte, length)
	}
	p := rr.buf[:length]
	if _, err := io.ReadFull(rr.r, p); err != nil {
		return 0, nil, unexpectedEOF(err)
	}
	crc := crc32.Update(crc32.Update(0, castagnoli, h[8:16]), castagnoli, p)
	if crc != be.Uint32(h[4:8]) {
		return 0, nil, &recordError{rr.off, fmt.Sprintf("checksum mismatch (stored %#08x, computed %#08x)", be.Uint32(h[4:8]), crc)}
	}
	rr.off += recordHeaderSize + length
	return be.Uint64(h[8:16]), p, nil
}

func allZero(p []byte) bool {
	for _, b := range p {
		if b != 0 {
			return false
		}
	}
	return true
}

// zeroFrom reports whether f holds only zero bytes in [off, size).
func zeroFrom(f io.ReaderAt, off, size int64) (bool, error) {
	buf := make([]byte, 64<<10)
	for off < size {
		n := int64(len(buf))
		if size-off < n {
			n = size - off
		}
		if _, err := f.ReadAt(buf[:n], off); err != nil && !errors.Is(err, io.EOF) {
			return false, err
		}
		if !allZero(buf[:n]) {
			return false, nil
		}
		off += n
	}
	return true, nil
}

// unexpectedEOF turns an EOF inside a region whose size was checked against
// the file's size into an error: the file shrank under us.
func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// scanBudget bounds the bytes checksummed while looking for a valid record
// after a damaged one, so that a pathological file cannot make Load
// quadratic. Past it the damage is reported as mid-log corruption, the safe
// answer.
const scanBudget = 256 << 20

var errScanBudget = errors.New("gave up looking for valid records after the damage (scan budget exhausted)")

// findValidRecord looks for a record with a valid checksum and a txid ≥
// minTxID starting anywhere in [from, size). It reports the first one found.
func findValidRecord(f io.ReaderAt, from, size int64, minTxID uint64) (off int64, txid uint64, found bool, err error) {
	const chunk = 64 << 10
	buf := make([]byte, chunk+recordHeaderSize)
	var crcBuf []byte
	budget := int64(scanBudget)
	for base := from; base+recordHeaderSize <= size; base += chunk {
		n := int64(len(buf))
		if size-base < n {
			n = size - base
		}
		if _, err := f.ReadAt(buf[:n], base); err != nil && !(errors.Is(err, io.EOF)) {
			return 0, 0, false, err
		}
		for i := int64(0); i < chunk && i+recordHeaderSize <= n; i++ {
			h := buf[i : i+recordHeaderSize]
			tx := be.Uint64(h[8:16])
			if tx < minTxID {
				continue
			}
			p := base + i
			left := size - p - recordHeaderSize
			length := int64(be.Uint32(h[0:4]))
			if length > MaxRecordSize || length > left {
				continue
			}
			// Each record takes at least recordHeaderSize bytes, so a
			// later record cannot carry a txid further away than this.
			if tx-minTxID > uint64((size-from)/recordHeaderSize) {
				continue
			}
			budget -= length
			if budget < 0 {
				return 0, 0, false, errScanBudget
			}
			if crcBuf == nil {
				crcBuf = make([]byte, 32<<10)
			}
			crc := crc32.Update(0, castagnoli, h[8:16])
			for done := int64(0); done < length; {
				m := length - done
				if m > int64(len(crcBuf)) {
					m = int64(len(crcBuf))
				}
				if _, err := f.ReadAt(crcBuf[:m], p+recordHeaderSize+done); err != nil && !errors.Is(err, io.EOF) {
					return 0, 0, false, err
				}
				crc = crc32.Update(crc, castagnoli, crcBuf[:m])
				done += m
			}
			if crc == be.Uint32(h[4:8]) {
				return p, tx, true, nil
			}
		}
	}
	return 0, 0, false, nil
}

// syncDir fsyncs a directory so that entries created, renamed or removed in
// it are durable.
func syncDir(fsys vfs.FS, dir string) error {
	if err := vfs.SyncDir(fsys, dir); err != nil {
		return fmt.Errorf("fsync directory %s: %w", dir, err)
	}
	return nil
}

// writeFileAtomic replaces dir/name with data: tmp file, fsync, rename,
// fsync dir.
func writeFileAtomic(fsys vfs.FS, dir, name string, data []byte) error {
	tmp := filepath.Join(dir, name+".tmp")
	f, err := fsys.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, filePerm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = fsys.Rename(tmp, filepath.Join(dir, name))
	}
	if err != nil {
		fsys.Remove(tmp)
		return err
	}
	return syncDir(fsys, dir)
}

func writeSeenTxID(fsys vfs.FS, cur string, txid uint64) error {
	return writeFileAtomic(fsys, cur, seenTxIDFile, []byte(strconv.FormatUint(txid, 10)+"\n"))
}

// readSeenTxID returns the seen_txid value, or ok=false when the file is
// absent.
func readSeenTxID(fsys vfs.FS, cur string) (uint64, bool, error) {
	b, err := vfs.ReadFile(fsys, filepath.Join(cur, seenTxIDFile))
	if errors.Is(err, os.ErrNotExist) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%w: %s: %v", ErrCorrupt, seenTxIDFile, err)
	}
	return v, true, nil
}
