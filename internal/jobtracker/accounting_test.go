package jobtracker

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/mapreduce"
)

// The JobTracker keeps a record of every attempt: where and when it was
// launched, the child's span, phases and usage from its report, its
// counters; peak counters take the largest attempt's value; a lost
// tracker's attempts end KILLED; the history and getTaskReports carry
// the records.
func TestAttemptRecords(t *testing.T) {
	h := newHarness(t)
	j := h.submit([][]string{{"a"}, {"a"}}, 1, keySlowstart, "1")
	_, ids := launched(h.heartbeat(beat{tracker: "tt-a", maps: 2}))
	if len(ids) != 2 {
		t.Fatalf("launched %v", ids)
	}
	t0 := h.clk.t
	h.clk.advance(3 * time.Second)
	rep := func(id string, rss int64) *mrpb.TaskReport {
		r := succeeded(id, &mrpb.Counter{Group: proto.String(mapreduce.GroupTask), Name: proto.String(mapreduce.PeakMapRSS), Value: proto.Int64(rss)},
			&mrpb.Counter{Group: proto.String(mapreduce.GroupTask), Name: proto.String(mapreduce.CPUMilliseconds), Value: proto.Int64(700)})
		r.StartMs, r.FinishMs = proto.Int64(t0.UnixMilli()+10), proto.Int64(t0.UnixMilli()+2900)
		r.Result.Phases = &mrpb.TaskPhases{MapFinishMs: proto.Int64(t0.UnixMilli() + 2000)}
		r.Usage = &mrpb.TaskUsage{UserUs: proto.Int64(500_000), SystemUs: proto.Int64(200_000), MaxRssBytes: proto.Int64(rss)}
		return r
	}
	h.heartbeat(beat{tracker: "tt-a", reports: []*mrpb.TaskReport{rep(ids[0], 50<<20), rep(ids[1], 80<<20)}})
	if got := j.counters.Get(mapreduce.GroupTask, mapreduce.PeakMapRSS); got != 80<<20 {
		t.Errorf("job's peak map RSS %d, want the larger attempt's", got)
	}
	if got := j.counters.Get(mapreduce.GroupTask, mapreduce.CPUMilliseconds); got != 1400 {
		t.Errorf("job's CPU ms %d, want the sum", got)
	}
	_, rids := launched(h.heartbeat(beat{tracker: "tt-b", reduces: 1}))
	if len(rids) != 1 {
		t.Fatalf("reduce not launched: %v", rids)
	}
	h.jt.mu.Lock()
	h.jt.trackerLost("tt-b")
	h.jt.mu.Unlock()

	resp, err := h.jt.getTaskReports(asUser("alice"), &mrpb.TaskReportsRequest{JobId: proto.String(j.id)})
	if err != nil {
		t.Fatal(err)
	}
	as := resp.GetAttempts()
	if len(as) != 3 || as[0].GetAttemptId() != ids[0] || as[2].GetAttemptId() != rids[0] {
		t.Fatalf("attempts %v", as)
	}
	r := mapreduce.AttemptReportFrom(as[0])
	if r.State != "SUCCEEDED" || r.Host != "a" || r.Tracker != "tt-a" || r.Start.UnixMilli() != t0.UnixMilli()+10 || r.Elapsed() != 2890*time.Millisecond ||
		r.CPUUser != 500*time.Millisecond || r.CPUSystem != 200*time.Millisecond || r.Phases.MapFinish.Sub(r.Start) != 1990*time.Millisecond ||
		r.Counters.Get(mapreduce.GroupTask, mapreduce.CPUMilliseconds) != 700 {
		t.Errorf("map report %+v", r)
	}
	if st := as[2].GetState(); st != mrpb.TaskReport_KILLED || as[2].GetError() == "" {
		t.Errorf("reduce on the lost tracker: %v %q", st, as[2].GetError())
	}
	// A repeated report changes nothing.
	h.heartbeat(beat{tracker: "tt-a", reports: []*mrpb.TaskReport{failed(ids[0], "late")}})
	if st := j.attempts[ids[0]].GetState(); st != mrpb.TaskReport_SUCCEEDED {
		t.Errorf("a late report changed the record to %v", st)
	}
	h.jt.mu.Lock()
	hist := h.jt.history(j)
	h.jt.mu.Unlock()
	if len(hist.Attempts) != 3 || hist.Attempts[0].MapFinish != t0.UnixMilli()+2000 || hist.Attempts[0].CPUUserMs != 500 || hist.Attempts[0].Type != "MAP" {
		t.Errorf("history attempts %+v", hist.Attempts)
	}
	if back := hist.Attempts[0].Report(); back.Phases.MapFinish != r.Phases.MapFinish || back.Type != 'm' || back.CPUUser != r.CPUUser {
		t.Errorf("history attempt as a report %+v", back)
	}
}

func asUser(user string) context.Context {
	return ipc.WithCaller(context.Background(), &ipc.Caller{User: user})
}

// An attempt's record keeps a copy of at most maxAttemptCounters counters
// of at most maxAttemptCounterBytes, not the report's backing array, and
// at most maxAttemptError bytes of its error.
func TestAttemptRecordBounds(t *testing.T) {
	h := newHarness(t)
	j := h.submit([][]string{{"a"}, {"a"}}, 0)
	_, ids := launched(h.heartbeat(beat{tracker: "tt-a", maps: 2}))
	var cs []*mrpb.Counter
	for i := range 3000 {
		cs = append(cs, &mrpb.Counter{Group: proto.String("g"), Name: proto.String(fmt.Sprintf("c%d", i)), Value: proto.Int64(1)})
	}
	long := &mrpb.Counter{Group: proto.String("g"), Name: proto.String(strings.Repeat("n", 1<<20)), Value: proto.Int64(1)}
	h.heartbeat(beat{tracker: "tt-a", reports: []*mrpb.TaskReport{succeeded(ids[0], cs...),
		failed(ids[1], strings.Repeat("é", 1<<20))}})
	r := j.attempts[ids[0]]
	if n := len(r.Counters); n != maxAttemptCounters || cap(r.Counters) > 2*maxAttemptCounters || r.Counters[0] == cs[0] {
		t.Errorf("kept %d counters (cap %d, shared %v)", n, cap(r.Counters), r.Counters[0] == cs[0])
	}
	if e := j.attempts[ids[1]].GetError(); len(e) > maxAttemptError+3 || !strings.HasPrefix(e, "éé") || !strings.HasSuffix(e, "é...") {
		t.Errorf("kept an error of %d bytes: ...%q", len(e), e[max(0, len(e)-8):])
	}
	if got := keptCounters([]*mrpb.Counter{cs[0], long, cs[1]}); len(got) != 1 {
		t.Errorf("counters over the byte bound kept: %d", len(got))
	}
}

// getTaskReports pages: by type, from an offset, and cut short of
// maxReportsBytes; the client's TaskReports follows the pages; with ACLs
// on only the owner, an administrator or mapreduce.job.acl-view-job may
// read them (Hadoop's VIEW_JOB).
func TestTaskReportsPaging(t *testing.T) {
	h := newHarness(t)
	h.jt.cfg.Admins = ParseACL("root")
	hosts := make([][]string, 30)
	for i := range hosts {
		hosts[i] = []string{"a"}
	}
	j := h.submit(hosts, 1, keySlowstart, "1", keyACLViewJob, "carol")
	_, ids := launched(h.heartbeat(beat{tracker: "tt-a", maps: 30}))
	if len(ids) != 30 {
		t.Fatalf("launched %d", len(ids))
	}
	// Each map's counters take ~30 KiB: 30 of them ~900 KiB.
	var reps []*mrpb.TaskReport
	for _, id := range ids {
		var cs []*mrpb.Counter
		for i := range 500 {
			cs = append(cs, &mrpb.Counter{Group: proto.String("group"), Name: proto.String(fmt.Sprintf("%s-%040d", id, i)), Value: proto.Int64(1)})
		}
		reps = append(reps, succeeded(id, cs...))
	}
	h.heartbeat(beat{tracker: "tt-a", reports: reps})
	launched(h.heartbeat(beat{tracker: "tt-a", reduces: 1}))

	get := func(user string, req *mrpb.TaskReportsRequest) (*mrpb.TaskReportsResponse, error) {
		req.JobId = proto.String(j.id)
		return h.jt.getTaskReports(asUser(user), req)
	}
	resp, err := get("alice", &mrpb.TaskReportsRequest{Type: mrpb.TaskType_REDUCE.Enum()})
	if err != nil || len(resp.Attempts) != 1 || resp.GetTotal() != 1 || resp.GetNextOffset() != 1 || resp.Attempts[0].GetType() != mrpb.TaskType_REDUCE {
		t.Fatalf("reduces: %v %v", resp, err)
	}
	resp, err = get("alice", &mrpb.TaskReportsRequest{Type: mrpb.TaskType_MAP.Enum(), Offset: proto.Int32(10), Limit: proto.Int32(5)})
	if err != nil || len(resp.Attempts) != 5 || resp.GetTotal() != 30 || resp.GetNextOffset() != 15 || resp.Attempts[0].GetAttemptId() != ids[10] {
		t.Fatalf("maps 10-14: %d attempts, total %d, next %d, %v", len(resp.GetAttempts()), resp.GetTotal(), resp.GetNextOffset(), err)
	}
	if _, err := get("alice", &mrpb.TaskReportsRequest{Offset: proto.Int32(-1)}); !ipc.IsClass(err, ipc.ClassIllegalArgument) {
		t.Errorf("negative offset: %v", err)
	}

	old := maxReportsBytes
	maxReportsBytes = 100 << 10
	defer func() { maxReportsBytes = old }()
	resp, err = get("root", &mrpb.TaskReportsRequest{})
	if err != nil || len(resp.Attempts) == 0 || len(resp.Attempts) >= 30 || proto.Size(resp) > maxReportsBytes+64<<10 || resp.GetTotal() != 31 {
		t.Fatalf("a bounded page: %d attempts of %d bytes, total %d, %v", len(resp.GetAttempts()), proto.Size(resp), resp.GetTotal(), err)
	}
	if resp.GetNextOffset() != int32(len(resp.Attempts)) {
		t.Errorf("next offset %d after %d", resp.GetNextOffset(), len(resp.Attempts))
	}

	for _, tc := range []struct {
		user string
		ok   bool
	}{{"alice", true}, {"root", true}, {"carol", true}, {"bob", false}, {"", false}} {
		_, err := get(tc.user, &mrpb.TaskReportsRequest{Limit: proto.Int32(1)})
		if tc.ok != (err == nil) {
			t.Errorf("%q reads alice's task reports: %v", tc.user, err)
		}
		if err != nil && (!ipc.IsClass(err, ipc.ClassAccessControl) || !strings.Contains(err.Error(), "cannot perform operation VIEW_JOB")) {
			t.Errorf("refusal: %v", err)
		}
	}
	h.jt.cfg.ACLsEnabled = false
	if _, err := get("bob", &mrpb.TaskReportsRequest{Limit: proto.Int32(1)}); err != nil {
		t.Errorf("with ACLs off: %v", err)
	}
}

// A killed job's history ends the attempts still running KILLED at the
// job's end, and is written again with the cleanup (abort) attempt once
// that ends.
func TestKilledJobHistoryAttempts(t *testing.T) {
	h := newHarness(t)
	j := h.submit([][]string{{"a"}, {"a"}}, 0)
	_, ids := launched(h.heartbeat(beat{tracker: "tt-a", maps: 2}))
	h.heartbeat(beat{tracker: "tt-a", reports: []*mrpb.TaskReport{succeeded(ids[0])}})
	h.clk.advance(time.Second)
	if _, err := h.jt.killJob(asUser("alice"), &mrpb.JobIDRequest{JobId: proto.String(j.id)}); err != nil {
		t.Fatal(err)
	}
	h.jt.mu.Lock()
	hist := h.jt.history(j)
	h.jt.mu.Unlock()
	if len(hist.Attempts) != 2 || hist.Attempts[1].State != "KILLED" || hist.Attempts[1].Finish != j.finish.UnixMilli() {
		t.Fatalf("history attempts at the kill: %+v", hist.Attempts)
	}
	// The kill's own report comes later and changes nothing.
	_, cids := launched(h.heartbeat(beat{tracker: "tt-a", maps: 1, reports: []*mrpb.TaskReport{{AttemptId: proto.String(ids[1]), State: mrpb.TaskReport_KILLED.Enum()}}}))
	if len(cids) != 1 {
		t.Fatalf("cleanup not launched: %v", cids)
	}
	h.heartbeat(beat{tracker: "tt-a", reports: []*mrpb.TaskReport{succeeded(cids[0])}})
	h.jt.background.Wait()
	c := conf.New()
	c.Set(keyHistoryDir, h.dir+"/history")
	back, err := ReadHistory(context.Background(), fs.Env{Conf: c}.WithDefaults(), j.id)
	if err != nil {
		t.Fatal(err)
	}
	if len(back.Attempts) != 3 || back.Attempts[1].State != "KILLED" || back.Attempts[2].Type != "JOB_CLEANUP" || back.Attempts[2].State != "SUCCEEDED" {
		t.Fatalf("history written after the abort: %+v", back.Attempts)
	}
}

// A finished job is trimmed once; a lost tracker's attempts are ended only
// in the active jobs.
func TestTrimOnce(t *testing.T) {
	h := newHarness(t)
	var jobs []*job
	for range attemptCountersKept + 2 {
		j := h.submit([][]string{{"a"}}, 0)
		_, ids := launched(h.heartbeat(beat{tracker: "tt-a", maps: 1}))
		h.heartbeat(beat{tracker: "tt-a", reports: []*mrpb.TaskReport{succeeded(ids[0], &mrpb.Counter{Group: proto.String("g"), Name: proto.String("n"), Value: proto.Int64(1)})}})
		_, cids := launched(h.heartbeat(beat{tracker: "tt-a", maps: 1}))
		h.heartbeat(beat{tracker: "tt-a", reports: []*mrpb.TaskReport{succeeded(cids[0])}})
		if j.state != mrpb.JobState_SUCCEEDED {
			t.Fatalf("job %s", j.state)
		}
		jobs = append(jobs, j)
	}
	if !jobs[0].countersTrimmed || !jobs[1].countersTrimmed || jobs[2].countersTrimmed || jobs[0].attempts[jobs[0].attemptOrder[0]].Counters != nil {
		t.Fatalf("trimmed: %v %v %v", jobs[0].countersTrimmed, jobs[1].countersTrimmed, jobs[2].countersTrimmed)
	}
	// A record of a finished job left RUNNING stays as it is.
	r := jobs[0].attempts[jobs[0].attemptOrder[0]]
	r.State = mrpb.TaskReport_RUNNING.Enum()
	h.jt.mu.Lock()
	h.jt.noteLost("tt-a")
	h.jt.mu.Unlock()
	if r.GetState() != mrpb.TaskReport_RUNNING {
		t.Errorf("noteLost walked a finished job")
	}
}
