package spill

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func newTestCollector(t testing.TB, cfg Config) (*Collector, *counterMap) {
	t.Helper()
	cm := &counterMap{}
	if cfg.LocalDirs == nil {
		cfg.LocalDirs = []string{t.TempDir(), t.TempDir(), t.TempDir()}
	}
	if cfg.Name == "" {
		cfg.Name = "attempt_test_m_000001_0"
	}
	cfg.Counters = cm.add
	c, err := NewCollector(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return c, cm
}

func collectAll(t testing.TB, c *Collector, recs []rec) {
	t.Helper()
	for _, r := range recs {
		if err := c.Collect(r.part, r.key, r.value); err != nil {
			t.Fatal(err)
		}
	}
}

// checkClean checks that only file.out and its index are left.
func checkClean(t *testing.T, cfg Config, out Output) {
	t.Helper()
	files := listFiles(t, cfg.LocalDirs...)
	slices.Sort(files)
	want := []string{out.Path, out.IndexPath}
	slices.Sort(want)
	if !slices.Equal(files, want) {
		t.Errorf("files left: %v, want %v", files, want)
	}
}

func TestCollectorRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	recs := randRecords(rng, 12000, 7, 0, 24, 120)
	for _, codec := range allCodecs {
		t.Run(codec.String(), func(t *testing.T) {
			cfg := Config{Partitions: 7, SortBytes: 64 << 10, SortFactor: 3, Codec: codec,
				LocalDirs: []string{t.TempDir(), t.TempDir(), t.TempDir()}}
			c, cm := newTestCollector(t, cfg)
			collectAll(t, c, recs)
			out, err := c.Close()
			if err != nil {
				t.Fatal(err)
			}
			// Stable: equal keys keep collection order.
			equalRecs(t, readOutput(t, out, codec), reference(recs, nil))
			checkClean(t, cfg, out)
			var bytesOut, materialized int64
			for _, r := range recs {
				bytesOut += int64(len(r.key) + len(r.value))
			}
			for _, e := range out.Index {
				materialized += e.PartLength
			}
			if n := cm.get(CounterSpills); n < 10 {
				t.Errorf("%d spills, want at least 10", n)
			}
			// The spills, then the merge, which takes the records
			// collected after the last spill from memory.
			if n, all := cm.get(CounterSpilledRecords), int64(len(recs)); n <= all || n >= 2*all {
				t.Errorf("%d spilled records of %d: want more than one pass and less than two", n, all)
			}
			for name, want := range map[string]int64{
				CounterMapOutputRecords:      int64(len(recs)),
				CounterMapOutputBytes:        bytesOut,
				CounterMapOutputMaterialized: materialized,
				CounterCombineInputRecords:   0,
			} {
				if got := cm.get(name); got != want {
					t.Errorf("counter %q = %d, want %d", name, got, want)
				}
			}
		})
	}
}

func TestCollectorCustomCompare(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	recs := randRecords(rng, 8000, 3, 300, 12, 40)
	reverse := func(a, b []byte) int { return bytes.Compare(b, a) }
	cfg := Config{Partitions: 3, SortBytes: 32 << 10, SortFactor: 4, Compare: reverse, LocalDirs: []string{t.TempDir()}}
	c, _ := newTestCollector(t, cfg)
	collectAll(t, c, recs)
	out, err := c.Close()
	if err != nil {
		t.Fatal(err)
	}
	equalRecs(t, readOutput(t, out, None), reference(recs, reverse))
}

func TestCollectorCombiner(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	const n = 20000
	recs := randRecords(rng, n, 5, 400, 10, 0)
	want := map[[2]string]uint64{} // (partition, key) → sum
	var total uint64
	for i := range recs {
		v := uint64(rng.IntN(1000))
		recs[i].value = u64(v)
		want[[2]string{string(rune('0' + recs[i].part)), string(recs[i].key)}] += v
		total += v
	}
	for _, codec := range allCodecs {
		for _, sortBytes := range []int64{16 << 10, 1 << 20} { // many spills; one spill
			t.Run(codec.String()+"/"+string(rune('0'+sortBytes>>20)), func(t *testing.T) {
				cfg := Config{Partitions: 5, SortBytes: sortBytes, SortFactor: 3, Codec: codec, Combine: sumCombiner,
					LocalDirs: []string{t.TempDir(), t.TempDir()}}
				c, cm := newTestCollector(t, cfg)
				collectAll(t, c, recs)
				out, err := c.Close()
				if err != nil {
					t.Fatal(err)
				}
				got := readOutput(t, out, codec)
				// After the final combine every key is there once.
				sums := map[[2]string]uint64{}
				for i, r := range got {
					k := [2]string{string(rune('0' + r.part)), string(r.key)}
					if _, dup := sums[k]; dup {
						t.Fatalf("key %q twice in partition %d", r.key, r.part)
					}
					if i > 0 && got[i-1].part == r.part && bytes.Compare(got[i-1].key, r.key) >= 0 {
						t.Fatalf("output not sorted at %d", i)
					}
					sums[k] = binary.BigEndian.Uint64(r.value)
				}
				if len(sums) != len(want) {
					t.Fatalf("%d keys, want %d", len(sums), len(want))
				}
				for k, v := range want {
					if sums[k] != v {
						t.Fatalf("key %q: sum %d, want %d", k, sums[k], v)
					}
				}
				in, outN := cm.get(CounterCombineInputRecords), cm.get(CounterCombineOutputRecords)
				spills := cm.get(CounterSpills)
				if spills == 1 {
					if in != n || outN != int64(len(want)) {
						t.Errorf("one spill: combine in %d out %d, want %d and %d", in, outN, n, len(want))
					}
				} else {
					if spills < MinSpillsForCombine {
						t.Fatalf("only %d spills", spills)
					}
					// Every record went through a spill's combine; the final
					// merge combined the spills' outputs.
					if in <= n || outN >= in {
						t.Errorf("combine in %d out %d", in, outN)
					}
				}
				if cm.get(CounterMapOutputRecords) != n {
					t.Errorf("map output records %d", cm.get(CounterMapOutputRecords))
				}
			})
		}
	}
}

func TestCollectorCombinerOutOfOrder(t *testing.T) {
	bad := func(key []byte, values func() ([]byte, bool), emit func(k, v []byte) error) error {
		for _, ok := values(); ok; _, ok = values() {
		}
		return emit([]byte{0xff - key[0]}, nil)
	}
	c, _ := newTestCollector(t, Config{Partitions: 1, SortBytes: 16 << 10, Combine: bad})
	for i := range 3 {
		if err := c.Collect(0, []byte{byte(i)}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Close(); err == nil || !strings.Contains(err.Error(), "out of order") {
		t.Fatalf("Close: %v", err)
	}
}

func TestCollectorLargeRecords(t *testing.T) {
	rng := rand.New(rand.NewPCG(11, 12))
	recs := randRecords(rng, 2000, 4, 0, 16, 64)
	huge := bytes.Repeat([]byte("0123456789abcdef"), 10000) // 160 KB: more than the buffer
	mid := bytes.Repeat([]byte("mid"), 3000)                // 9 KB: more than a chunk
	recs = slices.Insert(recs, 500, rec{part: 2, key: []byte("huge"), value: huge})
	recs = slices.Insert(recs, 700, rec{part: 1, key: huge[:5000], value: mid})
	recs = slices.Insert(recs, 900, rec{part: 3, key: mid, value: mid})
	recs = append(recs, rec{part: 0, key: nil, value: huge})
	for _, codec := range []Codec{None, Zstd} {
		cfg := Config{Partitions: 4, SortBytes: 16 << 10, SortFactor: 3, Codec: codec, LocalDirs: []string{t.TempDir()}}
		c, cm := newTestCollector(t, cfg)
		collectAll(t, c, recs)
		out, err := c.Close()
		if err != nil {
			t.Fatal(err)
		}
		equalRecs(t, readOutput(t, out, codec), reference(recs, nil))
		checkClean(t, cfg, out)
		if cm.get(CounterMapOutputRecords) != int64(len(recs)) {
			t.Errorf("records %d", cm.get(CounterMapOutputRecords))
		}
	}
}

func TestCollectorSingleHugeRecord(t *testing.T) {
	cfg := Config{Partitions: 3, SortBytes: 16 << 10, LocalDirs: []string{t.TempDir()}}
	c, cm := newTestCollector(t, cfg)
	huge := bytes.Repeat([]byte{7}, 1<<20)
	if err := c.Collect(1, []byte("k"), huge); err != nil {
		t.Fatal(err)
	}
	out, err := c.Close()
	if err != nil {
		t.Fatal(err)
	}
	equalRecs(t, readOutput(t, out, None), []rec{{part: 1, key: []byte("k"), value: huge}})
	if cm.get(CounterSpills) != 1 {
		t.Errorf("%d spills", cm.get(CounterSpills))
	}
}

func TestCollectorEmpty(t *testing.T) {
	for _, codec := range allCodecs {
		cfg := Config{Partitions: 4, LocalDirs: []string{t.TempDir(), t.TempDir()}, Codec: codec}
		c, _ := newTestCollector(t, cfg)
		out, err := c.Close()
		if err != nil {
			t.Fatal(err)
		}
		if len(out.Index) != 4 {
			t.Fatalf("index has %d entries", len(out.Index))
		}
		for p, e := range out.Index {
			if e.RawLength != 2 {
				t.Errorf("partition %d: raw length %d", p, e.RawLength)
			}
		}
		if got := readOutput(t, out, codec); len(got) != 0 {
			t.Errorf("%d records", len(got))
		}
		checkClean(t, cfg, out)
	}
}

func TestCollectorCorruptOutput(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	recs := randRecords(rng, 3000, 3, 0, 16, 64)
	for _, codec := range allCodecs {
		c, _ := newTestCollector(t, Config{Partitions: 3, SortBytes: 32 << 10, Codec: codec})
		collectAll(t, c, recs)
		out, err := c.Close()
		if err != nil {
			t.Fatal(err)
		}
		b, err := os.ReadFile(out.Path)
		if err != nil {
			t.Fatal(err)
		}
		e := out.Index[1]
		b[e.Offset+e.PartLength/2] ^= 1
		if err := os.WriteFile(out.Path, b, 0o644); err != nil {
			t.Fatal(err)
		}
		seg := b[e.Offset : e.Offset+e.PartLength]
		it, err := OpenSegment(bytes.NewReader(seg), codec, e.PartLength, e.RawLength)
		if err == nil {
			_, err = drain(t, it)
		}
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: OpenSegment: %v, want ErrCorrupt", codec, err)
		}
		if _, err := NewMemorySegment(seg, codec); !errors.Is(err, ErrCorrupt) {
			t.Errorf("%s: NewMemorySegment: %v, want ErrCorrupt", codec, err)
		}
		// The other partitions are intact.
		e0 := out.Index[0]
		it, err = NewMemorySegment(b[e0.Offset:e0.Offset+e0.PartLength], codec)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := drain(t, it); err != nil {
			t.Error(err)
		}
		// A damaged index is refused.
		ib, _ := os.ReadFile(out.IndexPath)
		ib[5] ^= 1
		os.WriteFile(out.IndexPath, ib, 0o644)
		if _, err := ReadIndex(out.IndexPath); !errors.Is(err, ErrCorrupt) {
			t.Errorf("ReadIndex: %v, want ErrCorrupt", err)
		}
		os.WriteFile(out.IndexPath, ib[:len(ib)-3], 0o644)
		if _, err := ReadIndex(out.IndexPath); !errors.Is(err, ErrCorrupt) {
			t.Errorf("ReadIndex of a truncated index: %v, want ErrCorrupt", err)
		}
	}
}

func TestCollectorAbort(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	recs := randRecords(rng, 5000, 2, 0, 16, 64)
	dirs := []string{t.TempDir(), t.TempDir()}
	c, _ := newTestCollector(t, Config{Partitions: 2, SortBytes: 16 << 10, LocalDirs: dirs})
	collectAll(t, c, recs)
	c.Abort()
	c.Abort()
	if files := listFiles(t, dirs...); len(files) != 0 {
		t.Errorf("files left: %v", files)
	}
	if err := c.Collect(0, nil, nil); !errors.Is(err, ErrClosed) {
		t.Errorf("Collect after Abort: %v", err)
	}
	if _, err := c.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("Close after Abort: %v", err)
	}
	// RemoveOutput removes a finished output.
	c, _ = newTestCollector(t, Config{Partitions: 2, LocalDirs: dirs, Name: "attempt_x"})
	collectAll(t, c, recs[:10])
	if _, err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := RemoveOutput(dirs, "attempt_x"); err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "attempt_x")); !os.IsNotExist(err) {
			t.Errorf("%s: %v", d, err)
		}
	}
}

func TestCollectorSpillFailure(t *testing.T) {
	dir := t.TempDir()
	c, _ := newTestCollector(t, Config{Partitions: 1, SortBytes: 16 << 10, LocalDirs: []string{dir}, Name: "a"})
	// The attempt dir disappears: spills cannot be created.
	os.RemoveAll(filepath.Join(dir, "a"))
	var err error
	for i := 0; i < 100000 && err == nil; i++ {
		err = c.Collect(0, []byte("key"), []byte("value"))
	}
	if err == nil {
		_, err = c.Close()
	} else if _, cerr := c.Close(); cerr == nil {
		t.Error("Close succeeded after a failed spill")
	}
	if err == nil {
		t.Fatal("no error from a failing spill")
	}
}

func TestCollectorConfig(t *testing.T) {
	dir := t.TempDir()
	for _, cfg := range []Config{
		{Partitions: 0, LocalDirs: []string{dir}, Name: "a"},
		{Partitions: 1, LocalDirs: []string{dir}, Name: "a", SortBytes: 1000},
		{Partitions: 1, LocalDirs: []string{dir}, Name: "a", SpillPercent: 1.5},
		{Partitions: 1, LocalDirs: []string{dir}, Name: "a", SortFactor: 1},
		{Partitions: 1, LocalDirs: []string{dir}, Name: "a", Codec: "lzo"},
		{Partitions: 1, LocalDirs: []string{dir}, Name: "../a"},
		{Partitions: 1, Name: "a"},
		{Partitions: 1, LocalDirs: []string{"/dev/null/x"}, Name: "a"},
	} {
		if _, err := NewCollector(cfg); err == nil {
			t.Errorf("NewCollector(%+v) succeeded", cfg)
		}
	}
	c, _ := newTestCollector(t, Config{Partitions: 2})
	if err := c.Collect(2, nil, nil); err == nil {
		t.Error("Collect to partition 2 of 2 succeeded")
	}
	if err := c.Collect(-1, nil, nil); err == nil {
		t.Error("Collect to partition -1 succeeded")
	}
	c.Abort()
	// A bad dir among good ones is skipped.
	good := t.TempDir()
	c, err := NewCollector(Config{Partitions: 1, LocalDirs: []string{"/dev/null/x", good}, Name: "a"})
	if err != nil {
		t.Fatal(err)
	}
	c.Collect(0, []byte("k"), []byte("v"))
	out, err := c.Close()
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(out.Path, good) {
		t.Errorf("output in %s", out.Path)
	}
}

func TestCollectorSortOrder(t *testing.T) {
	// Keys that differ only past the 8-byte prefix, and short keys whose
	// zero padding equals a real zero byte.
	keys := [][]byte{
		[]byte("abcdefgh2"), []byte("abcdefgh1"), []byte("abcdefgh"), []byte("a"), []byte("a\x00"),
		{}, []byte("a\x00\x00"), []byte("abcdefgh10"), []byte("b"), {0xff}, []byte("a\x00\x01"),
	}
	var recs []rec
	for i := range 400 {
		recs = append(recs, rec{part: i % 2, key: keys[i%len(keys)], value: []byte{byte(i), byte(i >> 8)}})
	}
	c, _ := newTestCollector(t, Config{Partitions: 2, SortBytes: 16 << 10})
	collectAll(t, c, recs)
	out, err := c.Close()
	if err != nil {
		t.Fatal(err)
	}
	equalRecs(t, readOutput(t, out, None), reference(recs, nil))
}

func TestRadixSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	for _, n := range []int{0, 1, 5, 63, 64, 1000, 5000} {
		a := make([]entry, n)
		for i := range a {
			a[i] = entry{prefix: rng.Uint64() >> (rng.IntN(4) * 16), part: uint32(rng.IntN(3)) << (rng.IntN(2) * 20), loc: uint32(i)}
		}
		want := slices.Clone(a)
		slices.SortStableFunc(want, func(x, y entry) int {
			if x.part != y.part {
				if x.part < y.part {
					return -1
				}
				return 1
			}
			if x.prefix != y.prefix {
				if x.prefix < y.prefix {
					return -1
				}
				return 1
			}
			return 0
		})
		radixSort(a, make([]entry, n))
		if !slices.Equal(a, want) {
			t.Fatalf("n=%d: radix sort differs", n)
		}
	}
}

// TestReadOutputSections reads a partition through a SectionReader as a
// shuffle server would.
func TestCopySegmentFromOutput(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	recs := randRecords(rng, 1000, 2, 0, 16, 64)
	c, _ := newTestCollector(t, Config{Partitions: 2, Codec: LZ4})
	collectAll(t, c, recs)
	out, err := c.Close()
	if err != nil {
		t.Fatal(err)
	}
	f, _ := os.Open(out.Path)
	defer f.Close()
	e := out.Index[1]
	var buf bytes.Buffer
	if err := CopySegment(&buf, io.NewSectionReader(f, e.Offset, e.PartLength), e.PartLength); err != nil {
		t.Fatal(err)
	}
	it, err := NewMemorySegment(buf.Bytes(), LZ4)
	if err != nil {
		t.Fatal(err)
	}
	got, err := drain(t, it)
	if err != nil {
		t.Fatal(err)
	}
	var want []rec
	for _, r := range reference(recs, nil) {
		if r.part == 1 {
			want = append(want, rec{key: r.key, value: r.value})
		}
	}
	equalRecs(t, got, want)
}

// The records collected after the last spill go into the final merge from
// memory, after every spill: equal keys keep collection order across the
// spills and the remainder, and the remainder is never written as a spill.
func TestCollectorMergesRemainderFromMemory(t *testing.T) {
	var recs []rec
	for i := range 3000 {
		recs = append(recs, rec{part: i % 2, key: []byte{byte(i % 3)}, value: u64(uint64(i))})
	}
	cfg := Config{Partitions: 2, SortBytes: 16 << 10, SortFactor: 10, LocalDirs: []string{t.TempDir()}}
	c, cm := newTestCollector(t, cfg)
	collectAll(t, c, recs)
	out, err := c.Close()
	if err != nil {
		t.Fatal(err)
	}
	equalRecs(t, readOutput(t, out, None), reference(recs, nil))
	checkClean(t, cfg, out)
	spills, spilled := cm.get(CounterSpills), cm.get(CounterSpilledRecords)
	if spills < 2 {
		t.Fatalf("%d spills: the buffer is too large for this test", spills)
	}
	// Every spill but the remainder's: fewer records than two full passes.
	remainder := 2*int64(len(recs)) - spilled
	if remainder <= 0 || remainder >= int64(len(recs))/int64(spills) {
		t.Errorf("%d spills, %d spilled records of %d: the remainder (%d) was not merged from memory", spills, spilled, len(recs), remainder)
	}
}
