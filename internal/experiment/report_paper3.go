package experiment

import (
	"io"
	"sort"
	"strconv"
	"strings"
)

// The third paper's report: `strata experiment amdahl` writes index.html
// beside paper3.json in the main report's look (ReportPage), a section
// per part that ran, each with its tables (as PrintTables prints them)
// and charts (as WriteFiles writes them).

// WriteReport writes r's report; files are the names of the raw files
// to link to, relative to the report's directory (ReportLinks).
func (r *Paper3Results) WriteReport(w io.Writer, files []string) error {
	p := &ReportPage{Title: "strata experiment amdahl", Subtitle: "Hadoop in Low-Power Processors: " + strings.Join(r.Profiles, " vs "),
		Command: r.Command, Config: r.configFacts(), Sections: r.ReportSections(), Files: files,
		FilesNote: "paper3.json holds the measurements and every table above"}
	if !r.Date.IsZero() {
		p.Title += " of " + r.Date.UTC().Format("2006-01-02 15:04 UTC")
	}
	return p.Write(w)
}

func (r *Paper3Results) configFacts() [][2]string {
	var f facts
	f.addDate(r.Date)
	add := f.add
	if len(r.Steps) > 0 || len(r.Fig2) > 0 {
		add("DataNodes per cluster", strconv.Itoa(r.DataNodes))
		if r.Hosts {
			add("daemons", "a process each on a host of its own (-hosts): links and CPU shares as the profiles say")
		} else {
			add("daemons", "one process, loopback network")
		}
	}
	if len(r.Steps) > 0 {
		add("catalogue objects", strconv.FormatUint(r.Objects, 10))
		add("master node in the energy", map[bool]string{true: "counted at idle power", false: "not counted"}[r.Master])
		names := make([]string, 0, len(r.Devices))
		for n := range r.Devices {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			add("devices of "+n, strings.Join(r.Devices[n], ", "))
		}
	}
	add("host", r.Host)
	if r.CPUs > 0 {
		add("CPUs", strconv.Itoa(r.CPUs))
	}
	add("load average at the start", r.LoadAverage)
	for i, s := range r.Skipped {
		add("skipped "+strconv.Itoa(i+1), s)
	}
	return f
}

// ReportSections are the report's sections: Figure 1, Table 2, Figure 2,
// then Table 3 with the energy, each only if it ran.
func (r *Paper3Results) ReportSections() []ReportSection {
	figs := func(cs ...namedChart) []Figure {
		var out []Figure
		for _, c := range cs {
			out = append(out, Figure{File: c.file, SVG: c.chart})
		}
		return out
	}
	var out []ReportSection
	if len(r.Fig1) > 0 {
		out = append(out, ReportSection{ID: "figure1", Title: "Figure 1: buffered vs direct sequential I/O",
			Tables: paper3ReportTables(r.fig1Tables()...), Figures: figs(r.fig1Charts()...)})
	}
	if len(r.Table2) > 0 {
		out = append(out, ReportSection{ID: "table2", Title: "Table 2: TCP throughput and CPU",
			Tables: paper3ReportTables(r.table2Table()), Figures: figs(r.table2Chart())})
	}
	if len(r.Fig2) > 0 {
		out = append(out, ReportSection{ID: "figure2", Title: "Figure 2: TestDFSIO per node on the blade's storage",
			Tables: paper3ReportTables(r.fig2Table()), Figures: figs(r.fig2Chart())})
	}
	if len(r.Steps) > 0 {
		var cs []namedChart
		for _, c := range r.charts() {
			if c.file == "paper3-table3.svg" || c.file == "paper3-energy.svg" {
				cs = append(cs, c)
			}
		}
		out = append(out, ReportSection{ID: "table3", Title: "Table 3 and energy: the astronomy applications",
			Tables: paper3ReportTables(r.table3Tables()...), Figures: figs(cs...)})
	}
	return out
}

// paper3ReportTables are ts as the report shows them: two label columns,
// as PrintPaper3Table aligns them.
func paper3ReportTables(ts ...Paper3Table) []Table {
	var out []Table
	for _, t := range ts {
		out = append(out, Table{Title: t.Title, Note: t.Note, Header: t.Header, Rows: t.Rows, Text: 2})
	}
	return out
}
