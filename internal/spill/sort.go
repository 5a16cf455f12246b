package spill

import (
	"bytes"
	"encoding/binary"
	"slices"
)

// entry is the metadata of one collected record; the spill sorts entries,
// never the record bytes.
type entry struct {
	prefix uint64 // first 8 key bytes, big-endian, zero-padded (bytes order only)
	part   uint32
	loc    uint32 // data slot << locShift | offset in the slot
	klen   uint32
	vlen   uint32
}

const (
	locShift = 20 // chunks are at most 1 MiB ...
	locMask  = 1<<locShift - 1
	maxSlots = 1 << (32 - locShift) // ... and a region has at most 4096 of them
)

// keyPrefix is the first 8 bytes of k as a big-endian integer, zero-padded:
// comparing prefixes, then whole keys when they are equal, is bytes.Compare.
func keyPrefix(k []byte) uint64 {
	if len(k) >= 8 {
		return binary.BigEndian.Uint64(k)
	}
	var p uint64
	for i, b := range k {
		p |= uint64(b) << (56 - 8*i)
	}
	return p
}

// radixSort sorts a by (part, prefix), stably, with an LSD radix sort on
// 8-bit digits; tmp must be at least as long as a. Digits on which all
// entries agree are skipped.
func radixSort(a, tmp []entry) {
	n := len(a)
	if n < 64 {
		insertionSortPrefix(a)
		return
	}
	var counts [12][256]int
	for i := range a {
		p, q := a[i].prefix, a[i].part
		counts[0][byte(p)]++
		counts[1][byte(p>>8)]++
		counts[2][byte(p>>16)]++
		counts[3][byte(p>>24)]++
		counts[4][byte(p>>32)]++
		counts[5][byte(p>>40)]++
		counts[6][byte(p>>48)]++
		counts[7][byte(p>>56)]++
		counts[8][byte(q)]++
		counts[9][byte(q>>8)]++
		counts[10][byte(q>>16)]++
		counts[11][byte(q>>24)]++
	}
	src, dst := a, tmp[:n]
	for d := range 12 {
		cnt := &counts[d]
		var first byte
		if d < 8 {
			first = byte(src[0].prefix >> (8 * d))
		} else {
			first = byte(src[0].part >> (8 * (d - 8)))
		}
		if cnt[first] == n {
			continue
		}
		sum := 0
		for i := range cnt {
			c := cnt[i]
			cnt[i] = sum
			sum += c
		}
		if d < 8 {
			shift := uint(8 * d)
			for i := range src {
				b := byte(src[i].prefix >> shift)
				dst[cnt[b]] = src[i]
				cnt[b]++
			}
		} else {
			shift := uint(8 * (d - 8))
			for i := range src {
				b := byte(src[i].part >> shift)
				dst[cnt[b]] = src[i]
				cnt[b]++
			}
		}
		src, dst = dst, src
	}
	if &src[0] != &a[0] {
		copy(a, src)
	}
}

func insertionSortPrefix(a []entry) {
	for i := 1; i < len(a); i++ {
		for j := i; j > 0 && (a[j].part < a[j-1].part || a[j].part == a[j-1].part && a[j].prefix < a[j-1].prefix); j-- {
			a[j], a[j-1] = a[j-1], a[j]
		}
	}
}

// sortEntries sorts one metadata chunk of region r stably by (partition,
// key). compare nil means bytes order, which uses the radix sort on
// prefixes and compares whole keys only among equal prefixes.
func sortEntries(a, tmp []entry, r *region, compare func(a, b []byte) int) {
	if compare != nil {
		slices.SortStableFunc(a, func(x, y entry) int {
			if x.part != y.part {
				if x.part < y.part {
					return -1
				}
				return 1
			}
			return compare(r.key(&x), r.key(&y))
		})
		return
	}
	radixSort(a, tmp)
	byKey := func(x, y entry) int { return bytes.Compare(r.key(&x), r.key(&y)) }
	for i := 0; i < len(a); {
		j := i + 1
		for j < len(a) && a[j].part == a[i].part && a[j].prefix == a[i].prefix {
			j++
		}
		if j-i > 1 && !slices.IsSortedFunc(a[i:j], byKey) {
			slices.SortStableFunc(a[i:j], byKey)
		}
		i = j
	}
}
