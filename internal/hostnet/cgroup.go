package hostnet

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// CPU shares: every host with a share gets a cgroup of
// its own, strata-<pid>-<cluster id>-<host>, whose CFS bandwidth limit is the share:
// quota/period = CPUs, e.g. 50 ms per 100 ms period for half a core. A
// daemon joins its host's cgroup before it execs (a shell writes its own
// pid to cgroup.procs, then execs the daemon), so the daemon's threads
// and every task process it forks are in it from their first instruction
// and count against the same quota: a node, not a process, is slowed,
// as an Atom-class blade beside a server-class one.
//
// cgroup v2 (a unified hierarchy at /sys/fs/cgroup with the cpu
// controller) is used where present, through cpu.max; else cgroup v1's
// cpu controller (/sys/fs/cgroup/cpu, cpu.cfs_quota_us and
// cpu.cfs_period_us), as on the test machines.

// cfsPeriod is the CFS period the quotas are given in: the kernel's
// default, 100 ms. Shorter periods throttle more smoothly but cost more
// scheduler work; this is what a container runtime sets.
const cfsPeriod = 100000 // µs

// cpuController is the directory of the cgroup hierarchy that has the cpu
// controller and whether it is cgroup v2; "" when there is none to use.
func cpuController() (dir string, v2 bool) {
	if b, err := os.ReadFile("/sys/fs/cgroup/cgroup.controllers"); err == nil && hasWord(string(b), "cpu") {
		return "/sys/fs/cgroup", true
	}
	if _, err := os.Stat("/sys/fs/cgroup/cpu/cpu.cfs_quota_us"); err == nil {
		return "/sys/fs/cgroup/cpu", false
	}
	return "", false
}

func hasWord(s, w string) bool {
	for _, f := range strings.Fields(s) {
		if f == w {
			return true
		}
	}
	return false
}

// CPUQuota is the cgroup setting for a share of cpus CPUs: the quota in
// µs per cfsPeriod, at least the kernel's minimum of 1 ms.
func CPUQuota(cpus float64) (quota, period int64) {
	return max(int64(cpus*cfsPeriod+0.5), 1000), cfsPeriod
}

// CPUGroups are a cluster's per-host cgroups. Its methods are not safe
// for concurrent use.
type CPUGroups struct {
	root string // the hierarchy's directory
	v2   bool
	id   string            // unique: two clusters of one test never share a group
	acct string            // v1: the cpuacct hierarchy, when mounted apart ("" if not)
	dirs map[string]string // host -> its cgroup's directory
}

// NewCPUGroups checks that cgroups can be made (root, a cpu controller):
// an error wrapping ErrUnavailable when not.
func NewCPUGroups() (*CPUGroups, error) {
	if os.Geteuid() != 0 {
		return nil, fmt.Errorf("%w: CPU shares need root (cgroups)", ErrUnavailable)
	}
	root, v2 := cpuController()
	if root == "" {
		return nil, fmt.Errorf("%w: CPU shares need a cgroup cpu controller (cgroup v2 cpu.max or v1 cpu.cfs_quota_us); none is mounted", ErrUnavailable)
	}
	sweepStaleCgroups(root)
	b := make([]byte, 3)
	rand.Read(b)
	g := &CPUGroups{root: root, v2: v2, id: hex.EncodeToString(b), dirs: map[string]string{}}
	if _, err := os.Stat("/sys/fs/cgroup/cpuacct/cpuacct.usage"); !v2 && err == nil && !sameDir(root, "/sys/fs/cgroup/cpuacct") {
		// v1 counts CPU time in the cpuacct controller; where it is its
		// own hierarchy, each host gets a group of the same name there too.
		g.acct = "/sys/fs/cgroup/cpuacct"
		sweepStaleCgroups(g.acct)
	}
	return g, nil
}

// sweepStaleCgroups removes the empty cgroups of test binaries that no
// longer run.
func sweepStaleCgroups(root string) {
	ents, _ := os.ReadDir(root)
	for _, e := range ents {
		parts := strings.SplitN(strings.TrimPrefix(e.Name(), Prefix), "-", 2)
		if !e.IsDir() || !strings.HasPrefix(e.Name(), Prefix) || len(parts) != 2 {
			continue
		}
		if !pidGone(parts[0]) {
			continue
		}
		os.Remove(filepath.Join(root, e.Name())) // fails while processes remain: kept for later
	}
}

func sameDir(a, b string) bool {
	fa, err1 := os.Stat(a)
	fb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(fa, fb)
}

// name is host's cgroup's name in each hierarchy.
func (g *CPUGroups) name(host string) string {
	return fmt.Sprintf("%s%d-%s-%s", Prefix, os.Getpid(), g.id, host)
}

// Group makes (once) host's cgroup with a quota of cpus CPUs and returns
// the directories a process joins (Wrap): the cpu group and, on cgroup v1
// with cpuacct apart, its accounting twin. A host keeps the share it was
// first given.
func (g *CPUGroups) Group(host string, cpus float64) ([]string, error) {
	if d := g.dirs[host]; d != "" {
		return g.joined(host), nil
	}
	if !(cpus > 0) {
		return nil, fmt.Errorf("hostnet: host %s: CPU share %v is not positive", host, cpus)
	}
	if g.acct != "" {
		if err := os.Mkdir(filepath.Join(g.acct, g.name(host)), 0o755); err != nil && !os.IsExist(err) {
			return nil, fmt.Errorf("%w: cannot make a cgroup: %v", ErrUnavailable, err)
		}
	}
	d := filepath.Join(g.root, g.name(host))
	if err := os.Mkdir(d, 0o755); err != nil {
		return nil, fmt.Errorf("%w: cannot make a cgroup: %v", ErrUnavailable, err)
	}
	g.dirs[host] = d
	quota, period := CPUQuota(cpus)
	var err error
	if g.v2 {
		err = os.WriteFile(filepath.Join(d, "cpu.max"), []byte(fmt.Sprintf("%d %d", quota, period)), 0o644)
	} else {
		// The period first: a quota is checked against the current one.
		err = os.WriteFile(filepath.Join(d, "cpu.cfs_period_us"), []byte(strconv.FormatInt(period, 10)), 0o644)
		if err == nil {
			err = os.WriteFile(filepath.Join(d, "cpu.cfs_quota_us"), []byte(strconv.FormatInt(quota, 10)), 0o644)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("hostnet: cgroup %s: setting a quota of %g CPUs: %w", d, cpus, err)
	}
	return g.joined(host), nil
}

func (g *CPUGroups) joined(host string) []string {
	dirs := []string{g.dirs[host]}
	if g.acct != "" {
		dirs = append(dirs, filepath.Join(g.acct, g.name(host)))
	}
	return dirs
}

// Wrap is the command prefix that starts a program in the cgroups dirs
// (Group): the shell joins each, then execs the program (same pid), so
// the program and everything it starts are in them from the first
// instruction.
func Wrap(dirs []string) []string {
	script := ""
	for i := range dirs {
		script += fmt.Sprintf(`echo $$ > "${%d}/cgroup.procs" && `, i+1)
	}
	return append([]string{"/bin/sh", "-c", script + fmt.Sprintf(`shift %d && exec "$@"`, len(dirs)), "sh"}, dirs...)
}

// Stat is host's cgroup's CPU time used (µs) and how long, in total, the
// kernel held it back for having used its quota (µs; cpu.stat's
// throttled_time, v1, or throttled_usec, v2); ok is false when host has
// no cgroup.
func (g *CPUGroups) Stat(host string) (usage, throttled int64, ok bool) {
	d := g.dirs[host]
	if d == "" {
		return 0, 0, false
	}
	b, err := os.ReadFile(filepath.Join(d, "cpu.stat"))
	if err != nil {
		return 0, 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		k, v, _ := strings.Cut(line, " ")
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch k {
		case "throttled_time": // v1, ns
			throttled = n / 1000
		case "throttled_usec": // v2
			throttled = n
		case "usage_usec": // v2
			usage = n
		}
	}
	if !g.v2 {
		// v1 keeps usage in the cpuacct controller: in the same group
		// where it is mounted with cpu, else in the twin group.
		acct := d
		if g.acct != "" {
			acct = filepath.Join(g.acct, g.name(host))
		}
		if b, err := os.ReadFile(filepath.Join(acct, "cpuacct.usage")); err == nil {
			n, _ := strconv.ParseInt(strings.TrimSpace(string(b)), 10, 64)
			usage = n / 1000
		}
	}
	return usage, throttled, true
}

// Close removes the cgroups. Processes still in them (task processes a
// killed TaskTracker left behind) are killed, then each cgroup is removed
// once the kernel has reaped them (a few tries; else a later process's
// NewCPUGroups removes it).
func (g *CPUGroups) Close() {
	gone := func(d string) bool { err := os.Remove(d); return err == nil || os.IsNotExist(err) }
	for host := range g.dirs {
		for _, d := range g.joined(host) {
			for try := 0; !gone(d) && try < 50; try++ {
				b, _ := os.ReadFile(filepath.Join(d, "cgroup.procs"))
				for _, f := range strings.Fields(string(b)) {
					if pid, err := strconv.Atoi(f); err == nil && pid > 0 {
						syscall.Kill(pid, syscall.SIGKILL)
					}
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
	}
	clear(g.dirs) // a second Close has nothing to do
}
