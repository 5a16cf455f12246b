package examples

import (
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/stratafs/strata/internal/examples/terasort"
)

func concatParts(t *testing.T, dir string) []byte {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), "part-") {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	var b bytes.Buffer
	for _, n := range names {
		d, _ := os.ReadFile(filepath.Join(dir, n))
		b.Write(d)
	}
	return b.Bytes()
}

// TestTeraGenSplitsAndSortValidate: teragen of 1,000,000 rows in 1 and 7
// maps gives the same bytes; the first record is Hadoop's; terasort's
// output validates with the same checksum; a swapped or truncated output
// fails validation.
func TestTeraGenSortValidate(t *testing.T) {
	if testing.Short() {
		t.Skip("100 MB of data")
	}
	ctx := context.Background()
	dir := t.TempDir()
	var sums []string
	for _, maps := range []string{"1", "7"} {
		c := tinyConf(t, false)
		c.Set("mapreduce.task.io.sort.mb", "16")
		c.Set("mapreduce.job.maps", maps)
		var log bytes.Buffer
		cmd, _ := Lookup("teragen")
		out := filepath.Join(dir, "gen"+maps)
		if err := cmd.Run(ctx, localEnv(c), []string{"1m", out}, &log); err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
		i := strings.Index(log.String(), "checksum\t")
		if i < 0 {
			t.Fatalf("teragen printed no checksum:\n%s", log.String())
		}
		sums = append(sums, strings.Fields(log.String()[i:])[1])
	}
	a, b := concatParts(t, filepath.Join(dir, "gen1")), concatParts(t, filepath.Join(dir, "gen7"))
	if len(a) != 100_000_000 || !bytes.Equal(a, b) {
		t.Fatalf("1 and 7 maps differ (%d vs %d bytes)", len(a), len(b))
	}
	if k := hex.EncodeToString(a[:10]); k != "4a696d47726179524950" {
		t.Fatalf("first key %s", k)
	}
	if sums[0] != sums[1] {
		t.Fatalf("checksums differ: %v", sums)
	}
	var direct terasort.Checksum
	for off := 0; off < len(a); off += 100 {
		direct.Add(a[off : off+100])
	}
	if direct.String() != sums[0] {
		t.Fatalf("teragen checksum %s, computed %s", sums[0], direct)
	}

	c := tinyConf(t, true)
	c.Set("mapreduce.task.io.sort.mb", "16")
	c.Set("mapreduce.job.reduces", "4")
	c.Set("mapreduce.input.fileinputformat.split.maxsize", fmt.Sprint(16<<20))
	var log bytes.Buffer
	sorted := filepath.Join(dir, "sorted")
	if _, err := runJob(ctx, localEnv(c), &log, "terasort", []string{filepath.Join(dir, "gen7"), sorted}); err != nil {
		t.Fatalf("terasort: %v\n%s", err, log.String())
	}
	if _, err := os.Stat(filepath.Join(sorted, partitionFile)); err != nil {
		t.Error("no partition file in the output")
	}
	out := concatParts(t, sorted)
	if len(out) != len(a) {
		t.Fatalf("terasort output %d bytes, want %d", len(out), len(a))
	}
	for off := 100; off < len(out); off += 100 {
		if bytes.Compare(out[off-100:off-90], out[off:off+10]) > 0 {
			t.Fatalf("output not globally sorted at record %d", off/100)
		}
	}
	validate := func(in string) (string, error) {
		var log bytes.Buffer
		cmd, _ := Lookup("teravalidate")
		report := filepath.Join(t.TempDir(), "report")
		err := cmd.Run(ctx, localEnv(tinyConf(t, false)), []string{in, report}, &log)
		b, _ := os.ReadFile(filepath.Join(report, "part-r-00000"))
		return string(b), err
	}
	report, err := validate(sorted)
	if err != nil || report != "checksum\t"+sums[0]+"\n" {
		t.Fatalf("teravalidate of terasort output: %v\n%s", err, report)
	}
	// Swap two records in one part: validation reports a misorder.
	part := filepath.Join(sorted, "part-r-00001")
	data, _ := os.ReadFile(part)
	rec := make([]byte, 100)
	copy(rec, data[1000:1100])
	copy(data[1000:1100], data[1100:1200])
	copy(data[1100:1200], rec)
	os.WriteFile(part, data, 0o644)
	report, err = validate(sorted)
	if err == nil || !strings.Contains(report, "misorder in part-r-00001") {
		t.Fatalf("swapped records not reported: %v\n%.300s", err, report)
	}
	// Truncate a part mid-record: validation fails.
	os.WriteFile(part, data[:len(data)-37], 0o644)
	if _, err := validate(sorted); err == nil {
		t.Fatal("truncated output validated")
	}
}
