package tasktracker

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/procstat"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/mapreduce"
)

// A reaped child's span and rusage go into its report; a successful
// attempt's counters get CPU_MILLISECONDS, its split and the peak RSS, a
// failed one's report only the usage.
func TestAccount(t *testing.T) {
	start := time.UnixMilli(1_700_000_000_000)
	u := procstat.Usage{CPU: procstat.CPU{User: 1500 * time.Millisecond, System: 250 * time.Millisecond}, MaxRSS: 64 << 20, WriteBytes: 4096}
	ok := &mrpb.TaskReport{State: mrpb.TaskReport_SUCCEEDED.Enum(), Result: &mrpb.TaskResult{}}
	account(ok, mrpb.TaskType_REDUCE, start, start.Add(3*time.Second), u)
	if ok.GetStartMs() != start.UnixMilli() || ok.GetFinishMs() != start.UnixMilli()+3000 || ok.GetUsage().GetUserUs() != 1_500_000 || ok.GetUsage().GetSystemUs() != 250_000 {
		t.Fatalf("report %v", ok)
	}
	got := map[string]int64{}
	for _, c := range ok.GetResult().GetCounters() {
		got[c.GetName()] = c.GetValue()
	}
	if got[mapreduce.CPUMilliseconds] != 1750 || got[mapreduce.CPUUserMilliseconds] != 1500 || got[mapreduce.CPUSystemMilliseconds] != 250 ||
		got[mapreduce.PeakReduceRSS] != 64<<20 || got[mapreduce.BlockWriteBytes] != 4096 {
		t.Errorf("counters %v", got)
	}
	bad := &mrpb.TaskReport{State: mrpb.TaskReport_FAILED.Enum(), Result: &mrpb.TaskResult{Error: proto.String("x")}}
	account(bad, mrpb.TaskType_MAP, start, start, u)
	if len(bad.GetResult().GetCounters()) != 0 || bad.GetUsage().GetMaxRssBytes() != 64<<20 {
		t.Errorf("failed report %v", bad)
	}
}

// The intermediate space is what the attempts' directories hold, not the
// logs or the job's program; the peak stays after the files go, until reset.
func TestIntermediateSpace(t *testing.T) {
	dirs := []string{t.TempDir(), t.TempDir()}
	write := func(p string, n int) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, n), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	spill := filepath.Join(dirs[0], "taskTracker", "job_1", "attempt_1_m_000000_0", "file.out")
	write(spill, 1<<20)
	write(filepath.Join(dirs[1], "taskTracker", "job_1", "attempt_1_r_000000_0", "map_0.out"), 256<<10)
	write(filepath.Join(dirs[0], "userlogs", "job_1", "attempt_1_m_000000_0.stderr"), 1<<20)
	write(filepath.Join(dirs[0], "taskTracker", "job_1", "job.bin"), 1<<20) // the job's program
	if got := diskUsage(dirs); got < (1<<20)+(256<<10) || got > (1<<20)+(256<<10)+64<<10 {
		t.Fatalf("diskUsage %d, want about 1.25 MiB", got)
	}
	tt, err := New(Config{LocalDirs: dirs, JobTracker: "127.0.0.1:1", MapSlots: 1, ReduceSlots: 1, HTTPAddr: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	go tt.measureIntermediate()
	defer tt.cancel()
	waitUntil := func(what string, f func() bool) {
		t.Helper()
		for end := time.Now().Add(10 * time.Second); !f(); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(end) {
				t.Fatal(what)
			}
		}
	}
	waitUntil("no measurement", func() bool { _, p := tt.IntermediateBytes(); return p >= 1<<20 })
	os.Remove(spill)
	waitUntil("the spill's removal not seen", func() bool { n, _ := tt.IntermediateBytes(); return n < 1<<20 })
	if _, p := tt.IntermediateBytes(); p < 1<<20 {
		t.Errorf("peak %d forgot the spill", p)
	}
	tt.ResetIntermediatePeak()
	if n, p := tt.IntermediateBytes(); p != n {
		t.Errorf("after reset: now %d, peak %d", n, p)
	}
}
