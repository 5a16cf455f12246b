package mapreduce

import (
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
