package tasktracker

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/httpauth"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/jobtracker"
	"github.com/stratafs/strata/internal/netaddr"
	"github.com/stratafs/strata/internal/procstat"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/shuffle"
	"github.com/stratafs/strata/internal/taskrun"
)

// TaskTracker is the daemon. Lifecycle: New → Start → Close.
type TaskTracker struct {
	cfg     Config
	log     *slog.Logger
	jt      *ipc.Client
	shuffle *shuffle.Server
	http    *http.Server
	ln      net.Listener
	name    string

	mu         sync.Mutex
	running    map[string]*attempt
	fetchMu    sync.Mutex         // serializes fetching job programs
	reports    []*mrpb.TaskReport // ended attempts not yet acknowledged
	freeMaps   int
	freeReduce int
	oob        chan struct{} // a heartbeat is wanted now (Config.OutOfBandHeartbeat)
	idle       []*child      // children waiting for their job's next attempt (child.go)
	// runAttempt runs one attempt to its end: run, or a fake in tests.
	runAttempt func(ctx context.Context, a *attempt, spec *mrpb.TaskSpec) *mrpb.TaskReport

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup

	// inter is the space the attempts' intermediate data takes
	// (accounting.go).
	inter intermediate
}

type attempt struct {
	id, job string
	isMap   bool
	cancel  context.CancelFunc
	// commitPending: the child asked to commit and waits for the
	// JobTracker's answer, written on commitOK. tt.mu guards both.
	commitPending bool
	commitOK      *os.File
	// progress gets a value whenever the child says the attempt moved.
	progress chan struct{}
}

// New validates cfg, makes the local directories and returns a
// TaskTracker; it does nothing until Start.
func New(cfg Config) (*TaskTracker, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := cfg.secureLogin(); err != nil {
		return nil, err
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Executable == "" {
		exe, err := os.Executable()
		if err != nil {
			return nil, fmt.Errorf("tasktracker: finding the task executable: %w", err)
		}
		cfg.Executable = exe
	}
	if cfg.Groups == nil {
		cfg.Groups = jobtracker.OSGroups
	}
	if cfg.User == "" {
		cfg.User = fs.CurrentUser()
	}
	for _, d := range cfg.LocalDirs {
		if err := os.MkdirAll(filepath.Join(d, "taskTracker"), 0o755); err != nil {
			return nil, fmt.Errorf("tasktracker: local dir: %w", err)
		}
	}
	tt := &TaskTracker{cfg: cfg, log: cfg.Logger, running: map[string]*attempt{}, oob: make(chan struct{}, 1),
		freeMaps: cfg.MapSlots, freeReduce: cfg.ReduceSlots}
	tt.runAttempt = tt.run
	tt.shuffle = shuffle.NewServer(shuffle.ServerConfig{Logger: cfg.Logger})
	tt.jt = ipc.NewClient(ipc.ClientConfig{Addr: cfg.JobTracker, User: cfg.User, Protocol: jobtracker.InterTrackerProtocol, Login: cfg.Login})
	tt.ctx, tt.cancel = context.WithCancel(context.Background())
	return tt, nil
}

// Start serves map outputs and begins heartbeating.
func (tt *TaskTracker) Start() error {
	ln, err := net.Listen("tcp", tt.cfg.HTTPAddr)
	if err != nil {
		return fmt.Errorf("tasktracker: %w", err)
	}
	tt.ln = ln
	bound, port, _ := net.SplitHostPort(ln.Addr().String())
	host, err := advertisedHost(tt.cfg.Host, tt.cfg.DNSInterface, bound, netaddr.InterfaceAddr,
		func() string { return netaddr.LocalAddrTo(tt.cfg.JobTracker) })
	if err != nil {
		ln.Close()
		return err
	}
	tt.cfg.Host = host
	// The shuffle URL names the address the server listens on when that
	// is specific (nothing else reaches it), else the advertised host.
	urlHost := host
	if ip := net.ParseIP(bound); ip != nil && !ip.IsUnspecified() {
		urlHost = bound
	}
	url := "http://" + net.JoinHostPort(urlHost, port)
	tt.name = fmt.Sprintf("tracker_%s:%s", host, port)
	hc := tt.cfg.HTTPAuth
	hc.Addr = tt.cfg.HTTPAddr
	if hc.Log == nil {
		hc.Log = tt.log
	}
	auth, err := httpauth.New(hc)
	if err != nil {
		ln.Close()
		return fmt.Errorf("tasktracker: HTTP authentication: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle(shuffle.Path, tt.shuffle)
	tt.registerUI(mux) // pages, /tasklog, /jmx, /metrics, /stacks (webui.go)
	// The shuffle authenticates reducers by the job token's HMAC, as
	// Hadoop's does; secure mode puts SPNEGO in front of the rest.
	handler := auth.WrapExcept(mux, shuffle.Path)
	// A request is a GET's headers; the shuffle server moves the write
	// deadline on as each 4 MiB of a segment goes out.
	tt.http = &http.Server{Handler: handler, ReadHeaderTimeout: 30 * time.Second, ReadTimeout: 30 * time.Second,
		WriteTimeout: shuffle.DefaultWriteTimeout, IdleTimeout: 2 * time.Minute, MaxHeaderBytes: 64 << 10,
		ErrorLog: slog.NewLogLogger(tt.log.Handler(), slog.LevelDebug)}
	tt.wg.Add(3)
	go func() { defer tt.wg.Done(); tt.measureIntermediate() }()
	go func() { defer tt.wg.Done(); tt.http.Serve(ln) }()
	go func() { defer tt.wg.Done(); tt.heartbeatLoop(url) }()
	tt.log.Info("tasktracker: serving", "name", tt.name, "shuffle", url, "jobtracker", tt.cfg.JobTracker,
		"mapSlots", tt.cfg.MapSlots, "reduceSlots", tt.cfg.ReduceSlots)
	return nil
}

// Name is the tracker's name as the JobTracker knows it.
func (tt *TaskTracker) Name() string { return tt.name }

// Close kills running attempts and stops the daemon.
func (tt *TaskTracker) Close() error {
	tt.cancel()
	tt.mu.Lock()
	idle := tt.idleOf("")
	tt.mu.Unlock()
	for _, c := range idle {
		c.retire()
	}
	if tt.http != nil {
		tt.http.Close()
	}
	tt.wg.Wait()
	tt.jt.Close()
	return nil
}

func (tt *TaskTracker) heartbeatLoop(url string) {
	interval := time.Second
	started := time.Now().UnixNano()
	for {
		req := tt.heartbeatRequest(url, started)
		ctx, cancel := context.WithTimeout(tt.ctx, 30*time.Second)
		resp := &mrpb.HeartbeatResponse{}
		err := tt.jt.Call(ctx, "heartbeat", req, resp)
		cancel()
		if err != nil {
			if tt.ctx.Err() != nil {
				return
			}
			tt.log.Warn("tasktracker: heartbeat failed", "jobtracker", tt.cfg.JobTracker, "err", err)
		} else {
			tt.acknowledge(len(req.GetReports()))
			tt.apply(resp)
			if ms := resp.GetIntervalMs(); ms > 0 {
				interval = time.Duration(ms) * time.Millisecond
			}
		}
		select {
		case <-tt.ctx.Done():
			return
		case <-time.After(interval):
		case <-tt.oob:
		}
	}
}

// heartbeatSoon asks for a heartbeat now rather than at the next
// interval; requests made before it is sent coalesce into one.
func (tt *TaskTracker) heartbeatSoon() {
	if !tt.cfg.OutOfBandHeartbeat {
		return
	}
	select {
	case tt.oob <- struct{}{}:
	default:
	}
}

// heartbeatRequest is the next heartbeat: the free slots, the reports not
// yet acknowledged (all of them, again, after a failed heartbeat) and the
// attempts waiting for leave to commit.
func (tt *TaskTracker) heartbeatRequest(url string, started int64) *mrpb.HeartbeatRequest {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	req := &mrpb.HeartbeatRequest{Tracker: proto.String(tt.name), Host: proto.String(tt.cfg.Host), HttpUrl: proto.String(url),
		FreeMapSlots: proto.Int32(int32(tt.freeMaps)), FreeReduceSlots: proto.Int32(int32(tt.freeReduce)),
		Reports: slices.Clip(tt.reports), StartedNs: proto.Int64(started)}
	for id, a := range tt.running {
		if a.commitPending {
			req.CommitPending = append(req.CommitPending, id)
		}
	}
	sort.Strings(req.CommitPending)
	return req
}

// acknowledge forgets the first n reports, which the JobTracker has
// received; reports added since stay for the next heartbeat.
func (tt *TaskTracker) acknowledge(n int) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	tt.reports = tt.reports[n:]
}

func (tt *TaskTracker) apply(resp *mrpb.HeartbeatResponse) {
	tt.mu.Lock()
	defer tt.mu.Unlock()
	for _, id := range resp.GetKillAttempts() {
		if a := tt.running[id]; a != nil {
			tt.log.Info("tasktracker: killing attempt", "attempt", id)
			a.cancel()
		}
	}
	for _, id := range resp.GetCommitAttempts() {
		if a := tt.running[id]; a != nil && a.commitPending {
			a.commitPending = false
			a.commitOK.Write([]byte{1})
		}
	}
	for _, job := range resp.GetDoneJobs() {
		for _, a := range tt.running {
			if a.job == job {
				a.cancel()
			}
		}
		for _, c := range tt.idleOf(job) {
			c.retire()
		}
		tt.shuffle.RemoveJob(job)
		tt.removeJobDirs(job)
	}
	for _, l := range resp.GetLaunch() {
		if tok := l.GetSpec().GetJobToken(); len(tok) > 0 {
			// The job's shuffle secret: only reduces that know it fetch
			// the job's map outputs from here.
			if err := tt.shuffle.SetSecret(l.GetJobId(), tok); err != nil {
				tt.log.Warn("tasktracker: bad job token", "job", l.GetJobId(), "err", err)
			}
		}
		ctx, cancel := context.WithCancel(tt.ctx)
		typ := l.GetSpec().GetType()
		// A job cleanup takes a map slot if one is free, else a reduce
		// slot, as the JobTracker assigned it.
		a := &attempt{id: l.GetAttemptId(), job: l.GetJobId(), cancel: cancel, progress: make(chan struct{}, 1),
			isMap: typ == mrpb.TaskType_MAP || (typ == mrpb.TaskType_JOB_CLEANUP && tt.freeMaps > 0)}
		if a.isMap {
			tt.freeMaps--
		} else {
			tt.freeReduce--
		}
		tt.running[a.id] = a
		tt.wg.Add(1)
		go func() {
			defer tt.wg.Done()
			defer cancel()
			rep := tt.runAttempt(ctx, a, l.GetSpec())
			if typ == mrpb.TaskType_JOB_CLEANUP {
				// The job is over: nothing of it is needed here.
				tt.removeJobDirs(a.job)
			}
			tt.mu.Lock()
			defer tt.mu.Unlock()
			delete(tt.running, a.id)
			if a.isMap {
				tt.freeMaps++
			} else {
				tt.freeReduce++
			}
			tt.reports = append(tt.reports, rep)
			tt.heartbeatSoon()
		}()
	}
}

// removeJobDirs deletes a job's local data (map outputs, its program).
func (tt *TaskTracker) removeJobDirs(job string) {
	for _, d := range tt.cfg.LocalDirs {
		os.RemoveAll(filepath.Join(d, "taskTracker", filepath.Base(job)))
	}
}

// run runs one attempt as a child process and reports how it ended.
func (tt *TaskTracker) run(ctx context.Context, a *attempt, spec *mrpb.TaskSpec) *mrpb.TaskReport {
	rep := &mrpb.TaskReport{AttemptId: proto.String(a.id)}
	fail := func(state mrpb.TaskReport_State, err error) *mrpb.TaskReport {
		rep.State, rep.Result = state.Enum(), &mrpb.TaskResult{Error: proto.String(err.Error())}
		tt.log.Warn("tasktracker: attempt "+state.String(), "attempt", a.id, "err", err)
		return rep
	}
	if spec == nil {
		return fail(mrpb.TaskReport_FAILED, errors.New("bad task spec from the jobtracker: none"))
	}
	spec = proto.CloneOf(spec)
	if spec.GetType() != mrpb.TaskType_REDUCE {
		spec.JobToken = nil // only a reduce signs requests
	}
	if spec.GetType() == mrpb.TaskType_JOB_CLEANUP {
		spec.Executable = nil // framework work: this tracker's program
	}
	cred, err := tt.credential(spec.GetUser())
	if err != nil {
		return fail(mrpb.TaskReport_FAILED, err)
	}
	job := filepath.Base(a.job)
	spec.LocalDirs = nil
	for _, d := range tt.cfg.LocalDirs {
		ad := filepath.Join(d, "taskTracker", job, filepath.Base(a.id))
		if err := os.MkdirAll(ad, 0o755); err != nil {
			return fail(mrpb.TaskReport_FAILED, err)
		}
		if err := chown(ad, cred); err != nil {
			return fail(mrpb.TaskReport_FAILED, err)
		}
		spec.LocalDirs = append(spec.LocalDirs, ad)
	}
	logDir := filepath.Join(tt.cfg.LocalDirs[0], "userlogs", job)
	os.MkdirAll(logDir, 0o755)
	if err := writeJobACLs(logDir, spec); err != nil {
		return fail(mrpb.TaskReport_FAILED, err)
	}
	stderr, err := os.Create(filepath.Join(logDir, filepath.Base(a.id)+".stderr"))
	if err != nil {
		return fail(mrpb.TaskReport_FAILED, err)
	}
	defer stderr.Close()
	if err := chown(stderr.Name(), cred); err != nil {
		return fail(mrpb.TaskReport_FAILED, err)
	}
	exe := tt.cfg.Executable
	if spec.GetExecutable() != "" {
		if exe, err = tt.jobExecutable(ctx, a.job, spec); err != nil {
			return fail(mrpb.TaskReport_FAILED, err)
		}
	}
	// The job's scratch directory is its children's TMPDIR (Hadoop's
	// ./tmp in the task's work directory): what a task or a command it
	// starts leaves there, as a killed attempt does, goes with the job's
	// local data instead of piling up in the machine's /tmp.
	tmp := filepath.Join(tt.cfg.LocalDirs[0], "taskTracker", job, "tmp")
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return fail(mrpb.TaskReport_FAILED, err)
	}
	if err := chown(tmp, cred); err != nil {
		return fail(mrpb.TaskReport_FAILED, err)
	}
	timeout := taskTimeout(spec.GetConf())
	memLimit, memEvery := memoryLimit(spec.GetConf(), a.isMap)
	cs := childSpec{key: childKey{job: a.job, isMap: a.isMap, exe: exe, uid: -1}, cred: cred, stderr: stderr,
		limit: reuseLimit(spec.GetConf()), memLimit: memLimit, env: []string{"TMPDIR=" + tmp}}
	if cred != nil {
		cs.key.uid = int(cred.Uid)
	}
	if profiled(spec) {
		// Hadoop's mapreduce.task.profile: the attempt's profile beside
		// its log (Hadoop's profile.out; here a pprof CPU profile), from
		// a child of its own.
		cs.cpuProfile = filepath.Join(logDir, filepath.Base(a.id)+".pprof")
	}
	// Task reuse (mapreduce.job.jvm.numtasks): the job's attempts of
	// this kind run in turn in one child, as in Hadoop's reused JVMs.
	cs.reuse = cs.limit != 1 && cs.cpuProfile == "" && spec.GetType() != mrpb.TaskType_JOB_CLEANUP
	var c *child
	if cs.reuse {
		spec.LogFile = proto.String(stderr.Name())
		c = tt.takeIdle(cs.key)
	}
	if c != nil {
		spec.Credentials = nil // the child has the job's tokens already
	} else {
		// The credentials live as long as the child: beside a single
		// attempt, in a directory of its own for a reused child.
		tokenDir := spec.LocalDirs[0]
		if cs.reuse {
			tokenDir = filepath.Join(tt.cfg.LocalDirs[0], "taskTracker", job, "child_"+filepath.Base(a.id))
			if err := os.MkdirAll(tokenDir, 0o700); err != nil {
				return fail(mrpb.TaskReport_FAILED, err)
			}
			if err := chown(tokenDir, cred); err != nil {
				os.RemoveAll(tokenDir)
				return fail(mrpb.TaskReport_FAILED, err)
			}
			cs.tokenDir = tokenDir
		}
		tokenFile, err := writeTokenFile(tokenDir, spec, tt.cfg.JobTracker, cred, tt.cfg.Security.Kerberos)
		if err != nil {
			if cs.tokenDir != "" {
				os.RemoveAll(cs.tokenDir)
			}
			return fail(mrpb.TaskReport_FAILED, err)
		}
		if tokenFile != "" {
			cs.env = append(cs.env, delegation.TokenFileEnv+"="+tokenFile)
			if !cs.reuse {
				defer os.Remove(tokenFile) // the child is reaped before run returns
			}
		}
		tt.makeRoom(a.isMap)
		if c, err = tt.startChild(ctx, cs); err != nil {
			if cs.tokenDir != "" {
				os.RemoveAll(cs.tokenDir)
			}
			return fail(mrpb.TaskReport_FAILED, err)
		}
	}
	tt.log.Info("tasktracker: launching attempt", "attempt", a.id, "child", c.pid, "attempts", c.ran+1)
	start := time.Now()
	wctx, stopWatch := context.WithCancel(ctx)
	defer stopWatch()
	sampleEvery := memEvery
	if memLimit <= 0 {
		sampleEvery = rssSampleEvery
	}
	mem := &memoryWatch{}
	go mem.run(wctx, c.pid, sampleEvery, memLimit, c.kill)
	var timedOut atomic.Bool
	if timeout > 0 {
		go func() {
			t := time.NewTimer(timeout)
			defer t.Stop()
			for {
				select {
				case <-wctx.Done():
					return
				case <-a.progress:
					t.Reset(timeout)
				case <-t.C:
					// Waiting for the JobTracker's leave to commit is
					// not a hang.
					tt.mu.Lock()
					waiting := a.commitPending
					tt.mu.Unlock()
					if waiting {
						t.Reset(timeout)
						continue
					}
					timedOut.Store(true)
					c.kill()
					return
				}
			}
		}()
	}
	run, runErr := tt.runOn(ctx, c, a, spec)
	end := time.Now()
	stopWatch()
	rep = tt.finish(a, spec, childExit{out: run.out, err: runErr, overMemory: mem.over.Load(), memLimit: memLimit,
		timedOut: timedOut.Load(), timeout: timeout, killed: ctx.Err() != nil, stderr: stderr.Name(), elapsed: end.Sub(start)})
	usage := run.usage
	if !run.exited {
		// A reused child accounts each attempt itself.
		usage = reportedUsage(rep.GetResult().GetUsage())
		if c.reusable && rep.GetState() == mrpb.TaskReport_SUCCEEDED && ctx.Err() == nil && (c.limit == 0 || c.ran < c.limit) {
			tt.putIdle(c)
		} else {
			c.retire()
		}
	}
	if rep.GetResult() != nil {
		rep.Result.Usage = nil // the report has its own
	}
	// wait4's ru_maxrss is the largest single process of the tree, a
	// floor of the tree's peak that also covers a child too short for a
	// sample.
	usage.MaxRSS = max(usage.MaxRSS, mem.peak.Load())
	account(rep, spec.GetType(), start, end, usage)
	tt.sampleIntermediate()
	return rep
}

// reportedUsage is the usage a reused child reported for an attempt,
// with what cannot be (negative figures) as 0.
func reportedUsage(u *mrpb.TaskUsage) procstat.Usage {
	us := func(v int64) time.Duration { return time.Duration(max(v, 0)) * time.Microsecond }
	return procstat.Usage{CPU: procstat.CPU{User: us(u.GetUserUs()), System: us(u.GetSystemUs())},
		MaxRSS: max(u.GetMaxRssBytes(), 0), ReadBytes: max(u.GetReadBytes(), 0), WriteBytes: max(u.GetWriteBytes(), 0)}
}

// childExit is how an attempt's child process ended, as run saw it.
type childExit struct {
	out                  []byte // its standard output (the TaskResult)
	err                  error  // from Wait
	overMemory, memLimit int64  // the usage that got it killed (0: none), and its cap
	timedOut             bool   // killed for silence
	timeout              time.Duration
	killed               bool   // the attempt was killed (job kill, job end, Close)
	stderr               string // its log file
	elapsed              time.Duration
}

// finish turns a child's end into the attempt's report: a successful
// map's output is registered with the shuffle server; every other end
// removes the attempt's local directories.
func (tt *TaskTracker) finish(a *attempt, spec *mrpb.TaskSpec, ex childExit) *mrpb.TaskReport {
	rep := &mrpb.TaskReport{AttemptId: proto.String(a.id)}
	fail := func(state mrpb.TaskReport_State, err error) *mrpb.TaskReport {
		for _, d := range spec.GetLocalDirs() {
			os.RemoveAll(d)
		}
		rep.State, rep.Result = state.Enum(), &mrpb.TaskResult{Error: proto.String(err.Error())}
		tt.log.Warn("tasktracker: attempt "+state.String(), "attempt", a.id, "err", err)
		return rep
	}
	if ex.overMemory > 0 {
		return fail(mrpb.TaskReport_FAILED, overLimit(a.id, ex.overMemory, ex.memLimit))
	}
	if ex.timedOut {
		return fail(mrpb.TaskReport_FAILED, fmt.Errorf("Task %s failed to report status for %d seconds. Killing!", a.id, int(ex.timeout.Seconds())))
	}
	if ex.killed {
		return fail(mrpb.TaskReport_KILLED, errors.New("attempt killed"))
	}
	res, err := taskrun.ReadResult(ex.out)
	if err != nil {
		msg := fmt.Sprintf("child exited (%v) without a result", ex.err)
		if tail := tailFile(ex.stderr, 2048); tail != "" {
			msg += "; stderr: " + tail
		}
		return fail(mrpb.TaskReport_FAILED, errors.New(msg))
	}
	if ex.err != nil || res.GetError() != "" {
		for _, d := range spec.GetLocalDirs() {
			os.RemoveAll(d)
		}
		if res.GetError() == "" {
			res.Error = proto.String(ex.err.Error())
		}
		rep.State, rep.Result = mrpb.TaskReport_FAILED.Enum(), res
		tt.log.Warn("tasktracker: attempt failed", "attempt", a.id, "err", res.GetError())
		return rep
	}
	if res.Output != nil {
		out := taskrun.MapOutput(res.Output)
		if err := tt.shuffle.Add(shuffle.MapOutputInfo{JobID: a.job, AttemptID: a.id, Path: out.Path, Index: out.Index}); err != nil {
			return fail(mrpb.TaskReport_FAILED, fmt.Errorf("serving map output: %w", err))
		}
	} else {
		for _, d := range spec.GetLocalDirs() {
			os.RemoveAll(d)
		}
	}
	rep.State, rep.Result = mrpb.TaskReport_SUCCEEDED.Enum(), res
	tt.log.Info("tasktracker: attempt succeeded", "attempt", a.id, "elapsed", ex.elapsed.Round(time.Millisecond))
	return rep
}

// jobExecutable returns the local copy of a job's program, fetching it
// from spec.Executable on first use (kept with the job's local data).
func (tt *TaskTracker) jobExecutable(ctx context.Context, job string, spec *mrpb.TaskSpec) (string, error) {
	tt.fetchMu.Lock()
	defer tt.fetchMu.Unlock()
	local := filepath.Join(tt.cfg.LocalDirs[0], "taskTracker", filepath.Base(job), "job.bin")
	if _, err := os.Stat(local); err == nil {
		return local, nil
	}
	c := conf.New()
	for k, v := range spec.GetConf() {
		c.Set(k, v)
	}
	exe := spec.GetExecutable()
	fsys, p, err := fs.Resolve(ctx, exe, fs.Env{Conf: c, User: spec.GetUser()})
	if err != nil {
		return "", fmt.Errorf("fetching the job's program %s: %w", exe, err)
	}
	defer fsys.Close()
	in, err := fsys.Open(ctx, p)
	if err != nil {
		return "", fmt.Errorf("fetching the job's program %s: %w", exe, err)
	}
	defer in.Close()
	tmp := local + ".tmp"
	out, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o755)
	if err == nil {
		_, err = io.Copy(out, in)
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}
	if err == nil {
		err = os.Rename(tmp, local)
	}
	if err != nil {
		os.Remove(tmp)
		return "", fmt.Errorf("fetching the job's program %s: %w", exe, err)
	}
	tt.log.Info("tasktracker: fetched job program", "job", job, "from", exe)
	return local, nil
}

// taskTimeout is the job's mapreduce.task.timeout (0: none).
func taskTimeout(settings map[string]string) time.Duration {
	c := conf.New()
	if v, ok := settings[keyTaskTimeout]; ok {
		c.Set(keyTaskTimeout, v)
	}
	d, err := c.GetDuration(keyTaskTimeout, time.Millisecond)
	if err != nil || d < 0 {
		return 10 * time.Minute
	}
	return d
}

// profiled reports whether the job's mapreduce.task.profile selects the
// attempt: its task number in mapreduce.task.profile.maps or .reduces
// (Hadoop's IntegerRanges, default "0-2").
func profiled(spec *mrpb.TaskSpec) bool {
	settings := spec.GetConf()
	if on, _ := strconv.ParseBool(settings["mapreduce.task.profile"]); !on {
		return false
	}
	key := "mapreduce.task.profile.maps"
	switch spec.GetType() {
	case mrpb.TaskType_MAP:
	case mrpb.TaskType_REDUCE:
		key = "mapreduce.task.profile.reduces"
	default:
		return false
	}
	ranges, ok := settings[key]
	if !ok {
		k, _ := conf.LookupKey(key)
		ranges = k.Default
	}
	r, err := conf.ParseIntegerRanges(ranges)
	return err == nil && r.Contains(int(spec.GetTask()))
}

func tailFile(path string, n int64) string {
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.Size() > n {
		f.Seek(-n, io.SeekEnd)
	}
	b, _ := io.ReadAll(f)
	return string(bytes.TrimSpace(b))
}
