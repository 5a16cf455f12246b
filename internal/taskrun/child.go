package taskrun

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/delegation"
	"github.com/stratafs/strata/internal/ipc"
	"github.com/stratafs/strata/internal/procstat"
	"github.com/stratafs/strata/internal/proto/mrpb"
)

// ProgressFDEnv names the environment variable through which a TaskTracker
// gives its child the number of a file descriptor (a pipe) on which the
// child writes ProgressMade whenever the attempt has made progress, at most
// once a second; the TaskTracker kills an attempt silent for
// mapreduce.task.timeout.
const ProgressFDEnv = "STRATA_TASK_PROGRESS_FD"

// CommitFDEnv names the environment variable through which a TaskTracker
// gives its child the number of a file descriptor (a pipe) for commit
// arbitration: before committing its output the child writes
// CommitRequest on the progress pipe and waits for a byte on this one,
// which comes once the JobTracker has allowed this attempt (and no other
// attempt of its task) to commit. An attempt that loses is killed.
const CommitFDEnv = "STRATA_TASK_COMMIT_FD"

// JobTrackerEnv names the environment variable with the JobTracker's
// address, which a TaskTracker gives its children.
const JobTrackerEnv = "STRATA_JOBTRACKER"

// UmbilicalProtocol is what task children call on the JobTracker:
// getMapCompletionEvents.
const UmbilicalProtocol = mrpb.UmbilicalProtocol

// ReuseEnv names the environment variable that makes a child run
// attempts in turn (serve): the TaskTracker sets it for jobs with
// mapreduce.job.jvm.numtasks other than 1.
const ReuseEnv = "STRATA_TASK_REUSE"

// Bytes a child writes on its progress pipe. ReuseReady comes first from
// a child started with ReuseEnv, before it reads its standard input: it
// reads one TaskSpec line per attempt, so the TaskTracker keeps the pipe
// open. (A program that predates reuse never writes it and reads its
// spec to the end of its input.)
const (
	ProgressMade  byte = 1
	CommitRequest byte = 2
	ReuseReady    byte = 3
)

// MaxSpec bounds the TaskSpec a child reads from its standard input.
const MaxSpec = 64 << 20

// MaxResult bounds the TaskResult a TaskTracker reads from its child.
const MaxResult = 16 << 20

// unmarshal tolerates fields it does not know: a user's program built
// against another strata version may be on the other end of the pipe.
var unmarshal = protojson.UnmarshalOptions{DiscardUnknown: true}

// WriteSpec writes spec as a child reads it.
func WriteSpec(w io.Writer, spec *mrpb.TaskSpec) error {
	return write(w, spec)
}

// ReadSpec reads a TaskSpec written by WriteSpec (at most MaxSpec bytes).
func ReadSpec(r io.Reader) (*mrpb.TaskSpec, error) {
	spec := &mrpb.TaskSpec{}
	return spec, read(io.LimitReader(r, MaxSpec), spec)
}

// WriteResult writes res as a TaskTracker reads it.
func WriteResult(w io.Writer, res *mrpb.TaskResult) error {
	return write(w, res)
}

// ReadResult decodes a TaskResult written by WriteResult.
func ReadResult(b []byte) (*mrpb.TaskResult, error) {
	res := &mrpb.TaskResult{}
	if err := unmarshal.Unmarshal(b, res); err != nil {
		return nil, err
	}
	return res, nil
}

func write(w io.Writer, m proto.Message) error {
	b, err := protojson.Marshal(m)
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func read(r io.Reader, m proto.Message) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	return unmarshal.Unmarshal(b, m)
}

// Runner runs the attempt spec describes in this process and returns its
// result. link is nil when the process is not a TaskTracker's child. A
// result returned with an error is reported with that error (a reduce's
// failed_maps, say).
type Runner func(ctx context.Context, spec *mrpb.TaskSpec, link *Link) (*mrpb.TaskResult, error)

var (
	runnerMu sync.Mutex
	runner   Runner
)

// SetRunner installs the function Main runs attempts with; the package
// mapreduce calls it from its init.
func SetRunner(r Runner) {
	runnerMu.Lock()
	defer runnerMu.Unlock()
	runner = r
}

func registered() Runner {
	runnerMu.Lock()
	defer runnerMu.Unlock()
	return runner
}

// Main runs the attempt whose TaskSpec is on in and writes its TaskResult
// on out; it returns the exit status (0 done, 1 failed). A panic in the
// job's code fails the attempt with its message. Started by a TaskTracker
// with ReuseEnv set, it runs attempts in turn instead (serve).
func Main(ctx context.Context, in io.Reader, out io.Writer) int {
	link := LinkFromEnv()
	if link != nil {
		// A child whose TaskTracker died stops, as Hadoop's child does
		// when its pings go unanswered: nobody would take its result.
		var cancel context.CancelFunc
		ctx, cancel = context.WithCancel(ctx)
		defer cancel()
		go watchParent(ctx, time.Second, os.Getppid(), os.Getppid, func() {
			fmt.Fprintln(os.Stderr, "taskrun: the TaskTracker is gone; stopping")
			cancel()
			time.AfterFunc(parentGoneExit, func() { os.Exit(2) })
		})
	}
	if link != nil && os.Getenv(ReuseEnv) != "" {
		return serve(ctx, in, out, link)
	}
	spec, err := ReadSpec(in)
	if err != nil {
		WriteResult(out, &mrpb.TaskResult{Error: proto.String("bad task spec: " + err.Error())})
		return 1
	}
	if err := loadTokens(spec); err != nil {
		WriteResult(out, &mrpb.TaskResult{Error: proto.String(err.Error())})
		return 1
	}
	res := runAttempt(ctx, spec, link, true)
	WriteResult(out, res)
	if res.GetError() != "" {
		return 1
	}
	return 0
}

// parentGoneExit is how long a child whose TaskTracker died gives its
// attempt to stop before it exits anyway.
const parentGoneExit = 10 * time.Second

// watchParent calls gone once the process's parent is no longer parent
// (getppid changed: the TaskTracker died and the child was reparented),
// checking every interval until ctx ends.
func watchParent(ctx context.Context, every time.Duration, parent int, getppid func() int, gone func()) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if getppid() != parent {
			gone()
			return
		}
	}
}

// serve is a child that runs several attempts of one job in turn
// (mapreduce.job.jvm.numtasks): it says ReuseReady on the progress pipe,
// then reads one TaskSpec line at a time and answers each with one
// TaskResult line carrying the attempt's usage, until its input ends
// (exit 0) or an attempt fails (exit 1: the TaskTracker reuses no child
// whose attempt failed, whose state may be broken).
func serve(ctx context.Context, in io.Reader, out io.Writer, link *Link) int {
	if _, err := link.Progress.Write([]byte{ReuseReady}); err != nil {
		return 1
	}
	r := bufio.NewReaderSize(in, 64<<10)
	for n := 0; ; n++ {
		line, err := ReadLine(r, MaxSpec)
		if err == io.EOF {
			return 0
		}
		spec := &mrpb.TaskSpec{}
		if err == nil {
			err = unmarshal.Unmarshal(line, spec)
		}
		if err == nil && n == 0 {
			// The job's tokens, once: every attempt here is of one job.
			err = loadTokens(spec)
		}
		if err == nil && spec.GetLogFile() != "" {
			err = redirectStderr(spec.GetLogFile())
		}
		if err != nil {
			WriteResult(out, &mrpb.TaskResult{Error: proto.String("bad task spec: " + err.Error())})
			return 1
		}
		// The attempt's peak is its own where the system can reset it
		// (else the process's since it started).
		procstat.ResetPeakRSS()
		before, uerr := procstat.Running()
		actx, cancel := context.WithCancel(ctx)
		// Not the process's start-up: the TaskTracker counts a reused
		// child's attempts from its ReuseReady, and their usage from here.
		res := runAttempt(actx, spec, link, false)
		cancel() // what the attempt left running ends with it
		if after, err := procstat.Running(); err == nil && uerr == nil {
			u := after.Sub(before)
			res.Usage = &mrpb.TaskUsage{UserUs: proto.Int64(u.User.Microseconds()), SystemUs: proto.Int64(u.System.Microseconds()),
				MaxRssBytes: proto.Int64(u.MaxRSS), ReadBytes: proto.Int64(u.ReadBytes), WriteBytes: proto.Int64(u.WriteBytes)}
		}
		if err := WriteResult(out, res); err != nil || res.GetError() != "" {
			return 1
		}
	}
}

// runAttempt runs one attempt with the registered Runner; a panic in the
// job's code fails it with its message. The result's phases say when the
// attempt's own work began and, for a child that runs one attempt
// (first), the CPU its start-up took.
func runAttempt(ctx context.Context, spec *mrpb.TaskSpec, link *Link, first bool) (res *mrpb.TaskResult) {
	ready, readyCPU := time.Now(), time.Duration(0)
	if first {
		if u, err := procstat.Running(); err == nil {
			readyCPU = u.Total()
		}
	}
	defer func() {
		if r := recover(); r != nil {
			res = &mrpb.TaskResult{Error: proto.String(fmt.Sprintf("panic: %v", r))}
		}
		if res.Phases == nil {
			res.Phases = &mrpb.TaskPhases{}
		}
		res.Phases.ReadyUs, res.Phases.ReadyCpuUs = proto.Int64(ready.UnixMicro()), proto.Int64(readyCPU.Microseconds())
	}()
	run := registered()
	if run == nil {
		return &mrpb.TaskResult{Error: proto.String("taskrun: this program runs no MapReduce tasks (it does not link the mapreduce package)")}
	}
	r, err := run(ctx, spec, link)
	if r == nil {
		r = &mrpb.TaskResult{}
	}
	if err != nil {
		r.Error = proto.String(err.Error())
	}
	return r
}

// ReadLine reads one newline-terminated line of at most limit bytes,
// without the newline, as specs and results travel between a TaskTracker
// and a child that runs attempts in turn. io.EOF: the input ended before
// a line began.
func ReadLine(r *bufio.Reader, limit int) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > limit+1 {
			return nil, fmt.Errorf("a line of more than %d bytes", limit)
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case err == bufio.ErrBufferFull:
			continue
		case err == io.EOF && len(line) == 0:
			return nil, io.EOF
		case err == io.EOF:
			return nil, io.ErrUnexpectedEOF
		default:
			return nil, err
		}
	}
}

// redirectStderr points file descriptor 2 (this process's stderr, and
// that of the commands it starts) at the attempt's log file, which the
// TaskTracker made.
func redirectStderr(path string) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	return syscall.Dup3(int(f.Fd()), 2, 0)
}

// Link is what a task child running under a TaskTracker has besides its
// spec: the progress pipe (which also carries commit requests) and the
// pipe on which leave to commit arrives. A nil *Link is a task running
// outside a TaskTracker: its methods do nothing.
type Link struct {
	// Progress receives ProgressMade and CommitRequest bytes.
	Progress io.Writer
	// Answer delivers one byte when the attempt may commit; nil: no
	// commit arbitration.
	Answer io.Reader
}

// LinkFromEnv is the link of a process started by a TaskTracker, or nil.
func LinkFromEnv() *Link {
	progress := inheritedFile(ProgressFDEnv, "progress")
	if progress == nil {
		return nil
	}
	l := &Link{Progress: progress}
	if answer := inheritedFile(CommitFDEnv, "commit"); answer != nil {
		l.Answer = answer
	}
	return l
}

// inheritedFile is the file whose descriptor number the environment
// variable env names, or nil. It is closed on exec, so that what the task
// starts (a streaming command) does not hold the TaskTracker's pipes.
func inheritedFile(env, name string) *os.File {
	fd, err := strconv.Atoi(os.Getenv(env))
	if err != nil || fd <= 2 {
		return nil
	}
	syscall.CloseOnExec(fd)
	return os.NewFile(uintptr(fd), name)
}

// Alive tells the TaskTracker the attempt is making progress.
func (l *Link) Alive() {
	if l != nil {
		l.Progress.Write([]byte{ProgressMade})
	}
}

// CommitGate is the attempt's canCommit hook, which blocks until the
// JobTracker allows the commit, or nil without commit arbitration.
func (l *Link) CommitGate() func(context.Context) error {
	if l == nil || l.Answer == nil {
		return nil
	}
	return func(ctx context.Context) error {
		if _, err := l.Progress.Write([]byte{CommitRequest}); err != nil {
			return err
		}
		got := make(chan error, 1)
		go func() {
			_, err := io.ReadFull(l.Answer, make([]byte, 1))
			got <- err
		}()
		select {
		case err := <-got:
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// ReportProgress writes ProgressMade each second in which total (the sum
// of the attempt's counters: records read, written, spilled, fetched, ...)
// moved, until ctx ends or the pipe breaks.
func (l *Link) ReportProgress(ctx context.Context, total func() int64) {
	if l == nil {
		return
	}
	t := time.NewTicker(time.Second)
	defer t.Stop()
	last := int64(-1)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if sum := total(); sum != last {
			last = sum
			if _, err := l.Progress.Write([]byte{ProgressMade}); err != nil {
				return
			}
		}
	}
}

// loadTokens makes the tokens of the file HADOOP_TOKEN_FILE_LOCATION
// names (the job's delegation tokens and job token, which the TaskTracker
// wrote) the credentials of every IPC client of this process, as Hadoop's
// UserGroupInformation does in a child: a task has no Kerberos ticket.
func loadTokens(spec *mrpb.TaskSpec) error {
	f := os.Getenv(delegation.TokenFileEnv)
	if f == "" {
		return nil
	}
	c := conf.New()
	for k, v := range spec.GetConf() {
		c.Set(k, v)
	}
	return ipc.LoadTokenFile(f, c)
}
