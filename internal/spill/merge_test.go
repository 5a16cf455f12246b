package spill

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// sortedSegments makes n sorted in-memory segments; every value records
// its segment and position so stability can be checked.
func sortedSegments(t testing.TB, rng *rand.Rand, n, maxRecs int, codec Codec) ([][]byte, []rec) {
	var segs [][]byte
	var all []rec
	for s := range n {
		m := rng.IntN(maxRecs + 1)
		if s%3 == 1 {
			m = 0 // empty inputs among the others
		}
		recs := randRecords(rng, m, 1, 50, 6, 0)
		slices.SortStableFunc(recs, func(a, b rec) int { return bytes.Compare(a.key, b.key) })
		for i := range recs {
			recs[i].part = 0
			recs[i].value = binary.BigEndian.AppendUint32(binary.BigEndian.AppendUint32(nil, uint32(s)), uint32(i))
		}
		data, _ := encodeSegment(t, codec, recs)
		segs = append(segs, data)
		all = append(all, recs...)
	}
	return segs, all
}

func TestMerge(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	for _, codec := range []Codec{None, Snappy} {
		for _, n := range []int{0, 1, 2, 5, 10, 11, 30, 100} {
			for _, factor := range []int{2, 3, 10} {
				t.Run(fmt.Sprintf("%s/n=%d/factor=%d", codec, n, factor), func(t *testing.T) {
					segs, all := sortedSegments(t, rng, n, 200, codec)
					its := make([]Iterator, len(segs))
					for i, s := range segs {
						var err error
						if its[i], err = NewMemorySegment(s, codec); err != nil {
							t.Fatal(err)
						}
					}
					tmp := t.TempDir()
					m, err := Merge(its, nil, factor, []string{tmp}, codec)
					if err != nil {
						t.Fatal(err)
					}
					got, err := drain(t, m)
					if err != nil {
						t.Fatal(err)
					}
					// Stable: input order among equal keys.
					equalRecs(t, got, reference(all, nil))
					if files := listFiles(t, tmp); len(files) != 0 {
						t.Errorf("temporary files left: %v", files)
					}
				})
			}
		}
	}
}

func TestMergeError(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 24))
	segs, _ := sortedSegments(t, rng, 6, 300, None)
	segs[3] = bytes.Clone(segs[3])
	bad, _ := encodeSegment(t, None, []rec{{key: []byte("a")}, {key: []byte("b")}})
	bad[len(bad)-1] ^= 1 // checksum: found when the segment ends
	for _, factor := range []int{2, 10} {
		var its []Iterator
		for _, s := range segs {
			it, err := NewMemorySegment(s, None)
			if err != nil {
				t.Fatal(err)
			}
			its = append(its, it)
		}
		it, err := OpenSegment(bytes.NewReader(bad), None, int64(len(bad)), -1)
		if err != nil {
			t.Fatal(err)
		}
		its = append(its, it)
		tmp := t.TempDir()
		m, err := Merge(its, nil, factor, []string{tmp}, None)
		if err == nil {
			_, err = drain(t, m)
		}
		if !errors.Is(err, ErrCorrupt) {
			t.Errorf("factor %d: %v, want ErrCorrupt", factor, err)
		}
		if files := listFiles(t, tmp); len(files) != 0 {
			t.Errorf("temporary files left: %v", files)
		}
	}
	if _, err := Merge(nil, nil, 1, nil, None); err == nil {
		t.Error("factor 1 accepted")
	}
}

func TestGroups(t *testing.T) {
	recs := []rec{
		{key: []byte("a"), value: []byte("1")}, {key: []byte("a"), value: []byte("2")},
		{key: []byte("b"), value: []byte("3")},
		{key: []byte("c"), value: []byte("4")}, {key: []byte("c"), value: []byte("5")}, {key: []byte("c"), value: []byte("6")},
		{key: []byte("d"), value: []byte("7")},
	}
	data, _ := encodeSegment(t, None, recs)
	for _, consume := range []int{100, 1, 0} { // all values, only the first, none
		it, _ := NewMemorySegment(data, None)
		var got []string
		err := Groups(it, nil, func(key []byte, values func() ([]byte, bool)) error {
			s := string(key) + ":"
			for i := 0; i < consume; i++ {
				v, ok := values()
				if !ok {
					break
				}
				s += string(v)
			}
			got = append(got, s)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		want := map[int][]string{
			100: {"a:12", "b:3", "c:456", "d:7"},
			1:   {"a:1", "b:3", "c:4", "d:7"},
			0:   {"a:", "b:", "c:", "d:"},
		}[consume]
		if !slices.Equal(got, want) {
			t.Errorf("consume %d: %v, want %v", consume, got, want)
		}
	}
	// values keeps returning false after the end; fn's error stops Groups.
	it, _ := NewMemorySegment(data, None)
	stop := errors.New("stop")
	calls := 0
	err := Groups(it, nil, func(key []byte, values func() ([]byte, bool)) error {
		calls++
		for _, ok := values(); ok; _, ok = values() {
		}
		if _, ok := values(); ok {
			t.Error("values returned a value after false")
		}
		if string(key) == "b" {
			return stop
		}
		return nil
	})
	if err != stop || calls != 2 {
		t.Errorf("err %v after %d calls", err, calls)
	}
	// A custom comparison groups by it: case-insensitive.
	data, _ = encodeSegment(t, None, []rec{{key: []byte("A")}, {key: []byte("a")}, {key: []byte("B")}})
	it, _ = NewMemorySegment(data, None)
	var keys []string
	Groups(it, func(a, b []byte) int { return bytes.Compare(bytes.ToLower(a), bytes.ToLower(b)) },
		func(key []byte, values func() ([]byte, bool)) error {
			keys = append(keys, string(key))
			return nil
		})
	if !slices.Equal(keys, []string{"A", "B"}) {
		t.Errorf("groups %v", keys)
	}
}
