package jobtracker

import (
	"context"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/mapreduce"
)

// oldHistory is a history file as the JobTracker wrote it before the
// protocol's states were typed: it must still read.
const oldHistory = `{
 "jobId": "job_1700000000000_0001",
 "name": "wordcount",
 "user": "alice",
 "state": "FAILED",
 "error": "task m_000001 failed 4 times; last error: boom",
 "submitTime": "2026-11-30T10:00:00Z",
 "finishTime": "2026-11-30T10:01:30.5Z",
 "counters": {"Job Counters": {"Launched map tasks": 5}},
 "tasks": [
  {"task": "m_000000", "state": "SUCCEEDED", "attempts": 1, "failures": 0, "tracker": "tracker_h1:50060"},
  {"task": "m_000001", "state": "FAILED", "attempts": 4, "failures": 4, "lastError": "boom"},
  {"task": "r_000000", "state": "KILLED", "attempts": 0, "failures": 0}
 ]
}
`

// TestHistoryCompatible: a history written by an earlier version reads
// field for field, and one written now reads back as written, with the
// state names strata job -history printed before.
func TestHistoryCompatible(t *testing.T) {
	dir := t.TempDir()
	c := conf.New()
	c.Set("mapreduce.jobhistory.done-dir", dir)
	env := fs.Env{Conf: c}.WithDefaults()
	if err := os.WriteFile(filepath.Join(dir, "job_1700000000000_0001.json"), []byte(oldHistory), 0o644); err != nil {
		t.Fatal(err)
	}
	h, err := ReadHistory(context.Background(), env, "job_1700000000000_0001")
	if err != nil {
		t.Fatal(err)
	}
	if h.State != "FAILED" || h.User != "alice" || len(h.Tasks) != 3 || h.Tasks[1].Failures != 4 || h.Tasks[0].Tracker != "tracker_h1:50060" ||
		h.Counters["Job Counters"]["Launched map tasks"] != 5 || h.Finish.Sub(h.Submit) != 90500*time.Millisecond {
		t.Fatalf("old history read as %+v", h)
	}

	jt := New(Config{HistoryDir: dir})
	j := &job{id: "job_1_0002", name: "sort", user: "bob", state: mrpb.JobState_KILLED, err: "killed by bob", counters: mapreduce.NewCounters(),
		start: time.Unix(100, 0), finish: time.Unix(200, 0), settings: map[string]string{"mapreduce.jobhistory.done-dir": "/elsewhere"},
		maps:    []*task{{isMap: true, index: 0, state: done, attempts: 1, tracker: "tt-a"}, {isMap: true, index: 1, state: running, attempts: 2, failures: 1}},
		reduces: []*task{{index: 0, state: pending}}}
	jt.writeHistory(jt.history(j)) // in the JobTracker's dir, not the job's
	h, err = ReadHistory(context.Background(), env, "job_1_0002")
	if err != nil {
		t.Fatal(err)
	}
	want := []TaskHistory{{Task: "m_000000", State: "SUCCEEDED", Attempts: 1, Tracker: "tt-a"},
		{Task: "m_000001", State: "FAILED", Attempts: 2, Failures: 1}, {Task: "r_000000", State: "KILLED"}}
	if h.State != "KILLED" || h.Error != "killed by bob" || len(h.Tasks) != len(want) {
		t.Fatalf("history %+v", h)
	}
	for i := range want {
		if h.Tasks[i] != want[i] {
			t.Errorf("task %d: %+v, want %+v", i, h.Tasks[i], want[i])
		}
	}
}

// countingFS counts the files opened through it.
type countingFS struct {
	fs.FileSystem
	opens *atomic.Int32
}

func (c countingFS) Open(ctx context.Context, p string) (fs.File, error) {
	c.opens.Add(1)
	return c.FileSystem.Open(ctx, p)
}

// TestHistoryViewCache: the history page shares one file system client
// over views and reads only the history files that are new or changed.
func TestHistoryViewCache(t *testing.T) {
	h := newHarness(t)
	var resolves, opens atomic.Int32
	h.jt.ui.hist.open = func(ctx context.Context, dir string, env fs.Env) (fs.FileSystem, string, error) {
		resolves.Add(1)
		fsys, p, err := fs.Resolve(ctx, dir, env)
		return countingFS{fsys, &opens}, p, err
	}
	start := h.clk.now()
	for _, id := range []string{"job_1_0001", "job_1_0002", "job_1_0003"} {
		h.jt.writeHistory(&History{JobID: id, User: "carol", State: "SUCCEEDED", Submit: start, Finish: start})
	}
	list := func() []*History {
		var hs []*History
		var more bool
		if err := h.jt.listHistories(context.Background(), &hs, &more); err != nil {
			t.Fatal(err)
		}
		return hs
	}
	if hs := list(); len(hs) != 3 || hs[0].JobID != "job_1_0003" {
		t.Fatalf("histories %v", hs)
	}
	list()
	if resolves.Load() != 1 || opens.Load() != 3 {
		t.Errorf("two views: %d clients, %d files read; want 1 and 3", resolves.Load(), opens.Load())
	}
	h.jt.writeHistory(&History{JobID: "job_1_0002", User: "carol", State: "FAILED", Submit: start, Finish: start})
	later := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(h.jt.cfg.HistoryDir, "job_1_0002.json"), later, later)
	hs := list()
	if opens.Load() != 4 || hs[1].State != "FAILED" {
		t.Errorf("after one history changed: %d files read (want 4), state %s", opens.Load(), hs[1].State)
	}
}
