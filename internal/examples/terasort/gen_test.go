package terasort

import (
	"bytes"
	"encoding/hex"
	"testing"
)

// Facts from Hadoop's TeraGen / gensort (../shared/docs/benchmark-notes.md).
func TestFirstRecords(t *testing.T) {
	g := NewGenerator(0)
	rec := make([]byte, RecordSize)
	g.Next(rec)
	if k := hex.EncodeToString(rec[:KeySize]); k != "4a696d47726179524950" {
		t.Errorf("row 0 key %s", k)
	}
	if string(rec[12:44]) != "00000000000000000000000000000000" || !bytes.Equal(rec[10:12], []byte{0, 0x11}) ||
		!bytes.Equal(rec[44:48], []byte{0x88, 0x99, 0xAA, 0xBB}) || !bytes.Equal(rec[96:], []byte{0xCC, 0xDD, 0xEE, 0xFF}) {
		t.Errorf("row 0 layout: %x", rec)
	}
	g.Next(rec)
	if k := hex.EncodeToString(rec[:KeySize]); k != "95e0e48262b3edfe0447" {
		t.Errorf("row 1 key %s", k)
	}
	if string(rec[12:44]) != "00000000000000000000000000000001" {
		t.Errorf("row 1 number %q", rec[12:44])
	}
	// The filler repeats hex digits 20..31 of rand four times each.
	for gi := 0; gi < 12; gi++ {
		b := rec[48+4*gi : 52+4*gi]
		if b[0] != b[1] || b[1] != b[2] || b[2] != b[3] {
			t.Errorf("group %d not 4 identical bytes: %q", gi, b)
		}
	}
}

func TestSkipAheadMatchesStepping(t *testing.T) {
	var x U128
	for i := uint64(1); i <= 1000; i++ {
		x = Next(x)
		if got := SkipAhead(U128{0, i}); got != x {
			t.Fatalf("skip ahead %d = %x, stepping gives %x", i, got, x)
		}
	}
	// A generator started mid-way agrees with one run from 0.
	a, b := NewGenerator(0), NewGenerator(777)
	ra, rb := make([]byte, RecordSize), make([]byte, RecordSize)
	for i := 0; i < 777; i++ {
		a.Next(ra)
	}
	for i := 0; i < 5; i++ {
		a.Next(ra)
		b.Next(rb)
		if !bytes.Equal(ra, rb) {
			t.Fatalf("row %d differs", 777+i)
		}
	}
}

func TestRangesAndChecksum(t *testing.T) {
	rs := Ranges(1000000, 7)
	var total uint64
	for i, r := range rs {
		if r.First != total {
			t.Fatalf("range %d starts at %d, want %d", i, r.First, total)
		}
		total += r.Count
	}
	if total != 1000000 || rs[0].Count != 142858 {
		t.Fatalf("ranges %+v", rs)
	}
	// The checksum of all rows equals the sum of per-range checksums.
	var whole, parts Checksum
	rec := make([]byte, RecordSize)
	g := NewGenerator(0)
	for i := 0; i < 10000; i++ {
		g.Next(rec)
		whole.Add(rec)
	}
	for _, r := range Ranges(10000, 3) {
		var c Checksum
		g := NewGenerator(r.First)
		for i := uint64(0); i < r.Count; i++ {
			g.Next(rec)
			c.Add(rec)
		}
		parts.Merge(c)
	}
	if whole.String() != parts.String() {
		t.Fatalf("checksums differ: %s vs %s", whole, parts)
	}
	p, ok := ParseChecksum(whole.String())
	if !ok || p.String() != whole.String() {
		t.Fatal("checksum does not parse back")
	}
}

func BenchmarkGenerate(b *testing.B) {
	g := NewGenerator(0)
	rec := make([]byte, RecordSize)
	b.SetBytes(RecordSize)
	for i := 0; i < b.N; i++ {
		g.Next(rec)
	}
}
