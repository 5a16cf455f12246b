package jobtracker

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"net"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/jobtoken"
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
	// held counts the calls held waiting for a job's change (holder).
	held atomic.Int32

	mu       sync.Mutex
	jobs     map[string]*job
	order    []string
	trackers map[string]*tracker
	seq      int
	started  int64

	// tokenOps renews and cancels the jobs' delegation tokens (tokens.go).
	tokenOps tokenOps

	stop chan struct{}
	// stopCtx is cancelled with stop: it ends the peer calls of the
	// token renewals.
	stopCtx    context.Context
	stopCancel context.CancelFunc
	wg         sync.WaitGroup
	closeOnce  sync.Once
	// background are history writes; Close waits for them. They are
	// started by RPC handlers and the monitor (which Close stops first),
	// so none starts once Close waits.
	background sync.WaitGroup

	// ui is the web UI's server and its record of attempts (webui.go).
	ui webState
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
	isMap bool
	// cleanup: the job's JOB_CLEANUP task, which commits or aborts its
	// output on a TaskTracker.
	cleanup  bool
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
	// secret is the job's shuffle secret (jobtoken), sent with each of
	// its attempts to their TaskTrackers.
	secret []byte
	// modify are those besides the owner and the administrators who may
	// kill the job (mapreduce.job.acl-modify-job).
	modify ACL
	// view are those besides the owner and the administrators who may
	// read its task reports and see its pages and configuration
	// (mapreduce.job.acl-view-job).
	view ACL
	// cleanup is the job's JOB_CLEANUP task once it has one: when every
	// task is done (commit: cleanupState SUCCEEDED) or when the job failed
	// or was killed (abort). It runs on a TaskTracker as the job's user;
	// the JobTracker itself touches no path the job names.
	cleanup      *task
	cleanupState mrpb.JobState
	// committing: every task is done and the output is being committed
	// (the cleanup task runs); the job can no longer be killed.
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
	// before every map was done. changed is closed (and replaced) when a
	// task finishes (a map's event is added) or the job ends, waking the
	// calls held for that (getMapCompletionEvents' and getJobStatus'
	// wait_ms; hold).
	events  []*mrpb.MapCompletionEvent
	changed chan struct{}
	// attempts are every attempt launched, by id, and attemptOrder their
	// ids in launch order (accounting.go).
	attempts     map[string]*mrpb.AttemptReport
	attemptOrder []string
	// countersTrimmed: the attempts' counters were dropped (an old
	// finished job).
	countersTrimmed bool
	// historyWritten is closed when the history written as the job
	// ended is stored; a rewrite (with the cleanup attempt) waits for
	// it.
	historyWritten chan struct{}
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
		stop: make(chan struct{}), tokenOps: hdfsTokenOps{c: cfg.HistoryConf}}
	jt.stopCtx, jt.stopCancel = context.WithCancel(context.Background())
	if jt.cfg.User == "" {
		jt.cfg.User = conf.New().Get("user.name")
	}
	if jt.cfg.Groups == nil {
		jt.cfg.Groups = osGroups
	}
	jt.started = jt.now().UnixMilli()
	ic := cfg.IPC
	ic.Logger = cfg.Logger
	jt.srv = ipc.NewServer(ic)
	jt.register(SubmissionProtocol, map[string]ipc.Method{
		"submitJob":      ipc.Unary(jt.submitJob),
		"getJobStatus":   ipc.Unary(jt.getJobStatus),
		"killJob":        ipc.Unary(jt.killJob),
		"listJobs":       ipc.Unary(jt.listJobs),
		"getTaskReports": ipc.Unary(jt.getTaskReports),
	})
	jt.register(InterTrackerProtocol, map[string]ipc.Method{
		"heartbeat": ipc.Unary(jt.heartbeat),
	})
	jt.register(taskrun.UmbilicalProtocol, map[string]ipc.Method{
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
	if err := jt.secureRPC(); err != nil {
		return err
	}
	ln, err := net.Listen("tcp", jt.cfg.Addr)
	if err != nil {
		return fmt.Errorf("jobtracker: %w", err)
	}
	jt.ln = ln
	if err := jt.startHTTP(); err != nil {
		ln.Close()
		return err
	}
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
		jt.stopCancel()
		jt.stopHTTP()
		jt.srv.Close()
		if jt.ln != nil {
			// Serve may not have taken the listener yet (a Close right
			// after Start), and then the server does not close it.
			jt.ln.Close()
		}
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
	jt.noteLost(name)
	jt.ui.attempts.trackerLost(name, jt.now())
	for _, j := range jt.jobs {
		if c := j.cleanup; c != nil {
			for att, tr := range c.running {
				if tr == name {
					delete(c.running, att)
				}
			}
			if c.state == running && len(c.running) == 0 {
				c.state = pending
			}
		}
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
				j.wakeWaiters()
			}
		}
		jt.checkDone(j) // its last losers may have gone with the tracker
	}
}

func (jt *JobTracker) submitJob(ctx context.Context, req *mrpb.SubmitJobRequest) (*mrpb.SubmitJobResponse, error) {
	spec := req.GetSpec()
	// The job is the caller's, whatever the spec says (Hadoop's
	// JobTracker takes the submitter from the connection too).
	caller, ok := ipc.CallerFrom(ctx)
	if !ok || caller.User == "" {
		return nil, ipc.Errorf(ipc.ClassAccessControl, "job %q: no caller identity", spec.GetJob())
	}
	user := caller.User
	if spec.GetUser() != "" && spec.GetUser() != user {
		jt.log.Warn("jobtracker: job spec names another user; the job runs as its submitter", "claimed", spec.GetUser(), "user", user)
	}
	spec.User = &user
	c := conf.New()
	settings := map[string]string{}
	for _, kv := range spec.GetConf() {
		c.Set(kv.GetKey(), kv.GetValue())
		settings[kv.GetKey()] = kv.GetValue()
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
	toks, err := jobCredentials(spec)
	if err != nil {
		return nil, err
	}
	cancelTokens := true
	if v, err := c.GetBool(keyCancelTokens); err == nil && c.Get(keyCancelTokens) != "" {
		cancelTokens = v
	}
	var renewed []renewedToken
	if len(toks) > 0 {
		ip := ""
		if ta, ok := caller.Remote.(*net.TCPAddr); ok {
			ip = ta.IP.String()
		}
		// Before the lock: the renewals talk to NameNodes.
		if renewed, err = jt.verifyTokens(ctx, spec.GetJob(), user, ip, jt.jobServices(c), toks); err != nil {
			return nil, err
		}
	}
	// No output setup here: attempts create their work directories, and
	// the job's cleanup task commits or aborts on a TaskTracker.
	secret, err := jobtoken.NewSecret(nil)
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
		state: mrpb.JobState_RUNNING, counters: mapreduce.NewCounters(), start: jt.now(), secret: secret,
		modify: ParseACL(c.Get(keyACLModifyJob)), view: ParseACL(c.Get(keyACLViewJob)),
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
	if len(renewed) > 0 {
		jt.goBackground(func() { jt.manageTokens(j, renewed, cancelTokens) })
	}
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

// getJobStatus answers with the job's status; with wait_ms, once the job
// has ended or its count of finished tasks is no longer seen_done.
func (jt *JobTracker) getJobStatus(ctx context.Context, req *mrpb.JobIDRequest) (*mrpb.JobStatusResponse, error) {
	var h holder
	defer h.release(jt)
	jt.mu.Lock()
	defer jt.mu.Unlock()
	var held *job
	for {
		j := jt.jobs[req.GetJobId()]
		if j == nil && held != nil {
			j = held // it ended and was retired while the call waited
		}
		if j == nil {
			return nil, ipc.Errorf(ipc.ClassIOException, "unknown job %s (a job that finished long ago may only be in the job history: strata job -history %[1]s)", req.GetJobId())
		}
		held = j
		st := jt.status(j)
		if st.GetState() != mrpb.JobState_RUNNING || st.GetMapsDone()+st.GetReducesDone() != req.GetSeenDone() ||
			!h.wait(ctx, jt, j, time.Duration(req.GetWaitMs())*time.Millisecond) {
			return &mrpb.JobStatusResponse{Status: st}, nil
		}
	}
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
	who := jt.identify(ctx) // before the lock: the groups may come from a directory service
	jt.mu.Lock()
	defer jt.mu.Unlock()
	j := jt.jobs[req.GetJobId()]
	if j == nil {
		return nil, ipc.Errorf(ipc.ClassIOException, "unknown job %s", req.GetJobId())
	}
	if err := jt.checkAccess(who, j, opKillJob); err != nil {
		return nil, err
	}
	if j.committing {
		return nil, ipc.Errorf(ipc.ClassIOException, "job %s is committing its output and can no longer be killed", j.id)
	}
	if j.state == mrpb.JobState_RUNNING {
		jt.endJob(j, mrpb.JobState_KILLED, "killed by "+callerName(ctx))
	}
	return &mrpb.KillJobResponse{}, nil
}

// Operations on a job that need its ACLs (Hadoop's Operation names):
// KILL_JOB the modify-job ACL, VIEW_JOB the view-job one.
const (
	opKillJob = "KILL_JOB"
	opViewJob = "VIEW_JOB"
)

// identity is a caller and its groups.
type identity struct {
	user   string
	groups []string
}

// identify is ctx's caller (no user without one) with its groups (none
// when ACLs are off: they are not needed).
func (jt *JobTracker) identify(ctx context.Context) identity {
	var id identity
	if c, ok := ipc.CallerFrom(ctx); ok {
		id.user = c.User
	}
	if jt.cfg.ACLsEnabled && id.user != "" {
		id.groups = jt.cfg.Groups(id.user)
	}
	return id
}

// checkAccess allows op on j to its owner, the JobTracker's user, the
// administrators (mapreduce.cluster.administrators) and those the job's
// mapreduce.job.acl-modify-job (KILL_JOB) or mapreduce.job.acl-view-job
// (VIEW_JOB) names — everyone when
// mapreduce.cluster.acls.enabled is false — and refuses anyone else with
// Hadoop's AccessControlException. Lock held.
func (jt *JobTracker) checkAccess(who identity, j *job, op string) error {
	if !jt.cfg.ACLsEnabled {
		return nil
	}
	acl := j.modify
	if op == opViewJob {
		acl = j.view
	}
	if who.user != "" && (who.user == j.user || who.user == jt.cfg.User ||
		jt.cfg.Admins.Allows(who.user, who.groups) || acl.Allows(who.user, who.groups)) {
		return nil
	}
	jt.log.Warn("jobtracker: access denied", "user", who.user, "operation", op, "job", j.id, "owner", j.user)
	return ipc.Errorf(ipc.ClassAccessControl, "User %s cannot perform operation %s on %s", who.user, op, j.id)
}

func callerName(ctx context.Context) string {
	if c, ok := ipc.CallerFrom(ctx); ok {
		return c.User
	}
	return "?"
}

// endJob finishes a job that did not succeed: its running attempts are
// killed and its cleanup task, which removes its temporary output, is
// queued. Lock held.
func (jt *JobTracker) endJob(j *job, state mrpb.JobState, msg string) {
	j.state, j.err, j.finish = state, msg, jt.now()
	j.wakeWaiters()
	j.committing, j.secret = false, nil // no attempt of it runs again
	jt.endAttempts(j)
	jt.ui.attempts.jobEnded(j.id, jt.now())
	// The history is written now and again when the abort (the cleanup
	// attempt) ends, which may be never.
	h, written := jt.history(j), make(chan struct{})
	j.historyWritten = written
	jt.goBackground(func() { defer close(written); jt.writeHistory(h) })
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
	jt.queueCleanup(j, state)
	jt.log.Info("jobtracker: job ended", "job", j.id, "state", state, "reason", msg)
	jt.retire()
}

// queueCleanup gives j a pending cleanup task that commits (state
// SUCCEEDED) or aborts its output. Lock held.
func (jt *JobTracker) queueCleanup(j *job, state mrpb.JobState) {
	attempts := 0
	if j.cleanup != nil {
		attempts = j.cleanup.attempts
	}
	j.cleanup = &task{cleanup: true, running: map[string]string{}, attempts: attempts}
	j.cleanupState = state
}

// cleanupDone says whether j has no cleanup work left. Lock held.
func cleanupDone(j *job) bool { return j.cleanup == nil || j.cleanup.state == done }

// retire forgets the oldest finished jobs beyond cfg.RetiredJobs. Lock
// held.
func (jt *JobTracker) retire() {
	retirable := func(j *job) bool { return j.state != mrpb.JobState_RUNNING && cleanupDone(j) }
	finished := 0
	for _, id := range jt.order {
		if retirable(jt.jobs[id]) {
			finished++
		}
	}
	keep := jt.order[:0]
	for _, id := range jt.order {
		if finished > jt.cfg.RetiredJobs && retirable(jt.jobs[id]) {
			delete(jt.jobs, id)
			jt.ui.attempts.forget(id)
			finished--
			continue
		}
		keep = append(keep, id)
	}
	jt.order = keep
	jt.trimAttemptRecords()
}

// checkDone queues the commit of a job whose tasks are all done: its
// cleanup task, which a TaskTracker runs as the job's user. Lock held.
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
	jt.queueCleanup(j, mrpb.JobState_SUCCEEDED)
	jt.log.Info("jobtracker: job's tasks done; committing its output", "job", j.id)
}

// cleanupEnded applies the report of j's cleanup attempt: a commit that
// succeeded makes the job SUCCEEDED; one that failed mapreduce.map.
// maxattempts times fails it (and its output is aborted); a failed abort
// is retried as often, then given up with a warning. Lock held.
func (jt *JobTracker) cleanupEnded(j *job, rep *mrpb.TaskReport) {
	t := j.cleanup
	att := rep.GetAttemptId()
	if _, ok := t.running[att]; !ok {
		return
	}
	delete(t.running, att)
	switch rep.GetState() {
	case mrpb.TaskReport_SUCCEEDED:
		t.state = done
		if j.cleanupState != mrpb.JobState_SUCCEEDED {
			jt.log.Info("jobtracker: job's output aborted", "job", j.id)
			jt.rewriteHistory(j)
			jt.retire()
			return
		}
		j.committing, j.secret = false, nil
		j.state, j.finish = mrpb.JobState_SUCCEEDED, jt.now()
		j.wakeWaiters()
		h := jt.history(j)
		jt.goBackground(func() { jt.writeHistory(h) })
		for _, tr := range jt.trackers {
			tr.doneJobs = append(tr.doneJobs, j.id)
		}
		jt.log.Info("jobtracker: job succeeded", "job", j.id, "elapsed", j.finish.Sub(j.start).Round(time.Millisecond))
		jt.retire()
	case mrpb.TaskReport_FAILED:
		t.failures++
		t.lastError = rep.GetResult().GetError()
		t.state = pending
		if t.failures < j.maxMap {
			return
		}
		if j.cleanupState == mrpb.JobState_SUCCEEDED {
			jt.endJob(j, mrpb.JobState_FAILED, "commit: "+t.lastError)
			return
		}
		t.state = done
		jt.log.Warn("jobtracker: giving up aborting the job's output", "job", j.id, "err", t.lastError)
		jt.rewriteHistory(j)
		jt.retire()
	default:
		t.state = pending
	}
}

func (jt *JobTracker) heartbeat(ctx context.Context, req *mrpb.HeartbeatRequest) (*mrpb.HeartbeatResponse, error) {
	jt.mu.Lock()
	defer jt.mu.Unlock()
	name := req.GetTracker()
	if name == "" {
		return nil, ipc.Errorf(ipc.ClassIllegalArgument, "heartbeat without a tracker name")
	}
	var remote string
	if c, ok := ipc.CallerFrom(ctx); ok && c.Remote != nil {
		if h, _, err := net.SplitHostPort(c.Remote.String()); err == nil {
			remote = h
		}
	}
	tr := jt.trackers[name]
	if tr != nil && tr.started != req.GetStartedNs() {
		// The same host:port, a new process: its attempts and map outputs
		// died with the old one. From another address it is more likely
		// a second tracker advertising the same name.
		if tr.ip != "" && remote != "" && tr.ip != remote {
			jt.log.Warn("jobtracker: tasktrackers at two addresses report the same name; set slave.host.name on each (or bind mapreduce.tasktracker.http.address to its own address)",
				"tracker", name, "was", tr.ip, "now", remote)
		}
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
	jt.ui.attempts.heartbeat(name, req)
	if remote != "" {
		tr.ip = remote
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
	jt.ui.attempts.reported(rep, jt.now())
	j, t := jt.find(rep.GetAttemptId())
	if j != nil {
		jt.noteReport(j, t, rep)
	}
	if t != nil && t.cleanup {
		jt.cleanupEnded(j, rep)
		return
	}
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
		j.wakeWaiters()
		for _, cv := range res.GetCounters() {
			j.counters.Aggregate(cv.GetGroup(), cv.GetName(), cv.GetValue())
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
					j.wakeWaiters()
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
	if c, ok := ipc.CallerFrom(ctx); ok && c.Auth == ipc.AuthMethodToken && c.User != req.GetJobId() {
		// A job token is good for its own job only.
		return nil, ipc.Errorf(ipc.ClassAccessControl, "%s (auth:TOKEN) may not read the events of %s", c.User, req.GetJobId())
	}
	var h holder
	defer h.release(jt)
	wait := time.Duration(req.GetWaitMs()) * time.Millisecond
	jt.mu.Lock()
	defer jt.mu.Unlock()
	for {
		j := jt.jobs[req.GetJobId()]
		if j == nil {
			// Retired, or this JobTracker restarted: the reduce cannot go on.
			return &mrpb.MapCompletionEventsResponse{JobState: mrpb.JobState_UNKNOWN.Enum()}, nil
		}
		from := int(req.GetFromIndex())
		if from < 0 || from > len(j.events) {
			return nil, ipc.Errorf(ipc.ClassIllegalArgument, "job %s: event index %d out of [0, %d]", j.id, from, len(j.events))
		}
		if from < len(j.events) || j.state != mrpb.JobState_RUNNING || !h.wait(ctx, jt, j, wait) {
			return &mrpb.MapCompletionEventsResponse{Events: j.events[from:], JobState: j.state.Enum()}, nil
		}
	}
}

// maxHold caps how long a call is held (holder). The calls held at once
// are bounded by a quarter of the IPC server's handlers
// (strata.ipc.server.handlers.max), so that waiting calls never keep
// heartbeats and submissions from a handler: past it a call is answered
// at once, as with wait_ms 0.
const maxHold = 10 * time.Second

// maxHeld is the bound on the calls held at once.
func (jt *JobTracker) maxHeld() int32 {
	n := jt.cfg.IPC.MaxInFlight
	if n <= 0 {
		n = ipc.DefaultMaxInFlight
	}
	return int32(max(1, n/4))
}

// A holder holds one call (getMapCompletionEvents', getJobStatus') until
// its job changes, a deadline passes or the caller goes away.
type holder struct {
	deadline <-chan time.Time
	timer    *time.Timer
	held     bool // counted in jt.held
	expired  bool
}

// wait is called with jt.mu held when the call has nothing new to answer
// yet. It reports false at once when the call is not to wait (no wait
// asked, its time is up, or maxHeld calls are held already: answer with
// what there is); else it unlocks, waits for j's next change, the call's
// deadline (wait from the first wait, at most maxHold) or the caller's
// going away, takes the lock again and reports true: look again, since
// anything may have changed meanwhile. The lock is held when it returns.
func (h *holder) wait(ctx context.Context, jt *JobTracker, j *job, wait time.Duration) bool {
	if wait <= 0 || h.expired {
		return false
	}
	if !h.held {
		if jt.held.Add(1) > jt.maxHeld() {
			jt.held.Add(-1)
			return false
		}
		h.held = true
		h.timer = time.NewTimer(min(wait, maxHold))
		h.deadline = h.timer.C
	}
	if j.changed == nil {
		j.changed = make(chan struct{})
	}
	changed := j.changed
	jt.mu.Unlock()
	select {
	case <-changed:
	case <-h.deadline:
		h.expired = true
	case <-ctx.Done():
		h.expired = true
	}
	jt.mu.Lock()
	return true
}

func (h *holder) release(jt *JobTracker) {
	if h.held {
		h.timer.Stop()
		jt.held.Add(-1)
	}
}

// wakeWaiters wakes the calls held for j's next change. Lock held.
func (j *job) wakeWaiters() {
	if j.changed != nil {
		close(j.changed)
		j.changed = nil
	}
}

// find returns the running job and task of a running or losing attempt
// id, or the job and cleanup task of a cleanup attempt (the finished jobs
// kept for -status have nothing else to find). Lock held.
func (jt *JobTracker) find(attempt string) (*job, *task) {
	for _, j := range jt.jobs {
		if c := j.cleanup; c != nil {
			if _, ok := c.running[attempt]; ok {
				return j, c
			}
		}
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
	// Cleanup tasks first, in a map slot if one is free, else a reduce
	// slot (the TaskTracker counts it the same way).
	for _, id := range jt.order {
		j := jt.jobs[id]
		if j.cleanup == nil || j.cleanup.state != pending {
			continue
		}
		switch {
		case mapSlots > 0:
			mapSlots--
		case reduceSlots > 0:
			reduceSlots--
		default:
			continue
		}
		jt.launchCleanup(j, tr, resp)
	}
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
		Reducers: proto.Int32(int32(len(j.reduces))), Executable: j.spec.Executable, JobToken: j.secret,
		Credentials: j.spec.Credentials}
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
	jt.noteLaunch(j, att.ID(), kind, tr)
	jt.ui.attempts.launched(j.id, att.ID(), typ, t.index, tr, jt.now())
	resp.Launch = append(resp.Launch, &mrpb.LaunchTask{AttemptId: proto.String(att.ID()), JobId: proto.String(j.id), Spec: spec})
}

// launchCleanup starts an attempt of j's cleanup task on tr: attempt
// attempt_<job>_c_000000_<n>. It runs the TaskTracker's own program (not
// a user's shipped one: that may be gone once the job has ended). Lock
// held.
func (jt *JobTracker) launchCleanup(j *job, tr *tracker, resp *mrpb.HeartbeatResponse) {
	t := j.cleanup
	att := &mapreduce.TaskAttempt{JobID: j.id, Type: 'c', Task: 0, Attempt: t.attempts}
	t.attempts++
	t.state = running
	t.running[att.ID()] = tr.name
	jt.ui.attempts.launched(j.id, att.ID(), 'c', 0, tr, jt.now())
	spec := &mrpb.TaskSpec{Job: j.spec.Job, Conf: j.settings, User: proto.String(j.user), JobId: proto.String(j.id),
		Type: mrpb.TaskType_JOB_CLEANUP.Enum(), Attempt: proto.Int32(int32(att.Attempt)),
		OutputPath: j.spec.OutputPath, CleanupState: j.cleanupState.Enum(), Credentials: j.spec.Credentials}
	jt.noteLaunch(j, att.ID(), mrpb.TaskType_JOB_CLEANUP, tr)
	jt.log.Info("jobtracker: launching job cleanup", "job", j.id, "attempt", att.ID(), "commit", j.cleanupState == mrpb.JobState_SUCCEEDED, "tracker", tr.name)
	resp.Launch = append(resp.Launch, &mrpb.LaunchTask{AttemptId: proto.String(att.ID()), JobId: proto.String(j.id), Spec: spec})
}
