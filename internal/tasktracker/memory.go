package tasktracker

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/mapreduce"
)

// memoryLimit is an attempt's cap on the resident memory of its process
// tree, from mapreduce.map.memory.mb or mapreduce.reduce.memory.mb (0: no
// cap), and how often it is checked
// (mapreduce.tasktracker.taskmemorymanager.monitoringinterval).
func memoryLimit(settings map[string]string, isMap bool) (limit int64, every time.Duration) {
	key := keyReduceMemory
	if isMap {
		key = keyMapMemory
	}
	c := conf.New()
	for _, k := range []string{key, keyMemoryEvery, mapreduce.KeyMapJavaOpts, mapreduce.KeyReduceJavaOpts, mapreduce.KeyChildJavaOpts, mapreduce.KeyHeapRatio} {
		if v, ok := settings[k]; ok {
			c.Set(k, v)
		}
	}
	// The cap may come from the papers' mapred.child.java.opts -Xmx.
	mb, err := mapreduce.TaskMemoryMB(c, isMap)
	if err != nil || mb <= 0 {
		return 0, 0
	}
	every, err = c.GetDuration(keyMemoryEvery, time.Millisecond)
	if err != nil || every <= 0 {
		every = 5 * time.Second
	}
	return mb << 20, every
}

// rssSampleEvery is how often an attempt without a memory cap has its
// process group's resident memory sampled (for its peak); with a cap the
// cap's mapreduce.tasktracker.taskmemorymanager.monitoringinterval.
const rssSampleEvery = time.Second

// memoryWatch samples the resident memory of an attempt's process group:
// its peak is the attempt's (Hadoop's PHYSICAL_MEMORY_BYTES max, of the
// process tree), and over the cap it kills the attempt.
type memoryWatch struct {
	peak atomic.Int64 // the largest sample
	over atomic.Int64 // the sample that got the attempt killed
}

// run samples pgid every interval until ctx ends or, with a cap (limit >
// 0), a sample exceeds it: then it records the sample and calls kill.
func (w *memoryWatch) run(ctx context.Context, pgid int, every time.Duration, limit int64, kill func()) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		used := processGroupRSS(pgid)
		w.peak.Store(max(w.peak.Load(), used)) // the only writer
		if limit > 0 && used > limit {
			w.over.Store(used)
			kill()
			return
		}
	}
}

// processGroupRSS is the resident memory, in bytes, of every process in
// the process group pgid (an attempt's child leads its own group, so the
// group is the child and what it started), read from /proc.
func processGroupRSS(pgid int) int64 {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return 0
	}
	page := int64(os.Getpagesize())
	var total int64
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		if g, rss, ok := parseStat(b); ok && g == pgid {
			total += rss * page
		}
	}
	return total
}

// parseStat reads the process group (field 5) and resident set size in
// pages (field 24) of a /proc/<pid>/stat line. The command name (field 2)
// is in parentheses and may itself hold spaces and parentheses, so fields
// are counted from the last ')'.
func parseStat(b []byte) (pgrp int, rss int64, ok bool) {
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return 0, 0, false
	}
	f := bytes.Fields(b[i+1:]) // f[0] is field 3 (state)
	if len(f) < 22 {
		return 0, 0, false
	}
	g, err1 := strconv.Atoi(string(f[2]))
	r, err2 := strconv.ParseInt(string(f[21]), 10, 64)
	if err1 != nil || err2 != nil {
		return 0, 0, false
	}
	return g, r, true
}

// overLimit is the message an attempt fails with when its process tree
// uses more memory than its cap (Hadoop's wording).
func overLimit(attempt string, used, limit int64) error {
	return fmt.Errorf("Task %s is running beyond physical memory limits. Current usage: %d MB of %d MB physical memory used. Killing task.",
		attempt, used>>20, limit>>20)
}
