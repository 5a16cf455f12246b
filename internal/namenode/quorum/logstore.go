package quorum

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"golang.org/x/sys/unix"
)

// LogStore is a member's Raft log (raft.LogStore) and stable store
// (raft.StableStore) in a directory of its own (docs/format/namenode-ha.md):
//
//   - segment files seg-<first index, 20 digits> of framed entries, only
//     appended to; StoreLogs writes a batch with one write and one
//     fdatasync, so a batch of proposals costs one disk sync (the edit
//     log's group commit, now under Raft);
//   - "first": the first index still in the log after compaction removed
//     a prefix that ends inside a segment;
//   - "stable": Raft's term and vote, rewritten whole (temporary file,
//     fsync, rename, directory fsync).
//
// On open the segments are read and checked (CRC-32C per entry); a torn
// or corrupt tail of the last segment, which an interrupted StoreLogs
// leaves and which was therefore never acknowledged, is cut off. Damage
// anywhere else is an error. The index of every entry's position is kept
// in memory (16 bytes an entry).
type LogStore struct {
	dir string

	mu     sync.RWMutex
	segs   []*segment
	first  uint64 // 0 when empty
	last   uint64
	locs   []loc // locs[i] is entry first+i
	stable map[string][]byte
}

type segment struct {
	first    uint64
	path     string
	f        *os.File
	size     int64 // end of the entries
	allocEnd int64 // end of the zero-filled preallocation after them
}

// preallocation is the step by which a segment grows ahead of its
// entries, zero-filled, so that a StoreLogs' fdatasync writes data only,
// not the file's size (as the edit log does).
const preallocation = 1 << 20

var zeros = make([]byte, 64<<10)

type loc struct {
	seg *segment
	off int64
	n   int64 // frame length
}

const (
	segPrefix   = "seg-"
	frameHeader = 8 // length, CRC-32C
	maxFrame    = MaxRecord + 1<<16
)

// segmentMaxSize is when StoreLogs starts a new segment (a variable for
// tests).
var segmentMaxSize int64 = 64 << 20

var crcTable = crc32.MakeTable(crc32.Castagnoli)

// errNotFound is what hashicorp/raft expects from a stable store for a
// key never set (it compares the message).
var errNotFound = errors.New("not found")

// OpenLogStore opens (creating if needed) the store in dir.
func OpenLogStore(dir string) (*LogStore, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, err
	}
	s := &LogStore{dir: dir, stable: map[string][]byte{}}
	if b, err := os.ReadFile(filepath.Join(dir, "stable")); err == nil {
		if err := json.Unmarshal(b, &s.stable); err != nil {
			return nil, fmt.Errorf("quorum: %s/stable: %w", dir, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err := s.load(); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

func (s *LogStore) load() error {
	var logicalFirst uint64
	if b, err := os.ReadFile(filepath.Join(s.dir, "first")); err == nil {
		v, err := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
		if err != nil {
			return fmt.Errorf("quorum: %s/first: %w", s.dir, err)
		}
		logicalFirst = v
	} else if !errors.Is(err, os.ErrNotExist) {
		return err
	}
	names, err := os.ReadDir(s.dir)
	if err != nil {
		return err
	}
	var firsts []uint64
	for _, e := range names {
		if !strings.HasPrefix(e.Name(), segPrefix) {
			continue
		}
		v, err := strconv.ParseUint(strings.TrimPrefix(e.Name(), segPrefix), 10, 64)
		if err != nil {
			continue
		}
		firsts = append(firsts, v)
	}
	sort.Slice(firsts, func(i, j int) bool { return firsts[i] < firsts[j] })
	for i, first := range firsts {
		lastSeg := i == len(firsts)-1
		seg, err := s.openSegment(first)
		if err != nil {
			return err
		}
		if s.last != 0 && first != s.last+1 {
			return fmt.Errorf("quorum: segment %s starts at %d, after entry %d", seg.path, first, s.last)
		}
		if err := s.scan(seg, lastSeg); err != nil {
			return err
		}
	}
	// Drop what compaction removed.
	if logicalFirst > s.first && s.first != 0 {
		if logicalFirst > s.last {
			s.first, s.last, s.locs = 0, 0, nil
		} else {
			s.locs = s.locs[logicalFirst-s.first:]
			s.first = logicalFirst
		}
	}
	return nil
}

func (s *LogStore) segPath(first uint64) string {
	return filepath.Join(s.dir, fmt.Sprintf("%s%020d", segPrefix, first))
}

func (s *LogStore) openSegment(first uint64) (*segment, error) {
	p := s.segPath(first)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	seg := &segment{first: first, path: p, f: f}
	s.segs = append(s.segs, seg)
	return seg, nil
}

// scan reads seg's frames into the index; a bad tail of the last segment
// is cut off.
func (s *LogStore) scan(seg *segment, lastSeg bool) error {
	st, err := seg.f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	var off int64
	next := seg.first
	for off < size {
		if zeroHeader(seg.f, off, size) {
			break // the preallocated rest of the segment
		}
		l, n, err := readFrame(seg.f, off, size)
		if err == nil && l.Index != next {
			err = fmt.Errorf("entry %d where %d was expected", l.Index, next)
		}
		if err != nil {
			if !lastSeg || validAfter(seg.f, off, size) {
				// Not a torn tail: entries follow the damage, so they were
				// written (and maybe acknowledged) after it.
				return fmt.Errorf("quorum: segment %s at offset %d: %w", seg.path, off, err)
			}
			// An interrupted StoreLogs: its batch was never acknowledged.
			if err := seg.f.Truncate(off); err != nil {
				return err
			}
			if err := seg.f.Sync(); err != nil {
				return err
			}
			size = off
			break
		}
		if s.first == 0 {
			s.first = l.Index
		}
		s.last = l.Index
		s.locs = append(s.locs, loc{seg: seg, off: off, n: n})
		off += n
		next++
	}
	seg.size, seg.allocEnd = off, size
	return nil
}

// zeroHeader reports whether a frame header at off is all zeros: the end
// of the entries in a preallocated segment.
func zeroHeader(r io.ReaderAt, off, size int64) bool {
	if size-off < frameHeader {
		return false
	}
	var hdr [frameHeader]byte
	if _, err := r.ReadAt(hdr[:], off); err != nil {
		return false
	}
	return hdr == [frameHeader]byte{}
}

// validAfter reports whether a good frame follows the bad one at off (so
// the damage is not an interrupted last write).
func validAfter(r io.ReaderAt, off, size int64) bool {
	var hdr [frameHeader]byte
	if _, err := r.ReadAt(hdr[:], off); err != nil {
		return false
	}
	n := int64(binary.BigEndian.Uint32(hdr[0:4]))
	next := off + frameHeader + n
	if n == 0 || n > maxFrame || next >= size {
		return false
	}
	_, _, err := readFrame(r, next, size)
	return err == nil
}

// readFrame decodes the frame at off.
func readFrame(r io.ReaderAt, off, size int64) (*raft.Log, int64, error) {
	if size-off < frameHeader {
		return nil, 0, io.ErrUnexpectedEOF
	}
	var hdr [frameHeader]byte
	if _, err := r.ReadAt(hdr[:], off); err != nil {
		return nil, 0, err
	}
	n := int64(binary.BigEndian.Uint32(hdr[0:4]))
	if n == 0 || n > maxFrame || off+frameHeader+n > size {
		return nil, 0, fmt.Errorf("bad frame length %d", n)
	}
	payload := make([]byte, n)
	if _, err := r.ReadAt(payload, off+frameHeader); err != nil {
		return nil, 0, err
	}
	if crc32.Checksum(payload, crcTable) != binary.BigEndian.Uint32(hdr[4:8]) {
		return nil, 0, errors.New("checksum mismatch")
	}
	l, err := decodeLog(payload)
	return l, frameHeader + n, err
}

func appendFrame(buf []byte, l *raft.Log) []byte {
	start := len(buf)
	buf = append(buf, make([]byte, frameHeader)...)
	buf = binary.AppendUvarint(buf, l.Index)
	buf = binary.AppendUvarint(buf, l.Term)
	buf = append(buf, byte(l.Type))
	buf = binary.AppendVarint(buf, l.AppendedAt.UnixNano())
	buf = binary.AppendUvarint(buf, uint64(len(l.Data)))
	buf = append(buf, l.Data...)
	buf = binary.AppendUvarint(buf, uint64(len(l.Extensions)))
	buf = append(buf, l.Extensions...)
	payload := buf[start+frameHeader:]
	binary.BigEndian.PutUint32(buf[start:], uint32(len(payload)))
	binary.BigEndian.PutUint32(buf[start+4:], crc32.Checksum(payload, crcTable))
	return buf
}

func decodeLog(p []byte) (*raft.Log, error) {
	bad := errors.New("malformed entry")
	r := bytes.NewReader(p)
	l := &raft.Log{}
	var err error
	if l.Index, err = binary.ReadUvarint(r); err != nil {
		return nil, bad
	}
	if l.Term, err = binary.ReadUvarint(r); err != nil {
		return nil, bad
	}
	t, err := r.ReadByte()
	if err != nil {
		return nil, bad
	}
	l.Type = raft.LogType(t)
	at, err := binary.ReadVarint(r)
	if err != nil {
		return nil, bad
	}
	l.AppendedAt = time.Unix(0, at)
	readBytes := func() ([]byte, error) {
		n, err := binary.ReadUvarint(r)
		if err != nil || n > uint64(r.Len()) {
			return nil, bad
		}
		if n == 0 {
			return nil, nil
		}
		b := make([]byte, n)
		io.ReadFull(r, b)
		return b, nil
	}
	if l.Data, err = readBytes(); err != nil {
		return nil, err
	}
	if l.Extensions, err = readBytes(); err != nil {
		return nil, err
	}
	if r.Len() != 0 {
		return nil, bad
	}
	return l, nil
}

// FirstIndex implements raft.LogStore (0 when empty).
func (s *LogStore) FirstIndex() (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.first, nil
}

// LastIndex implements raft.LogStore (0 when empty).
func (s *LogStore) LastIndex() (uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.last, nil
}

// GetLog implements raft.LogStore.
func (s *LogStore) GetLog(index uint64, out *raft.Log) error {
	s.mu.RLock()
	if s.first == 0 || index < s.first || index > s.last {
		s.mu.RUnlock()
		return raft.ErrLogNotFound
	}
	lc := s.locs[index-s.first]
	s.mu.RUnlock()
	l, _, err := readFrame(lc.seg.f, lc.off, lc.off+lc.n)
	if err == nil && l.Index != index {
		err = fmt.Errorf("found entry %d", l.Index)
	}
	if err != nil {
		// Deleted while being read (compaction closes segment files,
		// truncation rewrites the tail)?
		s.mu.RLock()
		gone := s.first == 0 || index < s.first || index > s.last
		s.mu.RUnlock()
		if gone {
			return raft.ErrLogNotFound
		}
		return fmt.Errorf("quorum: entry %d: %w", index, err)
	}
	*out = *l
	return nil
}

// StoreLog implements raft.LogStore.
func (s *LogStore) StoreLog(l *raft.Log) error { return s.StoreLogs([]*raft.Log{l}) }

// StoreLogs implements raft.LogStore: the batch follows the last entry
// (Raft deletes a conflicting suffix first) and is on disk when it
// returns.
func (s *LogStore) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, l := range logs {
		want := s.last + 1
		if s.first == 0 && i == 0 {
			want = l.Index
		}
		if i > 0 {
			want = logs[i-1].Index + 1
		}
		if l.Index != want || l.Index == 0 {
			return fmt.Errorf("quorum: storing entry %d where %d was expected", l.Index, want)
		}
		if len(l.Data) > MaxRecord+1024 {
			return fmt.Errorf("quorum: entry %d of %d bytes is too large", l.Index, len(l.Data))
		}
	}
	if s.first == 0 {
		// The log starts (again) here: a first index left by an earlier
		// compaction must not hide it after a restart.
		if err := writeFileSync(s.dir, "first", []byte(strconv.FormatUint(logs[0].Index, 10))); err != nil {
			return err
		}
	}
	if len(s.segs) == 0 || s.first == 0 || s.segs[len(s.segs)-1].size >= segmentMaxSize {
		if err := s.newSegment(logs[0].Index); err != nil {
			return err
		}
	}
	seg := s.segs[len(s.segs)-1]
	var buf []byte
	offs := make([]int64, len(logs))
	for i, l := range logs {
		offs[i] = int64(len(buf))
		buf = appendFrame(buf, l)
	}
	if _, err := seg.f.WriteAt(buf, seg.size); err != nil {
		return err
	}
	if end := seg.size + int64(len(buf)); end > seg.allocEnd {
		newEnd := (end + preallocation - 1) / preallocation * preallocation
		for pos := end; pos < newEnd; {
			n := min(int64(len(zeros)), newEnd-pos)
			if _, err := seg.f.WriteAt(zeros[:n], pos); err != nil {
				return fmt.Errorf("quorum: preallocating %s: %w", seg.path, err)
			}
			pos += n
		}
		seg.allocEnd = newEnd
	}
	if err := unix.Fdatasync(int(seg.f.Fd())); err != nil {
		return err
	}
	for i, l := range logs {
		end := int64(len(buf))
		if i+1 < len(logs) {
			end = offs[i+1]
		}
		s.locs = append(s.locs, loc{seg: seg, off: seg.size + offs[i], n: end - offs[i]})
		if s.first == 0 {
			s.first = l.Index
		}
		s.last = l.Index
	}
	seg.size += int64(len(buf))
	return nil
}

// newSegment starts segment first (durably: the file and its directory
// entry).
func (s *LogStore) newSegment(first uint64) error {
	if len(s.segs) > 0 && s.segs[len(s.segs)-1].size == 0 && s.segs[len(s.segs)-1].first == first {
		return nil
	}
	if _, err := s.openSegment(first); err != nil {
		return err
	}
	return syncDir(s.dir)
}

// DeleteRange implements raft.LogStore: Raft removes either a prefix
// (compaction after a snapshot) or a suffix (entries a new leader
// overrides), never the middle.
func (s *LogStore) DeleteRange(min, max uint64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.first == 0 || max < s.first || min > s.last {
		return nil
	}
	min, max = maxU(min, s.first), minU(max, s.last)
	switch {
	case min == s.first && max == s.last:
		return s.reset(max + 1)
	case min == s.first:
		return s.deletePrefix(max)
	case max == s.last:
		return s.deleteSuffix(min)
	}
	return fmt.Errorf("quorum: deleting entries %d-%d from the middle of %d-%d", min, max, s.first, s.last)
}

// reset empties the store; the next entry may have any index.
func (s *LogStore) reset(nextFirst uint64) error {
	for _, seg := range s.segs {
		seg.f.Close()
		if err := os.Remove(seg.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	s.segs, s.locs, s.first, s.last = nil, nil, 0, 0
	if err := writeFileSync(s.dir, "first", []byte(strconv.FormatUint(nextFirst, 10))); err != nil {
		return err
	}
	return syncDir(s.dir)
}

func (s *LogStore) deletePrefix(max uint64) error {
	if err := writeFileSync(s.dir, "first", []byte(strconv.FormatUint(max+1, 10))); err != nil {
		return err
	}
	s.locs = s.locs[max+1-s.first:]
	s.first = max + 1
	// Whole segments before the new first entry go.
	keep := s.segs[:0]
	for i, seg := range s.segs {
		end := s.last
		if i+1 < len(s.segs) {
			end = s.segs[i+1].first - 1
		}
		if end <= max {
			seg.f.Close()
			if err := os.Remove(seg.path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			continue
		}
		keep = append(keep, seg)
	}
	s.segs = keep
	return syncDir(s.dir)
}

func (s *LogStore) deleteSuffix(min uint64) error {
	lc := s.locs[min-s.first]
	keep := s.segs[:0]
	for _, seg := range s.segs {
		if seg.first > min {
			seg.f.Close()
			if err := os.Remove(seg.path); err != nil && !errors.Is(err, os.ErrNotExist) {
				return err
			}
			continue
		}
		keep = append(keep, seg)
	}
	s.segs = keep
	if err := lc.seg.f.Truncate(lc.off); err != nil {
		return err
	}
	if err := lc.seg.f.Sync(); err != nil {
		return err
	}
	lc.seg.size, lc.seg.allocEnd = lc.off, lc.off
	s.locs = s.locs[:min-s.first]
	s.last = min - 1
	return syncDir(s.dir)
}

// Set implements raft.StableStore.
func (s *LogStore) Set(key, val []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stable[string(key)] = append([]byte(nil), val...)
	b, err := json.Marshal(s.stable)
	if err != nil {
		return err
	}
	return writeFileSync(s.dir, "stable", b)
}

// Get implements raft.StableStore.
func (s *LogStore) Get(key []byte) ([]byte, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	v, ok := s.stable[string(key)]
	if !ok {
		return nil, errNotFound
	}
	return append([]byte(nil), v...), nil
}

// SetUint64 implements raft.StableStore.
func (s *LogStore) SetUint64(key []byte, val uint64) error {
	return s.Set(key, binary.BigEndian.AppendUint64(nil, val))
}

// GetUint64 implements raft.StableStore.
func (s *LogStore) GetUint64(key []byte) (uint64, error) {
	v, err := s.Get(key)
	if err != nil {
		return 0, err
	}
	if len(v) != 8 {
		return 0, fmt.Errorf("quorum: stable key %q holds %d bytes, not a uint64", key, len(v))
	}
	return binary.BigEndian.Uint64(v), nil
}

// Close closes the segment files.
func (s *LogStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var errs []error
	for _, seg := range s.segs {
		errs = append(errs, seg.f.Close())
	}
	s.segs = nil
	return errors.Join(errs...)
}

// writeFileSync replaces dir/name with data durably.
func writeFileSync(dir, name string, data []byte) error {
	tmp := filepath.Join(dir, name+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

func minU(a, b uint64) uint64 {
	if a < b {
		return a
	}
	return b
}

func maxU(a, b uint64) uint64 {
	if a > b {
		return a
	}
	return b
}
