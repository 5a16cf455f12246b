package mapreduce

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"sync"
	"text/tabwriter"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/mrpb"
)

// Phases are when an attempt's phases ended (zero: not reached), with the
// meanings of Hadoop's TaskStatus. A map runs from its start to MapFinish
// reading, mapping and spilling, then merges its spills into its output
// until it finishes; a reduce fetches map outputs until ShuffleFinish,
// merges them until at most mapreduce.task.io.sort.factor segments are
// left (SortFinish), and reduces — reading the last merge as it goes —
// until it finishes.
type Phases struct {
	MapFinish     time.Time
	ShuffleFinish time.Time
	SortFinish    time.Time
	// Ready is when the child began the attempt's own work (its process
	// started and its spec read), ReadyCPU the CPU its start-up took (0
	// for a child's later attempts): strata's, not Hadoop's.
	Ready    time.Time
	ReadyCPU time.Duration
}

// AttemptReport is one task attempt's record: where it ran, when, its
// phases, what the operating system charged it and its counters.
type AttemptReport struct {
	ID   string // attempt_<job>_m_000003_0
	Type byte   // 'm', 'r' or 'c' (job cleanup)
	// Tracker and Host are the TaskTracker and its node ("" in local
	// mode).
	Tracker, Host string
	// State is RUNNING, SUCCEEDED, FAILED or KILLED.
	State string
	// Start and Finish are the attempt's span: on a cluster the child
	// process's as its TaskTracker saw it (the JobTracker's launch and
	// report times where the TaskTracker gave none).
	Start, Finish time.Time
	Phases        Phases
	// CPUUser and CPUSystem are the child process's rusage (zero in local
	// mode, where attempts share the job's process). MaxRSS is its peak
	// resident set size; BlockRead and BlockWrite its block I/O.
	CPUUser, CPUSystem    time.Duration
	MaxRSS                int64
	BlockRead, BlockWrite int64
	Counters              *Counters
	Error                 string
}

// Task is the attempt's task id part: m_000003.
func (a *AttemptReport) Task() string {
	f := strings.Split(a.ID, "_") // attempt, <job>..., m, 000003, 0
	if len(f) < 4 {
		return a.ID
	}
	return f[len(f)-3] + "_" + f[len(f)-2]
}

// ms is t in Unix milliseconds, 0 for the zero time.
func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// fromMS is Unix milliseconds as a time, the zero time for 0.
func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v)
}

// phasesProto is p as the protocol carries it.
func phasesProto(p Phases) *mrpb.TaskPhases {
	return &mrpb.TaskPhases{MapFinishMs: proto.Int64(ms(p.MapFinish)), ShuffleFinishMs: proto.Int64(ms(p.ShuffleFinish)),
		SortFinishMs: proto.Int64(ms(p.SortFinish))}
}

// AttemptReportFrom converts the JobTracker's record of an attempt.
func AttemptReportFrom(p *mrpb.AttemptReport) AttemptReport {
	r := AttemptReport{ID: p.GetAttemptId(), Tracker: p.GetTracker(), Host: p.GetHost(), State: p.GetState().String(),
		Start: fromMS(p.GetChildStartMs()), Finish: fromMS(p.GetChildFinishMs()), Error: p.GetError(), Counters: NewCounters()}
	switch p.GetType() {
	case mrpb.TaskType_MAP:
		r.Type = 'm'
	case mrpb.TaskType_REDUCE:
		r.Type = 'r'
	default:
		r.Type = 'c'
	}
	if r.Start.IsZero() {
		r.Start = fromMS(p.GetStartMs())
	}
	if r.Finish.IsZero() {
		r.Finish = fromMS(p.GetFinishMs())
	}
	ph := p.GetPhases()
	r.Phases = Phases{MapFinish: fromMS(ph.GetMapFinishMs()), ShuffleFinish: fromMS(ph.GetShuffleFinishMs()), SortFinish: fromMS(ph.GetSortFinishMs()),
		ReadyCPU: time.Duration(ph.GetReadyCpuUs()) * time.Microsecond}
	if us := ph.GetReadyUs(); us != 0 {
		r.Phases.Ready = time.UnixMicro(us)
	}
	u := p.GetUsage()
	r.CPUUser, r.CPUSystem = time.Duration(u.GetUserUs())*time.Microsecond, time.Duration(u.GetSystemUs())*time.Microsecond
	r.MaxRSS, r.BlockRead, r.BlockWrite = u.GetMaxRssBytes(), u.GetReadBytes(), u.GetWriteBytes()
	for _, c := range p.GetCounters() {
		r.Counters.Add(c.GetGroup(), c.GetName(), c.GetValue())
	}
	return r
}

// TaskReports asks the JobTracker at mapreduce.jobtracker.address of c
// for every attempt of job id, in launch order (Hadoop's
// JobClient.getMapTaskReports and getReduceTaskReports with their
// attempts).
func TaskReports(ctx context.Context, c *conf.Configuration, user, id string) ([]AttemptReport, error) {
	addr := c.Get("mapreduce.jobtracker.address")
	if addr == "" || addr == "local" {
		return nil, fmt.Errorf("mapreduce: no JobTracker (mapreduce.jobtracker.address is %q)", addr)
	}
	cl := ipc.NewClient(ipc.ClientConfig{Addr: addr, User: user, Protocol: mrpb.SubmissionProtocol})
	defer cl.Close()
	var out []AttemptReport
	// The JobTracker pages the attempts; a page ends short of the last
	// when the response would be too large.
	for offset := int32(0); ; {
		resp := &mrpb.TaskReportsResponse{}
		if err := cl.Call(ctx, "getTaskReports", &mrpb.TaskReportsRequest{JobId: proto.String(id), Offset: proto.Int32(offset)}, resp); err != nil {
			return nil, fmt.Errorf("mapreduce: task reports of %s from the jobtracker at %s: %w", id, addr, err)
		}
		for _, a := range resp.GetAttempts() {
			out = append(out, AttemptReportFrom(a))
		}
		next := resp.GetNextOffset()
		if next <= offset || next >= resp.GetTotal() {
			return out, nil
		}
		offset = next
	}
}

// attemptLog collects a local job's attempt reports.
type attemptLog struct {
	mu  sync.Mutex
	all []AttemptReport
}

// record adds att's report: it ran from start to now and ended with err.
func (l *attemptLog) record(att *TaskAttempt, start time.Time, err error) {
	r := AttemptReport{ID: att.ID(), Type: att.Type, State: "SUCCEEDED", Start: start, Finish: time.Now(), Phases: att.phases, Counters: att.counters}
	if err != nil {
		r.State, r.Error = "FAILED", err.Error()
	}
	if r.Counters == nil {
		r.Counters = NewCounters()
	}
	l.mu.Lock()
	l.all = append(l.all, r)
	l.mu.Unlock()
}

// sorted returns the reports by start time.
func (l *attemptLog) sorted() []AttemptReport {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := append([]AttemptReport(nil), l.all...)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Start.Before(out[j].Start) })
	return out
}

// PrintAttempts prints one line per attempt: where and when it ran, how
// long each phase took (map and merge of spills for a map; shuffle, merge
// and reduce for a reduce) and its CPU time.
func PrintAttempts(w io.Writer, attempts []AttemptReport) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "Attempt\tHost\tState\tStart\tElapsed\tMap|Shuffle\tMerge\tReduce\tCPU user\tCPU sys\t")
	for _, a := range attempts {
		phases := [3]string{"-", "-", "-"}
		if p := a.PhaseDurations(); p != nil {
			for i, d := range p {
				phases[i] = d.Round(time.Millisecond).String()
			}
		}
		start := "-"
		if !a.Start.IsZero() {
			start = a.Start.Format("15:04:05.000")
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", a.ID, orDash(a.Host), a.State, start, a.Elapsed().Round(time.Millisecond),
			phases[0], phases[1], phases[2], a.CPUUser.Round(time.Millisecond), a.CPUSystem.Round(time.Millisecond))
	}
	tw.Flush()
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// Elapsed is the attempt's span (0 while it runs).
func (a *AttemptReport) Elapsed() time.Duration {
	if a.Start.IsZero() || a.Finish.IsZero() {
		return 0
	}
	return a.Finish.Sub(a.Start)
}

// PhaseDurations are a finished attempt's phases: for a map, map (read,
// map, spills) and merge of the spills, and a zero third; for a reduce,
// shuffle, merge and reduce. nil when the attempt has no phase times.
func (a *AttemptReport) PhaseDurations() []time.Duration {
	if a.Start.IsZero() || a.Finish.IsZero() {
		return nil
	}
	p := a.Phases
	switch a.Type {
	case 'm':
		if p.MapFinish.IsZero() {
			return nil
		}
		return []time.Duration{p.MapFinish.Sub(a.Start), a.Finish.Sub(p.MapFinish), 0}
	case 'r':
		if p.ShuffleFinish.IsZero() || p.SortFinish.IsZero() {
			return nil
		}
		return []time.Duration{p.ShuffleFinish.Sub(a.Start), p.SortFinish.Sub(p.ShuffleFinish), a.Finish.Sub(p.SortFinish)}
	}
	return nil
}
