package mapreduce

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/procstat"
	"github.com/stratafs/strata/internal/spill"
	"github.com/stratafs/strata/internal/vfs"
)

// Progress is a snapshot of a running job.
type Progress struct {
	JobID                string
	Map, Reduce          float64 // 0..1
	MapsDone, Maps       int
	ReducesDone, Reduces int
}

// Result is what a finished job reports.
type Result struct {
	JobID    string
	Counters *Counters
	Elapsed  time.Duration
	// Attempts are a local job's attempts, by start time (a cluster's:
	// TaskReports).
	Attempts []AttemptReport
}

var jobSeq atomic.Int64

// newJobID is Hadoop's local job id form, job_local<random>_<n>: the
// random part keeps jobs of different processes apart in the local dirs.
func newJobID() string {
	return fmt.Sprintf("job_local%d_%04d", rand.Int32N(1<<30), jobSeq.Add(1))
}

// localConfig are the settings the local runner reads.
type localConfig struct {
	localDirs    []string
	sortBytes    int64
	spillPercent float64
	sortFactor   int
	codec        spill.Codec
	maxAttempts  int
	parallel     int
}

func readLocalConfig(c *conf.Configuration) (localConfig, error) {
	var lc localConfig
	var errs []error
	lc.localDirs = c.GetStrings("mapreduce.cluster.local.dir")
	if len(lc.localDirs) == 0 {
		errs = append(errs, errors.New("mapreduce: mapreduce.cluster.local.dir is empty"))
	}
	mb, err := c.GetInt("mapreduce.task.io.sort.mb")
	errs = append(errs, err)
	lc.sortBytes = mb << 20
	lc.spillPercent, err = c.GetFloat("mapreduce.map.sort.spill.percent")
	errs = append(errs, err)
	f, err := c.GetInt("mapreduce.task.io.sort.factor")
	errs = append(errs, err)
	lc.sortFactor = int(f)
	if on, err := c.GetBool("mapreduce.map.output.compress"); err != nil {
		errs = append(errs, err)
	} else if on {
		lc.codec, err = spill.ParseCodec(c.Get("mapreduce.map.output.compress.codec"))
		errs = append(errs, err)
	}
	a, err := c.GetInt("mapreduce.map.maxattempts")
	errs = append(errs, err)
	lc.maxAttempts = int(max(a, 1))
	lc.parallel = runtime.GOMAXPROCS(0)
	if v := c.Get("mapreduce.local.map.tasks.maximum"); v != "" {
		n, err := c.GetInt("mapreduce.local.map.tasks.maximum")
		errs = append(errs, err)
		lc.parallel = int(max(n, 1))
	}
	return lc, errors.Join(errs...)
}

// RunLocal runs job in this process (Hadoop's local job runner, with the
// same sort/spill/merge path as a cluster): map tasks in parallel (up to
// mapreduce.local.map.tasks.maximum, default the number of CPUs), their
// output sorted, spilled and merged under mapreduce.cluster.local.dir,
// then the reduce tasks, each merging its partition of every map's output.
// A task attempt that fails or panics is retried up to
// mapreduce.map.maxattempts (mapreduce.reduce.maxattempts) times.
// progress, if set, is called as tasks finish.
func RunLocal(ctx context.Context, job *Job, env fs.Env, progress func(Progress)) (*Result, error) {
	start := time.Now()
	env = env.WithDefaults()
	c := job.Conf
	if c == nil {
		c = env.Conf
	}
	lc, err := readLocalConfig(c)
	if err != nil {
		return nil, err
	}
	jobID := newJobID()
	counters := NewCounters()
	// The job's file system bytes: everything this process moved while
	// the job ran (jobs run one at a time per process in practice).
	io0 := ioSnapshot()
	// The attempts share this process: the job's CPU time is the
	// process's over the job, not a sum of attempts'.
	cpu0, cpuErr := procstat.Self()
	var attempts attemptLog
	splits, err := prepare(ctx, job, env, c)
	if err != nil {
		return nil, err
	}
	committer, err := NewCommitter(env, c, job.OutputPath)
	if err != nil {
		return nil, err
	}
	if err := committer.SetupJob(ctx); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			committer.AbortJob(context.Background())
		}
	}()
	var jobDirs []string
	for _, d := range lc.localDirs {
		jobDirs = append(jobDirs, filepath.Join(strings.TrimPrefix(d, "file://"), "localRunner", env.User, "jobcache", jobID))
	}
	for _, d := range jobDirs {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, fmt.Errorf("mapreduce: local dir %s: %w", d, err)
		}
	}
	defer func() {
		for _, d := range jobDirs {
			os.RemoveAll(d)
		}
	}()
	nred := job.NumReducers
	if job.NewReducer == nil {
		nred = 0
	}
	p := Progress{JobID: jobID, Maps: len(splits), Reduces: nred}
	var pmu sync.Mutex
	report := func(f func(*Progress)) {
		pmu.Lock()
		f(&p)
		snap := p
		pmu.Unlock()
		if progress != nil {
			progress(snap)
		}
	}
	report(func(*Progress) {})

	// Map phase.
	outputs := make([]spill.Output, len(splits))
	err = runParallel(ctx, len(splits), lc.parallel, func(i int) error {
		out, err := runAttempts(ctx, lc.maxAttempts, counters, GroupJob, FailedMaps, func(attempt int) (spill.Output, error) {
			att := &TaskAttempt{JobID: jobID, Type: 'm', Task: splits[i].Index, Attempt: attempt, Env: env, Conf: c, OutputDir: job.OutputPath}
			t0 := time.Now()
			out, err := runMap(ctx, job, att, splits[i], nred, lc, jobDirs, committer, counters)
			attempts.record(att, t0, err)
			return out, err
		})
		if err != nil {
			return err
		}
		outputs[i] = out
		counters.Add(GroupJob, LaunchedMaps, 1)
		report(func(p *Progress) { p.MapsDone++; p.Map = float64(p.MapsDone) / float64(max(p.Maps, 1)) })
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(splits) == 0 {
		report(func(p *Progress) { p.Map = 1 })
	}

	// Reduce phase.
	if nred > 0 {
		err = runParallel(ctx, nred, lc.parallel, func(r int) error {
			_, err := runAttempts(ctx, lc.maxAttempts, counters, GroupJob, FailedReduces, func(attempt int) (struct{}, error) {
				att := &TaskAttempt{JobID: jobID, Type: 'r', Task: r, Attempt: attempt, Env: env, Conf: c, OutputDir: job.OutputPath}
				t0 := time.Now()
				err := runReduce(ctx, job, att, outputs, lc, jobDirs, committer, counters)
				attempts.record(att, t0, err)
				return struct{}{}, err
			})
			if err != nil {
				return err
			}
			counters.Add(GroupJob, LaunchedReduces, 1)
			report(func(p *Progress) { p.ReducesDone++; p.Reduce = float64(p.ReducesDone) / float64(p.Reduces) })
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	if err := committer.CommitJob(ctx); err != nil {
		return nil, err
	}
	ok = true
	report(func(p *Progress) { p.Map, p.Reduce = 1, 1 })
	addIOCounters(counters, io0)
	if cpu1, err := procstat.Self(); err == nil && cpuErr == nil {
		addCPUCounters(counters, cpu1.Sub(cpu0))
	}
	return &Result{JobID: jobID, Counters: counters, Elapsed: time.Since(start), Attempts: attempts.sorted()}, nil
}

// runParallel runs f(0..n-1) on up to par goroutines; the first error
// cancels the rest.
func runParallel(ctx context.Context, n, par int, f func(i int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var once sync.Once
	var firstErr error
	next := atomic.Int64{}
	for w := 0; w < min(par, n); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := f(i); err != nil {
					once.Do(func() { firstErr = err; cancel() })
					return
				}
			}
		}()
	}
	wg.Wait()
	if firstErr == nil && ctx.Err() != nil {
		return ctx.Err()
	}
	return firstErr
}

// TaskError is the failure of a task after all its attempts.
type TaskError struct {
	Task     string
	Attempts []error
}

func (e *TaskError) Error() string {
	return fmt.Sprintf("task %s failed %d times; last error: %v", e.Task, len(e.Attempts), e.Attempts[len(e.Attempts)-1])
}

// runAttempts runs f for attempt 0, 1, ... until one succeeds or max
// attempts failed. A panic in f fails that attempt only.
func runAttempts[T any](ctx context.Context, maxAttempts int, counters *Counters, group, failed string, f func(attempt int) (T, error)) (T, error) {
	var errs []error
	var zero T
	for a := 0; a < maxAttempts; a++ {
		v, err := func() (v T, err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v\n%s", r, debug.Stack())
				}
			}()
			return f(a)
		}()
		if err == nil {
			return v, nil
		}
		if ctx.Err() != nil {
			return zero, ctx.Err()
		}
		counters.Add(group, failed, 1)
		errs = append(errs, err)
	}
	return zero, &TaskError{Task: failed, Attempts: errs}
}

// runMap runs one map attempt: read the split, map, collect (or write
// directly for a map-only job), commit.
func runMap(ctx context.Context, job *Job, att *TaskAttempt, split InputSplit, nred int, lc localConfig, dirs []string, committer *Committer, jobCounters *Counters) (out spill.Output, err error) {
	counters := NewCounters()
	att.counters = counters
	lio := newLocalIO()
	tc := &TaskContext{Attempt: att, Counters: counters, Split: &split}
	rr, err := job.Input.Open(ctx, att.Env, att.Conf, split)
	if err != nil {
		return out, err
	}
	defer rr.Close()
	if _, err := committer.SetupTask(ctx, att); err != nil {
		return out, err
	}
	committed := false
	defer func() {
		if !committed {
			committer.AbortTask(context.Background(), att)
		}
	}()
	m := job.NewMapper()
	if s, ok := m.(Setupper); ok {
		if err := s.Setup(tc); err != nil {
			return out, err
		}
	}
	var emit Emitter
	var coll *spill.Collector
	var w RecordWriter
	if nred == 0 {
		w, err = job.Output.Writer(ctx, att, fmt.Sprintf("part-m-%05d", att.Task))
		if err != nil {
			return out, err
		}
		defer func() {
			if w != nil {
				w.Close()
			}
		}()
		outRecords := counters.Counter(GroupTask, MapOutputRecords)
		emit = EmitFunc(func(k, v []byte) error {
			outRecords.Add(1)
			return w.Write(k, v)
		})
	} else {
		cfg := spill.Config{
			Partitions: nred, SortBytes: lc.sortBytes, SpillPercent: lc.spillPercent, SortFactor: lc.sortFactor,
			Compare: job.Compare, Codec: lc.codec, LocalDirs: dirs, Name: att.ID(), FS: lio,
			Counters: func(name string, d int64) { counters.Add(GroupTask, name, d) },
		}
		if job.NewCombiner != nil {
			comb := job.NewCombiner()
			cfg.Combine = func(key []byte, values func() ([]byte, bool), emit func(k, v []byte) error) error {
				return comb.Reduce(tc, key, NewValues(values), EmitFunc(emit))
			}
		}
		coll, err = spill.NewCollector(cfg)
		if err != nil {
			return out, err
		}
		defer func() {
			if err != nil {
				coll.Abort()
			}
		}()
		part := job.PartitionFunc()
		emit = EmitFunc(func(k, v []byte) error {
			return coll.Collect(part(k, v, nred), k, v)
		})
	}
	inRecords := counters.Counter(GroupTask, MapInputRecords)
	for n := 1; rr.Next(); n++ {
		inRecords.Add(1)
		if err := m.Map(tc, rr.Key(), rr.Value(), emit); err != nil {
			return out, err
		}
		if n%1024 == 0 && ctx.Err() != nil { // a cancelled attempt stops within 1024 records
			return out, ctx.Err()
		}
	}
	if err := rr.Err(); err != nil {
		return out, err
	}
	if cu, ok := m.(Cleanuper); ok {
		if err := cu.Cleanup(tc, emit); err != nil {
			return out, err
		}
	}
	att.phases.MapFinish = time.Now()
	if coll != nil {
		if out, err = coll.Close(); err != nil {
			return out, err
		}
	} else {
		err = w.Close()
		w = nil
		if err != nil {
			return out, err
		}
	}
	if err := commitAttempt(ctx, committer, att); err != nil {
		return out, err
	}
	committed = true
	lio.addTo(counters)
	jobCounters.Merge(counters)
	return out, nil
}

// runReduce runs one reduce attempt of a local job: merge partition r of
// every map output on local disk, then reduce.
func runReduce(ctx context.Context, job *Job, att *TaskAttempt, outputs []spill.Output, lc localConfig, dirs []string, committer *Committer, jobCounters *Counters) error {
	counters := NewCounters()
	att.counters = counters
	lio := newLocalIO()
	// The map outputs are on this node's disks: nothing to fetch.
	att.phases.ShuffleFinish = time.Now()
	merged, err := mergeLocal(lio, att.Task, outputs, job.Compare, lc, dirs, counters) // nil: bytes order, merged on key prefixes
	if err != nil {
		return err
	}
	defer merged.Close()
	att.phases.SortFinish = time.Now()
	if err := reduceMerged(ctx, job, att, merged, committer, counters); err != nil {
		return err
	}
	lio.addTo(counters)
	jobCounters.Merge(counters)
	return nil
}

// mergeLocal opens partition r of each map output and merges them. The
// map output files are closed when the returned iterator is.
func mergeLocal(fsys vfs.FS, r int, outputs []spill.Output, cmp func(a, b []byte) int, lc localConfig, dirs []string, counters *Counters) (_ spill.Iterator, err error) {
	var segs []spill.Iterator
	var files []vfs.File
	defer func() {
		if err != nil {
			for _, s := range segs {
				s.Close()
			}
			for _, f := range files {
				f.Close()
			}
		}
	}()
	for _, o := range outputs {
		if r >= len(o.Index) {
			return nil, fmt.Errorf("map output %s has %d partitions, want %d", o.Path, len(o.Index), r+1)
		}
		ie := o.Index[r]
		f, err := vfs.Open(fsys, o.Path)
		if err != nil {
			return nil, err
		}
		files = append(files, f)
		seg, err := spill.OpenSegment(io.NewSectionReader(f, ie.Offset, ie.PartLength), lc.codec, ie.PartLength, ie.RawLength)
		if err != nil {
			return nil, err
		}
		segs = append(segs, seg)
		counters.Add(GroupTask, ShuffledMaps, 1)
		counters.Add(GroupTask, ReduceShuffleBytes, ie.PartLength)
	}
	merged, err := spill.MergeFS(fsys, segs, cmp, lc.sortFactor, dirs, lc.codec)
	if err != nil {
		segs = nil // Merge closed them
		return nil, err
	}
	return &closingIterator{Iterator: merged, files: files}, nil
}

// closingIterator closes files after its iterator.
type closingIterator struct {
	spill.Iterator
	files []vfs.File
}

func (c *closingIterator) Close() error {
	err := c.Iterator.Close()
	for _, f := range c.files {
		f.Close()
	}
	return err
}

// reduceMerged runs the reducer over a merged, sorted stream and commits
// the attempt's output.
func reduceMerged(ctx context.Context, job *Job, att *TaskAttempt, merged spill.Iterator, committer *Committer, counters *Counters) (err error) {
	tc := &TaskContext{Attempt: att, Counters: counters}
	if _, err := committer.SetupTask(ctx, att); err != nil {
		return err
	}
	committed := false
	defer func() {
		if !committed {
			committer.AbortTask(context.Background(), att)
		}
	}()
	w, err := job.Output.Writer(ctx, att, fmt.Sprintf("part-r-%05d", att.Task))
	if err != nil {
		return err
	}
	defer func() {
		if w != nil {
			w.Close()
		}
	}()
	red := job.NewReducer()
	if s, ok := red.(Setupper); ok {
		if err := s.Setup(tc); err != nil {
			return err
		}
	}
	outRecords := counters.Counter(GroupTask, ReduceOutputRecords)
	out := EmitFunc(func(k, v []byte) error {
		outRecords.Add(1)
		return w.Write(k, v)
	})
	cmp := job.CompareFunc()
	// One Values for every group, reset per key: nothing is allocated per
	// key (a reducer may not keep a group's Values past its Reduce call).
	inGroups, inRecords := counters.Counter(GroupTask, ReduceInputGroups), counters.Counter(GroupTask, ReduceInputRecords)
	var group func() ([]byte, bool)
	vals := NewValues(func() ([]byte, bool) {
		v, ok := group()
		if ok {
			inRecords.Add(1)
		}
		return v, ok
	})
	n := 0
	err = spill.Groups(merged, cmp, func(key []byte, values func() ([]byte, bool)) error {
		inGroups.Add(1)
		if n++; n%1024 == 0 && ctx.Err() != nil {
			return ctx.Err()
		}
		group, vals.cur = values, nil
		return red.Reduce(tc, key, vals, out)
	})
	if err != nil {
		return err
	}
	if cu, ok := red.(Cleanuper); ok {
		if err := cu.Cleanup(tc, out); err != nil {
			return err
		}
	}
	err = w.Close()
	w = nil
	if err != nil {
		return err
	}
	if err := commitAttempt(ctx, committer, att); err != nil {
		return err
	}
	committed = true
	return nil
}
