package experiment

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
	"github.com/stratafs/strata/internal/media"
	"github.com/stratafs/strata/internal/taskrun"
)

// TestMain makes the test binary a task runner too: the embedded
// TaskTrackers run their attempts as `<this binary> task`.
func TestMain(m *testing.M) {
	if len(os.Args) == 2 && os.Args[1] == "task" {
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		code := taskrun.Main(ctx, os.Stdin, os.Stdout)
		stop()
		os.Exit(code)
	}
	os.Exit(m.Run())
}

// TestRunTiny runs a whole experiment at a tiny size: two profiles (one
// with RAM-preset devices), TeraGen/TeraSort/TeraValidate and a small
// TestDFSIO sweep, and checks the tables and files a user gets.
func TestRunTiny(t *testing.T) {
	dir := t.TempDir()
	plain, err := ParseProfile(strings.NewReader("name = plain\ndevice.d = none\nhdfs.volumes = [DISK]d\nmapred.local.dir = d\nprice = 1000\nwatts = 100\n"), "plain")
	if err != nil {
		t.Fatal(err)
	}
	ram, err := ParseProfile(strings.NewReader("name = ramdisk\ndevice.hdd = nvme\ndevice.mem = ram\nhdfs.volumes = [DISK]hdd,[RAM_DISK]mem\nmapred.local.dir = mem\nprice = 2000\nwatts = 200\npaper.speedup = 1.4\n"), "ramdisk")
	if err != nil {
		t.Fatal(err)
	}
	c := conf.New()
	c.Set("dfs.blocksize", "1m")
	var progress bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	res, err := Run(ctx, Options{Profiles: []*Profile{plain, ram}, Rows: 3000, Repetitions: 1, Validate: true, DataNodes: 2,
		MapSlots: 1, ReduceSlots: 1, Media: true, WorkDir: filepath.Join(dir, "work"), LogDir: filepath.Join(dir, "logs"),
		Conf: c, Years: 3, KWhPrice: 0.1, DFSIOFiles: []int{2}, DFSIOReplications: []int{2}, DFSIOTotal: 256 << 10,
		Progress: NewProgress(&progress)})
	if err != nil {
		t.Fatalf("%v\nprogress:\n%s", err, progress.String())
	}
	if media.Enabled() {
		t.Error("media emulation still on after the experiment")
	}
	if len(res.Profiles) != 2 || len(res.Costs) != 2 || len(res.DFSIO) != 2*2 { // write and read per profile
		t.Fatalf("results: %d profiles, %d costs, %d TestDFSIO runs", len(res.Profiles), len(res.Costs), len(res.DFSIO))
	}
	for _, p := range res.Profiles {
		if len(p.Runs) != 1 || p.TeraGen <= 0 || p.TeraSort <= 0 || p.TeraValidate <= 0 || p.Total != p.TeraGen+p.TeraSort {
			t.Errorf("%s: runtimes %+v", p.Name, p)
		}
	}
	if res.Profiles[1].Media != "hdd=nvme, mem=ram" || res.Profiles[0].Media != "" {
		t.Errorf("media descriptions %q %q", res.Profiles[0].Media, res.Profiles[1].Media)
	}
	for _, d := range res.DFSIO {
		if d.Aggregate <= 0 || d.Throughput <= 0 || d.Replication != 2 {
			t.Errorf("TestDFSIO %+v", d)
		}
	}
	// The progress display has a line per phase.
	for _, w := range []string{"[1/2] plain", "[2/2] ramdisk", "ramdisk rep 1/1 teravalidate: ", "plain TestDFSIO -read -nrFiles 2"} {
		if !strings.Contains(progress.String(), w) {
			t.Errorf("progress lacks %q:\n%s", w, progress.String())
		}
	}
	for _, p := range res.Profiles {
		checkAccounting(t, p, 2, 3000)
	}
	var tables bytes.Buffer
	res.PrintTables(&tables)
	for _, w := range []string{"(Table 4)", "(Table 5)", "(Table 7)", "Energy per job", "TestDFSIO", "1.4x", "TeraSort's CPU", "TeraSort's phases", "Emulated devices during TeraSort"} {
		if !strings.Contains(tables.String(), w) {
			t.Errorf("tables lack %q:\n%s", w, tables.String())
		}
	}
	writeFiles(t, res, filepath.Join(dir, "out"), "results.json runtimes.csv tco.csv dfsio.csv runtime.svg cost-per-job.svg energy-per-job.svg dfsio-write-r2.svg dfsio-read-r2.svg timeline-plain.svg timeline-ramdisk.svg index.html")
	page, _ := os.ReadFile(filepath.Join(dir, "out", ReportFile))
	checkReport(t, res, string(page))
	// results.json reads back for `strata tco --from`.
	back, err := ReadResults(filepath.Join(dir, "out", "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	if in := back.CostInputs(); len(in) != 2 || in[1].Runtime != res.Profiles[1].Total || in[1].Price != 2000 {
		t.Errorf("cost inputs from results.json: %+v", in)
	}
	b, _ := os.ReadFile(filepath.Join(dir, "out", "runtimes.csv"))
	if lines := strings.Split(strings.TrimSpace(string(b)), "\n"); len(lines) != 5 || !strings.HasPrefix(lines[0], "profile,repetition,teragen_s") || !strings.HasPrefix(lines[2], "plain,mean,") {
		t.Errorf("runtimes.csv:\n%s", b)
	}
	svg, _ := os.ReadFile(filepath.Join(dir, "out", "runtime.svg"))
	if n := len(bars(t, svg)); n != 6 {
		t.Errorf("runtime.svg has %d bars, want 6", n)
	}
	tl, _ := os.ReadFile(filepath.Join(dir, "out", "timeline-plain.svg"))
	if n, want := strings.Count(string(tl), `class="phase"`), len(res.Profiles[0].Runs[0].Job("terasort").Attempts); n < want {
		t.Errorf("timeline-plain.svg has %d phase rects for %d attempts", n, want)
	}
	var raw map[string]any
	b, _ = os.ReadFile(filepath.Join(dir, "out", "results.json"))
	if err := json.Unmarshal(b, &raw); err != nil || raw["teragen_rows"] != float64(3000) {
		t.Errorf("results.json: %v %v", err, raw["teragen_rows"])
	}
	// The clusters' storage is gone.
	if ents, _ := os.ReadDir(filepath.Join(dir, "work")); len(ents) != 0 {
		t.Errorf("work dir not cleaned: %v", ents)
	}
}

// TestScaling: the paper's DataNode (12 threads) gets its 12 map and 6
// reduce slots back; this machine's share is at least one of each; the
// sort buffer keeps the paper's data-to-memory ratio.
func TestScaling(t *testing.T) {
	for _, tc := range []struct{ cpus, nodes, maps, reduces int }{{12, 1, 12, 6}, {72, 6, 12, 6}, {2, 3, 1, 1}, {8, 2, 4, 2}} {
		if m, r := ScaledSlots(tc.cpus, tc.nodes); m != tc.maps || r != tc.reduces {
			t.Errorf("ScaledSlots(%d, %d) = %d, %d; want %d, %d", tc.cpus, tc.nodes, m, r, tc.maps, tc.reduces)
		}
	}
	// 1 TB over 36 reduces is ≈ 28 GB each, 80 × the paper's ≈ 358 MB.
	if got := ScaledSortMB(int64(1e12) / 36); got < 300 || got > 380 {
		t.Errorf("ScaledSortMB(1 TB / 36) = %d", got)
	}
	if got := ScaledSortMB(terasortMapBytes(5_000_000, 3, 128<<20)); got != 2 {
		t.Errorf("ScaledSortMB for 500 MB in 3 files of two 128 MiB blocks = %d, want 2", got)
	}
	if got, want := terasortMapBytes(5_000_000, 3, 128<<20), int64(128<<20); got != want {
		t.Errorf("map input %d, want a block, %d", got, want)
	}
	if got := terasortMapBytes(1_000_000, 3, 128<<20); got != 33_333_333 {
		t.Errorf("map input %d, want a whole 33 MB file", got)
	}
}

// Bad cost inputs are refused before any cluster runs, not after the
// runs they would have thrown away.
func TestBadCostInputsRefusedFirst(t *testing.T) {
	p, err := ParseProfile(strings.NewReader("name = plain\ndevice.d = none\nhdfs.volumes = d\nmapred.local.dir = d\n"), "plain")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	work := filepath.Join(dir, "work")
	for _, o := range []Options{{Years: -1, KWhPrice: 0.1}, {Years: 3, KWhPrice: -0.1}} {
		o.Profiles, o.Rows, o.WorkDir, o.LogDir = []*Profile{p}, 1000, work, filepath.Join(dir, "logs")
		if _, err := Run(context.Background(), o); err == nil || !strings.Contains(err.Error(), "tco:") {
			t.Errorf("years %v, kWh price %v: error %v, want the cost arithmetic's", o.Years, o.KWhPrice, err)
		}
		if _, err := os.Stat(work); !os.IsNotExist(err) {
			t.Errorf("a cluster was built (%s: %v)", work, err)
		}
	}
}
