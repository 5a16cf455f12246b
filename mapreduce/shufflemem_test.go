package mapreduce

import (
	"io"
	"strings"
	"testing"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/shuffle"
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
	link := &childLink{progress: io.Discard, answer: strings.NewReader("")}
	for _, tc := range []struct {
		typ      string
		reducers int
		asks     bool
	}{{"m", 2, false}, {"m", 0, true}, {"r", 2, true}} {
		if got := commitGate(TaskSpec{Type: tc.typ, Reducers: tc.reducers}, link) != nil; got != tc.asks {
			t.Errorf("%s task of a job with %d reduces: asks to commit %v, want %v", tc.typ, tc.reducers, got, tc.asks)
		}
	}
	if commitGate(TaskSpec{Type: "r"}, nil) != nil {
		t.Error("a task without a TaskTracker asks to commit")
	}
}
