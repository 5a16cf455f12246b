package dfsio

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	_ "github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/storage"
	"github.com/stratafs/strata/internal/testcluster"
)

func TestParseSize(t *testing.T) {
	good := map[string]int64{
		"128": 128 << 20, "0": 0, "64KB": 64 << 10, "64kb": 64 << 10, "1gb": 1 << 30, "10B": 10, "1b": 1,
		"3TB": 3 << 40, "2MB": 2 << 20, "2mB": 2 << 20, "007": 7 << 20,
	}
	for in, want := range good {
		if got, err := ParseSize(in); err != nil || got != want {
			t.Errorf("ParseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "K", "1K", "1M", "1G", "1.5GB", "-1", "10 MB", "1PB", "99999999TB", "MB"} {
		if got, err := ParseSize(in); err == nil {
			t.Errorf("ParseSize(%q) = %d, want an error", in, got)
		}
	}
}

func TestFormatDecimal(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{
		{6, "6"}, {0, "0"}, {1.5, "1.5"}, {1.50001, "1.5"}, {36.144, "36.14"}, {36.145000001, "36.15"},
		{0.125, "0.12"}, {0.375, "0.38"}, // exact ties: half-even
		{0.135, "0.14"}, {2.675, "2.67"}, // not ties in binary: nearest
		{float64(float32(1.005)), "1"}, {0.001, "0"}, {0.005, "0.01"}, {0.995, "0.99"}, {0.9951, "1"},
		{1234567.891, "1234567.89"}, {-1.256, "-1.26"}, {-0.001, "-0"},
		{math.NaN(), "NaN"}, {math.Inf(1), "∞"}, {math.Inf(-1), "-∞"},
	} {
		if got := FormatDecimal(tc.v); got != tc.want {
			t.Errorf("FormatDecimal(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
}

func TestJavaFloat(t *testing.T) {
	for _, tc := range []struct {
		f    float32
		want string
	}{
		{1, "1.0"}, {0, "0.0"}, {123.456, "123.456"}, {20971.52, "20971.52"}, {0.001, "0.001"},
		{1e7, "1.0E7"}, {12345678, "1.2345678E7"}, {1e-4, "1.0E-4"}, {-2.5, "-2.5"},
		{float32(math.Inf(1)), "Infinity"},
	} {
		if got := javaFloat(tc.f); got != tc.want {
			t.Errorf("javaFloat(%v) = %q, want %q", tc.f, got, tc.want)
		}
	}
}

func TestReportLines(t *testing.T) {
	// Three tasks of 2 MB in 100, 50 and 200 ms: 20, 40 and 10 MB/s.
	var s Stats
	for _, ms := range []int64{100, 50, 200} {
		rate := float32(2*Mega) * 1000 / float32(ms*Mega)
		s.Tasks++
		s.Size += 2 * Mega
		s.Time += ms
		s.Rate += rate * 1000
		s.SqRate += rate * rate * 1000
	}
	r := Report{Type: Write, Date: time.Date(2013, 5, 2, 11, 25, 52, 0, time.FixedZone("CEST", 2*3600)), Stats: s, ExecTime: 1534 * time.Millisecond}
	want := `----- TestDFSIO ----- : write
            Date & time: Thu May 02 11:25:52 CEST 2013
        Number of files: 3
 Total MBytes processed: 6
      Throughput mb/sec: 17.14
 Average IO rate mb/sec: 23.33
  IO rate std deviation: 12.47
     Test exec time sec: 1.53

`
	if got := r.String(); got != want {
		t.Errorf("report:\n%s\nwant:\n%s", got, want)
	}
	r.Type = BackwardRead
	r.Date = time.Date(2024, 1, 9, 8, 7, 6, 0, time.FixedZone("", -(3*3600+30*60)))
	if l := r.Lines(); l[0] != "----- TestDFSIO ----- : backward read" || l[1] != "            Date & time: Tue Jan 09 08:07:06 GMT-03:30 2024" {
		t.Errorf("got %q", l[:2])
	}
}

func TestParseStats(t *testing.T) {
	in := "f:rate\t70000.0\nf:sqrate\t2100000.0\nl:size\t6291456\nl:tasks\t3\nl:time\t350\n"
	s, err := ParseStats(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if s != (Stats{Tasks: 3, Size: 6291456, Time: 350, Rate: 70000, SqRate: 2100000}) {
		t.Errorf("got %+v", s)
	}
	if _, err := ParseStats(strings.NewReader("l:size\tx\n")); err == nil {
		t.Error("bad value accepted")
	}
}

func TestParseArgs(t *testing.T) {
	o, err := ParseArgs([]string{"-READ", "-skip", "-nrFiles", "3", "-size", "2MB", "-bufferSize", "4096", "-resFile", "r.log"})
	if err != nil {
		t.Fatal(err)
	}
	if o.Type != SkipRead || o.NrFiles != 3 || o.FileSize != 2<<20 || o.BufferSize != 4096 || o.SkipSize != 4096 || o.ResFile != "r.log" {
		t.Errorf("got %+v", o)
	}
	o, err = ParseArgs([]string{"-read", "-backward", "-fileSize", "10"})
	if err != nil || o.Type != BackwardRead || o.SkipSize != -DefaultBufferSize || o.FileSize != 10<<20 || o.NrFiles != 1 {
		t.Errorf("got %+v, %v", o, err)
	}
	o, err = ParseArgs([]string{"-write", "-compression", GzipCodec, "-storagePolicy", "ALL_SSD"})
	if err != nil || o.Type != Write || o.Compression != "gzip" || o.StoragePolicy != "ALL_SSD" || o.ResFile != DefaultResFile {
		t.Errorf("got %+v, %v", o, err)
	}
	for _, bad := range [][]string{
		nil, {"-random"}, {"-write", "-random"}, {"-write", "-nrFiles"}, {"-write", "-nrFiles", "0"},
		{"-write", "-fileSize", "1M"}, {"-write", "-compression", "snappy"}, {"-bogus"}, {"-nrFiles", "2"},
		{"-read", "-random", "-compression", "gzip"}, {"-write", "-seq"},
	} {
		if _, err := ParseArgs(bad); err == nil {
			t.Errorf("ParseArgs(%q) accepted", bad)
		} else if ue := (*UsageError)(nil); !errors.As(err, &ue) {
			t.Errorf("ParseArgs(%q): %v is not a UsageError", bad, err)
		}
	}
}

// bench runs TestDFSIO against an in-process cluster.
type bench struct {
	t       *testing.T
	cl      *testcluster.Cluster
	env     fs.Env
	resFile string
	fsys    fs.FileSystem
}

func newBench(t *testing.T) *bench {
	cl := testcluster.New(t, testcluster.Config{DataNodes: 3})
	c := conf.New()
	c.Set("fs.defaultFS", cl.URI())
	c.Set("dfs.blocksize", "1048576")
	c.Set("mapreduce.cluster.local.dir", t.TempDir())
	b := &bench{t: t, cl: cl, env: fs.Env{Conf: c, User: cl.Superuser()}, resFile: filepath.Join(t.TempDir(), "TestDFSIO_results.log")}
	fsys, err := fs.Get(context.Background(), cl.URI(), b.env)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { fsys.Close() })
	b.fsys = fsys
	return b
}

// run runs the benchmark with args (plus -resFile) and returns the report
// and what it printed.
func (b *bench) run(args ...string) (*Report, string) {
	b.t.Helper()
	o, err := ParseArgs(append(args, "-resFile", b.resFile))
	if err != nil {
		b.t.Fatal(err)
	}
	var out, log bytes.Buffer
	r, err := Run(context.Background(), b.env, o, &out, &log)
	if err != nil {
		b.t.Fatalf("%q: %v\n%s", args, err, log.String())
	}
	return r, out.String()
}

func (b *bench) sizes(n int) []int64 {
	b.t.Helper()
	var out []int64
	for i := 0; i < n; i++ {
		st, err := b.fsys.Stat(context.Background(), "/benchmarks/TestDFSIO/io_data/test_io_"+string(rune('0'+i)))
		if err != nil {
			b.t.Fatal(err)
		}
		out = append(out, st.Length)
	}
	return out
}

func field(t *testing.T, report, name string) string {
	t.Helper()
	for _, l := range strings.Split(report, "\n") {
		if k, v, ok := strings.Cut(l, ": "); ok && strings.TrimSpace(k) == name {
			return v
		}
	}
	t.Fatalf("no %q in report:\n%s", name, report)
	return ""
}

func TestWriteReadAppendTruncateClean(t *testing.T) {
	b := newBench(t)
	const mb2 = 2 << 20

	r, out := b.run("-write", "-nrFiles", "3", "-fileSize", "2MB")
	if !strings.HasPrefix(out, "----- TestDFSIO ----- : write\n") || !strings.HasSuffix(out, "\n\n") {
		t.Errorf("report:\n%s", out)
	}
	if got := field(t, out, "Number of files"); got != "3" {
		t.Errorf("Number of files: %s", got)
	}
	if got := field(t, out, "Total MBytes processed"); got != "6" {
		t.Errorf("Total MBytes processed: %s", got)
	}
	for _, name := range []string{"Throughput mb/sec", "Average IO rate mb/sec", "IO rate std deviation", "Test exec time sec"} {
		v := field(t, out, name)
		if i := strings.IndexByte(v, '.'); i >= 0 && (len(v)-i-1 > 2 || strings.HasSuffix(v, "0")) {
			t.Errorf("%s: %q is not #.##", name, v)
		}
	}
	if _, err := time.Parse("Mon Jan 02 15:04:05 MST 2006", field(t, out, "Date & time")); err != nil {
		t.Errorf("date: %v", err)
	}
	if r.Stats.Tasks != 3 || r.Stats.Size != 3*mb2 || r.Stats.Time < 3 {
		t.Errorf("stats %+v", r.Stats)
	}
	for i, n := range b.sizes(3) {
		if n != mb2 {
			t.Errorf("test_io_%d: %d bytes", i, n)
		}
	}
	locs, err := b.fsys.(fs.BlockLocator).FileBlockLocations(context.Background(), "/benchmarks/TestDFSIO/io_data/test_io_0")
	if err != nil || len(locs) != 2 {
		t.Errorf("blocks of a 2 MiB file with 1 MiB blocks: %v, %v", locs, err)
	}
	res, err := os.ReadFile(b.resFile)
	if err != nil || string(res) != out {
		t.Errorf("results file %q (%v), want the report", res, err)
	}

	_, out2 := b.run("-read", "-nrFiles", "3", "-fileSize", "2MB")
	if !strings.HasPrefix(out2, "----- TestDFSIO ----- : read\n") || field(t, out2, "Total MBytes processed") != "6" || field(t, out2, "Number of files") != "3" {
		t.Errorf("read report:\n%s", out2)
	}
	res, _ = os.ReadFile(b.resFile)
	if string(res) != out+out2 {
		t.Errorf("results file after read:\n%s", res)
	}

	// Positioned reads, with Hadoop's offsets and a 1,000,000-byte buffer.
	r, _ = b.run("-read", "-skip", "-nrFiles", "3", "-fileSize", "2MB")
	if want := int64(3 * (1000000 + mb2 - 2000000)); r.Stats.Size != want { // at 0, at 2,000,000, then past the end
		t.Errorf("skip read: %d bytes, want %d", r.Stats.Size, want)
	}
	r, _ = b.run("-read", "-skip", "-skipSize", "500000B", "-nrFiles", "3", "-fileSize", "2MB")
	if want := int64(3 * (1000000 + mb2 - 1500000)); r.Stats.Size != want { // at 0, at 1,500,000
		t.Errorf("skip read 500000: %d bytes, want %d", r.Stats.Size, want)
	}
	r, _ = b.run("-read", "-backward", "-nrFiles", "3", "-fileSize", "2MB")
	if want := int64(3 * 3 * 1000000); r.Stats.Size != want || r.Type != BackwardRead { // at 1,097,152, 97,152, 0
		t.Errorf("backward read: %d bytes, want %d", r.Stats.Size, want)
	}
	r, out = b.run("-read", "-random", "-nrFiles", "3", "-fileSize", "2MB")
	if r.Stats.Size < 3*mb2 || r.Stats.Size >= 3*(mb2+1000000) || !strings.HasPrefix(out, "----- TestDFSIO ----- : random read\n") {
		t.Errorf("random read: %d bytes\n%s", r.Stats.Size, out)
	}
	if _, err := b.fsys.Stat(context.Background(), "/benchmarks/TestDFSIO/io_random_read/part-r-00000"); err != nil {
		t.Errorf("random read output: %v", err)
	}

	r, _ = b.run("-append", "-nrFiles", "3", "-fileSize", "2MB")
	if r.Stats.Size != 3*mb2 {
		t.Errorf("append: %d bytes", r.Stats.Size)
	}
	for i, n := range b.sizes(3) {
		if n != 2*mb2 {
			t.Errorf("test_io_%d after append: %d bytes, want %d", i, n, 2*mb2)
		}
	}
	r, _ = b.run("-read", "-nrFiles", "3", "-fileSize", "4MB")
	if r.Stats.Size != 3*2*mb2 {
		t.Errorf("read after append: %d bytes", r.Stats.Size)
	}

	// To a block boundary, then into the middle of a block (the
	// DataNodes cut the replica and the file is closed again).
	r, _ = b.run("-truncate", "-nrFiles", "3", "-fileSize", "3MB")
	if r.Stats.Size != 3*(4<<20-3<<20) {
		t.Errorf("truncate: %d bytes", r.Stats.Size)
	}
	r, out = b.run("-truncate", "-nrFiles", "3", "-fileSize", "1536KB")
	if r.Stats.Size != 3*(3<<20-1536<<10) || !strings.HasPrefix(out, "----- TestDFSIO ----- : truncate\n") {
		t.Errorf("truncate: %d bytes", r.Stats.Size)
	}
	for i, n := range b.sizes(3) {
		if n != 1536<<10 {
			t.Errorf("test_io_%d after truncate: %d bytes", i, n)
		}
	}
	r, _ = b.run("-read", "-nrFiles", "3", "-fileSize", "1536KB")
	if r.Stats.Size != 3*1536<<10 {
		t.Errorf("read after truncate: %d bytes", r.Stats.Size)
	}

	if r, _ := b.run("-clean"); r != nil {
		t.Errorf("clean returned a report")
	}
	if _, err := b.fsys.Stat(context.Background(), "/benchmarks/TestDFSIO"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("base dir after -clean: %v", err)
	}
	if res, _ := os.ReadFile(b.resFile); strings.Count(string(res), "----- TestDFSIO -----") != 11 {
		t.Errorf("results file has %d reports, want 11", strings.Count(string(res), "----- TestDFSIO -----"))
	}
}

func TestCompressionAndPolicy(t *testing.T) {
	b := newBench(t)
	b.env.Conf.Set(KeyBaseDir, "/bench/dfsio")
	r, _ := b.run("-write", "-nrFiles", "2", "-fileSize", "1MB", "-compression", "gzip", "-storagePolicy", "ALL_SSD")
	if r.Stats.Size != 2<<20 {
		t.Errorf("write: %d bytes", r.Stats.Size)
	}
	st, err := b.fsys.Stat(context.Background(), "/bench/dfsio/io_data/test_io_1")

	if err != nil || st.Length >= 1<<20 || st.Length == 0 {
		t.Errorf("compressed file: %+v, %v", st, err)
	}
	r, _ = b.run("-read", "-nrFiles", "2", "-fileSize", "1MB", "-compression", GzipCodec)
	if r.Stats.Size != 2<<20 {
		t.Errorf("read: %d bytes", r.Stats.Size)
	}
	for _, types := range b.cl.BlockReplicas("/bench/dfsio/io_data/test_io_0") {
		for _, ty := range types {
			if ty != storage.SSD {
				t.Errorf("ALL_SSD file has a replica on %v", ty)
			}
		}
	}

	// A missing data file is reported before any job runs.
	o, _ := ParseArgs([]string{"-read", "-nrFiles", "3", "-resFile", b.resFile})
	_, err = Run(context.Background(), b.env, o, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "test_io_2 does not exist") {
		t.Errorf("read of a missing file: %v", err)
	}
	o, _ = ParseArgs([]string{"-write", "-storagePolicy", "NO_SUCH", "-resFile", b.resFile})
	_, err = Run(context.Background(), b.env, o, &bytes.Buffer{}, &bytes.Buffer{})
	if err == nil || !strings.Contains(err.Error(), "Invalid block storage policy: NO_SUCH") || !strings.Contains(err.Error(), "ALL_SSD") {
		t.Errorf("bad policy: %v", err)
	}
}
