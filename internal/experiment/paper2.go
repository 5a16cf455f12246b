package experiment

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"

	"github.com/stratafs/strata/fs"
	"github.com/stratafs/strata/internal/examples"
	"github.com/stratafs/strata/mapreduce"
)

// The second paper is a white paper on HDFS and MapReduce over SATA disks
// and an SSD ("HDFS & MapReduce 异构存储性能测试白皮书", 2016): four
// DataNodes (2× E5-2660 v3, 128 GB, 10 GbE), each with twelve 4 TB 7,200
// rpm SATA disks, and in its SSD runs a 1 TB SSD as well. Its text gives
// the following values; its Figures 1–6 are charts, and the copy these
// were read from has their captions only, so a chart's bars beyond what
// the text states are not recorded here (docs/EXPERIMENTS.md).

// Paper roles: the profile playing the paper's SATA cluster is the first
// of the run's profiles, its SSD cluster the second.
const (
	paper2SATA = "SATA"
	paper2SSD  = "SSD"
)

// paper2DFSIOKey is one bar of Figures 1–4.
type paper2DFSIOKey struct {
	op          string
	replication int
	files       int
	role        string
}

// paper2DFSIO are the TestDFSIO values the paper's text states: 240 GB in
// all over N = 1, 3, 6, 12, 48 files, one map per file, and for one map
// the "concurrent throughput" (并发吞吐率) of each cluster. The bars of
// 3–48 files are in the charts only.
var paper2DFSIO = map[paper2DFSIOKey]float64{
	// Figure 1: TestDFSIO write, replication 3.
	{"write", 3, 1, paper2SATA}: 685,
	{"write", 3, 1, paper2SSD}:  830,
	// Figure 2: TestDFSIO read, replication 3.
	{"read", 3, 1, paper2SATA}: 501,
	{"read", 3, 1, paper2SSD}:  3625,
	// Figure 3: TestDFSIO write, replication 2.
	{"write", 2, 1, paper2SATA}: 587,
	{"write", 2, 1, paper2SSD}:  638,
	// Figure 4: TestDFSIO read, replication 2.
	{"read", 2, 1, paper2SATA}: 295,
	{"read", 2, 1, paper2SSD}:  2379,
}

// paper2DFSIOFigure names the figure of a TestDFSIO operation and
// replication.
func paper2DFSIOFigure(op string, replication int) string {
	switch {
	case op == "write" && replication == 3:
		return "Figure 1"
	case op == "read" && replication == 3:
		return "Figure 2"
	case op == "write" && replication == 2:
		return "Figure 3"
	case op == "read" && replication == 2:
		return "Figure 4"
	}
	return "no figure"
}

// paper2JobNames are the MapReduce jobs of Figures 5 (replication 2) and
// 6 (replication 3), in the paper's order. The charts' values are not in
// the text; it concludes only that the shuffle job took the least time.
var paper2JobNames = []string{"teragen", "terasort", "teravalidate", "wordcount", "shuffle"}

// paper2ShortestJob is the job the paper's conclusion names the fastest
// in Figures 5 and 6.
const paper2ShortestJob = "shuffle"

// paper2Gateway is one row of the paper's put / FUSE / NFS table: one
// file of "10G" (taken as 10 GiB) written into HDFS each way; the paper
// gives no reads.
type paper2Gateway struct {
	way     string
	seconds float64
}

const paper2GatewayBytes = 10 << 30

var paper2Gateways = []paper2Gateway{
	{"put", 32.639},  // hdfs-put        0m32.639s
	{"fuse", 77.294}, // hdfs-fuse       1m17.294s
	{"nfs", 118.294}, // hdfs-nfsgateway 1m58.294s
}

// Defaults of the second paper's run, scaled to finish in minutes on a
// small machine (docs/EXPERIMENTS.md).
const (
	DefaultPaper2DataNodes  = 4
	DefaultPaper2DFSIOTotal = 192 << 20
	DefaultPaper2Rows       = 500_000
	DefaultPaper2TextBytes  = 48 << 20
	DefaultPaper2Shuffle    = 48 << 20
	DefaultPaper2Gateway    = 128 << 20
)

// DefaultPaper2Profiles are the paper's two clusters, SATA first.
var DefaultPaper2Profiles = []string{"dfsio-12hdd", "dfsio-ssd"}

// Paper2Options configure the second paper's run. Options are the
// clusters' settings and the TestDFSIO sweep (Figures 1–4); its Rows must
// be 0 (the TeraSort of the first paper is not part of it).
type Paper2Options struct {
	Options
	// Replications are the jobs' replication factors (Figures 5 and 6);
	// empty means Options.DFSIOReplications.
	Replications []int
	// TeraRows are TeraGen's rows; TextBytes the text wordcount counts;
	// ShuffleBytes what the shuffle job moves. 0 skips the job(s).
	TeraRows                uint64
	TextBytes, ShuffleBytes int64
	// GatewayBytes is the file written by put, FUSE and NFS; 0 skips them.
	GatewayBytes int64
}

// Paper2Results are the second paper's jobs and gateway writes; its
// TestDFSIO runs are Results.DFSIO.
type Paper2Results struct {
	Rows         uint64          `json:"teragen_rows"`
	TextBytes    int64           `json:"wordcount_bytes"`
	ShuffleBytes int64           `json:"shuffle_bytes"`
	GatewayBytes int64           `json:"gateway_bytes"`
	Jobs         []Paper2Job     `json:"jobs,omitempty"`
	Gateways     []Paper2Gateway `json:"gateways,omitempty"`
}

// Paper2Job is one job's wall time and accounting (counters, task
// attempts, devices: accounting.go).
type Paper2Job struct {
	Profile     string         `json:"profile"`
	Replication int            `json:"replication"`
	Job         string         `json:"job"`
	Seconds     float64        `json:"seconds"`
	Accounting  *JobAccounting `json:"accounting,omitempty"`
}

// Paper2Gateway is one file written into HDFS one way; Skipped, if set,
// says why it was not.
type Paper2Gateway struct {
	Profile     string  `json:"profile"`
	Way         string  `json:"way"`
	Replication int     `json:"replication"`
	Bytes       int64   `json:"bytes"`
	Seconds     float64 `json:"seconds,omitempty"`
	Skipped     string  `json:"skipped,omitempty"`
}

// RunPaper2 runs the second paper's three parts on each profile's
// cluster: the TestDFSIO sweep, the five jobs at each replication, and
// one file written by put, FUSE and NFS.
func RunPaper2(ctx context.Context, po Paper2Options) (*Results, error) {
	o := po.Options
	if o.Rows != 0 {
		return nil, errors.New("experiment: the second paper's run has no TeraSort of the first paper (Rows must be 0)")
	}
	if len(po.Replications) == 0 {
		po.Replications = o.DFSIOReplications
		if len(po.Replications) == 0 {
			po.Replications = DefaultDFSIOReplications
		}
	}
	nodes := o.DataNodes
	if nodes < 1 {
		nodes = DefaultDataNodes
	}
	for _, r := range po.Replications {
		if r < 1 || r > nodes {
			return nil, fmt.Errorf("experiment: replication %d needs at least %d DataNodes (have %d)", r, r, nodes)
		}
	}
	if po.TextBytes < 0 || po.ShuffleBytes < 0 || po.GatewayBytes < 0 {
		return nil, errors.New("experiment: negative sizes")
	}
	pr := &Paper2Results{Rows: po.TeraRows, TextBytes: po.TextBytes, ShuffleBytes: po.ShuffleBytes, GatewayBytes: po.GatewayBytes}
	src := ""
	o.AfterProfile = func(ctx context.Context, o *Options, p *Profile, env fs.Env) error {
		if po.TeraRows > 0 || po.TextBytes > 0 || po.ShuffleBytes > 0 {
			for _, r := range po.Replications {
				jobs, err := runPaper2Jobs(ctx, o, &po, p, env, r)
				if err != nil {
					return err
				}
				pr.Jobs = append(pr.Jobs, jobs...)
			}
		}
		if po.GatewayBytes > 0 {
			if src == "" {
				src = filepath.Join(o.WorkDir, "paper2-gateway-source")
				if err := writeRandomFile(src, po.GatewayBytes); err != nil {
					return err
				}
			}
			gws, err := runPaper2Gateways(ctx, o, p, env, src, po.GatewayBytes)
			if err != nil {
				return err
			}
			pr.Gateways = append(pr.Gateways, gws...)
		}
		return nil
	}
	res, err := Run(ctx, o)
	if src != "" {
		os.Remove(src)
	}
	if err != nil {
		return nil, err
	}
	res.Paper2 = pr
	return res, nil
}

// runPaper2Jobs runs Figures 5–6's jobs at replication r under
// /paper2/r<r> and removes their data.
func runPaper2Jobs(ctx context.Context, o *Options, po *Paper2Options, p *Profile, env fs.Env, r int) ([]Paper2Job, error) {
	c := env.Conf.Clone()
	c.Set("dfs.replication", strconv.Itoa(r))
	maps := o.MapSlots * o.DataNodes
	bs, err := c.GetBytes("dfs.blocksize")
	if err != nil {
		return nil, err
	}
	if !c.IsSet("mapreduce.task.io.sort.mb") && po.TeraRows > 0 {
		c.Set("mapreduce.task.io.sort.mb", strconv.Itoa(TeraSortMB(po.TeraRows, maps, bs)))
	}
	jenv := fs.Env{Conf: c, User: env.User}
	base := fmt.Sprintf("/paper2/r%d", r)
	type step struct {
		name, job string // name in the tables, registered job
		args      []string
		bytes     int64 // randomtextwriter's total, for the generators
		input     int64 // the job's input bytes, for the accounting
	}
	var steps []step
	if po.TeraRows > 0 {
		steps = append(steps,
			step{"teragen", "teragen", []string{strconv.FormatUint(po.TeraRows, 10), base + "/tera-in"}, 0, 0},
			step{"terasort", "terasort", []string{base + "/tera-in", base + "/tera-out"}, 0, int64(po.TeraRows) * 100},
			step{"teravalidate", "teravalidate", []string{base + "/tera-out", base + "/tera-report"}, 0, int64(po.TeraRows) * 100})
	}
	if po.TextBytes > 0 {
		steps = append(steps,
			step{"textgen", paper2TextGenJob, []string{base + "/text"}, po.TextBytes, 0},
			step{"wordcount", "wordcount", []string{base + "/text", base + "/wordcount"}, 0, po.TextBytes})
	}
	if po.ShuffleBytes > 0 {
		steps = append(steps, step{"shuffle", paper2ShuffleJob, []string{base + "/shuffle"}, po.ShuffleBytes, 0})
	}
	var out []Paper2Job
	for _, s := range steps {
		run := func(w io.Writer) error {
			if cmd, ok := examples.Lookup(s.job); ok {
				return cmd.Run(ctx, jenv, s.args, w)
			}
			jc := c.Clone()
			jc.Set(keyRTWTotal, strconv.FormatInt(s.bytes, 10))
			// One wave of maps, none larger than a block.
			jc.Set(keyRTWPerMap, strconv.FormatInt(max(1, min(bs, (s.bytes+int64(maps)-1)/int64(maps))), 10))
			job, err := mapreduce.NewJob(s.job, s.args, jc)
			if err != nil {
				return err
			}
			_, err = mapreduce.Submit(ctx, job, fs.Env{Conf: jc, User: env.User}, w)
			return err
		}
		before := o.acct.begin(ctx)
		secs, err := timed(o, fmt.Sprintf("  %s %s (replication %d)", p.Name, s.name, r), fmt.Sprintf("%s-paper2-r%d-%s.log", p.Name, r, s.name), run)
		if err != nil {
			before.abandon()
			return nil, fmt.Errorf("%s: %w", s.name, err)
		}
		ja := o.acct.end(ctx, before, s.name, secs, s.input, c)
		// The generators' maps are capped at a block (above), and
		// wordcount reads the files they wrote.
		ja.BlockCapped = s.bytes > 0 || s.name == "wordcount"
		if s.name != "textgen" { // wordcount's input, not a job of the paper
			out = append(out, Paper2Job{Profile: p.Name, Replication: r, Job: s.name, Seconds: secs, Accounting: &ja})
		}
	}
	return out, removeTree(ctx, env, base)
}

// writeRandomFile writes n pseudo-random bytes to path.
func writeRandomFile(path string, n int64) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	buf := make([]byte, 1<<20)
	var x uint64 = 0x9e3779b97f4a7c15
	for left := n; left > 0; {
		for i := 0; i+8 <= len(buf); i += 8 {
			// xorshift64*: incompressible enough, and fast.
			x ^= x >> 12
			x ^= x << 25
			x ^= x >> 27
			v := x * 2685821657736338717
			buf[i], buf[i+1], buf[i+2], buf[i+3] = byte(v), byte(v>>8), byte(v>>16), byte(v>>24)
			buf[i+4], buf[i+5], buf[i+6], buf[i+7] = byte(v>>32), byte(v>>40), byte(v>>48), byte(v>>56)
		}
		k := min(left, int64(len(buf)))
		if _, err := f.Write(buf[:k]); err != nil {
			f.Close()
			return err
		}
		left -= k
	}
	return f.Close()
}

// Paper2Table is one of the second paper's tables with strata's values:
// a title, a header and rows of cells, plus notes printed below it.
// Name is the stem of its CSV file.
type Paper2Table struct {
	Name   string
	Title  string
	Header []string
	Rows   [][]string
	Notes  []string
}

// paper2Role is the paper's cluster a profile plays, by run order.
func paper2Role(i int) string {
	switch i {
	case 0:
		return paper2SATA
	case 1:
		return paper2SSD
	}
	return ""
}

// concurrentRate is the paper's "concurrent throughput" of a TestDFSIO
// run: Hadoop's per-map throughput times the maps that run at once (the
// files, at most the cluster's map slots).
func (r *Results) concurrentRate(d DFSIOResult) float64 {
	slots := r.MapSlots * r.DataNodes
	if slots < 1 {
		slots = d.Files
	}
	return d.Throughput * float64(min(d.Files, slots))
}

func cell(v float64, format string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) || v == 0 {
		return "-"
	}
	return fmt.Sprintf(format, v)
}

func ratioCell(a, b float64) string {
	if a == 0 || b == 0 || math.IsNaN(a) || math.IsNaN(b) {
		return "-"
	}
	return fmt.Sprintf("%.2fx", a/b)
}

// Paper2Tables are the second paper's tables for what was measured:
// Figures 1–4, 5–6 and the gateway writes.
func (r *Results) Paper2Tables() []Paper2Table {
	var out []Paper2Table
	for _, f := range []struct {
		op  string
		rep int
	}{{"write", 3}, {"read", 3}, {"write", 2}, {"read", 2}} {
		if t, ok := r.paper2DFSIOTable(f.op, f.rep); ok {
			out = append(out, t)
		}
	}
	if r.Paper2 == nil {
		return out
	}
	for _, rep := range []int{2, 3} {
		if t, ok := r.paper2JobTable(rep); ok {
			out = append(out, t)
		}
	}
	if t, ok := r.paper2GatewayTable(); ok {
		out = append(out, t)
	}
	return out
}

func (r *Results) paper2DFSIOTable(op string, rep int) (Paper2Table, bool) {
	names := r.profileNames()
	val := map[string]map[int]DFSIOResult{}
	var files []int
	for _, d := range r.DFSIO {
		if d.Op != op || d.Replication != rep {
			continue
		}
		if val[d.Profile] == nil {
			val[d.Profile] = map[int]DFSIOResult{}
		}
		val[d.Profile][d.Files] = d
		if !slices.Contains(files, d.Files) {
			files = append(files, d.Files)
		}
	}
	if len(files) == 0 {
		return Paper2Table{}, false
	}
	slices.Sort(files)
	t := Paper2Table{Name: fmt.Sprintf("paper2-dfsio-%s-r%d", op, rep),
		Title:  fmt.Sprintf("TestDFSIO %s, replication %d: concurrent MB/s (paper's %s)", op, rep, paper2DFSIOFigure(op, rep)),
		Header: []string{"files", "MB/file"}}
	for i, n := range names {
		t.Header = append(t.Header, n+" MB/s")
		if role := paper2Role(i); role != "" {
			t.Header = append(t.Header, "paper "+role, "strata/paper")
		}
	}
	if len(names) >= 2 {
		t.Header = append(t.Header, names[1]+"/"+names[0], "paper SSD/SATA")
	}
	for _, f := range files {
		row := []string{strconv.Itoa(f), "-"}
		rates := make([]float64, len(names))
		for i, n := range names {
			d, ok := val[n][f]
			if ok {
				rates[i] = r.concurrentRate(d)
				row[1] = trimFloat(math.Round(d.FileSizeMB*100) / 100)
			}
			row = append(row, cell(rates[i], "%.1f"))
			if role := paper2Role(i); role != "" {
				pv := paper2DFSIO[paper2DFSIOKey{op, rep, f, role}]
				row = append(row, cell(pv, "%.0f"), ratioCell(rates[i], pv))
			}
		}
		if len(names) >= 2 {
			row = append(row, ratioCell(rates[1], rates[0]),
				ratioCell(paper2DFSIO[paper2DFSIOKey{op, rep, f, paper2SSD}], paper2DFSIO[paper2DFSIOKey{op, rep, f, paper2SATA}]))
		}
		t.Rows = append(t.Rows, row)
	}
	t.Notes = append(t.Notes, "concurrent MB/s: Hadoop's per-map throughput x the maps running at once (files, at most the cluster's map slots); aggregate rates in dfsio.csv",
		"paper: 240 GB over 4 DataNodes of 12 SATA disks (+1 SSD); its text gives the 1-file bars only, the others are in the chart")
	return t, true
}

func (r *Results) paper2JobTable(rep int) (Paper2Table, bool) {
	names := r.profileNames()
	secs := map[[2]string]float64{}
	any := false
	for _, j := range r.Paper2.Jobs {
		if j.Replication == rep {
			secs[[2]string{j.Profile, j.Job}] = j.Seconds
			any = true
		}
	}
	if !any {
		return Paper2Table{}, false
	}
	fig := map[int]string{2: "Figure 5", 3: "Figure 6"}[rep]
	t := Paper2Table{Name: fmt.Sprintf("paper2-jobs-r%d", rep),
		Title:  fmt.Sprintf("MapReduce jobs, replication %d: seconds (paper's %s)", rep, fig),
		Header: []string{"job"}}
	for _, n := range names {
		t.Header = append(t.Header, n+" (s)")
	}
	if len(names) >= 2 {
		t.Header = append(t.Header, names[1]+" speed-up")
	}
	t.Header = append(t.Header, "paper")
	for _, job := range paper2JobNames {
		row := []string{job}
		found := false
		for _, n := range names {
			v, ok := secs[[2]string{n, job}]
			found = found || ok
			row = append(row, cell(v, "%.2f"))
		}
		if !found {
			continue
		}
		if len(names) >= 2 {
			row = append(row, ratioCell(secs[[2]string{names[0], job}], secs[[2]string{names[1], job}]))
		}
		paper := "chart only"
		if job == paper2ShortestJob {
			paper = "chart only; fastest"
		}
		t.Rows = append(t.Rows, append(row, paper))
	}
	for _, n := range names {
		best, bestS := "", math.Inf(1)
		for _, job := range paper2JobNames {
			if v, ok := secs[[2]string{n, job}]; ok && v < bestS {
				best, bestS = job, v
			}
		}
		agree := "agrees with"
		if best != paper2ShortestJob {
			agree = "differs from"
		}
		t.Notes = append(t.Notes, fmt.Sprintf("%s: fastest job %s (%.2f s), which %s the paper's conclusion (shuffle fastest)", n, best, bestS, agree))
	}
	if len(names) > 0 {
		var moved []string
		for _, j := range r.Paper2.Jobs {
			if j.Profile == names[0] && j.Replication == rep && j.Accounting != nil && j.Accounting.JobID != "" {
				c := j.Accounting.Counters
				moved = append(moved, fmt.Sprintf("%s %s / %s", j.Job, sizeString(c["HDFS_BYTES_WRITTEN"]), sizeString(c["REDUCE_SHUFFLE_BYTES"])))
			}
		}
		if len(moved) > 0 {
			t.Notes = append(t.Notes, fmt.Sprintf("%s, HDFS written / shuffled: %s", names[0], strings.Join(moved, ", ")))
		}
	}
	t.Notes = append(t.Notes, fmt.Sprintf("sizes: teragen %d rows (%s), wordcount over %s of random text, shuffle of %s; speed-up: first profile's time / second's",
		r.Paper2.Rows, sizeString(int64(r.Paper2.Rows)*100), sizeString(r.Paper2.TextBytes), sizeString(r.Paper2.ShuffleBytes)))
	return t, true
}

func (r *Results) paper2GatewayTable() (Paper2Table, bool) {
	if len(r.Paper2.Gateways) == 0 {
		return Paper2Table{}, false
	}
	paper := map[string]float64{}
	for _, g := range paper2Gateways {
		paper[g.way] = g.seconds
	}
	t := Paper2Table{Name: "paper2-gateways",
		Title:  fmt.Sprintf("One file of %s written into HDFS: put vs FUSE vs NFS (paper: 10 GiB)", sizeString(r.Paper2.GatewayBytes)),
		Header: []string{configHeader, "way", "seconds", "MB/s", "x put", "paper s", "paper MB/s", "paper x put", "strata/paper (x put)"}}
	put := map[string]float64{}
	for _, g := range r.Paper2.Gateways {
		if g.Way == "put" && g.Skipped == "" {
			put[g.Profile] = g.Seconds
		}
	}
	for _, g := range r.Paper2.Gateways {
		ps := paper[g.Way]
		pMBs := float64(paper2GatewayBytes) / 1e6 / ps
		pX := ps / paper["put"]
		if g.Skipped != "" {
			t.Rows = append(t.Rows, []string{g.Profile, g.Way, "skipped", "-", "-", cell(ps, "%.2f"), cell(pMBs, "%.0f"), cell(pX, "%.2fx"), "-"})
			t.Notes = append(t.Notes, fmt.Sprintf("%s %s skipped: %s", g.Profile, g.Way, g.Skipped))
			continue
		}
		x := math.NaN()
		if put[g.Profile] > 0 {
			x = g.Seconds / put[g.Profile]
		}
		t.Rows = append(t.Rows, []string{g.Profile, g.Way, fmt.Sprintf("%.2f", g.Seconds), cell(float64(g.Bytes)/1e6/g.Seconds, "%.0f"),
			cell(x, "%.2fx"), cell(ps, "%.2f"), cell(pMBs, "%.0f"), cell(pX, "%.2fx"), ratioCell(x, pX)})
	}
	rep := r.Paper2.Gateways[0].Replication
	t.Notes = append(t.Notes, fmt.Sprintf("replication %d; put: the shell's -put; fuse: a copy into a FUSE mount of the cluster (closing the file ends it); nfs: 1 MiB UNSTABLE WRITEs, 8 in flight, then COMMIT against the NFSv3 gateway", rep))
	return t, true
}

// PrintPaper2 prints the second paper's tables.
func (r *Results) PrintPaper2(w io.Writer) {
	for i, t := range r.Paper2Tables() {
		if i > 0 {
			fmt.Fprintln(w)
		}
		t.Print(w)
	}
}

// Print prints t as an aligned table with its notes below.
func (t Paper2Table) Print(w io.Writer) {
	fmt.Fprintln(w, t.Title)
	tw := newTable(w)
	for _, row := range append([][]string{t.Header}, t.Rows...) {
		for _, c := range row {
			fmt.Fprintf(tw, "%s\t", c)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	for _, n := range t.Notes {
		fmt.Fprintf(w, "  %s\n", n)
	}
}

// WritePaper2Files writes each table as <name>.csv and the charts of
// Figures 1–6 and of the gateways into dir; it returns the files written.
func (r *Results) WritePaper2Files(dir string) ([]string, error) {
	fw, err := newFileWriter(dir)
	if err != nil {
		return nil, err
	}
	for _, t := range r.Paper2Tables() {
		fw.write(t.Name+".csv", func(w io.Writer) error { return writeCSV(w, append([][]string{t.Header}, t.Rows...)) })
	}
	for _, ch := range r.paper2Charts() {
		fw.write(ch.file, ch.chart.WriteSVG)
	}
	return fw.done()
}

// paper2Charts are Figures 1–4 with the paper's stated bars beside
// strata's, Figures 5–6, and the gateway writes relative to put.
func (r *Results) paper2Charts() []namedChart {
	var out []namedChart
	names := r.profileNames()
	for _, f := range []struct {
		op  string
		rep int
	}{{"write", 3}, {"read", 3}, {"write", 2}, {"read", 2}} {
		var files []int
		val := map[[2]int]float64{} // profile index, files
		for _, d := range r.DFSIO {
			if d.Op != f.op || d.Replication != f.rep {
				continue
			}
			if !slices.Contains(files, d.Files) {
				files = append(files, d.Files)
			}
			val[[2]int{slices.Index(names, d.Profile), d.Files}] = r.concurrentRate(d)
		}
		if len(files) == 0 {
			continue
		}
		slices.Sort(files)
		ch := &Chart{Title: fmt.Sprintf("TestDFSIO %s, replication %d (paper's %s)", f.op, f.rep, paper2DFSIOFigure(f.op, f.rep)), YLabel: "MB/s (concurrent)"}
		for _, n := range files {
			ch.Groups = append(ch.Groups, fmt.Sprintf("%d files", n))
		}
		for i, n := range names {
			ch.Series = append(ch.Series, n)
			row := make([]float64, len(files))
			for g, n := range files {
				if v, ok := val[[2]int{i, n}]; ok {
					row[g] = v
				} else {
					row[g] = math.NaN()
				}
			}
			ch.Values = append(ch.Values, row)
		}
		for _, role := range []string{paper2SATA, paper2SSD} {
			ch.Series = append(ch.Series, "paper "+role)
			row := make([]float64, len(files))
			for g, n := range files {
				if v, ok := paper2DFSIO[paper2DFSIOKey{f.op, f.rep, n, role}]; ok {
					row[g] = v
				} else {
					row[g] = math.NaN()
				}
			}
			ch.Values = append(ch.Values, row)
		}
		out = append(out, namedChart{fmt.Sprintf("paper2-dfsio-%s-r%d.svg", f.op, f.rep), ch})
	}
	if r.Paper2 == nil {
		return out
	}
	for _, rep := range []int{2, 3} {
		ch := &Chart{Title: fmt.Sprintf("MapReduce jobs, replication %d (paper's Figure %d)", rep, rep+3), YLabel: "seconds", Series: names}
		ch.Values = make([][]float64, len(names))
		for _, job := range paper2JobNames {
			col := make([]float64, len(names))
			found := false
			for i := range col {
				col[i] = math.NaN()
			}
			for _, j := range r.Paper2.Jobs {
				if i := slices.Index(names, j.Profile); j.Replication == rep && j.Job == job && i >= 0 {
					col[i], found = j.Seconds, true
				}
			}
			if !found {
				continue
			}
			ch.Groups = append(ch.Groups, job)
			for i := range names {
				ch.Values[i] = append(ch.Values[i], col[i])
			}
		}
		if len(ch.Groups) > 0 {
			out = append(out, namedChart{fmt.Sprintf("paper2-jobs-r%d.svg", rep), ch})
		}
	}
	if len(r.Paper2.Gateways) > 0 {
		ch := &Chart{Title: "Writing one file into HDFS, time relative to put", YLabel: "x put", Series: append(slices.Clone(names), "paper")}
		for _, g := range paper2Gateways {
			ch.Groups = append(ch.Groups, g.way)
		}
		ch.Values = make([][]float64, len(ch.Series))
		for i, n := range names {
			put := math.NaN()
			by := map[string]float64{}
			for _, g := range r.Paper2.Gateways {
				if g.Profile == n && g.Skipped == "" {
					by[g.Way] = g.Seconds
				}
			}
			if v, ok := by["put"]; ok {
				put = v
			}
			for _, pg := range paper2Gateways {
				v, ok := by[pg.way]
				if !ok {
					v = math.NaN()
				}
				ch.Values[i] = append(ch.Values[i], v/put)
			}
		}
		for _, pg := range paper2Gateways {
			ch.Values[len(names)] = append(ch.Values[len(names)], pg.seconds/paper2Gateways[0].seconds)
		}
		out = append(out, namedChart{"paper2-gateways.svg", ch})
	}
	return out
}
