package experiment

import (
	"math"
	"strings"
	"testing"
)

func TestDefaultPowerAddsUpToThePapersTotals(t *testing.T) {
	m := DefaultPowerModel()
	// The paper's blade (2 Spinpoint F1 + a Vertex) and OCC node (one
	// Ultrastar) at full load: the paper's ~40 W and 290 W.
	blade, _ := m.Watts(m.Nodes["amdahl-blade"], 1, []DeviceUse{{"spinpoint-f1", 1}, {"spinpoint-f1", 1}, {"vertex", 1}})
	occ, _ := m.Watts(m.Nodes["occ-node"], 1, []DeviceUse{{"hitachi-a7k", 1}})
	if blade != paper3.BladeWatts || occ != paper3.OCCWatts {
		t.Errorf("full load: blade %g W (paper %g), OCC %g W (paper %g)", blade, paper3.BladeWatts, occ, paper3.OCCWatts)
	}
}

func TestWatts(t *testing.T) {
	m := PowerModel{Nodes: map[string]NodePower{"n": {IdleW: 10, CPUW: 20}},
		Devices: map[string]DevicePower{"d": {IdleW: 1, ActiveW: 5}}}
	n := m.Nodes["n"]
	for _, tc := range []struct {
		util float64
		devs []DeviceUse
		want float64
	}{
		{0, nil, 10},
		{0.5, nil, 20},
		{2, nil, 30},          // utilisation clamps at 1
		{math.NaN(), nil, 10}, // and NaN is none
		{0, []DeviceUse{{"d", 0}}, 11},
		{0, []DeviceUse{{"d", 0.25}}, 12},
		{1, []DeviceUse{{"d", 1}, {"raid0-3-d", 1}}, 30 + 5 + 15},
		{0, []DeviceUse{{"raid0-2-d", 0.5}}, 10 + 2 + 4},
	} {
		got, unknown := m.Watts(n, tc.util, tc.devs)
		if math.Abs(got-tc.want) > 1e-9 || len(unknown) != 0 {
			t.Errorf("Watts(%v, %v) = %g %v, want %g", tc.util, tc.devs, got, unknown, tc.want)
		}
	}
	if _, unknown := m.Watts(n, 0, []DeviceUse{{"x", 1}, {"raid0-x-d", 1}, {"raid0-0-d", 1}}); len(unknown) != 3 {
		t.Errorf("unknown presets %v", unknown)
	}
}

func TestPowerSet(t *testing.T) {
	m := DefaultPowerModel()
	if err := m.Set("node", "amdahl-blade=cpu:12"); err != nil {
		t.Fatal(err)
	}
	if n := m.Nodes["amdahl-blade"]; n.CPUW != 12 || n.IdleW != 16 {
		t.Errorf("after cpu:12: %+v", n)
	}
	if err := m.Set("device", "newdisk=idle:2,active:3"); err != nil {
		t.Fatal(err)
	}
	if d, ok := m.Device("raid0-2-newdisk"); !ok || d.IdleW != 4 || d.ActiveW != 6 {
		t.Errorf("raid0 of a new preset: %+v %v", d, ok)
	}
	for _, bad := range []struct{ kind, spec, want string }{
		{"node", "amdahl-blade", "want name="},
		{"node", "=idle:1", "want name="},
		{"node", "x=idle:-1", "non-negative"},
		{"node", "x=idle:abc", "non-negative"},
		{"node", "x=idle:1,disk:2", "unknown fields disk"},
		{"device", "d=idle:5,active:1", "below idle"},
		{"cpu", "x=idle:1", "unknown kind"},
	} {
		if err := m.Set(bad.kind, bad.spec); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("Set(%q, %q) = %v, want an error with %q", bad.kind, bad.spec, err, bad.want)
		}
	}
}
