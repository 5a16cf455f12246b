package mapreduce

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"sort"
	"sync"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
)

// Emitter receives output records. The key and value are copied before
// Emit returns, so the caller may reuse them.
type Emitter interface {
	Emit(key, value []byte) error
}

// EmitFunc adapts a function to Emitter.
type EmitFunc func(key, value []byte) error

// Emit calls f.
func (f EmitFunc) Emit(key, value []byte) error { return f(key, value) }

// Mapper turns input records into intermediate records. A Mapper value
// serves one task; it is not shared between goroutines.
type Mapper interface {
	Map(ctx *TaskContext, key, value []byte, out Emitter) error
}

// Reducer turns all intermediate values of a key into output records.
// Values are valid only until the next call of values.Next.
type Reducer interface {
	Reduce(ctx *TaskContext, key []byte, values *Values, out Emitter) error
}

// Setupper and Cleanuper are optional: a Mapper or Reducer implementing
// them is called before its first and after its last record.
type Setupper interface{ Setup(ctx *TaskContext) error }

// Cleanuper, see Setupper.
type Cleanuper interface {
	Cleanup(ctx *TaskContext, out Emitter) error
}

// MapFunc and ReduceFunc adapt functions to Mapper and Reducer.
type MapFunc func(ctx *TaskContext, key, value []byte, out Emitter) error

// Map calls f.
func (f MapFunc) Map(ctx *TaskContext, key, value []byte, out Emitter) error {
	return f(ctx, key, value, out)
}

// ReduceFunc adapts a function to Reducer.
type ReduceFunc func(ctx *TaskContext, key []byte, values *Values, out Emitter) error

// Reduce calls f.
func (f ReduceFunc) Reduce(ctx *TaskContext, key []byte, values *Values, out Emitter) error {
	return f(ctx, key, values, out)
}

// IdentityMapper emits every input record unchanged (Hadoop's
// IdentityMapper); usable as Job.NewMapper.
func IdentityMapper() Mapper {
	return MapFunc(func(ctx *TaskContext, key, value []byte, out Emitter) error { return out.Emit(key, value) })
}

// IdentityReducer emits every value with its key, in the order they come
// (Hadoop's IdentityReducer); usable as Job.NewReducer.
func IdentityReducer() Reducer {
	return ReduceFunc(func(ctx *TaskContext, key []byte, values *Values, out Emitter) error {
		for values.Next() {
			if err := out.Emit(key, values.Value()); err != nil {
				return err
			}
		}
		return nil
	})
}

// Values iterates over the values of one key.
type Values struct {
	next func() ([]byte, bool)
	cur  []byte
	err  error
}

// NewValues returns a Values backed by next, which reports false when done.
func NewValues(next func() ([]byte, bool)) *Values { return &Values{next: next} }

// Next advances to the next value.
func (v *Values) Next() bool {
	val, ok := v.next()
	if !ok {
		return false
	}
	v.cur = val
	return true
}

// Value is the current value; valid until the next Next.
func (v *Values) Value() []byte { return v.cur }

// Partitioner assigns an intermediate key to one of n reduce tasks.
type Partitioner func(key, value []byte, n int) int

// HashPartitioner is the default: FNV-1a of the key, modulo n.
func HashPartitioner(key, _ []byte, n int) int {
	h := fnv.New32a()
	h.Write(key)
	return int(h.Sum32() % uint32(n))
}

// Job describes a MapReduce job.
type Job struct {
	// Name is shown in progress and history.
	Name string
	// Conf holds the job's settings (Hadoop keys).
	Conf *conf.Configuration
	// NewMapper and NewReducer make one Mapper / Reducer per task.
	// NewReducer nil means a map-only job (map output goes straight to
	// the OutputFormat). NewCombiner, if set, runs on map output before it
	// is spilled and merged.
	NewMapper   func() Mapper
	NewReducer  func() Reducer
	NewCombiner func() Reducer
	// Partitioner defaults to HashPartitioner.
	Partitioner Partitioner
	// Compare orders intermediate keys; nil means bytes.Compare (which the
	// sort exploits with key-prefix comparisons).
	Compare func(a, b []byte) int
	// Input and Output are the formats and their paths.
	Input       InputFormat
	InputPaths  []string
	Output      OutputFormat
	OutputPath  string
	NumReducers int
	// Setup, if set, runs once in the submitting process before the job
	// starts (TeraSort writes its partition file here).
	Setup func(ctx context.Context, job *Job, env fs.Env) error

	// registered and args are the name and arguments NewJob built the job
	// from: what a cluster's processes rebuild it with.
	registered string
	args       []string
}

// CompareFunc returns the job's comparator.
func (j *Job) CompareFunc() func(a, b []byte) int {
	if j.Compare != nil {
		return j.Compare
	}
	return bytes.Compare
}

// PartitionFunc returns the job's partitioner.
func (j *Job) PartitionFunc() Partitioner {
	if j.Partitioner != nil {
		return j.Partitioner
	}
	return HashPartitioner
}

// JobFactory builds a job from its command-line arguments and settings.
type JobFactory func(args []string, c *conf.Configuration) (*Job, error)

var (
	registryMu sync.Mutex
	registry   = map[string]registered{}
)

type registered struct {
	factory JobFactory
	usage   string
}

// Register makes a job known by name, so that this program can run it
// and, on a cluster, its tasks. Register from an init function.
func Register(name, usage string, f JobFactory) {
	registryMu.Lock()
	defer registryMu.Unlock()
	if _, dup := registry[name]; dup {
		panic(fmt.Sprintf("mapreduce: job %q registered twice", name))
	}
	registry[name] = registered{factory: f, usage: usage}
}

// ErrUnknownJob is returned for a job name nobody registered.
var ErrUnknownJob = errors.New("mapreduce: unknown job")

// NewJob builds the registered job name.
func NewJob(name string, args []string, c *conf.Configuration) (*Job, error) {
	registryMu.Lock()
	r, ok := registry[name]
	registryMu.Unlock()
	if !ok {
		return nil, fmt.Errorf("%w %q", ErrUnknownJob, name)
	}
	job, err := r.factory(args, c)
	if job != nil {
		job.registered, job.args = name, args
	}
	return job, err
}

// Jobs lists registered job names with their usage lines, sorted.
func Jobs() [][2]string {
	registryMu.Lock()
	defer registryMu.Unlock()
	var out [][2]string
	for n, r := range registry {
		out = append(out, [2]string{n, r.usage})
	}
	sort.Slice(out, func(i, j int) bool { return out[i][0] < out[j][0] })
	return out
}
