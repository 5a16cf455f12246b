package jobtracker

import (
	"context"
	"os"
	"path/filepath"
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
