package experiment

import (
	"bytes"
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
)

func TestPaperRuntimeRatio(t *testing.T) {
	// 7.7 × 9 × 40 / (4 × 290) and 3.4 × the same.
	if got := paper3RuntimeRatio(7.7); math.Abs(got-2.3897) > 1e-3 {
		t.Errorf("θ = 30″: %g", got)
	}
	if got := paper3RuntimeRatio(3.4); math.Abs(got-1.0552) > 1e-3 {
		t.Errorf("statistics: %g", got)
	}
}

// TestEnergyFromAccounting checks the energy of a step from its
// accounting: CPU time over runtime × CPUs, each node's devices' busy
// fraction, and a master at idle.
func TestEnergyFromAccounting(t *testing.T) {
	p, err := ParseProfile(strings.NewReader("name = b\ndevice.d = vertex\nhdfs.volumes = [DISK]d\nmapred.local.dir = d\n"), "b")
	if err != nil {
		t.Fatal(err)
	}
	po := &Paper3Options{DataNodes: 2, Master: true, Media: true,
		Power: PowerModel{Nodes: map[string]NodePower{"b": {IdleW: 10, CPUW: 20}}, Devices: map[string]DevicePower{"vertex": {IdleW: 1, ActiveW: 3}}}}
	cpus := po.capacity(p)
	st := Paper3Step{Seconds: 10, Account: JobAccounting{
		Daemons:  []DaemonCPU{{Name: "x", CPUSeconds: CPUSeconds{User: 2 * cpus, System: 1 * cpus}}},
		Children: &CPUSeconds{User: 2 * cpus},
		Devices:  []DeviceAccount{{Node: 0, Device: "d", Busy: 5}, {Node: 1, Device: "d", Busy: 10}},
	}}
	po.energy(&st, p)
	if math.Abs(st.CPUUtil-0.5) > 1e-9 {
		t.Errorf("CPU utilisation %g, want 0.5", st.CPUUtil)
	}
	// Node 0: 10 + 20·0.5 + 1 + 2·0.5 = 22; node 1: 10 + 10 + 3 = 23; master 11.
	if len(st.NodeWatts) != 2 || st.NodeWatts[0] != 22 || st.NodeWatts[1] != 23 {
		t.Errorf("node watts %v", st.NodeWatts)
	}
	if math.Abs(st.Joules-(22+23+11)*10) > 1e-9 {
		t.Errorf("energy %g J", st.Joules)
	}
}

func TestPaper3Tables(t *testing.T) {
	r := &Paper3Results{Objects: 1000, Profiles: []string{"amdahl-blade", "occ-node"}, Power: DefaultPowerModel(), Master: true}
	add := func(p, app string, th, secs, joules float64) {
		r.Steps = append(r.Steps, Paper3Step{Profile: p, App: app, Theta: th, Seconds: secs, Joules: joules, Pairs: 500,
			OutputBytes: 48000, NodeWatts: []float64{20, 20, 20}})
	}
	add("amdahl-blade", "neighbors", 30, 10, 1000)
	add("occ-node", "neighbors", 30, 20, 7700)
	add("amdahl-blade", "neighborstats", 60, 5, 100)
	add("occ-node", "neighborstats", 60, 5, 170)
	ts := r.Tables()
	if len(ts) != 4 {
		t.Fatalf("%d tables", len(ts))
	}
	t3 := ts[0]
	if len(t3.Rows) != 2 || len(t3.Rows[0]) != len(t3.Header) {
		t.Fatalf("Table 3: %v / %v", t3.Header, t3.Rows)
	}
	// θ = 30″: times 10 and 20, output 48000 / (1000 × 24) = 2, ratio 2, the paper's implied 2.39.
	want := []string{"Neighbor Searching", "30″", "10.0", "n/a", "20.0", "n/a", "500", "2.00", "n/a", "2.00", "2.39"}
	if strings.Join(t3.Rows[0], "|") != strings.Join(want, "|") {
		t.Errorf("Table 3 row\n got %v\nwant %v", t3.Rows[0], want)
	}
	ratio := ts[2]
	if len(ratio.Rows) != 2 || ratio.Rows[0][2] != "7.70" || ratio.Rows[0][3] != "7.7" || ratio.Rows[0][4] != "1.00" ||
		ratio.Rows[1][2] != "1.70" || ratio.Rows[1][3] != "3.4" || ratio.Rows[1][4] != "0.50" {
		t.Errorf("energy ratios %v", ratio.Rows)
	}
	if en := ts[1]; len(en.Rows) != 4 || en.Rows[0][6] != "3+1" || en.Rows[0][8] != "0.5" {
		t.Errorf("energy rows %v", en.Rows)
	}
	var b bytes.Buffer
	r.PrintTables(&b)
	for _, w := range []string{"Table 3: running time", "Energy efficiency: amdahl-blade over occ-node", "Power model (W)"} {
		if !strings.Contains(b.String(), w) {
			t.Errorf("printed tables lack %q:\n%s", w, b.String())
		}
	}
}

// TestRunPaper3Tiny runs the applications for real on two small
// profiles' clusters and checks the tables and files (about 5 s).
func TestRunPaper3Tiny(t *testing.T) {
	dir := t.TempDir()
	blade, err := LoadProfile("amdahl-blade")
	if err != nil {
		t.Fatal(err)
	}
	occ, err := LoadProfile("occ-node")
	if err != nil {
		t.Fatal(err)
	}
	var progress bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := RunPaper3(ctx, Paper3Options{Profiles: []*Profile{blade, occ}, Objects: 3000, Thetas: []float64{30}, StatsMax: 10,
		Clustered: true, DataNodes: 1, Master: true, Media: true, Conf: conf.New(),
		WorkDir: filepath.Join(dir, "work"), LogDir: filepath.Join(dir, "logs"), Progress: NewProgress(&progress)})
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if len(res.Steps) != 4 {
		t.Fatalf("%d steps", len(res.Steps))
	}
	for _, s := range res.Steps {
		if s.Seconds <= 0 || s.Joules <= 0 || s.Pairs <= 0 || len(s.NodeWatts) != 1 {
			t.Errorf("step %s %s: %+v", s.Profile, s.App, s)
		}
		if s.Profile == "occ-node" && s.NodeWatts[0] < 180 {
			t.Errorf("OCC node below its idle power: %v", s.NodeWatts)
		}
	}
	// The two profiles found the same pairs (same seed, same catalogue).
	if a, b := res.step("amdahl-blade", "neighbors", 30), res.step("occ-node", "neighbors", 30); a.Pairs != b.Pairs {
		t.Errorf("pairs differ: %d and %d", a.Pairs, b.Pairs)
	}
	files, err := res.WriteFiles(filepath.Join(dir, "out"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Size() == 0 {
			t.Errorf("%s: %v", f, err)
		}
	}
	if len(files) != 7 {
		t.Errorf("files %v", files)
	}
}
