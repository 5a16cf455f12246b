package e2e

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/cdp"
	cdplog "github.com/chromedp/cdproto/log"
	cdpruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/stratafs/strata/internal/experiment"
	"github.com/stratafs/strata/internal/testcluster"
)

// reportChromium finds a Chromium or Chrome binary ($STRATA_CHROMIUM
// first), "" if there is none.
func reportChromium() string {
	if p := os.Getenv("STRATA_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// TestExperimentReportInChromium runs a tiny `strata experiment` (two
// profiles, TestDFSIO, accounting), writes its report again with
// -report, opens it with -open (a recording xdg-open), and loads
// index.html from a file:// URL in headless Chromium: no console errors
// or exceptions, nothing fetched, every table of every section with its
// rows and every chart rendered as an svg with its bars; sorting a column
// works. A screenshot goes to $STRATA_SCREENSHOTS (default: the test's
// temporary directory).
func TestExperimentReportInChromium(t *testing.T) {
	exe := reportChromium()
	if exe == "" {
		t.Skip("no chromium binary (Debian: apt-get install chromium; or set STRATA_CHROMIUM): the report's browser test needs one")
	}
	dir := t.TempDir()
	profiles := map[string]string{
		"plain.profile": "name = plain\ndescription = plain directories <b>&amp;</b>\ndevice.d = none\nhdfs.volumes = [DISK]d\nmapred.local.dir = d\nprice = 1000\nwatts = 100\n",
		"fast.profile":  "name = fast\ndescription = an NVMe for HDFS, RAM for intermediate data\ndevice.hdd = nvme\ndevice.mem = ram\nhdfs.volumes = [DISK]hdd\nmapred.local.dir = mem\nprice = 2000\nwatts = 200\npaper.speedup = 1.4\n",
	}
	for name, text := range profiles {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := filepath.Join(dir, "out")
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	// strata runs the binary and returns its stdout and stderr.
	strata := func(env []string, args ...string) (string, string) {
		t.Helper()
		cmd := exec.CommandContext(ctx, testcluster.Binary(t), args...)
		cmd.Env = append(os.Environ(), env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("strata %s: %v\n%s%s", strings.Join(args, " "), err, stdout.String(), stderr.String())
		}
		return stdout.String(), stderr.String()
	}
	start := time.Now()
	console, _ := strata(nil, "experiment", "-profiles", filepath.Join(dir, "plain.profile")+","+filepath.Join(dir, "fast.profile"),
		"-rows", "20k", "-datanodes", "2", "-dfsio", "-dfsio-files", "1,2", "-dfsio-replication", "2", "-dfsio-total", "4MB", "-out", out)
	t.Logf("experiment in %v", time.Since(start))
	report := filepath.Join(out, "index.html")
	if !strings.HasSuffix(console, "Report: "+report+"\n") {
		t.Errorf("the run does not end with the report's path:\n%s", console)
	}

	// -report writes it again from results.json; -open hands it to xdg-open.
	bin := filepath.Join(dir, "bin")
	os.Mkdir(bin, 0o755)
	opened := filepath.Join(dir, "opened")
	os.WriteFile(filepath.Join(bin, "xdg-open"), []byte("#!/bin/sh\necho \"$1\" > "+opened+"\n"), 0o755)
	os.Remove(report)
	if got, errs := strata([]string{"PATH=" + bin + ":" + os.Getenv("PATH")}, "experiment", "-report", out, "-open"); got != "Report: "+report+"\n" || errs != "" {
		t.Errorf("strata experiment -report -open printed %q, %q", got, errs)
	}
	if _, err := os.Stat(report); err != nil {
		t.Fatalf("-report did not write the report: %v", err)
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if b, _ := os.ReadFile(opened); string(b) == report+"\n" {
			break
		} else if time.Now().After(deadline) {
			t.Errorf("xdg-open got %q, want %s", b, report)
			break
		}
	}
	if got, errs := strata([]string{"PATH=" + dir}, "experiment", "-report", out, "-open"); got != "Report: "+report+"\n" || !strings.Contains(errs, "no xdg-open here; open "+report) {
		t.Errorf("-open without xdg-open printed %q, %q", got, errs)
	}

	// What the page must have: results.json's sections.
	res, err := experiment.ReadResults(filepath.Join(out, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var wantTables []string
	wantRows := map[string]int{}
	wantFigures := 0
	for _, s := range res.ReportSections() {
		for _, tb := range s.Tables {
			wantTables = append(wantTables, tb.Title)
			wantRows[tb.Title] = len(tb.Rows)
		}
		wantFigures += len(s.Figures)
	}
	if len(wantTables) < 10 || wantFigures < 7 {
		t.Fatalf("results.json has %d tables and %d charts: the run measured too little", len(wantTables), wantFigures)
	}

	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(exe), chromedp.NoSandbox,
		chromedp.WindowSize(1280, 900), chromedp.Flag("disable-gpu", true), chromedp.Flag("hide-scrollbars", true))
	actx, cancelA := chromedp.NewExecAllocator(ctx, opts...)
	defer cancelA()
	// This chromedp predates some of Chromium's events; those it cannot
	// decode are of no interest here.
	bctx, cancelB := chromedp.NewContext(actx, chromedp.WithErrorf(func(format string, args ...any) {
		if msg := fmt.Sprintf(format, args...); !strings.Contains(msg, "could not unmarshal event") {
			t.Logf("chromedp: %s", msg)
		}
	}))
	defer cancelB()
	var mu sync.Mutex
	var problems []string
	chromedp.ListenTarget(bctx, func(ev any) {
		mu.Lock()
		defer mu.Unlock()
		switch ev := ev.(type) {
		case *cdpruntime.EventConsoleAPICalled:
			if ev.Type == cdpruntime.APITypeError || ev.Type == cdpruntime.APITypeWarning {
				var args []string
				for _, a := range ev.Args {
					args = append(args, string(a.Value)+a.Description)
				}
				problems = append(problems, fmt.Sprintf("console %s: %s", ev.Type, strings.Join(args, " ")))
			}
		case *cdpruntime.EventExceptionThrown:
			problems = append(problems, "exception: "+ev.ExceptionDetails.Error())
		case *cdplog.EventEntryAdded:
			if ev.Entry.Level == cdplog.LevelError || ev.Entry.Level == cdplog.LevelWarning {
				problems = append(problems, fmt.Sprintf("log %s: %s (%s)", ev.Entry.Level, ev.Entry.Text, ev.Entry.URL))
			}
		}
	})
	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(bctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	run("start chromium", cdplog.Enable(), cdpruntime.Enable())
	type tableInfo struct {
		Title string `json:"title"`
		Rows  int    `json:"rows"`
	}
	var page struct {
		Title     string      `json:"title"`
		Tables    []tableInfo `json:"tables"`
		SVGs      int         `json:"svgs"`
		Empty     []string    `json:"empty"`
		Resources []string    `json:"resources"`
	}
	run("load the report", chromedp.Navigate("file://"+report), chromedp.WaitReady("footer", chromedp.ByQuery),
		chromedp.Evaluate(`({
  title: document.title,
  tables: [...document.querySelectorAll("table.data")].map(t => ({
    title: t.closest("figure").querySelector("figcaption").firstChild.textContent,
    rows: t.tBodies[0].rows.length})),
  svgs: document.querySelectorAll("figure.chart svg").length,
  empty: [...document.querySelectorAll("figure.chart svg")].filter(s =>
    s.getBoundingClientRect().width < 300 || s.querySelectorAll("rect.bar, rect.phase").length == 0).map(s => s.querySelector("text").textContent),
  resources: performance.getEntriesByType("resource").map(e => e.name),
})`, &page))
	if !strings.HasPrefix(page.Title, "strata experiment of ") {
		t.Errorf("title %q", page.Title)
	}
	got := map[string]int{}
	for _, tb := range page.Tables {
		got[tb.Title] = tb.Rows
	}
	for _, title := range wantTables {
		if n, ok := got[title]; !ok {
			t.Errorf("the page lacks table %q", title)
		} else if n != wantRows[title] || n == 0 {
			t.Errorf("table %q has %d rows, want %d", title, n, wantRows[title])
		}
	}
	if len(page.Tables) != len(wantTables) {
		t.Errorf("the page has %d tables, want %d", len(page.Tables), len(wantTables))
	}
	if page.SVGs != wantFigures {
		t.Errorf("the page has %d charts, want %d", page.SVGs, wantFigures)
	}
	if len(page.Empty) > 0 {
		t.Errorf("charts drawn without bars or too small: %q", page.Empty)
	}
	if len(page.Resources) > 0 {
		t.Errorf("the page fetched %q", page.Resources)
	}

	// The script sorts Table 4 by its total: descending on the second click.
	const table4 = `#runtimes-table-1 table.data`
	var totals []string
	for click := 1; click <= 2; click++ {
		run("sort by total", chromedp.Click(table4+` thead th:nth-child(4)`, chromedp.ByQuery),
			chromedp.Evaluate(`[...document.querySelectorAll("`+table4+` tbody td:nth-child(4)")].map(td => td.textContent)`, &totals))
		var sortAttr string
		var ok bool
		run("aria-sort", chromedp.AttributeValue(table4+` thead th:nth-child(4)`, "aria-sort", &sortAttr, &ok, chromedp.ByQuery))
		want := map[int]string{1: "ascending", 2: "descending"}[click]
		var v []float64
		for _, s := range totals {
			f, _ := strconv.ParseFloat(s, 64)
			v = append(v, f)
		}
		if sortAttr != want || len(v) != 2 || (click == 1 && v[0] > v[1]) || (click == 2 && v[0] < v[1]) {
			t.Errorf("click %d on total (s): aria-sort %q, totals %q", click, sortAttr, totals)
		}
	}

	shots := os.Getenv("STRATA_SCREENSHOTS")
	if shots == "" {
		shots = t.TempDir()
	}
	os.MkdirAll(shots, 0o755)
	var png []byte
	run("screenshot", chromedp.FullScreenshot(&png, 100))
	shot := filepath.Join(shots, "experiment-report.png")
	if err := os.WriteFile(shot, png, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot %s (%d bytes)", shot, len(png))
	var nodes []*cdp.Node
	run("profile sections", chromedp.Nodes(`section[id^="profile-"]`, &nodes, chromedp.ByQueryAll))
	if len(nodes) != 2 {
		t.Errorf("%d profile sections, want 2", len(nodes))
	}
	mu.Lock()
	defer mu.Unlock()
	for _, p := range problems {
		t.Errorf("chromium: %s", p)
	}
}
