package model

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/internal/experiment"
	"github.com/stratafs/strata/internal/media"
)

// calibration is a real run: `strata model validate`'s calibration case
// (TeraGen, TeraSort, TeraValidate of 100 MB on three emulated all-HDD
// nodes in one process on a 2-core VM).
func calibration(t *testing.T) (*experiment.Results, *Workload) {
	t.Helper()
	res, err := experiment.ReadResults("testdata/calibration-results.json")
	if err != nil {
		t.Fatal(err)
	}
	w, err := Calibrate(res, res.Profiles[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	return res, w
}

func predictOn(t *testing.T, w *Workload, c *Cluster) *Prediction {
	t.Helper()
	p, err := Predict(w, c, 3, 0.1)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func job(p *Prediction, name string) *JobPrediction {
	for i := range p.Jobs {
		if p.Jobs[i].Name == name {
			return &p.Jobs[i]
		}
	}
	return nil
}

// The fit is exact on the calibration cluster: every phase of every job
// comes out as measured.
func TestCalibrationReproducesItsRun(t *testing.T) {
	res, w := calibration(t)
	if len(w.Jobs) != 3 {
		t.Fatalf("jobs %d, want 3", len(w.Jobs))
	}
	p := predictOn(t, w, w.Calibration)
	for _, ja := range res.Profiles[0].Runs[0].Jobs {
		m := Measured(&ja)
		jp := job(p, ja.Step)
		// The map phase has the workload's expected launch spread in
		// place of the job's own.
		if d := math.Abs(m.Total() - ja.Seconds); d > 1e-6 && m.Overhead > 0 {
			t.Errorf("%s: phases add to %.3f, the job took %.3f", ja.Step, m.Total(), ja.Seconds)
		}
		j := &w.Jobs[slices.IndexFunc(w.Jobs, func(j Job) bool { return j.Name == ja.Step })]
		if j.LaunchSpread <= 0 {
			t.Errorf("%s: no launch spread", ja.Step)
		}
		m.Map += w.launchSpread(w.Calibration, j.Maps) - j.LaunchSpread
		for _, ph := range []string{PhaseMap, PhaseShuffle, PhaseReduce, "overhead"} {
			if d := math.Abs(jp.Phases.Get(ph) - m.Get(ph)); d > 1e-6 {
				t.Errorf("%s %s: predicted %.4f, measured %.4f", ja.Step, ph, jp.Phases.Get(ph), m.Get(ph))
			}
		}
	}
}

// What calibration derives from the counters: TeraSort reads its input
// once, writes its output once at replication 1 (Hadoop's TeraSort
// output), shuffles about its input, and its maps are the TeraGen files'
// blocks.
func TestCalibratedDemands(t *testing.T) {
	_, w := calibration(t)
	var ts *Job
	for i := range w.Jobs {
		if w.Jobs[i].Name == "terasort" {
			ts = &w.Jobs[i]
		}
	}
	if ts == nil {
		t.Fatal("no terasort")
	}
	near := func(name string, got, want, tol float64) {
		if math.Abs(got-want) > tol {
			t.Errorf("%s = %.3f, want %.3f ± %.3f", name, got, want, tol)
		}
	}
	near("HDFS read per byte", ts.MapHDFSRead, 1, 0.01)
	near("HDFS written per byte", ts.ReduceHDFSWrite, 1, 0.01)
	near("shuffled per byte", ts.ShuffleBytes, 1.02, 0.01)
	if ts.WriteReplication != 1 {
		t.Errorf("TeraSort's write replication %d, want 1", ts.WriteReplication)
	}
	if ts.MapsRule != "files:teragen" || ts.ReducesRule != "slots" {
		t.Errorf("rules %s / %s", ts.MapsRule, ts.ReducesRule)
	}
	if ts.MapCPU <= 0 || ts.BytesPerRequest <= 0 || ts.SeekFraction <= 0 || ts.SeekFraction > 1 {
		t.Errorf("CPU %g, bytes/request %g, seeks %g", ts.MapCPU, ts.BytesPerRequest, ts.SeekFraction)
	}
}

// Faster devices never make a job slower, more data never makes it
// faster, and the bound moves as it should: from the HDD to the CPU
// when the devices get fast, to the network when the link gets slow.
func TestPredictionsMoveWithCapacity(t *testing.T) {
	_, w := calibration(t)
	hdd := *w.Calibration
	ssd := hdd
	ssd.Devices = []Device{mustDevice(t, "hdd", "nvme")}
	ph, ps := predictOn(t, w, &hdd), predictOn(t, w, &ssd)
	if ps.Runtime >= ph.Runtime {
		t.Errorf("NVMe %.2f s not faster than HDD %.2f s", ps.Runtime, ph.Runtime)
	}
	if b := job(ph, "terasort").Bounds[PhaseMap]; b != "device hdd" {
		t.Errorf("HDD TeraSort map bound %q", b)
	}
	big := hdd
	big.DataBytes *= 10
	if pb := predictOn(t, w, &big); pb.Runtime < 5*ph.Runtime {
		t.Errorf("10x data: %.2f s against %.2f s", pb.Runtime, ph.Runtime)
	}
	slow := hdd
	slow.LinkMbps = 10
	if b := job(predictOn(t, w, &slow), "teragen").Bounds[PhaseMap]; b != "network" {
		t.Errorf("TeraGen at replication 3 over 10 Mbit/s bound by %q", b)
	}
	// Twice the nodes, each its own cores: TeraGen's maps double, its
	// per-node work stays.
	more := hdd
	more.Nodes, more.SharedCores, more.Cores = 6, 0, 1
	if j := job(predictOn(t, w, &more), "teragen"); j.Maps != 6 {
		t.Errorf("TeraGen maps on 6 nodes: %d", j.Maps)
	}
}

func mustDevice(t *testing.T, name, preset string) Device {
	t.Helper()
	d, err := ParseDevice(name, preset)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func TestParseCluster(t *testing.T) {
	for _, name := range BuiltinClusters() {
		if _, err := LoadCluster(name); err != nil {
			t.Errorf("built-in %s: %v", name, err)
		}
	}
	good := "name = a\nnodes = 2\nnode.cores = 4\ndevice.d = read=100,write=90,latency=100us,seek=8ms,qd=2\nhdfs.volumes = d\nmapred.local.dir = d\ndfs.replication = 2\ndata = 10g\n"
	c, err := ParseCluster(strings.NewReader(good), "t")
	if err != nil {
		t.Fatal(err)
	}
	if d := c.Device("d"); d == nil || d.Params.ReadMBps != 100 || d.Params.Seek.Milliseconds() != 8 || d.Params.QueueDepth != 2 || c.DataBytes != 10<<30 {
		t.Errorf("parsed %+v", c)
	}
	for _, bad := range []struct{ text, want string }{
		{"name = a\nname = b\n", "given twice"},
		{"name = a\ncolour = red\n", "unknown key"},
		{"name = a\nnodes = -1\n", "nodes"},
		{"name = a\nnodes = 2\nnode.cores = 1\ndevice.d = floppy\nhdfs.volumes = d\nmapred.local.dir = d\n", "unknown media preset"},
		{"name = a\nnodes = 2\nnode.cores = 1\ndevice.d = hdd-7200\nhdfs.volumes = e\nmapred.local.dir = d\n", "unknown device"},
		{"name = a\nnodes = 2\nnode.cores = 1\ndevice.d = hdd-7200\nhdfs.volumes = d\nmapred.local.dir = d\ndfs.replication = 3\n", "replication"},
		{"name = a\nnodes = 2\ndevice.d = read=1,qd=0\n", "qd"},
		{"nodes\n", "key = value"},
	} {
		_, err := ParseCluster(strings.NewReader(bad.text), "t")
		if err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%q: error %v, want %q", bad.text, err, bad.want)
		}
	}
}

func TestWorkloadRoundTrip(t *testing.T) {
	_, w := calibration(t)
	var b bytes.Buffer
	if err := w.WriteJSON(&b); err != nil {
		t.Fatal(err)
	}
	w2, err := ReadWorkload(&b)
	if err != nil {
		t.Fatal(err)
	}
	p1, p2 := predictOn(t, w, w.Calibration), predictOn(t, w2, w2.Calibration)
	if math.Abs(p1.Runtime-p2.Runtime) > 1e-9 {
		t.Errorf("runtime %.6f after a round trip, %.6f before", p2.Runtime, p1.Runtime)
	}
	if _, err := ReadWorkload(strings.NewReader(`{"jobs": []}`)); err == nil {
		t.Error("an empty workload was accepted")
	}
}

// Advice ranks by cost per run with energy and explains each candidate
// against the first.
func TestAdvise(t *testing.T) {
	_, w := calibration(t)
	hdd := *w.Calibration
	hdd.Name, hdd.Price, hdd.IdleW, hdd.CPUW = "hdd", 1000, 100, 50
	ssd := hdd
	ssd.Name, ssd.Price = "ssd-inter", 1200
	ssd.Devices = append(append([]Device(nil), hdd.Devices...), mustDevice(t, "ssd", "sata-ssd"))
	ssd.LocalDirs = []string{"ssd"}
	a, err := Advise(w, []*Cluster{&hdd, &ssd}, 3, 0.1, Budget{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	a.Print(&b)
	out := b.String()
	if !strings.Contains(out, "ssd-inter against hdd:") || !strings.Contains(out, "Cheapest per run:") {
		t.Errorf("advice:\n%s", out)
	}
	if a.Predictions[1].Runtime >= a.Predictions[0].Runtime {
		t.Errorf("an SSD for intermediate data predicted no faster: %.2f vs %.2f", a.Predictions[1].Runtime, a.Predictions[0].Runtime)
	}
	if a.Predictions[0].KWhPerJob <= 0 {
		t.Error("no energy with power figures set")
	}
}

// A budget keeps clusters over it out of the recommendation; -fill adds
// each candidate with as many nodes as the budget buys.
func TestAdviseBudget(t *testing.T) {
	_, w := calibration(t)
	hdd := *w.Calibration
	hdd.Name, hdd.Price = "hdd", 100*float64(hdd.Nodes)
	ssd := hdd
	ssd.Name, ssd.Price = "ssd-inter", 250*float64(hdd.Nodes)
	ssd.Devices = append(append([]Device(nil), hdd.Devices...), mustDevice(t, "ssd", "sata-ssd"))
	ssd.LocalDirs = []string{"ssd"}
	// Two more HDD nodes, or too few SSD nodes for the replication.
	budget := hdd.Price + 200
	if int(budget/250) >= hdd.Replication {
		t.Fatalf("the test wants a calibration of replication > %d", int(budget/250))
	}
	a, err := Advise(w, []*Cluster{&hdd, &ssd}, 3, 0.1, Budget{Dollars: budget, Fill: true})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, p := range a.Predictions {
		names = append(names, p.Cluster.Name)
	}
	n := hdd.Nodes
	want := fmt.Sprintf("hdd,hdd-%dnodes,ssd-inter", n+2)
	if got := strings.Join(names, ","); got != want {
		t.Fatalf("candidates %s, want %s", got, want)
	}
	grown := a.Predictions[1]
	if grown.Cluster.Price != hdd.Price+200 || grown.Cluster.Nodes != n+2 {
		t.Errorf("grown cluster: %d nodes at $%g", grown.Cluster.Nodes, grown.Cluster.Price)
	}
	if grown.Runtime >= a.Predictions[0].Runtime {
		t.Errorf("%d nodes predicted no faster than %d: %.2f vs %.2f s", n+2, n, grown.Runtime, a.Predictions[0].Runtime)
	}
	if a.Within(a.Predictions[2]) {
		t.Errorf("ssd-inter at $%g is within a budget of $%g", ssd.Price, budget)
	}
	var b bytes.Buffer
	a.Print(&b)
	out := b.String()
	if !strings.Contains(out, fmt.Sprintf("Within $%.0f: ", budget)) || !strings.Contains(out, " over") {
		t.Errorf("advice:\n%s", out)
	}
	rec := out[strings.Index(out, "Within $"):]
	rec = rec[:strings.Index(rec, "\n")]
	if strings.Contains(rec, "ssd-inter ") || strings.Contains(rec, "ssd-inter,") {
		t.Errorf("a cluster over the budget was recommended: %s", rec)
	}
	// A budget no candidate fits says so.
	a, err = Advise(w, []*Cluster{&hdd, &ssd}, 3, 0.1, Budget{Dollars: 10})
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	a.Print(&b)
	if !strings.Contains(b.String(), "No candidate costs $10 or less: the cheapest, hdd,") {
		t.Errorf("advice over every budget:\n%s", b.String())
	}
	// A cluster without a price is never within a budget nor the
	// cheapest per run, though its cost per run reads $0.
	free := ssd
	free.Name, free.Price = "free", 0
	a, err = Advise(w, []*Cluster{&hdd, &free}, 3, 0.1, Budget{Dollars: 1e9})
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	a.Print(&b)
	if a.Within(a.Predictions[1]) || !strings.Contains(b.String(), "no price") || !strings.Contains(b.String(), "Cheapest per run: hdd ") {
		t.Errorf("a cluster without a price:\n%s", b.String())
	}
}

// Several runs of one cluster shape calibrate one workload: the Zones
// runs of experiment amdahl (paper3.json) join the TeraSort run's jobs;
// a run on another shape is refused.
func TestCalibrateRuns(t *testing.T) {
	res, _ := calibration(t)
	z, err := ReadRun("testdata/zones-paper3.json")
	if err != nil {
		t.Fatal(err)
	}
	w, err := CalibrateRuns([]*experiment.Results{res, z}, "")
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, j := range w.Jobs {
		names = append(names, j.Name)
	}
	if got := strings.Join(names, ","); got != "teragen,terasort,teravalidate,neighbors-15,neighbors-30,neighborstats" {
		t.Errorf("jobs %s", got)
	}
	p := predictOn(t, w, w.Calibration)
	zr := z.Profiles[0].Runs[0].Jobs
	for k, ja := range zr {
		j := &w.Jobs[3+k] // the spread expected in place of the job's own
		if d := math.Abs(job(p, ja.Step).Phases.Total() - Measured(&ja).Total() - w.launchSpread(w.Calibration, j.Maps) + j.LaunchSpread); d > 1e-6 {
			t.Errorf("%s: predicted %.3f on its own cluster, measured %.3f", ja.Step, job(p, ja.Step).Phases.Total(), Measured(&ja).Total())
		}
	}
	z.DataNodes = 6
	if _, err := CalibrateRuns([]*experiment.Results{res, z}, ""); err == nil || !strings.Contains(err.Error(), "6 nodes") {
		t.Errorf("a 6-node run joined a 3-node calibration: %v", err)
	}
}

// The overhead above the workload's least shrinks with the HDFS devices'
// request time on faster devices and is kept on slower ones.
func TestOverheadOnOtherDevices(t *testing.T) {
	dev := func(lat, seek time.Duration) *Cluster {
		return &Cluster{Volumes: []string{"d"}, Devices: []Device{{Name: "d", Params: media.Params{Latency: lat, Seek: seek}}}}
	}
	hdd, ssd, slow := dev(200*time.Microsecond, 12500*time.Microsecond), dev(100*time.Microsecond, 0), dev(time.Millisecond, 30*time.Millisecond)
	j := Job{Overhead: 0.5, OverheadFixed: 0.1, OverheadRequest: hdd.hdfsRequestTime()}
	for _, c := range []struct {
		name string
		cl   *Cluster
		want float64
	}{
		{"calibration", hdd, 0.5},
		{"ssd", ssd, 0.1 + 0.4*0.1/12.7},
		{"slower", slow, 0.5},
	} {
		if got := j.overheadOn(c.cl); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%s: overhead %.4f, want %.4f", c.name, got, c.want)
		}
	}
	if got := (&Job{Overhead: 0.5}).overheadOn(ssd); got != 0.5 {
		t.Errorf("a workload without the split: %.4f, want 0.5", got)
	}
}

// The daemons' CPU per node-second is the least any job showed; the rest
// of each job's is per byte.
func TestDaemonBackground(t *testing.T) {
	cl := &Cluster{Nodes: 2}
	jobs := []Job{
		{daemonSecs: 1.0, movedBytes: 1e9, jobSecs: 5},   // 0.1 per node-second
		{daemonSecs: 0.3, movedBytes: 1e6, jobSecs: 1.5}, // the least: 0.1
		{daemonSecs: 2.0, movedBytes: 4e9, jobSecs: 2},   // 0.5
	}
	background(jobs, []source{{cl: cl}, {cl: cl}, {cl: cl}})
	for i, want := range []float64{0, 0, (2.0 - 0.1*2*2) / 4e9} {
		if j := jobs[i]; math.Abs(j.DaemonCPUPerSecond-0.1) > 1e-12 || math.Abs(j.DaemonCPU-want) > 1e-18 {
			t.Errorf("job %d: %.4f per node-second, %.3g per byte; want 0.1, %.3g", i, j.DaemonCPUPerSecond, j.DaemonCPU, want)
		}
	}
}

// A step's chained jobs (Neighbour Statistics' sum) each add a job's
// fixed overhead to its own; the rest of its overhead scales with the
// HDFS devices' request time, as any job's.
func TestChainedJobsOverhead(t *testing.T) {
	res, plain := calibration(t)
	// The job of the largest overhead, so that it does not set the least.
	var name string
	for _, j := range plain.Jobs {
		if name == "" || j.Overhead > plain.Jobs[slices.IndexFunc(plain.Jobs, func(k Job) bool { return k.Name == name })].Overhead {
			name = j.Name
		}
	}
	ja := res.Profiles[0].Runs[0].Job(name)
	ja.Seconds += 0.4
	ja.Chained = []experiment.ChainedJob{{ID: "job_1_0009", Name: "sum", Maps: 1, Reduces: 1, Seconds: 0.4}}
	w, err := Calibrate(res, res.Profiles[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	var j *Job
	for i := range w.Jobs {
		if w.Jobs[i].Name == name {
			j = &w.Jobs[i]
		}
		if w.Jobs[i].Name != name && math.Abs(w.Jobs[i].OverheadFixed-plain.Jobs[i].OverheadFixed) > 1e-9 {
			t.Errorf("%s: fixed overhead %.3f, %.3f without the chained job", w.Jobs[i].Name, w.Jobs[i].OverheadFixed, plain.Jobs[i].OverheadFixed)
		}
	}
	fixed := plain.Jobs[0].OverheadFixed
	if j == nil || j.Chained != 1 || math.Abs(j.OverheadFixed-2*fixed) > 1e-9 {
		t.Fatalf("%s: %d chained, fixed overhead %.3f, want 1 and %.3f", name, j.Chained, j.OverheadFixed, 2*fixed)
	}
	ssd := &Cluster{Volumes: []string{"d"}, Devices: []Device{{Name: "d", Params: media.Params{Latency: 50 * time.Microsecond}}}}
	if got := j.overheadOn(ssd); got < 2*fixed-1e-9 || got >= j.Overhead {
		t.Errorf("overhead on an SSD %.3f, want between the two jobs' fixed parts %.3f and the calibration's %.3f", got, 2*fixed, j.Overhead)
	}
}

// A chained job with its attempts accounted is apart from its step's
// own overhead: what lay outside its attempts stays, its stages' CPU
// takes their time on the predicted cluster's cores and the rest of its
// attempts' span scales with the HDFS request time; the fixed overhead
// of the other jobs does not change.
func TestChainedJobsTimed(t *testing.T) {
	res, plain := calibration(t)
	name := plain.Jobs[len(plain.Jobs)-1].Name
	ja := res.Profiles[0].Runs[0].Job(name)
	ja.Seconds += 0.5
	cpu := func(s float64) experiment.CPUSeconds { return experiment.CPUSeconds{User: s * 3 / 4, System: s / 4} }
	ja.Chained = []experiment.ChainedJob{{ID: "job_1_0009", Name: "sum", Maps: 2, Reduces: 1, Seconds: 0.5,
		Attempts: []experiment.AttemptAccount{
			{Type: "map", State: "SUCCEEDED", Start: 0, End: 0.1, CPU: cpu(0.02)},
			{Type: "map", State: "SUCCEEDED", Start: 0.01, End: 0.12, CPU: cpu(0.04)},
			{Type: "map", State: "FAILED", Start: 0.01, End: 0.9, CPU: cpu(5)},
			{Type: "reduce", State: "SUCCEEDED", Start: 0.12, End: 0.3, CPU: cpu(0.04)},
		}}}
	w, err := Calibrate(res, res.Profiles[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	j := &w.Jobs[len(w.Jobs)-1]
	cal := w.Calibration
	if cal.SharedCores <= 0 || cal.Nodes < 2 {
		t.Fatalf("calibration cluster of %d nodes, %.1f shared cores: want a shared pool", cal.Nodes, cal.SharedCores)
	}
	stretch2 := math.Max(1, 2/cal.SharedCores) // two maps on the pool
	wantStages := []ChainedStage{{Tasks: 2, CPU: 0.03}, {Tasks: 1, CPU: 0.04}}
	if j.ChainedSeconds != 0.5 || math.Abs(j.ChainedOutside-0.2) > 1e-9 || len(j.ChainedStages) != 2 ||
		j.ChainedStages[0].Tasks != 2 || math.Abs(j.ChainedStages[0].CPU-0.03) > 1e-9 || math.Abs(j.ChainedStages[1].CPU-0.04) > 1e-9 {
		t.Fatalf("chained %.3f s, %.3f outside, stages %+v; want 0.5, 0.2, %+v", j.ChainedSeconds, j.ChainedOutside, j.ChainedStages, wantStages)
	}
	if want := 0.3 - 0.03*stretch2 - 0.04; math.Abs(j.ChainedSpanWait-want) > 1e-9 {
		t.Errorf("span wait %.4f, want %.4f", j.ChainedSpanWait, want)
	}
	for i := range w.Jobs {
		if math.Abs(w.Jobs[i].OverheadFixed-plain.Jobs[i].OverheadFixed) > 1e-9 {
			t.Errorf("%s: fixed overhead %.3f, %.3f without the chained job", w.Jobs[i].Name, w.Jobs[i].OverheadFixed, plain.Jobs[i].OverheadFixed)
		}
	}
	if got := j.chainedOn(cal); math.Abs(got-0.5) > 1e-9 {
		t.Errorf("chained job on the calibration cluster %.3f s, want its 0.5", got)
	}
	if got, want := j.overheadOn(cal), j.Overhead; math.Abs(got-want) > 1e-9 {
		t.Errorf("overhead on the calibration cluster %.3f, want its own %.3f", got, want)
	}
	quarter := *cal
	quarter.SharedCores, quarter.Cores = 0, 0.25
	want := 0.2 + j.ChainedSpanWait + 0.03*4 + 0.04*4
	if got := j.chainedOn(&quarter); math.Abs(got-want) > 1e-9 {
		t.Errorf("chained job on a quarter core a node %.3f s, want %.3f", got, want)
	}
	ssd := *cal
	ssd.Devices = []Device{{Name: "d", Params: media.Params{Latency: 50 * time.Microsecond}}}
	ssd.Volumes, ssd.LocalDirs = []string{"d"}, []string{"d"}
	want = 0.2 + j.ChainedSpanWait*ssd.hdfsRequestTime()/j.OverheadRequest + 0.03*stretch2 + 0.04
	if got := j.chainedOn(&ssd); math.Abs(got-want) > 1e-9 || got >= 0.5 {
		t.Errorf("chained job on an SSD %.3f s, want %.3f", got, want)
	}
	if got := j.overheadOn(&ssd); got < j.OverheadFixed+j.chainedOn(&ssd)-1e-9 || got > j.Overhead+1e-9 {
		t.Errorf("overhead on an SSD %.3f, want the fixed part and the chained job's (%.3f) to %.3f", got, j.OverheadFixed+j.chainedOn(&ssd), j.Overhead)
	}
}

// A running attempt's CPU per second is the least any job's attempts
// showed per task second; the rest of each job's is per byte, and a
// phase predicted longer carries more of it.
func TestTaskBackground(t *testing.T) {
	jobs := []Job{
		{Bytes: 1e9, mapCPUSecs: 2.0, mapTaskSecs: 10, redCPUSecs: 1.0, redTaskSecs: 5}, // 0.2 per task second
		{Bytes: 1e6, mapCPUSecs: 0.3, mapTaskSecs: 6, redCPUSecs: 0, redTaskSecs: 0},    // the least: 0.05
	}
	cl1 := &Cluster{Nodes: 1}
	background(jobs, []source{{cl: cl1}, {cl: cl1}})
	for i, want := range [][2]float64{{(2.0 - 0.5) / 1e9, (1.0 - 0.25) / 1e9}, {0, 0}} {
		j := jobs[i]
		if math.Abs(j.TaskCPUPerSecond-0.05) > 1e-12 || math.Abs(j.MapCPU-want[0]) > 1e-18 || math.Abs(j.ReduceCPU-want[1]) > 1e-18 {
			t.Errorf("job %d: %.4f per task second, map %.3g and reduce %.3g per byte; want 0.05, %.3g, %.3g",
				i, j.TaskCPUPerSecond, j.MapCPU, j.ReduceCPU, want[0], want[1])
		}
	}
	// Predicted on a cluster where CPU bounds the map phase, the per
	// second part adds the phase's length times the node's running tasks.
	_, w := calibration(t)
	cl := *w.Calibration
	cl.SharedCores, cl.Cores = 0, 0.3
	var j *Job
	for i := range w.Jobs {
		if w.Jobs[i].Name == "terasort" {
			j = &w.Jobs[i]
		}
	}
	base := predictOn(t, w, &cl)
	j.TaskCPUPerSecond += 0.01
	more := predictOn(t, w, &cl)
	var b, m float64
	for k := range base.Jobs {
		if base.Jobs[k].Name == "terasort" {
			b, m = base.Jobs[k].Phases.Map, more.Jobs[k].Phases.Map
		}
	}
	if !(m > b) {
		t.Errorf("a higher CPU per task second left the CPU-bound map phase at %.3f s (was %.3f)", m, b)
	}
}

// On hosts the nodes' daemons are their DataNodes and TaskTrackers; the
// masters and the client are not a node's. In one process, it is all.
func TestNodeDaemonCPU(t *testing.T) {
	cpu := func(name string, s float64) experiment.DaemonCPU {
		return experiment.DaemonCPU{Name: name, CPUSeconds: experiment.CPUSeconds{User: s / 2, System: s / 2}}
	}
	hosts := []experiment.DaemonCPU{cpu("this process: the job client", 0.13), cpu("namenode", 0.02), cpu("jobtracker", 0.02),
		cpu("datanode dn0", 0.06), cpu("tasktracker dn0", 0.09), cpu("datanode dn1", 0.07), cpu("tasktracker dn1", 0.07)}
	if got := nodeDaemonCPU(hosts); math.Abs(got-0.29) > 1e-9 {
		t.Errorf("hosts: %.3f CPU s, want 0.29", got)
	}
	one := []experiment.DaemonCPU{cpu("this process: NameNode, DataNodes, JobTracker, TaskTrackers and the job client", 0.8)}
	if got := nodeDaemonCPU(one); math.Abs(got-0.8) > 1e-9 {
		t.Errorf("one process: %.3f CPU s, want 0.8", got)
	}
}

// A pipeline's middle nodes forward its block: with three nodes and
// three replicas each other block passes through a node half the time.
func TestBusiestForwards(t *testing.T) {
	// The largest of three binomial(2, 1/2): 1 - (1/4)^3 + 1 - (3/4)^3.
	if got, want := busiestForwards(3, 1, 3, 3), 2-1.0/64-27.0/64; math.Abs(got-want) > 1e-9 {
		t.Errorf("3 blocks, 3 nodes, replication 3: %.4f forwards, want %.4f", got, want)
	}
	if got := busiestForwards(10, 2, 2, 5); got != 0 {
		t.Errorf("replication 2 forwards nothing: %.3f", got)
	}
	if got := busiestForwards(1, 1, 3, 3); got != 0 {
		t.Errorf("a node's own block only: %.3f", got)
	}
}

// A phase's time no resource explains keeps the workload's least and
// scales the rest with the HDFS request time: a tiny reduce's output
// file took 0.14 s on the HDDs and 0.02 s on SSDs.
func TestFixedOnOtherDevices(t *testing.T) {
	dev := func(lat, seek time.Duration) *Cluster {
		return &Cluster{Volumes: []string{"d"}, Devices: []Device{{Name: "d", Params: media.Params{Latency: lat, Seek: seek}}}}
	}
	hdd, ssd := dev(200*time.Microsecond, 12500*time.Microsecond), dev(100*time.Microsecond, 0)
	j := &Job{OverheadRequest: hdd.hdfsRequestTime()}
	f := Fit{Scale: 1, Alpha: 1, Fixed: 0.126, FixedFloor: 0.016}
	if got := f.on(hdd, j).Fixed; math.Abs(got-0.126) > 1e-12 {
		t.Errorf("on the calibration's devices: %.4f, want 0.126", got)
	}
	if got, want := f.on(ssd, j).Fixed, 0.016+0.11*0.1/12.7; math.Abs(got-want) > 1e-9 {
		t.Errorf("on an SSD: %.4f, want %.4f", got, want)
	}
	if got := (Fit{Fixed: 0.1}).on(ssd, &Job{}).Fixed; got != 0.1 {
		t.Errorf("without the calibration's request time: %.4f, want 0.1", got)
	}
	// Calibration sets each phase's floor: the least Fixed of any job.
	_, w := calibration(t)
	least := math.Inf(1)
	for _, j := range w.Jobs {
		if f := j.Fit[PhaseReduce]; f.Fixed > 0 {
			least = math.Min(least, f.Fixed)
		}
	}
	for _, j := range w.Jobs {
		if f := j.Fit[PhaseReduce]; f.Fixed > 0 && f.FixedFloor != least {
			t.Errorf("%s: reduce floor %.4f, want %.4f", j.Name, f.FixedFloor, least)
		}
	}
}

// A slower CPU never predicts a faster job, however slow: the CPU per
// second of what waits is capped, so each phase's length converges.
func TestSlowerCPUIsNeverFaster(t *testing.T) {
	_, w := calibration(t)
	prev := 0.0
	for _, speed := range []float64{1, 0.5, 0.2, 0.12, 0.1, 0.05, 0.01} {
		cl := *w.Calibration
		cl.Speed = speed
		p := predictOn(t, w, &cl)
		if p.Runtime < prev*(1-1e-9) || math.IsNaN(p.Runtime) || math.IsInf(p.Runtime, 0) {
			t.Errorf("speed %g: runtime %.2f s, below %.2f s at a faster CPU", speed, p.Runtime, prev)
		}
		prev = p.Runtime
	}
}

// -fill refuses a budget that buys an absurd cluster.
func TestAdviseFillBound(t *testing.T) {
	_, w := calibration(t)
	c := *w.Calibration
	c.Name, c.Price = "c", 1000
	if _, err := Advise(w, []*Cluster{&c}, 3, 0.1, Budget{Dollars: 1e300, Fill: true}); err == nil || !strings.Contains(err.Error(), "more than the 100000") {
		t.Errorf("a budget of 1e300: %v", err)
	}
}

// A case's repeats become one run whose every job is its median repeat,
// each job picked on its own, and repeats of other jobs are refused.
func TestMedianRun(t *testing.T) {
	var reps []*experiment.Results
	for _, scale := range []float64{1, 3, 2} {
		res, err := experiment.ReadResults("testdata/calibration-results.json")
		if err != nil {
			t.Fatal(err)
		}
		for i := range res.Profiles[0].Runs[0].Jobs {
			ja := &res.Profiles[0].Runs[0].Jobs[i]
			if ja.Step == "terasort" {
				ja.Seconds *= 4 - scale // 3, 1, 2: the median is the third repeat
			} else {
				ja.Seconds *= scale // 1, 3, 2: the median is the third repeat too
			}
			ja.JobID = fmt.Sprintf("repeat-%g", scale)
		}
		reps = append(reps, res)
	}
	reps[0].Profiles[0].Runs[0].Jobs[0].JobID = "first" // teragen 1x
	m, err := MedianRun(reps, ByTime)
	if err != nil {
		t.Fatal(err)
	}
	for _, ja := range m.Profiles[0].Runs[0].Jobs {
		if ja.JobID != "repeat-2" {
			t.Errorf("%s: the median is %s, want repeat-2", ja.Step, ja.JobID)
		}
	}
	if reps[0].Profiles[0].Runs[0].Jobs[0].JobID != "first" {
		t.Error("MedianRun changed its first repeat")
	}
	least, err := LeastRun(reps, ByTime)
	if err != nil || least.Profiles[0].Runs[0].Jobs[0].JobID != "first" || least.Profiles[0].Runs[0].Jobs[1].JobID != "repeat-3" {
		t.Errorf("the least repeats: %v", err)
	}
	one, err := MedianRun(reps[:1], ByTime)
	if err != nil || one.Profiles[0].Runs[0].Jobs[0].JobID != "first" {
		t.Errorf("one repeat: %v", err)
	}
	// TestDFSIO runs in the same places but of other files, or a repeat
	// that did not account one: refused.
	for i, r := range reps {
		r.DFSIO = []experiment.DFSIOResult{{Profile: r.Profiles[0].Name, Op: "write", Replication: 3, Files: 3,
			Accounting: &experiment.JobAccounting{Step: "dfsio-write", Seconds: float64(i)}}}
	}
	if m, err := MedianRun(reps, ByTime); err != nil || m.DFSIO[0].Accounting.Seconds != 1 {
		t.Errorf("TestDFSIO's median: %v", err)
	}
	reps[2].DFSIO[0].Files = 6
	if _, err := MedianRun(reps, ByTime); err == nil {
		t.Error("repeats of TestDFSIO over other files: no error")
	}
	reps[2].DFSIO[0].Files, reps[2].DFSIO[0].Accounting = 3, nil
	if _, err := MedianRun(reps, ByTime); err == nil {
		t.Error("a repeat without TestDFSIO's accounting: no error")
	}
	reps[1].Profiles[0].Runs[0].Jobs = reps[1].Profiles[0].Runs[0].Jobs[:2]
	if _, err := MedianRun(reps, ByTime); err == nil {
		t.Error("repeats of different jobs: no error")
	}
}

// A map's start-up is apart from its work: calibration still reproduces
// its run, the start-up's CPU leaves the CPU per byte, and where six
// children start on two cores, or one on a quarter core, it takes longer.
func TestTaskStart(t *testing.T) {
	res, err := experiment.ReadResults("testdata/calibration-results.json")
	if err != nil {
		t.Fatal(err)
	}
	_, plain := calibration(t)
	for i := range res.Profiles[0].Runs[0].Jobs {
		for k := range res.Profiles[0].Runs[0].Jobs[i].Attempts {
			if a := &res.Profiles[0].Runs[0].Jobs[i].Attempts[k]; a.Type == "map" {
				a.Ready, a.ReadyCPU = a.Start+0.1, 0.04
			}
		}
	}
	w, err := Calibrate(res, res.Profiles[0].Name)
	if err != nil {
		t.Fatal(err)
	}
	p := predictOn(t, w, w.Calibration)
	for k, ja := range res.Profiles[0].Runs[0].Jobs {
		want := Measured(&ja).Map + w.launchSpread(w.Calibration, w.Jobs[k].Maps) - w.Jobs[k].LaunchSpread
		if got := job(p, ja.Step).Phases.Map; math.Abs(got-want) > 1e-6 {
			t.Errorf("%s map: predicted %.4f, measured %.4f", ja.Step, got, want)
		}
	}
	ts, ts0 := &w.Jobs[1], &plain.Jobs[1]
	if ts.Name != "terasort" || ts.TaskStartCPU != 0.04 {
		t.Fatalf("%s: start-up CPU %g, want 0.04", ts.Name, ts.TaskStartCPU)
	}
	// Three nodes share two cores, one map each: the CPU takes 1.5x.
	if want := 0.1 - 0.04*1.5; math.Abs(ts.TaskStartWait-want) > 1e-9 {
		t.Errorf("start-up wait %.4f, want %.4f", ts.TaskStartWait, want)
	}
	if got, want := ts.mapCPUSecs, ts0.mapCPUSecs-3*0.04; math.Abs(got-want) > 1e-9 {
		t.Errorf("the maps' work took %.3f CPU s, want %.3f (%.3f without their start-up's)", got, want, ts0.mapCPUSecs)
	}
	six := *w.Calibration
	six.Nodes = 6
	quarter := *w.Calibration
	quarter.SharedCores, quarter.Cores = 0, 0.25
	for _, c := range []struct {
		cl   *Cluster
		want float64 // a map's start-up
	}{{w.Calibration, 0.1}, {&six, 0.04 + 0.04*3}, {&quarter, 0.04 + 0.04*4}} {
		s := ts.shape(c.cl, ts.Bytes, ts.Maps, ts.Reduces)
		if got := ts.startOn(c.cl, s); math.Abs(got-c.want) > 1e-9 {
			t.Errorf("%d nodes, %g cores: start-up %.4f s, want %.4f", c.cl.Nodes, c.cl.nodeCores(), got, c.want)
		}
	}
}

// The first maps start as their trackers heartbeat: calibration measures
// the spread of the first wave's starts and compares it with the range of
// independent heartbeat phases, (n−1)/(N+1) of the interval for the first
// n of N trackers; a prediction scales that range.
func TestLaunchSpread(t *testing.T) {
	at := func(node string, start float64) experiment.AttemptAccount {
		return experiment.AttemptAccount{Type: "map", State: "SUCCEEDED", Node: node, Start: start}
	}
	as := []experiment.AttemptAccount{at("a", 0), at("b", 0.05), at("c", 0.08), at("a", 1.2), {Type: "reduce", State: "SUCCEEDED", Node: "d", Start: 0.3}}
	if got := firstWaveSpread(as, 1); math.Abs(got-0.08) > 1e-12 {
		t.Errorf("spread %.3f, want 0.08 (the later wave is not a launch)", got)
	}
	if got := firstWaveSpread(as[:1], 1); got != 0 {
		t.Errorf("one node's spread %.3f, want 0", got)
	}
	three := &Cluster{Nodes: 3, MapSlots: 1}
	six := &Cluster{Nodes: 6, MapSlots: 1}
	for _, c := range []struct {
		cl   *Cluster
		maps int
		want float64
	}{{three, 3, 0.2 * 2 / 4}, {three, 30, 0.2 * 2 / 4}, {six, 6, 0.2 * 5 / 7}, {six, 3, 0.2 * 2 / 7}, {six, 1, 0}} {
		if got := heartbeatRange(c.cl, c.maps, 0.2); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%d nodes, %d maps: range %.4f, want %.4f", c.cl.Nodes, c.maps, got, c.want)
		}
	}
	_, w := calibration(t)
	if w.LaunchFactor <= 0 || w.LaunchFactor > 3 {
		t.Fatalf("launch factor %g", w.LaunchFactor)
	}
	slow := *w.Calibration
	slow.HeartbeatMs = 10 * w.Calibration.HeartbeatMs
	if a, b := w.launchSpread(w.Calibration, 3), w.launchSpread(&slow, 3); math.Abs(b-10*a) > 1e-12 || a <= 0 {
		t.Errorf("spread %.3f s at the calibration's heartbeat, %.3f s at ten times it", a, b)
	}
}

// Calibrated on repeats, a job's demands are its repeat of least CPU and
// its overhead its median over the repeats, which sets the fixed part.
func TestCalibrateRepeats(t *testing.T) {
	var reps []*experiment.Results
	for k, extra := range []float64{0, 0.3, 0.1} {
		res, err := experiment.ReadResults("testdata/calibration-results.json")
		if err != nil {
			t.Fatal(err)
		}
		for i := range res.Profiles[0].Runs[0].Jobs {
			ja := &res.Profiles[0].Runs[0].Jobs[i]
			ja.Seconds += extra // after the last attempt: overhead
			for a := range ja.Attempts {
				ja.Attempts[a].CPU.User += 0.01 * float64(k) // the first repeat has the least CPU
			}
		}
		reps = append(reps, res)
	}
	w, err := CalibrateRepeats([][]*experiment.Results{reps}, "")
	if err != nil {
		t.Fatal(err)
	}
	one, err := CalibrateRuns(reps[:1], "")
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Jobs) != len(one.Jobs) {
		t.Fatalf("%d jobs, %d from one repeat", len(w.Jobs), len(one.Jobs))
	}
	for i, j := range w.Jobs {
		o := one.Jobs[i]
		if math.Abs(j.Overhead-o.Overhead-0.1) > 1e-9 {
			t.Errorf("%s: overhead %.3f, want the median repeat's %.3f", j.Name, j.Overhead, o.Overhead+0.1)
		}
		if math.Abs(j.OverheadFixed-o.OverheadFixed-0.1) > 1e-9 {
			t.Errorf("%s: fixed overhead %.3f, want %.3f", j.Name, j.OverheadFixed, o.OverheadFixed+0.1)
		}
		if j.MapCPU != o.MapCPU || j.Bytes != o.Bytes {
			t.Errorf("%s: map CPU %g s/byte of %g bytes, the least-CPU repeat's %g of %g", j.Name, j.MapCPU, j.Bytes, o.MapCPU, o.Bytes)
		}
	}
}

// Calibrated on repeats, a job's fit aims at its phases' medians over
// the repeats, not at the least-CPU repeat's draw: repeats whose maps end
// 0.4 and 0.2 s later predict the calibration's map phase 0.2 s longer.
func TestCalibrateRepeatsTypicalPhases(t *testing.T) {
	var reps []*experiment.Results
	for k, later := range []float64{0, 0.4, 0.2} {
		res, err := experiment.ReadResults("testdata/calibration-results.json")
		if err != nil {
			t.Fatal(err)
		}
		for i := range res.Profiles[0].Runs[0].Jobs {
			ja := &res.Profiles[0].Runs[0].Jobs[i]
			ja.Seconds += later
			for a := range ja.Attempts {
				at := &ja.Attempts[a]
				at.CPU.User += 0.01 * float64(k) // the first repeat has the least CPU
				at.End += later
				if at.Type != "map" {
					at.Start += later
					at.Ready += later
					at.ShuffleFinish += later
				}
			}
		}
		reps = append(reps, res)
	}
	w, err := CalibrateRepeats([][]*experiment.Results{reps}, "")
	if err != nil {
		t.Fatal(err)
	}
	one, err := CalibrateRuns(reps[:1], "")
	if err != nil {
		t.Fatal(err)
	}
	pw, err := Predict(w, w.Calibration, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	po, err := Predict(one, one.Calibration, 3, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, j := range pw.Jobs {
		o := po.Jobs[i]
		if d := j.Phases.Map - o.Phases.Map; math.Abs(d-0.2) > 0.01 {
			t.Errorf("%s: map phase %.3f s, %.3f s from the least-CPU repeat alone: want 0.2 s more", j.Name, j.Phases.Map, o.Phases.Map)
		}
		if d := j.Phases.Reduce - o.Phases.Reduce; math.Abs(d) > 0.01 {
			t.Errorf("%s: reduce phase %.3f s, %.3f s from the least-CPU repeat alone", j.Name, j.Phases.Reduce, o.Phases.Reduce)
		}
	}
}

// A device-bound map phase shorter than its device's time hides part of
// the seeks, not a share of everything: mr9's TestDFSIO read, 32 MiB in
// 0.34 s on a device busy 0.51 s (0.19 s transfer, 0.32 s seeks), hides
// (0.51-0.34)/0.32 of the seeks; a phase as long as its device, or bound
// by another resource, hides none.
func TestHiddenSeek(t *testing.T) {
	const transfer, seeks = 0.19, 0.32
	j := &Job{}
	times := func(cpu float64) func() map[string]float64 {
		return func() map[string]float64 {
			return map[string]float64{"cpu": cpu, "device d": transfer + seeks*(1-j.HiddenSeek)}
		}
	}
	for _, tt := range []struct {
		name          string
		measured, cpu float64
		want          float64
	}{
		{"shorter than the device", 0.34, 0.05, (0.51 - 0.34) / seeks},
		{"as long as the device", 0.51, 0.05, 0},
		{"longer", 0.60, 0.05, 0},
		{"the cpu longer than measured", 0.30, 0.40, (0.51 - 0.40) / seeks},
		{"shorter than the transfer", 0.10, 0.05, 1},
		{"bound by the cpu", 0.30, 0.60, 0},
	} {
		j.HiddenSeek = 0.7 // left by an earlier fit: recomputed
		if got := hiddenSeek(j, tt.measured, times(tt.cpu)); math.Abs(got-tt.want) > 1e-9 {
			t.Errorf("%s: hidden %.4f, want %.4f", tt.name, got, tt.want)
		}
	}
}
