package shuffle

import (
	"bufio"
	"cmp"
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/stratafs/strata/internal/spill"
	"github.com/stratafs/strata/internal/vfs"
)

// segment is a fetched map output or a merge's output: in memory (it
// set, already verified) or in a local file (path).
type segment struct {
	size int64 // PartLength: bytes held in memory or on disk
	raw  int64
	mem  bool
	it   spill.Iterator // memory segments: the verified iterator
	path string         // disk segments
	orig bool           // a fetched map output, not yet counted as merged
}

// fileIter reads a disk segment and removes its file when closed.
type fileIter struct {
	spill.Iterator
	f    vfs.File
	fs   vfs.FS
	once sync.Once
}

func (f *fileIter) Close() error {
	var err error
	f.once.Do(func() {
		err = f.Iterator.Close()
		f.f.Close()
		if rerr := f.fs.Remove(f.f.Name()); err == nil {
			err = rerr
		}
	})
	return err
}

// open returns an Iterator over seg. Closing it frees the segment.
func (s *Shuffle) open(seg *segment) (spill.Iterator, error) {
	if seg.mem {
		it := seg.it
		seg.it = nil
		return it, nil
	}
	f, err := vfs.Open(s.fs, seg.path)
	if err != nil {
		return nil, &localError{err}
	}
	it, err := spill.OpenSegment(f, s.cfg.Codec, seg.size, seg.raw)
	if err != nil {
		f.Close()
		return nil, &localError{fmt.Errorf("%s: %w", seg.path, err)}
	}
	return &fileIter{Iterator: it, f: f, fs: s.fs}, nil
}

// openAll opens segs, or closes what it opened and fails. It returns how
// many fetched map outputs are among them.
func (s *Shuffle) openAll(segs []*segment) ([]spill.Iterator, int64, error) {
	its := make([]spill.Iterator, 0, len(segs))
	var orig int64
	for _, seg := range segs {
		it, err := s.open(seg)
		if err != nil {
			for _, it := range its {
				it.Close()
			}
			return nil, 0, err
		}
		its = append(its, it)
		if seg.orig {
			orig++
		}
	}
	return its, orig, nil
}

func (s *Shuffle) used() int64 { return s.memInflight + s.memHeld }

// tryReserve reserves n bytes of memory if the budget allows.
func (s *Shuffle) tryReserve(n int64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.used()+n > s.cfg.MemoryBudget {
		return false
	}
	s.memInflight += n
	s.maxUsed = max(s.maxUsed, s.used())
	return true
}

// reserve waits until n bytes of memory can be reserved. A waiting fetch
// that nothing running will free memory for starts an in-memory merge
// of what is held, even below the threshold (Hadoop instead lets one
// fetch exceed the budget).
func (s *Shuffle) reserve(n int64) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for s.used()+n > s.cfg.MemoryBudget {
		if s.closed {
			return ErrClosed
		}
		if s.err != nil {
			return s.err
		}
		if s.memInflight == 0 && !s.memMerging && len(s.pending) > 0 {
			s.startMemMerge(s.used() + n - s.cfg.MemoryBudget)
		}
		s.stalls++
		s.cond.Wait()
	}
	s.memInflight += n
	s.maxUsed = max(s.maxUsed, s.used())
	return nil
}

func (s *Shuffle) unreserve(n int64) {
	s.mu.Lock()
	s.memInflight -= n
	s.cond.Broadcast()
	s.mu.Unlock()
}

// addSegment takes a fetched segment (whose memory was reserved) and
// starts the merges it calls for. s.mu is held.
func (s *Shuffle) addSegment(seg *segment) {
	if !seg.mem {
		s.addDisk(seg)
		return
	}
	s.memInflight -= seg.size
	s.memHeld += seg.size
	s.memPending += seg.size
	s.pending = append(s.pending, seg)
	s.mergeOverflow()
}

// mergeOverflow starts an in-memory merge once the pending segments reach
// the merge threshold, if what the final merge cannot hold in memory
// (overflow) is more than nothing. s.mu is held.
func (s *Shuffle) mergeOverflow() {
	if s.memPending < s.mergeAt || s.memMerging {
		return
	}
	if need := s.overflow(); need > 0 {
		s.startMemMerge(need)
	}
}

// overflow is how many bytes will not fit in the memory budget when every
// map output is fetched: what is held and in flight, plus the outputs not
// fetched yet at the mean size of those fetched so far, less the budget.
// A merge at the threshold writes that much to disk (the oldest pending
// segments) instead of everything held, as Hadoop does, so the rest stays
// for the final merge to read from memory; a projection that fell short
// is made up by reserve, which merges what a fetch needs. s.mu is held.
func (s *Shuffle) overflow() int64 {
	if s.done == 0 {
		return s.memPending
	}
	left := int64(len(s.maps) - s.done)
	return s.used() + left*(s.bytes/int64(s.done)) - s.cfg.MemoryBudget
}

// addDisk adds a disk segment and starts an on-disk merge when there are
// 2×SortFactor−1 of them. s.mu is held.
func (s *Shuffle) addDisk(seg *segment) {
	s.disk = append(s.disk, seg)
	f := s.cfg.SortFactor
	if len(s.disk) < 2*f-1 || s.diskMerging || s.closed || s.err != nil {
		return
	}
	// Merge the SortFactor smallest, as Hadoop's OnDiskMerger does.
	slices.SortStableFunc(s.disk, func(a, b *segment) int { return cmp.Compare(a.size, b.size) })
	segs := slices.Clone(s.disk[:f])
	s.disk = slices.Delete(s.disk, 0, f)
	s.diskMerging = true
	s.diskMerges++
	s.wg.Add(1)
	go s.runMerge(segs, false)
}

// startMemMerge merges the oldest pending memory segments, at least one
// and at least need bytes of them, into one disk segment in the
// background. s.mu is held.
func (s *Shuffle) startMemMerge(need int64) {
	if s.closed || s.err != nil || len(s.pending) == 0 {
		return
	}
	n, sum := 0, int64(0)
	for n < len(s.pending) && (n == 0 || sum < need) {
		sum += s.pending[n].size
		n++
	}
	segs := slices.Clone(s.pending[:n])
	s.pending = slices.Delete(s.pending, 0, n)
	s.memPending -= sum
	s.memMerging = true
	s.memMerges++
	s.memMerged += sum
	s.wg.Add(1)
	go s.runMerge(segs, true)
}

// runMerge merges segs into one disk segment: an in-memory merge (all
// held segments) or an on-disk one (SortFactor files).
func (s *Shuffle) runMerge(segs []*segment, memory bool) {
	defer s.wg.Done()
	var out *segment
	its, orig, err := s.openAll(segs)
	if err == nil {
		s.count(CounterMergedMapOutputs, orig)
		out, err = s.mergeToFile(its)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	defer s.cond.Broadcast()
	if memory {
		for _, seg := range segs {
			s.memHeld -= seg.size
		}
		s.memMerging = false
	} else {
		s.diskMerging = false
	}
	if err != nil {
		if !s.closed {
			s.fatal(fmt.Errorf("shuffle: merging map outputs: %w", err))
		}
		return
	}
	s.addDisk(out)
	s.mergeOverflow()
}

// mergeToFile merges its in one pass into a new local segment file,
// compressed with the job's codec. The inputs are closed.
func (s *Shuffle) mergeToFile(its []spill.Iterator) (*segment, error) {
	m, err := spill.MergeFS(s.fs, its, s.cfg.Compare, max(2, len(its)), s.dirs, s.cfg.Codec)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	path := s.newFile("merge")
	f, err := vfs.Create(s.fs, path)
	if err != nil {
		return nil, err
	}
	bw := bufio.NewWriterSize(f, 256<<10)
	var raw, part int64
	w, err := spill.NewSegmentWriter(bw, s.cfg.Codec)
	if err == nil {
		for n := 1; m.Next(); n++ {
			if err = w.Append(m.Key(), m.Value()); err != nil {
				break
			}
			if n%4096 == 0 && s.ctx.Err() != nil {
				err = ErrClosed
				break
			}
		}
		if err == nil {
			err = m.Err()
		}
		var cerr error
		raw, part, cerr = w.Close()
		if err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = bw.Flush()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		s.fs.Remove(path)
		return nil, err
	}
	return &segment{size: part, raw: raw, path: path}, nil
}

// finalIter is the Iterator Wait returns: closing it removes the
// attempt's directories.
type finalIter struct {
	spill.Iterator
	dirs []string
	fs   vfs.FS
	once sync.Once
}

func (f *finalIter) Close() error {
	var err error
	f.once.Do(func() {
		err = errors.Join(f.Iterator.Close(), removeDirs(f.fs, f.dirs))
	})
	return err
}

// mergeMemory replaces the iterators of memory segments among its (one
// per segment of segs) by one streaming merge of them all, placed last:
// the merge factor bounds the files a merge reads at once, and merging
// memory segments in more than one pass would write them to disk only to
// read them back. On error every iterator is closed.
func (s *Shuffle) mergeMemory(segs []*segment, its []spill.Iterator) ([]spill.Iterator, error) {
	var mem, rest []spill.Iterator
	for i, seg := range segs {
		if seg.mem {
			mem = append(mem, its[i])
		} else {
			rest = append(rest, its[i])
		}
	}
	if len(mem) < 2 {
		return its, nil
	}
	m, err := spill.MergeFS(s.fs, mem, s.cfg.Compare, len(mem), s.dirs, s.cfg.Codec)
	if err != nil { // mem closed by MergeFS
		for _, it := range rest {
			it.Close()
		}
		return nil, err
	}
	return append(rest, m), nil
}

// finalMerge hands every segment to spill.Merge, smallest first (its
// intermediate passes, if any, take the first ones). Called by Wait with
// s.mu held; it unlocks.
func (s *Shuffle) finalMerge() (spill.Iterator, error) {
	segs := append(s.pending, s.disk...)
	s.pending, s.disk = nil, nil
	s.handed = true
	s.mu.Unlock()
	slices.SortStableFunc(segs, func(a, b *segment) int { return cmp.Compare(a.size, b.size) })
	its, orig, err := s.openAll(segs)
	if err == nil {
		s.count(CounterMergedMapOutputs, orig)
		var m spill.Iterator
		if its, err = s.mergeMemory(segs, its); err == nil {
			if m, err = spill.MergeFS(s.fs, its, s.cfg.Compare, s.cfg.SortFactor, s.dirs, s.cfg.Codec); err == nil {
				return &finalIter{Iterator: m, dirs: s.dirs, fs: s.fs}, nil
			}
		}
	} else {
		for _, seg := range segs {
			if seg.it != nil {
				seg.it.Close()
			}
		}
	}
	err = fmt.Errorf("shuffle: final merge: %w", err)
	s.mu.Lock()
	s.handed = false
	s.fatal(err)
	closed := s.closed
	s.mu.Unlock()
	if closed {
		removeDirs(s.fs, s.dirs)
	}
	return nil, err
}
