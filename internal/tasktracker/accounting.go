package tasktracker

import (
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/internal/procstat"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/mapreduce"
)

// account adds to rep what the TaskTracker knows of the child it reaped:
// when it ran and what the kernel charged it (wait4's rusage, which
// includes the descendants it waited for: a streaming command), with
// u.MaxRSS the peak of the process tree's sampled resident memory. A
// successful attempt's counters get CPU_MILLISECONDS, its user and system
// parts, the peak RSS and the block I/O, as Hadoop's task counters have
// them from the child JVM's process tree.
func account(rep *mrpb.TaskReport, typ mrpb.TaskType, start, end time.Time, u procstat.Usage) {
	rep.StartMs, rep.FinishMs = proto.Int64(start.UnixMilli()), proto.Int64(end.UnixMilli())
	rep.Usage = &mrpb.TaskUsage{UserUs: proto.Int64(u.User.Microseconds()), SystemUs: proto.Int64(u.System.Microseconds()),
		MaxRssBytes: proto.Int64(u.MaxRSS), ReadBytes: proto.Int64(u.ReadBytes), WriteBytes: proto.Int64(u.WriteBytes)}
	if rep.GetState() != mrpb.TaskReport_SUCCEEDED || rep.Result == nil || typ == mrpb.TaskType_JOB_CLEANUP {
		return
	}
	rss := mapreduce.PeakMapRSS
	if typ == mrpb.TaskType_REDUCE {
		rss = mapreduce.PeakReduceRSS
	}
	for _, c := range []struct {
		name string
		v    int64
	}{
		{mapreduce.CPUMilliseconds, u.Total().Milliseconds()},
		{mapreduce.CPUUserMilliseconds, u.User.Milliseconds()},
		{mapreduce.CPUSystemMilliseconds, u.System.Milliseconds()},
		{rss, u.MaxRSS},
		{mapreduce.BlockReadBytes, u.ReadBytes},
		{mapreduce.BlockWriteBytes, u.WriteBytes},
	} {
		rep.Result.Counters = append(rep.Result.Counters, &mrpb.Counter{Group: proto.String(mapreduce.GroupTask), Name: proto.String(c.name), Value: proto.Int64(c.v)})
	}
}

// intermediateEvery is how often the TaskTracker measures the space its
// attempts' intermediate data takes.
const intermediateEvery = 100 * time.Millisecond

// intermediate is the space of the attempts' directories under the local
// dirs' taskTracker/ trees (spills, map outputs, shuffled segments and merges of every attempt)
// now and at its peak since the last reset, measured every
// intermediateEvery and as each attempt ends — a peak between two
// measurements is missed.
type intermediate struct {
	now, peak atomic.Int64
}

// IntermediateBytes returns the space the attempts' intermediate data
// took at the last measurement and the most it took since the TaskTracker
// started or ResetIntermediatePeak (the SanDisk paper's "intermediate
// data", about 60% of a TeraSort's input per node).
func (tt *TaskTracker) IntermediateBytes() (now, peak int64) {
	return tt.inter.now.Load(), tt.inter.peak.Load()
}

// ResetIntermediatePeak starts a new peak from the current space.
func (tt *TaskTracker) ResetIntermediatePeak() {
	tt.inter.peak.Store(tt.inter.now.Load())
}

// measureIntermediate runs until the TaskTracker closes.
func (tt *TaskTracker) measureIntermediate() {
	t := time.NewTicker(intermediateEvery)
	defer t.Stop()
	for {
		tt.sampleIntermediate()
		select {
		case <-tt.ctx.Done():
			return
		case <-t.C:
		}
	}
}

// sampleIntermediate measures the intermediate data's space now. Besides
// the ticker, it runs as each attempt ends: a map's output is then
// complete, and a short job's could be gone before the next tick.
func (tt *TaskTracker) sampleIntermediate() {
	n := diskUsage(tt.cfg.LocalDirs)
	tt.inter.now.Store(n)
	for {
		p := tt.inter.peak.Load()
		if n <= p || tt.inter.peak.CompareAndSwap(p, n) {
			break
		}
	}
}

// diskUsage is the space (allocated blocks, as du counts) of the files in
// the attempts' directories, <dir>/taskTracker/<job>/<attempt>/, of each
// dir: spills, map outputs, shuffled segments and merges — not a job's
// program (<job>/job.bin) or anything else beside the attempts. Files that
// vanish while it walks are skipped.
func diskUsage(dirs []string) int64 {
	var total int64
	add := func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return nil
		}
		info, err := e.Info()
		if err != nil {
			return nil
		}
		if st, ok := info.Sys().(*syscall.Stat_t); ok {
			total += st.Blocks * 512
		} else {
			total += info.Size()
		}
		return nil
	}
	for _, d := range dirs {
		root := filepath.Join(d, "taskTracker")
		jobs, _ := os.ReadDir(root)
		for _, j := range jobs {
			if !j.IsDir() {
				continue
			}
			atts, _ := os.ReadDir(filepath.Join(root, j.Name()))
			for _, a := range atts {
				if a.IsDir() {
					filepath.WalkDir(filepath.Join(root, j.Name(), a.Name()), add)
				}
			}
		}
	}
	return total
}

// registerAccounting adds to the TaskTracker's Prometheus metrics its
// process's CPU time split into user and system (and its reaped task
// children's), the intermediate space, the running attempts and slots.
func (tt *TaskTracker) registerAccounting(reg *prometheus.Registry) {
	reg.MustRegister(procstat.Collector("strata", "tasktracker"))
	gauge := func(name, help string, f func() float64) {
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Namespace: "strata", Subsystem: "tasktracker", Name: name, Help: help}, f))
	}
	gauge("intermediate_bytes", "Space taken by the attempts' spills, map outputs and shuffled segments (du of the local dirs' taskTracker/<job>/<attempt>/).",
		func() float64 { n, _ := tt.IntermediateBytes(); return float64(n) })
	gauge("intermediate_peak_bytes", "Most space the intermediate data took since start or the last reset.",
		func() float64 { _, p := tt.IntermediateBytes(); return float64(p) })
	gauge("running_attempts", "Attempts running in children.", func() float64 {
		tt.mu.Lock()
		defer tt.mu.Unlock()
		return float64(len(tt.running))
	})
}
