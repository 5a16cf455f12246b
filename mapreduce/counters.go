package mapreduce

import (
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/procstat"
)

// Counter groups and names, as Hadoop prints them.
const (
	GroupTask       = "Map-Reduce Framework"
	GroupFileSystem = "File System Counters"
	GroupJob        = "Job Counters"
	GroupUser       = "User Counters"
)

// Built-in counter names (Hadoop's TaskCounter and JobCounter display names).
const (
	MapInputRecords       = "Map input records"
	MapOutputRecords      = "Map output records"
	MapOutputBytes        = "Map output bytes"
	MapOutputMaterialized = "Map output materialized bytes"
	CombineInputRecords   = "Combine input records"
	CombineOutputRecords  = "Combine output records"
	SpilledRecords        = "Spilled Records"
	Spills                = "Spills"
	ShuffledMaps          = "Shuffled Maps"
	ReduceShuffleBytes    = "Reduce shuffle bytes"
	ReduceInputGroups     = "Reduce input groups"
	ReduceInputRecords    = "Reduce input records"
	ReduceOutputRecords   = "Reduce output records"
	MergedMapOutputs      = "Merged Map outputs"
	LaunchedMaps          = "Launched map tasks"
	LaunchedReduces       = "Launched reduce tasks"
	DataLocalMaps         = "Data-local map tasks"
	RemoteMaps            = "Other local map tasks"
	FailedMaps            = "Failed map tasks"
	FailedReduces         = "Failed reduce tasks"
)

// Resource counters of an attempt (Hadoop's TaskCounter display names;
// the user/system split and the block I/O are strata's): what the
// operating system charged the attempt's child process, from its rusage
// when the TaskTracker reaped it. Local-mode attempts share one process
// and have none of their own; the job gets the process's CPU time
// instead (RunLocal).
const (
	CPUMilliseconds       = "CPU time spent (ms)"
	CPUUserMilliseconds   = "CPU user time (ms)"
	CPUSystemMilliseconds = "CPU system time (ms)"
	PeakMapRSS            = "Peak Map Physical memory (bytes)"
	PeakReduceRSS         = "Peak Reduce Physical memory (bytes)"
	BlockReadBytes        = "Block I/O read bytes"
	BlockWriteBytes       = "Block I/O write bytes"
)

// Hadoop's FileSystemCounter names for the local file system:
// FILE_BYTES_READ and FILE_BYTES_WRITTEN count the task's input and
// output on file:// and its intermediate data — spills, merges of spills,
// map output files, shuffled segments kept on disk and the reduce side's
// merges — as Hadoop's local file system counts them.
var FileBytesRead, FileBytesWritten = fs.IOCounterNames("file")

// hadoopNames are Hadoop's enum names of the built-in counters
// (TaskCounter, JobCounter, FileSystemCounter), by display name.
var hadoopNames = map[string]string{
	MapInputRecords:       "MAP_INPUT_RECORDS",
	MapOutputRecords:      "MAP_OUTPUT_RECORDS",
	MapOutputBytes:        "MAP_OUTPUT_BYTES",
	MapOutputMaterialized: "MAP_OUTPUT_MATERIALIZED_BYTES",
	CombineInputRecords:   "COMBINE_INPUT_RECORDS",
	CombineOutputRecords:  "COMBINE_OUTPUT_RECORDS",
	SpilledRecords:        "SPILLED_RECORDS",
	Spills:                "SPILLS",
	ShuffledMaps:          "SHUFFLED_MAPS",
	ReduceShuffleBytes:    "REDUCE_SHUFFLE_BYTES",
	ReduceInputGroups:     "REDUCE_INPUT_GROUPS",
	ReduceInputRecords:    "REDUCE_INPUT_RECORDS",
	ReduceOutputRecords:   "REDUCE_OUTPUT_RECORDS",
	MergedMapOutputs:      "MERGED_MAP_OUTPUTS",
	"Failed Shuffles":     "FAILED_SHUFFLE",
	LaunchedMaps:          "TOTAL_LAUNCHED_MAPS",
	LaunchedReduces:       "TOTAL_LAUNCHED_REDUCES",
	DataLocalMaps:         "DATA_LOCAL_MAPS",
	RemoteMaps:            "OTHER_LOCAL_MAPS",
	FailedMaps:            "NUM_FAILED_MAPS",
	FailedReduces:         "NUM_FAILED_REDUCES",
	CPUMilliseconds:       "CPU_MILLISECONDS",
	CPUUserMilliseconds:   "CPU_USER_MILLISECONDS",
	CPUSystemMilliseconds: "CPU_SYSTEM_MILLISECONDS",
	PeakMapRSS:            "MAP_PHYSICAL_MEMORY_BYTES_MAX",
	PeakReduceRSS:         "REDUCE_PHYSICAL_MEMORY_BYTES_MAX",
	BlockReadBytes:        "BLOCK_READ_BYTES",
	BlockWriteBytes:       "BLOCK_WRITE_BYTES",
}

// HadoopName is a counter's name as Hadoop's enums spell it
// (MAP_OUTPUT_BYTES for "Map output bytes", FILE_BYTES_READ for "FILE:
// Number of bytes read", HDFS_BYTES_WRITTEN, ...); other counters (a
// job's own) keep their names.
func HadoopName(group, name string) string {
	if group == GroupFileSystem {
		if scheme, rest, ok := strings.Cut(name, ": Number of bytes "); ok {
			switch rest {
			case "read":
				return scheme + "_BYTES_READ"
			case "written":
				return scheme + "_BYTES_WRITTEN"
			}
		}
		return name
	}
	if group == GroupTask || group == GroupJob {
		if n, ok := hadoopNames[name]; ok {
			return n
		}
	}
	return name
}

// Counters is a set of named int64 counters in groups. Safe for
// concurrent use. A counter exists once something was added to it (a
// zero included), as Hadoop lists the counters a task touched.
type Counters struct {
	mu sync.Mutex
	m  map[string]map[string]*atomic.Int64
}

// NewCounters returns an empty set.
func NewCounters() *Counters { return &Counters{m: map[string]map[string]*atomic.Int64{}} }

// cell is group/name's value, created at 0 if new. Callers hold c.mu.
func (c *Counters) cell(group, name string) *atomic.Int64 {
	g := c.m[group]
	if g == nil {
		g = map[string]*atomic.Int64{}
		c.m[group] = g
	}
	v := g[name]
	if v == nil {
		v = new(atomic.Int64)
		g[name] = v
	}
	return v
}

// Add adds n to group/name.
func (c *Counters) Add(group, name string, n int64) {
	c.mu.Lock()
	v := c.cell(group, name)
	c.mu.Unlock()
	v.Add(n)
}

// Get returns group/name's value.
func (c *Counters) Get(group, name string) int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v := c.m[group][name]; v != nil {
		return v.Load()
	}
	return 0
}

// Counter is one counter of a set, for adding to it once per record
// without a lookup: the first Add finds (or creates) it, later ones are
// one atomic add.
type Counter struct {
	set         *Counters
	group, name string
	v           atomic.Pointer[atomic.Int64]
}

// Counter returns group/name as a Counter. It creates nothing until its
// first Add.
func (c *Counters) Counter(group, name string) *Counter {
	return &Counter{set: c, group: group, name: name}
}

// Add adds n to the counter.
func (k *Counter) Add(n int64) {
	v := k.v.Load()
	if v == nil {
		k.set.mu.Lock()
		v = k.set.cell(k.group, k.name)
		k.set.mu.Unlock()
		k.v.Store(v)
	}
	v.Add(n)
}

// maxCounters are the counters whose job total is the largest of the
// attempts' values rather than their sum (Hadoop's *_MAX counters).
var maxCounters = map[string]bool{PeakMapRSS: true, PeakReduceRSS: true}

// Aggregate folds an attempt's counter into a job's: added, or the
// larger kept for a peak counter.
func (c *Counters) Aggregate(group, name string, n int64) {
	if group != GroupTask || !maxCounters[name] {
		c.Add(group, name, n)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	g := c.m[group]
	if v := g[name]; v == nil || n > v.Load() {
		c.cell(group, name).Store(n)
	}
}

// Merge adds every counter of o into c.
func (c *Counters) Merge(o *Counters) {
	for _, g := range o.Groups() {
		for _, kv := range o.Group(g) {
			c.Add(g, kv.Name, kv.Value)
		}
	}
}

// Groups lists group names, sorted.
func (c *Counters) Groups() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.m))
	for g := range c.m {
		out = append(out, g)
	}
	sort.Strings(out)
	return out
}

// CounterValue is one counter.
type CounterValue struct {
	Name  string
	Value int64
}

// Group lists a group's counters, sorted by name.
func (c *Counters) Group(g string) []CounterValue {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]CounterValue, 0, len(c.m[g]))
	for n, v := range c.m[g] {
		out = append(out, CounterValue{n, v.Load()})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Map returns a copy as group → name → value (for JSON).
func (c *Counters) Map() map[string]map[string]int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := map[string]map[string]int64{}
	for g, m := range c.m {
		out[g] = map[string]int64{}
		for n, v := range m {
			out[g][n] = v.Load()
		}
	}
	return out
}

// TaskContext is what a Mapper or Reducer sees of its task.
type TaskContext struct {
	Attempt  *TaskAttempt
	Counters *Counters
	// Split is the input split of a map task (nil for reduce tasks).
	Split *InputSplit
	// Status is a free-form line shown in progress (set with SetStatus).
	status string
	mu     sync.Mutex
}

// Counter adds n to a user counter in group.
func (t *TaskContext) Counter(group, name string, n int64) { t.Counters.Add(group, name, n) }

// SetStatus sets the task's status line.
func (t *TaskContext) SetStatus(s string) {
	t.mu.Lock()
	t.status = s
	t.mu.Unlock()
}

// Status returns the task's status line.
func (t *TaskContext) Status() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.status
}

// ioSnapshot is the process's file system byte counts now.
func ioSnapshot() map[string]fs.IOStat {
	m := map[string]fs.IOStat{}
	for _, s := range fs.IOStats() {
		m[s.Scheme] = s
	}
	return m
}

// addIOCounters adds to c the bytes read and written through file systems
// since before, as Hadoop's "File System Counters" ("HDFS: Number of bytes
// read", ...), for every scheme that moved.
func addIOCounters(c *Counters, before map[string]fs.IOStat) {
	for _, s := range fs.IOStats() {
		r, w := s.Read-before[s.Scheme].Read, s.Written-before[s.Scheme].Written
		if r == 0 && w == 0 {
			continue
		}
		rn, wn := fs.IOCounterNames(s.Scheme)
		c.Add(GroupFileSystem, rn, r)
		c.Add(GroupFileSystem, wn, w)
	}
}

// addCPUCounters adds CPU time to c as CPU_MILLISECONDS and its user and
// system parts.
func addCPUCounters(c *Counters, cpu procstat.CPU) {
	c.Add(GroupTask, CPUMilliseconds, cpu.Total().Milliseconds())
	c.Add(GroupTask, CPUUserMilliseconds, cpu.User.Milliseconds())
	c.Add(GroupTask, CPUSystemMilliseconds, cpu.System.Milliseconds())
}
