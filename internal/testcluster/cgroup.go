package testcluster

import (
	"errors"
	"testing"

	"github.com/stratafs/strata/internal/hostnet"
)

// cpuGroups are a cluster's per-host cgroups (Config.HostCPU;
// hostnet.CPUGroups: a CFS quota per host that its daemons join before
// they exec, so their task processes are in it too), failing the test
// on error.
type cpuGroups struct {
	t testing.TB
	g *hostnet.CPUGroups
}

// newCPUGroups checks that cgroups can be made (root, a cpu controller)
// and skips the test when not; their removal is registered with
// t.Cleanup, before Processes.Close, so it runs after the processes are
// killed.
func newCPUGroups(t testing.TB) *cpuGroups {
	t.Helper()
	g, err := hostnet.NewCPUGroups()
	if errors.Is(err, hostnet.ErrUnavailable) {
		t.Skipf("testcluster: Config.HostCPU: %v", err)
	}
	if err != nil {
		t.Fatalf("testcluster: %v", err)
	}
	t.Cleanup(g.Close)
	return &cpuGroups{t: t, g: g}
}

// wrap is the command prefix that runs a program in host's cgroup with a
// share of cpus CPUs.
func (c *cpuGroups) wrap(host string, cpus float64) []string {
	c.t.Helper()
	dirs, err := c.g.Group(host, cpus)
	if errors.Is(err, hostnet.ErrUnavailable) {
		c.t.Skipf("testcluster: Config.HostCPU: %v", err)
	}
	if err != nil {
		c.t.Fatalf("testcluster: %v", err)
	}
	return hostnet.Wrap(dirs)
}

// CPUStat reports a host's cgroup with Config.HostCPU: the CPU time its
// processes used (µs) and how long the kernel throttled them for
// exceeding the quota (µs). ok is false when host has no share.
func (p *Processes) CPUStat(host string) (usage, throttled int64, ok bool) {
	if p.cpu == nil {
		return 0, 0, false
	}
	return p.cpu.g.Stat(host)
}
