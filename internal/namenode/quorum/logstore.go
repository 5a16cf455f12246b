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
	"sync"
	"time"

	"github.com/hashicorp/raft"
	"golang.org/x/sys/unix"
)

// LogStore is a member's Raft log (raft.LogStore) and stable store
// (raft.StableStore) in a directory of its own (docs/format/namenode-ha.md):
//
//   - segment files seg-<first index, 20 digits>, only appended to, of
//     batches: StoreLogs writes one batch (a header with its own CRC-32C
//     over the whole batch, then one frame per entry) with one write and
//     one fdatasync, so a batch of proposals costs one disk sync (the
//     edit log's group commit, under Raft); segments are preallocated
//     with zeros so that the sync writes data only;
//   - "first": the first index the log holds, written before a prefix is
//     removed and whenever the log starts again after being emptied;
//   - "stable": Raft's term and vote, rewritten whole (temporary file,
//     fsync, rename, directory fsync).
//
// Opening reads every batch. A bad batch at the very end of the last
// segment — no good batch after it — is an interrupted StoreLogs, never
// acknowledged: it and everything after it are cut off. A bad batch with
// a good one after it, or damage in an earlier segment, is damage to
// entries that may have been acknowledged: the store refuses to open.
//
// Locking: wmu serializes the writers (StoreLogs, DeleteRange, Set); mu
// guards the index (first, last, locs, segs) and is held only to read or
// publish it, never across a disk sync, so Raft's replication reads
// (GetLog) go on while a batch is being synced.
type LogStore struct {
	dir string

	wmu sync.Mutex

	mu     sync.RWMutex
	segs   []*segment
	first  uint64 // 0 when empty
	last   uint64
	locs   []loc // locs[i] is entry first+i
	stable map[string][]byte

	scratch []byte // StoreLogs' batch buffer, under wmu
}

type segment struct {
	first    uint64
	path     string
	f        *os.File
	size     int64 // end of the batches
	allocEnd int64 // end of the zero-filled preallocation after them
}

type loc struct {
	seg *segment
	off int64 // of the frame
	n   int64 // frame length
}

const (
	segPrefix   = "seg-"
	segDigits   = 20
	batchHeader = 24 // magic, count, length, CRC-32C, first index
	frameHeader = 8  // length, CRC-32C
	maxFrame    = MaxRecord + 1<<16
	maxBatch    = 256 << 20
)

var batchMagic = []byte("SRLB")

// segmentMaxSize is when StoreLogs starts a new segment (a variable for
// tests).
var segmentMaxSize int64 = 64 << 20

// preallocation is the step by which a segment grows ahead of its
// batches, zero-filled, so that a StoreLogs' fdatasync writes data only,
// not the file's size (as the edit log does).
const preallocation = 1 << 20

var zeros = make([]byte, 64<<10)

var crcTable = crc32.MakeTable(crc32.Castagnoli)

var (
	// errNotFound is what hashicorp/raft expects from a stable store for
	// a key never set (it compares the message).
	errNotFound  = errors.New("not found")
	errMalformed = errors.New("quorum: malformed log entry")
)

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
		s.closeSegments()
		return nil, err
	}
	return s, nil
}

// IsMonotonic tells hashicorp/raft that this store's indexes only grow
// and that, after installing a snapshot, it should empty the log (the next
// entries follow the snapshot, not the old log).
func (s *LogStore) IsMonotonic() bool { return true }

func (s *LogStore) readFirst() (uint64, error) {
	b, err := os.ReadFile(filepath.Join(s.dir, "first"))
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	v, err := strconv.ParseUint(string(bytes.TrimSpace(b)), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("quorum: %s/first: %w", s.dir, err)
	}
	return v, nil
}

// segmentFirsts lists the segments by first index; only canonical names
// count, anything else in the directory is left alone.
func (s *LogStore) segmentFirsts() ([]uint64, error) {
	names, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, err
	}
	var firsts []uint64
	for _, e := range names {
		name := e.Name()
		if len(name) != len(segPrefix)+segDigits || name[:len(segPrefix)] != segPrefix || !e.Type().IsRegular() {
			continue
		}
		v, err := strconv.ParseUint(name[len(segPrefix):], 10, 64)
		if err != nil || s.segPath(v) != filepath.Join(s.dir, name) {
			continue
		}
		firsts = append(firsts, v)
	}
	sort.Slice(firsts, func(i, j int) bool { return firsts[i] < firsts[j] })
	return firsts, nil
}

func (s *LogStore) load() error {
	logicalFirst, err := s.readFirst()
	if err != nil {
		return err
	}
	firsts, err := s.segmentFirsts()
	if err != nil {
		return err
	}
	for i, first := range firsts {
		f, err := os.OpenFile(s.segPath(first), os.O_RDWR, 0)
		if err != nil {
			return err
		}
		seg := &segment{first: first, path: s.segPath(first), f: f}
		s.segs = append(s.segs, seg)
		if s.first != 0 && first >= s.first && first <= s.last {
			// Made after a suffix deletion: it replaces the entries from
			// its first on (later data wins, as within a segment).
			s.locs = s.locs[:first-s.first]
			s.last = first - 1
			if s.last < s.first {
				s.first, s.last, s.locs = 0, 0, nil
			}
		} else if s.last != 0 && first != s.last+1 {
			if s.last+1 <= logicalFirst {
				// Everything before this segment was removed (a crash
				// between writing "first" and deleting the files).
				s.dropLoaded(seg)
			} else {
				return fmt.Errorf("quorum: segment %s starts at %d, after entry %d", seg.path, first, s.last)
			}
		}
		if err := s.scan(seg, i == len(firsts)-1); err != nil {
			return err
		}
	}
	if s.first != 0 && logicalFirst > s.first {
		if logicalFirst > s.last {
			s.first, s.last, s.locs = 0, 0, nil
		} else {
			s.locs = append([]loc(nil), s.locs[logicalFirst-s.first:]...)
			s.first = logicalFirst
		}
	}
	return nil
}

// dropLoaded forgets the segments loaded before keep (and removes them).
func (s *LogStore) dropLoaded(keep *segment) {
	for _, seg := range s.segs {
		if seg != keep {
			seg.f.Close()
			os.Remove(seg.path)
		}
	}
	s.segs = []*segment{keep}
	s.first, s.last, s.locs = 0, 0, nil
}

func (s *LogStore) segPath(first uint64) string {
	return filepath.Join(s.dir, fmt.Sprintf("%s%0*d", segPrefix, segDigits, first))
}

// scan reads seg's batches into the index.
func (s *LogStore) scan(seg *segment, lastSeg bool) error {
	st, err := seg.f.Stat()
	if err != nil {
		return err
	}
	size := st.Size()
	data := make([]byte, size)
	if _, err := seg.f.ReadAt(data, 0); err != nil && err != io.EOF {
		return err
	}
	next := seg.first
	var off int64
	for off < size {
		if size-off >= batchHeader && bytes.Equal(data[off:off+batchHeader], zeros[:batchHeader]) && !hasValidBatch(data, off+1) {
			break // the zero-filled rest of the segment
		}
		frames, n, err := parseBatch(data, off, 0)
		if err == nil {
			bf := batchFirstIndex(data, off)
			switch {
			case s.first != 0 && bf >= s.first && bf < next:
				// Replaces the entries from bf on (a suffix deletion).
				s.locs = s.locs[:bf-s.first]
				s.last, next = bf-1, bf
				if s.last < s.first {
					s.first, s.last, s.locs = 0, 0, nil
				}
			case bf != next:
				err = fmt.Errorf("batch starts at entry %d where %d was expected", bf, next)
			}
		}
		if err != nil {
			if !lastSeg || hasValidBatch(data, off+1) {
				// Good batches follow the damage: they were written, and
				// perhaps acknowledged, after it.
				return fmt.Errorf("quorum: segment %s at offset %d: %w", seg.path, off, err)
			}
			break // an interrupted StoreLogs: never acknowledged
		}
		for _, fr := range frames {
			if s.first == 0 {
				s.first = next
			}
			s.last = next
			s.locs = append(s.locs, loc{seg: seg, off: fr[0], n: fr[1]})
			next++
		}
		off += n
	}
	if off < size && lastSeg {
		// Cut what follows the last good batch (a torn batch, the
		// preallocation), so that nothing of it can reappear later.
		if err := seg.f.Truncate(off); err != nil {
			return err
		}
		if err := seg.f.Sync(); err != nil {
			return err
		}
		size = off
	}
	seg.size, seg.allocEnd = off, size
	return nil
}

// parseBatch checks the batch at off (its first entry must be next) and
// returns its frames' offsets and lengths and the batch's length.
func parseBatch(data []byte, off int64, next uint64) ([][2]int64, int64, error) {
	if int64(len(data))-off < batchHeader {
		return nil, 0, io.ErrUnexpectedEOF
	}
	h := data[off : off+batchHeader]
	if !bytes.Equal(h[0:4], batchMagic) {
		return nil, 0, errors.New("no batch header")
	}
	count := int64(binary.BigEndian.Uint32(h[4:8]))
	length := int64(binary.BigEndian.Uint32(h[8:12]))
	first := binary.BigEndian.Uint64(h[16:24])
	body := off + batchHeader
	if count == 0 || length > maxBatch || body+length > int64(len(data)) {
		return nil, 0, errors.New("bad batch length")
	}
	if crc32.Checksum(data[body:body+length], crcTable) != binary.BigEndian.Uint32(h[12:16]) {
		return nil, 0, errors.New("batch checksum mismatch")
	}
	if next != 0 && first != next {
		return nil, 0, fmt.Errorf("batch starts at entry %d where %d was expected", first, next)
	}
	frames := make([][2]int64, 0, count)
	pos := body
	for i := int64(0); i < count; i++ {
		l, n, err := decodeFrame(data[pos:body+length], 0)
		if err != nil {
			return nil, 0, err
		}
		if l.Index != first+uint64(i) {
			return nil, 0, fmt.Errorf("entry %d in a batch from %d", l.Index, first)
		}
		frames = append(frames, [2]int64{pos, n})
		pos += n
	}
	if pos != body+length {
		return nil, 0, errors.New("batch length does not match its entries")
	}
	return frames, batchHeader + length, nil
}

func batchFirstIndex(data []byte, off int64) uint64 {
	return binary.BigEndian.Uint64(data[off+16 : off+24])
}

// hasValidBatch reports whether a whole, checksummed batch starts
// anywhere at or after from.
func hasValidBatch(data []byte, from int64) bool {
	for from < int64(len(data)) {
		i := bytes.Index(data[from:], batchMagic)
		if i < 0 {
			return false
		}
		at := from + int64(i)
		if _, _, err := parseBatch(data, at, 0); err == nil {
			return true
		}
		from = at + 1
	}
	return false
}

// decodeFrame decodes the frame at the start of p[off:].
func decodeFrame(p []byte, off int64) (*raft.Log, int64, error) {
	if int64(len(p))-off < frameHeader {
		return nil, 0, io.ErrUnexpectedEOF
	}
	n := int64(binary.BigEndian.Uint32(p[off : off+4]))
	if n == 0 || n > maxFrame || off+frameHeader+n > int64(len(p)) {
		return nil, 0, fmt.Errorf("bad entry length %d", n)
	}
	payload := p[off+frameHeader : off+frameHeader+n]
	if crc32.Checksum(payload, crcTable) != binary.BigEndian.Uint32(p[off+4:off+8]) {
		return nil, 0, errors.New("entry checksum mismatch")
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

// decodeLog decodes a frame's payload; Data and Extensions are copies.
func decodeLog(p []byte) (*raft.Log, error) {
	r := bytes.NewReader(p)
	l := &raft.Log{}
	var err error
	if l.Index, err = binary.ReadUvarint(r); err != nil {
		return nil, errMalformed
	}
	if l.Term, err = binary.ReadUvarint(r); err != nil {
		return nil, errMalformed
	}
	t, err := r.ReadByte()
	if err != nil {
		return nil, errMalformed
	}
	l.Type = raft.LogType(t)
	at, err := binary.ReadVarint(r)
	if err != nil {
		return nil, errMalformed
	}
	l.AppendedAt = time.Unix(0, at)
	readBytes := func() ([]byte, error) {
		n, err := binary.ReadUvarint(r)
		if err != nil || n > uint64(r.Len()) {
			return nil, errMalformed
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
		return nil, errMalformed
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
	buf := make([]byte, lc.n)
	_, err := lc.seg.f.ReadAt(buf, lc.off)
	var l *raft.Log
	if err == nil {
		l, _, err = decodeFrame(buf, 0)
	}
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
// (Raft deletes a conflicting suffix first), or starts the log again past
// its end (after a snapshot was installed), and is on disk when it
// returns.
func (s *LogStore) StoreLogs(logs []*raft.Log) error {
	if len(logs) == 0 {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.RLock()
	first, last := s.first, s.last
	s.mu.RUnlock()
	for i, l := range logs {
		if i > 0 && l.Index != logs[i-1].Index+1 || l.Index == 0 {
			return fmt.Errorf("quorum: storing entries out of order (%d)", l.Index)
		}
		size := len(l.Data) + len(l.Extensions) + 64
		if size > maxFrame {
			return fmt.Errorf("quorum: entry %d of %d bytes is too large", l.Index, size)
		}
	}
	switch start := logs[0].Index; {
	case first != 0 && start <= last:
		return fmt.Errorf("quorum: storing entry %d over the log's %d-%d", start, first, last)
	case first != 0 && start > last+1:
		// A gap: the log starts again after a snapshot.
		if err := s.reset(start); err != nil {
			return err
		}
		first = 0
	}
	if first == 0 {
		// The log starts (again) here: a first index left by an earlier
		// compaction must not hide it after a restart.
		if err := writeFileSync(s.dir, "first", []byte(strconv.FormatUint(logs[0].Index, 10))); err != nil {
			return err
		}
	}
	s.mu.RLock()
	var seg *segment
	if n := len(s.segs); n > 0 && first != 0 && s.segs[n-1].size < segmentMaxSize {
		seg = s.segs[n-1]
	}
	s.mu.RUnlock()
	if seg == nil {
		var err error
		if seg, err = s.newSegment(logs[0].Index); err != nil {
			return err
		}
	}
	buf := append(s.scratch[:0], make([]byte, batchHeader)...)
	offs := make([]int64, len(logs)+1)
	for i, l := range logs {
		offs[i] = int64(len(buf))
		buf = appendFrame(buf, l)
	}
	offs[len(logs)] = int64(len(buf))
	body := buf[batchHeader:]
	copy(buf[0:4], batchMagic)
	binary.BigEndian.PutUint32(buf[4:8], uint32(len(logs)))
	binary.BigEndian.PutUint32(buf[8:12], uint32(len(body)))
	binary.BigEndian.PutUint32(buf[12:16], crc32.Checksum(body, crcTable))
	binary.BigEndian.PutUint64(buf[16:24], logs[0].Index)
	s.scratch = buf
	if _, err := seg.f.WriteAt(buf, seg.size); err != nil {
		return err
	}
	end := seg.size + int64(len(buf))
	if end > seg.allocEnd {
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
	s.mu.Lock()
	for i, l := range logs {
		s.locs = append(s.locs, loc{seg: seg, off: seg.size + offs[i], n: offs[i+1] - offs[i]})
		if s.first == 0 {
			s.first = l.Index
		}
		s.last = l.Index
	}
	seg.size = end
	s.mu.Unlock()
	return nil
}

// newSegment starts segment first durably (the file and its directory
// entry); called under wmu.
func (s *LogStore) newSegment(first uint64) (*segment, error) {
	p := s.segPath(first)
	f, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		// Left empty by a crash right after it was made: it holds no
		// batch, or load would have made it part of the log.
		if err = os.Remove(p); err == nil {
			f, err = os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
		}
	}
	if err != nil {
		return nil, err
	}
	if err := syncDir(s.dir); err != nil {
		f.Close()
		return nil, err
	}
	seg := &segment{first: first, path: p, f: f}
	s.mu.Lock()
	// A segment left empty at the end (by a suffix deletion) goes.
	if n := len(s.segs); n > 0 && s.segs[n-1].size == 0 {
		old := s.segs[n-1]
		s.segs = s.segs[:n-1]
		old.f.Close()
		if old.path != p {
			os.Remove(old.path)
		}
	}
	s.segs = append(s.segs, seg)
	s.mu.Unlock()
	return seg, nil
}

// DeleteRange implements raft.LogStore: Raft removes either a prefix
// (compaction after a snapshot) or a suffix (entries a new leader
// overrides), never the middle.
func (s *LogStore) DeleteRange(min, max uint64) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.RLock()
	first, last := s.first, s.last
	s.mu.RUnlock()
	if first == 0 || max < first || min > last {
		return nil
	}
	min, max = maxU(min, first), minU(max, last)
	switch {
	case min == first && max == last:
		return s.reset(max + 1)
	case min == first:
		return s.deletePrefix(max)
	case max == last:
		return s.deleteSuffix(min)
	}
	return fmt.Errorf("quorum: deleting entries %d-%d from the middle of %d-%d", min, max, first, last)
}

// reset empties the store; the next entry may have any index. "first"
// goes first, so that a crash part-way leaves only entries below it,
// which load drops.
func (s *LogStore) reset(nextFirst uint64) error {
	if err := writeFileSync(s.dir, "first", []byte(strconv.FormatUint(nextFirst, 10))); err != nil {
		return err
	}
	s.mu.Lock()
	segs := s.segs
	s.segs, s.locs, s.first, s.last = nil, nil, 0, 0
	s.mu.Unlock()
	var errs []error
	for i := len(segs) - 1; i >= 0; i-- {
		segs[i].f.Close()
		if err := os.Remove(segs[i].path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, syncDir(s.dir))
	return errors.Join(errs...)
}

func (s *LogStore) deletePrefix(max uint64) error {
	if err := writeFileSync(s.dir, "first", []byte(strconv.FormatUint(max+1, 10))); err != nil {
		return err
	}
	s.mu.Lock()
	s.locs = append([]loc(nil), s.locs[max+1-s.first:]...)
	s.first = max + 1
	var gone []*segment
	keep := make([]*segment, 0, len(s.segs))
	for i, seg := range s.segs {
		if i+1 < len(s.segs) && s.segs[i+1].first-1 <= max {
			gone = append(gone, seg)
			continue
		}
		keep = append(keep, seg)
	}
	s.segs = keep
	s.mu.Unlock()
	var errs []error
	for _, seg := range gone {
		seg.f.Close()
		if err := os.Remove(seg.path); err != nil && !errors.Is(err, os.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	errs = append(errs, syncDir(s.dir))
	return errors.Join(errs...)
}

// deleteSuffix removes entries min and after. Nothing is rewritten in
// place: the index forgets them and the later segments go (newest first,
// so that a crash part-way leaves a contiguous log); the next batch is
// appended after them in the segment holding min-1, and on load a batch
// (or a segment) that starts
// at or below the last entry so far replaces the entries from its start
// (later batches win). A crash before that batch is written brings the
// removed entries back, as if they had never been removed: they are an
// uncommitted suffix, which the leader removes again.
func (s *LogStore) deleteSuffix(min uint64) error {
	s.mu.Lock()
	var later []*segment
	keep := make([]*segment, 0, len(s.segs))
	for _, seg := range s.segs {
		if seg.first >= min {
			later = append(later, seg) // all of its entries go
			continue
		}
		keep = append(keep, seg)
	}
	s.segs = keep
	s.locs = s.locs[:min-s.first]
	s.last = min - 1
	s.mu.Unlock()
	for i := len(later) - 1; i >= 0; i-- {
		later[i].f.Close()
		if err := os.Remove(later[i].path); err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
	}
	return syncDir(s.dir)
}

// Set implements raft.StableStore.
func (s *LogStore) Set(key, val []byte) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	s.mu.Lock()
	s.stable[string(key)] = append([]byte(nil), val...)
	b, err := json.Marshal(s.stable)
	s.mu.Unlock()
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
	s.wmu.Lock()
	defer s.wmu.Unlock()
	return s.closeSegments()
}

func (s *LogStore) closeSegments() error {
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
