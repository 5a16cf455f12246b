package tasktracker

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/procstat"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/taskrun"
)

// The test binary is also the task child of the tests that start real
// children: run as "<test binary> task" it serves attempts with
// testChildRunner. With oldChildEnv set it behaves as a program built
// before task reuse: one attempt, its spec read to the end of its input.
const oldChildEnv = "STRATA_TEST_OLD_CHILD"

func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == "task" {
		taskrun.SetRunner(testChildRunner)
		if os.Getenv(oldChildEnv) != "" {
			os.Unsetenv(taskrun.ReuseEnv)
		}
		os.Exit(taskrun.Main(context.Background(), os.Stdin, os.Stdout))
	}
	os.Exit(m.Run())
}

// testChildRunner: every attempt says its id on stderr and reports the
// child's pid as a counter; job "fail" fails, job "spin" uses CPU first.
func testChildRunner(ctx context.Context, spec *mrpb.TaskSpec, link *taskrun.Link) (*mrpb.TaskResult, error) {
	fmt.Fprintf(os.Stderr, "stderr of %s_%d\n", spec.GetJobId(), spec.GetTask())
	switch spec.GetJob() {
	case "fail":
		return nil, errors.New("the attempt failed")
	case "spin":
		spinCPU(50 * time.Millisecond)
	case "scratch":
		// Leaves a file in its temporary directory, as a killed
		// streaming command leaves its working directory.
		f, err := os.CreateTemp("", "left-")
		if err != nil {
			return nil, err
		}
		f.Close()
		fmt.Fprintf(os.Stderr, "left %s\n", f.Name())
	}
	return &mrpb.TaskResult{Counters: []*mrpb.Counter{{Group: proto.String("test"), Name: proto.String("pid"), Value: proto.Int64(int64(os.Getpid()))}}}, nil
}

// spinCPU uses d of this process's CPU time, however loaded the machine.
func spinCPU(d time.Duration) {
	start, _ := procstat.Self()
	for {
		now, _ := procstat.Self()
		if now.Total()-start.Total() >= d {
			return
		}
	}
}

// childTracker is a TaskTracker, never started, whose children are this
// test binary.
func childTracker(t *testing.T) *TaskTracker {
	cfg := testConfig(t)
	cfg.Executable = os.Args[0]
	cfg.MapSlots, cfg.ReduceSlots = 1, 1
	tt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tt.Close() })
	return tt
}

// runMap runs map task n of job as the heartbeat would launch it (taking
// a slot, giving it back) and returns the report and the pid of the child
// that ran it.
func runMap(t *testing.T, tt *TaskTracker, job string, n int, name, reuse string) (*mrpb.TaskReport, int64) {
	t.Helper()
	id := fmt.Sprintf("attempt_%s_m_%06d_0", strings.TrimPrefix(job, "job_"), n)
	a := &attempt{id: id, job: job, isMap: true, cancel: func() {}, progress: make(chan struct{}, 1)}
	spec := &mrpb.TaskSpec{Job: proto.String(name), JobId: proto.String(job), Type: mrpb.TaskType_MAP.Enum(), Task: proto.Int32(int32(n)),
		Conf: map[string]string{"mapreduce.job.jvm.numtasks": reuse}}
	tt.mu.Lock()
	tt.freeMaps--
	tt.mu.Unlock()
	rep := tt.run(context.Background(), a, spec)
	tt.mu.Lock()
	tt.freeMaps++
	tt.mu.Unlock()
	var pid int64
	for _, c := range rep.GetResult().GetCounters() {
		if c.GetName() == "pid" {
			pid = c.GetValue()
		}
	}
	return rep, pid
}

// TestTaskReuse: with mapreduce.job.jvm.numtasks a child runs that many
// attempts of its job in turn (-1: any number, 1: one), each attempt with
// its own stderr file and its own accounted usage; a failed attempt's
// child is not used again; the job's end retires its idle child.
func TestTaskReuse(t *testing.T) {
	for _, tc := range []struct {
		reuse string
		pids  []int // which child ran each attempt, by first appearance
	}{
		{"1", []int{0, 1, 2, 3}},
		{"2", []int{0, 0, 1, 1}},
		{"-1", []int{0, 0, 0, 0}},
	} {
		t.Run(tc.reuse, func(t *testing.T) {
			tt := childTracker(t)
			job := "job_1_0001"
			seen := map[int64]int{}
			for n := range tc.pids {
				rep, pid := runMap(t, tt, job, n, "spin", tc.reuse)
				if rep.GetState() != mrpb.TaskReport_SUCCEEDED || pid == 0 {
					t.Fatalf("attempt %d: %v", n, rep)
				}
				if _, ok := seen[pid]; !ok {
					seen[pid] = len(seen)
				}
				if seen[pid] != tc.pids[n] {
					t.Errorf("attempt %d ran in child %d, want child %d", n, seen[pid], tc.pids[n])
				}
				// Its own CPU, not the child's since it started.
				if u := rep.GetUsage(); u.GetUserUs()+u.GetSystemUs() < 30_000 || u.GetUserUs()+u.GetSystemUs() > 2_000_000 || u.GetMaxRssBytes() <= 0 {
					t.Errorf("attempt %d usage %v", n, u)
				}
				if rep.GetResult().GetUsage() != nil {
					t.Errorf("attempt %d: the child's usage stayed in the result", n)
				}
				log, _ := os.ReadFile(filepath.Join(tt.cfg.LocalDirs[0], "userlogs", job, filepath.Base(rep.GetAttemptId())+".stderr"))
				if want := fmt.Sprintf("stderr of %s_%d\n", job, n); string(log) != want {
					t.Errorf("attempt %d's stderr file %q, want %q", n, log, want)
				}
			}
			tt.mu.Lock()
			idle := len(tt.idle)
			tt.mu.Unlock()
			if want := map[string]int{"-1": 1}[tc.reuse]; idle != want {
				t.Fatalf("%d idle children, want %d", idle, want)
			}
			tt.apply(&mrpb.HeartbeatResponse{DoneJobs: []string{job}})
			for pid := range seen {
				waitGone(t, int(pid))
			}
		})
	}
}

// TestTaskReuseAfterFailure: the child of a failed attempt exits; the
// job's next attempt gets a new one.
func TestTaskReuseAfterFailure(t *testing.T) {
	tt := childTracker(t)
	_, first := runMap(t, tt, "job_1_0001", 0, "ok", "-1")
	rep, _ := runMap(t, tt, "job_1_0001", 1, "fail", "-1")
	if rep.GetState() != mrpb.TaskReport_FAILED || !strings.Contains(rep.GetResult().GetError(), "the attempt failed") {
		t.Fatalf("failing attempt: %v", rep)
	}
	waitGone(t, int(first))
	if _, next := runMap(t, tt, "job_1_0001", 2, "ok", "-1"); next == first || next == 0 {
		t.Fatalf("after a failure the attempt ran in child %d (the failed one was %d)", next, first)
	}
}

// TestTaskReuseOtherJob: an idle child of one job gives way to the next
// job's attempt when the slots would be outnumbered, and never runs
// another job's attempt.
func TestTaskReuseOtherJob(t *testing.T) {
	tt := childTracker(t)
	_, a := runMap(t, tt, "job_1_0001", 0, "ok", "-1")
	_, b := runMap(t, tt, "job_1_0002", 0, "ok", "-1")
	if a == b {
		t.Fatal("the second job's attempt ran in the first job's child")
	}
	waitGone(t, int(a)) // one map slot: one live map child
}

// TestTaskReuseOldProgram: a job program that predates task reuse never
// says ReuseReady; its attempts still run, each in a child of its own.
func TestTaskReuseOldProgram(t *testing.T) {
	defer func(d time.Duration) { readyWait = d }(readyWait)
	readyWait = 200 * time.Millisecond
	t.Setenv(oldChildEnv, "1")
	tt := childTracker(t)
	rep0, a := runMap(t, tt, "job_1_0001", 0, "ok", "-1")
	rep1, b := runMap(t, tt, "job_1_0001", 1, "ok", "-1")
	if rep0.GetState() != mrpb.TaskReport_SUCCEEDED || rep1.GetState() != mrpb.TaskReport_SUCCEEDED || a == b {
		t.Fatalf("reports %v, %v; children %d, %d", rep0, rep1, a, b)
	}
}

// waitGone waits for process pid to have exited (and been reaped).
func waitGone(t *testing.T, pid int) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
			return
		}
	}
	t.Fatalf("child %d still runs", pid)
}

// TestChildScratchGoesWithTheJob: a child's temporary files land in its
// job's local directory, and the job's end removes what it left there.
func TestChildScratchGoesWithTheJob(t *testing.T) {
	tt := childTracker(t)
	job := "job_1_0001"
	rep, _ := runMap(t, tt, job, 0, "scratch", "1")
	if rep.GetState() != mrpb.TaskReport_SUCCEEDED {
		t.Fatalf("attempt: %v", rep)
	}
	log, _ := os.ReadFile(filepath.Join(tt.cfg.LocalDirs[0], "userlogs", job, filepath.Base(rep.GetAttemptId())+".stderr"))
	_, left, ok := strings.Cut(strings.TrimSpace(string(log)), "left ")
	scratch := filepath.Join(tt.cfg.LocalDirs[0], "taskTracker", job, "tmp")
	if !ok || filepath.Dir(left) != scratch {
		t.Fatalf("the child's temporary file %q, want one in %s (stderr %q)", left, scratch, log)
	}
	if _, err := os.Stat(left); err != nil {
		t.Fatalf("before the job's end: %v", err)
	}
	tt.apply(&mrpb.HeartbeatResponse{DoneJobs: []string{job}})
	if _, err := os.Stat(left); !os.IsNotExist(err) {
		t.Fatalf("after the job's end the file is still there (%v)", err)
	}
}
