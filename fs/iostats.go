package fs

import (
	"io"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
)

// Bytes read and written through FileSystem files in this process, per
// scheme: what MapReduce reports as "File System Counters" (Hadoop's
// FileSystem.Statistics). A task attempt runs alone in its process, so the
// process's counts are the attempt's.
var ioStats sync.Map // scheme → *schemeStats

type schemeStats struct{ read, written atomic.Int64 }

func statsFor(scheme string) *schemeStats {
	if s, ok := ioStats.Load(scheme); ok {
		return s.(*schemeStats)
	}
	s, _ := ioStats.LoadOrStore(scheme, &schemeStats{})
	return s.(*schemeStats)
}

// CountRead adds n bytes read through a file of scheme.
func CountRead(scheme string, n int) {
	if n > 0 {
		statsFor(scheme).read.Add(int64(n))
	}
}

// CountWritten adds n bytes written through a file of scheme.
func CountWritten(scheme string, n int) {
	if n > 0 {
		statsFor(scheme).written.Add(int64(n))
	}
}

// IOStat is one scheme's byte counts.
type IOStat struct {
	Scheme        string
	Read, Written int64
}

// IOStats returns the counts so far, by scheme name.
func IOStats() []IOStat {
	var out []IOStat
	ioStats.Range(func(k, v any) bool {
		s := v.(*schemeStats)
		out = append(out, IOStat{Scheme: k.(string), Read: s.read.Load(), Written: s.written.Load()})
		return true
	})
	sort.Slice(out, func(i, j int) bool { return out[i].Scheme < out[j].Scheme })
	return out
}

// IOCounterNames are Hadoop's counter names for a scheme's bytes read and
// written, e.g. "HDFS: Number of bytes read".
func IOCounterNames(scheme string) (read, written string) {
	s := strings.ToUpper(scheme)
	return s + ": Number of bytes read", s + ": Number of bytes written"
}

// countingFile counts what is read through a local file.
type countingFile struct {
	File
}

func (f countingFile) Read(p []byte) (int, error) {
	n, err := f.File.Read(p)
	CountRead("file", n)
	return n, err
}

func (f countingFile) ReadAt(p []byte, off int64) (int, error) {
	n, err := f.File.ReadAt(p, off)
	CountRead("file", n)
	return n, err
}

// WriteTo keeps io.Copy's fast paths (sendfile) and counts.
func (f countingFile) WriteTo(w io.Writer) (int64, error) {
	n, err := io.Copy(w, f.File)
	CountRead("file", int(n))
	return n, err
}
