package mapreduce

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/shuffle"
	"github.com/stratafs/strata/internal/taskrun"
)

func init() { taskrun.SetRunner(runTask) }

// commitGate is an attempt's canCommit hook: the child link's, for the
// attempts that write job output (reduces, and maps of map-only jobs). A
// map of a job with reduces leaves its output on local disk for the
// shuffle, and the first attempt to succeed wins without asking.
func commitGate(spec *mrpb.TaskSpec, link *taskrun.Link) func(context.Context) error {
	if spec.GetType() == mrpb.TaskType_MAP && spec.GetReducers() > 0 {
		return nil
	}
	return link.CommitGate()
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

// counterTotal is the sum of every counter: progress is its moving.
func counterTotal(counters *Counters) func() int64 {
	return func() int64 {
		var sum int64
		for _, g := range counters.Map() {
			for _, v := range g {
				sum += v
			}
		}
		return sum
	}
}

// countersProto lists counters as the protocol carries them.
func countersProto(c *Counters) []*mrpb.Counter {
	var out []*mrpb.Counter
	for _, g := range c.Groups() {
		for _, cv := range c.Group(g) {
			out = append(out, &mrpb.Counter{Group: proto.String(g), Name: proto.String(cv.Name), Value: proto.Int64(cv.Value)})
		}
	}
	return out
}

// splitProto is s as the protocol carries it.
func splitProto(s InputSplit) *mrpb.InputSplit {
	return &mrpb.InputSplit{Path: proto.String(s.Path), Start: proto.Int64(s.Start), Length: proto.Int64(s.Length),
		Hosts: s.Hosts, Index: proto.Int32(int32(s.Index))}
}

// splitFrom is the InputSplit p describes.
func splitFrom(p *mrpb.InputSplit) InputSplit {
	return InputSplit{Path: p.GetPath(), Start: p.GetStart(), Length: p.GetLength(), Hosts: p.GetHosts(), Index: int(p.GetIndex())}
}

// runTask is the taskrun.Runner of every program that links this package:
// it rebuilds the job spec names and runs the attempt in this process.
func runTask(ctx context.Context, spec *mrpb.TaskSpec, link *taskrun.Link) (*mrpb.TaskResult, error) {
	counters := NewCounters()
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	go link.ReportProgress(pctx, counterTotal(counters))
	io0 := ioSnapshot()
	c := conf.New()
	for k, v := range spec.GetConf() {
		c.Set(k, v)
	}
	if spec.GetType() == mrpb.TaskType_JOB_CLEANUP {
		return runJobCleanup(ctx, spec, c)
	}
	job, err := NewJob(spec.GetJob(), spec.GetArgs(), c)
	if err != nil {
		return nil, err
	}
	if job.Conf == nil {
		job.Conf = c
	}
	env := fs.Env{Conf: job.Conf, User: spec.GetUser()}.WithDefaults()
	lc, err := readLocalConfig(job.Conf)
	if err != nil {
		return nil, err
	}
	committer, err := NewCommitter(env, job.Conf, job.OutputPath)
	if err != nil {
		return nil, err
	}
	reducers, dirs := int(spec.GetReducers()), spec.GetLocalDirs()
	att := &TaskAttempt{JobID: spec.GetJobId(), Type: taskrun.TypeLetter(spec.GetType()), Task: int(spec.GetTask()), Attempt: int(spec.GetAttempt()),
		Env: env, Conf: job.Conf, OutputDir: job.OutputPath, canCommit: commitGate(spec, link)}
	res := &mrpb.TaskResult{}
	switch spec.GetType() {
	case mrpb.TaskType_MAP:
		if spec.GetSplit() == nil {
			return nil, errors.New("mapreduce: map task without a split")
		}
		out, err := runMap(ctx, job, att, splitFrom(spec.GetSplit()), reducers, lc, dirs, committer, counters)
		if err != nil {
			return nil, err
		}
		if reducers > 0 {
			res.Output = taskrun.MapOutputProto(out)
		}
	case mrpb.TaskType_REDUCE:
		cfg := shuffle.DefaultConfig()
		cfg.JobID, cfg.Reduce, cfg.Name, cfg.Secret = att.JobID, att.Task, att.ID(), spec.GetJobToken()
		cfg.Compare, cfg.Codec, cfg.SortFactor, cfg.LocalDirs = job.Compare, lc.codec, lc.sortFactor, dirs // nil: bytes order
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
		lio := newLocalIO()
		cfg.FS = lio
		end := newShuffleEnd(max(int(spec.GetNumMaps()), len(spec.GetMaps())))
		cfg.Counters = func(name string, n int64) { counters.Add(GroupTask, name, n) }
		cfg.Fetched = end.fetched
		every, err := job.Conf.GetDuration("mapreduce.jobtracker.heartbeat.interval", time.Millisecond)
		if err != nil || every <= 0 {
			every = time.Second
		}
		merged, err := taskrun.FetchMapOutputs(ctx, cfg, spec, every, link)
		var fe *shuffle.FetchError
		if errors.As(err, &fe) {
			for _, m := range fe.Failed {
				res.FailedMaps = append(res.FailedMaps, m.AttemptID)
			}
			res.Error = proto.String(err.Error())
			return res, err
		}
		if err != nil {
			return nil, err
		}
		defer merged.Close()
		att.phases.SortFinish = time.Now()
		att.phases.ShuffleFinish = end.at(att.phases.SortFinish)
		if err := reduceMerged(ctx, job, att, merged, committer, counters); err != nil {
			return nil, err
		}
		lio.addTo(counters)
	default:
		return nil, fmt.Errorf("mapreduce: task type %v", spec.GetType())
	}
	addIOCounters(counters, io0)
	res.Counters = countersProto(counters)
	res.Phases = phasesProto(att.phases)
	return res, nil
}

// runJobCleanup is a JOB_CLEANUP attempt: it commits the job's output
// (removes _temporary, writes _SUCCESS) when the spec's cleanup state is
// SUCCEEDED and aborts it (removes _temporary) otherwise, as the job's
// user, with the job's settings. It needs no registered job: the
// TaskTracker runs it with its own program.
func runJobCleanup(ctx context.Context, spec *mrpb.TaskSpec, c *conf.Configuration) (*mrpb.TaskResult, error) {
	env := fs.Env{Conf: c, User: spec.GetUser()}.WithDefaults()
	committer, err := NewCommitter(env, c, spec.GetOutputPath())
	if err != nil {
		return nil, err
	}
	if spec.GetCleanupState() == mrpb.JobState_SUCCEEDED {
		err = committer.CommitJob(ctx)
	} else {
		err = committer.AbortJob(ctx)
	}
	if err != nil {
		return nil, err
	}
	return &mrpb.TaskResult{}, nil
}

// shuffleMemory sets a reduce's shuffle memory as Hadoop sizes it: the
// task's heap — mapreduce.reduce.memory.mb × mapreduce.job.heap.memory-mb.ratio
// (there is no JVM to give -Xmx) — times
// mapreduce.reduce.shuffle.input.buffer.percent, with the merge and
// single-segment fractions from their keys. Without a memory cap the
// shuffle keeps its default budget.
func shuffleMemory(cfg *shuffle.Config, c *conf.Configuration) error {
	mb, err1 := TaskMemoryMB(c, false)
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

// shuffleEnd finds when a reduce's shuffle ended: when the last of its
// maps' outputs was in (Hadoop's shuffleFinishTime). A map fetched twice
// (a rerun attempt's output) counts once. fetched's calls are serialized
// (shuffle.Config.Fetched) but may come from a fetcher still returning
// after the shuffle's Wait did, hence the atomic.
type shuffleEnd struct {
	maps  int
	seen  map[int]bool
	ended atomic.Int64 // Unix ns; 0: not yet
}

func newShuffleEnd(maps int) *shuffleEnd { return &shuffleEnd{maps: maps, seen: map[int]bool{}} }

func (e *shuffleEnd) fetched(loc shuffle.MapLocation) {
	if e.seen[loc.MapIndex] {
		return
	}
	if e.seen[loc.MapIndex] = true; len(e.seen) == e.maps {
		e.ended.Store(time.Now().UnixNano())
	}
}

// at is the shuffle's end given the sort's (the merge that followed):
// never after it, and the sort's when no map was seen last (none, or its
// call is late).
func (e *shuffleEnd) at(sortFinish time.Time) time.Time {
	if ns := e.ended.Load(); ns != 0 && ns <= sortFinish.UnixNano() {
		return time.Unix(0, ns)
	}
	return sortFinish
}
