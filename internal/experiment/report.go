package experiment

import (
	"bytes"
	"embed"
	"fmt"
	"html/template"
	"io"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/stratafs/strata/internal/hostnet"
	"github.com/stratafs/strata/internal/media"
)

// The report is index.html beside results.json: every table PrintTables
// prints, every chart WriteFiles writes (inlined), a section per profile
// and links to the raw files. It is one file that needs nothing else —
// CSS and the optional script are inlined, nothing is fetched — so that
// it reads offline and can be mailed or archived as it is.

//go:embed report.html.tmpl report.css report.js
var reportFS embed.FS

var reportTmpl = template.Must(template.New("report.html.tmpl").ParseFS(reportFS, "report.html.tmpl"))

// ReportFile is the report's name in the output directory.
const ReportFile = "index.html"

// Table is a report table: cells as the terminal prints them.
type Table struct {
	Title string
	// Note is a line under the title (what the columns mean).
	Note   string
	Header []string
	Rows   [][]string
	// Text is how many leading columns hold text (left-aligned); the
	// rest are figures. 0 means 1.
	Text int
}

// Figure is a chart of the report, inlined as SVG; File is the name
// WriteFiles gives the same chart, for the link.
type Figure struct {
	File string
	SVG  interface{ WriteSVG(io.Writer) error }
}

// ReportSection is a part of the report: a heading, facts (name and
// value pairs), tables and figures.
type ReportSection struct {
	ID, Title, Intro string
	Facts            [][2]string
	Tables           []Table
	Figures          []Figure
}

// reportSections are sections computed elsewhere (another paper's
// tables): a file adds its own with one line in an init,
// addReportSections(func(r *Results) []ReportSection { ... }). They come
// after the built-in tables, before the profiles' sections; a function
// returns nothing when its part did not run.
var reportSections []func(*Results) []ReportSection

func addReportSections(fn func(*Results) []ReportSection) {
	reportSections = append(reportSections, fn)
}

// ProfileLayout is what results.json keeps of a profile for the report:
// its devices and their roles, and the node's CPU share and link rate
// (which apply with -hosts only).
type ProfileLayout struct {
	Source        string         `json:"source,omitempty"`
	Devices       []LayoutDevice `json:"devices,omitempty"`
	StoragePolicy string         `json:"storage_policy,omitempty"`
	NodeCPUs      float64        `json:"node_cpus,omitempty"`
	// NodeCPUPeriodMs is the CFS period NodeCPUs is a quota of
	// (internal/hostnet).
	NodeCPUPeriodMs float64     `json:"node_cpu_period_ms,omitempty"`
	LinkMbps        float64     `json:"link_mbps,omitempty"`
	Conf            [][2]string `json:"conf,omitempty"`
}

// LayoutDevice is one per-node device: its preset, the storage type of
// the DataNode volume on it ("" for none) and whether it holds the
// TaskTracker's intermediate data.
type LayoutDevice struct {
	Name         string `json:"name"`
	Preset       string `json:"preset"`
	Volume       string `json:"volume,omitempty"`
	Intermediate bool   `json:"intermediate,omitempty"`
}

// layout is p as results.json keeps it.
func (p *Profile) layout() *ProfileLayout {
	l := &ProfileLayout{Source: p.Source, StoragePolicy: p.StoragePolicy, NodeCPUs: p.NodeCPUs, LinkMbps: p.LinkMbps, Conf: p.Conf}
	if p.NodeCPUs > 0 {
		_, period := hostnet.CPUQuota(p.NodeCPUs)
		l.NodeCPUPeriodMs = float64(period) / 1000
	}
	for _, d := range p.Devices {
		ld := LayoutDevice{Name: d.Name, Preset: d.Preset}
		for _, v := range p.Volumes {
			if v.Device == d.Name {
				ld.Volume = v.Type.String()
			}
		}
		for _, ldir := range p.LocalDirs {
			ld.Intermediate = ld.Intermediate || ldir == d.Name
		}
		l.Devices = append(l.Devices, ld)
	}
	return l
}

// MemTotal is the machine's memory in bytes (/proc/meminfo), 0 if unknown.
func MemTotal() int64 {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0
	}
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) >= 2 && f[0] == "MemTotal:" {
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

// Kernel is the running kernel's name and release ("Linux 6.1.0"), ""
// if unknown.
func Kernel() string {
	typ, err1 := os.ReadFile("/proc/sys/kernel/ostype")
	rel, err2 := os.ReadFile("/proc/sys/kernel/osrelease")
	if err1 != nil || err2 != nil {
		return ""
	}
	return strings.TrimSpace(string(typ)) + " " + strings.TrimSpace(string(rel))
}

// ReportPage is a page in the report's look: a heading, the run's
// configuration and machine as facts, sections, and links to the raw
// files beside it (names relative to its directory, ReportLinks).
type ReportPage struct {
	Title, Subtitle, Command string
	Config                   [][2]string
	Sections                 []ReportSection
	Files                    []string
	// FilesNote introduces the links: which file holds the run and how
	// the page is written again from it.
	FilesNote string
}

// Write writes p as one self-contained HTML document.
func (p *ReportPage) Write(w io.Writer) error {
	v, err := p.view()
	if err != nil {
		return err
	}
	return reportTmpl.Execute(w, v)
}

// WriteReport writes the report of r; files are the names of the raw
// files to link to, relative to the report's directory (ReportLinks).
func (r *Results) WriteReport(w io.Writer, files []string) error {
	p := &ReportPage{Title: "strata experiment", Subtitle: strings.Join(r.profileNames(), " vs "), Command: r.Command,
		Config: r.configFacts(), Sections: r.ReportSections(), Files: files,
		FilesNote: "results.json holds everything above; strata experiment -report DIR writes this page again from it"}
	if !r.Date.IsZero() {
		p.Title += " of " + r.Date.UTC().Format("2006-01-02 15:04 UTC")
	}
	return p.Write(w)
}

// RegenerateReport writes dir/index.html from dir/results.json, linking
// the directory's JSON, CSV and SVG files; it returns the report's path.
func RegenerateReport(dir string) (string, error) {
	r, err := ReadResults(filepath.Join(dir, "results.json"))
	if err != nil {
		return "", err
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", err
	}
	var files []string
	for _, e := range ents {
		switch filepath.Ext(e.Name()) {
		case ".json", ".csv", ".svg":
			if e.Type().IsRegular() {
				files = append(files, e.Name())
			}
		}
	}
	sort.Strings(files)
	var b bytes.Buffer
	if err := r.WriteReport(&b, ReportLinks(dir, files)); err != nil {
		return "", err
	}
	p := filepath.Join(dir, ReportFile)
	return p, os.WriteFile(p, b.Bytes(), 0o644)
}

// ReportLinks are the report's links to files (paths or names in dir)
// and to dir/logs when it exists.
func ReportLinks(dir string, files []string) []string {
	var out []string
	for _, f := range files {
		out = append(out, filepath.Base(f))
	}
	if st, err := os.Stat(filepath.Join(dir, "logs")); err == nil && st.IsDir() {
		out = append(out, "logs/")
	}
	return out
}

type reportView struct {
	Title, Subtitle string
	Command         string
	Config          [][2]string
	Sections        []sectionView
	Files           []string
	FilesNote       string
	CSS             template.CSS
	JS              template.JS
}

type sectionView struct {
	ReportSection
	Tables  []tableView
	Figures []figureView
}

type tableView struct {
	Table
	ID   string // "<section>-table-<n>", an anchor
	Rows [][]cellView
}

type cellView struct {
	Text string
	Num  bool
}

type figureView struct {
	File string
	SVG  template.HTML
	Wide bool // a timeline: the page's width
}

func (p *ReportPage) view() (*reportView, error) {
	css, err := reportFS.ReadFile("report.css")
	if err != nil {
		return nil, err
	}
	js, err := reportFS.ReadFile("report.js")
	if err != nil {
		return nil, err
	}
	v := &reportView{Title: p.Title, Subtitle: p.Subtitle, Command: p.Command, Config: p.Config, FilesNote: p.FilesNote,
		CSS: template.CSS(css), JS: template.JS(js)}
	for _, s := range p.Sections {
		sv := sectionView{ReportSection: s}
		for i, t := range s.Tables {
			tv := tableCells(t)
			tv.ID = fmt.Sprintf("%s-table-%d", s.ID, i+1)
			sv.Tables = append(sv.Tables, tv)
		}
		for _, f := range s.Figures {
			svg, err := inlineSVG(f.SVG)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", f.File, err)
			}
			_, wide := f.SVG.(*Timeline)
			sv.Figures = append(sv.Figures, figureView{File: f.File, SVG: svg, Wide: wide})
		}
		v.Sections = append(v.Sections, sv)
	}
	v.Files = p.Files
	return v, nil
}

func tableCells(t Table) tableView {
	text := max(t.Text, 1)
	tv := tableView{Table: t}
	for _, row := range t.Rows {
		var cells []cellView
		for i, c := range row {
			cells = append(cells, cellView{Text: c, Num: i >= text})
		}
		tv.Rows = append(tv.Rows, cells)
	}
	return tv
}

// inlineSVG is s's SVG document without its XML declaration, to sit in
// HTML. The writers escape every name they put in it (Chart.WriteSVG,
// Timeline.WriteSVG), so it is trusted markup.
func inlineSVG(s interface{ WriteSVG(io.Writer) error }) (template.HTML, error) {
	var b bytes.Buffer
	if err := s.WriteSVG(&b); err != nil {
		return "", err
	}
	out := b.String()
	if strings.HasPrefix(out, "<?xml") {
		if i := strings.Index(out, "?>"); i >= 0 {
			out = strings.TrimLeft(out[i+2:], "\n")
		}
	}
	return template.HTML(out), nil
}

// facts are a report's configuration lines, key and value; add leaves
// out empty values.
type facts [][2]string

func (f *facts) add(k, v string) {
	if v != "" {
		*f = append(*f, [2]string{k, v})
	}
}

func (f *facts) addDate(t time.Time) {
	if !t.IsZero() {
		f.add("date", t.UTC().Format("2006-01-02 15:04:05 UTC"))
	}
}

// configFacts is the run's configuration and machine (the command line
// is the page's heading).
func (r *Results) configFacts() [][2]string {
	var f facts
	f.addDate(r.Date)
	add := f.add
	if r.Rows > 0 {
		add("TeraGen rows", fmt.Sprintf("%d (%s)", r.Rows, formatBytes(int64(r.Rows)*100)))
		add("repetitions", strconv.Itoa(r.Repetitions))
	}
	add("DataNodes", strconv.Itoa(r.DataNodes))
	add("slots per node", fmt.Sprintf("%d map, %d reduce", r.MapSlots, r.ReduceSlots))
	if r.SortMB > 0 {
		add("mapreduce.task.io.sort.mb", strconv.Itoa(r.SortMB))
	}
	if r.Media {
		add("media emulation", "on")
	} else {
		add("media emulation", "off (plain directories)")
	}
	if r.Hosts {
		add("daemons", "a process each on a host of its own (-hosts): links and CPU shares as the profiles say")
	} else {
		add("daemons", "one process, loopback network")
	}
	if r.Years > 0 {
		add("lifetime", trimFloat(r.Years)+" years")
		add("electricity", "$"+trimFloat(r.KWhPrice)+"/kWh")
	}
	add("host", r.Host)
	if r.CPUs > 0 {
		add("CPUs", strconv.Itoa(r.CPUs))
	}
	if r.MemoryBytes > 0 {
		add("memory", sizeString(r.MemoryBytes))
	}
	add("kernel", r.Kernel)
	add("load average at the start", r.LoadAverage)
	return f
}

// ReportSections are the report's sections for what was measured, in
// order: runtimes, cost, TestDFSIO, accounting, the sections of
// addReportSections, other charts, then one per profile.
func (r *Results) ReportSections() []ReportSection {
	charts := map[string]*Chart{}
	var order []string
	for _, c := range r.charts() {
		charts[c.file] = c.chart
		order = append(order, c.file)
	}
	used := map[string]bool{}
	take := func(match func(string) bool) []Figure {
		var out []Figure
		for _, f := range order {
			if !used[f] && match(f) {
				used[f] = true
				out = append(out, Figure{File: f, SVG: charts[f]})
			}
		}
		return out
	}
	is := func(names ...string) func(string) bool {
		return func(f string) bool { return slices.Contains(names, f) }
	}
	var out []ReportSection
	add := func(s ReportSection) {
		if len(s.Tables)+len(s.Figures)+len(s.Facts) > 0 {
			out = append(out, s)
		}
	}
	if r.Rows > 0 {
		add(ReportSection{ID: "runtimes", Title: "Runtimes and speed-ups", Tables: r.runtimeTables(), Figures: take(is("runtime.svg"))})
	}
	if len(r.Costs) > 0 {
		add(ReportSection{ID: "cost", Title: "Jobs, cost and energy per job", Tables: costTables(r.Costs, r.Years, r.KWhPrice),
			Figures: take(is("cost-per-job.svg", "energy-per-job.svg"))})
	}
	if len(r.DFSIO) > 0 {
		add(ReportSection{ID: "dfsio", Title: "TestDFSIO", Tables: []Table{r.dfsioTable()},
			Figures: take(func(f string) bool { return strings.HasPrefix(f, "dfsio-") })})
	}
	if r.Rows > 0 {
		intro := "Per-phase timelines of each profile's TeraSort are in the profiles' sections below."
		if n := r.accountingNote(); n != "" {
			intro += " " + n
		}
		add(ReportSection{ID: "accounting", Title: "Accounting of TeraSort, run 1", Tables: r.accountingTables(), Intro: intro})
	}
	for _, fn := range reportSections {
		for _, s := range fn(r) {
			add(s)
		}
	}
	add(ReportSection{ID: "charts", Title: "Other charts", Figures: take(func(string) bool { return true })})
	for i := range r.Profiles {
		add(r.profileSection(i))
	}
	return out
}

func (r *Results) runtimeTables() []Table {
	t := Table{Title: fmt.Sprintf("TeraGen + TeraSort of %d rows (%s), mean of %d run(s), %d DataNodes with %d map and %d reduce slots each (Table 4)",
		r.Rows, formatBytes(int64(r.Rows)*100), r.Repetitions, r.DataNodes, r.MapSlots, r.ReduceSlots),
		Header: []string{configHeader, "teragen (s)", "terasort (s)", "total (s)", "teravalidate (s)"}}
	for _, p := range r.Profiles {
		t.Rows = append(t.Rows, []string{p.Name, fmt.Sprintf("%.2f", p.TeraGen), fmt.Sprintf("%.2f", p.TeraSort), fmt.Sprintf("%.2f", p.Total), optional(p.TeraValidate)})
	}
	if len(r.Profiles) == 0 {
		return []Table{t}
	}
	base := r.Profiles[0]
	s := Table{Title: fmt.Sprintf("Speed-up of the total over %s (the paper's Figure 3)", base.Name),
		Note:   "paper: the speed-up the white paper measured for the same layout on its 1 TB cluster",
		Header: []string{configHeader, "total (s)", "runtime change", "speed-up", "paper"}}
	for _, p := range r.Profiles {
		paper := "-"
		if p.PaperSpeedup > 0 {
			paper = fmt.Sprintf("%.1fx", p.PaperSpeedup)
		}
		s.Rows = append(s.Rows, []string{p.Name, fmt.Sprintf("%.2f", p.Total), percentChange(p.Total, base.Total), fmt.Sprintf("%.2fx", ratio(base.Total, p.Total)), paper})
	}
	return []Table{t, s}
}

// costTables are PrintTCO's tables.
func costTables(costs []Cost, years, kwhPrice float64) []Table {
	ys := trimFloat(years)
	jobs := Table{Title: fmt.Sprintf("Jobs over %s years (Table 5)", ys),
		Header: []string{configHeader, "runtime (s)", "jobs in 1 day", "jobs in " + ys + " years"}}
	cost := Table{Title: fmt.Sprintf("Cost per job over %s years (Table 7)", ys),
		Header: []string{configHeader, "price ($)", "jobs in " + ys + " years", "$/job", "vs " + costs[0].Name}}
	energy := Table{Title: fmt.Sprintf("Energy per job (electricity at $%s/kWh)", trimFloat(kwhPrice)),
		Header: []string{configHeader, "watts", "kWh/job", "energy $/job", "$/job with energy"}}
	anyWatts := false
	for _, c := range costs {
		jobs.Rows = append(jobs.Rows, []string{c.Name, fmt.Sprintf("%.2f", c.Runtime), fmt.Sprintf("%.2f", c.JobsPerDay), fmt.Sprintf("%.2f", c.JobsLifetime)})
		cost.Rows = append(cost.Rows, []string{c.Name, fmt.Sprintf("%.2f", c.Price), fmt.Sprintf("%.2f", c.JobsLifetime), money(c.CostPerJob), percentChange(c.CostPerJob, costs[0].CostPerJob)})
		energy.Rows = append(energy.Rows, []string{c.Name, fmt.Sprintf("%.0f", c.Watts), fmt.Sprintf("%.3g", c.KWhPerJob), money(c.EnergyCostPerJob), money(c.CostPerJob + c.EnergyCostPerJob)})
		anyWatts = anyWatts || c.Watts > 0
	}
	if !anyWatts {
		return []Table{jobs, cost}
	}
	return []Table{jobs, cost, energy}
}

func (r *Results) dfsioTable() Table {
	t := Table{Title: "TestDFSIO: aggregate MB/s (all bytes / job wall time); Hadoop's per-task throughput in brackets", Text: 2,
		Header: []string{configHeader, "op", "replication", "files", "MB/file", "aggregate MB/s", "throughput mb/sec"}}
	for _, d := range r.DFSIO {
		t.Rows = append(t.Rows, []string{d.Profile, d.Op, strconv.Itoa(d.Replication), strconv.Itoa(d.Files), trimFloat(d.FileSizeMB), fmt.Sprintf("%.2f", d.Aggregate), fmt.Sprintf("(%.2f)", d.Throughput)})
	}
	return t
}

// accounted is a profile's first run's TeraSort accounting.
type accounted struct {
	name string
	ja   *JobAccounting
}

func (r *Results) accounted() []accounted {
	var out []accounted
	for _, p := range r.Profiles {
		if len(p.Runs) == 0 {
			continue
		}
		if ja := p.Runs[0].Job(accountedStep); ja != nil && ja.JobID != "" {
			out = append(out, accounted{p.Name, ja})
		}
	}
	return out
}

// accountingTables are printAccounting's tables.
func (r *Results) accountingTables() []Table {
	rows := r.accounted()
	if len(rows) == 0 {
		return nil
	}
	cpu := Table{Title: "TeraSort's CPU and intermediate data, run 1 (task CPU: the children's rusage; FILE: local spills, merges, map output, shuffle)",
		Header: []string{configHeader, "terasort (s)", "task user (s)", "task sys (s)", "daemons (s)", "FILE read", "FILE written", "spilled records", "map output", "shuffled", "peak/node", "of input/node"}}
	phases := Table{Title: "TeraSort's phases, run 1: mean seconds per attempt (map = read + map + spills; timeline-<profile>.svg)",
		Header: append([]string{configHeader, "maps", "reduces"}, phaseOrder...)}
	devices := Table{Title: "Emulated devices during TeraSort, run 1 (all nodes' devices of a name together; busy: the model's service time, mean per node)", Text: 3,
		Header: []string{configHeader, "device", "preset", "read", "written", "requests", "seeks", "busy (s)", "busy"}}
	for _, x := range rows {
		var user, sys, daemons float64
		var maps, reduces int
		for _, a := range x.ja.Attempts {
			user, sys = user+a.CPU.User, sys+a.CPU.System
			if a.State == "SUCCEEDED" && a.Type == "map" {
				maps++
			} else if a.State == "SUCCEEDED" && a.Type == "reduce" {
				reduces++
			}
		}
		for _, d := range x.ja.Daemons {
			daemons += d.User + d.System
		}
		var peak int64
		var of float64
		for _, n := range x.ja.Nodes {
			if n.IntermediatePeak > peak {
				peak, of = n.IntermediatePeak, n.OfInput
			}
		}
		c := x.ja.Counters
		cpu.Rows = append(cpu.Rows, []string{x.name, fmt.Sprintf("%.2f", x.ja.Seconds), fmt.Sprintf("%.2f", user), fmt.Sprintf("%.2f", sys), fmt.Sprintf("%.2f", daemons),
			sizeString(c["FILE_BYTES_READ"]), sizeString(c["FILE_BYTES_WRITTEN"]), strconv.FormatInt(c["SPILLED_RECORDS"], 10),
			sizeString(c["MAP_OUTPUT_MATERIALIZED_BYTES"]), sizeString(c["REDUCE_SHUFFLE_BYTES"]), sizeString(peak), fmt.Sprintf("%.0f%%", of*100)})
		row := []string{x.name, strconv.Itoa(maps), strconv.Itoa(reduces)}
		m := x.ja.MeanPhases()
		for _, ph := range phaseOrder {
			if v, ok := m[ph]; ok {
				row = append(row, fmt.Sprintf("%.2f", v))
			} else {
				row = append(row, "-")
			}
		}
		phases.Rows = append(phases.Rows, row)
		devices.Rows = append(devices.Rows, deviceRows(x.name, x.ja)...)
	}
	out := []Table{cpu, phases}
	if len(devices.Rows) > 0 {
		out = append(out, devices)
	}
	if links := linkTable(rows); len(links.Rows) > 0 {
		out = append(out, links)
	}
	return out
}

// linkTable is the accounted steps' bytes per host link.
func linkTable(rows []accounted) Table {
	t := Table{Title: "Network bytes per link during TeraSort, run 1 (each host's veth, counted at the bridge: in = into the host; the job client is the bridge and has no link)", Text: 3,
		Header: []string{configHeader, "host", "role", "in", "out", "packets in", "packets out", "shaped to"}}
	for _, x := range rows {
		for _, l := range x.ja.Links {
			rate := "unshaped"
			if l.Mbps > 0 {
				rate = trimFloat(l.Mbps) + " Mbit/s"
			}
			t.Rows = append(t.Rows, []string{x.name, l.Host, l.Role, sizeString(int64(l.InBytes)), sizeString(int64(l.OutBytes)),
				strconv.FormatUint(l.InPackets, 10), strconv.FormatUint(l.OutPackets, 10), rate})
		}
	}
	return t
}

// accountingNote is a line saying why there is no link table, or "".
func (r *Results) accountingNote() string {
	rows := r.accounted()
	if len(rows) == 0 {
		return ""
	}
	for _, x := range rows {
		if len(x.ja.Links) > 0 {
			return ""
		}
	}
	if !r.Hosts {
		return "Network bytes per link: none; without -hosts the daemons are one process talking over loopback, which has no link per host."
	}
	return "Network bytes per link: none recorded in these results (see the jobs' notes in results.json)."
}

// deviceRows are ja's devices, those of one name on all nodes together.
func deviceRows(profile string, ja *JobAccounting) [][]string {
	type agg struct {
		preset      string
		r, wr, q, s uint64
		busy        float64
		nodes       int
	}
	by := map[string]*agg{}
	var names []string
	for _, d := range ja.Devices {
		a := by[d.Device]
		if a == nil {
			a = &agg{preset: d.Preset}
			by[d.Device] = a
			names = append(names, d.Device)
		}
		a.r, a.wr, a.q, a.s, a.busy, a.nodes = a.r+d.ReadBytes, a.wr+d.WriteBytes, a.q+d.Requests, a.s+d.Seeks, a.busy+d.Busy, a.nodes+1
	}
	sort.Strings(names)
	var rows [][]string
	for _, n := range names {
		a := by[n]
		busy := a.busy / float64(a.nodes)
		util := 0.0
		if ja.Seconds > 0 {
			util = busy / ja.Seconds * 100
		}
		rows = append(rows, []string{profile, n, a.preset, sizeString(int64(a.r)), sizeString(int64(a.wr)), strconv.FormatUint(a.q, 10), strconv.FormatUint(a.s, 10),
			fmt.Sprintf("%.2f", busy), fmt.Sprintf("%.0f%%", util)})
	}
	return rows
}

// profileTimeline is the Gantt chart WriteFiles writes as
// timeline-<profile>.svg, nil if the profile has no accounted TeraSort.
func profileTimeline(p *ProfileResult) (string, *Timeline) {
	if len(p.Runs) == 0 {
		return "", nil
	}
	ja := p.Runs[0].Job(accountedStep)
	if ja == nil || len(ja.Attempts) == 0 {
		return "", nil
	}
	return "timeline-" + p.Name + ".svg", NewTimeline(fmt.Sprintf("TeraSort on %s: task attempts by node and slot (%s)", p.Name, ja.JobID), ja)
}

// profileSection is profile i's layout, runs, nodes and timeline.
func (r *Results) profileSection(i int) ReportSection {
	p := &r.Profiles[i]
	s := ReportSection{ID: fmt.Sprintf("profile-%d", i+1), Title: "Profile " + p.Name, Intro: p.Description}
	fact := func(k, v string) { s.Facts = append(s.Facts, [2]string{k, v}) }
	if i == 0 {
		fact("role", "baseline")
	}
	fact("nodes", fmt.Sprintf("%d, each with every device below", r.DataNodes))
	fact("price", "$"+fmt.Sprintf("%.2f", p.Price))
	fact("power", fmt.Sprintf("%.0f W", p.Watts))
	if p.PaperSpeedup > 0 {
		fact("paper's speed-up", fmt.Sprintf("%.1fx", p.PaperSpeedup))
	}
	if p.Media != "" {
		fact("emulated", p.Media)
	}
	if l := p.Layout; l != nil {
		fact("source", l.Source)
		if l.StoragePolicy != "" {
			fact("storage policy", l.StoragePolicy)
		}
		ignored := ""
		if !r.Hosts {
			ignored = " (applies with -hosts only; not this run)"
		}
		if l.NodeCPUs > 0 {
			fact("CPU share per node", trimFloat(l.NodeCPUs)+" CPUs"+ignored)
		}
		if l.LinkMbps > 0 {
			fact("link per host", trimFloat(l.LinkMbps)+" Mbit/s"+ignored)
		} else if r.Hosts {
			fact("link per host", "unshaped veth pair")
		}
		for _, c := range l.Conf {
			fact("conf "+c[0], c[1])
		}
		dev := Table{Title: "Devices of each node", Text: 4,
			Header: []string{"device", "preset", "DataNode volume", "intermediate data", "read MB/s", "write MB/s", "access (ms)", "queue depth"}}
		for _, d := range l.Devices {
			intermediate := "-"
			if d.Intermediate {
				intermediate = "yes"
			}
			row := []string{d.Name, d.Preset, orDash(d.Volume), intermediate}
			if pr, ok := media.LookupPreset(d.Preset); ok {
				row = append(row, formatTick(pr.Params.ReadMBps), formatTick(pr.Params.WriteMBps),
					formatTick(float64(pr.Params.Seek.Microseconds())/1000), strconv.Itoa(pr.Params.QueueDepth))
			} else {
				row = append(row, "-", "-", "-", "-")
			}
			dev.Rows = append(dev.Rows, row)
		}
		if len(dev.Rows) > 0 {
			s.Tables = append(s.Tables, dev)
		}
	}
	if r.Rows > 0 && len(p.Runs) > 0 {
		runs := Table{Title: "Runs", Header: []string{"repetition", "teragen (s)", "terasort (s)", "total (s)", "teravalidate (s)"}}
		for j, run := range p.Runs {
			runs.Rows = append(runs.Rows, []string{strconv.Itoa(j + 1), fmt.Sprintf("%.2f", run.TeraGen), fmt.Sprintf("%.2f", run.TeraSort),
				fmt.Sprintf("%.2f", run.TeraGen+run.TeraSort), optional(run.TeraValidate)})
		}
		s.Tables = append(s.Tables, runs)
		if ja := p.Runs[0].Job(accountedStep); ja != nil && len(ja.Nodes) > 0 {
			nodes := Table{Title: "Nodes during TeraSort, run 1", Text: 2, Header: []string{"node", "tracker", "intermediate peak", "of its input"}}
			for _, n := range ja.Nodes {
				nodes.Rows = append(nodes.Rows, []string{strconv.Itoa(n.Node), orDash(n.Tracker), sizeString(n.IntermediatePeak), fmt.Sprintf("%.0f%%", n.OfInput*100)})
			}
			s.Tables = append(s.Tables, nodes)
		}
	}
	if f, tl := profileTimeline(p); tl != nil {
		s.Figures = append(s.Figures, Figure{File: f, SVG: tl})
	}
	return s
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
