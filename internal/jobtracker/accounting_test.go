package jobtracker

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

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

	resp, err := h.jt.getTaskReports(context.Background(), &mrpb.JobIDRequest{JobId: proto.String(j.id)})
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
