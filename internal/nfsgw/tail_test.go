package nfsgw

import (
	"bytes"
	"math/rand"
	"testing"
)

// TestTail checks that the tail keeps at least tailKeep of the last bytes
// (all of them when fewer were written), compares them right, keeps a
// record only when the data fills half of it, and gives every record it
// took back exactly once.
func TestTail(t *testing.T) {
	rnd := rand.New(rand.NewSource(1))
	for _, sizes := range [][]int{{1 << 20}, {100, 3000, 1 << 20, 7}, {4096}, {3 << 20, 5 << 19}} {
		var tl tail
		var all []byte
		taken := map[*byte]bool{}
		for i := 0; len(all) < 3*tailKeep; i++ {
			n := sizes[i%len(sizes)]
			rec := make([]byte, n+200, n+4096)
			rnd.Read(rec)
			data := rec[100 : 100+n]
			all = append(all, data...)
			r := rec
			tl.add(data, &r)
			wantTaken := 2*n >= cap(rec)
			if (r == nil) != wantTaken {
				t.Fatalf("sizes %v: a write of %d bytes in a record of %d: taken %v, want %v", sizes, n, cap(rec), r == nil, wantTaken)
			}
			if r == nil {
				taken[&rec[0]] = true
			}
			if min := min(len(all), tailKeep); tl.len() < min || tl.len() > tailKeep+maxRecord {
				t.Fatalf("sizes %v: tail of %d bytes after %d written", sizes, tl.len(), len(all))
			}
			if i%7 != 0 {
				continue
			}
			start := len(all) - tl.len()
			for _, c := range [][2]int{{0, tl.len()}, {tl.len() - 1, 1}, {tl.len() / 3, tl.len() / 2}, {tl.len(), 0}} {
				b := all[start+c[0] : start+c[0]+c[1]]
				if !tl.equal(c[0], b) {
					t.Fatalf("sizes %v: bytes at %d (+%d) of the tail differ", sizes, c[0], c[1])
				}
				if len(b) > 0 {
					x := bytes.Clone(b)
					x[len(x)/2] ^= 1
					if tl.equal(c[0], x) {
						t.Fatalf("sizes %v: changed bytes at %d (+%d) compare equal", sizes, c[0], c[1])
					}
				}
			}
			if tl.equal(1, all[start:start+tl.len()]) {
				t.Fatal("bytes reaching past the tail's end compare equal")
			}
		}
		for _, s := range tl.segs {
			if s.rec != nil && !taken[&s.rec[:1][0]] {
				t.Fatalf("sizes %v: the tail holds a record it did not take", sizes)
			}
		}
		tl.reset()
		if tl.len() != 0 || tl.segs != nil {
			t.Fatal("reset left data")
		}
	}
}

func TestKeep(t *testing.T) {
	rec := make([]byte, 10, 16)
	r := rec
	if !keepable(rec[:8], &r) || keepable(rec[:7], &r) || keepable(nil, &r) || keepable(rec[:8], nil) {
		t.Fatal("keepable: not half of the record's buffer")
	}
	big := make([]byte, 1<<20, 1<<20+recordSlack)
	if r := big; !tight(big, &r) || tight(big[:len(big)-1], &r) || tight(big, nil) {
		t.Fatal("tight: not the data but for recordSlack")
	}
	if c := keep(rec[:8], &r, true); r != nil || c.rec == nil || c.size() != 16 {
		t.Fatalf("a kept record: taken %v, size %d", r == nil, c.size())
	}
	r = rec
	if c := keep(rec[:7], &r, false); r == nil || c.rec != nil || &c.data[0] == &rec[0] || c.size() < 7 {
		t.Fatal("data not kept in its record: not copied")
	}
}
