package e2e

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var (
	shuffleURLRE = regexp.MustCompile(`shuffle=(http://\S+)`)
	counterRE    = regexp.MustCompile(`(?m)^\s+([^=\n]+)=(\d+)$`)
	metricRE     = regexp.MustCompile(`(?m)^(strata_tasktracker_\w+) (\S+)$`)
	reusedRE     = regexp.MustCompile(`launching attempt" attempt=attempt_\w+_m_\d+_\d+ child=\d+ attempts=2`)
)

// TestClusterAccounting runs a job that spills on a JobTracker and a
// TaskTracker as processes and checks the accounting a user sees: the CPU
// and FILE counters on the job console, each attempt's phases and CPU in
// `strata job -status` (its owner's only), the TaskTracker's CPU and
// intermediate space at /metrics; and the Hadoop 1 names of the papers'
// settings.
func TestClusterAccounting(t *testing.T) {
	m := startMR(t, 1)
	dir := t.TempDir()
	in, outDir := filepath.Join(dir, "in"), filepath.Join(dir, "out")
	os.MkdirAll(in, 0o755)
	for f := 0; f < 4; f++ { // 4 maps on 2 slots: two run in reused children
		var b strings.Builder
		for i := 0; i < 40000; i++ {
			fmt.Fprintf(&b, "w%d-%d x%d\n", f, i, i%97)
		}
		os.WriteFile(filepath.Join(in, fmt.Sprintf("f%d", f)), []byte(b.String()), 0o644)
	}
	out := &syncBuffer{}
	err := submit(m, out, "-D", "io.sort.mb=1", "-D", "mapred.reduce.tasks=2", "-D", "mapred.job.reuse.jvm.num.tasks=-1",
		"-D", "mapred.child.java.opts=-Xmx256m", "examples", "wordcount", "file://"+in, "file://"+outDir)
	if err != nil {
		t.Fatalf("job client: %v\n%s", err, out.String())
	}
	console := out.String()
	if w := "io.sort.mb is deprecated. Instead, use mapreduce.task.io.sort.mb"; !strings.Contains(console, w) {
		t.Errorf("console lacks %q:\n%s", w, console)
	}
	counters := map[string]int64{}
	for _, c := range counterRE.FindAllStringSubmatch(console, -1) {
		counters[strings.TrimSpace(c[1])], _ = strconv.ParseInt(c[2], 10, 64)
	}
	if counters["CPU time spent (ms)"] <= 0 || counters["CPU user time (ms)"] <= 0 || counters["Spills"] < 4 ||
		counters["FILE: Number of bytes written"] <= counters["Map output materialized bytes"] || counters["FILE: Number of bytes read"] <= 0 {
		t.Errorf("counters %v\n%s", counters, console)
	}
	id := jobID(t, console)
	st, err := m.Command("job", "-status", id).CombinedOutput()
	if err != nil {
		t.Fatalf("job -status: %v\n%s", err, st)
	}
	status := string(st)
	_, attempts, ok := strings.Cut(status, "Attempts:\n")
	if !ok {
		t.Fatalf("job -status has no attempts:\n%s", status)
	}
	var maps, reduces int
	for _, l := range strings.Split(strings.TrimSpace(attempts), "\n")[1:] {
		f := strings.Fields(l)
		if len(f) != 10 || f[2] != "SUCCEEDED" {
			t.Errorf("attempt line %q", l)
			continue
		}
		switch {
		case strings.Contains(f[0], "_m_"):
			maps++
		case strings.Contains(f[0], "_r_"):
			reduces++
		default:
			continue
		}
		for _, d := range append(f[4:7], f[8]) { // elapsed, phases, CPU user
			if _, err := time.ParseDuration(d); err != nil {
				t.Errorf("attempt line %q: %q is not a duration", l, d)
			}
		}
	}
	if maps != 4 || reduces != 2 {
		t.Errorf("%d maps and %d reduces in:\n%s", maps, reduces, status)
	}

	// The attempts need VIEW_JOB: another user sees the status, then
	// Hadoop's refusal.
	stdout, stderr, code := m.Run("mallory", "job", "-status", id)
	if code != 1 || !strings.Contains(stdout, "State: SUCCEEDED") || strings.Contains(stdout, "Attempts:") ||
		!strings.Contains(stderr, "User mallory cannot perform operation VIEW_JOB on "+id) {
		t.Errorf("job -status as another user: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// mapred.job.reuse.jvm.num.tasks=-1: a map child that finished runs
	// one of the later maps.
	if log := m.TaskTrackerProcess(0).Log(); !reusedRE.MatchString(log) {
		t.Errorf("no map ran in a reused child:\n%s", log)
	}
	url := shuffleURLRE.FindStringSubmatch(m.TaskTrackerProcess(0).Log())
	if url == nil {
		t.Fatalf("no shuffle URL in the TaskTracker's log")
	}
	resp, err := http.Get(url[1] + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	metrics := map[string]float64{}
	for _, mm := range metricRE.FindAllStringSubmatch(string(body), -1) {
		metrics[mm[1]], _ = strconv.ParseFloat(mm[2], 64)
	}
	// User and system time are the kernel's split of the CPU time by
	// sampled ticks: a process that did little may have all of it in
	// one, so their sum is what must be there.
	cpu := func(prefix string) float64 {
		return metrics[prefix+"_user_seconds_total"] + metrics[prefix+"_system_seconds_total"]
	}
	if cpu("strata_tasktracker_children_cpu") <= 0 || cpu("strata_tasktracker_cpu") <= 0 ||
		metrics["strata_tasktracker_intermediate_peak_bytes"] < float64(counters["Map output materialized bytes"]) {
		t.Errorf("metrics %v (map output %d bytes)\n%s", metrics, counters["Map output materialized bytes"], body)
	}
}
