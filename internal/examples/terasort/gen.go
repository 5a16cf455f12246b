// Package terasort holds the TeraGen / TeraSort / TeraValidate record
// machinery, byte-compatible with Hadoop's (which follows gensort 1.2's
// binary layout): the 128-bit linear congruential generator with
// skip-ahead, the 100-byte record, the row ranges of the map tasks, and
// the checksum (sum of the records' CRC-32s).
package terasort

import (
	"hash/crc32"
	"math"
	"math/bits"
)

// RecordSize is the size of a TeraSort record: a 10-byte key and a
// 90-byte value.
const (
	RecordSize = 100
	KeySize    = 10
)

// U128 is an unsigned 128-bit number.
type U128 struct{ Hi, Lo uint64 }

func (x U128) add(y U128) U128 {
	lo, carry := bits.Add64(x.Lo, y.Lo, 0)
	hi, _ := bits.Add64(x.Hi, y.Hi, carry)
	return U128{hi, lo}
}

func (x U128) mul(y U128) U128 {
	hi, lo := bits.Mul64(x.Lo, y.Lo)
	hi += x.Hi*y.Lo + x.Lo*y.Hi
	return U128{hi, lo}
}

// The generator: X' = a·X + c mod 2^128.
var (
	genA = U128{0x2360ed051fc65da4, 0x4385df649fccf645}
	genC = U128{0x4a696d4772617952, 0x4950202020202001}
	// skip[k] applies 2^k steps at once: (a_k, c_k) with
	// a_{k+1} = a_k², c_{k+1} = a_k·c_k + c_k.
	skipA, skipC [128]U128
)

func init() {
	skipA[0], skipC[0] = genA, genC
	for k := 1; k < 128; k++ {
		skipA[k] = skipA[k-1].mul(skipA[k-1])
		skipC[k] = skipA[k-1].mul(skipC[k-1]).add(skipC[k-1])
	}
}

// SkipAhead returns the generator's state after n steps from 0.
func SkipAhead(n U128) U128 {
	var x U128
	for k := 0; k < 128; k++ {
		var bit uint64
		if k < 64 {
			bit = n.Lo >> k & 1
		} else {
			bit = n.Hi >> (k - 64) & 1
		}
		if bit == 1 {
			x = skipA[k].mul(x).add(skipC[k])
		}
	}
	return x
}

// Next advances the state one step.
func Next(x U128) U128 { return genA.mul(x).add(genC) }

const hexDigits = "0123456789ABCDEF"

// Record writes row's 100-byte record for generator state rand (the state
// after row+1 steps) into dst.
func Record(dst []byte, rand, row U128) {
	_ = dst[RecordSize-1]
	// Key: the top 10 bytes of rand.
	for i := 0; i < 8; i++ {
		dst[i] = byte(rand.Hi >> (56 - 8*i))
	}
	dst[8] = byte(rand.Lo >> 56)
	dst[9] = byte(rand.Lo >> 48)
	dst[10], dst[11] = 0x00, 0x11
	// The row number as 32 hex digits.
	for i := 0; i < 16; i++ {
		dst[12+i] = hexDigits[row.Hi>>(60-4*i)&0xf]
		dst[28+i] = hexDigits[row.Lo>>(60-4*i)&0xf]
	}
	dst[44], dst[45], dst[46], dst[47] = 0x88, 0x99, 0xAA, 0xBB
	// 12 groups of 4 bytes, each a hex digit of rand: digits 20..31,
	// which are the low 12 nibbles of rand.Lo.
	for g := 0; g < 12; g++ {
		d := hexDigits[rand.Lo>>(44-4*g)&0xf]
		dst[48+4*g], dst[49+4*g], dst[50+4*g], dst[51+4*g] = d, d, d, d
	}
	dst[96], dst[97], dst[98], dst[99] = 0xCC, 0xDD, 0xEE, 0xFF
}

// Generator produces consecutive records from a starting row.
type Generator struct {
	rand U128
	row  U128
}

// NewGenerator starts at row first.
func NewGenerator(first uint64) *Generator {
	return &Generator{rand: SkipAhead(U128{0, first}), row: U128{0, first}}
}

// Next writes the next record into dst.
func (g *Generator) Next(dst []byte) {
	g.rand = Next(g.rand)
	Record(dst, g.rand, g.row)
	g.row = g.row.add(U128{0, 1})
}

// Checksum sums the CRC-32 (IEEE) of records as a 128-bit number, as
// Hadoop's TeraGen counter and TeraValidate do.
type Checksum struct{ sum U128 }

// Add adds one 100-byte record.
func (c *Checksum) Add(rec []byte) {
	c.sum = c.sum.add(U128{0, uint64(crc32.ChecksumIEEE(rec))})
}

// Merge adds another checksum.
func (c *Checksum) Merge(o Checksum) { c.sum = c.sum.add(o.sum) }

// Sum returns the 128-bit sum.
func (c *Checksum) Sum() U128 { return c.sum }

// String prints the sum as lowercase hex without leading zeros.
func (c Checksum) String() string { return hex128(c.sum) }

func hex128(x U128) string {
	const lower = "0123456789abcdef"
	var b [32]byte
	for i := 0; i < 16; i++ {
		b[i] = lower[x.Hi>>(60-4*i)&0xf]
		b[16+i] = lower[x.Lo>>(60-4*i)&0xf]
	}
	s := string(b[:])
	for len(s) > 1 && s[0] == '0' {
		s = s[1:]
	}
	return s
}

// ParseChecksum parses String's output.
func ParseChecksum(s string) (Checksum, bool) {
	if len(s) == 0 || len(s) > 32 {
		return Checksum{}, false
	}
	var x U128
	for _, ch := range s {
		var d uint64
		switch {
		case ch >= '0' && ch <= '9':
			d = uint64(ch - '0')
		case ch >= 'a' && ch <= 'f':
			d = uint64(ch-'a') + 10
		default:
			return Checksum{}, false
		}
		x = U128{x.Hi<<4 | x.Lo>>60, x.Lo<<4 | d}
	}
	return Checksum{sum: x}, true
}

// Range is the rows [First, First+Count) of one TeraGen map task.
type Range struct{ First, Count uint64 }

// Ranges divides rows over maps as Hadoop's TeraGen does: split s ends at
// ceil(rows·(s+1)/maps), computed in float64.
func Ranges(rows uint64, maps int) []Range {
	out := make([]Range, 0, maps)
	var cur uint64
	for s := 0; s < maps; s++ {
		goal := uint64(math.Ceil(float64(rows) * float64(s+1) / float64(maps)))
		out = append(out, Range{First: cur, Count: goal - cur})
		cur = goal
	}
	return out
}
