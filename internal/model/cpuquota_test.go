package model

import (
	"math"
	"strings"
	"testing"
)

func TestQuotaTime(t *testing.T) {
	near := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-6 {
			t.Errorf("%s: %.6f s, want %.6f", what, got, want)
		}
	}
	// No quota, or a rate no faster than the share: the steady rate.
	near("no period", QuotaTime(0.1, 0.25, 1, 0), 0.4)
	near("rate at the share", QuotaTime(0.1, 0.25, 0.25, 0.1), 0.4)
	// Work within one period's quota runs at full speed.
	near("within the quota", QuotaTime(0.01, 0.25, 1, 0.1), 0.01)
	// 0.05 CPU-s at a quarter CPU in 100 ms periods. When the first
	// period has at least 25 ms left (3 in 4 starts), its quota runs now
	// and the rest right after the boundary: the boundary (62.5 ms away
	// on average) plus 25 ms. Otherwise the first period runs what it
	// can, the next its quota, the third the rest: 125 ms in all.
	if got, want := QuotaTime(0.05, 0.25, 1, 0.1), 0.75*0.0875+0.25*0.125; math.Abs(got-want) > 1e-3 {
		t.Errorf("two quotas' work: %.4f s, want %.4f (steady rate: 0.2)", got, want)
	}
	// Long phases are short of the steady rate by the same ~0.1 s.
	if long := QuotaTime(10, 0.25, 1, 0.1); math.Abs(long-(40-0.103)) > 1e-3 {
		t.Errorf("400 quotas' work: %.4f s, want 39.897", long)
	}
	// More work never takes less time.
	prev := 0.0
	for c := 0.001; c < 1; c += 0.007 {
		v := QuotaTime(c, 0.25, 1, 0.1)
		if v < prev-1e-12 {
			t.Fatalf("QuotaTime(%v) = %v < %v for less work", c, v, prev)
		}
		prev = v
	}
}

// A quarter CPU as a quota: the CPU-bound maps of a short job run in the
// quota's burst and end sooner than at a steady quarter core; the
// reduces, which continue the maps' work, keep the steady rate.
func TestQuotaClusterMaps(t *testing.T) {
	_, w := calibration(t)
	steady := *w.Calibration
	steady.SharedCores, steady.Cores = 0, 0.25
	quota := steady
	quota.CPUPeriodMs, quota.QuotaSharedCores = 100, 2
	ps, pq := predictOn(t, w, &steady), predictOn(t, w, &quota)
	for _, name := range []string{"teravalidate", "terasort"} {
		s, q := job(ps, name), job(pq, name)
		if s == nil || q == nil {
			t.Fatalf("no %s", name)
		}
		if q.Times[PhaseMap]["cpu"] >= s.Times[PhaseMap]["cpu"] {
			t.Errorf("%s: map CPU %.3f s under the quota, %.3f s steady", name, q.Times[PhaseMap]["cpu"], s.Times[PhaseMap]["cpu"])
		}
		if q.Times[PhaseReduce]["cpu"] != s.Times[PhaseReduce]["cpu"] {
			t.Errorf("%s: reduce CPU %.3f s under the quota, %.3f s steady", name, q.Times[PhaseReduce]["cpu"], s.Times[PhaseReduce]["cpu"])
		}
	}
	// The file's keys.
	c, err := ParseCluster(strings.NewReader("name = q\nnodes = 3\nnode.cores = 0.25\nnode.cpu.quota.period = 100ms\ncpu.quota.shared = 2\n"+
		"device.d = sata-ssd\nhdfs.volumes = d\nmapred.local.dir = d\n"), "q.cluster")
	if err != nil {
		t.Fatal(err)
	}
	if c.CPUPeriodMs != 100 || c.QuotaSharedCores != 2 || !c.quota() {
		t.Errorf("parsed period %v ms, shared %v", c.CPUPeriodMs, c.QuotaSharedCores)
	}
	if _, err := ParseCluster(strings.NewReader("name = q\nnodes = 1\nnode.cores = 1\nnode.cpu.quota.period = 2s\n"), "q.cluster"); err == nil {
		t.Error("a 2 s period parsed")
	}
}

// A run on hosts with CPU shares describes its nodes as quotas: the
// period the results recorded, else the kernel's default that strata's
// hosts used before they recorded it.
func TestClusterOfQuotaHosts(t *testing.T) {
	res, _ := calibration(t)
	r := *res
	r.Hosts = true
	pr := r.Profiles[0]
	for _, c := range []struct{ recorded, want float64 }{{0, 100}, {50, 50}} {
		l := *pr.Layout
		l.NodeCPUs, l.NodeCPUPeriodMs = 0.25, c.recorded
		pr.Layout = &l
		cl, err := ClusterOf(&r, &pr)
		if err != nil {
			t.Fatal(err)
		}
		if cl.Cores != 0.25 || cl.CPUPeriodMs != c.want || cl.QuotaSharedCores != float64(r.CPUs) || !cl.quota() {
			t.Errorf("recorded period %v: cores %v, period %v ms, shared %v", c.recorded, cl.Cores, cl.CPUPeriodMs, cl.QuotaSharedCores)
		}
	}
}
