package jobtracker

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net"
	"sort"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/taskrun"
	"github.com/stratafs/strata/mapreduce"
)

// Protocol names.
const (
	SubmissionProtocol   = mrpb.SubmissionProtocol
	InterTrackerProtocol = mrpb.InterTrackerProtocol
)

// JobTracker is the daemon. Lifecycle: New → Start → Close.
type JobTracker struct {
	cfg Config
	log *slog.Logger
	srv *ipc.Server
	ln  net.Listener

	mu       sync.Mutex
	jobs     map[string]*job
	order    []string
	trackers map[string]*tracker
	seq      int
	started  int64

	stop      chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
	// background are job commits, aborts and history writes; Close waits
	// for them. They are started by RPC handlers and the monitor (which
	// Close stops first) or by other background work, so none starts once
	// Close waits.
	background sync.WaitGroup
}

type tracker struct {
	name, host, url string
	// ip is the address the tracker's heartbeats come from: a split's
	// hosts may name DataNodes by address rather than by host name.
	ip       string
	lastSeen time.Time
	// started identifies the tracker's process (HeartbeatRequest.started_ns).
	started  int64
	kill     []string
	doneJobs []string
}

type taskState int

const (
	pending taskState = iota
	running
	done
)

type task struct {
	isMap    bool
	index    int
	state    taskState
	attempts int // attempts started
	failures int
	split    *mrpb.InputSplit
	// For a finished map: where its output is served.
	tracker, url, attemptID string
	running                 map[string]string // attempt id → tracker name
	startedAt               map[string]time.Time
	lastError               string
	took                    time.Duration // the successful attempt's run time
	speculated              bool
	// committer is the attempt last allowed to commit its output; another
	// attempt may commit only once it has ended unsuccessfully.
	committer string
	// losers are the other attempts (→ tracker) told to die when one
	// succeeded, until they are reported ended or their tracker is lost.
	// The job commits only once no task has any, so that a loser still
	// writing cannot put files under the output after _temporary is gone.
	losers map[string]string
}

type job struct {
	id       string
	spec     *mrpb.JobSpec
	name     string
	user     string
	settings map[string]string
	maps     []*task
	reduces  []*task
	state    mrpb.JobState
	err      string
	counters *mapreduce.Counters
	start    time.Time
	finish   time.Time
	commit   *mapreduce.Committer
	// committing: every task is done and the output is being committed
	// (outside the lock); the job can no longer be killed.
	committing bool
	maxMap     int
	maxRed     int
	// speculateMaps, speculateReduces: a task may get a second attempt
	// once it runs longer than lag and twice its finished peers' mean.
	speculateMaps, speculateReduces bool
	lag                             time.Duration
	// slowstart: reduces start once this many maps are done
	// (mapreduce.job.reduce.slowstart.completedmaps of the maps).
	slowstart int
	// events are the job's map completions in order, for reduces started
	// before every map was done.
	events []*mrpb.MapCompletionEvent
}

// New returns a JobTracker; it does not listen until Start, which
// validates cfg.
func New(cfg Config) *JobTracker {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Clock == nil {
		cfg.Clock = time.Now
	}
	jt := &JobTracker{cfg: cfg, log: cfg.Logger, jobs: map[string]*job{}, trackers: map[string]*tracker{},
		stop: make(chan struct{})}
	jt.started = jt.now().UnixMilli()
	jt.srv = ipc.NewServer(ipc.ServerConfig{Logger: cfg.Logger})
	jt.srv.Register(SubmissionProtocol, map[string]ipc.Method{
		"submitJob":    ipc.Unary(jt.submitJob),
		"getJobStatus": ipc.Unary(jt.getJobStatus),
		"killJob":      ipc.Unary(jt.killJob),
		"listJobs":     ipc.Unary(jt.listJobs),
	})
	jt.srv.Register(InterTrackerProtocol, map[string]ipc.Method{
		"heartbeat": ipc.Unary(jt.heartbeat),
	})
	jt.srv.Register(taskrun.UmbilicalProtocol, map[string]ipc.Method{
		"getMapCompletionEvents": ipc.Unary(jt.getMapCompletionEvents),
	})
	return jt
}

// now is the time by cfg.Clock.
func (jt *JobTracker) now() time.Time { return jt.cfg.Clock() }

// Start listens and starts the tracker monitor.
func (jt *JobTracker) Start() error {
	if err := jt.cfg.Validate(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", jt.cfg.Addr)
	if err != nil {
		return fmt.Errorf("jobtracker: %w", err)
	}
	jt.ln = ln
	jt.wg.Add(2)
	go func() { defer jt.wg.Done(); jt.srv.Serve(ln) }()
	go func() { defer jt.wg.Done(); jt.monitor() }()
	jt.log.Info("jobtracker: serving", "addr", ln.Addr().String())
	return nil
}

// Addr is the bound RPC address.
func (jt *JobTracker) Addr() string { return jt.ln.Addr().String() }

// Close stops the daemon. Safe to call twice.
func (jt *JobTracker) Close() error {
	jt.closeOnce.Do(func() {
		close(jt.stop)
		jt.srv.Close()
		jt.wg.Wait()
		jt.background.Wait()
	})
	return nil
}

// goBackground runs f in its own goroutine, which Close waits for.
func (jt *JobTracker) goBackground(f func()) {
	jt.background.Add(1)
	go func() {
		defer jt.background.Done()
		f()
	}()
}

func (jt *JobTracker) monitor() {
	t := time.NewTicker(min(jt.cfg.TrackerExpiry/4, time.Second))
	defer t.Stop()
	for {
		select {
		case <-jt.stop:
			return
		case <-t.C:
			jt.expireTrackers()
		}
	}
}

// expireTrackers declares lost the trackers silent for longer than
// cfg.TrackerExpiry and re-queues their work.
func (jt *JobTracker) expireTrackers() {
	jt.mu.Lock()
	defer jt.mu.Unlock()
	now := jt.now()
	for name, tr := range jt.trackers {
		if now.Sub(tr.lastSeen) > jt.cfg.TrackerExpiry {
			jt.log.Warn("jobtracker: lost tasktracker", "tracker", name)
			delete(jt.trackers, name)
			jt.trackerLost(name)
		}
	}
}

// trackerLost re-queues the attempts that ran on a lost tracker and the
// maps whose output died with it (while reduces still need them). Lock
// held.
func (jt *JobTracker) trackerLost(name string) {
	for _, j := range jt.jobs {
		if j.state != mrpb.JobState_RUNNING {
			continue
		}
		reducesLeft := false
		for _, r := range j.reduces {
			reducesLeft = reducesLeft || r.state != done
		}
		for _, t := range append(append([]*task{}, j.maps...), j.reduces...) {
			for att, tr := range t.running {
				if tr == name {
					delete(t.running, att)
				}
			}
			for att, tr := range t.losers {
				if tr == name {
					delete(t.losers, att)
				}
			}
			if t.state == running && len(t.running) == 0 {
				t.state = pending
			}
			if t.isMap && t.state == done && t.tracker == name && reducesLeft {
				jt.log.Info("jobtracker: re-running map lost with its tracker", "job", j.id, "map", t.index)
				t.state, t.tracker, t.url, t.attemptID = pending, "", "", ""
			}
		}
		jt.checkDone(j) // its last losers may have gone with the tracker
	}
}

func (jt *JobTracker) submitJob(ctx context.Context, req *mrpb.SubmitJobRequest) (*mrpb.SubmitJobResponse, error) {
	spec := req.GetSpec()
	c := conf.New()
	settings := map[string]string{}
	for _, kv := range spec.GetConf() {
		c.Set(kv.GetKey(), kv.GetValue())
		settings[kv.GetKey()] = kv.GetValue()
	}
	user := spec.GetUser()
	if caller, ok := ipc.CallerFrom(ctx); ok && user == "" {
		user = caller.User
	}
	splits := spec.GetSplits()
	for i, sp := range splits {
		if sp == nil || sp.GetIndex() < 0 {
			return nil, ipc.Errorf(ipc.ClassIllegalArgument, "job %q: bad input split %d", spec.GetJob(), i)
		}
	}
	spec.Splits = nil // kept in the job's tasks
	if spec.GetNumReduces() < 0 || spec.GetNumReduces() > 100000 || spec.GetOutputPath() == "" {
		return nil, ipc.Errorf(ipc.ClassIllegalArgument, "job %q: %d reduces, output %q", spec.GetJob(), spec.GetNumReduces(), spec.GetOutputPath())
	}
	env := fs.Env{Conf: c, User: user}.WithDefaults()
	commit, err := mapreduce.NewCommitter(env, c, spec.GetOutputPath())
	if err == nil {
		err = commit.SetupJob(ctx)
	}
	if err != nil {
		return nil, ipc.Errorf(ipc.ClassIOException, "%v", err)
	}
	maxAttempts := func(key string) int {
		n, err := c.GetInt(key)
		if err != nil || n < 1 {
			return 4
		}
		return int(n)
	}
	jt.mu.Lock()
	defer jt.mu.Unlock()
	jt.seq++
	j := &job{
		id: fmt.Sprintf("job_%d_%04d", jt.started, jt.seq), spec: spec, name: spec.GetName(), user: user, settings: settings,
		state: mrpb.JobState_RUNNING, counters: mapreduce.NewCounters(), start: jt.now(), commit: commit,
		maxMap: maxAttempts(keyMapMaxAttempts), maxRed: maxAttempts(keyReduceMaxAttempts),
	}
	j.speculateMaps, _ = c.GetBool(keyMapSpeculative)
	j.speculateReduces, _ = c.GetBool(keyReduceSpeculative)
	if j.lag, err = c.GetDuration(keySpeculativeLag, time.Millisecond); err != nil || j.lag <= 0 {
		j.lag = time.Minute
	}
	for _, sp := range splits {
		j.maps = append(j.maps, &task{isMap: true, index: int(sp.GetIndex()), split: sp, running: map[string]string{}})
	}
	sort.Slice(j.maps, func(a, b int) bool { return j.maps[a].index < j.maps[b].index })
	frac, err := c.GetFloat(keySlowstart)
	if err != nil || !(frac >= 0 && frac <= 1) { // NaN too
		frac = 1
	}
	j.slowstart = int(math.Ceil(frac * float64(len(j.maps))))
	for r := 0; r < int(spec.GetNumReduces()); r++ {
		j.reduces = append(j.reduces, &task{index: r, running: map[string]string{}})
	}
	jt.jobs[j.id] = j
	jt.order = append(jt.order, j.id)
	jt.log.Info("jobtracker: job submitted", "job", j.id, "name", j.name, "maps", len(j.maps), "reduces", len(j.reduces), "user", user)
	jt.checkDone(j)
	return &mrpb.SubmitJobResponse{JobId: proto.String(j.id)}, nil
}

func (jt *JobTracker) status(j *job) *mrpb.JobStatus {
	st := &mrpb.JobStatus{
		JobId: proto.String(j.id), Name: proto.String(j.name), State: j.state.Enum(), User: proto.String(j.user),
		Maps: proto.Int32(int32(len(j.maps))), Reduces: proto.Int32(int32(len(j.reduces))),
		Error: proto.String(j.err), StartMs: proto.Int64(j.start.UnixMilli()),
	}
	if !j.finish.IsZero() {
		st.FinishMs = proto.Int64(j.finish.UnixMilli())
	}
	var md, rd int32
	for _, t := range j.maps {
		if t.state == done {
			md++
		}
	}
	for _, t := range j.reduces {
		if t.state == done {
			rd++
		}
	}
	st.MapsDone, st.ReducesDone = proto.Int32(md), proto.Int32(rd)
	for _, g := range j.counters.Groups() {
		for _, cv := range j.counters.Group(g) {
			st.Counters = append(st.Counters, &mrpb.Counter{Group: proto.String(g), Name: proto.String(cv.Name), Value: proto.Int64(cv.Value)})
		}
	}
	return st
}

func (jt *JobTracker) getJobStatus(ctx context.Context, req *mrpb.JobIDRequest) (*mrpb.JobStatusResponse, error) {
	jt.mu.Lock()
	defer jt.mu.Unlock()
	j := jt.jobs[req.GetJobId()]
	if j == nil {
		return nil, ipc.Errorf(ipc.ClassIOException, "unknown job %s (a job that finished long ago may only be in the job history: strata job -history %[1]s)", req.GetJobId())
	}
	return &mrpb.JobStatusResponse{Status: jt.status(j)}, nil
}

func (jt *JobTracker) listJobs(ctx context.Context, _ *mrpb.ListJobsRequest) (*mrpb.ListJobsResponse, error) {
	jt.mu.Lock()
	defer jt.mu.Unlock()
	resp := &mrpb.ListJobsResponse{}
	for _, id := range jt.order {
		resp.Jobs = append(resp.Jobs, jt.status(jt.jobs[id]))
	}
	return resp, nil
}

func (jt *JobTracker) killJob(ctx context.Context, req *mrpb.JobIDRequest) (*mrpb.KillJobResponse, error) {
	jt.mu.Lock()
	defer jt.mu.Unlock()
	j := jt.jobs[req.GetJobId()]
	if j == nil {
		return nil, ipc.Errorf(ipc.ClassIOException, "unknown job %s", req.GetJobId())
	}
	if j.committing {
		return nil, ipc.Errorf(ipc.ClassIOException, "job %s is committing its output and can no longer be killed", j.id)
	}
	if j.state == mrpb.JobState_RUNNING {
		jt.endJob(j, mrpb.JobState_KILLED, "killed by "+callerName(ctx))
	}
	return &mrpb.KillJobResponse{}, nil
}

func callerName(ctx context.Context) string {
	if c, ok := ipc.CallerFrom(ctx); ok {
		return c.User
	}
	return "?"
}

// endJob finishes a job that did not succeed: its running attempts are
// killed and its temporary output removed. Lock held.
func (jt *JobTracker) endJob(j *job, state mrpb.JobState, msg string) {
	j.state, j.err, j.finish = state, msg, jt.now()
	h := jt.history(j)
	jt.goBackground(func() { jt.writeHistory(j.settings, h) })
	for _, t := range append(append([]*task{}, j.maps...), j.reduces...) {
		for att, name := range t.running {
			if tr := jt.trackers[name]; tr != nil {
				tr.kill = append(tr.kill, att)
			}
		}
	}
	for _, tr := range jt.trackers {
		tr.doneJobs = append(tr.doneJobs, j.id)
	}
	jt.goBackground(func() { j.commit.AbortJob(context.Background()) })
	jt.log.Info("jobtracker: job ended", "job", j.id, "state", state, "reason", msg)
	jt.retire()
}

// retire forgets the oldest finished jobs beyond cfg.RetiredJobs. Lock
// held.
func (jt *JobTracker) retire() {
	finished := 0
	for _, id := range jt.order {
		if jt.jobs[id].state != mrpb.JobState_RUNNING {
			finished++
		}
	}
	keep := jt.order[:0]
	for _, id := range jt.order {
		if finished > jt.cfg.RetiredJobs && jt.jobs[id].state != mrpb.JobState_RUNNING {
			delete(jt.jobs, id)
			finished--
			continue
		}
		keep = append(keep, id)
	}
	jt.order = keep
}

// checkDone commits a job whose tasks are all done, in the background:
// committing writes to the file system, and heartbeats go on meanwhile.
// Lock held.
func (jt *JobTracker) checkDone(j *job) {
	if j.state != mrpb.JobState_RUNNING || j.committing {
		return
	}
	last := j.reduces
	if len(last) == 0 {
		last = j.maps
	}
	for _, t := range last {
		if t.state != done {
			return
		}
	}
	for _, t := range append(append([]*task{}, j.maps...), j.reduces...) {
		if len(t.losers) > 0 {
			return // checked again when they are gone
		}
	}
	j.committing = true
	jt.goBackground(func() {
		err := j.commit.CommitJob(context.Background())
		jt.mu.Lock()
		defer jt.mu.Unlock()
		if err != nil {
			jt.endJob(j, mrpb.JobState_FAILED, "commit: "+err.Error())
			return
		}
		j.state, j.finish = mrpb.JobState_SUCCEEDED, jt.now()
		h := jt.history(j)
		jt.goBackground(func() { jt.writeHistory(j.settings, h) })
		for _, tr := range jt.trackers {
			tr.doneJobs = append(tr.doneJobs, j.id)
		}
		jt.log.Info("jobtracker: job succeeded", "job", j.id, "elapsed", j.finish.Sub(j.start).Round(time.Millisecond))
		jt.retire()
	})
}

func (jt *JobTracker) heartbeat(ctx context.Context, req *mrpb.HeartbeatRequest) (*mrpb.HeartbeatResponse, error) {
	jt.mu.Lock()
	defer jt.mu.Unlock()
	name := req.GetTracker()
	if name == "" {
		return nil, ipc.Errorf(ipc.ClassIllegalArgument, "heartbeat without a tracker name")
	}
	tr := jt.trackers[name]
	if tr != nil && tr.started != req.GetStartedNs() {
		// The same host:port, a new process: its attempts and map outputs
		// died with the old one.
		jt.log.Warn("jobtracker: tasktracker restarted", "tracker", name)
		delete(jt.trackers, name)
		jt.trackerLost(name)
		tr = nil
	}
	if tr == nil {
		tr = &tracker{name: name, started: req.GetStartedNs()}
		jt.trackers[name] = tr
		jt.log.Info("jobtracker: tasktracker joined", "tracker", name, "host", req.GetHost())
	}
	tr.host, tr.url, tr.lastSeen = req.GetHost(), req.GetHttpUrl(), jt.now()
	if c, ok := ipc.CallerFrom(ctx); ok && c.Remote != nil {
		if h, _, err := net.SplitHostPort(c.Remote.String()); err == nil {
			tr.ip = h
		}
	}
	for _, rep := range req.GetReports() {
		jt.report(tr, rep)
	}
	var commit []string
	for _, att := range req.GetCommitPending() {
		if jt.canCommit(tr, att) {
			commit = append(commit, att)
		}
	}
	resp := &mrpb.HeartbeatResponse{IntervalMs: proto.Int32(int32(jt.cfg.HeartbeatInterval.Milliseconds())),
		KillAttempts: tr.kill, DoneJobs: tr.doneJobs, CommitAttempts: commit}
	tr.kill, tr.doneJobs = nil, nil
	jt.assign(tr, int(req.GetFreeMapSlots()), int(req.GetFreeReduceSlots()), resp)
	return resp, nil
}

// report applies one attempt's report. Lock held.
func (jt *JobTracker) report(tr *tracker, rep *mrpb.TaskReport) {
	j, t := jt.find(rep.GetAttemptId())
	if t == nil || j.state != mrpb.JobState_RUNNING {
		return
	}
	if _, ok := t.losers[rep.GetAttemptId()]; ok {
		delete(t.losers, rep.GetAttemptId()) // a loser ended, however
		jt.checkDone(j)
		return
	}
	if _, ok := t.running[rep.GetAttemptId()]; !ok {
		return // a late report of an attempt already written off
	}
	res := rep.GetResult()
	switch rep.GetState() {
	case mrpb.TaskReport_SUCCEEDED:
		t.took = jt.now().Sub(t.startedAt[rep.GetAttemptId()])
		delete(t.running, rep.GetAttemptId())
		if t.state == done {
			return
		}
		t.state = done
		// The other attempt of a speculated task loses.
		for att, name := range t.running {
			if other := jt.trackers[name]; other != nil {
				other.kill = append(other.kill, att)
				if t.losers == nil {
					t.losers = map[string]string{}
				}
				t.losers[att] = name
			}
			delete(t.running, att)
		}
		if t.isMap {
			t.tracker, t.url, t.attemptID = tr.name, tr.url, rep.GetAttemptId()
			j.events = append(j.events, &mrpb.MapCompletionEvent{MapIndex: proto.Int32(int32(t.index)),
				AttemptId: proto.String(t.attemptID), Url: proto.String(t.url)})
		}
		for _, cv := range res.GetCounters() {
			j.counters.Add(cv.GetGroup(), cv.GetName(), cv.GetValue())
		}
		jt.checkDone(j)
	case mrpb.TaskReport_FAILED, mrpb.TaskReport_KILLED:
		delete(t.running, rep.GetAttemptId())
		t.lastError = res.GetError()
		// A reduce that could not fetch some map outputs is not at fault:
		// the maps run again and the reduce retries without a failure.
		if rep.GetState() == mrpb.TaskReport_FAILED && len(res.GetFailedMaps()) == 0 {
			t.failures++
			kind, max := mapreduce.FailedReduces, j.maxRed
			if t.isMap {
				kind, max = mapreduce.FailedMaps, j.maxMap
			}
			j.counters.Add(mapreduce.GroupJob, kind, 1)
			if t.failures >= max {
				typ := "r"
				if t.isMap {
					typ = "m"
				}
				jt.endJob(j, mrpb.JobState_FAILED, fmt.Sprintf("task %s_%06d failed %d times; last error: %s", typ, t.index, t.failures, t.lastError))
				return
			}
		}
		if len(t.running) == 0 && t.state == running {
			t.state = pending
		}
		// Maps whose output a reducer could not fetch run again.
		for _, att := range res.GetFailedMaps() {
			for _, m := range j.maps {
				if m.attemptID == att && m.state == done {
					jt.log.Info("jobtracker: re-running map after fetch failures", "job", j.id, "map", m.index)
					m.state, m.tracker, m.url, m.attemptID = pending, "", "", ""
				}
			}
		}
	}
}

// canCommit is Hadoop's commit arbitration: an attempt of tr that asks to
// commit its output may, unless its task is already done or another
// attempt of it, still running, was allowed first. Lock held.
func (jt *JobTracker) canCommit(tr *tracker, att string) bool {
	j, t := jt.find(att)
	if t != nil && t.losers[att] == tr.name {
		tr.kill = append(tr.kill, att) // the first kill may have been lost
		return false
	}
	if t == nil || j.state != mrpb.JobState_RUNNING || t.state == done || t.running[att] != tr.name {
		return false
	}
	if t.committer != att {
		if _, busy := t.running[t.committer]; busy {
			return false
		}
		t.committer = att
		jt.log.Info("jobtracker: attempt may commit", "attempt", att)
	}
	return true
}

// getMapCompletionEvents gives a reduce the job's map completions from
// the one it asks for on.
func (jt *JobTracker) getMapCompletionEvents(ctx context.Context, req *mrpb.MapCompletionEventsRequest) (*mrpb.MapCompletionEventsResponse, error) {
	jt.mu.Lock()
	defer jt.mu.Unlock()
	j := jt.jobs[req.GetJobId()]
	if j == nil {
		// Retired, or this JobTracker restarted: the reduce cannot go on.
		return &mrpb.MapCompletionEventsResponse{JobState: mrpb.JobState_UNKNOWN.Enum()}, nil
	}
	from := int(req.GetFromIndex())
	if from < 0 || from > len(j.events) {
		return nil, ipc.Errorf(ipc.ClassIllegalArgument, "job %s: event index %d out of [0, %d]", j.id, from, len(j.events))
	}
	return &mrpb.MapCompletionEventsResponse{Events: j.events[from:], JobState: j.state.Enum()}, nil
}

// find returns the running job and task of a running or losing attempt
// id (the finished jobs kept for -status have nothing to find). Lock held.
func (jt *JobTracker) find(attempt string) (*job, *task) {
	for _, j := range jt.jobs {
		if j.state != mrpb.JobState_RUNNING {
			continue
		}
		for _, t := range append(append([]*task{}, j.maps...), j.reduces...) {
			_, running := t.running[attempt]
			_, losing := t.losers[attempt]
			if running || losing {
				return j, t
			}
		}
	}
	return nil, nil
}

// assign fills free slots with pending tasks of running jobs, first come
// first served; maps whose split is on the tracker's host first. Reduces
// start once the job's slow-start share of its maps is done and fetch the
// rest as they finish (getMapCompletionEvents). Lock held.
func (jt *JobTracker) assign(tr *tracker, mapSlots, reduceSlots int, resp *mrpb.HeartbeatResponse) {
	for _, id := range jt.order {
		j := jt.jobs[id]
		if j.state != mrpb.JobState_RUNNING {
			continue
		}
		for _, local := range []bool{true, false} {
			for _, t := range j.maps {
				if mapSlots == 0 {
					break
				}
				hosts := t.split.GetHosts()
				isLocal := contains(hosts, tr.host) || (tr.ip != "" && contains(hosts, tr.ip))
				if t.state != pending || local != isLocal {
					continue
				}
				if local {
					j.counters.Add(mapreduce.GroupJob, mapreduce.DataLocalMaps, 1)
				} else {
					j.counters.Add(mapreduce.GroupJob, mapreduce.RemoteMaps, 1)
				}
				jt.launch(j, t, tr, resp)
				mapSlots--
			}
		}
		if j.speculateMaps {
			mapSlots = jt.speculate(j, j.maps, tr, mapSlots, resp)
		}
		mapsDone := 0
		for _, t := range j.maps {
			if t.state == done {
				mapsDone++
			}
		}
		if mapsDone < j.slowstart {
			continue
		}
		for _, t := range j.reduces {
			if reduceSlots == 0 {
				break
			}
			if t.state == pending {
				jt.launch(j, t, tr, resp)
				reduceSlots--
			}
		}
		if j.speculateReduces {
			reduceSlots = jt.speculate(j, j.reduces, tr, reduceSlots, resp)
		}
	}
}

// speculate gives free slots to second attempts of stragglers among
// tasks (the job's maps or its reduces): tasks running, on one attempt on
// another tracker, for longer than the job's lag and twice the mean time
// of their finished peers. Which attempt's output counts is settled by
// commit arbitration (canCommit); the first to succeed wins and the other
// is killed. It returns the slots left. Lock held.
func (jt *JobTracker) speculate(j *job, tasks []*task, tr *tracker, slots int, resp *mrpb.HeartbeatResponse) int {
	var sum time.Duration
	n := 0
	for _, t := range tasks {
		if t.state == pending {
			return slots // real work first
		}
		if t.state == done {
			sum += t.took
			n++
		}
	}
	if n == 0 {
		return slots
	}
	mean := sum / time.Duration(n)
	for _, t := range tasks {
		if slots == 0 {
			break
		}
		if t.state != running || t.speculated || len(t.running) != 1 {
			continue
		}
		for att, name := range t.running {
			if age := jt.now().Sub(t.startedAt[att]); name != tr.name && age > j.lag && age > 2*mean {
				kind := "reduce"
				if t.isMap {
					kind = "map"
					j.counters.Add(mapreduce.GroupJob, mapreduce.RemoteMaps, 1)
				}
				jt.log.Info("jobtracker: speculating a slow "+kind, "job", j.id, kind, t.index, "running", age.Round(time.Millisecond),
					"mean", mean.Round(time.Millisecond), "tracker", tr.name)
				t.speculated = true
				jt.launch(j, t, tr, resp)
				slots--
			}
		}
	}
	return slots
}

func contains(ss []string, s string) bool {
	for _, x := range ss {
		if x == s {
			return true
		}
	}
	return false
}

// launch starts an attempt of t on tr. Lock held.
func (jt *JobTracker) launch(j *job, t *task, tr *tracker, resp *mrpb.HeartbeatResponse) {
	typ := byte('r')
	if t.isMap {
		typ = 'm'
	}
	att := &mapreduce.TaskAttempt{JobID: j.id, Type: typ, Task: t.index, Attempt: t.attempts}
	t.attempts++
	kind := mrpb.TaskType_REDUCE
	if t.isMap {
		kind = mrpb.TaskType_MAP
	}
	spec := &mrpb.TaskSpec{Job: j.spec.Job, Args: j.spec.GetArgs(), Conf: j.settings, User: proto.String(j.user),
		JobId: proto.String(j.id), Type: kind.Enum(), Task: proto.Int32(int32(t.index)), Attempt: proto.Int32(int32(att.Attempt)),
		Reducers: proto.Int32(int32(len(j.reduces))), Executable: j.spec.Executable}
	if t.isMap {
		spec.Split = t.split
		j.counters.Add(mapreduce.GroupJob, mapreduce.LaunchedMaps, 1)
	} else {
		spec.NumMaps = proto.Int32(int32(len(j.maps)))
		spec.MapEvents = proto.Int32(int32(len(j.events)))
		for _, m := range j.maps {
			if m.state == done {
				spec.Maps = append(spec.Maps, &mrpb.MapCompletionEvent{AttemptId: proto.String(m.attemptID), Url: proto.String(m.url), MapIndex: proto.Int32(int32(m.index))})
			}
		}
		j.counters.Add(mapreduce.GroupJob, mapreduce.LaunchedReduces, 1)
	}
	t.state = running
	t.running[att.ID()] = tr.name
	if t.startedAt == nil {
		t.startedAt = map[string]time.Time{}
	}
	t.startedAt[att.ID()] = jt.now()
	resp.Launch = append(resp.Launch, &mrpb.LaunchTask{AttemptId: proto.String(att.ID()), JobId: proto.String(j.id), Spec: spec})
}
