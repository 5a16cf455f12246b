package mapreduce

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"
)

// kvData makes n random records (some empty, some longer than the sync
// interval) and their KV file.
func kvData(t *testing.T, n int, seed int64) ([]testRecord, []byte) {
	t.Helper()
	rng := rand.New(rand.NewSource(seed))
	var buf bytes.Buffer
	w, err := NewKVFileWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	var recs []testRecord
	for i := 0; i < n; i++ {
		k := make([]byte, rng.Intn(40))
		v := make([]byte, rng.Intn(1500))
		switch i % 97 {
		case 0:
			k = nil
		case 1:
			v = nil
		case 2:
			v = make([]byte, KVSyncInterval+rng.Intn(1000))
		}
		rng.Read(k)
		rng.Read(v)
		recs = append(recs, testRecord{string(k), string(v)})
		if err := w.Write(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	return recs, buf.Bytes()
}

func checkRecords(t *testing.T, want, got []testRecord) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d records, want %d", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("record %d differs: key %x…, want %x…", i, got[i].key[:min(8, len(got[i].key))], want[i].key[:min(8, len(want[i].key))])
		}
	}
}

// syncOffsets returns the offsets of the sync entries of a KV file.
func syncOffsets(data []byte) []int {
	pattern := append([]byte{0}, data[5:kvHeaderLen]...)
	var out []int
	for off := int(kvHeaderLen); ; {
		i := bytes.Index(data[off:], pattern)
		if i < 0 {
			return out
		}
		out = append(out, off+i)
		off += i + 1
	}
}

func TestKVFileSplits(t *testing.T) {
	recs, data := kvData(t, 2000, 1)
	if !bytes.HasPrefix(data, []byte("SKV1\x01")) {
		t.Fatalf("header %q", data[:5])
	}
	syncs := syncOffsets(data)
	if len(syncs) < len(data)/(2*KVSyncInterval+2000) { // records are up to 64 KiB + 1 KiB
		t.Fatalf("%d sync entries in %d bytes", len(syncs), len(data))
	}
	for i := 1; i < len(syncs); i++ {
		if syncs[i]-syncs[i-1] < KVSyncInterval {
			t.Fatalf("sync entries %d and %d are %d bytes apart", i-1, i, syncs[i]-syncs[i-1])
		}
	}

	// The whole-file reader.
	r, err := NewKVFileReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	var got []testRecord
	for r.Next() {
		got = append(got, testRecord{string(r.Key()), string(r.Value())})
	}
	if r.Err() != nil {
		t.Fatal(r.Err())
	}
	checkRecords(t, recs, got)

	dir := t.TempDir()
	env, c := testLocalEnv()
	writeTestFile(t, dir+"/data", data)
	uri := "file://" + dir + "/data"
	for _, size := range []int64{100, 1000, 7777, 65536, 100000, 1 << 30} {
		splits, err := KVFileInputFormat{}.Splits(context.Background(), env, withSplitSize(c, size), []string{dir})
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(splits, func(a, b InputSplit) int { return int(a.Start - b.Start) })
		got, err := readSplits(t, KVFileInputFormat{}, env, c, splits)
		if err != nil {
			t.Fatalf("split size %d: %v", size, err)
		}
		t.Run(fmt.Sprintf("size%d", size), func(t *testing.T) { checkRecords(t, recs, got) })
	}
	rng := rand.New(rand.NewSource(2))
	for round := 0; round < 10; round++ {
		cuts := randomCuts(rng, int64(len(data)), 1+rng.Intn(60))
		if round == 0 { // exactly at, just before and just after sync entries
			for _, s := range syncs {
				cuts = append(cuts, int64(s), int64(s)-1, int64(s)+1)
			}
		}
		got, err := readSplits(t, KVFileInputFormat{}, env, c, cutSplits(uri, int64(len(data)), cuts))
		if err != nil {
			t.Fatal(err)
		}
		checkRecords(t, recs, got)
	}
}

func TestKVFileCorrupt(t *testing.T) {
	recs, data := kvData(t, 500, 3)
	syncs := syncOffsets(data)
	if len(syncs) < 2 {
		t.Fatalf("only %d sync entries", len(syncs))
	}
	dir := t.TempDir()
	env, c := testLocalEnv()
	read := func(name string, data []byte, size int64) ([]testRecord, error) {
		writeTestFile(t, dir+"/"+name, data)
		splits, err := KVFileInputFormat{}.Splits(context.Background(), env, withSplitSize(c, size), []string{dir + "/" + name})
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(splits, func(a, b InputSplit) int { return int(a.Start - b.Start) })
		return readSplits(t, KVFileInputFormat{}, env, c, splits)
	}

	bad := bytes.Clone(data)
	bad[syncs[1]+5] ^= 0xff
	for _, size := range []int64{1000, 50000, 1 << 30} {
		_, err := read("badsync", bad, size)
		if !errors.Is(err, ErrKVCorrupt) || !strings.Contains(err.Error(), fmt.Sprintf("wrong sync marker at offset %d", syncs[1])) {
			t.Errorf("split size %d: corrupt sync: %v", size, err)
		}
	}

	_, err := read("truncated", data[:len(data)-3], 1<<30)
	if !errors.Is(err, ErrKVCorrupt) || !strings.Contains(err.Error(), "truncated entry") {
		t.Errorf("truncated: %v", err)
	}
	_, err = read("magic", append([]byte("SEQ\x06"), data[4:]...), 1<<30)
	if !errors.Is(err, ErrKVCorrupt) || !strings.Contains(err.Error(), "not a KV file") {
		t.Errorf("bad magic: %v", err)
	}
	hugeLen := append(bytes.Clone(data[:kvHeaderLen]), 0x05, 0xff, 0xff, 0xff, 0x7f)
	_, err = read("huge", hugeLen, 1<<30)
	if !errors.Is(err, ErrKVCorrupt) || !strings.Contains(err.Error(), "larger than the rest of the file") {
		t.Errorf("huge length: %v", err)
	}
	got, err := read("empty", nil, 1<<30)
	if err != nil || len(got) != 0 {
		t.Errorf("empty file: %d records, %v", len(got), err)
	}
	got, err = read("headeronly", data[:kvHeaderLen], 1<<30)
	if err != nil || len(got) != 0 {
		t.Errorf("header only: %d records, %v", len(got), err)
	}
	_ = recs
}
