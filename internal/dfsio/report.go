package dfsio

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// Stats are the accumulated statistics of a run: the reduce output.
type Stats struct {
	Tasks int64 // l:tasks, number of map tasks
	Size  int64 // l:size, bytes processed
	Time  int64 // l:time, sum of the tasks' I/O times in ms
	// Rate and SqRate are f:rate and f:sqrate: sums over the tasks of
	// rate*1000 and rate*rate*1000, rate in MB/s, as Java floats.
	Rate, SqRate float32
}

// ParseStats reads the reduce output's "key value" lines as Hadoop's
// analyzeResult does: tokens split at space, tab, CR, LF, FF and '%'; a
// line is used when its first token ends with :tasks, :size, :time, :rate
// or :sqrate.
func ParseStats(r io.Reader) (Stats, error) {
	var s Stats
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		tok := strings.FieldsFunc(sc.Text(), func(r rune) bool { return strings.ContainsRune(" \t\n\r\f%", r) })
		if len(tok) == 0 {
			continue
		}
		attr := tok[0]
		if len(tok) < 2 {
			return s, fmt.Errorf("dfsio: statistics line %q has no value", sc.Text())
		}
		var err error
		switch {
		case strings.HasSuffix(attr, ":tasks"):
			s.Tasks, err = strconv.ParseInt(tok[1], 10, 64)
		case strings.HasSuffix(attr, ":size"):
			s.Size, err = strconv.ParseInt(tok[1], 10, 64)
		case strings.HasSuffix(attr, ":time"):
			s.Time, err = strconv.ParseInt(tok[1], 10, 64)
		case strings.HasSuffix(attr, ":sqrate"):
			s.SqRate, err = parseFloat32(tok[1])
		case strings.HasSuffix(attr, ":rate"):
			s.Rate, err = parseFloat32(tok[1])
		}
		if err != nil {
			return s, fmt.Errorf("dfsio: statistics line %q: %w", sc.Text(), err)
		}
	}
	return s, sc.Err()
}

func parseFloat32(s string) (float32, error) {
	f, err := strconv.ParseFloat(s, 32)
	return float32(f), err
}

// Report is what analyzeResult prints.
type Report struct {
	Type  TestType
	Date  time.Time
	Stats Stats
	// ExecTime is the wall time of the job, truncated to ms as Hadoop's
	// System.currentTimeMillis difference.
	ExecTime time.Duration
}

// toMB is TestDFSIO.toMB: a float.
func toMB(bytes int64) float32 { return float32(bytes) / float32(Mega) }

// msToSecs is TestDFSIO.msToSecs: a float.
func msToSecs(ms int64) float32 { return float32(ms) / 1000 }

// Throughput is "Throughput mb/sec": total MB over the sum of the tasks'
// times, in float arithmetic.
func (r Report) Throughput() float32 { return toMB(r.Stats.Size) / msToSecs(r.Stats.Time) }

// AverageRate is "Average IO rate mb/sec": the mean of the tasks' rates.
func (r Report) AverageRate() float64 {
	return float64(r.Stats.Rate / 1000 / float32(r.Stats.Tasks))
}

// StdDev is "IO rate std deviation": sqrt(|mean(rate²) - mean(rate)²|).
func (r Report) StdDev() float64 {
	med := r.AverageRate()
	return math.Sqrt(math.Abs(float64(r.Stats.SqRate/1000/float32(r.Stats.Tasks)) - med*med))
}

// Lines returns the report block of Hadoop's TestDFSIO.analyzeResult,
// ending with an empty line:
//
//	----- TestDFSIO ----- : write
//	            Date & time: Thu May 02 11:25:52 CEST 2013
//	        Number of files: 3
//	 Total MBytes processed: 6
//	      Throughput mb/sec: 36.14
//	 Average IO rate mb/sec: 36.22
//	  IO rate std deviation: 2.36
//	     Test exec time sec: 1.53
//
// Numbers are formatted as DecimalFormat("#.##") formats them (see
// FormatDecimal), from Hadoop's float arithmetic.
func (r Report) Lines() []string {
	return []string{
		"----- TestDFSIO ----- : " + r.Type.String(),
		"            Date & time: " + JavaDate(r.Date),
		"        Number of files: " + strconv.FormatInt(r.Stats.Tasks, 10),
		" Total MBytes processed: " + FormatDecimal(float64(toMB(r.Stats.Size))),
		"      Throughput mb/sec: " + FormatDecimal(float64(r.Throughput())),
		" Average IO rate mb/sec: " + FormatDecimal(r.AverageRate()),
		"  IO rate std deviation: " + FormatDecimal(r.StdDev()),
		"     Test exec time sec: " + FormatDecimal(float64(msToSecs(r.ExecTime.Milliseconds()))),
		"",
	}
}

// String is Lines joined, each followed by a newline.
func (r Report) String() string { return strings.Join(r.Lines(), "\n") + "\n" }

// FormatDecimal formats v as Java's DecimalFormat("#.##"): at most two
// fraction digits, rounded half-even on v's exact binary value, trailing
// zeros and a bare decimal point dropped, no grouping; "-0" for negative
// values that round to zero, "NaN", "∞" and "-∞" as Java's symbols.
func FormatDecimal(v float64) string {
	switch {
	case math.IsNaN(v):
		return "NaN"
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return "-∞"
	}
	// strconv rounds the exact binary value to nearest, ties to even,
	// which is DecimalFormat's HALF_EVEN since Java 8.
	s := strconv.FormatFloat(v, 'f', 2, 64)
	s = strings.TrimRight(s, "0")
	s = strings.TrimSuffix(s, ".")
	return s
}

// JavaDate formats t as Java's Date.toString: "EEE MMM dd HH:mm:ss zzz
// yyyy", e.g. "Thu May 02 11:25:52 CEST 2013"; a zone without an
// abbreviation prints as GMT+hh:mm.
func JavaDate(t time.Time) string {
	name, off := t.Zone()
	if name == "" || name[0] == '+' || name[0] == '-' {
		sign := '+'
		if off < 0 {
			sign, off = '-', -off
		}
		name = fmt.Sprintf("GMT%c%02d:%02d", sign, off/3600, off/60%60)
	}
	return t.Format("Mon Jan 02 15:04:05 ") + name + t.Format(" 2006")
}

// javaFloat formats f as Java's Float.toString (String.valueOf(float)):
// the shortest decimal that reads back as f, with at least one fraction
// digit, in scientific notation ("1.0E7") below 10^-3 and from 10^7 on.
func javaFloat(f float32) string {
	switch {
	case math.IsNaN(float64(f)):
		return "NaN"
	case math.IsInf(float64(f), 1):
		return "Infinity"
	case math.IsInf(float64(f), -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(float64(f)) {
			return "-0.0"
		}
		return "0.0"
	}
	a := math.Abs(float64(f))
	if a >= 1e-3 && a < 1e7 {
		s := strconv.FormatFloat(float64(f), 'f', -1, 32)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	// 'e' gives d.ddde±XX; Java writes d.dddEX.
	s := strconv.FormatFloat(float64(f), 'e', -1, 32)
	mant, exp, _ := strings.Cut(s, "e")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}
