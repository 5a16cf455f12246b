package experiment

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"time"
)

// Results is what an experiment measured; results.json holds it.
type Results struct {
	Date        time.Time `json:"date"`
	Command     string    `json:"command,omitempty"`
	Host        string    `json:"host,omitempty"`
	CPUs        int       `json:"cpus"`
	LoadAverage string    `json:"load_average,omitempty"`
	Rows        uint64    `json:"teragen_rows"`
	Repetitions int       `json:"repetitions"`
	DataNodes   int       `json:"datanodes"`
	MapSlots    int       `json:"map_slots_per_node"`
	ReduceSlots int       `json:"reduce_slots_per_node"`
	// SortMB is the jobs' mapreduce.task.io.sort.mb (0: the configuration's).
	SortMB   int     `json:"sort_mb,omitempty"`
	Media    bool    `json:"media_emulation"`
	Years    float64 `json:"years"`
	KWhPrice float64 `json:"kwh_price"`
	// Profiles are in run order; the first is the baseline.
	Profiles []ProfileResult `json:"profiles"`
	Costs    []Cost          `json:"costs,omitempty"`
	DFSIO    []DFSIOResult   `json:"dfsio,omitempty"`

	// The machine and how the daemons ran, for the report.
	MemoryBytes int64  `json:"memory_bytes,omitempty"`
	Kernel      string `json:"kernel,omitempty"`
	Hosts       bool   `json:"hosts,omitempty"` // Options.Hosts
	// Paper2 is the second paper's jobs and gateways (paper2.go).
	Paper2 *Paper2Results `json:"paper2,omitempty"`
}

// ProfileResult is one profile's runtimes in seconds: per repetition and
// their means. Total is TeraGen + TeraSort, as in the paper's Table 4.
type ProfileResult struct {
	Name         string      `json:"name"`
	Description  string      `json:"description,omitempty"`
	Media        string      `json:"media,omitempty"`
	Price        float64     `json:"price"`
	Watts        float64     `json:"watts"`
	PaperSpeedup float64     `json:"paper_speedup,omitempty"`
	Runs         []RunResult `json:"runs"`
	TeraGen      float64     `json:"teragen_s"`
	TeraSort     float64     `json:"terasort_s"`
	TeraValidate float64     `json:"teravalidate_s,omitempty"`
	Total        float64     `json:"total_s"`

	// Layout is the profile's devices and hosts settings, for the report.
	Layout *ProfileLayout `json:"layout,omitempty"`
}

// RunResult is one repetition's runtimes in seconds.
type RunResult struct {
	TeraGen      float64 `json:"teragen_s"`
	TeraSort     float64 `json:"terasort_s"`
	TeraValidate float64 `json:"teravalidate_s,omitempty"`
	// Jobs are the steps' accounting, in run order (accounting.go).
	Jobs []JobAccounting `json:"jobs,omitempty"`
}

// DFSIOResult is one TestDFSIO run: Hadoop's report figures plus the
// aggregate rate, all bytes over the job's wall time.
type DFSIOResult struct {
	Profile     string  `json:"profile"`
	Op          string  `json:"op"` // write or read
	Replication int     `json:"replication"`
	Files       int     `json:"files"`
	FileSizeMB  float64 `json:"file_size_mb"`
	Throughput  float64 `json:"throughput_mb_s"`
	AvgIORate   float64 `json:"average_io_rate_mb_s"`
	ExecTime    float64 `json:"exec_time_s"`
	Aggregate   float64 `json:"aggregate_mb_s"`
	// Accounting is the run's job's (accounting.go), step dfsio-write or
	// dfsio-read.
	Accounting *JobAccounting `json:"accounting,omitempty"`
}

// summarize sets the means of p's runs.
func (p *ProfileResult) summarize() {
	var g, s, v float64
	for _, r := range p.Runs {
		g, s, v = g+r.TeraGen, s+r.TeraSort, v+r.TeraValidate
	}
	n := float64(len(p.Runs))
	if n == 0 {
		return
	}
	p.TeraGen, p.TeraSort, p.TeraValidate = g/n, s/n, v/n
	p.Total = p.TeraGen + p.TeraSort
}

// computeCosts fills r.Costs from the profiles' mean totals.
func (r *Results) computeCosts() error {
	costs, err := TCO(r.CostInputs(), r.Years, r.KWhPrice)
	if err != nil {
		return err
	}
	r.Costs = costs
	return nil
}

// ReadResults reads a results.json.
func ReadResults(path string) (*Results, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r Results
	dec := json.NewDecoder(io.LimitReader(f, 64<<20))
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: not an experiment's results.json: %w", path, err)
	}
	if len(r.Profiles) == 0 {
		return nil, fmt.Errorf("%s: no profiles in the results", path)
	}
	return &r, nil
}

// CostInputs are the results' profiles as inputs of TCO.
func (r *Results) CostInputs() []CostInput {
	var in []CostInput
	for _, p := range r.Profiles {
		in = append(in, CostInput{Name: p.Name, Runtime: p.Total, Price: p.Price, Watts: p.Watts})
	}
	return in
}

// PrintTables prints the paper's tables for what was measured.
func (r *Results) PrintTables(w io.Writer) {
	if r.Rows > 0 {
		r.printRuntimes(w)
		r.printAccounting(w)
	}
	if len(r.Costs) > 0 {
		fmt.Fprintln(w)
		PrintTCO(w, r.Costs, r.Years, r.KWhPrice)
	}
	if len(r.DFSIO) > 0 {
		if r.Rows > 0 {
			fmt.Fprintln(w)
		}
		fmt.Fprintf(w, "TestDFSIO: aggregate MB/s (all bytes / job wall time); Hadoop's per-task throughput in brackets\n")
		col := nameColumn(r.profileNames())
		tw := newTable(w)
		fmt.Fprintf(tw, "%s\top\treplication\tfiles\tMB/file\taggregate MB/s\tthroughput mb/sec\t\n", col(configHeader))
		for _, d := range r.DFSIO {
			fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%.2f\t(%.2f)\t\n", col(d.Profile), d.Op, d.Replication, d.Files, trimFloat(d.FileSizeMB), d.Aggregate, d.Throughput)
		}
		tw.Flush()
	}
}

func (r *Results) profileNames() []string {
	var names []string
	for _, p := range r.Profiles {
		names = append(names, p.Name)
	}
	return names
}

// printRuntimes prints Table 4 and the speed-ups.
func (r *Results) printRuntimes(w io.Writer) {
	fmt.Fprintf(w, "TeraGen + TeraSort of %d rows (%s), mean of %d run(s), %d DataNodes with %d map and %d reduce slots each (Table 4)\n",
		r.Rows, formatBytes(int64(r.Rows)*100), r.Repetitions, r.DataNodes, r.MapSlots, r.ReduceSlots)
	col := nameColumn(r.profileNames())
	tw := newTable(w)
	fmt.Fprintf(tw, "%s\tteragen (s)\tterasort (s)\ttotal (s)\tteravalidate (s)\t\n", col(configHeader))
	for _, p := range r.Profiles {
		fmt.Fprintf(tw, "%s\t%.2f\t%.2f\t%.2f\t%s\t\n", col(p.Name), p.TeraGen, p.TeraSort, p.Total, optional(p.TeraValidate))
	}
	tw.Flush()
	if len(r.Profiles) > 0 {
		base := r.Profiles[0]
		fmt.Fprintf(w, "\nSpeed-up of the total over %s (the paper's Figure 3)\n", base.Name)
		tw = newTable(w)
		fmt.Fprintf(tw, "%s\ttotal (s)\truntime change\tspeed-up\tpaper\t\n", col(configHeader))
		for _, p := range r.Profiles {
			paper := "-"
			if p.PaperSpeedup > 0 {
				paper = fmt.Sprintf("%.1fx", p.PaperSpeedup)
			}
			fmt.Fprintf(tw, "%s\t%.2f\t%s\t%.2fx\t%s\t\n", col(p.Name), p.Total, percentChange(p.Total, base.Total), ratio(base.Total, p.Total), paper)
		}
		tw.Flush()
	}
}

func ratio(a, b float64) float64 {
	if b == 0 {
		return math.NaN()
	}
	return a / b
}

func optional(v float64) string {
	if v == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2f", v)
}

func formatBytes(n int64) string {
	switch {
	case n >= 1e9:
		return trimFloat(float64(n)/1e9) + " GB"
	case n >= 1e6:
		return trimFloat(float64(n)/1e6) + " MB"
	default:
		return trimFloat(float64(n)/1e3) + " kB"
	}
}

// WriteFiles writes results.json, runtimes.csv, tco.csv, dfsio.csv (if
// TestDFSIO ran), the charts and the report (index.html) into dir; it
// returns the files written.
func (r *Results) WriteFiles(dir string) ([]string, error) {
	fw, err := newFileWriter(dir)
	if err != nil {
		return nil, err
	}
	fw.write("results.json", func(w io.Writer) error {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(r)
	})
	if r.Rows > 0 {
		fw.write("runtimes.csv", func(w io.Writer) error { return writeCSV(w, r.runtimeRows()) })
	}
	if len(r.Costs) > 0 {
		fw.write("tco.csv", func(w io.Writer) error { return writeCSV(w, r.costRows()) })
	}
	if len(r.DFSIO) > 0 {
		fw.write("dfsio.csv", func(w io.Writer) error { return writeCSV(w, r.dfsioRows()) })
	}
	for _, ch := range r.charts() {
		fw.write(ch.file, ch.chart.WriteSVG)
	}
	for _, p := range r.Profiles {
		if len(p.Runs) == 0 {
			continue
		}
		if ja := p.Runs[0].Job(accountedStep); ja != nil && len(ja.Attempts) > 0 {
			tl := NewTimeline(fmt.Sprintf("TeraSort on %s: task attempts by node and slot (%s)", p.Name, ja.JobID), ja)
			fw.write("timeline-"+p.Name+".svg", tl.WriteSVG)
		}
	}
	// The report links the files above: it comes last.
	fw.write(ReportFile, func(w io.Writer) error { return r.WriteReport(w, ReportLinks(dir, fw.files)) })
	return fw.done()
}

// fileWriter writes the files of one results directory, keeping the
// paths of those written in full and the errors of the others, so one
// failed file does not stop the rest.
type fileWriter struct {
	dir   string
	files []string
	errs  []error
}

func newFileWriter(dir string) (*fileWriter, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	return &fileWriter{dir: dir}, nil
}

func (fw *fileWriter) write(name string, fn func(io.Writer) error) {
	p := filepath.Join(fw.dir, name)
	f, err := os.Create(p)
	if err != nil {
		fw.errs = append(fw.errs, err)
		return
	}
	err = fn(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		fw.errs = append(fw.errs, fmt.Errorf("%s: %w", p, err))
		return
	}
	fw.files = append(fw.files, p)
}

// done returns the files written and the errors joined.
func (fw *fileWriter) done() ([]string, error) { return fw.files, errors.Join(fw.errs...) }

func writeCSV(w io.Writer, rows [][]string) error {
	cw := csv.NewWriter(w)
	cw.WriteAll(rows)
	return cw.Error()
}

// f2 prints a CSV number: six significant digits, plain decimal.
func f2(v float64) string {
	r, _ := strconv.ParseFloat(strconv.FormatFloat(v, 'g', 6, 64), 64)
	return strconv.FormatFloat(r, 'f', -1, 64)
}

func (r *Results) runtimeRows() [][]string {
	rows := [][]string{{"profile", "repetition", "teragen_s", "terasort_s", "total_s", "teravalidate_s"}}
	for _, p := range r.Profiles {
		for i, run := range p.Runs {
			rows = append(rows, []string{p.Name, strconv.Itoa(i + 1), f2(run.TeraGen), f2(run.TeraSort), f2(run.TeraGen + run.TeraSort), f2(run.TeraValidate)})
		}
		rows = append(rows, []string{p.Name, "mean", f2(p.TeraGen), f2(p.TeraSort), f2(p.Total), f2(p.TeraValidate)})
	}
	return rows
}

func (r *Results) costRows() [][]string {
	rows := [][]string{{"profile", "runtime_s", "speedup", "paper_speedup", "jobs_per_day", "jobs_lifetime", "years", "price", "cost_per_job", "watts", "kwh_per_job", "energy_cost_per_job"}}
	for i, c := range r.Costs {
		paper := ""
		if i < len(r.Profiles) && r.Profiles[i].PaperSpeedup > 0 {
			paper = f2(r.Profiles[i].PaperSpeedup)
		}
		rows = append(rows, []string{c.Name, f2(c.Runtime), f2(c.Speedup), paper, f2(c.JobsPerDay), f2(c.JobsLifetime), f2(r.Years),
			f2(c.Price), f2(c.CostPerJob), f2(c.Watts), f2(c.KWhPerJob), f2(c.EnergyCostPerJob)})
	}
	return rows
}

func (r *Results) dfsioRows() [][]string {
	rows := [][]string{{"profile", "op", "replication", "files", "file_size_mb", "aggregate_mb_s", "throughput_mb_s", "average_io_rate_mb_s", "exec_time_s"}}
	for _, d := range r.DFSIO {
		rows = append(rows, []string{d.Profile, d.Op, strconv.Itoa(d.Replication), strconv.Itoa(d.Files), f2(d.FileSizeMB),
			f2(d.Aggregate), f2(d.Throughput), f2(d.AvgIORate), f2(d.ExecTime)})
	}
	return rows
}

type namedChart struct {
	file  string
	chart *Chart
}

// charts are the papers' figures for what was measured.
func (r *Results) charts() []namedChart {
	var names []string
	var gen, sort, total, cost, energy []float64
	for _, p := range r.Profiles {
		names = append(names, p.Name)
		gen, sort, total = append(gen, p.TeraGen), append(sort, p.TeraSort), append(total, p.Total)
	}
	anyWatts := false
	for _, c := range r.Costs {
		cost, energy = append(cost, c.CostPerJob), append(energy, c.KWhPerJob*1000)
		anyWatts = anyWatts || c.Watts > 0
	}
	var out []namedChart
	if r.Rows > 0 {
		out = append(out, namedChart{"runtime.svg", &Chart{Title: fmt.Sprintf("Runtime comparison: TeraGen + TeraSort of %s", formatBytes(int64(r.Rows)*100)),
			YLabel: "runtime (s)", Groups: names, Series: []string{"TeraGen", "TeraSort", "Total"}, Values: [][]float64{gen, sort, total}}})
	}
	if len(cost) > 0 {
		out = append(out, namedChart{"cost-per-job.svg", &Chart{Title: fmt.Sprintf("Cost per job over %s years", trimFloat(r.Years)),
			YLabel: "$ per job", Groups: names, Series: []string{"$/job"}, Values: [][]float64{cost}}})
	}
	if anyWatts {
		out = append(out, namedChart{"energy-per-job.svg", &Chart{Title: "Energy per job",
			YLabel: "Wh per job", Groups: names, Series: []string{"Wh/job"}, Values: [][]float64{energy}}})
	}
	for _, op := range []string{"write", "read"} {
		for _, rep := range []int{3, 2} {
			ch := r.dfsioChart(op, rep)
			if ch != nil {
				out = append(out, namedChart{fmt.Sprintf("dfsio-%s-r%d.svg", op, rep), ch})
			}
		}
	}
	return out
}

// dfsioChart is the second paper's figure: aggregate throughput per file
// count, one bar per profile.
func (r *Results) dfsioChart(op string, rep int) *Chart {
	var files []int
	var profiles []string
	val := map[[2]string]float64{}
	for _, d := range r.DFSIO {
		if d.Op != op || d.Replication != rep {
			continue
		}
		if !slices.Contains(files, d.Files) {
			files = append(files, d.Files)
		}
		if !slices.Contains(profiles, d.Profile) {
			profiles = append(profiles, d.Profile)
		}
		val[[2]string{d.Profile, strconv.Itoa(d.Files)}] = d.Aggregate
	}
	if len(files) == 0 {
		return nil
	}
	ch := &Chart{Title: fmt.Sprintf("TestDFSIO %s throughput, replication %d", op, rep), YLabel: "MB/s (aggregate)", Series: profiles}
	for _, f := range files {
		label := fmt.Sprintf("%d files", f)
		if f == 1 {
			label = "1 file"
		}
		ch.Groups = append(ch.Groups, label)
	}
	for _, p := range profiles {
		row := make([]float64, len(files))
		for i, f := range files {
			v, ok := val[[2]string{p, strconv.Itoa(f)}]
			if !ok {
				v = math.NaN()
			}
			row[i] = v
		}
		ch.Values = append(ch.Values, row)
	}
	return ch
}
