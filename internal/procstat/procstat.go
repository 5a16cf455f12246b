// Package procstat reads what the operating system accounts to processes
// and devices: CPU user and system time (getrusage, /proc/<pid>/stat: a
// process's own and its reaped children's), peak resident set size and
// block I/O of reaped children, and the block devices' counters in
// /proc/diskstats. strata's MapReduce accounting
// (task attempts' CPU counters, daemons' /metrics, the experiment's
// results) is built on it.
//
// Invariants: every figure is the kernel's own, converted to one unit
// (CPU time as time.Duration, bytes as bytes); where the platform has no
// such figure the functions return an error wrapping
// errors.ErrUnsupported rather than zero.
package procstat

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// CPU is processor time charged to a process (or a set of processes).
type CPU struct {
	User, System time.Duration
}

// Total is user plus system time.
func (c CPU) Total() time.Duration { return c.User + c.System }

// Sub is c minus o, for the time spent between two readings.
func (c CPU) Sub(o CPU) CPU { return CPU{User: c.User - o.User, System: c.System - o.System} }

// Usage is a reaped process's resource usage.
type Usage struct {
	CPU
	// MaxRSS is the peak resident set size in bytes (ru_maxrss).
	MaxRSS int64
	// ReadBytes and WriteBytes are the block I/O the kernel charged
	// (ru_inblock, ru_oublock: 512-byte units); page-cache hits and
	// writes not yet written back are not in them.
	ReadBytes, WriteBytes int64
}

// FromRusage converts a getrusage/wait4 result. On Linux ru_maxrss is in
// KiB.
func FromRusage(ru *syscall.Rusage) Usage {
	if ru == nil {
		return Usage{}
	}
	return Usage{
		CPU:       CPU{User: time.Duration(ru.Utime.Nano()), System: time.Duration(ru.Stime.Nano())},
		MaxRSS:    int64(ru.Maxrss) * 1024,
		ReadBytes: int64(ru.Inblock) * 512, WriteBytes: int64(ru.Oublock) * 512,
	}
}

// FromProcessState is the usage of a process reaped by os/exec (its
// ProcessState.SysUsage), which includes the descendants it waited for.
func FromProcessState(ps *os.ProcessState) (Usage, bool) {
	if ps == nil {
		return Usage{}, false
	}
	ru, ok := ps.SysUsage().(*syscall.Rusage)
	if !ok {
		return Usage{}, false
	}
	return FromRusage(ru), true
}

// Self is this process's CPU time (getrusage RUSAGE_SELF): every thread,
// not the children.
func Self() (CPU, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return CPU{}, fmt.Errorf("procstat: getrusage: %w", err)
	}
	return FromRusage(&ru).CPU, nil
}

// Children is the CPU time of this process's reaped children and their
// reaped descendants (getrusage RUSAGE_CHILDREN).
func Children() (CPU, error) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &ru); err != nil {
		return CPU{}, fmt.Errorf("procstat: getrusage: %w", err)
	}
	return FromRusage(&ru).CPU, nil
}

// clockTicks is the unit of /proc/<pid>/stat's utime and stime
// (sysconf(_SC_CLK_TCK)); Linux has reported 100 to user space on every
// architecture since 2.6 (USER_HZ), whatever the kernel's HZ.
const clockTicks = 100

// PID is process pid's CPU time from /proc/<pid>/stat (fields utime and
// stime): a daemon in another process.
func PID(pid int) (CPU, error) {
	self, _, err := PIDAndChildren(pid)
	return self, err
}

// PIDAndChildren is process pid's CPU time and that of its children it
// has waited for (and theirs), from /proc/<pid>/stat's utime, stime,
// cutime and cstime: a TaskTracker's own and its reaped task children's,
// as its RUSAGE_CHILDREN.
func PIDAndChildren(pid int) (self, children CPU, err error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			if _, serr := os.Stat("/proc/self/stat"); serr != nil {
				return CPU{}, CPU{}, fmt.Errorf("procstat: no /proc: %w", errors.ErrUnsupported)
			}
		}
		return CPU{}, CPU{}, fmt.Errorf("procstat: %w", err)
	}
	return parseStat(string(b))
}

// parseStat reads utime, stime, cutime and cstime from a /proc/<pid>/stat
// line. The command name (field 2) is in parentheses and may hold spaces
// and parentheses itself, so the fields are counted from the last ')'.
func parseStat(s string) (self, children CPU, err error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return CPU{}, CPU{}, errors.New("procstat: malformed /proc/<pid>/stat")
	}
	f := strings.Fields(s[i+1:])
	// After the name: state(3) ppid pgrp session tty_nr tpgid flags minflt
	// cminflt majflt cmajflt utime(14) stime(15) cutime(16) cstime(17).
	if len(f) < 15 {
		return CPU{}, CPU{}, errors.New("procstat: short /proc/<pid>/stat")
	}
	var v [4]int64
	for j := range v {
		// cutime and cstime are signed in proc(5); they are never negative.
		n, err := strconv.ParseInt(f[11+j], 10, 64)
		if err != nil || n < 0 {
			return CPU{}, CPU{}, fmt.Errorf("procstat: /proc/<pid>/stat: field %d: %q", 14+j, f[11+j])
		}
		v[j] = n
	}
	tick := time.Second / clockTicks
	return CPU{User: time.Duration(v[0]) * tick, System: time.Duration(v[1]) * tick},
		CPU{User: time.Duration(v[2]) * tick, System: time.Duration(v[3]) * tick}, nil
}

// Collector exports this process's CPU time as
// <namespace>_<subsystem>_cpu_user_seconds_total and ..._cpu_system_seconds_total,
// and its reaped children's as ..._children_cpu_{user,system}_seconds_total
// (a TaskTracker's task children). The standard process collector only
// has user and system time summed.
func Collector(namespace, subsystem string) prometheus.Collector {
	return &cpuCollector{
		descs: [4]*prometheus.Desc{
			prometheus.NewDesc(prometheus.BuildFQName(namespace, subsystem, "cpu_user_seconds_total"), "User CPU time of this process (getrusage RUSAGE_SELF).", nil, nil),
			prometheus.NewDesc(prometheus.BuildFQName(namespace, subsystem, "cpu_system_seconds_total"), "System CPU time of this process (getrusage RUSAGE_SELF).", nil, nil),
			prometheus.NewDesc(prometheus.BuildFQName(namespace, subsystem, "children_cpu_user_seconds_total"), "User CPU time of this process's reaped children (getrusage RUSAGE_CHILDREN).", nil, nil),
			prometheus.NewDesc(prometheus.BuildFQName(namespace, subsystem, "children_cpu_system_seconds_total"), "System CPU time of this process's reaped children (getrusage RUSAGE_CHILDREN).", nil, nil),
		},
	}
}

type cpuCollector struct{ descs [4]*prometheus.Desc }

func (c *cpuCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range c.descs {
		ch <- d
	}
}

func (c *cpuCollector) Collect(ch chan<- prometheus.Metric) {
	if self, err := Self(); err == nil {
		ch <- prometheus.MustNewConstMetric(c.descs[0], prometheus.CounterValue, self.User.Seconds())
		ch <- prometheus.MustNewConstMetric(c.descs[1], prometheus.CounterValue, self.System.Seconds())
	}
	if kids, err := Children(); err == nil {
		ch <- prometheus.MustNewConstMetric(c.descs[2], prometheus.CounterValue, kids.User.Seconds())
		ch <- prometheus.MustNewConstMetric(c.descs[3], prometheus.CounterValue, kids.System.Seconds())
	}
}
