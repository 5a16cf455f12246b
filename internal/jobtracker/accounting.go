package jobtracker

import (
	"context"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/mapreduce"
)

// maxAttemptCounters bounds the counters kept of one attempt's report: a
// TaskTracker is trusted with its attempts' results, but not with the
// JobTracker's memory.
const maxAttemptCounters = 512

// attemptCountersKept is how many finished jobs, the most recent, keep
// their attempts' counters in memory (getTaskReports); older finished
// jobs keep the rest of the records, and their histories have it all.
// Retired jobs (mapreduce.jobtracker.retiredjobs.cache.size) would
// otherwise hold every attempt's counters.
const attemptCountersKept = 20

// trimAttemptRecords drops the attempt counters of finished jobs but the
// attemptCountersKept most recent. Lock held.
func (jt *JobTracker) trimAttemptRecords() {
	kept := 0
	for i := len(jt.order) - 1; i >= 0; i-- {
		j := jt.jobs[jt.order[i]]
		if j == nil || j.state == mrpb.JobState_RUNNING || !cleanupDone(j) {
			continue
		}
		if kept++; kept <= attemptCountersKept {
			continue
		}
		for _, r := range j.attempts {
			r.Counters = nil
		}
	}
}

// noteLaunch records a new attempt of j on tr. Lock held.
func (jt *JobTracker) noteLaunch(j *job, id string, typ mrpb.TaskType, tr *tracker) {
	if j.attempts == nil {
		j.attempts = map[string]*mrpb.AttemptReport{}
	}
	r := &mrpb.AttemptReport{AttemptId: proto.String(id), Type: typ.Enum(), Tracker: proto.String(tr.name), Host: proto.String(tr.host),
		State: mrpb.TaskReport_RUNNING.Enum(), StartMs: proto.Int64(jt.now().UnixMilli())}
	j.attempts[id] = r
	j.attemptOrder = append(j.attemptOrder, id)
}

// noteReport records the end of an attempt as its TaskTracker reported
// it, whatever the report then does to the job (a loser's, a late one's
// too). Repeats of a report change nothing. Lock held.
func (jt *JobTracker) noteReport(j *job, rep *mrpb.TaskReport) {
	r := j.attempts[rep.GetAttemptId()]
	if r == nil || r.GetState() != mrpb.TaskReport_RUNNING || rep.GetState() == mrpb.TaskReport_RUNNING {
		return
	}
	res := rep.GetResult()
	r.State = rep.GetState().Enum()
	r.FinishMs = proto.Int64(jt.now().UnixMilli())
	r.ChildStartMs, r.ChildFinishMs = proto.Int64(rep.GetStartMs()), proto.Int64(rep.GetFinishMs())
	r.Phases, r.Usage = res.GetPhases(), rep.GetUsage()
	cs := res.GetCounters()
	r.Counters = cs[:min(len(cs), maxAttemptCounters)]
	if e := res.GetError(); e != "" {
		r.Error = proto.String(e)
	}
}

// noteLost ends the records of the attempts that ran on a lost tracker.
// Lock held.
func (jt *JobTracker) noteLost(name string) {
	now := jt.now().UnixMilli()
	for _, j := range jt.jobs {
		for _, r := range j.attempts {
			if r.GetTracker() == name && r.GetState() == mrpb.TaskReport_RUNNING {
				r.State, r.FinishMs, r.Error = mrpb.TaskReport_KILLED.Enum(), proto.Int64(now), proto.String("lost task tracker "+name)
			}
		}
	}
}

// attemptReports lists j's attempts in launch order. Lock held.
func (j *job) attemptReports() []*mrpb.AttemptReport {
	out := make([]*mrpb.AttemptReport, 0, len(j.attemptOrder))
	for _, id := range j.attemptOrder {
		out = append(out, proto.CloneOf(j.attempts[id]))
	}
	return out
}

// getTaskReports is strata.JobSubmissionProtocol's getTaskReports: every
// attempt of a job the JobTracker still knows, as Hadoop's
// getMapTaskReports and getReduceTaskReports (with their attempts) give
// them; readable by anyone who may see the job's status.
func (jt *JobTracker) getTaskReports(ctx context.Context, req *mrpb.JobIDRequest) (*mrpb.TaskReportsResponse, error) {
	jt.mu.Lock()
	defer jt.mu.Unlock()
	j := jt.jobs[req.GetJobId()]
	if j == nil {
		return nil, ipc.Errorf(ipc.ClassIOException, "unknown job %s (a job that finished long ago may only be in the job history: strata job -history %[1]s)", req.GetJobId())
	}
	return &mrpb.TaskReportsResponse{Attempts: j.attemptReports()}, nil
}

// AttemptHistory is one attempt's line of a History: Hadoop's
// MapAttemptFinished / ReduceAttemptFinished events (times in Unix ms,
// 0: not reached) with the CPU time its child was charged.
type AttemptHistory struct {
	Attempt       string                      `json:"attemptId"`
	Type          string                      `json:"taskType"` // MAP, REDUCE or JOB_CLEANUP
	Tracker       string                      `json:"trackerName,omitempty"`
	Host          string                      `json:"hostname,omitempty"`
	State         string                      `json:"state"`
	Start         int64                       `json:"startTime"`
	Finish        int64                       `json:"finishTime"`
	MapFinish     int64                       `json:"mapFinishTime,omitempty"`
	ShuffleFinish int64                       `json:"shuffleFinishTime,omitempty"`
	SortFinish    int64                       `json:"sortFinishTime,omitempty"`
	CPUUserMs     int64                       `json:"cpuUserMs"`
	CPUSystemMs   int64                       `json:"cpuSystemMs"`
	MaxRSS        int64                       `json:"maxRssBytes,omitempty"`
	Counters      map[string]map[string]int64 `json:"counters,omitempty"`
	Error         string                      `json:"error,omitempty"`
}

// attemptHistory is r's history line.
func attemptHistory(r *mrpb.AttemptReport) AttemptHistory {
	start, finish := r.GetChildStartMs(), r.GetChildFinishMs()
	if start == 0 {
		start, finish = r.GetStartMs(), r.GetFinishMs()
	}
	h := AttemptHistory{Attempt: r.GetAttemptId(), Type: r.GetType().String(), Tracker: r.GetTracker(), Host: r.GetHost(),
		State: r.GetState().String(), Start: start, Finish: finish,
		MapFinish: r.GetPhases().GetMapFinishMs(), ShuffleFinish: r.GetPhases().GetShuffleFinishMs(), SortFinish: r.GetPhases().GetSortFinishMs(),
		CPUUserMs: r.GetUsage().GetUserUs() / 1000, CPUSystemMs: r.GetUsage().GetSystemUs() / 1000, MaxRSS: r.GetUsage().GetMaxRssBytes(),
		Error: r.GetError()}
	for _, c := range r.GetCounters() {
		if h.Counters == nil {
			h.Counters = map[string]map[string]int64{}
		}
		g := h.Counters[c.GetGroup()]
		if g == nil {
			g = map[string]int64{}
			h.Counters[c.GetGroup()] = g
		}
		g[c.GetName()] += c.GetValue()
	}
	return h
}

// Report is h as a mapreduce.AttemptReport (for printing).
func (h AttemptHistory) Report() mapreduce.AttemptReport {
	at := func(ms int64) time.Time {
		if ms == 0 {
			return time.Time{}
		}
		return time.UnixMilli(ms)
	}
	r := mapreduce.AttemptReport{ID: h.Attempt, Tracker: h.Tracker, Host: h.Host, State: h.State, Start: at(h.Start), Finish: at(h.Finish),
		Phases:  mapreduce.Phases{MapFinish: at(h.MapFinish), ShuffleFinish: at(h.ShuffleFinish), SortFinish: at(h.SortFinish)},
		CPUUser: time.Duration(h.CPUUserMs) * time.Millisecond, CPUSystem: time.Duration(h.CPUSystemMs) * time.Millisecond,
		MaxRSS: h.MaxRSS, Counters: mapreduce.NewCounters(), Error: h.Error}
	r.Type = map[string]byte{"MAP": 'm', "REDUCE": 'r'}[h.Type]
	if r.Type == 0 {
		r.Type = 'c'
	}
	for g, m := range h.Counters {
		for n, v := range m {
			r.Counters.Add(g, n, v)
		}
	}
	return r
}
