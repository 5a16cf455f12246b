package mapreduce

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/stratafs/strata/conf"
)

// Keys of a task's memory as Hadoop has them.
const (
	KeyMapMemoryMB    = "mapreduce.map.memory.mb"
	KeyReduceMemoryMB = "mapreduce.reduce.memory.mb"
	KeyMapJavaOpts    = "mapreduce.map.java.opts"
	KeyReduceJavaOpts = "mapreduce.reduce.java.opts"
	KeyChildJavaOpts  = "mapred.child.java.opts"
	KeyHeapRatio      = "mapreduce.job.heap.memory-mb.ratio"
	KeyJVMNumTasks    = "mapreduce.job.jvm.numtasks"
)

// TaskMemoryMB is the memory cap, in MiB, of a map (or reduce) attempt's
// process tree, with Hadoop's rules for the old Java options: when
// mapreduce.{map,reduce}.memory.mb is not set but the task's Java options
// (mapreduce.{map,reduce}.java.opts, else mapred.child.java.opts, the
// papers' setting) give a heap with -Xmx, the cap is that heap over
// mapreduce.job.heap.memory-mb.ratio, rounded up — so that the heap the
// reduce's shuffle is sized from (memory.mb × ratio) is the -Xmx again.
// Otherwise it is memory.mb (its default when unset). There is no JVM:
// the other Java options mean nothing to strata. 0 or less: no cap.
func TaskMemoryMB(c *conf.Configuration, isMap bool) (int64, error) {
	key, opts := KeyReduceMemoryMB, KeyReduceJavaOpts
	if isMap {
		key, opts = KeyMapMemoryMB, KeyMapJavaOpts
	}
	if !c.IsSet(key) {
		o := c.Get(opts)
		if !c.IsSet(opts) {
			o = c.Get(KeyChildJavaOpts)
		}
		heap, ok, err := ParseXmx(o)
		if err != nil {
			return 0, err
		}
		if ok {
			ratio, err := c.GetFloat(KeyHeapRatio)
			if err != nil {
				return 0, err
			}
			if !(ratio > 0 && ratio <= 1) {
				return 0, fmt.Errorf("mapreduce: %s %v must be in (0, 1]", KeyHeapRatio, ratio)
			}
			return int64(math.Ceil(float64(heap) / (1 << 20) / ratio)), nil
		}
	}
	return c.GetInt(key)
}

// ParseXmx finds the last -Xmx<size> of Java options (as the JVM takes
// the last one): a number of bytes with an optional k, m, g or t suffix
// (either case). ok is false without one.
func ParseXmx(opts string) (bytes int64, ok bool, err error) {
	for _, f := range strings.Fields(opts) {
		v, found := strings.CutPrefix(f, "-Xmx")
		if !found {
			continue
		}
		mult := int64(1)
		if n := len(v); n > 0 {
			switch v[n-1] {
			case 'k', 'K':
				mult = 1 << 10
			case 'm', 'M':
				mult = 1 << 20
			case 'g', 'G':
				mult = 1 << 30
			case 't', 'T':
				mult = 1 << 40
			}
			if mult > 1 {
				v = v[:n-1]
			}
		}
		n, perr := strconv.ParseInt(v, 10, 64)
		if perr != nil || n <= 0 || n > math.MaxInt64/mult {
			return 0, false, fmt.Errorf("mapreduce: bad heap size %q in Java options %q", f, opts)
		}
		bytes, ok = n*mult, true
	}
	return bytes, ok, nil
}
