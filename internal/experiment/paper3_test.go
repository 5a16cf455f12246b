package experiment

import (
	"bytes"
	"context"
	"io"
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
	// With each host's own utilisation (its cgroup's), the nodes differ.
	st.NodeCPUUtil, st.NodeWatts, st.Joules = []float64{1, 0}, nil, 0
	po.energy(&st, p)
	if len(st.NodeWatts) != 2 || st.NodeWatts[0] != 10+20+2 || st.NodeWatts[1] != 10+0+3 {
		t.Errorf("node watts with per-node utilisation %v", st.NodeWatts)
	}
}

func TestPaper3Tables(t *testing.T) {
	r := &Paper3Results{Objects: 1000, Profiles: []string{"amdahl-blade", "occ-node"}, Power: DefaultPowerModel(), Master: true,
		Devices: map[string][]string{"amdahl-blade": {"raid0-2-vertex"}, "occ-node": {"sas-15k", "sas-15k"}}}
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
	// The power model's table: 16 + 8 + 2 × 2 W active; 180 + 100 + 2 × 15 W.
	if pm := ts[3]; pm.Rows[0][5] != "28.0" || pm.Rows[0][6] != "40" || pm.Rows[1][5] != "310.0" || pm.Rows[1][6] != "290" {
		t.Errorf("power model rows %v", pm.Rows)
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
	res, err := RunPaper3(ctx, Paper3Options{Parts: []string{"table3"}, Profiles: []*Profile{blade, occ}, Objects: 3000, Thetas: []float64{30}, StatsMax: 10,
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
	// Neighbour Statistics runs two jobs: its accounting is the first's
	// (the catalogue's records), the sum job is chained after it.
	st := res.step("occ-node", "neighborstats", 10)
	if in := st.Account.Counters["MAP_INPUT_RECORDS"]; in != 3000 || len(st.Account.Chained) != 1 ||
		st.Account.Chained[0].Name != "neighborstats-sum" || st.Account.Chained[0].Seconds <= 0 || st.Account.Chained[0].Seconds >= st.Seconds {
		t.Errorf("neighborstats accounted as job %s with %d input records, chained %+v (step %.2f s)", st.Account.JobID, in, st.Account.Chained, st.Seconds)
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
	if len(files) != 8 || filepath.Base(files[7]) != ReportFile {
		t.Errorf("files %v", files)
	}
}

// TestRunFig2Modes runs Figure 2 for real at its smallest (one DataNode,
// one mapper of 1 MiB) with DataNodes writing buffered and direct: a
// cluster per configuration and mode, rows for each, logs of their own.
func TestRunFig2Modes(t *testing.T) {
	dir := t.TempDir()
	var progress bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := RunPaper3(ctx, Paper3Options{Parts: []string{"fig2"}, DataNodes: 1, Media: true, Conf: conf.New(),
		Fig2: Fig2Options{FileBytes: 1 << 20, MaxMappers: 1}, WorkDir: filepath.Join(dir, "work"), LogDir: filepath.Join(dir, "logs"), Progress: NewProgress(&progress)})
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	got := map[string]Fig2Row{}
	for _, row := range res.Fig2 {
		got[row.Config+" "+row.IO+" "+row.Op] = row
	}
	for _, cfg := range fig2Profiles {
		for _, io := range Fig2IO {
			for _, op := range []string{"write", "read"} {
				row, ok := got[cfg.name+" "+io+" "+op]
				if !ok || row.PerNode <= 0 || row.Files != 1 || row.Refused {
					t.Errorf("%s %s %s: %+v (ok %v)", cfg.name, io, op, row, ok)
				}
			}
		}
		for _, io := range Fig2IO {
			if _, err := os.Stat(filepath.Join(dir, "logs", cfg.name+"-"+io+"-daemons.log")); err != nil {
				t.Error(err)
			}
		}
	}
	if len(res.Fig2) != len(fig2Profiles)*len(Fig2IO)*2 {
		t.Errorf("%d rows", len(res.Fig2))
	}
	if _, err := RunPaper3(ctx, Paper3Options{Parts: []string{"fig2"}, DataNodes: 1, Conf: conf.New(), Fig2: Fig2Options{IO: []string{"sideways"}},
		WorkDir: filepath.Join(dir, "work"), LogDir: filepath.Join(dir, "logs"), Progress: NewProgress(&progress)}); err == nil || !strings.Contains(err.Error(), "sideways") {
		t.Errorf("an unknown write mode: %v", err)
	}
}

func TestParseCPULine(t *testing.T) {
	// user nice system idle iowait irq softirq steal: busy = 100+1+50+3+4+5 ticks.
	if got := parseCPULine("cpu  100 1 50 9000 20 3 4 5 0 0"); math.Abs(got-1.63) > 1e-9 {
		t.Errorf("busy %g s", got)
	}
	for _, bad := range []string{"", "cpu0 1 2 3 4 5 6 7 8", "cpu 1 2 3"} {
		if got := parseCPULine(bad); got != 0 {
			t.Errorf("parseCPULine(%q) = %g", bad, got)
		}
	}
}

func TestFig1AndTable2Tables(t *testing.T) {
	r := &Paper3Results{
		Fig1: []Fig1Row{
			{Device: RealDisk, Op: "write", Mode: "buffered", MBps: 50, ProcCPU: 0.4, KworkerCPU: 0.2},
			{Device: RealDisk, Op: "write", Mode: "direct", MBps: 75, ProcCPU: 0.1},
			{Device: RealDisk, Op: "read", Mode: "buffered", MBps: 100, ProcCPU: 0.2},
			{Device: RealDisk, Op: "read", Mode: "direct", MBps: 150, ProcCPU: 0.1},
			{Device: "vertex", Op: "write", Mode: "buffered", MBps: 100, ProcCPU: 0.2},
			{Device: "vertex", Op: "write", Mode: "direct", MBps: 100, ProcCPU: 0.1},
		},
		Table2: []TCPRow{{Case: "local", Link: "loopback", MBps: 686, SenderCPU: 0.5, ReceiverCPU: 0.25}},
		Fig2: []Fig2Row{{Config: "blade-ssd", Op: "write", Mappers: 2, PerNode: 37.5, DFSIOResult: DFSIOResult{Throughput: 20}},
			{Config: "blade-ssd", Op: "read", Mappers: 2, PerNode: 60},
			{Config: "blade-ssd", IO: "direct", Op: "write", Mappers: 2, PerNode: 75, DFSIOResult: DFSIOResult{Throughput: 30}},
			{Config: "blade-hdd", IO: "direct", Refused: true, Op: "write", Mappers: 1, PerNode: 30}},
	}
	ts := r.Tables()
	if len(ts) != 4 {
		t.Fatalf("%d tables", len(ts))
	}
	ratios := ts[1]
	want := [][]string{{RealDisk, "write", "1.50", "0.17", "direct faster, far less CPU", "yes"}, {RealDisk, "read", "1.50", "0.50", "little difference", "no"},
		{"vertex", "write", "1.00", "0.50", "direct faster, far less CPU", "CPU yes"}}
	for i, w := range want {
		if strings.Join(ratios.Rows[i], "|") != strings.Join(w, "|") {
			t.Errorf("ratio row %d: %v, want %v", i, ratios.Rows[i], w)
		}
	}
	if row := ts[2].Rows[0]; row[2] != "686" || row[3] != "343" || row[4] != "2.00" || row[5] != "50%" || row[6] != "25%" {
		t.Errorf("Table 2 row %v", row)
	}
	// A row of before the write modes is buffered; the paper's direct
	// figure and the ratio to the buffered twin stand beside direct rows.
	want2 := []string{"blade-ssd|write|buffered|2|37.5|n/a|n/a|n/a|20.0", "blade-ssd|read|buffered|2|60.0|n/a|n/a|n/a|n/a",
		"blade-ssd|write|direct|2|75.0|75|1.00|2.00|30.0", "blade-hdd|write|direct (refused: buffered)|1|30.0|75|0.40|n/a|n/a"}
	f2 := ts[3]
	for i, w := range want2 {
		if i >= len(f2.Rows) || strings.Join(f2.Rows[i], "|") != w {
			t.Errorf("Figure 2 rows %v, want %v", f2.Rows, want2)
			break
		}
	}
	if !strings.Contains(f2.Note, "refused O_DIRECT") {
		t.Errorf("Figure 2 note does not explain the refused row: %s", f2.Note)
	}
	if cs := r.charts(); len(cs) != 4 {
		t.Errorf("%d charts", len(cs))
	}
}

// TestRunFig1AndTable2Tiny runs Figure 1 on an emulated SSD and the real
// disk, and Table 2 on loopback (and between two hosts where this
// machine can make network namespaces).
func TestRunFig1AndTable2Tiny(t *testing.T) {
	dir := t.TempDir()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var progress bytes.Buffer
	rows, err := RunFig1(ctx, Fig1Options{Dir: dir, Devices: []string{"vertex", RealDisk}, FileBytes: 2 << 20, Files: 2, DD: true}, NewProgress(&progress))
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if len(rows) != 8 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		if r.Bytes != 4<<20 || r.MBps <= 0 || r.ProcCPU <= 0 {
			t.Errorf("row %+v", r)
		}
		// The emulated SSD's rate is its model's (a Vertex writes at
		// about 100-odd MB/s, reads at 250): far below a page cache's.
		if r.Device == "vertex" && r.MBps > 400 {
			t.Errorf("emulated vertex at %.0f MB/s", r.MBps)
		}
	}
	if _, err := RunFig1(ctx, Fig1Options{Dir: dir, Devices: []string{"floppy"}, FileBytes: 1 << 20, Files: 1}, NewProgress(io.Discard)); err == nil {
		t.Error("unknown preset accepted")
	}
	tcp, skipped, err := RunTable2(ctx, TCPOptions{Bytes: 32 << 20, LinkMbps: 200}, NewProgress(&progress))
	if err != nil {
		t.Fatalf("%v\n%s", err, progress.String())
	}
	if len(tcp) == 0 || tcp[0].Case != "local" || tcp[0].MBps <= 0 || tcp[0].SenderCPU <= 0 || tcp[0].ReceiverCPU <= 0 {
		t.Fatalf("Table 2 %+v", tcp)
	}
	if len(skipped) > 0 {
		t.Logf("skipped: %v", skipped)
		return
	}
	if len(tcp) != 3 {
		t.Fatalf("Table 2 with hosts: %+v", tcp)
	}
	// The shaped link holds the rate to tbf's 200 Mbit/s (25 MB/s, a
	// little less of it payload); a burst may add a little.
	if s := tcp[2]; s.MBps > 25*1.1 || s.MBps < 25*0.5 {
		t.Errorf("shaped link at %.1f MB/s, want about 25", s.MBps)
	}
}
