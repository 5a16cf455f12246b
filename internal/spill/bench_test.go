package spill

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// teraRecords returns n TeraSort-shaped records (10-byte random key,
// 90-byte value) back to back in one buffer.
func teraRecords(n int, seed uint64) []byte {
	rng := rand.New(rand.NewPCG(seed, seed+1))
	b := make([]byte, 100*n)
	for i := 0; i < len(b); i += 8 {
		v := rng.Uint64()
		for j := 0; j < 8 && i+j < len(b); j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// BenchmarkCollect100ByteRecords pushes 2,000,000 TeraSort records (200
// MB) through a Collector with 4 partitions and a 64 MiB buffer (several
// spills, then the final merge). MB/s is of input records.
func BenchmarkCollect100ByteRecords(b *testing.B) {
	const n = 2_000_000
	data := teraRecords(n, 42)
	for _, codec := range []Codec{None, LZ4} {
		b.Run("codec="+codec.String(), func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			dir := b.TempDir()
			for i := 0; b.Loop(); i++ {
				c, err := NewCollector(Config{Partitions: 4, SortBytes: 64 << 20, Codec: codec,
					LocalDirs: []string{dir}, Name: fmt.Sprint("bench", i)})
				if err != nil {
					b.Fatal(err)
				}
				for off := 0; off < len(data); off += 100 {
					r := data[off : off+100]
					if err := c.Collect(int(r[0]&3), r[:10], r[10:]); err != nil {
						b.Fatal(err)
					}
				}
				if _, err := c.Close(); err != nil {
					b.Fatal(err)
				}
				c.Abort() // remove the output
			}
		})
	}
}

// BenchmarkMerge merges 30 sorted in-memory segments of 100-byte records
// (6 MB in all) into one stream: with factor 30 in one streaming pass, with
// factor 10 and 3 with intermediate passes on disk.
func BenchmarkMerge(b *testing.B) {
	const segs, per = 30, 2000
	var inputs [][]byte
	var total int64
	for s := range segs {
		data := teraRecords(per, uint64(s))
		recs := make([][]byte, per)
		for i := range recs {
			recs[i] = data[i*100 : i*100+100]
		}
		slices.SortFunc(recs, func(x, y []byte) int { return bytes.Compare(x[:10], y[:10]) })
		var buf bytes.Buffer
		w, _ := NewSegmentWriter(&buf, None)
		for _, r := range recs {
			w.Append(r[:10], r[10:])
		}
		w.Close()
		inputs = append(inputs, buf.Bytes())
		total += int64(len(data))
	}
	for _, factor := range []int{30, 10, 3} {
		b.Run(fmt.Sprint("factor=", factor), func(b *testing.B) {
			b.SetBytes(total)
			dir := b.TempDir()
			for b.Loop() {
				its := make([]Iterator, segs)
				for i, in := range inputs {
					its[i], _ = NewMemorySegment(in, None)
				}
				m, err := Merge(its, nil, factor, []string{dir}, None)
				if err != nil {
					b.Fatal(err)
				}
				n := 0
				for m.Next() {
					n++
				}
				if m.Err() != nil || n != segs*per {
					b.Fatal(m.Err(), n)
				}
				m.Close()
			}
		})
	}
}
