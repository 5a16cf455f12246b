package mapreduce

import (
	"io"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/proto/mrpb"
	"github.com/stratafs/strata/internal/shuffle"
	"github.com/stratafs/strata/internal/taskrun"
)

// TestShuffleMemory: a reduce's shuffle memory follows its memory cap as
// Hadoop's follows the heap; without a cap it keeps the default; bad
// fractions are refused.
func TestShuffleMemory(t *testing.T) {
	for _, tc := range []struct {
		set  map[string]string
		want int64
	}{
		{nil, 1024 << 20 * 8 / 10 * 7 / 10},
		{map[string]string{"mapreduce.reduce.memory.mb": "2048", "mapreduce.reduce.shuffle.input.buffer.percent": "0.5"}, 2048 << 20 * 8 / 10 / 2},
		{map[string]string{"mapreduce.reduce.memory.mb": "0"}, shuffle.DefaultMemoryBudget},
	} {
		c := conf.New()
		for k, v := range tc.set {
			c.Set(k, v)
		}
		cfg := shuffle.DefaultConfig()
		if err := shuffleMemory(&cfg, c); err != nil {
			t.Fatal(err)
		}
		if d := cfg.MemoryBudget - tc.want; d < -1 || d > 1 {
			t.Errorf("%v: budget %d, want %d", tc.set, cfg.MemoryBudget, tc.want)
		}
	}
	c := conf.New()
	c.Set("mapreduce.job.heap.memory-mb.ratio", "1.5")
	cfg := shuffle.DefaultConfig()
	if err := shuffleMemory(&cfg, c); err == nil {
		t.Error("a heap ratio of 1.5 was accepted")
	}
}

// TestCommitGate: reduces and the maps of map-only jobs wait for leave to
// commit; the maps of a job with reduces write no job output and do not
// ask (which would cost each of them a heartbeat round trip).
func TestCommitGate(t *testing.T) {
	link := &taskrun.Link{Progress: io.Discard, Answer: strings.NewReader("")}
	for _, tc := range []struct {
		typ      mrpb.TaskType
		reducers int32
		asks     bool
	}{{mrpb.TaskType_MAP, 2, false}, {mrpb.TaskType_MAP, 0, true}, {mrpb.TaskType_REDUCE, 2, true}} {
		if got := commitGate(&mrpb.TaskSpec{Type: tc.typ.Enum(), Reducers: proto.Int32(tc.reducers)}, link) != nil; got != tc.asks {
			t.Errorf("%v task of a job with %d reduces: asks to commit %v, want %v", tc.typ, tc.reducers, got, tc.asks)
		}
	}
	if commitGate(&mrpb.TaskSpec{Type: mrpb.TaskType_REDUCE.Enum()}, nil) != nil {
		t.Error("a task without a TaskTracker asks to commit")
	}
}
