package experiment

import (
	"bytes"
	"html"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// tinyResults is a two-profile run at 20k rows with TestDFSIO
// (testdata/tiny-results.json, `strata experiment` output trimmed to the
// TeraSort accounting).
func tinyResults(t *testing.T) *Results {
	t.Helper()
	r, err := ReadResults(filepath.Join("testdata", "tiny-results.json"))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// printedTables parses PrintTables' output: blocks separated by blank
// lines, a title line, then rows whose cells tabwriter separates by at
// least two spaces; a block of one line is a note, not a table.
func printedTables(t *testing.T, r *Results) (tables []Table, notes []string) {
	var b bytes.Buffer
	r.PrintTables(&b)
	var out []Table
	for _, block := range strings.Split(strings.TrimSpace(b.String()), "\n\n") {
		lines := strings.Split(block, "\n")
		if len(lines) == 1 {
			notes = append(notes, lines[0])
			continue
		}
		tb := Table{Title: lines[0]}
		for i, l := range lines[1:] {
			cells := regexp.MustCompile(`\s{2,}`).Split(strings.TrimSpace(l), -1)
			if i == 0 {
				tb.Header = cells
			} else {
				tb.Rows = append(tb.Rows, cells)
			}
		}
		out = append(out, tb)
	}
	if len(out) == 0 {
		t.Fatal("no tables printed")
	}
	return out, notes
}

// checkReport checks that page has every table PrintTables prints, cell
// for cell, and every chart WriteFiles writes, inlined.
func checkReport(t *testing.T, r *Results, page string) {
	t.Helper()
	var reported []Table
	for _, s := range r.ReportSections() {
		reported = append(reported, s.Tables...)
	}
	printed, notes := printedTables(t, r)
	text := html.UnescapeString(page)
	for _, n := range notes {
		if !strings.Contains(text, n) {
			t.Errorf("the report lacks the printed note %q", n)
		}
	}
	for _, want := range printed {
		i := slices.IndexFunc(reported, func(tb Table) bool { return tb.Title == want.Title })
		if i < 0 {
			t.Errorf("the report lacks the printed table %q", want.Title)
			continue
		}
		got := reported[i]
		if !slices.Equal(got.Header, want.Header) {
			t.Errorf("%s: header %q, printed %q", want.Title, got.Header, want.Header)
		}
		if len(got.Rows) != len(want.Rows) {
			t.Errorf("%s: %d rows, printed %d", want.Title, len(got.Rows), len(want.Rows))
			continue
		}
		for j := range want.Rows {
			if !slices.Equal(got.Rows[j], want.Rows[j]) {
				t.Errorf("%s: row %q, printed %q", want.Title, got.Rows[j], want.Rows[j])
			}
		}
	}
	// Every table of every section is on the page, cell by cell.
	for _, tb := range reported {
		if !strings.Contains(text, "<figcaption>"+tb.Title) {
			t.Errorf("page lacks table %q", tb.Title)
		}
		for _, row := range tb.Rows {
			for _, c := range row {
				if !strings.Contains(text, ">"+c+"</td>") {
					t.Errorf("%s: page lacks cell %q", tb.Title, c)
				}
			}
		}
	}
	if n, want := strings.Count(page, `<table class="data">`), len(reported); n != want {
		t.Errorf("page has %d data tables, want %d", n, want)
	}
	// Every chart file WriteFiles writes is inlined, as written.
	dir := t.TempDir()
	files, err := r.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	var hrefs []string
	for _, m := range regexp.MustCompile(`<a href="([^"]*)"`).FindAllStringSubmatch(page, -1) {
		u, err := url.PathUnescape(html.UnescapeString(m[1]))
		if err != nil {
			t.Errorf("href %q: %v", m[1], err)
		}
		hrefs = append(hrefs, u)
	}
	svgs := 0
	for _, f := range files {
		if filepath.Ext(f) != ".svg" {
			continue
		}
		svgs++
		b, _ := os.ReadFile(f)
		body := string(b[bytes.Index(b, []byte("<svg")):])
		if !strings.Contains(page, body) {
			t.Errorf("page lacks %s inlined", filepath.Base(f))
		}
		if !slices.Contains(hrefs, filepath.Base(f)) {
			t.Errorf("page lacks a link to %s", filepath.Base(f))
		}
	}
	if svgs == 0 {
		t.Error("no charts written")
	}
	if n := strings.Count(page, "<svg "); n != svgs {
		t.Errorf("page has %d svg elements, %d charts written", n, svgs)
	}
	// Self-contained: nothing is fetched.
	for _, bad := range []string{"<link", "<img", "<iframe", "@import", "url(", "https://"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q: it would fetch something", bad)
		}
	}
	if m := regexp.MustCompile(`<[a-zA-Z][\w:-]*(?:\s+[\w:-]+(?:="[^"]*")?)*\s+src=`).FindString(page); m != "" {
		t.Errorf("page loads %s", m)
	}
	if n := strings.Count(page, "http://"); n != strings.Count(page, `xmlns="http://www.w3.org/2000/svg"`) {
		t.Errorf("page has http:// beyond the SVG namespaces")
	}
}

func render(t *testing.T, r *Results, files ...string) string {
	t.Helper()
	var b bytes.Buffer
	start := time.Now()
	if err := r.WriteReport(&b, files); err != nil {
		t.Fatal(err)
	}
	t.Logf("report of %d bytes in %v", b.Len(), time.Since(start))
	return b.String()
}

// TestReportTiny: the report of a real tiny run has every table, chart
// and per-profile fact.
func TestReportTiny(t *testing.T) {
	r := tinyResults(t)
	page := render(t, r, "results.json", "runtimes.csv", "logs/")
	checkReport(t, r, page)
	for _, w := range []string{
		// configuration and machine
		"<dt>TeraGen rows</dt><dd>20000 (2 MB)</dd>", "<dt>CPUs</dt><dd>2</dd>", "<dt>memory</dt>", "<dt>kernel</dt><dd>Linux ", "<code>strata experiment -profiles ./plain.profile",
		"2 DataNodes with 1 map and 1 reduce slots each",
		// the paper's value beside the measured speed-up
		">1.4x</td>",
		// the profiles' sections: layout, devices with their presets' figures, runs, nodes
		`<section id="profile-2">`, "<h2>Profile fast</h2>", "an NVMe for HDFS, RAM for intermediate data",
		"<td>hdd</td><td>nvme</td><td>DISK</td><td>-</td>", "<td>mem</td><td>ram</td><td>-</td><td>yes</td>",
		"1 CPUs (applies with -hosts only; not this run)",
		"Nodes during TeraSort, run 1", "tracker_localhost-dn0",
		// the links
		`<a href="results.json">results.json</a>`, `<a href="logs/">logs/</a>`,
		// the navigation
		`<a href="#accounting">`, `<a href="#dfsio">`, `<a href="#profile-1">Profile plain</a>`,
	} {
		if !strings.Contains(page, w) {
			t.Errorf("page lacks %q", w)
		}
	}
	// The description has markup in it: shown, not interpreted.
	if !strings.Contains(page, "plain directories &lt;b&gt;&amp;amp; &#34;quotes&#34;&lt;/b&gt;") || strings.Contains(page, "<b>&amp;") {
		t.Error("the plain profile's description is not escaped")
	}
}

// TestReportEscapes: names and descriptions from a results.json are text,
// in the tables, the facts, the charts and the links.
func TestReportEscapes(t *testing.T) {
	evil := `<img src=x onerror=alert("x")>` // a name makes a file name: no '/'
	r := tinyResults(t)
	r.Profiles[0].Name = evil
	r.Profiles[0].Description = `<script>alert(1)</script>`
	r.Profiles[1].Layout.Conf = [][2]string{{"a<b", "</dd><dt>x"}}
	r.Command = "strata experiment -out '<i>'"
	for i := range r.DFSIO {
		if r.DFSIO[i].Profile == "plain" {
			r.DFSIO[i].Profile = evil
		}
	}
	if err := r.computeCosts(); err != nil {
		t.Fatal(err)
	}
	page := render(t, r)
	for _, bad := range []string{"<script>alert", "<img src=x", "<i>", "</dd><dt>x"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q unescaped", bad)
		}
	}
	if n := strings.Count(page, "<script>"); n != 1 {
		t.Errorf("page has %d script elements, want only its own", n)
	}
	if !strings.Contains(page, "<td>&lt;img src=x onerror=alert(&#34;x&#34;)&gt;</td>") || !strings.Contains(page, "&lt;img src=x onerror=alert(&#34;x&#34;)&gt;</text>") ||
		!strings.Contains(page, "<p>&lt;script&gt;alert(1)&lt;/script&gt;</p>") || !strings.Contains(page, "<dt>conf a&lt;b</dt><dd>&lt;/dd&gt;&lt;dt&gt;x</dd>") {
		t.Error("the evil name is not shown as text in a table and a chart")
	}
	checkReport(t, r, page)
}

// TestReportSections: a section another file registers is rendered, in
// its place, with its tables and figures.
func TestReportSections(t *testing.T) {
	saved := reportSections
	t.Cleanup(func() { reportSections = saved })
	addReportSections(func(r *Results) []ReportSection {
		return []ReportSection{{ID: "paper2", Title: "The second paper's table", Facts: [][2]string{{"cluster", "4 nodes"}},
			Tables:  []Table{{Title: "Table 9 & more", Header: []string{"config", "MB/s"}, Rows: [][]string{{"sata<ssd>", "412.5"}}}},
			Figures: []Figure{{File: "paper2.svg", SVG: &Chart{Title: "paper 2", Groups: []string{"a"}, Series: []string{"s"}, Values: [][]float64{{1}}}}}}}
	})
	addReportSections(func(*Results) []ReportSection { return []ReportSection{{ID: "empty", Title: "did not run"}} })
	page := render(t, tinyResults(t))
	for _, w := range []string{`<a href="#paper2">The second paper&#39;s table</a>`, "<figcaption>Table 9 &amp; more", "<td>sata&lt;ssd&gt;</td><td class=\"num\">412.5</td>",
		"<dd>4 nodes</dd>", `<a href="paper2.svg">`, ">paper 2</text>"} {
		if !strings.Contains(page, w) {
			t.Errorf("page lacks %q", w)
		}
	}
	if strings.Contains(page, "did not run") {
		t.Error("an empty section is shown")
	}
	if a, p, b := strings.Index(page, `<section id="accounting">`), strings.Index(page, `<section id="paper2">`), strings.Index(page, `<section id="profile-1">`); !(a < p && p < b) {
		t.Errorf("section order: accounting at %d, paper2 at %d, profile-1 at %d", a, p, b)
	}
}

// TestReportDFSIOOnly: a TestDFSIO-only run's report has its table and
// charts and no TeraSort sections.
func TestReportDFSIOOnly(t *testing.T) {
	r := tinyResults(t)
	r.Rows, r.Costs = 0, nil
	for i := range r.Profiles {
		r.Profiles[i].Runs = nil
	}
	page := render(t, r)
	checkReport(t, r, page)
	for _, no := range []string{`id="runtimes"`, `id="cost"`, `id="accounting"`, "Table 4", "<h3>Runs"} {
		if strings.Contains(page, no) {
			t.Errorf("page has %q", no)
		}
	}
	if !strings.Contains(page, `<section id="dfsio">`) {
		t.Error("no TestDFSIO section")
	}
}

// TestRegenerateReport: -report DIR writes index.html again from
// results.json alone, linking the files that are there.
func TestRegenerateReport(t *testing.T) {
	dir := t.TempDir()
	r := tinyResults(t)
	if _, err := r.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	first, _ := os.ReadFile(filepath.Join(dir, ReportFile))
	os.Remove(filepath.Join(dir, ReportFile))
	os.Remove(filepath.Join(dir, "tco.csv"))
	p, err := RegenerateReport(dir)
	if err != nil || p != filepath.Join(dir, ReportFile) {
		t.Fatalf("RegenerateReport: %q, %v", p, err)
	}
	b, _ := os.ReadFile(p)
	page := string(b)
	checkReport(t, r, page)
	if strings.Contains(page, `href="tco.csv"`) || !strings.Contains(page, `href="runtimes.csv"`) {
		t.Error("links do not follow the directory")
	}
	if !strings.Contains(string(first), `href="tco.csv"`) {
		t.Error("WriteFiles' report does not link tco.csv")
	}
	if _, err := RegenerateReport(t.TempDir()); err == nil {
		t.Error("RegenerateReport of a directory without results.json succeeded")
	}
}

// TestReportProfileLayout: results.json keeps a profile's devices and roles.
func TestReportProfileLayout(t *testing.T) {
	p, err := ParseProfile(strings.NewReader("name = x\ndevice.a = hdd-7200\ndevice.b = sata-ssd\nhdfs.volumes = [DISK]a,[SSD]b\nmapred.local.dir = b\nlink.mbps = 100\nstorage.policy = ONE_SSD\n"), "x.profile")
	if err != nil {
		t.Fatal(err)
	}
	l := p.layout()
	if len(l.Devices) != 2 || l.Devices[0] != (LayoutDevice{"a", "hdd-7200", "DISK", false}) || l.Devices[1] != (LayoutDevice{"b", "sata-ssd", "SSD", true}) ||
		l.LinkMbps != 100 || l.StoragePolicy != "ONE_SSD" || l.Source != "x.profile" || l.NodeCPUPeriodMs != 0 {
		t.Errorf("layout %+v", l)
	}
	// A CPU share is a quota of the hosts' CFS period.
	q, err := ParseProfile(strings.NewReader("name = q\ndevice.a = hdd-7200\nhdfs.volumes = a\nmapred.local.dir = a\nnode.cpus = 0.25\n"), "q.profile")
	if err != nil {
		t.Fatal(err)
	}
	if ql := q.layout(); ql.NodeCPUs != 0.25 || ql.NodeCPUPeriodMs != 100 {
		t.Errorf("quarter-CPU layout: %v CPUs per %v ms", ql.NodeCPUs, ql.NodeCPUPeriodMs)
	}
	r := &Results{Hosts: true, DataNodes: 3, Profiles: []ProfileResult{{Name: "x", Layout: l}}}
	page := render(t, r)
	for _, w := range []string{"<dd>100 Mbit/s</dd>", "<dd>ONE_SSD</dd>", "<td>a</td><td>hdd-7200</td><td>DISK</td><td>-</td><td class=\"num\">175</td>"} {
		if !strings.Contains(page, w) {
			t.Errorf("page lacks %q", w)
		}
	}
}

// TestReportPaper2: a dfsio-paper run's report has the second paper's
// tables, cell for cell with their notes, and its charts inlined and
// linked; a run without Paper2 has no such section.
func TestReportPaper2(t *testing.T) {
	dir := t.TempDir()
	r := paper2Fixture()
	if _, err := r.WriteFiles(dir); err != nil {
		t.Fatal(err)
	}
	more, err := r.WritePaper2Files(dir)
	if err != nil {
		t.Fatal(err)
	}
	p, err := RegenerateReport(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(p)
	page := string(b)
	text := html.UnescapeString(page)
	tables := r.Paper2Tables()
	if len(tables) != 4 {
		t.Fatalf("%d tables in the fixture, want 4 (write r3, read r2, jobs r2, gateways)", len(tables))
	}
	sec := text[strings.Index(text, `<section id="paper2">`):]
	sec = sec[:strings.Index(sec, "</section>")]
	for _, tb := range tables {
		cap := "<figcaption>" + tb.Title + `<span class="note">` + strings.Join(tb.Notes, "; ") + "</span></figcaption>"
		if !strings.Contains(sec, cap) {
			t.Errorf("page lacks %s", cap)
		}
		if !strings.Contains(sec, "<th scope=\"col\">"+strings.Join(tb.Header, "</th><th scope=\"col\">")+"</th>") {
			t.Errorf("%s: page lacks the header %q", tb.Name, tb.Header)
		}
		for _, row := range tb.Rows {
			var cells []string
			for i, c := range row {
				if i == 0 || (i == 1 && tb.Header[0] == configHeader) {
					cells = append(cells, "<td>"+c+"</td>")
				} else {
					cells = append(cells, `<td class="num">`+c+"</td>")
				}
			}
			if w := "<tr>" + strings.Join(cells, "") + "</tr>"; !strings.Contains(sec, w) {
				t.Errorf("%s: page lacks the row %s", tb.Name, w)
			}
		}
	}
	if n := strings.Count(sec, `<table class="data">`); n != len(tables) {
		t.Errorf("paper2 section has %d tables, want %d", n, len(tables))
	}
	svgs := 0
	for _, f := range more {
		if filepath.Ext(f) != ".svg" {
			continue
		}
		svgs++
		b, _ := os.ReadFile(f)
		if body := string(b[bytes.Index(b, []byte("<svg")):]); !strings.Contains(page, body) {
			t.Errorf("page lacks %s inlined", filepath.Base(f))
		}
		if name := filepath.Base(f); !strings.Contains(page, `<figcaption><a href="`+name+`">`) || !strings.Contains(page, `<li><a href="`+name+`">`) {
			t.Errorf("page lacks the links to %s", name)
		}
	}
	if svgs < 4 || strings.Count(sec, "<svg ") != svgs {
		t.Errorf("paper2 section has %d svg elements, %d charts written", strings.Count(sec, "<svg "), svgs)
	}
	if !strings.Contains(page, `<a href="#paper2">`) || !strings.Contains(page, `<li><a href="paper2-gateways.csv">`) {
		t.Error("page lacks the section's navigation or the CSV links")
	}
	if a, p2 := strings.Index(page, `<section id="dfsio">`), strings.Index(page, `<section id="paper2">`); !(a >= 0 && a < p2) {
		t.Errorf("section order: dfsio at %d, paper2 at %d", a, p2)
	}
	if strings.Contains(render(t, tinyResults(t)), `<section id="paper2">`) {
		t.Error("a run without Paper2 has the second paper's section")
	}
}

// pageHasTable reports what of a table (its title and note, header and
// every row with the first text columns as text) the page lacks.
func pageHasTable(page, title, note string, header []string, rows [][]string, text int) []string {
	var lacks []string
	page = html.UnescapeString(page)
	cap := "<figcaption>" + title
	if note != "" {
		cap += `<span class="note">` + note + "</span>"
	}
	if !strings.Contains(page, cap+"</figcaption>") {
		lacks = append(lacks, "caption "+cap)
	}
	if h := "<th scope=\"col\">" + strings.Join(header, "</th><th scope=\"col\">") + "</th>"; !strings.Contains(page, h) {
		lacks = append(lacks, "header "+h)
	}
	for _, row := range rows {
		var cells []string
		for i, c := range row {
			if i < text {
				cells = append(cells, "<td>"+c+"</td>")
			} else {
				cells = append(cells, `<td class="num">`+c+"</td>")
			}
		}
		if w := "<tr>" + strings.Join(cells, "") + "</tr>"; !strings.Contains(page, w) {
			lacks = append(lacks, "row "+w)
		}
	}
	return lacks
}

// paper3Fixture has every part of the third paper: Figure 1, Table 2,
// Figure 2 and Table 3 with the energy.
func paper3Fixture() *Paper3Results {
	r := &Paper3Results{Command: "strata experiment amdahl -objects 1k", Date: time.Date(2026, 12, 1, 15, 0, 0, 0, time.UTC), Host: "box", CPUs: 2,
		Objects: 1000, DataNodes: 3, Profiles: []string{"amdahl-blade", "occ-node"}, Power: DefaultPowerModel(), Master: true,
		Devices: map[string][]string{"amdahl-blade": {"raid0-2-vertex"}, "occ-node": {"sas-15k", "sas-15k"}},
		Fig1: []Fig1Row{
			{Device: RealDisk, Op: "write", Mode: "buffered", MBps: 50, ProcCPU: 0.4, KworkerCPU: 0.2},
			{Device: RealDisk, Op: "write", Mode: "direct", MBps: 75, ProcCPU: 0.1},
			{Device: "vertex", Op: "read", Mode: "buffered", MBps: 100, ProcCPU: 0.2},
			{Device: "vertex", Op: "read", Mode: "direct", MBps: 150, ProcCPU: 0.1},
		},
		Table2: []TCPRow{{Case: "local", Link: "loopback", MBps: 686, SenderCPU: 0.5, ReceiverCPU: 0.25}},
		Fig2: []Fig2Row{{Config: "blade-ssd", Op: "write", Mappers: 1, PerNode: 37.5, DFSIOResult: DFSIOResult{Throughput: 20}},
			{Config: "blade-ssd", Op: "read", Mappers: 1, PerNode: 60}},
		Skipped: []string{"Table 2 between hosts: <no network namespaces>"},
	}
	for _, s := range []struct {
		p, app       string
		th, s, joule float64
	}{{"amdahl-blade", "neighbors", 30, 10, 1000}, {"occ-node", "neighbors", 30, 20, 7700}, {"amdahl-blade", "neighborstats", 60, 5, 100}, {"occ-node", "neighborstats", 60, 5, 170}} {
		r.Steps = append(r.Steps, Paper3Step{Profile: s.p, App: s.app, Theta: s.th, Seconds: s.s, Joules: s.joule, Pairs: 500, OutputBytes: 48000, NodeWatts: []float64{20, 20, 20}})
	}
	return r
}

// TestReportPaper3: amdahl's WriteFiles writes index.html with every
// table it prints and every chart it writes, in sections per part.
func TestReportPaper3(t *testing.T) {
	dir := t.TempDir()
	r := paper3Fixture()
	files, err := r.WriteFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, ReportFile))
	if err != nil {
		t.Fatal(err)
	}
	page := string(b)
	tables := r.Tables()
	if len(tables) < 8 {
		t.Fatalf("%d tables in the fixture", len(tables))
	}
	for _, tb := range tables {
		for _, l := range pageHasTable(page, tb.Title, tb.Note, tb.Header, tb.Rows, 2) {
			t.Errorf("%s: page lacks %s", tb.Title, l)
		}
	}
	if n := strings.Count(page, `<table class="data">`); n != len(tables) {
		t.Errorf("page has %d tables, %d printed", n, len(tables))
	}
	svgs := 0
	for _, f := range files {
		name := filepath.Base(f)
		if name != ReportFile && !strings.Contains(page, `<li><a href="`+name+`">`) {
			t.Errorf("page lacks a link to %s", name)
		}
		if filepath.Ext(f) != ".svg" {
			continue
		}
		svgs++
		b, _ := os.ReadFile(f)
		if body := string(b[bytes.Index(b, []byte("<svg")):]); !strings.Contains(page, body) {
			t.Errorf("page lacks %s inlined", name)
		}
	}
	if n := strings.Count(page, "<svg "); svgs != 6 || n != svgs {
		t.Errorf("page has %d svg elements, %d charts written (want 6)", n, svgs)
	}
	for _, w := range []string{"<title>strata experiment amdahl of 2026-12-01 15:00 UTC</title>", "<code>strata experiment amdahl -objects 1k</code>",
		"amdahl-blade vs occ-node", "<dt>devices of occ-node</dt><dd>sas-15k, sas-15k</dd>", "<dt>catalogue objects</dt><dd>1000</dd>",
		"<dd>Table 2 between hosts: &lt;no network namespaces&gt;</dd>", "paper3.json holds"} {
		if !strings.Contains(page, w) {
			t.Errorf("page lacks %q", w)
		}
	}
	// The parts in the paper's order, each in the navigation.
	last := -1
	for _, id := range []string{"figure1", "table2", "figure2", "table3", "files"} {
		i := strings.Index(page, `<section id="`+id+`">`)
		if i < last || !strings.Contains(page, `<a href="#`+id+`">`) {
			t.Errorf("section %s at %d (after %d) or not in the navigation", id, i, last)
		}
		last = i
	}
	// A run of one part has that part's section only.
	one := &Paper3Results{Table2: r.Table2}
	var p bytes.Buffer
	if err := one.WriteReport(&p, nil); err != nil {
		t.Fatal(err)
	}
	if s := p.String(); !strings.Contains(s, `<section id="table2">`) || strings.Count(s, "<section id=") != 3 {
		t.Errorf("a Table 2 run's page has %d sections", strings.Count(s, "<section id="))
	}
}
