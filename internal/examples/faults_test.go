package examples

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/mapreduce"
)

var panicsLeft atomic.Int64

func init() {
	// flaky: a wordcount whose mapper panics while panicsLeft > 0.
	mapreduce.Register("test-flaky", "test-flaky <in> <out>", func(args []string, c *conf.Configuration) (*mapreduce.Job, error) {
		job, err := newWordCount(args, c)
		if err != nil {
			return nil, err
		}
		inner := job.NewMapper
		job.NewMapper = func() mapreduce.Mapper {
			m := inner()
			return mapreduce.MapFunc(func(ctx *mapreduce.TaskContext, k, v []byte, out mapreduce.Emitter) error {
				if panicsLeft.Add(-1) >= 0 {
					panic("injected failure in map")
				}
				return m.Map(ctx, k, v, out)
			})
		}
		return job, nil
	})
}

func TestTaskPanicRetriedThenFails(t *testing.T) {
	in := t.TempDir()
	writeWords(t, in, 1, 100)
	c := tinyConf(t, false)
	var log bytes.Buffer

	panicsLeft.Store(1) // the first attempt panics, the retry succeeds
	res, err := runJob(context.Background(), localEnv(c), &log, "test-flaky", []string{"file://" + in, "file://" + filepath.Join(t.TempDir(), "out")})
	if err != nil {
		t.Fatalf("a task that panics once should succeed on retry: %v", err)
	}
	if res.Counters.Get(mapreduce.GroupJob, mapreduce.FailedMaps) != 1 {
		t.Errorf("failed map attempts = %d, want 1", res.Counters.Get(mapreduce.GroupJob, mapreduce.FailedMaps))
	}

	panicsLeft.Store(1 << 40) // always panics
	out := filepath.Join(t.TempDir(), "out2")
	_, err = runJob(context.Background(), localEnv(c), &log, "test-flaky", []string{"file://" + in, "file://" + out})
	var te *mapreduce.TaskError
	if !errors.As(err, &te) || !strings.Contains(err.Error(), "injected failure in map") || len(te.Attempts) != 4 {
		t.Fatalf("always-panicking task: %v", err)
	}
	panicsLeft.Store(0)
}
