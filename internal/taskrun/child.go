package taskrun

import (
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

// Bytes a child writes on its progress pipe.
const (
	ProgressMade  byte = 1
	CommitRequest byte = 2
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
// job's code fails the attempt with its message.
func Main(ctx context.Context, in io.Reader, out io.Writer) (code int) {
	res := &mrpb.TaskResult{}
	defer func() {
		if r := recover(); r != nil {
			res = &mrpb.TaskResult{Error: proto.String(fmt.Sprintf("panic: %v", r))}
			code = 1
		}
		WriteResult(out, res)
	}()
	spec, err := ReadSpec(in)
	if err != nil {
		res.Error = proto.String("bad task spec: " + err.Error())
		return 1
	}
	if err := loadTokens(spec); err != nil {
		res.Error = proto.String(err.Error())
		return 1
	}
	run := registered()
	if run == nil {
		res.Error = proto.String("taskrun: this program runs no MapReduce tasks (it does not link the mapreduce package)")
		return 1
	}
	r, err := run(ctx, spec, LinkFromEnv())
	if r != nil {
		res = r
	}
	if err != nil {
		res.Error = proto.String(err.Error())
		return 1
	}
	return 0
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
