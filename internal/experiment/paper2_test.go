package experiment

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stratafs/strata/conf"
)

// paper2Fixture is a run's results as RunPaper2 returns them: two
// profiles, TestDFSIO at 1 and 4 files, the jobs at replication 2 and the
// gateways with FUSE skipped.
func paper2Fixture() *Results {
	r := &Results{DataNodes: 4, MapSlots: 1, ReduceSlots: 1,
		Profiles: []ProfileResult{{Name: "sata"}, {Name: "ssd"}}}
	add := func(p, op string, rep, files int, throughput float64) {
		r.DFSIO = append(r.DFSIO, DFSIOResult{Profile: p, Op: op, Replication: rep, Files: files, FileSizeMB: 8 / float64(files), Throughput: throughput})
	}
	add("sata", "write", 3, 1, 68.5)
	add("ssd", "write", 3, 1, 166)
	add("sata", "write", 3, 4, 10) // 4 files on 4 slots: 40 concurrent
	add("ssd", "write", 3, 4, 20)
	add("sata", "read", 2, 8, 10) // 8 files on 4 slots: 40
	r.Paper2 = &Paper2Results{Rows: 1000, TextBytes: 1 << 20, ShuffleBytes: 1 << 20, GatewayBytes: 10e6}
	for _, j := range []Paper2Job{{"sata", 2, "teragen", 4, nil}, {"ssd", 2, "teragen", 2, nil}, {"sata", 2, "shuffle", 3, nil}, {"ssd", 2, "shuffle", 1, nil}} {
		r.Paper2.Jobs = append(r.Paper2.Jobs, j)
	}
	r.Paper2.Gateways = []Paper2Gateway{
		{Profile: "sata", Way: "put", Replication: 3, Bytes: 10e6, Seconds: 2},
		{Profile: "sata", Way: "fuse", Replication: 3, Bytes: 10e6, Skipped: "FUSE is not available on this machine"},
		{Profile: "sata", Way: "nfs", Replication: 3, Bytes: 10e6, Seconds: 7.24},
	}
	return r
}

func findTable(t *testing.T, ts []Paper2Table, name string) Paper2Table {
	t.Helper()
	for _, x := range ts {
		if x.Name == name {
			return x
		}
	}
	t.Fatalf("no table %s", name)
	return Paper2Table{}
}

// cellOf is the cell of row (by first cell) and column (by header).
func cellOf(t *testing.T, tb Paper2Table, first, column string) string {
	t.Helper()
	c := slices.Index(tb.Header, column)
	if c < 0 {
		t.Fatalf("%s: no column %q in %q", tb.Name, column, tb.Header)
	}
	for _, row := range tb.Rows {
		if row[0] == first {
			return row[c]
		}
	}
	t.Fatalf("%s: no row %q", tb.Name, first)
	return ""
}

func TestPaper2Tables(t *testing.T) {
	r := paper2Fixture()
	ts := r.Paper2Tables()
	var names []string
	for _, x := range ts {
		names = append(names, x.Name)
		for _, row := range x.Rows {
			if len(row) != len(x.Header) {
				t.Errorf("%s: row %q has %d cells for %d columns", x.Name, row, len(row), len(x.Header))
			}
		}
	}
	if want := []string{"paper2-dfsio-write-r3", "paper2-dfsio-read-r2", "paper2-jobs-r2", "paper2-gateways"}; !slices.Equal(names, want) {
		t.Fatalf("tables %q, want %q", names, want)
	}

	w := findTable(t, ts, "paper2-dfsio-write-r3")
	if !strings.Contains(w.Title, "Figure 1") {
		t.Errorf("title %q", w.Title)
	}
	for _, c := range []struct{ row, col, want string }{
		{"1", "sata MB/s", "68.5"},
		{"1", "paper SATA", "685"},
		{"1", "strata/paper", "0.10x"}, // the first such column: sata's
		{"1", "ssd MB/s", "166.0"},
		{"1", "paper SSD", "830"},
		{"1", "ssd/sata", "2.42x"},
		{"1", "paper SSD/SATA", "1.21x"},
		{"4", "sata MB/s", "40.0"},
		{"4", "paper SATA", "-"}, // chart only
		{"4", "ssd/sata", "2.00x"},
		{"4", "MB/file", "2"},
	} {
		if got := cellOf(t, w, c.row, c.col); got != c.want {
			t.Errorf("write r3 files %s %s = %q, want %q", c.row, c.col, got, c.want)
		}
	}
	rd := findTable(t, ts, "paper2-dfsio-read-r2")
	if got := cellOf(t, rd, "8", "sata MB/s"); got != "40.0" { // capped at 4 slots
		t.Errorf("read r2 8 files: %q", got)
	}
	if got := cellOf(t, rd, "8", "ssd MB/s"); got != "-" {
		t.Errorf("read r2 8 files ssd: %q", got)
	}

	j := findTable(t, ts, "paper2-jobs-r2")
	if len(j.Rows) != 2 || cellOf(t, j, "teragen", "ssd speed-up") != "2.00x" || cellOf(t, j, "shuffle", "paper") != "chart only; fastest" {
		t.Errorf("jobs table %q", j.Rows)
	}
	if !strings.Contains(strings.Join(j.Notes, "\n"), "sata: fastest job shuffle (3.00 s), which agrees") {
		t.Errorf("jobs notes %q", j.Notes)
	}

	g := findTable(t, ts, "paper2-gateways")
	if got := g.Rows[2]; got[1] != "nfs" || got[4] != "3.62x" || got[7] != "3.62x" || got[8] != "1.00x" || got[3] != "1" {
		t.Errorf("nfs row %q", got)
	}
	if got := g.Rows[1]; got[2] != "skipped" || !strings.Contains(strings.Join(g.Notes, "\n"), "sata fuse skipped: FUSE is not available") {
		t.Errorf("fuse row %q notes %q", got, g.Notes)
	}

	var out bytes.Buffer
	r.PrintPaper2(&out)
	for _, want := range []string{"TestDFSIO write, replication 3: concurrent MB/s (paper's Figure 1)", "MapReduce jobs, replication 2: seconds (paper's Figure 5)",
		"put vs FUSE vs NFS", "0.10x"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("printed tables lack %q:\n%s", want, out.String())
		}
	}

	dir := t.TempDir()
	files, err := r.WritePaper2Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 4+2+2 { // 4 CSVs, 2 TestDFSIO charts, the jobs' and the gateways' charts
		t.Errorf("files %q", files)
	}
	f, err := os.Open(filepath.Join(dir, "paper2-gateways.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil || len(rows) != 4 || rows[0][0] != configHeader {
		t.Errorf("gateways.csv %q %v", rows, err)
	}
	svg, err := os.ReadFile(filepath.Join(dir, "paper2-dfsio-write-r3.svg"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`data-series="paper SATA" data-group="1 files" data-value="685"`, `data-series="sata" data-group="4 files" data-value="40"`} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("chart lacks %s", want)
		}
	}
	if strings.Contains(string(svg), `data-series="paper SATA" data-group="4 files"`) {
		t.Error("chart has a paper bar the paper does not state")
	}
}

func TestRunPaper2Options(t *testing.T) {
	p, err := LoadProfile("dfsio-12hdd")
	if err != nil {
		t.Fatal(err)
	}
	base := Options{Profiles: []*Profile{p}, DataNodes: 2, WorkDir: t.TempDir(), LogDir: t.TempDir(), DFSIOFiles: []int{1}, DFSIOReplications: []int{2}}
	withRows := base
	withRows.Rows = 10
	for _, c := range []struct {
		o    Paper2Options
		want string
	}{
		{Paper2Options{Options: withRows}, "Rows must be 0"},
		{Paper2Options{Options: base, Replications: []int{3}}, "replication 3 needs at least 3 DataNodes"},
		{Paper2Options{Options: base, GatewayBytes: -1}, "negative sizes"},
	} {
		if _, err := RunPaper2(context.Background(), c.o); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("RunPaper2: %v, want %q", err, c.want)
		}
	}
}

// TestRunPaper2Tiny runs the second paper's three parts at tiny sizes on
// two DataNodes: TestDFSIO, the five jobs and the gateway writes through
// the real put, FUSE mount (where the machine has FUSE) and NFS gateway.
func TestRunPaper2Tiny(t *testing.T) {
	dir := t.TempDir()
	disk, err := ParseProfile(strings.NewReader("name = disk\ndevice.d0 = none\ndevice.d1 = none\nhdfs.volumes = [DISK]d0,[DISK]d1\nmapred.local.dir = d0,d1\n"), "disk")
	if err != nil {
		t.Fatal(err)
	}
	ssd, err := ParseProfile(strings.NewReader("name = ssd\ndevice.s = sata-ssd\ndevice.d = none\nhdfs.volumes = [DISK]s\nmapred.local.dir = d\n"), "ssd")
	if err != nil {
		t.Fatal(err)
	}
	c := conf.New()
	c.Set("dfs.blocksize", "1m")
	var progress bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	res, err := RunPaper2(ctx, Paper2Options{Options: Options{Profiles: []*Profile{disk, ssd}, DataNodes: 2, MapSlots: 1, ReduceSlots: 1, Media: true,
		WorkDir: filepath.Join(dir, "work"), LogDir: filepath.Join(dir, "logs"), Conf: c,
		DFSIOFiles: []int{1, 2}, DFSIOReplications: []int{2}, DFSIOTotal: 512 << 10, Progress: NewProgress(&progress)},
		TeraRows: 2000, TextBytes: 200 << 10, ShuffleBytes: 200 << 10, GatewayBytes: 3<<20 + 12345})
	if err != nil {
		t.Fatalf("%v\nprogress:\n%s", err, progress.String())
	}
	if len(res.DFSIO) != 2*2*2 {
		t.Errorf("%d TestDFSIO runs", len(res.DFSIO))
	}
	if len(res.Paper2.Jobs) != 2*len(paper2JobNames) {
		t.Errorf("jobs %+v", res.Paper2.Jobs)
	}
	for _, j := range res.Paper2.Jobs {
		if j.Seconds <= 0 || j.Replication != 2 || !slices.Contains(paper2JobNames, j.Job) {
			t.Errorf("job %+v", j)
		}
	}
	_, fuseErr := os.Stat("/dev/fuse")
	if len(res.Paper2.Gateways) != 2*3 {
		t.Fatalf("gateways %+v", res.Paper2.Gateways)
	}
	for _, g := range res.Paper2.Gateways {
		switch {
		case g.Way == "fuse" && fuseErr != nil:
			if !strings.Contains(g.Skipped, "FUSE is not available") {
				t.Errorf("fuse without /dev/fuse: %+v", g)
			}
		case g.Skipped != "":
			// A machine with /dev/fuse that may not mount says why.
			t.Logf("%s %s skipped: %s", g.Profile, g.Way, g.Skipped)
		case g.Seconds <= 0 || g.Bytes != 3<<20+12345 || g.Replication != 2:
			t.Errorf("gateway %+v", g)
		}
	}
	var out bytes.Buffer
	res.PrintPaper2(&out)
	for _, want := range []string{"paper's Figure 3", "paper's Figure 4", "paper's Figure 5", "put vs FUSE vs NFS"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("tables lack %q:\n%s", want, out.String())
		}
	}
	if _, err := res.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	if _, err := res.WritePaper2Files(dir); err != nil {
		t.Fatal(err)
	}
	back, err := ReadResults(filepath.Join(dir, "results.json"))
	if err != nil || back.Paper2 == nil || len(back.Paper2.Gateways) != 6 {
		t.Fatalf("results.json: %v %+v", err, back)
	}
	for _, f := range []string{"paper2-jobs-r2.svg", "paper2-gateways.csv", "paper2-dfsio-write-r2.csv"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}
