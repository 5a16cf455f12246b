package mapreduce

import (
	"context"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/fs"
)

// InputSplit is the part of the input one map task reads.
type InputSplit struct {
	// Path is a full URI (hdfs://nn:8020/in/part-0, file:///tmp/x).
	Path          string
	Start, Length int64
	// Hosts hold the split's data (for data-local scheduling).
	Hosts []string
	// Index numbers the split within the job (map task number).
	Index int
}

// RecordReader reads a split's records. Key and Value are valid until the
// next call of Next.
type RecordReader interface {
	Next() bool
	Key() []byte
	Value() []byte
	// Progress is the fraction of the split consumed, 0 to 1.
	Progress() float64
	Err() error
	Close() error
}

// InputFormat divides input into splits and reads them.
type InputFormat interface {
	Splits(ctx context.Context, env fs.Env, c *conf.Configuration, paths []string) ([]InputSplit, error)
	Open(ctx context.Context, env fs.Env, c *conf.Configuration, split InputSplit) (RecordReader, error)
}

// RecordWriter writes a task's output records.
type RecordWriter interface {
	Write(key, value []byte) error
	Close() error
}

// OutputFormat writes output under a directory, with a committer that
// makes a task's output visible only when the task commits.
type OutputFormat interface {
	// Check runs before the job: the output directory must not exist.
	Check(ctx context.Context, env fs.Env, c *conf.Configuration, dir string) error
	// Writer opens the writer of one task attempt; name is the final file
	// name (part-r-00003).
	Writer(ctx context.Context, att *TaskAttempt, name string) (RecordWriter, error)
}

// TaskAttempt identifies one try of a task and where its output goes
// before commit.
type TaskAttempt struct {
	JobID   string // job_<start>_<n>
	Type    byte   // 'm' or 'r'
	Task    int
	Attempt int
	// Env and Conf are the attempt's file system environment and settings.
	Env  fs.Env
	Conf *conf.Configuration
	// OutputDir is the job's output directory.
	OutputDir string
	// canCommit, if set, blocks until the attempt may commit its output
	// (commit arbitration between attempts of one task on a cluster).
	canCommit func(context.Context) error
	// phases are when the attempt's phases ended (AttemptReport).
	phases Phases
	// counters are the attempt's own, once it has run (local mode).
	counters *Counters
}

// ID is Hadoop's attempt id: attempt_<jobtime>_<n>_m_000003_0.
func (a *TaskAttempt) ID() string {
	return "attempt" + a.JobID[len("job"):] + "_" + string(a.Type) + "_" + pad6(a.Task) + "_" + itoa(a.Attempt)
}

// TaskID is Hadoop's task id: task_<jobtime>_<n>_m_000003.
func (a *TaskAttempt) TaskID() string {
	return "task" + a.JobID[len("job"):] + "_" + string(a.Type) + "_" + pad6(a.Task)
}

func pad6(n int) string {
	s := itoa(n)
	for len(s) < 6 {
		s = "0" + s
	}
	return s
}

func itoa(n int) string {
	if n == 0 {
		return "0"
	}
	neg := n < 0
	if neg {
		n = -n
	}
	var b []byte
	for n > 0 {
		b = append([]byte{byte('0' + n%10)}, b...)
		n /= 10
	}
	if neg {
		b = append([]byte{'-'}, b...)
	}
	return string(b)
}
