package jobtracker

import (
	"context"
	"time"
	"unicode/utf8"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/mapreduce"
)

// An attempt's report is bounded before the JobTracker keeps it: a
// TaskTracker is trusted with its attempts' results (up to
// taskrun.MaxResult each), not with the JobTracker's memory. The kept
// counters are copied out of the report, so that none of its backing
// array stays reachable.
const (
	maxAttemptCounters     = 512
	maxAttemptCounterBytes = 32 << 10 // group and name bytes of the kept counters
	maxAttemptError        = 4 << 10
)

// Bounds of a getTaskReports page: at most maxReportsPage attempts and
// about maxReportsBytes (well below ipc.maximum.data.length's default
// 128 MiB; one attempt's record is at most ~40 KiB); a page always holds
// one attempt if any is left. A variable for tests.
const maxReportsPage = 1000

var maxReportsBytes = 4 << 20

// attemptCountersKept is how many finished jobs, the most recent, keep
// their attempts' counters in memory (getTaskReports); older finished
// jobs keep the rest of the records, and their histories have it all.
// Retired jobs (mapreduce.jobtracker.retiredjobs.cache.size) would
// otherwise hold every attempt's counters.
const attemptCountersKept = 20

// trimAttemptRecords drops the attempt counters of finished jobs but the
// attemptCountersKept most recent. A job is trimmed once (countersTrimmed):
// later calls only step over it. Lock held.
func (jt *JobTracker) trimAttemptRecords() {
	kept := 0
	for i := len(jt.order) - 1; i >= 0; i-- {
		j := jt.jobs[jt.order[i]]
		if j == nil || j.countersTrimmed || j.state == mrpb.JobState_RUNNING || !cleanupDone(j) {
			continue
		}
		if kept++; kept <= attemptCountersKept {
			continue
		}
		for _, r := range j.attempts {
			r.Counters = nil
		}
		j.countersTrimmed = true
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
// too): its span, phases, usage and counters. A success that does not
// count — its task was done by another attempt, or its job had ended — is
// KILLED, as Hadoop marks an "Already completed TIP" attempt, so that the
// SUCCEEDED records are those whose counters are in the job's. A record
// the JobTracker ended meanwhile (a lost tracker, the job's end) keeps its
// state and takes the rest. Repeats of a report change nothing. A record's
// fields are only ever replaced, never changed in place (pageReports
// relies on it). Lock held.
func (jt *JobTracker) noteReport(j *job, t *task, rep *mrpb.TaskReport) {
	r := j.attempts[rep.GetAttemptId()]
	if r == nil || r.ChildFinishMs != nil || rep.GetState() == mrpb.TaskReport_RUNNING {
		return
	}
	res := rep.GetResult()
	if r.GetState() == mrpb.TaskReport_RUNNING {
		r.State, r.FinishMs = rep.GetState().Enum(), proto.Int64(jt.now().UnixMilli())
		if e := res.GetError(); e != "" {
			r.Error = proto.String(truncate(e, maxAttemptError))
		}
		if rep.GetState() == mrpb.TaskReport_SUCCEEDED && !countsSuccess(j, t, rep.GetAttemptId()) {
			r.State, r.Error = mrpb.TaskReport_KILLED.Enum(), proto.String("Already completed TIP")
		}
	}
	r.ChildStartMs, r.ChildFinishMs = proto.Int64(rep.GetStartMs()), proto.Int64(rep.GetFinishMs())
	r.Phases, r.Usage = proto.CloneOf(res.GetPhases()), proto.CloneOf(rep.GetUsage())
	r.Counters = keptCounters(res.GetCounters())
}

// countsSuccess says whether a success of attempt of t is the one report
// applies to its task and job (before report has applied it). Lock held.
func countsSuccess(j *job, t *task, attempt string) bool {
	if t == nil || t.cleanup {
		return t != nil
	}
	_, running := t.running[attempt]
	return j.state == mrpb.JobState_RUNNING && running && t.state != done
}

// keptCounters copies the first of cs that fit maxAttemptCounters and
// maxAttemptCounterBytes.
func keptCounters(cs []*mrpb.Counter) []*mrpb.Counter {
	var out []*mrpb.Counter
	bytes := 0
	for _, c := range cs {
		if bytes += len(c.GetGroup()) + len(c.GetName()); bytes > maxAttemptCounterBytes || len(out) == maxAttemptCounters {
			break
		}
		out = append(out, &mrpb.Counter{Group: proto.String(c.GetGroup()), Name: proto.String(c.GetName()), Value: proto.Int64(c.GetValue())})
	}
	return out
}

// truncate cuts s to at most n bytes, at a rune boundary, marked "...".
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

// noteLost ends the records of the attempts that ran on a lost tracker in
// the jobs still active (a finished job's records are ended when it
// ends). Lock held.
func (jt *JobTracker) noteLost(name string) {
	now := jt.now().UnixMilli()
	for _, j := range jt.jobs {
		if j.state != mrpb.JobState_RUNNING && cleanupDone(j) {
			continue
		}
		for _, r := range j.attempts {
			if r.GetTracker() == name && r.GetState() == mrpb.TaskReport_RUNNING {
				r.State, r.FinishMs, r.Error = mrpb.TaskReport_KILLED.Enum(), proto.Int64(now), proto.String("lost task tracker "+name)
			}
		}
	}
}

// endAttempts ends the records of j's attempts still running when j
// ended: they are being killed, and a kill's report may never come (a
// tracker lost meanwhile). A later report of one changes nothing. Lock
// held.
func (jt *JobTracker) endAttempts(j *job) {
	at := proto.Int64(j.finish.UnixMilli())
	for _, r := range j.attempts {
		if r.GetState() == mrpb.TaskReport_RUNNING && r.GetType() != mrpb.TaskType_JOB_CLEANUP {
			r.State, r.FinishMs = mrpb.TaskReport_KILLED.Enum(), at
		}
	}
}

// attemptReports lists j's attempts in launch order, as copies that share
// the records' (never changed) fields. Lock held.
func (j *job) attemptReports() []*mrpb.AttemptReport {
	out := make([]*mrpb.AttemptReport, 0, len(j.attemptOrder))
	for _, id := range j.attemptOrder {
		out = append(out, shallowCopy(j.attempts[id]))
	}
	return out
}

// shallowCopy is a new AttemptReport with r's fields: a record's fields
// are replaced, never changed in place, so the copy stays as r was.
func shallowCopy(r *mrpb.AttemptReport) *mrpb.AttemptReport {
	return &mrpb.AttemptReport{AttemptId: r.AttemptId, Type: r.Type, Tracker: r.Tracker, Host: r.Host, State: r.State,
		StartMs: r.StartMs, FinishMs: r.FinishMs, ChildStartMs: r.ChildStartMs, ChildFinishMs: r.ChildFinishMs,
		Phases: r.Phases, Usage: r.Usage, Counters: r.Counters, Error: r.Error}
}

// getTaskReports is strata.JobSubmissionProtocol's getTaskReports: a page
// of the attempts of a job the JobTracker still knows, of one type or
// all, as Hadoop's getMapTaskReports and getReduceTaskReports (with their
// attempts) give them. With ACLs on it needs Hadoop's VIEW_JOB access
// (the owner, the administrators, mapreduce.job.acl-view-job).
func (jt *JobTracker) getTaskReports(ctx context.Context, req *mrpb.TaskReportsRequest) (*mrpb.TaskReportsResponse, error) {
	offset, limit := int(req.GetOffset()), int(req.GetLimit())
	if offset < 0 || limit < 0 {
		return nil, ipc.Errorf(ipc.ClassIllegalArgument, "getTaskReports: negative offset %d or limit %d", offset, limit)
	}
	if limit == 0 || limit > maxReportsPage {
		limit = maxReportsPage
	}
	who := jt.identify(ctx) // before the lock: the groups may come from a directory service
	page, total, err := func() ([]*mrpb.AttemptReport, int, error) {
		jt.mu.Lock()
		defer jt.mu.Unlock()
		j := jt.jobs[req.GetJobId()]
		if j == nil {
			return nil, 0, ipc.Errorf(ipc.ClassIOException, "unknown job %s (a job that finished long ago may only be in the job history: strata job -history %[1]s)", req.GetJobId())
		}
		if err := jt.checkAccess(who, j, opViewJob); err != nil {
			return nil, 0, err
		}
		page, total := pageReports(j, req.Type, offset, limit)
		return page, total, nil
	}()
	if err != nil {
		return nil, err
	}
	// Sizing the page (the counters' strings) is done without the lock.
	size, n := 0, 0
	for ; n < len(page); n++ {
		if size += proto.Size(page[n]); n > 0 && size > maxReportsBytes {
			break
		}
	}
	return &mrpb.TaskReportsResponse{Attempts: page[:n], Total: proto.Int32(int32(total)), NextOffset: proto.Int32(int32(min(offset+n, total)))}, nil
}

// pageReports is at most limit of j's attempts of typ (nil: all) from
// offset, in launch order, as shallow copies, and how many of typ there
// are. Lock held.
func pageReports(j *job, typ *mrpb.TaskType, offset, limit int) ([]*mrpb.AttemptReport, int) {
	var page []*mrpb.AttemptReport
	total := 0
	for _, id := range j.attemptOrder {
		r := j.attempts[id]
		if typ != nil && r.GetType() != *typ {
			continue
		}
		if total >= offset && len(page) < limit {
			page = append(page, shallowCopy(r))
		}
		total++
	}
	return page, total
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
