package mapreduce

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"syscall"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/shuffle"
	"github.com/stratafs/strata/internal/spill"
)

// TaskSpec describes one task attempt to run in its own process (a
// TaskTracker's child, Hadoop's child JVM): the job to rebuild from its
// registered name, arguments and settings, and the attempt's input.
type TaskSpec struct {
	Job   string            `json:"job"`
	Args  []string          `json:"args"`
	Conf  map[string]string `json:"conf"`
	User  string            `json:"user"`
	JobID string            `json:"jobId"`
	// Type is "m" or "r".
	Type    string `json:"type"`
	Task    int    `json:"task"`
	Attempt int    `json:"attempt"`
	// Split is a map task's input.
	Split *InputSplit `json:"split,omitempty"`
	// Reducers is the job's number of reduce tasks (a map partitions its
	// output into that many parts; 0: map-only).
	Reducers int `json:"reducers"`
	// LocalDirs hold the attempt's spills and map output.
	LocalDirs []string `json:"localDirs"`
	// Maps are, for a reduce task, where each map's output is served —
	// of the maps done when it was launched.
	Maps []shuffle.MapLocation `json:"maps,omitempty"`
	// NumMaps is, for a reduce task, the job's number of maps; if Maps
	// has fewer, the attempt asks the JobTracker (JobTrackerEnv) for map
	// completion events from number MapEvents on until it knows them all.
	NumMaps   int `json:"numMaps,omitempty"`
	MapEvents int `json:"mapEvents,omitempty"`
	// Executable, if set, is the URI of the program to run the attempt
	// with (a user's job program, uploaded by its client).
	Executable string `json:"executable,omitempty"`
}

// TaskResult is what an attempt reports when it ends.
type TaskResult struct {
	// Output is a map attempt's output on local disk (to be served to
	// reducers).
	Output   *spill.Output               `json:"output,omitempty"`
	Counters map[string]map[string]int64 `json:"counters"`
	Error    string                      `json:"error,omitempty"`
	// FailedMaps are, after a fetch failure, the map attempts whose output
	// could not be fetched (they must run again).
	FailedMaps []string `json:"failedMaps,omitempty"`
}

// RunTask runs one attempt in this process.
func RunTask(ctx context.Context, spec TaskSpec) (*TaskResult, error) {
	return runTask(ctx, spec, NewCounters(), nil)
}

// ProgressFDEnv names the environment variable through which a TaskTracker
// gives its child the number of a file descriptor (a pipe) on which the
// child writes a byte whenever the attempt has made progress, at most once
// a second; the TaskTracker kills an attempt silent for
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

// TaskUmbilicalProtocol is what task children call on the JobTracker:
// getMapCompletionEvents.
const TaskUmbilicalProtocol = "strata.TaskUmbilicalProtocol"

// Bytes a child writes on its progress pipe.
const (
	ProgressMade  byte = 1
	CommitRequest byte = 2
)

// commitGate is an attempt's canCommit hook: the child link's, for the
// attempts that write job output (reduces, and maps of map-only jobs). A
// map of a job with reduces leaves its output on local disk for the
// shuffle, and the first attempt to succeed wins without asking.
func commitGate(spec TaskSpec, link *childLink) func(context.Context) error {
	if spec.Type == "m" && spec.Reducers > 0 {
		return nil
	}
	return link.commitGate()
}

// commitAttempt commits att's output once it may.
func commitAttempt(ctx context.Context, committer *Committer, att *TaskAttempt) error {
	if att.canCommit != nil {
		if err := att.canCommit(ctx); err != nil {
			return fmt.Errorf("mapreduce: waiting for permission to commit %s: %w", att.ID(), err)
		}
	}
	return committer.CommitTask(ctx, att)
}

// reportProgress writes a byte on w each second in which counters moved
// (records read, written, spilled, fetched, ...), until ctx ends.
func reportProgress(ctx context.Context, counters *Counters, w io.Writer) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	last := int64(-1)
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		var sum int64
		for _, g := range counters.Map() {
			for _, v := range g {
				sum += v
			}
		}
		if sum != last {
			last = sum
			if _, err := w.Write([]byte{ProgressMade}); err != nil {
				return
			}
		}
	}
}

func runTask(ctx context.Context, spec TaskSpec, counters *Counters, link *childLink) (*TaskResult, error) {
	io0 := ioSnapshot()
	c := conf.New()
	for k, v := range spec.Conf {
		c.Set(k, v)
	}
	job, err := NewJob(spec.Job, spec.Args, c)
	if err != nil {
		return nil, err
	}
	if job.Conf == nil {
		job.Conf = c
	}
	env := fs.Env{Conf: job.Conf, User: spec.User}.WithDefaults()
	lc, err := readLocalConfig(job.Conf)
	if err != nil {
		return nil, err
	}
	committer, err := NewCommitter(env, job.Conf, job.OutputPath)
	if err != nil {
		return nil, err
	}
	if len(spec.Type) != 1 {
		return nil, fmt.Errorf("mapreduce: task type %q", spec.Type)
	}
	att := &TaskAttempt{JobID: spec.JobID, Type: spec.Type[0], Task: spec.Task, Attempt: spec.Attempt, Env: env, Conf: job.Conf, OutputDir: job.OutputPath, canCommit: commitGate(spec, link)}
	res := &TaskResult{}
	switch spec.Type {
	case "m":
		if spec.Split == nil {
			return nil, errors.New("mapreduce: map task without a split")
		}
		out, err := runMap(ctx, job, att, *spec.Split, spec.Reducers, lc, spec.LocalDirs, committer, counters)
		if err != nil {
			return nil, err
		}
		if spec.Reducers > 0 {
			res.Output = &out
		}
	case "r":
		cfg := shuffle.DefaultConfig()
		cfg.JobID, cfg.Reduce, cfg.Name = spec.JobID, spec.Task, att.ID()
		cfg.Compare, cfg.Codec, cfg.SortFactor, cfg.LocalDirs = job.CompareFunc(), lc.codec, lc.sortFactor, spec.LocalDirs
		if n, err := job.Conf.GetInt("mapreduce.reduce.shuffle.parallelcopies"); err == nil && n > 0 {
			cfg.ParallelCopies = int(n)
		}
		if err := shuffleMemory(&cfg, job.Conf); err != nil {
			return nil, err
		}
		if d := job.Conf.Get("mapreduce.reduce.shuffle.read.timeout"); d != "" {
			if v, err := job.Conf.GetDuration("mapreduce.reduce.shuffle.read.timeout", time.Millisecond); err == nil {
				cfg.ReadTimeout, cfg.ConnectTimeout = v, v
			}
		}
		cfg.Counters = func(name string, n int64) { counters.Add(GroupTask, name, n) }
		merged, err := fetchMapOutputs(ctx, cfg, spec, job.Conf, link)
		var fe *shuffle.FetchError
		if errors.As(err, &fe) {
			for _, m := range fe.Failed {
				res.FailedMaps = append(res.FailedMaps, m.AttemptID)
			}
			res.Error = err.Error()
			return res, err
		}
		if err != nil {
			return nil, err
		}
		defer merged.Close()
		if err := reduceMerged(ctx, job, att, merged, committer, counters); err != nil {
			return nil, err
		}
	default:
		return nil, fmt.Errorf("mapreduce: task type %q", spec.Type)
	}
	addIOCounters(counters, io0)
	res.Counters = counters.Map()
	return res, nil
}

// TaskMain runs the attempt described by the JSON TaskSpec on in and
// writes its JSON TaskResult on out; it returns the exit status (0 done,
// 1 failed). A panic in the job's code fails the attempt with its message.
func TaskMain(ctx context.Context, in io.Reader, out io.Writer) (code int) {
	var spec TaskSpec
	res := &TaskResult{}
	defer func() {
		if r := recover(); r != nil {
			res = &TaskResult{Error: fmt.Sprintf("panic: %v", r)}
			code = 1
		}
		json.NewEncoder(out).Encode(res)
	}()
	if err := json.NewDecoder(io.LimitReader(in, 64<<20)).Decode(&spec); err != nil {
		res.Error = "bad task spec: " + err.Error()
		return 1
	}
	counters := NewCounters()
	var link *childLink
	if progress := inheritedFile(ProgressFDEnv, "progress"); progress != nil {
		pctx, cancel := context.WithCancel(ctx)
		defer cancel()
		go reportProgress(pctx, counters, progress)
		link = &childLink{progress: progress}
		if answer := inheritedFile(CommitFDEnv, "commit"); answer != nil {
			link.answer = answer
		}
	}
	r, err := runTask(ctx, spec, counters, link)
	if r != nil {
		res = r
	}
	if err != nil {
		res.Error = err.Error()
		return 1
	}
	return 0
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

// shuffleMemory sets a reduce's shuffle memory as Hadoop sizes it: the
// task's heap — mapreduce.reduce.memory.mb × mapreduce.job.heap.memory-mb.ratio
// (there is no JVM to give -Xmx) — times
// mapreduce.reduce.shuffle.input.buffer.percent, with the merge and
// single-segment fractions from their keys. Without a memory cap the
// shuffle keeps its default budget.
func shuffleMemory(cfg *shuffle.Config, c *conf.Configuration) error {
	mb, err1 := c.GetInt("mapreduce.reduce.memory.mb")
	ratio, err2 := c.GetFloat("mapreduce.job.heap.memory-mb.ratio")
	input, err3 := c.GetFloat("mapreduce.reduce.shuffle.input.buffer.percent")
	merge, err4 := c.GetFloat("mapreduce.reduce.shuffle.merge.percent")
	limit, err5 := c.GetFloat("mapreduce.reduce.shuffle.memory.limit.percent")
	if err := errors.Join(err1, err2, err3, err4, err5); err != nil {
		return err
	}
	if !(ratio > 0 && ratio <= 1 && input > 0 && input <= 1) {
		return fmt.Errorf("mapreduce: mapreduce.job.heap.memory-mb.ratio %v and mapreduce.reduce.shuffle.input.buffer.percent %v must be in (0, 1]", ratio, input)
	}
	if mb > 0 {
		cfg.MemoryBudget = int64(float64(mb<<20) * ratio * input)
	}
	cfg.MergePercent, cfg.MemoryLimitPercent = merge, limit
	return nil
}
