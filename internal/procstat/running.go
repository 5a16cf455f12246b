package procstat

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"strconv"
	"syscall"
)

// Running is what this process and the descendants it has reaped have
// used so far (getrusage RUSAGE_SELF plus RUSAGE_CHILDREN): CPU time and
// block I/O. MaxRSS is this process's peak resident set size since the
// last ResetPeakRSS (VmHWM). A process that runs several task attempts in
// turn accounts each as the difference of two readings (Usage.Sub).
func Running() (Usage, error) {
	var self, kids syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &self); err != nil {
		return Usage{}, fmt.Errorf("procstat: getrusage: %w", err)
	}
	if err := syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids); err != nil {
		return Usage{}, fmt.Errorf("procstat: getrusage: %w", err)
	}
	s, k := FromRusage(&self), FromRusage(&kids)
	u := Usage{CPU: CPU{User: s.User + k.User, System: s.System + k.System},
		ReadBytes: s.ReadBytes + k.ReadBytes, WriteBytes: s.WriteBytes + k.WriteBytes}
	peak, err := peakRSS()
	if err != nil {
		return Usage{}, err
	}
	u.MaxRSS = peak
	return u, nil
}

// Sub is the usage between reading o and reading u: CPU time and block
// I/O are differences, MaxRSS is u's.
func (u Usage) Sub(o Usage) Usage {
	return Usage{CPU: u.CPU.Sub(o.CPU), MaxRSS: u.MaxRSS, ReadBytes: u.ReadBytes - o.ReadBytes, WriteBytes: u.WriteBytes - o.WriteBytes}
}

// ResetPeakRSS starts this process's peak resident set size over from its
// present size (Linux: "5" written to /proc/self/clear_refs), so that the
// next Running's MaxRSS is the peak since now.
func ResetPeakRSS() error {
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("procstat: no /proc/self/clear_refs: %w", errors.ErrUnsupported)
		}
		return fmt.Errorf("procstat: %w", err)
	}
	return nil
}

// peakRSS is VmHWM of /proc/self/status, in bytes.
func peakRSS() (int64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("procstat: no /proc/self/status: %w", errors.ErrUnsupported)
		}
		return 0, fmt.Errorf("procstat: %w", err)
	}
	return parseHWM(b)
}

// parseHWM reads the "VmHWM:  1234 kB" line of a /proc/<pid>/status.
func parseHWM(status []byte) (int64, error) {
	for line := range bytes.Lines(status) {
		rest, ok := bytes.CutPrefix(line, []byte("VmHWM:"))
		if !ok {
			continue
		}
		f := bytes.Fields(rest)
		if len(f) != 2 || string(f[1]) != "kB" {
			break
		}
		kb, err := strconv.ParseInt(string(f[0]), 10, 64)
		if err != nil || kb < 0 {
			break
		}
		return kb << 10, nil
	}
	return 0, errors.New("procstat: no VmHWM in /proc/self/status")
}
