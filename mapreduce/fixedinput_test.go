package mapreduce

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand"
	"slices"
	"strconv"
	"strings"
	"testing"
)

func fixedData(n, recLen int, seed int64) []byte {
	data := make([]byte, n*recLen)
	rand.New(rand.NewSource(seed)).Read(data)
	return data
}

func checkFixed(t *testing.T, data []byte, recLen, keyLen int, got []testRecord) {
	t.Helper()
	n := len(data) / recLen
	if len(got) != n {
		t.Fatalf("%d records, want %d", len(got), n)
	}
	for i := 0; i < n; i++ {
		rec := data[i*recLen : (i+1)*recLen]
		var want testRecord
		if keyLen > 0 {
			want = testRecord{string(rec[:keyLen]), string(rec[keyLen:])}
		} else {
			var k [8]byte
			binary.BigEndian.PutUint64(k[:], uint64(i*recLen))
			want = testRecord{string(k[:]), string(rec)}
		}
		if got[i] != want {
			t.Fatalf("record %d differs", i)
		}
	}
}

func TestFixedLengthInput(t *testing.T) {
	dir := t.TempDir()
	env, c := testLocalEnv()
	c.Set(KeyFixedRecordLength, "100")
	data := fixedData(257, 100, 3)
	writeTestFile(t, dir+"/f", data)
	uri := "file://" + dir + "/f"
	rng := rand.New(rand.NewSource(4))
	for _, size := range []int64{1, 7, 99, 100, 101, 250, 1000, 3333, 1 << 20} {
		splits, err := FixedLengthInputFormat{}.Splits(context.Background(), env, withSplitSize(c, size), []string{uri})
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(splits, func(a, b InputSplit) int { return int(a.Start - b.Start) })
		got, err := readSplits(t, FixedLengthInputFormat{}, env, c, splits)
		if err != nil {
			t.Fatalf("split size %d: %v", size, err)
		}
		t.Run(fmt.Sprintf("size%d", size), func(t *testing.T) { checkFixed(t, data, 100, 0, got) })
	}
	for round := 0; round < 10; round++ {
		splits := cutSplits(uri, int64(len(data)), randomCuts(rng, int64(len(data)), 1+rng.Intn(300)))
		got, err := readSplits(t, FixedLengthInputFormat{}, env, c, splits)
		if err != nil {
			t.Fatal(err)
		}
		checkFixed(t, data, 100, 0, got)
		// TeraSort's view: 10-byte keys, 90-byte values, length set in code.
		f := FixedLengthInputFormat{RecordLength: 100, KeyLength: 10}
		env2, c2 := testLocalEnv()
		got, err = readSplits(t, f, env2, c2, splits)
		if err != nil {
			t.Fatal(err)
		}
		checkFixed(t, data, 100, 10, got)
	}
}

func TestFixedLengthInputErrors(t *testing.T) {
	dir := t.TempDir()
	env, c := testLocalEnv()
	data := fixedData(10, 100, 5)
	writeTestFile(t, dir+"/f", append(data, "partial"...))
	uri := "file://" + dir + "/f"
	if _, err := (FixedLengthInputFormat{}).Splits(context.Background(), env, c, []string{uri}); err == nil || !strings.Contains(err.Error(), KeyFixedRecordLength) {
		t.Errorf("no record length: %v", err)
	}
	c.Set(KeyFixedRecordLength, "0")
	if _, err := (FixedLengthInputFormat{}).Splits(context.Background(), env, c, []string{uri}); err == nil {
		t.Error("record length 0: no error")
	}
	c.Set(KeyFixedRecordLength, "100")
	if _, err := (FixedLengthInputFormat{KeyLength: 101}).Splits(context.Background(), env, c, []string{uri}); err == nil {
		t.Error("key longer than record: no error")
	}
	for _, size := range []int64{1, 100, 333, 1 << 20} {
		splits, err := FixedLengthInputFormat{}.Splits(context.Background(), env, withSplitSize(c, size), []string{uri})
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(splits, func(a, b InputSplit) int { return int(a.Start - b.Start) })
		got, err := readSplits(t, FixedLengthInputFormat{}, env, c, splits)
		if err == nil || !strings.Contains(err.Error(), "partial record of 7 bytes at offset 1000") {
			t.Errorf("split size %d: partial record: %v", size, err)
		}
		if len(got) != 10 {
			t.Errorf("split size %d: %d whole records before the error", size, len(got))
		}
	}
}

// Records longer than the reader's buffer are read through a copy; the
// last partial one is still reported.
func TestFixedLengthInputLargeRecords(t *testing.T) {
	dir := t.TempDir()
	env, c := testLocalEnv()
	const recLen = 100_000 // more than the 64 KiB buffer
	data := fixedData(6, recLen, 9)
	writeTestFile(t, dir+"/f", data)
	uri := "file://" + dir + "/f"
	c.Set(KeyFixedRecordLength, strconv.Itoa(recLen))
	f := FixedLengthInputFormat{KeyLength: 10}
	splits, err := f.Splits(context.Background(), env, withSplitSize(c, 250_000), []string{uri})
	if err != nil {
		t.Fatal(err)
	}
	got, err := readSplits(t, f, env, c, splits)
	if err != nil {
		t.Fatal(err)
	}
	checkFixed(t, data, recLen, 10, got)
	writeTestFile(t, dir+"/f", data[:5*recLen+7])
	if _, err := readSplits(t, f, env, c, splits[:1]); err != nil {
		t.Fatal(err)
	}
	all, err := f.Splits(context.Background(), env, c, []string{uri})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := readSplits(t, f, env, c, all); err == nil || !strings.Contains(err.Error(), "partial record of 7 bytes") {
		t.Errorf("partial large record: %v", err)
	}
}
