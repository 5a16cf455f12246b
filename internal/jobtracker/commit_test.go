package jobtracker

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/mapreduce"
)

// TestCommitArbitration: of two running attempts of one task that both ask
// to commit, only the first asker may; the second may once the first has
// failed; nobody may after the task is done or for a tracker that does not
// run the attempt.
func TestCommitArbitration(t *testing.T) {
	jt := New(Config{})
	const a0, a1 = "attempt_1_0001_r_000000_0", "attempt_1_0001_r_000000_1"
	tk := &task{index: 0, state: running, running: map[string]string{a0: "tt-a", a1: "tt-b"}}
	jt.jobs["job_1_0001"] = &job{id: "job_1_0001", state: mrpb.JobState_RUNNING, reduces: []*task{tk}, counters: mapreduce.NewCounters(), maxRed: 4}
	ask := func(tracker string, atts ...string) []string {
		t.Helper()
		resp, err := jt.heartbeat(context.Background(), &mrpb.HeartbeatRequest{Tracker: proto.String(tracker), CommitPending: atts})
		if err != nil {
			t.Fatal(err)
		}
		return resp.GetCommitAttempts()
	}
	if got := ask("tt-b", a1); !slices.Equal(got, []string{a1}) {
		t.Fatalf("first asker: allowed %v", got)
	}
	if got := ask("tt-a", a0); len(got) != 0 {
		t.Fatalf("second asker allowed %v while the first runs", got)
	}
	if got := ask("tt-b", a1); !slices.Equal(got, []string{a1}) {
		t.Fatalf("the allowed attempt asking again: %v", got)
	}
	if got := ask("tt-a", a1); len(got) != 0 {
		t.Fatalf("a tracker not running the attempt was answered %v", got)
	}
	jt.report(jt.trackers["tt-b"], &mrpb.TaskReport{AttemptId: proto.String(a1), State: mrpb.TaskReport_FAILED.Enum(), Result: &mrpb.TaskResult{Error: proto.String("commit failed")}})
	if got := ask("tt-a", a0); !slices.Equal(got, []string{a0}) {
		t.Fatalf("after the first attempt failed: allowed %v", got)
	}
	tk.state = done
	if got := ask("tt-a", a0); len(got) != 0 {
		t.Fatalf("a done task's attempt allowed: %v", got)
	}
}

// TestRetireJobs: past RetiredJobs finished jobs, the oldest finished ones
// are forgotten; running jobs never are.
func TestRetireJobs(t *testing.T) {
	jt := New(Config{RetiredJobs: 2})
	for i, state := range []mrpb.JobState{mrpb.JobState_SUCCEEDED, mrpb.JobState_RUNNING, mrpb.JobState_FAILED, mrpb.JobState_KILLED, mrpb.JobState_SUCCEEDED} {
		id := fmt.Sprintf("job_1_%04d", i)
		jt.jobs[id] = &job{id: id, state: state}
		jt.order = append(jt.order, id)
	}
	jt.retire()
	want := []string{"job_1_0001", "job_1_0003", "job_1_0004"}
	if !slices.Equal(jt.order, want) || len(jt.jobs) != len(want) {
		t.Fatalf("kept %v (%d jobs), want %v", jt.order, len(jt.jobs), want)
	}
}

// TestLoserEndsBeforeJobCommit: when one attempt of a speculated task
// succeeds, the job's output is committed (its cleanup task launched) only
// once the other attempt has been reported ended, so that the loser cannot
// write under the output after _temporary is removed; a loser asking to
// commit is told again to die. The JobTracker itself never touches the
// output directory.
func TestLoserEndsBeforeJobCommit(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	jt := New(Config{HistoryDir: filepath.Join(dir, "history")})
	const a0, a1 = "attempt_1_0001_r_000000_0", "attempt_1_0001_r_000000_1"
	tk := &task{index: 0, state: running, running: map[string]string{a0: "tt-a", a1: "tt-b"}}
	j := &job{id: "job_1_0001", state: mrpb.JobState_RUNNING, reduces: []*task{tk}, counters: mapreduce.NewCounters(), maxRed: 4, maxMap: 4,
		spec: &mrpb.JobSpec{Job: proto.String("wordcount"), OutputPath: proto.String(out)}, user: "alice"}
	jt.jobs[j.id] = j
	jt.order = append(jt.order, j.id)
	heartbeat := func(tracker string, maps int, reports []*mrpb.TaskReport, commitPending ...string) *mrpb.HeartbeatResponse {
		t.Helper()
		resp, err := jt.heartbeat(context.Background(), &mrpb.HeartbeatRequest{Tracker: proto.String(tracker), CommitPending: commitPending,
			FreeMapSlots: proto.Int32(int32(maps)), Reports: reports})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	heartbeat("tt-a", 0, nil)
	heartbeat("tt-b", 0, nil)
	jt.mu.Lock()
	jt.report(jt.trackers["tt-a"], &mrpb.TaskReport{AttemptId: proto.String(a0), State: mrpb.TaskReport_SUCCEEDED.Enum()})
	committing := j.committing
	jt.mu.Unlock()
	if committing || j.cleanup != nil {
		t.Fatal("the job commits while the losing attempt may still write")
	}
	if got := heartbeat("tt-b", 0, nil).GetKillAttempts(); !slices.Equal(got, []string{a1}) {
		t.Fatalf("loser's tracker told to kill %v", got)
	}
	resp := heartbeat("tt-b", 0, nil, a1) // the kill was lost; the loser asks to commit
	if len(resp.GetCommitAttempts()) != 0 || !slices.Equal(resp.GetKillAttempts(), []string{a1}) {
		t.Fatalf("loser asking to commit: allowed %v, killed %v", resp.GetCommitAttempts(), resp.GetKillAttempts())
	}
	resp = heartbeat("tt-b", 1, []*mrpb.TaskReport{{AttemptId: proto.String(a1), State: mrpb.TaskReport_KILLED.Enum()}})
	if !j.committing || len(resp.GetLaunch()) != 1 {
		t.Fatalf("the job does not commit once the loser has ended: launched %v", resp.GetLaunch())
	}
	l := resp.GetLaunch()[0]
	if s := l.GetSpec(); s.GetType() != mrpb.TaskType_JOB_CLEANUP || s.GetCleanupState() != mrpb.JobState_SUCCEEDED ||
		s.GetOutputPath() != out || s.GetUser() != "alice" || l.GetAttemptId() != "attempt_1_0001_c_000000_0" {
		t.Fatalf("cleanup launch %v", l)
	}
	// A failed commit is retried, then fails the job, whose output the
	// next cleanup attempt aborts.
	for i := 0; i < 4; i++ {
		if j.state != mrpb.JobState_RUNNING {
			t.Fatalf("job %s after %d failed commits", j.state, i)
		}
		heartbeat("tt-b", 0, []*mrpb.TaskReport{{AttemptId: l.AttemptId, State: mrpb.TaskReport_FAILED.Enum(), Result: &mrpb.TaskResult{Error: proto.String("disk gone")}}})
		if resp = heartbeat("tt-b", 1, nil); len(resp.GetLaunch()) != 1 {
			t.Fatalf("cleanup not relaunched after failure %d", i)
		}
		l = resp.GetLaunch()[0]
	}
	if j.state != mrpb.JobState_FAILED || j.err != "commit: disk gone" || l.GetSpec().GetCleanupState() != mrpb.JobState_FAILED {
		t.Fatalf("job %s %q, cleanup %v", j.state, j.err, l.GetSpec().GetCleanupState())
	}
	heartbeat("tt-b", 0, []*mrpb.TaskReport{{AttemptId: l.AttemptId, State: mrpb.TaskReport_SUCCEEDED.Enum()}})
	if !cleanupDone(j) {
		t.Fatal("abort not done")
	}
	jt.Close()
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("the JobTracker touched the output directory: %v", err)
	}
}

// TestTrackerRestart: a tracker heartbeating under a known name with a new
// start time lost what it ran: its attempt is re-queued and its finished
// map, whose output died with it, runs again.
func TestTrackerRestart(t *testing.T) {
	jt := New(Config{})
	const run, doneMap = "attempt_1_0001_m_000000_0", "attempt_1_0001_m_000001_0"
	m0 := &task{isMap: true, index: 0, state: running, running: map[string]string{run: "tt-a"}}
	m1 := &task{isMap: true, index: 1, state: done, running: map[string]string{}, tracker: "tt-a", attemptID: doneMap}
	r0 := &task{index: 0, state: pending, running: map[string]string{}}
	jt.jobs["job_1_0001"] = &job{id: "job_1_0001", state: mrpb.JobState_RUNNING, maps: []*task{m0, m1}, reduces: []*task{r0},
		counters: mapreduce.NewCounters(), maxMap: 4, maxRed: 4}
	beat := func(started int64) {
		t.Helper()
		if _, err := jt.heartbeat(context.Background(), &mrpb.HeartbeatRequest{Tracker: proto.String("tt-a"), StartedNs: proto.Int64(started)}); err != nil {
			t.Fatal(err)
		}
	}
	beat(1)
	if m0.state != running || m1.state != done {
		t.Fatalf("a heartbeat of the same process changed the tasks: %v %v", m0.state, m1.state)
	}
	beat(2)
	if m0.state != pending || len(m0.running) != 0 || m1.state != pending {
		t.Fatalf("after the restart: running map %v %v, finished map %v; want both pending", m0.state, m0.running, m1.state)
	}
}

// TestKillWhileCommitting: a job whose output is being committed can no
// longer be killed, and the caller is told so.
func TestKillWhileCommitting(t *testing.T) {
	jt := New(Config{})
	jt.jobs["job_1_0001"] = &job{id: "job_1_0001", state: mrpb.JobState_RUNNING, committing: true, user: "alice"}
	_, err := jt.killJob(ipc.WithCaller(context.Background(), &ipc.Caller{User: "alice"}), &mrpb.JobIDRequest{JobId: proto.String("job_1_0001")})
	if err == nil || !strings.Contains(err.Error(), "committing") {
		t.Fatalf("kill during commit: %v", err)
	}
	if st := jt.jobs["job_1_0001"].state; st != mrpb.JobState_RUNNING {
		t.Fatalf("state %s", st)
	}
}

// TestCloseWaitsForBackground: Close returns only after job commits and
// history writes started before it have finished.
func TestCloseWaitsForBackground(t *testing.T) {
	jt := New(Config{})
	release := make(chan struct{})
	var finished atomic.Bool
	jt.goBackground(func() {
		<-release
		finished.Store(true)
	})
	closed := make(chan struct{})
	go func() { jt.Close(); close(closed) }()
	select {
	case <-closed:
		t.Fatal("Close returned while background work was running")
	case <-time.After(100 * time.Millisecond):
	}
	close(release)
	<-closed
	if !finished.Load() {
		t.Fatal("background work did not finish")
	}
}
