package mapreduce

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	_ "github.com/stratafs/strata/hdfs" // registers hdfs://
	"github.com/stratafs/strata/internal/testcluster"
)

// testRecord is one record read back in a test.
type testRecord struct {
	key, value string
}

// testLocalEnv is an environment on file:// with its own configuration.
func testLocalEnv() (fs.Env, *conf.Configuration) {
	c := conf.New()
	return fs.Env{Conf: c}, c
}

func writeTestFile(t *testing.T, p string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// withSplitSize returns a copy of c whose splits are size bytes.
func withSplitSize(c *conf.Configuration, size int64) *conf.Configuration {
	c = c.Clone()
	c.Set(KeySplitMaxSize, fmt.Sprint(size))
	return c
}

// readSplit reads every record of one split, checking Progress stays in
// [0, 1] and ends at 1.
func readSplit(t *testing.T, in InputFormat, env fs.Env, c *conf.Configuration, s InputSplit) ([]testRecord, error) {
	t.Helper()
	rr, err := in.Open(context.Background(), env, c, s)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err := rr.Close(); err != nil {
			t.Errorf("close %+v: %v", s, err)
		}
	}()
	var out []testRecord
	for rr.Next() {
		if p := rr.Progress(); p < 0 || p > 1 {
			t.Fatalf("split %+v: progress %v", s, p)
		}
		out = append(out, testRecord{string(rr.Key()), string(rr.Value())})
	}
	if rr.Err() == nil && rr.Progress() != 1 {
		t.Errorf("split %+v: progress %v at the end", s, rr.Progress())
	}
	return out, rr.Err()
}

// readSplits reads all splits in order; the first error is returned.
func readSplits(t *testing.T, in InputFormat, env fs.Env, c *conf.Configuration, splits []InputSplit) ([]testRecord, error) {
	t.Helper()
	var all []testRecord
	for _, s := range splits {
		recs, err := readSplit(t, in, env, c, s)
		all = append(all, recs...)
		if err != nil {
			return all, err
		}
	}
	return all, nil
}

// cutSplits divides [0, size) of uri at the given cut points.
func cutSplits(uri string, size int64, cuts []int64) []InputSplit {
	cuts = append([]int64{0}, cuts...)
	cuts = append(cuts, size)
	slices.Sort(cuts)
	cuts = slices.Compact(cuts)
	var out []InputSplit
	for i := 0; i+1 < len(cuts); i++ {
		out = append(out, InputSplit{Path: uri, Start: cuts[i], Length: cuts[i+1] - cuts[i], Index: i})
	}
	return out
}

// randomCuts returns n random cut points in (0, size).
func randomCuts(rng *rand.Rand, size int64, n int) []int64 {
	var cuts []int64
	for i := 0; i < n && size > 1; i++ {
		cuts = append(cuts, 1+rng.Int63n(size-1))
	}
	return cuts
}

func TestFileSplitsSizes(t *testing.T) {
	dir := t.TempDir()
	env, c := testLocalEnv()
	writeTestFile(t, dir+"/a", make([]byte, 110))
	writeTestFile(t, dir+"/b", make([]byte, 111))
	writeTestFile(t, dir+"/c", make([]byte, 350))
	writeTestFile(t, dir+"/empty", nil)
	splits, err := FileSplits(context.Background(), env, withSplitSize(c, 100), []string{dir}, nil)
	if err != nil {
		t.Fatal(err)
	}
	type sl struct {
		name          string
		start, length int64
	}
	var got []sl
	for i, s := range splits {
		if s.Index != i {
			t.Errorf("split %d has Index %d", i, s.Index)
		}
		if !strings.HasPrefix(s.Path, "file:///") {
			t.Errorf("split path %q is not a file:// URI", s.Path)
		}
		if len(s.Hosts) != 0 {
			t.Errorf("file:// split has hosts %v", s.Hosts)
		}
		got = append(got, sl{filepath.Base(s.Path), s.Start, s.Length})
	}
	// Largest first; ties in file and offset order. 110 bytes is within
	// the 10% slop of one 100-byte split, 111 is not.
	want := []sl{
		{"a", 0, 110},
		{"b", 0, 100}, {"c", 0, 100}, {"c", 100, 100}, {"c", 200, 100},
		{"c", 300, 50}, {"b", 100, 11}, {"empty", 0, 0},
	}
	if !slices.Equal(got, want) {
		t.Errorf("splits\n got %v\nwant %v", got, want)
	}

	// minsize wins over maxsize; the block size (32 MiB on file://)
	// bounds the default.
	c2 := withSplitSize(c, 100)
	c2.Set(KeySplitMinSize, "200")
	splits, err = FileSplits(context.Background(), env, c2, []string{dir + "/c"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(splits) != 2 || splits[0].Length != 200 || splits[1].Length != 150 {
		t.Errorf("minsize 200: %+v", splits)
	}
	splits, err = FileSplits(context.Background(), env, c, []string{dir + "/c"}, nil)
	if err != nil || len(splits) != 1 || splits[0].Length != 350 {
		t.Errorf("default sizes: %+v, %v", splits, err)
	}
	// A file the format cannot split is one split.
	splits, err = FileSplits(context.Background(), env, withSplitSize(c, 100), []string{dir + "/c"}, func(string) bool { return false })
	if err != nil || len(splits) != 1 || splits[0].Length != 350 {
		t.Errorf("unsplittable: %+v, %v", splits, err)
	}
	c.Set(KeySplitMaxSize, "lots")
	if _, err := FileSplits(context.Background(), env, c, []string{dir}, nil); err == nil || !strings.Contains(err.Error(), KeySplitMaxSize) {
		t.Errorf("bad maxsize: %v", err)
	}
}

func TestFileSplitsListing(t *testing.T) {
	dir := t.TempDir()
	env, c := testLocalEnv()
	for _, n := range []string{"in/part-0", "in/part-1", "in/_SUCCESS", "in/.part-0.crc", "in/sub/deep", "in/sub/_hidden", "in/_tmp/x", "other/a.txt", "other/b.txt", "other/c.log"} {
		writeTestFile(t, dir+"/"+n, []byte(n))
	}
	names := func(paths []string, c *conf.Configuration) ([]string, error) {
		splits, err := FileSplits(context.Background(), env, c, paths, nil)
		var out []string
		for _, s := range splits {
			out = append(out, strings.TrimPrefix(s.Path, "file://"+dir+"/"))
		}
		slices.Sort(out)
		return out, err
	}
	cases := []struct {
		paths []string
		want  []string
	}{
		{[]string{dir + "/in"}, []string{"in/part-0", "in/part-1"}},
		{[]string{"file://" + dir + "/in/"}, []string{"in/part-0", "in/part-1"}},
		{[]string{dir + "/in/part-1"}, []string{"in/part-1"}},
		{[]string{dir + "/*/*.txt"}, []string{"other/a.txt", "other/b.txt"}},
		{[]string{dir + "/other/{a,c}.*"}, []string{"other/a.txt", "other/c.log"}},
		{[]string{dir + "/other/[!a]*"}, []string{"other/b.txt", "other/c.log"}},
		{[]string{dir + "/in/part-?", dir + "/other/a.txt"}, []string{"in/part-0", "in/part-1", "other/a.txt"}},
		{[]string{dir + "/i?"}, []string{"in/part-0", "in/part-1"}},
	}
	for _, tc := range cases {
		got, err := names(tc.paths, c)
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%v: got %v, %v; want %v", tc.paths, got, err, tc.want)
		}
	}
	rc := c.Clone()
	rc.Set(KeyInputDirRecursive, "true")
	got, err := names([]string{dir + "/in"}, rc)
	if want := []string{"in/part-0", "in/part-1", "in/sub/deep"}; err != nil || !slices.Equal(got, want) {
		t.Errorf("recursive: got %v, %v; want %v", got, err, want)
	}

	_, err = names([]string{dir + "/nope", dir + "/in/*.gz", dir + "/in", dir + "/in/_SUCCESS"}, c)
	var ie *InvalidInputError
	if !errors.As(err, &ie) || !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing inputs: %v", err)
	}
	want := []string{
		"Input path does not exist: file://" + dir + "/nope",
		"Input Pattern file://" + dir + "/in/*.gz matches 0 files",
		"Input Pattern file://" + dir + "/in/_SUCCESS matches 0 files",
	}
	if !slices.Equal(ie.Problems, want) {
		t.Errorf("problems\n got %q\nwant %q", ie.Problems, want)
	}
	if _, err := names(nil, c); err == nil {
		t.Error("no input paths: no error")
	}
	if _, err := names([]string{dir + "/{a,b"}, c); err == nil {
		t.Error("unclosed brace: no error")
	}
}

// TestHDFS runs the formats and the committer against an in-process
// cluster with 1 MiB blocks.
func TestHDFS(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a cluster")
	}
	cl := testcluster.New(t, testcluster.Config{DataNodes: 3})
	client := cl.Client(cl.Superuser())
	ctx := context.Background()
	c := conf.New()
	c.Set(fs.KeyDefaultFS, cl.URI())
	c.Set("dfs.blocksize", "1048576")
	env := fs.Env{Conf: c, User: cl.Superuser()}

	create := func(p string, data []byte) {
		t.Helper()
		w, err := client.CreateFile(ctx, p, fs.CreateOptions{BlockSize: 1 << 20, CreateParent: true})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write(data); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}

	t.Run("TextSplits", func(t *testing.T) {
		rng := rand.New(rand.NewSource(1))
		var buf bytes.Buffer
		for buf.Len() < 3<<20+512<<10 {
			fmt.Fprintf(&buf, "line %d %s\n", buf.Len(), strings.Repeat("x", rng.Intn(200)))
		}
		data := buf.Bytes()[:3<<20+512<<10] // 3.5 MiB, the last line cut short
		create("/in/big.txt", data)
		create("/in/_SUCCESS", nil)
		splits, err := TextInputFormat{}.Splits(ctx, env, c, []string{"/in"})
		if err != nil {
			t.Fatal(err)
		}
		if len(splits) != 4 {
			t.Fatalf("%d splits, want 4: %+v", len(splits), splits)
		}
		locs, err := client.FileBlockLocations(ctx, "/in/big.txt")
		if err != nil {
			t.Fatal(err)
		}
		for i, s := range splits {
			wantLen := int64(1 << 20)
			if i == 3 {
				wantLen = 512 << 10
			}
			if s.Path != cl.URI()+"/in/big.txt" || s.Start != int64(i)<<20 || s.Length != wantLen || s.Index != i {
				t.Errorf("split %d: %+v", i, s)
			}
			if len(s.Hosts) == 0 || !slices.Equal(s.Hosts, hostsAt(locs, s.Start)) {
				t.Errorf("split %d hosts %v, block %d hosts %v", i, s.Hosts, i, locs[i].Hosts)
			}
		}
		got, err := readSplits(t, TextInputFormat{}, env, c, splits)
		if err != nil {
			t.Fatal(err)
		}
		checkLines(t, data, got)
		// Small splits not on block boundaries.
		got, err = readSplits(t, TextInputFormat{}, env, c, cutSplits(splits[0].Path, int64(len(data)), randomCuts(rng, int64(len(data)), 40)))
		if err != nil {
			t.Fatal(err)
		}
		checkLines(t, data, got)
	})

	t.Run("KVFile", func(t *testing.T) {
		recs, data := kvData(t, 3000, 2)
		create("/kv/data", data)
		splits, err := KVFileInputFormat{}.Splits(ctx, env, withSplitSize(c, 100<<10), []string{"/kv"})
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(splits, func(a, b InputSplit) int { return int(a.Start - b.Start) })
		got, err := readSplits(t, KVFileInputFormat{}, env, c, splits)
		if err != nil {
			t.Fatal(err)
		}
		checkRecords(t, recs, got)
	})

	t.Run("Committer", func(t *testing.T) {
		out := "/out"
		runTextJob(t, env, c, out, map[int][]testRecord{0: {{"a", "1"}}, 1: {{"b", "2"}}})
		sts, err := client.List(ctx, out)
		if err != nil {
			t.Fatal(err)
		}
		var names []string
		for _, st := range sts {
			names = append(names, st.Name())
		}
		if want := []string{SuccessFileName, "part-r-00000", "part-r-00001"}; !slices.Equal(names, want) {
			t.Errorf("output %v, want %v", names, want)
		}
		err = TextOutputFormat{}.Check(ctx, env, c, out)
		if !errors.Is(err, os.ErrExist) || err.Error() != "mapreduce: Output directory "+cl.URI()+"/out already exists" {
			t.Errorf("Check of an existing dir: %v", err)
		}
		splits, err := KeyValueTextInputFormat{}.Splits(ctx, env, c, []string{cl.URI() + out})
		if err != nil {
			t.Fatal(err)
		}
		got, err := readSplits(t, KeyValueTextInputFormat{}, env, c, splits)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(got, func(a, b testRecord) int { return strings.Compare(a.key, b.key) })
		if want := []testRecord{{"a", "1"}, {"b", "2"}}; !slices.Equal(got, want) {
			t.Errorf("read back %v, want %v", got, want)
		}
	})
}
