package mapreduce

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/shuffle"
)

// accountingJob is a job of nred reduces over one text file of lines
// distinct random-looking lines, with a 1 MiB sort buffer so that a map
// spills several times.
func accountingJob(t *testing.T, lines, nred int) (*Job, fs.Env, localConfig, string) {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "in.txt")
	var b strings.Builder
	for i := 0; i < lines; i++ {
		fmt.Fprintf(&b, "%08x-%040d\n", (i*2654435761)&0xffffffff, i)
	}
	if err := os.WriteFile(in, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	c := conf.New()
	c.Set("mapreduce.cluster.local.dir", filepath.Join(dir, "local"))
	c.Set("mapreduce.task.io.sort.mb", "1")
	env := fs.Env{Conf: c, User: fs.CurrentUser()}.WithDefaults()
	job := &Job{Name: "accounting", Conf: c, Input: TextInputFormat{}, InputPaths: []string{"file://" + in},
		Output: TextOutputFormat{}, OutputPath: "file://" + filepath.Join(dir, "out"), NumReducers: nred,
		NewMapper: func() Mapper {
			return MapFunc(func(_ *TaskContext, _, v []byte, out Emitter) error { return out.Emit(v, []byte("1")) })
		},
		NewReducer: func() Reducer {
			return ReduceFunc(func(_ *TaskContext, k []byte, vs *Values, out Emitter) error {
				for vs.Next() {
					if err := out.Emit(k, vs.Value()); err != nil {
						return err
					}
				}
				return nil
			})
		},
	}
	lc, err := readLocalConfig(c)
	if err != nil {
		t.Fatal(err)
	}
	return job, env, lc, filepath.Join(dir, "local")
}

func fileSize(t *testing.T, p string) int64 {
	t.Helper()
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	return st.Size()
}

// A map's FILE_BYTES_WRITTEN is its spills plus its output and index
// files, and its FILE_BYTES_READ the spills read back by the merge: their
// difference is exactly what is left on disk.
func TestMapFileCountersMatchDisk(t *testing.T) {
	ctx := context.Background()
	job, env, lc, local := accountingJob(t, 60000, 3)
	splits, err := job.Input.Splits(ctx, env, job.Conf, job.InputPaths)
	if err != nil || len(splits) != 1 {
		t.Fatalf("splits %v, %v", splits, err)
	}
	committer, err := NewCommitter(env, job.Conf, job.OutputPath)
	if err != nil {
		t.Fatal(err)
	}
	if err := committer.SetupJob(ctx); err != nil {
		t.Fatal(err)
	}
	att := &TaskAttempt{JobID: "job_1700000000000_0001", Type: 'm', Task: 0, Env: env, Conf: job.Conf, OutputDir: job.OutputPath}
	jc := NewCounters()
	start := time.Now()
	out, err := runMap(ctx, job, att, splits[0], 3, lc, []string{local}, committer, jc)
	if err != nil {
		t.Fatal(err)
	}
	end := time.Now()
	if n := jc.Get(GroupTask, Spills); n < 3 {
		t.Fatalf("%d spills; the test needs several", n)
	}
	onDisk := fileSize(t, out.Path) + fileSize(t, out.IndexPath)
	w, r := jc.Get(GroupFileSystem, FileBytesWritten), jc.Get(GroupFileSystem, FileBytesRead)
	if r == 0 || w-r != onDisk {
		t.Fatalf("FILE_BYTES_WRITTEN %d − FILE_BYTES_READ %d = %d, want the %d bytes of %s and its index", w, r, w-r, onDisk, out.Path)
	}
	var part int64
	for _, e := range out.Index {
		part += e.PartLength
	}
	if got := jc.Get(GroupTask, MapOutputMaterialized); got != part || part != fileSize(t, out.Path) {
		t.Fatalf("materialized bytes %d, index %d, file %d", got, part, fileSize(t, out.Path))
	}
	if got := jc.Get(GroupTask, SpilledRecords); got <= 60000 || got >= 2*60000 {
		t.Fatalf("spilled records %d, want each record in the merge and all but the last ones collected in a spill", got)
	}
	if mf := att.phases.MapFinish; mf.Before(start) || mf.After(end) {
		t.Fatalf("map finish %v outside the attempt's span %v – %v", mf, start, end)
	}
}

// A local job's attempts come with their counters and ordered phases; a
// reduce's FILE_BYTES_READ is its partition of every map output; the job
// has the process's CPU time.
func TestLocalJobAttemptReports(t *testing.T) {
	job, env, _, _ := accountingJob(t, 30000, 2)
	res, err := RunLocal(context.Background(), job, env, nil)
	if err != nil {
		t.Fatal(err)
	}
	var maps, reduces int
	for _, a := range res.Attempts {
		if a.State != "SUCCEEDED" || a.Start.After(a.Finish) {
			t.Fatalf("attempt %+v", a)
		}
		p := a.PhaseDurations()
		if p == nil {
			t.Fatalf("attempt %s has no phases: %+v", a.ID, a.Phases)
		}
		for _, d := range p {
			if d < 0 {
				t.Fatalf("attempt %s phases out of order: %v", a.ID, p)
			}
		}
		switch a.Type {
		case 'm':
			maps++
		case 'r':
			reduces++
			shuffled := a.Counters.Get(GroupTask, ReduceShuffleBytes)
			if got := a.Counters.Get(GroupFileSystem, FileBytesRead); shuffled == 0 || got != shuffled {
				t.Fatalf("reduce %s read %d local bytes, its map outputs' partitions are %d", a.ID, got, shuffled)
			}
		}
	}
	if maps != 1 || reduces != 2 {
		t.Fatalf("%d map and %d reduce attempts", maps, reduces)
	}
	if res.Counters.Get(GroupTask, CPUMilliseconds) <= 0 {
		t.Fatalf("no CPU time in %v", res.Counters.Map()[GroupTask])
	}
	if got, want := res.Counters.Get(GroupFileSystem, FileBytesWritten), res.Counters.Get(GroupTask, MapOutputMaterialized); got <= want {
		t.Fatalf("FILE_BYTES_WRITTEN %d, want more than the materialized map output %d (spills)", got, want)
	}
}

func TestHadoopName(t *testing.T) {
	for _, c := range [][3]string{
		{GroupFileSystem, FileBytesRead, "FILE_BYTES_READ"},
		{GroupFileSystem, "HDFS: Number of bytes written", "HDFS_BYTES_WRITTEN"},
		{GroupTask, MapOutputMaterialized, "MAP_OUTPUT_MATERIALIZED_BYTES"},
		{GroupTask, CPUMilliseconds, "CPU_MILLISECONDS"},
		{GroupUser, "Map output bytes", "Map output bytes"},
	} {
		if got := HadoopName(c[0], c[1]); got != c[2] {
			t.Errorf("HadoopName(%q, %q) = %q, want %q", c[0], c[1], got, c[2])
		}
	}
	a := AttemptReport{ID: "attempt_local123_0001_r_000002_1"}
	if got := a.Task(); got != "r_000002" {
		t.Errorf("Task() = %q", got)
	}
}

// A reduce's shuffle ends with the last distinct map's output, not at the
// count of fetches (a map fetched twice counts once), and never after the
// sort.
func TestShuffleEnd(t *testing.T) {
	e := newShuffleEnd(3)
	e.fetched(shuffle.MapLocation{MapIndex: 0})
	e.fetched(shuffle.MapLocation{MapIndex: 1})
	e.fetched(shuffle.MapLocation{MapIndex: 1, AttemptID: "rerun"})
	if e.ended.Load() != 0 {
		t.Fatal("the shuffle ended with two of three maps")
	}
	sorted := time.Now().Add(time.Hour)
	if got := e.at(sorted); !got.Equal(sorted) {
		t.Errorf("unfinished shuffle ends %v, want the sort's end", got)
	}
	e.fetched(shuffle.MapLocation{MapIndex: 2})
	if got := e.at(sorted); got.IsZero() || !got.Before(sorted) {
		t.Errorf("shuffle ends %v", got)
	}
	if early := time.Now().Add(-time.Hour); !e.at(early).Equal(early) {
		t.Errorf("the shuffle ends after the sort")
	}
}
