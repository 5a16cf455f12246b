package spill

import (
	"bytes"
	"encoding/binary"
	"io"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"
)

type rec struct {
	part       int
	key, value []byte
}

var allCodecs = []Codec{None, Zstd, LZ4, Snappy}

// randRecords makes n records; keys come from a space of distinct keys
// (0 = unbounded) of length 0..maxKey.
func randRecords(rng *rand.Rand, n, parts, distinct, maxKey, maxValue int) []rec {
	var space [][]byte
	for range distinct {
		k := make([]byte, rng.IntN(maxKey+1))
		for i := range k {
			k[i] = byte(rng.IntN(4)) // small alphabet: shared prefixes, zero bytes
		}
		space = append(space, k)
	}
	out := make([]rec, n)
	for i := range out {
		var k []byte
		if distinct > 0 {
			k = space[rng.IntN(distinct)]
		} else {
			k = make([]byte, rng.IntN(maxKey+1))
			for j := range k {
				k[j] = byte(rng.IntN(256))
			}
		}
		v := make([]byte, rng.IntN(maxValue+1))
		for j := range v {
			v[j] = byte(rng.IntN(256))
		}
		out[i] = rec{part: rng.IntN(parts), key: k, value: v}
	}
	return out
}

// reference sorts records stably by partition, then key.
func reference(recs []rec, compare func(a, b []byte) int) []rec {
	if compare == nil {
		compare = bytes.Compare
	}
	out := slices.Clone(recs)
	slices.SortStableFunc(out, func(a, b rec) int {
		if a.part != b.part {
			return a.part - b.part
		}
		return compare(a.key, b.key)
	})
	return out
}

func drain(t testing.TB, it Iterator) ([]rec, error) {
	t.Helper()
	var out []rec
	for it.Next() {
		out = append(out, rec{key: slices.Clone(it.Key()), value: slices.Clone(it.Value())})
	}
	err := it.Err()
	if cerr := it.Close(); cerr != nil && err == nil {
		err = cerr
	}
	return out, err
}

// readOutput reads every partition of a map output, checking the index
// file against out.Index.
func readOutput(t testing.TB, out Output, codec Codec) []rec {
	t.Helper()
	idx, err := ReadIndex(out.IndexPath)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(idx, out.Index) {
		t.Fatalf("index file %v, Output.Index %v", idx, out.Index)
	}
	f, err := os.Open(out.Path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	var end int64
	var all []rec
	for p, e := range idx {
		if e.Offset != end {
			t.Fatalf("partition %d at %d, previous ended at %d", p, e.Offset, end)
		}
		end = e.Offset + e.PartLength
		it, err := OpenSegment(io.NewSectionReader(f, e.Offset, e.PartLength), codec, e.PartLength, e.RawLength)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := drain(t, it)
		if err != nil {
			t.Fatalf("partition %d: %v", p, err)
		}
		for i := range recs {
			recs[i].part = p
		}
		all = append(all, recs...)
	}
	if end != st.Size() {
		t.Fatalf("index covers %d bytes, file has %d", end, st.Size())
	}
	return all
}

func equalRecs(t testing.TB, got, want []rec) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d records, want %d", len(got), len(want))
	}
	for i := range got {
		if got[i].part != want[i].part || !bytes.Equal(got[i].key, want[i].key) || !bytes.Equal(got[i].value, want[i].value) {
			t.Fatalf("record %d: got (%d, %q, %q), want (%d, %q, %q)", i,
				got[i].part, trunc(got[i].key), trunc(got[i].value), want[i].part, trunc(want[i].key), trunc(want[i].value))
		}
	}
}

func trunc(b []byte) []byte {
	if len(b) > 20 {
		return b[:20]
	}
	return b
}

type counterMap struct {
	mu sync.Mutex
	m  map[string]int64
}

func (c *counterMap) add(name string, n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil {
		c.m = map[string]int64{}
	}
	c.m[name] += n
}

func (c *counterMap) get(name string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[name]
}

func u64(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }

// sumCombiner sums 8-byte big-endian values.
func sumCombiner(key []byte, values func() ([]byte, bool), emit func(k, v []byte) error) error {
	var sum uint64
	for v, ok := values(); ok; v, ok = values() {
		sum += binary.BigEndian.Uint64(v)
	}
	return emit(key, u64(sum))
}

// writeSegment encodes records as one segment.
func encodeSegment(t testing.TB, codec Codec, recs []rec) (data []byte, raw int64) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewSegmentWriter(&buf, codec)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if err := w.Append(r.key, r.value); err != nil {
			t.Fatal(err)
		}
	}
	raw, part, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if part != int64(buf.Len()) {
		t.Fatalf("part length %d, wrote %d", part, buf.Len())
	}
	return buf.Bytes(), raw
}

func listFiles(t testing.TB, dirs ...string) []string {
	t.Helper()
	var out []string
	for _, d := range dirs {
		err := walk(d, func(p string) { out = append(out, p) })
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func walk(dir string, fn func(string)) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		p := dir + "/" + e.Name()
		if e.IsDir() {
			if err := walk(p, fn); err != nil {
				return err
			}
			continue
		}
		fn(p)
	}
	return nil
}
