package spill

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"

	"github.com/stratafs/strata/internal/media"
	"github.com/stratafs/strata/internal/vfs"
)

// Merge merges sorted inputs into one sorted Iterator. Records with equal
// keys come out in input order (all of segments[0]'s, then segments[1]'s,
// ...), so a stable sort split into runs and merged stays stable.
//
// At most factor inputs are merged at a time. With more inputs,
// intermediate passes merge runs of adjacent inputs into temporary
// segments in tmpDirs (round-robin, skipping dirs whose file system is
// full; os.TempDir() if empty), compressed
// with codec, until factor remain; the first pass merges just enough
// inputs that the later passes each take exactly factor (as Hadoop's
// Merger does), and the final pass streams. Intermediate passes read
// their inputs to the end and close them. Put small inputs first: the
// early passes take the first ones.
//
// compare nil means bytes.Compare. factor must be at least 2. Merge takes
// ownership of the inputs: closing the result closes them all (and removes
// temporary files), and they are closed when Merge fails.
func Merge(segments []Iterator, compare func(a, b []byte) int, factor int, tmpDirs []string, codec Codec) (Iterator, error) {
	return MergeFS(nil, segments, compare, factor, tmpDirs, codec)
}

// MergeFS is Merge with its temporary segments on fsys (nil means
// media.Default(), the process's file system).
func MergeFS(fsys vfs.FS, segments []Iterator, compare func(a, b []byte) int, factor int, tmpDirs []string, codec Codec) (Iterator, error) {
	fsys = orDefault(fsys)
	closeAll := func(its []Iterator) {
		for _, it := range its {
			it.Close()
		}
	}
	if factor < 2 {
		closeAll(segments)
		return nil, fmt.Errorf("spill: merge factor %d is less than 2", factor)
	}
	c, err := codec.canonical()
	if err != nil {
		closeAll(segments)
		return nil, err
	}
	if len(tmpDirs) == 0 {
		tmpDirs = []string{os.TempDir()}
	}
	seq := 0
	list, rest, err := MergePasses(slices.Clone(segments), factor, func(in []Iterator) (Iterator, error) {
		it, err := mergeToDisk(fsys, in, compare, pickDir(fsys, tmpDirs, seq, 0), c)
		seq++
		return it, err
	})
	if err != nil {
		closeAll(list)
		closeAll(rest)
		return nil, err
	}
	switch len(list) {
	case 0:
		return emptyIter{}, nil
	case 1:
		return list[0], nil
	}
	return newMergeIter(list, compare), nil
}

// MergePasses runs Merge's intermediate passes over list, factor at a
// time: the first merge takes just enough inputs that every later one
// takes exactly factor, and a round merges runs of adjacent inputs, left
// to right, until no more reduction is needed or too few inputs remain.
// merge combines one run (and owns it, success or not). It returns the
// factor or fewer inputs left for the final pass; when a merge fails,
// what it had made and the inputs it had not reached (to be closed),
// and the error. The model's spill arithmetic plans with it too.
func MergePasses[T any](list []T, factor int, merge func([]T) (T, error)) (out, rest []T, err error) {
	first := 0
	if n := len(list); n > factor {
		first = (n-1)%(factor-1) + 1
		if first == 1 {
			first = factor
		}
	}
	need := len(list) - factor
	for len(list) > factor {
		var next []T
		for i := 0; i < len(list); {
			g := factor
			if first > 0 {
				g, first = first, 0
			}
			if need <= 0 || g > len(list)-i {
				next = append(next, list[i:]...)
				break
			}
			m, err := merge(list[i : i+g])
			if err != nil {
				return next, list[i+g:], err
			}
			next = append(next, m)
			need -= g - 1
			i += g
		}
		list = next
	}
	return list, nil, nil
}

// mergeToDisk merges inputs into a temporary segment file and returns an
// Iterator over it that removes the file when closed. The inputs are
// closed.
func mergeToDisk(fsys vfs.FS, inputs []Iterator, compare func(a, b []byte) int, dir string, codec Codec) (Iterator, error) {
	m := newMergeIter(inputs, compare)
	defer m.Close()
	f, err := vfs.CreateTemp(fsys, dir, "merge-*.tmp")
	if err != nil {
		return nil, fmt.Errorf("spill: merge pass in %s: %w", dir, err)
	}
	fail := func(err error) (Iterator, error) {
		f.Close()
		fsys.Remove(f.Name())
		return nil, fmt.Errorf("spill: merge pass to %s: %w", f.Name(), err)
	}
	bw := getWriter(f)
	defer putWriter(bw)
	w, err := NewSegmentWriter(bw, codec)
	if err != nil {
		return fail(err)
	}
	for m.Next() {
		if err := w.Append(m.Key(), m.Value()); err != nil {
			w.Close()
			return fail(err)
		}
	}
	if err := m.Err(); err != nil {
		w.Close()
		return fail(err)
	}
	raw, part, err := w.Close()
	if err != nil {
		return fail(err)
	}
	if err := bw.Flush(); err != nil {
		return fail(err)
	}
	if _, err := f.Seek(0, 0); err != nil {
		return fail(err)
	}
	it, err := OpenSegment(f, codec, part, raw)
	if err != nil {
		return fail(err)
	}
	it.(*segReader).onClose = func() error {
		f.Close()
		return fsys.Remove(f.Name())
	}
	return it, nil
}

type mergeInput struct {
	it     Iterator
	idx    int
	key    []byte
	prefix uint64 // keyPrefix(key), in bytes order
}

// mergeIter is a heap merge of sorted inputs, ties broken by input index.
// In bytes order (compare nil) it compares 8-byte key prefixes first.
type mergeIter struct {
	compare  func(a, b []byte) int // nil: bytes order
	inputs   []Iterator
	heap     []*mergeInput
	started  bool
	done     bool
	key, val []byte
	err      error
}

func newMergeIter(inputs []Iterator, compare func(a, b []byte) int) *mergeIter {
	return &mergeIter{compare: compare, inputs: inputs}
}

func (m *mergeIter) less(a, b *mergeInput) bool {
	var c int
	if m.compare == nil {
		if a.prefix != b.prefix {
			return a.prefix < b.prefix
		}
		c = bytes.Compare(a.key, b.key)
	} else {
		c = m.compare(a.key, b.key)
	}
	return c < 0 || c == 0 && a.idx < b.idx
}

// setKey makes in's current key its iterator's.
func (m *mergeIter) setKey(in *mergeInput) {
	in.key = in.it.Key()
	if m.compare == nil {
		in.prefix = keyPrefix(in.key)
	}
}

func (m *mergeIter) down(i int) {
	h := m.heap
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		j := l
		if r := l + 1; r < n && m.less(h[r], h[l]) {
			j = r
		}
		if !m.less(h[j], h[i]) {
			return
		}
		h[i], h[j] = h[j], h[i]
		i = j
	}
}

func (m *mergeIter) fail(err error) bool {
	m.err, m.done, m.key, m.val = err, true, nil, nil
	return false
}

func (m *mergeIter) Next() bool {
	if m.done {
		return false
	}
	if !m.started {
		m.started = true
		for i, it := range m.inputs {
			if it.Next() {
				in := &mergeInput{it: it, idx: i}
				m.setKey(in)
				m.heap = append(m.heap, in)
			} else if err := it.Err(); err != nil {
				return m.fail(err)
			}
		}
		for i := len(m.heap)/2 - 1; i >= 0; i-- {
			m.down(i)
		}
	} else if len(m.heap) > 0 {
		top := m.heap[0]
		if top.it.Next() {
			m.setKey(top)
		} else {
			if err := top.it.Err(); err != nil {
				return m.fail(err)
			}
			last := len(m.heap) - 1
			m.heap[0] = m.heap[last]
			m.heap = m.heap[:last]
		}
		m.down(0)
	}
	if len(m.heap) == 0 {
		m.done, m.key, m.val = true, nil, nil
		return false
	}
	m.key, m.val = m.heap[0].key, m.heap[0].it.Value()
	return true
}

func (m *mergeIter) Key() []byte   { return m.key }
func (m *mergeIter) Value() []byte { return m.val }
func (m *mergeIter) Err() error    { return m.err }

func (m *mergeIter) Close() error {
	m.done, m.key, m.val, m.heap = true, nil, nil, nil
	var errs []error
	for _, it := range m.inputs {
		errs = append(errs, it.Close())
	}
	m.inputs = nil
	return errors.Join(errs...)
}

type emptyIter struct{}

func (emptyIter) Next() bool    { return false }
func (emptyIter) Key() []byte   { return nil }
func (emptyIter) Value() []byte { return nil }
func (emptyIter) Err() error    { return nil }
func (emptyIter) Close() error  { return nil }

// grouper hands one key's values to a Groups callback.
type grouper struct {
	it      Iterator
	compare func(a, b []byte) int
	key     []byte
	first   bool // the current record is the group's first, not yet returned
	more    bool // the group may have more values
	has     bool // it is positioned on a record
	fn      func() ([]byte, bool)
	count   *int64 // if set, counts the values returned or skipped
}

func (g *grouper) next() ([]byte, bool) {
	if !g.more {
		return nil, false
	}
	if g.first {
		g.first = false
	} else if !g.it.Next() {
		g.more, g.has = false, false
		return nil, false
	} else if g.compare(g.it.Key(), g.key) != 0 {
		g.more = false
		return nil, false
	}
	if g.count != nil {
		*g.count++
	}
	return g.it.Value(), true
}

// Groups calls fn once per distinct key of it (keys equal under compare;
// nil means bytes.Compare), in order, with a function returning that
// key's values one by one and then false. The key is valid during the
// call; each value until the next call of values. Values fn does not
// consume are skipped. Groups stops at the first error of fn or of it and
// returns it; it does not close it.
func Groups(it Iterator, compare func(a, b []byte) int, fn func(key []byte, values func() ([]byte, bool)) error) error {
	return groups(it, compare, fn, nil)
}

func groups(it Iterator, compare func(a, b []byte) int, fn func(key []byte, values func() ([]byte, bool)) error, count *int64) error {
	if compare == nil {
		compare = bytes.Compare
	}
	g := &grouper{it: it, compare: compare, count: count}
	g.fn = g.next
	g.has = it.Next()
	for g.has {
		g.key = append(g.key[:0], it.Key()...)
		g.first, g.more = true, true
		if err := fn(g.key, g.fn); err != nil {
			return err
		}
		for g.more {
			g.next()
		}
	}
	return it.Err()
}

// orDefault is fsys, or the process's file system (emulated media
// included) when fsys is nil.
func orDefault(fsys vfs.FS) vfs.FS {
	if fsys == nil {
		return media.Default()
	}
	return fsys
}
