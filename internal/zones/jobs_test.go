package zones

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	_ "github.com/stratafs/strata/hdfs"
	"github.com/stratafs/strata/internal/testcluster"
)

// jobConf makes small inputs take the paths big ones do: several splits
// per file, several spills per map (1 MiB sort buffer), multi-pass merges
// and three reducers.
func jobConf(t *testing.T) *conf.Configuration {
	c := conf.New()
	c.Set("mapreduce.cluster.local.dir", t.TempDir())
	c.Set("mapreduce.task.io.sort.mb", "1")
	c.Set("mapreduce.task.io.sort.factor", "3")
	c.Set("mapreduce.job.reduces", "3")
	c.Set("mapreduce.input.fileinputformat.split.maxsize", "10000")
	return c
}

// encode returns objs as catalogue files: binary records or text lines.
func encode(objs []Object, files int, text bool) [][]byte {
	out := make([][]byte, files)
	for i, o := range objs {
		f := i % files
		if text {
			out[f] = append(AppendText(out[f], o), '\n')
		} else {
			out[f] = AppendRecord(out[f], o)
		}
	}
	return out
}

// writeLocal writes the catalogue under a new directory and returns its URI.
func writeLocal(t *testing.T, objs []Object, text bool) string {
	dir := t.TempDir()
	for i, b := range encode(objs, 3, text) {
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("part-m-%05d", i)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return "file://" + dir
}

// readLines returns the lines of every part file of an output directory,
// which must have a _SUCCESS marker.
func readLines(t *testing.T, env fs.Env, dir string) []string {
	t.Helper()
	ctx := context.Background()
	fsys, p, err := fs.Resolve(ctx, dir, env)
	if err != nil {
		t.Fatal(err)
	}
	defer fsys.Close()
	if _, err := fsys.Stat(ctx, p+"/_SUCCESS"); err != nil {
		t.Fatalf("no _SUCCESS in %s: %v", dir, err)
	}
	entries, err := fsys.List(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "part-") {
			continue
		}
		f, err := fsys.Open(ctx, e.Path)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		f.Close()
		if err := sc.Err(); err != nil {
			t.Fatal(err)
		}
	}
	return lines
}

// checkNeighbors compares neighbors' output with the brute-force pairs.
func checkNeighbors(t *testing.T, lines []string, objs []Object, theta float64) {
	t.Helper()
	want := bruteSet(objs, theta)
	got := map[pairKey]float64{}
	for _, l := range lines {
		f := strings.Fields(l)
		if len(f) != 3 {
			t.Fatalf("output line %q", l)
		}
		a, err1 := strconv.ParseUint(f[0], 10, 64)
		b, err2 := strconv.ParseUint(f[1], 10, 64)
		d, err3 := strconv.ParseFloat(f[2], 64)
		if err := errors.Join(err1, err2, err3); err != nil || a >= b {
			t.Fatalf("output line %q: %v (id1 < id2 expected)", l, err)
		}
		k := pairKey{a, b}
		if _, dup := got[k]; dup {
			t.Fatalf("pair %v written twice", k)
		}
		got[k] = d
		if w, ok := want[k]; ok && math.Abs(Distance(w)-d) > 6e-7 {
			t.Errorf("pair %v at %.6f″, want %.7f″", k, d, Distance(w))
		}
	}
	comparePairs(t, got, want)
}

// checkStats compares neighborstats' output with the brute-force
// histogram.
func checkStats(t *testing.T, lines []string, objs []Object, maxTheta float64) {
	t.Helper()
	want := NewHistogram(maxTheta * 3600)
	BruteForce(objs, maxTheta, func(a, b Object, d float64) { want.Add(d) })
	var wantLines []string
	for i, n := range want {
		wantLines = append(wantLines, string(AppendBin(nil, min(float64(i+1), maxTheta*3600), n)))
	}
	if strings.Join(lines, "\n") != strings.Join(wantLines, "\n") {
		t.Errorf("histogram:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(wantLines, "\n"))
	}
}

// TestJobsLocal runs neighbors and neighborstats in local mode and holds
// their output to the brute-force pairs and histogram.
func TestJobsLocal(t *testing.T) {
	for _, tc := range []struct {
		name          string
		clustered     bool
		text          bool
		theta         float64 // arcseconds
		block, zone   string
		wantBlocksMin int64
	}{
		{name: "uniform/60″/small blocks", theta: 60, block: "0.05", wantBlocksMin: 30},
		{name: "clustered/10″/chosen blocks", clustered: true, theta: 10, wantBlocksMin: 4},
		{name: "clustered/text/1800″/blocks 2° and zones 600″", clustered: true, text: true, theta: 1800, block: "2", zone: "600", wantBlocksMin: 30},
	} {
		t.Run(tc.name, func(t *testing.T) {
			theta := tc.theta * arcsec
			objs := fixture(800, tc.clustered, theta, 11)
			in := writeLocal(t, objs, tc.text)
			out := t.TempDir()
			c := jobConf(t)
			c.Set(KeyTheta, strconv.FormatFloat(tc.theta, 'g', -1, 64))
			c.Set(KeyMaxTheta, strconv.FormatFloat(tc.theta, 'g', -1, 64))
			if tc.block != "" {
				c.Set(KeyBlockHeight, tc.block)
			}
			if tc.zone != "" {
				c.Set(KeyZoneHeight, tc.zone)
			}
			if tc.text {
				c.Set(KeyInputFormat, "text")
			}
			env := fs.Env{Conf: c, User: fs.CurrentUser()}
			var log bytes.Buffer
			if err := RunNeighbors(context.Background(), env, []string{in, "file://" + out + "/pairs"}, &log); err != nil {
				t.Fatalf("%v\n%s", err, log.String())
			}
			checkNeighbors(t, readLines(t, env, "file://"+out+"/pairs"), objs, theta)
			for _, s := range []string{"INFO zones: θ = ", "spills per map", "Work: ", "Energy: not estimated", "Border copies="} {
				if !strings.Contains(log.String(), s) {
					t.Errorf("console output lacks %q:\n%s", s, log.String())
				}
			}
			if n := blocksCounter(log.String()); n < tc.wantBlocksMin {
				t.Errorf("%d blocks with objects, want at least %d", n, tc.wantBlocksMin)
			}
			log.Reset()
			if err := RunNeighborStats(context.Background(), env, []string{in, "file://" + out + "/stats"}, &log); err != nil {
				t.Fatalf("%v\n%s", err, log.String())
			}
			checkStats(t, readLines(t, env, "file://"+out+"/stats"), objs, theta)
			if ents, _ := os.ReadDir(out); len(ents) != 2 {
				t.Errorf("output dir holds %d entries (temporary directory left?)", len(ents))
			}
		})
	}
}

// blocksCounter reads the Blocks counter from a job's console output.
func blocksCounter(log string) int64 {
	i := strings.Index(log, CounterBlocks+"=")
	if i < 0 {
		return -1
	}
	n, _ := strconv.ParseInt(strings.Fields(log[i+len(CounterBlocks)+1:])[0], 10, 64)
	return n
}

// TestJobsOnCluster runs skygen, neighbors and neighborstats with their
// data on an in-process HDFS cluster.
func TestJobsOnCluster(t *testing.T) {
	cl := testcluster.New(t, testcluster.Config{DataNodes: 3})
	c := jobConf(t)
	c.Set("fs.defaultFS", cl.URI())
	c.Set(KeyTheta, "60")
	c.Set(KeyMaxTheta, "60")
	c.Set(KeyBlockHeight, "0.1")
	c.Set(KeyBlockWidth, "0.3")
	env := fs.Env{Conf: c, User: cl.Superuser()}
	ctx := context.Background()
	client := cl.Client(cl.Superuser())
	objs := fixture(600, true, 60*arcsec, 5)
	for i, b := range encode(objs, 2, false) {
		w, err := client.CreateFile(ctx, fmt.Sprintf("/sky/in/part-%d", i), fs.CreateOptions{CreateParent: true, BlockSize: 1 << 20, Replication: 2})
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	var log bytes.Buffer
	if err := RunNeighbors(ctx, env, []string{"/sky/in", "/sky/pairs"}, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	checkNeighbors(t, readLines(t, env, "/sky/pairs"), objs, 60*arcsec)
	if err := RunNeighborStats(ctx, env, []string{"/sky/in", "/sky/stats"}, &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	checkStats(t, readLines(t, env, "/sky/stats"), objs, 60*arcsec)
	ents, err := client.List(ctx, "/sky")
	if err != nil || len(ents) != 3 {
		t.Errorf("/sky holds %d entries (%v), want in, pairs and stats", len(ents), err)
	}
}

// TestSkyGen checks skygen's output is the generator's catalogue, the
// same in binary and text, and that a clustered catalogue has the
// small-scale excess of pairs a uniform one lacks.
func TestSkyGen(t *testing.T) {
	const n = 20000
	c := jobConf(t)
	c.Set("mapreduce.job.maps", "3")
	c.Set(KeySkyGenSeed, "9")
	env := fs.Env{Conf: c, User: fs.CurrentUser()}
	dir := t.TempDir()
	var log bytes.Buffer
	read := func(sub string, text bool) []Object {
		t.Helper()
		var objs []Object
		ents, err := os.ReadDir(filepath.Join(dir, sub))
		if err != nil {
			t.Fatal(err)
		}
		parts := 0
		for _, e := range ents {
			if !strings.HasPrefix(e.Name(), "part-m-") {
				continue
			}
			parts++
			b, err := os.ReadFile(filepath.Join(dir, sub, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			for len(b) > 0 {
				var o Object
				if text {
					line, rest, _ := bytes.Cut(b, []byte("\n"))
					o, err = ParseText(line)
					b = rest
				} else {
					o, err = DecodeRecord(b[:RecordSize])
					b = b[RecordSize:]
				}
				if err != nil {
					t.Fatal(err)
				}
				objs = append(objs, o)
			}
		}
		if parts != 3 {
			t.Errorf("%d part files, want one per map (3)", parts)
		}
		sort.Slice(objs, func(i, j int) bool { return objs[i].ID < objs[j].ID })
		return objs
	}
	run := func(sub string) {
		t.Helper()
		if err := RunSkyGen(context.Background(), env, []string{strconv.Itoa(n), "file://" + filepath.Join(dir, sub)}, &log); err != nil {
			t.Fatalf("%v\n%s", err, log.String())
		}
	}
	run("uniform")
	c.Set(KeySkyGenFormat, "text")
	run("text")
	c.Set(KeySkyGenFormat, "binary")
	c.Set(KeySkyGenDistribution, "clustered")
	run("clustered")
	uni, txt, clu := read("uniform", false), read("text", true), read("clustered", false)
	want := catalogue(SkyGen{Seed: 9}, n)
	for i := range uni {
		if uni[i] != want[i] || txt[i] != want[i] {
			t.Fatalf("object %d: binary %+v, text %+v, want %+v", i, uni[i], txt[i], want[i])
		}
	}
	if len(uni) != n || len(clu) != n {
		t.Fatalf("%d and %d objects, want %d", len(uni), len(clu), n)
	}
	count := func(objs []Object) (pairs int) {
		g, err := NewGeometry(10*arcsec, 1, 1, 10*arcsec)
		if err != nil {
			t.Fatal(err)
		}
		g.Search(objs, func(a, b Object, d float64) error { pairs++; return nil })
		return pairs
	}
	// 20000 uniform objects have 0.0006 expected pairs within 10″; with
	// 200 clusters of ~50 objects scattered by 3″, thousands.
	if u, cl := count(uni), count(clu); u > 2 || cl < 1000 {
		t.Errorf("pairs within 10″: uniform %d, clustered %d", u, cl)
	}
	if !strings.Contains(log.String(), fmt.Sprintf("Work: %d objects written", n)) {
		t.Errorf("no work line:\n%s", log.String())
	}
}

// TestBadInput checks that bad catalogues and settings fail with errors
// that say what is wrong.
func TestBadInput(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name, want string
		data       []byte
		set        map[string]string
	}{
		{name: "off the sphere", data: AppendRecord(AppendRecord(nil, Object{ID: 1}), Object{ID: 7, RA: 10, Dec: 91}), want: "object 7 at ra 10, dec 91 is off the sphere"},
		{name: "partial record", data: AppendRecord(nil, Object{ID: 1})[:30], want: "partial record"},
		{name: "bad text", data: []byte("1 2 3\nx y\n"), set: map[string]string{KeyInputFormat: "text"}, want: `"x y": want "id ra dec"`},
		{name: "bad theta", data: AppendRecord(nil, Object{}), set: map[string]string{KeyTheta: "0"}, want: "θ = 0″ is out of range"},
		{name: "bad format", data: AppendRecord(nil, Object{}), set: map[string]string{KeyInputFormat: "csv"}, want: `zones.input.format="csv"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "cat"), tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			c := jobConf(t)
			c.Set("mapreduce.map.maxattempts", "1")
			for k, v := range tc.set {
				c.Set(k, v)
			}
			err := RunNeighbors(ctx, fs.Env{Conf: c, User: fs.CurrentUser()}, []string{"file://" + dir + "/cat", "file://" + dir + "/out"}, io.Discard)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
