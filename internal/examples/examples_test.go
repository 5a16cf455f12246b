package examples

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	_ "github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/testcluster"
	"github.com/stratafs/strata/mapreduce"
)

// tinyConf forces many spills (1 MiB sort buffer) and multi-pass merges
// (factor 3) on small inputs.
func tinyConf(t *testing.T, compress bool) *conf.Configuration {
	c := conf.New()
	c.Set("mapreduce.cluster.local.dir", t.TempDir())
	c.Set("mapreduce.task.io.sort.mb", "1")
	c.Set("mapreduce.task.io.sort.factor", "3")
	c.Set("mapreduce.job.reduces", "3")
	c.Set("mapreduce.input.fileinputformat.split.maxsize", "1048576")
	if compress {
		c.Set("mapreduce.map.output.compress", "true")
		c.Set("mapreduce.map.output.compress.codec", "zstd")
	}
	return c
}

// writeWords writes files of random words and returns the true counts.
func writeWords(t *testing.T, dir string, files, lines int) map[string]int {
	counts := map[string]int{}
	rng := rand.New(rand.NewPCG(7, 8))
	for f := 0; f < files; f++ {
		var b strings.Builder
		for l := 0; l < lines; l++ {
			n := rng.IntN(12)
			for i := 0; i < n; i++ {
				w := words[rng.IntN(len(words))]
				if rng.IntN(50) == 0 {
					w = strings.ToUpper(w) // a second spelling
				}
				counts[w]++
				b.WriteString(w)
				b.WriteString([]string{" ", "\t", "  ", "\r"}[rng.IntN(4)])
			}
			b.WriteString("\n")
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("in%d.txt", f)), []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return counts
}

// readTextOutput reads every part file of a text output dir as
// key\tvalue lines, checking each part is sorted by key.
func readTextOutput(t *testing.T, fsys fs.FileSystem, dir string) [][2]string {
	t.Helper()
	ctx := context.Background()
	if _, err := fsys.Stat(ctx, dir+"/_SUCCESS"); err != nil {
		t.Fatalf("no _SUCCESS in %s: %v", dir, err)
	}
	entries, err := fsys.List(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "part-") {
			if e.Name() != "_SUCCESS" {
				t.Errorf("unexpected file %s in the output", e.Name())
			}
			continue
		}
		f, err := fsys.Open(ctx, e.Path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		prev := ""
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), "\t")
			if k < prev {
				t.Fatalf("%s not sorted: %q after %q", e.Path, k, prev)
			}
			prev = k
			out = append(out, [2]string{k, v})
		}
		f.Close()
	}
	return out
}

func localEnv(c *conf.Configuration) fs.Env {
	return fs.Env{Conf: c, User: fs.CurrentUser()}
}

func TestWordCountLocal(t *testing.T) {
	for _, compress := range []bool{false, true} {
		t.Run(fmt.Sprintf("compress=%v", compress), func(t *testing.T) {
			in, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
			want := writeWords(t, in, 3, 40000)
			c := tinyConf(t, compress)
			var log bytes.Buffer
			res, err := runJob(context.Background(), localEnv(c), &log, "wordcount", []string{"file://" + in, "file://" + out})
			if err != nil {
				t.Fatalf("%v\n%s", err, log.String())
			}
			if s := res.Counters.Get(mapreduce.GroupTask, mapreduce.Spills); s < 10 {
				t.Errorf("only %d spills: the test should force many", s)
			}
			if res.Counters.Get(mapreduce.GroupTask, mapreduce.CombineInputRecords) == 0 {
				t.Error("combiner did not run")
			}
			local, _ := fs.Get(context.Background(), "file:///", localEnv(c))
			got := map[string]int{}
			for _, kv := range readTextOutput(t, local, out) {
				n, err := strconv.Atoi(kv[1])
				if err != nil {
					t.Fatal(err)
				}
				if _, dup := got[kv[0]]; dup {
					t.Fatalf("word %q in two output records", kv[0])
				}
				got[kv[0]] = n
			}
			if len(got) != len(want) {
				t.Fatalf("%d words, want %d", len(got), len(want))
			}
			for w, n := range want {
				if got[w] != n {
					t.Fatalf("count of %q = %d, want %d", w, got[w], n)
				}
			}
			if !strings.Contains(log.String(), "map 100% reduce 100%") || !strings.Contains(log.String(), "Map input records=") {
				t.Errorf("console output lacks progress or counters:\n%s", log.String())
			}
		})
	}
}

func TestGrepLocal(t *testing.T) {
	in, out := t.TempDir(), filepath.Join(t.TempDir(), "out")
	writeWords(t, in, 2, 20000)
	re := regexp.MustCompile(`b[aeiou]+`)
	want := map[string]int{}
	ents, _ := os.ReadDir(in)
	for _, e := range ents {
		b, _ := os.ReadFile(filepath.Join(in, e.Name()))
		for _, m := range re.FindAll(b, -1) {
			want[string(m)]++
		}
	}
	c := tinyConf(t, false)
	cmd, _ := Lookup("grep")
	var log bytes.Buffer
	if err := cmd.Run(context.Background(), localEnv(c), []string{"file://" + in, "file://" + out, re.String()}, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	b, err := os.ReadFile(filepath.Join(out, "part-r-00000"))
	if err != nil {
		t.Fatal(err)
	}
	type mc struct {
		m string
		n int
	}
	var exp []mc
	for m, n := range want {
		exp = append(exp, mc{m, n})
	}
	sort.Slice(exp, func(i, j int) bool {
		if exp[i].n != exp[j].n {
			return exp[i].n > exp[j].n
		}
		return exp[i].m < exp[j].m
	})
	var wantOut strings.Builder
	for _, e := range exp {
		fmt.Fprintf(&wantOut, "%d\t%s\n", e.n, e.m)
	}
	if string(b) != wantOut.String() {
		t.Fatalf("grep output differs:\n%.500s\nwant:\n%.500s", b, wantOut.String())
	}
	if ents, _ := os.ReadDir(filepath.Dir(out)); len(ents) != 1 {
		t.Errorf("grep left temporary directories: %v", ents)
	}
}

// readKV reads every record of a KV-file output directory.
func readKV(t *testing.T, c *conf.Configuration, dir string) (parts [][][2][]byte) {
	t.Helper()
	env := localEnv(c)
	ctx := context.Background()
	fsys, p, err := fs.Resolve(ctx, dir, env)
	if err != nil {
		t.Fatal(err)
	}
	entries, _ := fsys.List(ctx, p)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "part-") {
			continue
		}
		var recs [][2][]byte
		in := mapreduce.KVFileInputFormat{}
		splits, err := in.Splits(ctx, env, c, []string{fs.Qualify(fsys, e.Path)})
		if err != nil {
			t.Fatal(err)
		}
		sort.Slice(splits, func(i, j int) bool { return splits[i].Start < splits[j].Start })
		for _, s := range splits {
			rr, err := in.Open(ctx, env, c, s)
			if err != nil {
				t.Fatal(err)
			}
			for rr.Next() {
				recs = append(recs, [2][]byte{bytes.Clone(rr.Key()), bytes.Clone(rr.Value())})
			}
			if err := rr.Err(); err != nil {
				t.Fatal(err)
			}
			rr.Close()
		}
		parts = append(parts, recs)
	}
	return parts
}

func TestRandomTextWriterThenSort(t *testing.T) {
	c := tinyConf(t, true)
	c.Set("mapreduce.randomtextwriter.totalbytes", "3000000")
	c.Set("mapreduce.randomtextwriter.bytespermap", "1000000")
	dir := t.TempDir()
	gen, sorted := "file://"+dir+"/gen", "file://"+dir+"/sorted"
	var log bytes.Buffer
	if _, err := runJob(context.Background(), localEnv(c), &log, "randomtextwriter", []string{gen}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	if _, err := runJob(context.Background(), localEnv(c), &log, "sort", []string{gen, sorted}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	var in, out [][2][]byte
	for _, p := range readKV(t, c, gen) {
		in = append(in, p...)
	}
	for _, p := range readKV(t, c, sorted) {
		for i := 1; i < len(p); i++ {
			if bytes.Compare(p[i-1][0], p[i][0]) > 0 {
				t.Fatal("sort output part not sorted")
			}
		}
		out = append(out, p...)
	}
	if len(in) == 0 || len(in) != len(out) {
		t.Fatalf("%d records in, %d out", len(in), len(out))
	}
	// Same multiset of records.
	key := func(r [2][]byte) string { return string(r[0]) + "\x00" + string(r[1]) }
	count := map[string]int{}
	for _, r := range in {
		count[key(r)]++
		nk, nv := len(strings.Fields(string(r[0]))), len(strings.Fields(string(r[1])))
		if nk < 5 || nk > 9 || nv < 10 || nv > 99 {
			t.Fatalf("record with %d key words, %d value words", nk, nv)
		}
	}
	for _, r := range out {
		count[key(r)]--
	}
	for k, n := range count {
		if n != 0 {
			t.Fatalf("record %.40q count off by %d", k, n)
		}
	}
}

// TestWordCountOnCluster runs wordcount with input and output on HDFS.
func TestWordCountOnCluster(t *testing.T) {
	cl := testcluster.New(t, testcluster.Config{DataNodes: 3})
	c := tinyConf(t, false)
	c.Set("fs.defaultFS", cl.URI())
	env := fs.Env{Conf: c, User: cl.Superuser()}
	local := t.TempDir()
	want := writeWords(t, local, 2, 20000)
	client := cl.Client(cl.Superuser())
	ctx := context.Background()
	for _, name := range []string{"in0.txt", "in1.txt"} {
		data, _ := os.ReadFile(filepath.Join(local, name))
		w, err := client.CreateFile(ctx, "/wc/in/"+name, fs.CreateOptions{CreateParent: true, BlockSize: 1 << 20, Replication: 2})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(data)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var log bytes.Buffer
	if _, err := runJob(ctx, env, &log, "wordcount", []string{"/wc/in", "/wc/out"}); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	got := map[string]int{}
	for _, kv := range readTextOutput(t, client, "/wc/out") {
		n, _ := strconv.Atoi(kv[1])
		got[kv[0]] = n
	}
	if len(got) != len(want) {
		t.Fatalf("%d words, want %d", len(got), len(want))
	}
	for w, n := range want {
		if got[w] != n {
			t.Fatalf("count of %q = %d, want %d", w, got[w], n)
		}
	}
}

var _ = io.Discard
