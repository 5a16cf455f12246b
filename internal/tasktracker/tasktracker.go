// Package tasktracker is the TaskTracker daemon of strata's MapReduce
// (Hadoop MRv1's architecture). It heartbeats to the JobTracker with its
// free map and reduce slots and the attempts that ended, runs each attempt
// it is given as a child process (`strata task`: the attempt's TaskSpec on
// stdin, its TaskResult on stdout, the pipes of internal/taskrun), so a crashing or
// runaway job cannot take the daemon down, and serves finished maps'
// outputs to reducers over HTTP at shuffle.Path.
//
// Local layout, under each directory of mapreduce.cluster.local.dir:
//
//	taskTracker/<job id>/<attempt id>/   the attempt's spills and output
//	userlogs/<job id>/<attempt id>.stderr the child's standard error
//
// A job's directories are removed when the JobTracker says it is done.
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
	"os/exec"
	"path/filepath"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/jobtracker"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/shuffle"
	"github.com/stratafs/strata/internal/taskrun"
)

// Config configures a TaskTracker.
type Config struct {
	// JobTracker is the JobTracker's RPC address.
	JobTracker string
	// HTTPAddr is where map outputs are served
	// (mapreduce.tasktracker.http.address).
	HTTPAddr string
	// Host is the name the JobTracker matches against input split hosts
	// for data-local maps; default the machine's host name.
	Host string
	// LocalDirs hold intermediate data (mapreduce.cluster.local.dir).
	LocalDirs []string
	// MapSlots and ReduceSlots are how many attempts of each kind run at
	// once (mapred.tasktracker.{map,reduce}.tasks.maximum).
	MapSlots, ReduceSlots int
	// Executable is the program run for each attempt with the argument
	// "task"; default this process's executable.
	Executable string
	User       string
	Logger     *slog.Logger
}

// ConfigFrom reads a TaskTracker's settings.
func ConfigFrom(c *conf.Configuration) (Config, error) {
	cfg := Config{JobTracker: c.Get("mapreduce.jobtracker.address"), HTTPAddr: c.Get("mapreduce.tasktracker.http.address"),
		LocalDirs: c.GetStrings("mapreduce.cluster.local.dir")}
	if cfg.JobTracker == "" || cfg.JobTracker == "local" {
		return cfg, errors.New("tasktracker: set mapreduce.jobtracker.address (host:port)")
	}
	if len(cfg.LocalDirs) == 0 {
		return cfg, errors.New("tasktracker: mapreduce.cluster.local.dir is empty")
	}
	m, err1 := c.GetInt("mapred.tasktracker.map.tasks.maximum")
	r, err2 := c.GetInt("mapred.tasktracker.reduce.tasks.maximum")
	if err := errors.Join(err1, err2); err != nil {
		return cfg, err
	}
	if m < 1 || r < 1 {
		return cfg, fmt.Errorf("tasktracker: slot counts must be at least 1 (map %d, reduce %d)", m, r)
	}
	cfg.MapSlots, cfg.ReduceSlots = int(m), int(r)
	return cfg, nil
}

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

	ctx    context.Context
	cancel context.CancelFunc
	wg     sync.WaitGroup
}

type attempt struct {
	id, job string
	isMap   bool
	cancel  context.CancelFunc
	// commitPending: the child asked to commit and waits for the
	// JobTracker's answer, written on commitOK. tt.mu guards both.
	commitPending bool
	commitOK      *os.File
}

// New returns a TaskTracker; it does nothing until Start.
func New(cfg Config) (*TaskTracker, error) {
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
	if cfg.Host == "" {
		cfg.Host, _ = os.Hostname()
	}
	if cfg.User == "" {
		cfg.User = fs.CurrentUser()
	}
	if cfg.MapSlots < 1 {
		cfg.MapSlots = 2
	}
	if cfg.ReduceSlots < 1 {
		cfg.ReduceSlots = 2
	}
	for _, d := range cfg.LocalDirs {
		if err := os.MkdirAll(filepath.Join(d, "taskTracker"), 0o755); err != nil {
			return nil, fmt.Errorf("tasktracker: local dir: %w", err)
		}
	}
	tt := &TaskTracker{cfg: cfg, log: cfg.Logger, running: map[string]*attempt{},
		freeMaps: cfg.MapSlots, freeReduce: cfg.ReduceSlots}
	tt.shuffle = shuffle.NewServer(shuffle.ServerConfig{Logger: cfg.Logger})
	tt.jt = ipc.NewClient(ipc.ClientConfig{Addr: cfg.JobTracker, User: cfg.User, Protocol: jobtracker.InterTrackerProtocol})
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
	host, port, _ := net.SplitHostPort(ln.Addr().String())
	if ip := net.ParseIP(host); ip == nil || ip.IsUnspecified() {
		host = tt.cfg.Host
	}
	url := "http://" + net.JoinHostPort(host, port)
	tt.name = fmt.Sprintf("tracker_%s:%s", tt.cfg.Host, port)
	mux := http.NewServeMux()
	mux.Handle(shuffle.Path, tt.shuffle)
	tt.http = &http.Server{Handler: mux, ReadHeaderTimeout: 30 * time.Second}
	tt.wg.Add(2)
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
		tt.mu.Lock()
		reports := tt.reports
		req := &mrpb.HeartbeatRequest{Tracker: proto.String(tt.name), Host: proto.String(tt.cfg.Host), HttpUrl: proto.String(url),
			FreeMapSlots: proto.Int32(int32(tt.freeMaps)), FreeReduceSlots: proto.Int32(int32(tt.freeReduce)), Reports: reports,
			StartedNs: proto.Int64(started)}
		for id, a := range tt.running {
			if a.commitPending {
				req.CommitPending = append(req.CommitPending, id)
			}
		}
		tt.mu.Unlock()
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
			tt.mu.Lock()
			tt.reports = tt.reports[len(reports):] // acknowledged
			tt.mu.Unlock()
			tt.apply(resp)
			if ms := resp.GetIntervalMs(); ms > 0 {
				interval = time.Duration(ms) * time.Millisecond
			}
		}
		select {
		case <-tt.ctx.Done():
			return
		case <-time.After(interval):
		}
	}
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
		tt.shuffle.RemoveJob(job)
		for _, d := range tt.cfg.LocalDirs {
			os.RemoveAll(filepath.Join(d, "taskTracker", filepath.Base(job)))
		}
	}
	for _, l := range resp.GetLaunch() {
		ctx, cancel := context.WithCancel(tt.ctx)
		a := &attempt{id: l.GetAttemptId(), job: l.GetJobId(), isMap: l.GetSpec().GetType() == mrpb.TaskType_MAP, cancel: cancel}
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
			rep := tt.run(ctx, a, l.GetSpec())
			tt.mu.Lock()
			defer tt.mu.Unlock()
			delete(tt.running, a.id)
			if a.isMap {
				tt.freeMaps++
			} else {
				tt.freeReduce++
			}
			tt.reports = append(tt.reports, rep)
		}()
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
	job := filepath.Base(a.job)
	spec.LocalDirs = nil
	for _, d := range tt.cfg.LocalDirs {
		ad := filepath.Join(d, "taskTracker", job, filepath.Base(a.id))
		if err := os.MkdirAll(ad, 0o755); err != nil {
			return fail(mrpb.TaskReport_FAILED, err)
		}
		spec.LocalDirs = append(spec.LocalDirs, ad)
	}
	var in bytes.Buffer
	if err := taskrun.WriteSpec(&in, spec); err != nil {
		return fail(mrpb.TaskReport_FAILED, err)
	}
	logDir := filepath.Join(tt.cfg.LocalDirs[0], "userlogs", job)
	os.MkdirAll(logDir, 0o755)
	stderr, err := os.Create(filepath.Join(logDir, filepath.Base(a.id)+".stderr"))
	if err != nil {
		return fail(mrpb.TaskReport_FAILED, err)
	}
	defer stderr.Close()
	exe := tt.cfg.Executable
	if spec.GetExecutable() != "" {
		if exe, err = tt.jobExecutable(ctx, a.job, spec); err != nil {
			return fail(mrpb.TaskReport_FAILED, err)
		}
	}
	timeout := taskTimeout(spec.GetConf())
	pr, pw, err := os.Pipe()
	if err != nil {
		return fail(mrpb.TaskReport_FAILED, err)
	}
	defer pr.Close()
	cr, cw, err := os.Pipe()
	if err != nil {
		pw.Close()
		return fail(mrpb.TaskReport_FAILED, err)
	}
	defer cw.Close()
	tt.mu.Lock()
	a.commitOK = cw
	tt.mu.Unlock()
	cctx, kill := context.WithCancel(ctx)
	defer kill()
	cmd := exec.CommandContext(cctx, exe, "task")
	cmd.Stdin = &in
	var out bytes.Buffer
	cmd.Stdout = &limitWriter{w: &out, n: taskrun.MaxResult}
	cmd.Stderr = stderr
	cmd.ExtraFiles = []*os.File{pw, cr} // fd 3, 4
	cmd.Env = append(os.Environ(), taskrun.ProgressFDEnv+"=3", taskrun.CommitFDEnv+"=4", taskrun.JobTrackerEnv+"="+tt.cfg.JobTracker)
	memLimit, memEvery := memoryLimit(spec.GetConf(), a.isMap)
	if memLimit >= 2<<20 && os.Getenv("GOMEMLIMIT") == "" {
		// The Go runtime collects harder as the child nears its cap.
		cmd.Env = append(cmd.Env, fmt.Sprintf("GOMEMLIMIT=%dMiB", memLimit*9/10>>20))
	}
	// The child leads its own process group, so that killing the attempt
	// also kills what it started (a streaming command).
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	tt.log.Info("tasktracker: launching attempt", "attempt", a.id)
	start := time.Now()
	err = cmd.Start()
	pw.Close()
	cr.Close()
	if err != nil {
		return fail(mrpb.TaskReport_FAILED, err)
	}
	progress := make(chan struct{}, 1)
	go func() {
		b := make([]byte, 64)
		for {
			n, err := pr.Read(b)
			if err != nil {
				return
			}
			if bytes.IndexByte(b[:n], taskrun.CommitRequest) >= 0 {
				tt.mu.Lock()
				a.commitPending = true
				tt.mu.Unlock()
			}
			select {
			case progress <- struct{}{}:
			default:
			}
		}
	}()
	var overMemory atomic.Int64 // the usage that got the attempt killed
	if memLimit > 0 {
		go func() {
			t := time.NewTicker(memEvery)
			defer t.Stop()
			for {
				select {
				case <-cctx.Done():
					return
				case <-t.C:
				}
				if used := processGroupRSS(cmd.Process.Pid); used > memLimit {
					overMemory.Store(used)
					kill()
					return
				}
			}
		}()
	}
	var timedOut atomic.Bool
	if timeout > 0 {
		go func() {
			t := time.NewTimer(timeout)
			defer t.Stop()
			for {
				select {
				case <-cctx.Done():
					return
				case <-progress:
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
					kill()
					return
				}
			}
		}()
	}
	runErr := cmd.Wait()
	cleanup := func() {
		for _, d := range spec.GetLocalDirs() {
			os.RemoveAll(d)
		}
	}
	if used := overMemory.Load(); used > 0 {
		cleanup()
		return fail(mrpb.TaskReport_FAILED, overLimit(a.id, used, memLimit))
	}
	if timedOut.Load() {
		cleanup()
		return fail(mrpb.TaskReport_FAILED, fmt.Errorf("Task %s failed to report status for %d seconds. Killing!", a.id, int(timeout.Seconds())))
	}
	if ctx.Err() != nil {
		cleanup()
		return fail(mrpb.TaskReport_KILLED, errors.New("attempt killed"))
	}
	res, err := taskrun.ReadResult(out.Bytes())
	if err != nil {
		cleanup()
		msg := fmt.Sprintf("child exited (%v) without a result", runErr)
		if tail := tailFile(stderr.Name(), 2048); tail != "" {
			msg += "; stderr: " + tail
		}
		return fail(mrpb.TaskReport_FAILED, errors.New(msg))
	}
	if runErr != nil || res.GetError() != "" {
		cleanup()
		if res.GetError() == "" {
			res.Error = proto.String(runErr.Error())
		}
		rep.State, rep.Result = mrpb.TaskReport_FAILED.Enum(), res
		tt.log.Warn("tasktracker: attempt failed", "attempt", a.id, "err", res.GetError())
		return rep
	}
	if res.Output != nil {
		out := taskrun.MapOutput(res.Output)
		if err := tt.shuffle.Add(shuffle.MapOutputInfo{JobID: a.job, AttemptID: a.id, Path: out.Path, Index: out.Index}); err != nil {
			cleanup()
			return fail(mrpb.TaskReport_FAILED, fmt.Errorf("serving map output: %w", err))
		}
	} else {
		cleanup()
	}
	rep.State, rep.Result = mrpb.TaskReport_SUCCEEDED.Enum(), res
	tt.log.Info("tasktracker: attempt succeeded", "attempt", a.id, "elapsed", time.Since(start).Round(time.Millisecond))
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
	if v, ok := settings["mapreduce.task.timeout"]; ok {
		c.Set("mapreduce.task.timeout", v)
	}
	d, err := c.GetDuration("mapreduce.task.timeout", time.Millisecond)
	if err != nil || d < 0 {
		return 10 * time.Minute
	}
	return d
}

// limitWriter keeps the first n bytes written and drops the rest.
type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	keep := p
	if len(keep) > l.n {
		keep = keep[:l.n]
	}
	l.n -= len(keep)
	l.w.Write(keep)
	return len(p), nil
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
