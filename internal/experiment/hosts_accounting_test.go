package experiment

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func TestParseMetrics(t *testing.T) {
	in := `# HELP strata_tasktracker_intermediate_bytes Space taken ...
# TYPE strata_tasktracker_intermediate_bytes gauge
strata_tasktracker_intermediate_bytes 1.2e+07
strata_tasktracker_intermediate_peak_bytes 3.5e+07
strata_tasktracker_map_slots{x="y"} 2
go_goroutines 12
`
	m, err := parseMetrics(strings.NewReader(in), metricIntermediate, metricIntermediatePeak)
	if err != nil || m[metricIntermediate] != 12e6 || m[metricIntermediatePeak] != 35e6 || len(m) != 2 {
		t.Fatalf("parseMetrics = %v, %v", m, err)
	}
	for _, bad := range []string{
		"strata_tasktracker_intermediate_bytes 1\n", // no peak
		"strata_tasktracker_intermediate_bytes -1\nstrata_tasktracker_intermediate_peak_bytes 1\n",
		"strata_tasktracker_intermediate_bytes NaN\nstrata_tasktracker_intermediate_peak_bytes 1\n",
		"strata_tasktracker_intermediate_bytes +Inf\nstrata_tasktracker_intermediate_peak_bytes 1\n",
		"strata_tasktracker_intermediate_bytes x\nstrata_tasktracker_intermediate_peak_bytes 1\n",
		strings.Repeat("x", 70000) + "\n", // a line past the scanner's bound
	} {
		if _, err := parseMetrics(strings.NewReader(bad), metricIntermediate, metricIntermediatePeak); err == nil {
			t.Errorf("parseMetrics(%.60q) accepted", bad)
		}
	}
}

// A node's step peak: the largest current value polled, and the
// TaskTracker's own peak when it rose during the step (a value between
// two polls), never its peak from before the step.
func TestNodePeakObserve(t *testing.T) {
	var n nodePeak
	for _, p := range [][2]float64{{0, 900}, {100, 900}, {400, 900}, {50, 900}} {
		n.observe(map[string]float64{metricIntermediate: p[0], metricIntermediatePeak: p[1]})
	}
	if n.peak != 400 || n.polls != 4 {
		t.Errorf("below the earlier peak: %+v, want 400", n)
	}
	n.observe(map[string]float64{metricIntermediate: 200, metricIntermediatePeak: 1500})
	if n.peak != 1500 {
		t.Errorf("after the TaskTracker's peak rose to 1500: %+v", n)
	}
}

// The poll reads every TaskTracker until stop; one that answers with
// garbage, too much or not at all is a node without a peak, and stop
// does not wait long for it.
func TestPeakPoll(t *testing.T) {
	var now atomic.Int64
	good := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v := now.Add(1000)
		fmt.Fprintf(w, "%s %d\n%s %d\n", metricIntermediate, v, metricIntermediatePeak, 5000)
	}))
	defer good.Close()
	huge := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		line := bytes.Repeat([]byte("# padding\n"), 1000)
		for i := 0; i < 2*metricsLimit/len(line); i++ {
			if _, err := w.Write(line); err != nil {
				return
			}
		}
		fmt.Fprintf(w, "%s 1\n%s 1\n", metricIntermediate, metricIntermediatePeak)
	}))
	defer huge.Close()
	failing := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no", http.StatusForbidden)
	}))
	defer failing.Close()
	p := startPeakPoll([]string{good.URL, huge.URL, failing.URL, ""}, 10*time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	start := time.Now()
	peaks := p.stop()
	if d := time.Since(start); d > metricsTimeout+time.Second {
		t.Errorf("stop took %v", d)
	}
	if g := peaks[0]; g.polls < 3 || g.peak != now.Load() || g.err != nil {
		t.Errorf("good TaskTracker: %+v, last value %d", g, now.Load())
	}
	for i, name := range map[int]string{1: "huge", 2: "failing", 3: "no"} {
		if peaks[i].polls != 0 || (name != "no" && peaks[i].err == nil) {
			t.Errorf("%s TaskTracker: %+v", name, peaks[i])
		}
	}
}

// The links table: a row per host link of each profile's TeraSort; no
// note then. Without links, the note says why, printed and in the
// report.
func TestReportLinks(t *testing.T) {
	r := tinyResults(t)
	page := render(t, r)
	if note := r.accountingNote(); !strings.Contains(note, "without -hosts") || !strings.Contains(page, "over loopback, which has no link per host") {
		t.Errorf("note %q missing or not in the report", note)
	}
	r.Hosts = true
	if note := r.accountingNote(); !strings.Contains(note, "none recorded in these results") {
		t.Errorf("hosts without links: note %q", note)
	}
	for i := range r.Profiles {
		ja := r.Profiles[i].Runs[0].Job(accountedStep)
		ja.Links = []LinkAccount{
			{Host: "nn", Role: "namenode", InBytes: 123_456, OutBytes: 98_765, InPackets: 1000 + uint64(i), OutPackets: 900},
			{Host: "dn0", Role: "node 0", InBytes: 40_100_000, OutBytes: 39_900_000, InPackets: 3000, OutPackets: 2500 + uint64(i), Mbps: 1000},
		}
	}
	if note := r.accountingNote(); note != "" {
		t.Errorf("note %q with links", note)
	}
	page = render(t, r)
	checkReport(t, r, page)
	var links *Table
	tables := r.accountingTables()
	for i := range tables {
		if strings.HasPrefix(tables[i].Title, "Network bytes per link") {
			links = &tables[i]
		}
	}
	if links == nil || len(links.Rows) != 2*len(r.Profiles) {
		t.Fatalf("links table %+v", links)
	}
	if got, want := strings.Join(links.Rows[1], "|"), r.Profiles[0].Name+"|dn0|node 0|40.1 MB|39.9 MB|3000|2500|1000 Mbit/s"; got != want {
		t.Errorf("row %q, want %q", got, want)
	}
	if links.Rows[0][7] != "unshaped" {
		t.Errorf("unshaped link: %q", links.Rows[0])
	}
}
