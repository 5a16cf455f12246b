package mapreduce

import (
	"strings"
	"testing"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/shuffle"
)

func TestParseXmx(t *testing.T) {
	for _, c := range []struct {
		opts string
		want int64
		ok   bool
	}{
		{"-Xmx512m", 512 << 20, true},
		{"-server -Xmx2G -XX:+UseG1GC", 2 << 30, true},
		{"-Xmx200m -Xmx1024k", 1 << 20, true}, // the last one wins, as in the JVM
		{"-Xmx4096", 4096, true},
		{"-verbose:gc", 0, false},
		{"", 0, false},
	} {
		got, ok, err := ParseXmx(c.opts)
		if err != nil || ok != c.ok || got != c.want {
			t.Errorf("ParseXmx(%q) = %d, %v, %v; want %d, %v", c.opts, got, ok, err, c.want, c.ok)
		}
	}
	for _, bad := range []string{"-Xmx", "-Xmxlots", "-Xmx-5m", "-Xmx99999999999999t"} {
		if _, _, err := ParseXmx(bad); err == nil {
			t.Errorf("ParseXmx(%q) accepted", bad)
		}
	}
}

// The papers' mapred.child.java.opts=-Xmx… gives the task a memory cap
// of heap / ratio unless memory.mb is set; the per-type options win over
// it; the old key names are translated.
func TestTaskMemoryFromJavaOpts(t *testing.T) {
	c := conf.New()
	if mb, err := TaskMemoryMB(c, true); err != nil || mb != 1024 {
		t.Fatalf("default: %d, %v", mb, err)
	}
	c.Set("mapred.child.java.opts", "-Xmx512m")
	if mb, _ := TaskMemoryMB(c, true); mb != 640 { // 512 / 0.8
		t.Errorf("map cap from -Xmx512m: %d MiB, want 640", mb)
	}
	c.Set("mapred.reduce.child.java.opts", "-Xmx1g") // deprecated → mapreduce.reduce.java.opts
	if mb, _ := TaskMemoryMB(c, false); mb != 1280 {
		t.Errorf("reduce cap from -Xmx1g: %d MiB, want 1280", mb)
	}
	// The reduce's shuffle memory is sized from the same heap: 1280 MiB ×
	// 0.8 is the -Xmx1g, of which the shuffle gets 0.70.
	scfg, ratio, input := shuffle.DefaultConfig(), 0.8, 0.70
	if err := shuffleMemory(&scfg, c); err != nil || scfg.MemoryBudget != int64(float64(int64(1280)<<20)*ratio*input) {
		t.Errorf("shuffle memory %d, %v", scfg.MemoryBudget, err)
	}
	c.Set("mapred.job.map.memory.mb", "300") // deprecated → mapreduce.map.memory.mb
	if mb, _ := TaskMemoryMB(c, true); mb != 300 {
		t.Errorf("explicit memory.mb: %d, want 300", mb)
	}
	c.Set("mapred.child.java.opts", "-Xmx64x")
	if _, err := TaskMemoryMB(c, false); err != nil {
		t.Errorf("reduce has its own -Xmx, the child one must not matter: %v", err)
	}
	var warned bool
	for _, w := range c.Warnings() {
		warned = warned || strings.Contains(w, "mapred.job.map.memory.mb is deprecated. Instead, use mapreduce.map.memory.mb")
	}
	if !warned {
		t.Errorf("no deprecation warning: %v", c.Warnings())
	}
}

func TestOldNamesMap(t *testing.T) {
	c := conf.New()
	c.Set("mapred.job.reuse.jvm.num.tasks", "-1")
	if v := c.Get(KeyJVMNumTasks); v != "-1" {
		t.Errorf("mapred.job.reuse.jvm.num.tasks=-1 gave %s=%q", KeyJVMNumTasks, v)
	}
	c.Set("mapred.output.compress", "true")
	if v, _ := c.GetBool("mapreduce.output.fileoutputformat.compress"); !v {
		t.Error("mapred.output.compress did not set mapreduce.output.fileoutputformat.compress")
	}
}
